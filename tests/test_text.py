"""common.text: the one fitting function. Text wraps, tables narrow or stack, and no line is wider
than the screen whatever it holds; at width 0 (a pipe, a file) everything is as it was written."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.common.text import Bar, Table, draws_blocks, fit, is_path, nearest, shorten, unknown

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

#: Cells as reports write them: figures ("1,234", "54.2 %", "3.5 MiB"), names with spaces, dashes.
_figure = st.one_of(
    st.integers(0, 10**12).map(lambda n: f"{n:,}"),
    st.floats(-1000, 1000, allow_nan=False).map(lambda x: f"{x:.1f} %"),
    st.floats(0, 10**7, allow_nan=False).map(lambda x: f"{x:.1f} MiB"),
    st.sampled_from(["-", "", "~", "(+105 %)", "no measurable difference (-12 to +9 %)"]),
)
_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 >/-:+", min_size=0, max_size=30)
_cell = st.one_of(_figure, _name, st.floats(0, 1, allow_nan=False).map(Bar),
                  st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
                  .map(lambda t: Bar(t[1], "#", min(t), max(t))))


@st.composite
def tables(draw: st.DrawFn) -> Table:
    columns = draw(st.integers(1, 12))
    rows = draw(st.lists(st.lists(_cell, min_size=columns, max_size=columns), min_size=0, max_size=8))
    header = draw(st.one_of(st.none(), st.lists(_name, min_size=columns, max_size=columns)))
    right = draw(st.sets(st.integers(0, columns - 1)))
    return Table(rows, header, right, indent=draw(st.integers(0, 4)), keys=draw(st.integers(1, 2)))


@SETTINGS
@given(tables(), st.integers(20, 200), st.booleans())
def test_no_table_line_is_wider_than_the_screen(table, width, unicode):
    for line in fit([table], width, unicode):
        assert len(line) <= width or _a_path_alone(line), (width, line)


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs", "Zl", "Zp"]),
               max_size=400), st.integers(10, 200))
def test_no_text_line_is_wider_than_the_screen(text, width):
    for line in fit([text], width):
        assert len(line) <= width or _a_path_alone(line), (width, line)


def _a_path_alone(line: str) -> bool:
    """The one line wider than the screen fit gives: a path (or web address) whole on a line of its
    own, never cut nor broken (the terminal shows it on two rows; it copies as one)."""
    return is_path(line.strip()) and " " not in line.strip()


def _cells(table: Table) -> list[str]:
    return [c for row in table.rows for c in row if isinstance(c, str) and c.strip()]


@SETTINGS
@given(tables(), st.integers(60, 200))
def test_a_table_narrows_or_stacks_and_chops_nothing(table, width):
    # At 60 columns or more, narrowing, stacking or records keep every figure whole on some line,
    # and every word of a cell of text (a last column of text may wrap inside its column).
    out = "\n".join(fit([table], width, True))
    words = set(out.split())
    for cell in _cells(table):
        if " " not in cell.strip():
            assert cell.strip() in words, (cell, out)
        assert set(cell.split()) <= words, (cell, out)


def _stats_buckets() -> Table:
    rows = [["<= 1 KB", "164", "8.2 %", Bar(0.082), "652", "32.6 %", Bar(0.326, "=")],
            ["1-4 KB", "1,720", "86.0 %", Bar(0.86), "1,306", "65.3 %", Bar(0.653, "=")]]
    return Table(rows, ["size", "decompressed", "share", "before", "stored", "share", "after"], (1, 2, 4, 5))


def test_bars_shorten_before_anything_else():
    table = _stats_buckets()
    natural = list(fit([table], 0, True))
    assert max(map(len, natural)) > 80  # the 96 characters
    at_80 = list(fit([table], 80, True))
    assert len(at_80) == len(natural)  # the same rows, one line each: only the bars are shorter
    assert [line.split()[:3] for line in at_80] == [line.split()[:3] for line in natural]
    assert max(map(len, at_80)) <= 80


def test_headers_take_two_lines_then_the_table_stacks_with_its_key_column():
    rows = [["zstd 3 + dict", "7.29", "134.1 KiB", "377 ±6 %", "848 ±5 %", "330", "303", "70.8 %", "0"],
            ["brotli 11", "4.65", "210.1 KiB", "1 (1 run)", "211 (1 run)", "323", "303", "71.4 %", "0"]]
    header = ["codec", "ratio", "size", "compress MB/s", "decompress MB/s", "WCU", "RCU", "WCU saved",
              "> 1 MB"]
    table = Table(rows, header, range(1, 9))
    narrow = list(fit([table], 82))  # 94 wide as written
    assert narrow[0].split() == ["compress", "decompress", "WCU", ">"]  # the headers' first lines
    assert narrow[1].split()[-4:] == ["RCU", "saved", "1", "MB"]  # a figure stays with its unit
    assert [line.split()[0] for line in narrow[3:]] == ["zstd", "brotli"]  # one line a row
    assert max(map(len, narrow)) <= 82
    at_50 = list(fit([table], 50))
    blocks = "\n".join(at_50).split("\n\n")
    assert len(blocks) >= 2 and all("zstd 3 + dict" in b and "brotli 11" in b for b in blocks)
    assert all(len(line) <= 50 for line in at_50)


def test_a_last_column_of_text_wraps_inside_its_column():
    table = Table([["blob bytes", "stored 1.2 MiB",
                    "decompressed 3.3 MiB, 100 % of stored bytes compressed by the client"]])
    lines = list(fit([table], 60))
    assert lines[0].startswith("  blob bytes  stored 1.2 MiB  decompressed") and len(lines) == 3
    column = lines[0].index("decompressed")
    assert all(line[:column].strip() == "" for line in lines[1:])  # continued under its column


def test_interval_bars_in_unicode_and_in_ascii():
    bar = Bar(0.5, "#", 0.4, 0.7)
    assert bar.draw(21, True) == "████████░░┃░░░░"
    assert bar.draw(21, False) == "########--|----"
    assert Bar(0.001).draw(20, True) == "▏" and Bar(0.001).draw(20, False) == "#"  # any part shows
    assert Bar(0.0).draw(20, True) == ""


def test_blocks_are_drawn_where_the_encoding_has_them():
    assert draws_blocks("utf-8") and draws_blocks("UTF-16")
    assert not draws_blocks("ascii") and not draws_blocks("cp1252") and not draws_blocks(None)
    assert not draws_blocks("no-such-encoding")


def test_text_wraps_under_its_text_and_keeps_figures_with_their_units():
    line = ("Verdict: client-side compression saves 63 % of storage (2.5 MiB stored for 6.9 MiB); "
            "COMPRESSION TRIAL measures what it does to latency on this cluster.")
    out = list(fit([line], 80))
    assert all(len(x) <= 80 for x in out) and out[1].startswith("    ")
    assert not any(re.search(r"\d$", x) for x in out[:-1])  # no line ends on a figure without its unit
    # A field of a few words after a comma stays whole (INSPECT's header fields).
    fields = "      #0  offset 0, FLG 0x68, version 1, block_independence yes, block_checksum no"
    assert list(fit([fields], 60)) == ["      #0  offset 0, FLG 0x68, version 1,",
                                       "          block_independence yes, block_checksum no"]
    # A word wider than the room (a payload preview) is cut, marked.
    preview = '    {"orderId":"ORD-2024000000","status":"PICKING","placedAt":"2024-02-16T14:30:41Z"}'
    assert list(fit([preview], 60)) == ['    {"orderId":"ORD-2024000000","status":"PICKING","placedA…']


def test_width_zero_leaves_everything_as_written():
    table = _stats_buckets()
    text = "a line " * 40
    assert list(fit([text, table], 0, False)) == [text, *table.lines(0, False)]
    assert all("#" in line or "=" in line for line in table.lines(0, False)[2:])


def test_the_nearest_declared_name_to_a_typo():
    assert nearest("zstdd", CODEC_NAMES) == "zstd"
    assert nearest("gzp", CODEC_NAMES) == "gzip"
    assert nearest("COMPRESION", ["COPY", "COMPRESSION", "CONSISTENCY"]) == "COMPRESSION"
    assert nearest("inspec", ["INSPECT", "INSERT"]) == "INSPECT"  # as declared, case aside
    assert nearest("zstd", CODEC_NAMES) is None  # a name itself is no typo
    assert nearest("parquet", CODEC_NAMES) is None  # nothing near
    assert nearest("json", ["bson", "msgpack", "text"]) is None  # one letter in four: another name
    assert nearest("zsdt", CODEC_NAMES) == "zstd"  # two letters swapped: one slip
    assert nearest("PAYLAOD", ["PAYLOAD", "TABLE"]) == "PAYLOAD"
    assert nearest("FORM", ["FORMAT", "FROM", "FORMATS"]) == "FROM"  # a slip, before a word merely alike


def test_a_word_from_a_list_mistyped_is_one_line_with_the_nearest_and_the_list():
    assert unknown("codec", "zsdt", ("snappy", "zstd")) == \
        "unknown codec 'zsdt' (did you mean zstd?); valid: snappy, zstd"
    assert unknown("step", "yaml", ("zstd", "text"), within="zstd>yaml", also="a file") == \
        "unknown step 'yaml' in 'zstd>yaml'; valid: zstd, text, or a file"


def test_a_cut_has_one_mark_and_a_quoted_string_keeps_its_closing_quote():
    assert shorten('"Gift wrap, no invoice in the box"', 20) == '"Gift wrap, no inv…"'
    assert shorten('"Gift wrap, no invoice in the box"', 31) == '"Gift wrap, no invoice in the…"'
    assert shorten("'abcdef'", 6) == "'abc…'"
    assert shorten("0x0011223344", 8) == "0x00112…"
    assert shorten("short", 8) == "short"


def test_a_word_wider_than_the_screen_is_cut_and_the_words_after_it_go_on():
    # A report's title at 80 columns: its source, a path, whole on a line of its own (never cut: it
    # copies as one), its counts on the next line, never dropped. The path fits the screen but not
    # after the indent: at the left edge, on one row (indented, the terminal broke it mid-name).
    path = "/tmp/pytest-of-root/pytest-345/popen-gw0/test_text_report_fits_the_term0/values:"
    lines = list(fit([f"COMPRESSION TRIAL {path} 30 values (files), 3 variants, 3.4 s"], 80))
    assert lines == ["COMPRESSION TRIAL", path, "    30 values (files), 3 variants, 3.4 s"]
    longer = path.replace("values", "values-of-a-long-name")  # wider than the screen: at the indent
    lines = list(fit([f"COMPRESSION TRIAL {longer} 30 values (files), 3 variants, 3.4 s"], 80))
    assert lines == ["COMPRESSION TRIAL", f"    {longer}", "    30 values (files), 3 variants, 3.4 s"]
    # A word that is no path (a payload's preview) is cut with '…', the words after it on.
    word = "x" * 90
    lines = list(fit([f"a preview {word} and after"], 80))
    assert lines == ["a preview", f"    {word[:75]}…", "    and after"]
