"""What a person sees in the interactive shell at 80x24, 120x40 and 200x60, on the demo tables.

The shell runs in a pseudo-terminal of each size; its bytes are rendered by a terminal emulator
(pyte) and the checks read that screen, and the lines written: no line wider than the screen (so
nothing wraps, separators included), a table or vertical rows as the result calls for, and the
pager for output taller than the screen, with the prompt back after it.
"""

from __future__ import annotations

import re
import signal
import time

import pytest

SIZES = [(80, 24), (120, 40), (200, 60)]
RULE = re.compile(r"^-+(\+-+)+$")


def result_lines(out: str) -> list[str]:
    """The lines of the result in `out`, from its header or first row to the row count."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if " | " in line or line.startswith("@ Row"))
    return lines[start:]


def assert_fits(out: str, cols: int) -> list[str]:
    lines = result_lines(out)
    wide = [line for line in lines if len(line) > cols]
    assert not wide, f"{len(wide)} lines wider than {cols} columns, e.g. {wide[0][:200]!r}"
    return lines


def assert_screen_rules_whole(t, cols: int) -> None:
    """On the rendered screen, every table rule is one row: the row after it is not more dashes."""
    rows = t.display()
    for i, row in enumerate(rows[:-1]):
        if RULE.match(row):
            assert len(row) <= cols
            assert not rows[i + 1].startswith("-"), f"a rule wraps onto the next row:\n{row}\n{rows[i + 1]}"


@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_tables_fit_the_screen(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    out = t.run("SELECT name, data FROM blob_formats;")
    lines = assert_fits(out, cols)
    assert re.match(r"^\s*name\s+\| data", lines[0]) and RULE.match(lines[1]), lines[:2]
    assert any("[snappy]" in line for line in lines)  # decoded, not hex
    assert_screen_rules_whole(t, cols)
    t.prompt()
    out = t.run("SELECT * FROM table_with_uncompressed_json LIMIT 3;")
    lines = assert_fits(out, cols)
    assert lines[0].split() == ["id", "|", "data"], lines[0]  # a table: two columns fit, cut
    assert sum("…" in line for line in lines) == 3
    assert_screen_rules_whole(t, cols)
    t.prompt()
    out = t.run("SELECT * FROM nested_blobs;")
    assert_fits(out, cols)
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_vertical_rows_fit_the_screen(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.run("EXPAND ON", until=r"EXPAND set to ON")
    t.prompt()
    out = t.run("SELECT * FROM table_with_uncompressed_json LIMIT 2;")
    lines = assert_fits(out, cols)
    assert lines[0] == "@ Row 1" and RULE.match(lines[1])
    t.prompt()
    out = t.run("SELECT * FROM nested_blobs LIMIT 2;")
    assert_fits(out, cols)
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), SIZES)
def test_tall_output_opens_the_pager_then_the_prompt_is_back(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": "less -SRXF"}, rows=rows, cols=cols)
    t.prompt()
    statements = [f"SELECT id FROM table_with_compressed_json LIMIT {rows * 2};"]
    if rows < 40:  # reports and HELP (40-50 lines) are taller than the smallest screen
        statements += ["COMPRESSION ADVISE SAMPLE 20 SELECT data FROM table_with_compressed_json;", "HELP"]
    for statement in statements:
        t.type(statement)
        t.enter()
        t.expect(r"\n:|\(END\)", timeout=120)  # less's prompt on the bottom row
        assert t.display()[-1].startswith((":", "(END)")), t.display()[-3:]
        t.type("q")
        t.prompt()
    # Short output does not start the pager.
    out = t.run("SELECT name FROM blob_formats LIMIT 2;")
    assert "(2 rows)" in out and not t.display()[-1].startswith(":")
    t.exit()


#: The sizes issue 21 was found at: a small terminal and a large one.
NEWCOMER_SIZES = [(80, 24), (140, 45)]


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_a_cut_hex_cell_keeps_why_it_was_not_decoded(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.run("SELECT * FROM blob_formats WHERE name IN ('truncated gzip', 'zstd dictionary', 'raw deflate');")
    screen = t.display()
    shown = {row.split("|")[0].strip(): row.split("|")[1] for row in screen if row.count(" | ") == 2}
    assert "(gzip: truncated stream)" in shown["truncated gzip"], screen
    assert "(zstd frame needs" in shown["zstd dictionary"], screen  # the start of a longer reason
    assert shown["raw deflate"].strip().startswith("0xbd56df"), screen  # plain hex is cqlsh's, cut
    assert not [row for row in screen if "……" in row], screen
    assert all(len(row) <= cols for row in screen)
    t.exit()


@pytest.mark.parametrize("after", [0.0, 0.03, 0.06, 0.1, 0.2, 0.5])
def test_ctrl_c_in_a_first_advise_is_never_lost(term, demo_ks, after):
    # Each moment in a new shell: its first ADVISE, while the prompt still winds down after Enter,
    # then while the sample is read (which imports the codecs), then while measuring. Ctrl-C then
    # clears the input, cancels, or measures what was read (INTERRUPTED): never the whole report.
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    start = len(t.text)
    t.type("COMPRESSION ADVISE SELECT data FROM table_with_compressed_json;")
    t.enter()
    time.sleep(after)
    t.child.kill(signal.SIGINT)
    time.sleep(0.5)
    t.run("SELECT name FROM blob_formats WHERE name = 'gzip';", until=r"\(1 rows\)", timeout=120)
    between = t.text[start:]
    assert "Recommendation" not in between or "INTERRUPTED" in between, f"Ctrl-C {after} s in was lost"
    t.exit()


def _toolbar(t) -> str:  # type: ignore[no-untyped-def]
    """The bottom row of the screen: prompt_toolkit's toolbar."""
    return t.display()[-1]


