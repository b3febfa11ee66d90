"""Progress lines on the screen a person sees (pyte) at 80x24 and 140x45: COMPRESSION ADVISE says
what it measures while it measures, Ctrl-C there reports what was measured, and no message, no
Ctrl-C (whose ^C the terminal echoes at the cursor) leaves a progress line behind."""

from __future__ import annotations

import re
import time

import pytest
from orders import rows, write_table

SIZES = [(80, 24), (140, 45)]
COUNT = 400
#: How every progress line ends (scanning.scan.Progress: the long hint, or the short one).
HINT = re.compile(r"\(Ctrl-C(:| stops)")


@pytest.fixture(scope="module")
def faults_table(cassandra):
    ks = cassandra.create_keyspace("faults_progress")  # faults_*: the server's fault handler applies
    session = cassandra.session(ks)
    write_table(session, rows(COUNT, partitions=COUNT))
    session.shutdown()
    cassandra.faults.clear()
    yield f"{ks}.orders"
    cassandra.faults.clear()


def shown(screen: list[str]) -> str:
    return "\n".join(screen)


def wait_for_row(t, pattern: str, timeout: float = 120) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    """The screen once a row matches `pattern` (a progress line is redrawn in place, so the
    screen, not the stream of output, says what shows now), and that row."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while True:
        screen = t.display()
        row = next((r for r in screen if regex.search(r)), None)
        if row is not None:
            return screen, row
        assert time.monotonic() < deadline, f"no row matching {pattern!r}:\n{shown(screen)}"


def assert_no_progress_left(screen: list[str]) -> None:
    left = [row for row in screen if HINT.search(row) or row.rstrip().endswith("^")]
    assert not left, f"a progress line (or the ^ of an echoed ^C) stayed on the screen:\n{shown(screen)}"


@pytest.mark.parametrize(("cols", "rows_"), SIZES)
def test_advise_shows_what_it_measures_and_ctrl_c_reports_it(term, demo_ks, cols, rows_):
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=rows_, cols=cols)
    t.prompt()
    start = len(t.text)
    t.type("COMPRESSION ADVISE SELECT data FROM table_with_compressed_json;")
    t.enter()
    screen, line = wait_for_row(t, r"^COMPRESSION.*: measuring ")
    # One row, whole: what is measured, how far, how to stop.
    assert re.search(r": measuring \S.* \(\d+ of \d+\), \d+ s", line) and HINT.search(line), line
    assert len(line) < cols, shown(screen)
    t.ctrl("c")
    t.expect(r"\d+ of \d+ codecs measured[^\n]*\n", timeout=120)  # the column's note, near the end
    t.prompt()
    report = t.text[start:]
    assert "INTERRUPTED while measuring" in report and "Cancelled" not in report, report[-3000:]
    if "Verdict" in report:  # said before the verdict, which rests on the codecs measured
        assert report.index("INTERRUPTED while measuring") < report.index("Verdict"), report[-3000:]
    measured = re.search(r"(\d+) of (\d+) codecs measured", report)
    assert measured and int(measured.group(1)) < int(measured.group(2)), report[-3000:]
    assert "Column data:" in report  # what was measured is reported
    assert_no_progress_left(t.display())
    out = t.run("SELECT name FROM blob_formats WHERE name = 'gzip';", until=r"\(1 rows\)")
    assert "gzip" in out  # the shell stays alive
    assert t.exit() == 0


@pytest.mark.parametrize(("cols", "rows_"), SIZES)
def test_a_message_after_a_progress_line_starts_its_own_row(term, cassandra, faults_table, cols, rows_):
    t = term(env={"PAGER": ""}, rows=rows_, cols=cols)
    t.prompt()
    cassandra.faults.set("delay", 1, 1000)  # the first page late: the progress line is drawn
    try:
        t.run(f"COMPRESSION ADVISE SELECT ck FROM {faults_table};", until=r"no blob or text column[^\n]*\n")
        t.prompt()
    finally:
        cassandra.faults.clear()
    screen = t.display()
    assert "COMPRESSION ADVISE: the result has no blob or text column" in screen, shown(screen)
    assert_no_progress_left(screen)
    assert t.exit() == 0


@pytest.mark.parametrize(("cols", "rows_"), SIZES)
def test_ctrl_c_on_a_group_by_leaves_no_progress_line(term, cassandra, faults_table, cols, rows_):
    t = term(env={"PAGER": ""}, rows=rows_, cols=cols)
    t.prompt()
    cassandra.faults.set("delay", -1, 300)  # every page late: the scan takes seconds
    try:
        t.type(f"SELECT data.status, count(*) FROM {faults_table} GROUP BY data.status ALLOW FILTERING;")
        t.enter()
        wait_for_row(t, r"rows/s")
        t.ctrl("c")
        # The closing line's end (fitted to the screen: its last words may be on a row of their own).
        t.expect(r"the\s+answer\s+covers\s+the\s+rows\s+read[^\n]*\n", timeout=120)
        t.prompt()
    finally:
        cassandra.faults.clear()
    screen = t.display()
    assert_no_progress_left(screen)
    # The closing line says how far it got, and the prompt follows: the groups found so far (none
    # when Ctrl-C came before the first row) are the answer, never an error.
    at = next(i for i, row in enumerate(screen) if row.endswith("rows read"))  # the closing line's end
    assert "the answer covers" in " ".join(screen[at - 1:at + 1]), shown(screen)
    assert screen[at + 1].startswith("cassandra@cqlsh"), shown(screen)
    assert t.exit() == 0


@pytest.fixture(scope="module")
def new_table(cassandra):
    """Written just now, so the server's size estimate is empty; every token range holds more
    than a page (the first page is 100 rows)."""
    ks = cassandra.create_keyspace("faults_new_table")  # faults_*: the server's fault handler applies
    session = cassandra.session(ks)
    write_table(session, rows(4000, partitions=400))
    session.shutdown()
    yield f"{ks}.orders"
    cassandra.faults.clear()


def test_a_new_tables_progress_says_rows_read_never_0_percent(term, cassandra, new_table):
    # Before any token range is finished (and with no size estimate) a percentage says nothing:
    # '~0 %' at thousands of rows read looked like an endless read. The rows read say how far.
    t = term(env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    cassandra.faults.set("delay", -1, 300)  # every page late: the progress line is drawn
    try:
        t.run(f"SELECT data.status, count(*) FROM {new_table} GROUP BY data.status ALLOW FILTERING;",
              until=r"\(\d+ rows\)", timeout=180)
    finally:
        cassandra.faults.clear()
    from repl.terminal import clean

    drawn = [clean(line) for line in t.raw.split("\r") if "rows/s" in line]
    read = [line for line in drawn if re.search(r": [1-9][\d,]* rows, ", line)]
    assert read, drawn
    assert not [line for line in read if "~0 %" in line], read
    assert t.exit() == 0


def test_trial_s_progress_line_keeps_the_table_s_name_at_80_columns(term, demo_ks):
    # 'COMPRESSION TRIAL com…: 2,142 rows, ...': the name cut first. Now the command's words, the
    # keyspace and the figures' last fields go before any of the table's name.
    t = term("-k", demo_ks, env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    t.type(f"COMPRESSION TRIAL {demo_ks}.table_with_compressed_json.data ROWS 300 INTO {demo_ks};")
    t.enter()
    screen, line = wait_for_row(t, r"\.data: [\d,]+ rows")
    name = "table_with_compressed_json.data: "
    assert line.startswith((f"…{name}", f"{demo_ks}.{name}", f"COMPRESSION TRIAL {demo_ks}.{name}")), line
    assert HINT.search(line) and len(line) < 80, shown(screen)
    t.ctrl("c")
    t.expect(r"INTERRUPTED|nothing was written", timeout=120)
    t.prompt()
    assert_no_progress_left(t.display())
    assert t.exit() == 0


def test_a_sliver_of_the_ring_finished_is_shown_under_one_percent_not_zero():
    # One small token range of 256 finished first (the CI run's order under load): 0.4 % done
    # beside thousands of rows read said '~0 %'.
    import io

    from cqlsh_ext.scanning.scan import Progress

    out = io.StringIO()
    progress = Progress(out, "SELECT ks.t")
    progress.update(3000, fraction=1 / 256, force=True)
    assert "<1 %" in out.getvalue() and "~0 %" not in out.getvalue(), out.getvalue()
    progress.update(3500, fraction=0.5, force=True)
    assert out.getvalue().rsplit("\r", 1)[1].count("~50 %") == 1


def test_the_first_rows_read_are_drawn_at_once():
    # Under load a read's pages came in one burst just after a '0 rows' line (the line is redrawn
    # at most 8 times a second): the read ended with no line saying any row was read (CI's run).
    import io

    from cqlsh_ext.scanning.scan import Progress

    out = io.StringIO()
    progress = Progress(out, "SELECT ks.t")
    progress.update(0, force=True)
    progress.update(100)  # within the same eighth of a second: drawn, the first rows
    progress.update(200)  # the next ones wait for their eighth of a second
    lines = [line for line in out.getvalue().split("\r") if line]
    assert [line.split(":")[1].split(",")[0] for line in lines] == [" 0 rows", " 100 rows"], lines
