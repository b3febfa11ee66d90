"""Ctrl-C stops every long command in the interactive shell, at each of its phases, and the report
says INTERRUPTED: DESCRIBE PAYLOAD, COMPRESSION STATS, ADVISE, SETTINGS and TRIAL on a real
terminal (pyte at 80 columns). The server answers every page late (its fault handler: a faults_*
keyspace), so each phase lasts long enough to be pressed in; each press waits for what the program
says (the phase's progress line), never for a time."""

from __future__ import annotations

import json
import re
import time

import pytest

#: Rows in the table; every phase stops long before they are all read.
ROWS = 2000
#: How late every page is (ms) while a test presses Ctrl-C.
DELAY_MS = 400


@pytest.fixture(scope="module")
def slow_ks(cassandra):
    import zlib

    from cassandra.concurrent import execute_concurrent_with_args

    ks = cassandra.create_keyspace("faults_ctrl_c")  # faults_*: the server's fault handler applies
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO docs (pk, ck, data) VALUES (?, ?, ?)")
    values = [(i % 200, i, zlib.compress(json.dumps({"id": i, "status": ["NEW", "PAID"][i % 2],
                                                      "items": list(range(i % 40))}).encode()))
              for i in range(ROWS)]
    execute_concurrent_with_args(session, insert, values, concurrency=32)
    session.shutdown()
    yield ks
    cassandra.faults.clear()


def wait_for_row(t, pattern: str, timeout: float = 120) -> str:  # type: ignore[no-untyped-def]
    """The screen row matching `pattern` once it shows (a progress line is redrawn in place)."""
    regex = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while True:
        row = next((r for r in t.display() if regex.search(r)), None)
        if row is not None:
            return row
        assert time.monotonic() < deadline, f"no row matching {pattern!r}:\n" + "\n".join(t.display())


def press_during(t, cassandra, statement: str, phase: str, until: str) -> str:  # type: ignore[no-untyped-def]
    """Run `statement` with every page late, press Ctrl-C once `phase` shows on the screen, wait
    for `until` (the report's end) and the prompt; the output from the statement on."""
    t.prompt()
    start = len(t.text)
    cassandra.faults.set("delay", -1, DELAY_MS)
    try:
        t.type(statement)
        t.enter()
        wait_for_row(t, phase)
        t.ctrl("c")
        t.expect(until, timeout=120)
        t.prompt()
    finally:
        cassandra.faults.clear()
    return t.text[start:]


def test_describe_payload_all_interrupted_says_so_in_its_heading(term, cassandra, slow_ks):
    t = term("-k", slow_ks, env={"PAGER": ""}, rows=24, cols=80)
    out = press_during(t, cassandra, f"DESCRIBE PAYLOAD {slow_ks}.docs.data ALL", r": [1-9][\d,]* rows, ",
                       r"INTERRUPTED \(Ctrl-C\): the report covers the [\d,]+ rows? read[^\n]*\n")
    # The heading, as wrapped to the screen: up to the line of rows read.
    heading = re.search(rf"DESCRIBE PAYLOAD {slow_ks}\.docs\.data: (.*?)\n +[\d,]+ rows? read in ", out, re.S)
    assert heading, out[-3000:]
    said = " ".join(heading.group(1).split())
    assert said.startswith("INTERRUPTED: only the rows read, exact counts of those (ALL"), said
    assert "every row" not in said
    read = int(re.search(r"the report covers the ([\d,]+) rows? read", out).group(1).replace(",", ""))
    assert 0 < read < ROWS
    assert t.exit() == 0


#: Each long command, a phase of it (what its line shows then) and how its report or refusal ends.
PHASES = [
    ("describe-sample", "DESCRIBE PAYLOAD {ks}.docs.data SAMPLE 1500", r"^DESCRIBE.*: [1-9][\d,]* rows, ",
     r"INTERRUPTED \(Ctrl-C\)[^\n]*\n"),
    # (STATS' line keeps the table where the command's name does not fit beside its figures)
    ("stats-reading", "COMPRESSION STATS {ks}.docs", r"^(COMPRESSION STATS )?\S+\.docs: [1-9][\d,]* rows, ",
     r"INTERRUPTED[^\n]*\n"),
    ("advise-reading", "COMPRESSION ADVISE SAMPLE 1500 {ks}.docs",
     r"^COMPRESSION.*: [1-9][\d,]* rows, ", r"INTERRUPTED[^\n]*\n"),
    ("advise-measuring", "COMPRESSION ADVISE SAMPLE 300 {ks}.docs", r": measuring ",
     r"codecs measured[^\n]*\n"),
    ("settings-reading", "COMPRESSION SETTINGS SAMPLE 1500 {ks}.docs",
     r"^COMPRESSION.*: [1-9][\d,]* rows, ", r"INTERRUPTED[^\n]*\n"),
    ("trial-sample", "COMPRESSION TRIAL {ks}.docs.data ROWS 1500 INTO {ks}",
     r"^COMPRESSION.*: [1-9][\d,]* rows, ", r"INTERRUPTED[^\n]*\n"),
    ("trial-writes", "COMPRESSION TRIAL {ks}.docs.data ROWS 300 INTO {ks}", r"writes, round",
     r"INTERRUPTED[^\n]*\n"),
]