#: Every setting the toolbar shows, under its full or its short label.
SETTINGS_SHOWN = [r"(consistency |cl:)ONE\b", r"(decompress |dec:)auto\b", r"(paging |page:)100\b"]


def _wait_for_toolbar(t, pattern: str) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not re.search(pattern, _toolbar(t)):
        assert time.monotonic() < deadline, f"no {pattern!r} in the toolbar: {_toolbar(t)!r}"
    return _toolbar(t)


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_the_toolbar_shortens_labels_before_it_drops_a_setting(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.run("EXPAND ON", until=r"EXPAND set to ON")
    t.prompt()
    bar = _wait_for_toolbar(t, r"(output |out:)vertical")  # EXPAND ON shows
    for shown in [r"127\.0\.0\.1:\d+", *SETTINGS_SHOWN]:
        assert re.search(shown, bar), (shown, bar)
    assert len(bar) <= cols
    # A statement under way: the host and every setting stay, and the hint says what is missing.
    t.type("SELECT * FROM blob_formats")
    bar = _wait_for_toolbar(t, r"end (the statement )?with ;")
    for shown in [r"127\.0\.0\.1:\d+", *SETTINGS_SHOWN, r"(output |out:)vertical"]:
        assert re.search(shown, bar), (shown, bar)
    assert len(bar) <= cols
    t.ctrl("c")
    t.prompt()
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_an_open_string_is_named_in_the_toolbar(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.type("SELECT name FROM blob_formats WHERE name = 'gzip")
    _wait_for_toolbar(t, r"close it with '")
    t.type(";")  # inside the string: it is still open, and the toolbar still says so
    t.enter()
    bar = _wait_for_toolbar(t, r"close it with '")
    assert "end the statement" not in bar and len(bar) <= cols
    t.ctrl("c")
    t.prompt()
    t.run("SELECT name FROM blob_formats WHERE name = 'gzip';", until=r"\(1 rows\)")
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_a_long_line_wraps_without_a_continuation_prompt(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    columns = ", ".join(["name"] * 30)  # one line, wider than the screen
    t.type(f"SELECT {columns} FROM blob_formats")
    _wait_for_toolbar(t, r"end (the statement )?with ;")
    screen = t.display()
    typed = [row for row in screen if "name, name" in row or "FROM blob_formats" in row]
    assert len(typed) >= 2, screen  # wrapped by the screen
    assert not [row for row in screen if row.lstrip().startswith("...")], screen
    t.enter()  # a real new line: the continuation prompt
    t.expect(r"\.\.\.")
    t.run("LIMIT 1;", until=r"\(1 rows\)")
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_an_inspect_report_is_laid_out_for_the_width(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.ctrl("l")  # a clear screen: as much of the report on it as fits
    t.run("INSPECT SELECT data FROM blob_formats WHERE name = 'lz4 frame';",
          until=r"\(1 blob value in 1 row\)")
    t.prompt()
    screen = t.display()
    # From the report's first row, or the top when the screen has scrolled past it.
    start = next((i for i, row in enumerate(screen) if row.startswith("row 1")), 0)
    report = screen[start:next(i for i, row in enumerate(screen) if row.startswith("(1 blob value"))]
    # Every line of the report starts indented: none is the tail of a line the terminal wrapped.
    assert all(row.startswith((" ", "row 1")) or not row for row in report), "\n".join(report)
    for whole in ("block_checksum no", "header_checksum 0xac", "content_size_flag yes"):
        assert any(whole in row for row in report), (whole, "\n".join(report))
    preview = next(row for row in report if row.lstrip().startswith('{"orderId"'))
    assert len(preview) <= cols
    t.exit()
