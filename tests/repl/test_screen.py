"""What a person sees in the interactive shell at 80x24, 120x40 and 200x60, on the demo tables.

The shell runs in a pseudo-terminal of each size; its bytes are rendered by a terminal emulator
(pyte) and the checks read that screen, and the lines written: no line wider than the screen (so
nothing wraps, separators included), a table or vertical rows as the result calls for, and the
pager for output taller than the screen, with the prompt back after it.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest
from shell_runner import CQLSH_EXT, isolated_env

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
def test_a_result_s_closing_lines_follow_the_pager_quit_on_its_first_page(term, demo_ks, cols, rows):
    # less quit on its first page leaves the rest of what it was given unseen: the row count and
    # a payload query's closing line are written after it, on the terminal, above the prompt.
    t = term("-k", demo_ks, env={"PAGER": "less -SRXF"}, rows=rows, cols=cols)
    t.prompt()
    many = rows * 2
    for statement, closing in (
            (f"SELECT id FROM table_with_compressed_json LIMIT {many};", [f"({many} rows)"]),
            (f"SELECT id, data.stauts FROM table_with_compressed_json LIMIT {many};",
             [f"({many} rows)", f"payload query: {many} rows read, {many} matched; no value read has "
                                "data.stauts (nearest keys seen there: status)"])):
        t.type(statement)
        t.enter()
        t.expect(r"\n:", timeout=120)  # less's prompt: its first page
        assert not any("rows)" in row for row in t.display()), t.display()
        t.type("q")
        t.prompt()
        screen = t.display()
        at = max(i for i, row in enumerate(screen) if re.match(r"\S*cqlsh(:\w+)?>", row))
        shown = [row for row in screen[:at] if row.strip()][-4:]
        read = " ".join(" ".join(row.split()) for row in shown)
        assert read.endswith(" ".join(closing)), shown  # whole words, every row within the screen
        assert all(len(row) <= cols for row in shown)
        t.type("\x0c")  # Ctrl-L: a clean screen for the next statement
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_a_cut_hex_cell_keeps_why_it_was_not_decoded(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.run("SELECT * FROM blob_formats WHERE name IN ('truncated gzip', 'zstd dictionary', 'raw deflate', "
          "'zlib preset dictionary');")
    screen = t.display()
    shown = {row.split("|")[0].strip(): row.split("|")[1] for row in screen if row.count(" | ") == 2}
    assert "(gzip: truncated stream)" in shown["truncated gzip"], screen
    assert "(zstd frame needs" in shown["zstd dictionary"], screen  # the start of a longer reason
    # The hex is cut first, then the reason's tail words: whole words, closed with '…)'.
    zlib = shown["zlib preset dictionary"].strip()
    reason = "zlib stream needs a preset dictionary (DICTID 0x"
    if cols == 80:
        assert zlib.startswith("0x… (zlib stream needs") and zlib.endswith("…)"), screen
        words = zlib[len("0x… ("):-len("…)")]
        assert reason.startswith(words + " "), screen  # no word cut in two
    else:
        assert zlib.startswith("0x78") and f"({reason}" in zlib, screen
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
    assert "Verdict" not in between or "INTERRUPTED" in between, f"Ctrl-C {after} s in was lost"
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


def test_a_prompt_as_wide_as_the_screen_wraps_with_the_statement_as_a_terminal_does(term, demo_ks):
    # A window narrower than its prompt (a long keyspace name): the statement's lines went under
    # the prompt, with no column left for them; neither the prompt nor what was typed, nor the
    # result, was drawn. Now they flow from the first column, as cqlsh's readline wraps them.
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=24, cols=24)
    statement = "SELECT name FROM blob_formats WHERE name = 'gzip';"
    t.run(statement, until=r"\(1 rows\)")
    drawn = "".join(t.screen.display)  # the rows as the terminal shows them, the wraps joined
    assert f"@cqlsh:{demo_ks}> {statement}" in drawn, "\n".join(t.display())
    assert " gzip" in drawn, "\n".join(t.display())
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
    assert preview.endswith("…") and "..." not in preview, preview  # one mark at any width
    t.exit()



def wrapped_rows(lines: list[str], first: str, last: str) -> list[str]:
    """The rows from the one starting (after its indent) with `first` to the one ending with `last`."""
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(first))
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith(last))
    return lines[start:end + 1]


def assert_wrapped_evenly(rows: list[str], cols: int, under: int) -> None:
    """A text laid out for the width: no row wider than the screen, every row but the last at
    least half full (a ragged wrap leaves a short row, and a hard break in the text another), and
    the continuations indented `under` columns, beneath the text."""
    assert all(len(row) <= cols for row in rows), rows
    assert all(len(row) > cols // 2 for row in rows[:-1]), rows
    assert all(len(row) - len(row.lstrip()) == under for row in rows[1:]), rows


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_settings_and_advise_reports_wrap_evenly(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    out = t.run("COMPRESSION SETTINGS table_with_compressed_json;", until=r"offsets in memory\)")
    # The report from its heading (the progress line before it, erased on the screen, is in the stream).
    report = out[out.rindex("COMPRESSION SETTINGS "):].splitlines()
    assert all(len(line) <= cols for line in report), [line for line in report if len(line) > cols]
    # One row a partition: one size, not a row median beside a partition median.
    assert any(line.startswith("  row = partition size ") for line in report), report
    assert not any("row size (values)" in line or "rows per partition" in line for line in report), report
    heading = wrapped_rows(report, "Ratio of the table's compressor", "no SSTable framing):")
    assert " ".join(" ".join(heading).split()) == (
        "Ratio of the table's compressor on these rows (approximate: column values laid end to end in "
        "chunks, no SSTable framing):")
    assert_wrapped_evenly(heading, cols, under=4)
    assert_wrapped_evenly(wrapped_rows(report, "- a read of one partition", "offsets in memory)"), cols,
                          under=4)  # under the bullet's text
    t.prompt()
    out = t.run("COMPRESSION ADVISE SAMPLE 20 SELECT data FROM table_with_compressed_json;",
                until=r"values per size bucket", timeout=120)
    speeds = wrapped_rows(out.splitlines(), "speeds in MB/s", "slowest run")
    assert_wrapped_evenly(speeds, cols, under=6)
    t.prompt()
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_inspect_with_e_is_fitted_to_a_terminal_and_whole_in_a_pipe(term, demo_ks, cassandra, tmp_path,
                                                                   cols, rows):
    statement = "INSPECT SELECT data FROM blob_formats WHERE name = 'zstd';"
    t = term("-k", demo_ks, "-e", statement, env={"PAGER": ""}, rows=rows, cols=cols)
    t.expect(r"\(1 blob value in 1 row\)")
    lines = t.text[t.text.index("row 1"):t.pos].splitlines()
    assert all(len(line) <= cols for line in lines), [line for line in lines if len(line) > cols]
    # Labels and `key value` fields are never split between rows.
    assert any(line.lstrip().startswith("content checksum (XXH64, low 32 bits): ") for line in lines), lines
    for field in ("single_segment yes", "checksum_flag no", "content_size 2843", "max_output 2843"):
        assert any(field in line for line in lines), (field, lines)
    t.child.wait()
    # To a pipe: whole lines, as they are.
    piped = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-k", demo_ks, "-e", statement],
                           capture_output=True, text=True, timeout=120, env=isolated_env(tmp_path))
    assert piped.returncode == 0, piped.stderr
    fields = next(line for line in piped.stdout.splitlines() if "#0  offset 0" in line)
    assert "single_segment yes" in fields and "max_output 2843" in fields, fields  # one line, every field


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_classic_loop_rows_fit_the_screen(term, demo_ks, cols, rows):
    # cqlsh's own loop (--classic) on a terminal cuts blob cells for the screen: the rows fit it too,
    # laid out as the interactive shell lays them out (cut columns, cqlsh's alignment).
    t = term("-k", demo_ks, "--classic", env={"PAGER": ""}, rows=rows, cols=cols)
    t.expect(r"cqlsh:\w+> ")
    for statement, columns in (("SELECT * FROM table_with_compressed_json LIMIT 3;", 2),
                               ("SELECT * FROM nested_blobs;", 5)):
        out = t.run(statement)
        lines = assert_fits(out, cols)
        assert RULE.match(lines[1]) and lines[1].count("+") == columns - 1, lines[:2]
        body = [line for line in lines[2:] if " | " in line]
        assert body and all("…" in line for line in body), body  # the decoded values, cut
        bars = [i for i, ch in enumerate(lines[1]) if ch == "+"]
        assert all([i for i, ch in enumerate(line) if ch == "|"] == bars for line in [lines[0], *body]), lines
        t.expect(r"cqlsh:\w+> ")
    assert_screen_rules_whole(t, cols)
    # A result without blobs is cqlsh's own, as before: its long text written whole.
    out = t.run("SELECT id, data FROM table_with_uncompressed_json LIMIT 1;")
    row = next(line for line in result_lines(out)[2:] if " | " in line)
    assert len(row) > cols and row.rstrip().endswith("}") and "…" not in row
    t.type("EXIT\r")


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_short_values_are_shown_whole_or_the_rows_go_vertical(term, demo_ks, cols, rows):
    # Five paths: ids, statuses and names are short values that say nothing cut ('ORD-2024001…',
    # 'RETURN_REQU…'); the item list and payment record are long ones, cut in a table.
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    out = t.run("SELECT data.orderId, data.status, data.customer.name, data.items, data.payment "
                "FROM table_with_compressed_json LIMIT 5;")
    lines = assert_fits(out, cols)
    assert len(re.findall(r"\bORD-2024\d{6}\b", out)) == 5, out
    short = ("data.orderId", "data.status", "data.customer.name")
    if cols >= 140:  # room for the long columns too: a table, only the long values cut
        assert RULE.match(lines[1]) and lines[0].split("|")[0].strip() == "data.orderId"
        body = [line.split(" | ") for line in lines[2:] if " | " in line]
        assert len(body) == 5, lines
        assert all("…" not in cell for row in body for cell in row[:3]), body
        assert all(row[3].endswith("…") and row[4].endswith("…") for row in body), body
    else:  # a table would cut the short values: vertical, each one whole on its row
        assert lines[0] == "@ Row 1", lines[:3]
        values = [line.split(" | ", 1)[1] for line in lines if line.split(" | ")[0].strip() in short]
        assert len(values) == 15 and not [value for value in values if "…" in value], values
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_the_from_hint_names_the_tables_that_fit_beside_its_label(term, cassandra, cols, rows):
    # Long table names: the menu would cut the entry, its label first ('expe...'); it names as
    # many tables as fit instead.
    ks = cassandra.create_keyspace("from_hint")
    session = cassandra.session(ks)
    tables = ("customer_orders_archive_2023", "customer_orders_archive_2024", "customer_orders_current")
    for name in tables:
        session.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, data blob)")
    session.shutdown()
    t = term("-k", ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    t.type("SELECT id, data.")
    t.type("\t")
    t.expect(r"<FROM first")
    row = next(r for r in t.display() if "<FROM first" in r)
    found = re.search(r"<FROM first: data is in ([^>]*)>\s+expected$", row)
    assert found and len(row) <= cols, row
    named = found.group(1).split(", ")
    assert named[0] == tables[0] and set(named) - {"..."} <= set(tables), row
    if cols >= 140:
        assert named == list(tables), row
    t.ctrl("c")
    t.prompt()
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_tab_before_from_offers_the_keys_of_the_one_table_or_asks_for_from(term, demo_ks, cols, rows):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows, cols=cols)
    t.prompt()
    # by_codec is a column of one table of the keyspace: its keys, before any FROM is typed.
    t.type("SELECT id, by_codec['zstd'].")
    t.type("\t")
    t.expect(r"placedAt")
    screen = "\n".join(t.display())
    for key in ("orderId", "status", "customer", "items"):
        assert re.search(rf"(^|\s){key}\s", screen), (key, screen)
    assert "<identifier>" not in screen
    t.type("sta")
    t.type("\t")
    t.expect(r"status")
    t.type(" FROM nested_blobs;")
    t.enter()
    t.expect(r"\(1 rows\)")
    assert any(re.search(r"\|\s+PICKING$", row) for row in t.display()), t.display()
    t.prompt()
    # data is a blob column of two tables: no guess, the FROM is asked for.
    t.type("SELECT id, data.")
    t.type("\t")
    t.expect(r"<FROM first")
    screen = "\n".join(t.display())
    assert "<identifier>" not in screen
    # The menu entry whole, its label too, at 80 columns as at 140 (not 'expe...').
    assert re.search(r"<FROM first: data is in blob_formats, table_with_compressed_json>\s+expected(\s|$)",
                     screen), screen
    assert "..." not in screen, screen
    t.ctrl("c")
    t.prompt()
    t.exit()


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_offline_inspect_is_fitted_to_a_terminal_and_whole_in_a_pipe(tmp_path, cols, rows):
    import zstandard

    from .terminal import Term

    doc = b"[" + b", ".join([b'{"orderId": "ORD-1", "items": []}'] * 40) + b"]"
    value = zstandard.ZstdCompressor(write_checksum=True).compress(doc)
    hex_value = "0x" + value.hex()
    t = Term(["inspect", hex_value], tmp_path, rows=rows, cols=cols, program=CQLSH_EXT)
    t.expect(r"payload: JSON")
    t.child.wait()
    t._pump(0.5)
    lines = t.text[t.text.index("hex argument"):].splitlines()
    assert all(len(line) <= cols for line in lines), [line for line in lines if len(line) > cols]
    for field in ("single_segment yes", "checksum_flag yes", f"content_size {len(doc)}"):
        assert any(field in line for line in lines), (field, lines)  # a field never split
    piped = subprocess.run([CQLSH_EXT, "inspect", hex_value], capture_output=True, text=True, timeout=60,
                           env=isolated_env(tmp_path))
    fields = next(line for line in piped.stdout.splitlines() if "#0  offset 0" in line)
    assert "checksum_flag yes" in fields and f"content_size {len(doc)}" in fields, fields  # one line


def test_advise_verdicts_on_the_demo_formats_say_why_and_name_the_main_containers(term, demo_ks):
    # Short strings that every codec makes larger are "too small to gain", not "already dense";
    # a column stored in many containers names the main ones and counts the rest.
    t = term("-k", demo_ks, "-e", "COMPRESSION ADVISE SAMPLE 200 blob_formats;", env={"PAGER": ""},
             rows=24, cols=80)
    assert t.finish(timeout=300) == 0, t.tail()
    words = " ".join(t.text.split())
    verdicts = re.findall(r"Verdict \((\w+)\): (.*?\.) ", words)
    said = dict(verdicts)
    assert said["producer"].startswith("do not compress: the values are too small to gain (median "), said
    assert "every codec makes them larger (best: " in said["producer"], said
    assert "already dense" not in said["producer"]
    stored_now = re.search(r"against what is stored now \(([^)]*)\)", said["data"])
    assert stored_now and re.fullmatch(r"[^,]+, [^,]+, [^,]+ and \d+ more", stored_now.group(1)), said["data"]
    column = re.search(r"Column data: .*? stored now \((.*?)\) ", words)
    assert column and re.fullmatch(r"([^,]+ \d+, ){3}\d+ more with \d+ values", column.group(1)), words


def _result_rows(screen: list[str]) -> list[str]:
    """The screen's rows from a result's header to its row count."""
    start = next(i for i, row in enumerate(screen) if row.startswith(" name "))
    end = next(i for i, row in enumerate(screen) if row.startswith("(") and row.endswith(" rows)"))
    return screen[start:end + 1]


@pytest.mark.parametrize(("cols", "rows"), [(80, 90), (140, 60)])
def test_decoding_off_is_stock_cqlsh_on_the_interactive_screen(term, demo_ks, cassandra, home, cols, rows):
    # -d none: the same table cqlsh prints, wide blobs wrapped by the terminal, never '@ Row 1'
    # vertical rows under a rule as wide as the hex.
    from shell_runner import STOCK_CQLSH

    from .terminal import Term

    statement = "SELECT name, data FROM blob_formats WHERE name = 'gzip';"
    ext = term("-k", demo_ks, "-d", "none", env={"PAGER": ""}, rows=rows, cols=cols)
    ext.prompt()
    ext.run(statement, until=r"\(1 rows\)")
    stock = Term([cassandra.host, str(cassandra.port), "-k", demo_ks], home, rows=rows, cols=cols,
                 program=STOCK_CQLSH)
    try:
        stock.prompt()
        stock.run(statement, until=r"\(1 rows\)")
        shown, expected = _result_rows(ext.display()), _result_rows(stock.display())
    finally:
        stock.close()
    assert shown == expected, "\n".join(shown)
    assert not any(row.startswith("@ Row") for row in shown)
    assert len(shown) > 4  # the hex wrapped over several screen rows, as in cqlsh
    ext.exit()


#: A uuid or timeuuid, whole; a cut one ends in '…' before its 36th character.
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_CUT_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f-]{0,26}…")


@pytest.fixture(scope="module")
def keyed(cassandra, repl_ks) -> str:
    """A table keyed by a day and a timeuuid, with a uuid column, a gzip blob and a long text."""
    import gzip
    import json
    import uuid

    s = cassandra.session()
    s.execute(f"CREATE TABLE IF NOT EXISTS {repl_ks}.keyed (day text, at timeuuid, ref uuid, data blob, "
              "note text, PRIMARY KEY (day, at))")
    insert = s.prepare(f"INSERT INTO {repl_ks}.keyed (day, at, ref, data, note) VALUES (?, ?, ?, ?, ?)")
    for i in range(3):
        doc = {"order": i, "lines": [f"item {k} of a long order" for k in range(12)]}
        data = gzip.compress(json.dumps(doc).encode(), mtime=0)
        s.execute(insert, ("mon", uuid.uuid1(), uuid.uuid4(), data,
                           "a note long enough that it is cut at any width: " * 4))
    s.shutdown()
    return f"{repl_ks}.keyed"


@pytest.mark.parametrize(("cols", "rows"), NEWCOMER_SIZES)
def test_keys_and_uuids_are_never_cut_at_any_width(term, keyed, cols, rows):
    # A timeuuid key cut to 'b5bb9af0-a838-11e…' cannot be copied into a WHERE: the partition and
    # clustering keys and every uuid are whole, in the interactive shell's tables and in cqlsh's
    # classic loop's; the long values are cut instead.
    for classic in (False, True):
        t = term(*(["--classic"] if classic else []), env={"PAGER": ""}, rows=rows, cols=cols)
        prompt = r"cqlsh> " if classic else r"cqlsh>"
        t.expect(prompt)
        for statement, whole in ((f"SELECT day, at, data, note FROM {keyed};", "at"),
                                 (f"SELECT ref, data, note FROM {keyed};", "ref")):
            out = t.run(statement)
            lines = assert_fits(out, cols)
            assert lines[0].split("|")[0].strip() == lines[0].split()[0] and RULE.match(lines[1]), lines[:2]
            assert whole in lines[0], lines[0]  # a table, not vertical rows
            body = [line for line in lines[2:] if " | " in line]
            assert len(body) == 3 and all("…" in line for line in body), body  # the long values cut
            assert len(re.findall(rf"(?<![\w-]){_UUID} \|", out)) == 3, out
            assert not _CUT_UUID.search(out), out
            t.expect(prompt)
        t.type("EXIT\r")


def test_keys_and_uuids_stay_whole_in_rows_turned_vertical_on_a_narrow_screen(term, keyed):
    # At 40 columns the rows go vertical, and a uuid (36 characters) after its name is wider than
    # the screen: it was cut ('b5bb9af0-a838-11ee-8028-0de30de…') as the long note is. Now it is
    # written whole, on its line, which the terminal wraps.
    t = term(env={"PAGER": ""}, rows=24, cols=40)
    t.prompt()
    out = t.run(f"SELECT day, at, ref, note FROM {keyed};")
    assert "@ Row 3" in out, out
    assert len(re.findall(rf"^ (at|ref) +\| {_UUID}$", out, re.MULTILINE)) == 6, out
    assert not _CUT_UUID.search(out), out
    assert re.search(r"^ note +\| .*…$", out, re.MULTILINE), out  # the long values cut still
    t.exit()