@pytest.mark.parametrize(("name", "statement", "phase", "until"), PHASES, ids=[p[0] for p in PHASES])
def test_ctrl_c_stops_each_long_command_at_each_phase(term, cassandra, slow_ks, name, statement, phase,
                                                      until):
    # TRIAL's phase (writes, reads) shows where the line has room for it: 140 columns.
    cols = 140 if name == "trial-writes" else 80
    t = term("-k", slow_ks, env={"PAGER": ""}, rows=24, cols=cols)
    out = press_during(t, cassandra, statement.format(ks=slow_ks), phase, until)
    assert "INTERRUPTED" in out and "Cancelled" not in out and "Traceback" not in out, out[-3000:]
    said = " ".join(out.split())  # as wrapped to the screen
    if name == "advise-measuring":
        measured = re.search(r"(\d+) of (\d+) codecs measured", out)
        assert measured and int(measured.group(1)) < int(measured.group(2)), out[-3000:]
        # The verdict rests on those, says so, and claims nothing of the others.
        if "Verdict" in said:
            assert f"Verdict, from the {measured.group(1)} of {measured.group(2)} codecs measured: " in said
        assert not re.search(r"\b(every|no|any) codec (?!measured)", said), said[-3000:]
    if "Verdict" in out:
        # How the run ended comes before what it concludes: the verdict rests on part of it.
        assert out.index("INTERRUPTED") < out.index("Verdict"), out[-3000:]
    if name == "trial-writes":
        # What was measured, and nothing more: the rounds run, no table of the reads never made.
        done = re.search(r"INTERRUPTED \(Ctrl-C\): ([\d,]+|none) of the ([\d,]+) writes and (none|[\d,]+) "
                         r"of the [\d,]+ reads measured, in (\d+) of (\d+) rounds", said)
        assert done, said[-3000:]
        # Pressed while writing: fewer writes measured than planned. The rounds run are those holding
        # a measured operation: the last round's too when the press landed in it (a loaded machine's
        # screen shows the phase late), so "4 of 4 rounds run" is true then.
        measured, writes = done.group(1), int(done.group(2).replace(",", ""))
        assert measured == "none" or int(measured.replace(",", "")) < writes, said[-3000:]
        run, planned = int(done.group(4)), int(done.group(5))
        assert run <= planned and f"{run} of {planned} rounds run" in said
        assert all(int(n) <= run for n in re.findall(r"\((\d+) rounds?\)", said)), said[-3000:]
        if done.group(3) == "none":
            assert "Reads (ms)" not in out and "Reads: none measured (Ctrl-C came before them)" in said
    # The shell goes on.
    t.run(f"SELECT count(*) FROM {slow_ks}.docs WHERE pk = 1;", until=r"\(1 rows\)")
    assert t.exit() == 0


#: A long statement of each kind, every page late: plain SELECT, a payload query, COMPRESSION
#: STATS, an export ({path}: the file).
RIGHT_AFTER_ENTER = {
    "select": "SELECT pk, ck FROM {ks}.docs;",
    "payload": "SELECT ck, data.status FROM {ks}.docs WHERE data.status = 'PAID' ALLOW FILTERING;",
    "stats": "COMPRESSION STATS {ks}.docs;",
    "export": "COPY (SELECT ck, data.status FROM {ks}.docs) TO '{path}';",
}
#: What a statement stopped by Ctrl-C says: it never started, or it stopped and says so.
STOPPED = r"Cancelled[^\n]*\.|INTERRUPTED|interrupted\s+\(Ctrl-C\)"


@pytest.mark.parametrize("after", [0.0, 0.03, 0.1])
@pytest.mark.parametrize("kind", list(RIGHT_AFTER_ENTER))
def test_ctrl_c_right_after_enter_is_never_lost(term, cassandra, slow_ks, tmp_path, kind, after):
    # Each in a new shell, the first statement (the prompt winds down longest then): Ctrl-C typed
    # `after` s after Enter, as a person types it (the byte 0x03 on the terminal: prompt_toolkit may
    # still hold it in raw mode, where it is a key, no signal). The statement stops or never starts,
    # the next prompt comes, and the statement typed at it runs.
    t = term("-k", slow_ks, env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    start = len(t.text)
    cassandra.faults.set("delay", -1, DELAY_MS)
    try:
        t.type(RIGHT_AFTER_ENTER[kind].format(ks=slow_ks, path=tmp_path / "out.jsonl"))
        t.enter()
        time.sleep(after)
        t.ctrl("c")
        stopped = t.expect(STOPPED, timeout=120)  # a lost Ctrl-C: the whole run, none of these
        t.prompt()
    finally:
        cassandra.faults.clear()
    out = t.text[start:]
    assert "Traceback" not in out, out[-3000:]
    # Every statement here only reads (an export too): nothing the server may still apply.
    assert "may still apply" not in stopped.group(0), stopped.group(0)
    t.run(f"SELECT count(*) FROM {slow_ks}.docs WHERE pk = 1;", until=r"\(1 rows\)")
    after_stop = t.text[start:][stopped.end() - start:]
    assert "^C" not in after_stop, after_stop  # the next prompt took no Ctrl-C left over
    assert t.exit() == 0


def test_what_is_typed_after_a_ctrl_c_right_after_enter_runs_next(term, cassandra, slow_ks):
    # Enter, Ctrl-C and the next statement come at once, as from a fast typist: the first stops
    # or never starts, the next one runs (the keys after the Ctrl-C are not eaten with it).
    t = term("-k", slow_ks, env={"PAGER": ""}, rows=24, cols=80)
    t.prompt()
    cassandra.faults.set("delay", -1, DELAY_MS)
    try:
        t.type(f"SELECT pk, ck FROM {slow_ks}.docs;\r\x03SELECT count(*) FROM {slow_ks}.docs WHERE pk = 1;\r")
        t.expect(STOPPED, timeout=120)
        t.expect(r"\n\s+10\n\n\(1 rows\)", timeout=120)  # pk 1 holds 10 of the 2,000 rows
    finally:
        cassandra.faults.clear()
    assert t.exit() == 0


@pytest.mark.parametrize("kind", ["select", "payload"])
def test_ctrl_c_stops_a_statement_at_the_classic_prompt(term, cassandra, slow_ks, kind):
    # cqlsh's own loop (--classic) at a terminal: Ctrl-C pressed while the statement waits on a late
    # page stops the statement, not the shell (a script's Ctrl-C ends the run, exit code 130).
    from waiting import wait_until

    t = term("-k", slow_ks, "--classic", env={"PAGER": ""}, rows=24, cols=80)
    prompt = rf"cqlsh:{slow_ks}> "
    t.expect(prompt)
    start = len(t.text)
    cassandra.faults.set("delay", -1, DELAY_MS)
    try:
        t.type(RIGHT_AFTER_ENTER[kind].format(ks=slow_ks))
        t.enter()
        wait_until(lambda: cassandra.faults.met().pages >= 1, "the statement's first page asked for")
        t.ctrl("c")
        t.expect(prompt, timeout=120)
    finally:
        cassandra.faults.clear()
    out = t.text[start:]
    assert t.child.isalive() and "Traceback" not in out, out[-3000:]
    if kind == "payload":  # cqlsh-ext's own reading says what it read before the press
        assert "payload query: " in out and "interrupted (Ctrl-C)" in out, out[-3000:]
    t.run(f"SELECT count(*) FROM {slow_ks}.docs WHERE pk = 1;", until=r"\(1 rows\)")
    assert t.exit() == 0


@pytest.mark.parametrize("classic", [True, False], ids=["classic", "default"])
def test_after_source_ctrl_c_still_stops_only_the_statement(term, cassandra, slow_ks, tmp_path, classic):
    # SOURCE's file runs as the shell that runs it: at the prompt, a person's. Once a file was
    # SOURCEd, a statement's Ctrl-C still stops the statement, never the shell (the sub-shell
    # used to make the rest of the session a script's run, ended by its next Ctrl-C).
    from waiting import wait_until

    script = tmp_path / "one.cql"
    script.write_text(f"SELECT count(*) FROM {slow_ks}.docs WHERE pk = 2;\n")
    t = term("-k", slow_ks, *(["--classic"] if classic else []), env={"PAGER": ""}, rows=24, cols=80)
    prompt = rf"cqlsh:{slow_ks}> " if classic else rf"cqlsh:{slow_ks}>"
    t.expect(prompt)
    t.run(f"SOURCE '{script}'", until=r"\(1 rows\)")
    t.expect(prompt)
    cassandra.faults.set("delay", -1, DELAY_MS)
    try:
        t.type(RIGHT_AFTER_ENTER["select"].format(ks=slow_ks))
        t.enter()
        wait_until(lambda: cassandra.faults.met().pages >= 1, "the statement's first page asked for")
        t.ctrl("c")
        t.expect(prompt, timeout=120)
    finally:
        cassandra.faults.clear()
    assert t.child.isalive()
    t.run(f"SELECT count(*) FROM {slow_ks}.docs WHERE pk = 1;", until=r"\(1 rows\)")
    assert t.exit() == 0
