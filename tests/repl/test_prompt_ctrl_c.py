"""Ctrl-C answers every question the interactive shell asks, at once, whatever came before: a
`[y/N]`, cqlsh's `---MORE---`, the pager and LOGIN's password prompt, each pressed 20 times in a
row on a real terminal (pyte, 80x24) while the test keeps every core busy (tools/under_load.py's
burners), the server being the real one.

Before a question the shell runs a payload query whose rows fill the screen while its scan is
still open, and its pager is quit: the pager saved the scan's Ctrl-C handler when it started and
put it back when it was quit, after the scan had ended, and the next question's first Ctrl-C only
noted a stop for that finished scan (the question waited for Enter). Each press waits for what
the program says next on the screen, never for a time; a press that is not answered fails at
the deadline.
"""

from __future__ import annotations

import re
import shutil

import pytest
from under_load import burning

from .test_ctrl_c import wait_for_row

#: Presses of each kind, one after the other in one shell.
TRIES = 20
#: A press is answered long before this (seconds), however loaded the machine: the deadline only
#: ends a test whose press was lost.
ANSWERED = 45


@pytest.fixture
def loaded():  # type: ignore[no-untyped-def]
    with burning():
        yield


def scan(ks: str) -> str:
    """A payload query that reads every row of `orders` (60: more than a 24-row screen holds)."""
    return f"SELECT id, payload.note FROM {ks}.orders WHERE payload.note = 'ring twice' ALLOW FILTERING;"


def pager_shows(t) -> None:  # type: ignore[no-untyped-def]
    """less's prompt on the bottom row."""
    wait_for_row(t, r"^:$", timeout=ANSWERED)


def quit_a_paged_scan(t, ks: str) -> None:  # type: ignore[no-untyped-def]
    t.type(scan(ks))
    t.enter()
    pager_shows(t)
    t.type("q")
    t.expect(r"payload query: 60 rows read, 60 matched", ANSWERED)  # its closing line, after the pager
    t.prompt()


def stored_note(cassandra, ks: str) -> str:  # type: ignore[no-untyped-def]
    import gzip
    import json

    session = cassandra.session()
    try:
        row = session.execute(f"SELECT payload FROM {ks}.orders WHERE id = 1").one()
    finally:
        session.shutdown()
    return str(json.loads(gzip.decompress(row.payload))["note"])


needs_less = pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")


@needs_less
def test_ctrl_c_answers_the_write_question_after_a_paged_scan_was_quit(term, cassandra, repl_ks, loaded):
    before = stored_note(cassandra, repl_ks)
    t = term(rows=24, cols=80)
    t.prompt()
    for _ in range(TRIES):
        quit_a_paged_scan(t, repl_ks)
        t.type(f"UPDATE {repl_ks}.orders SET payload.note = 'changed' WHERE id = 1;")
        t.enter()
        t.expect(r"Write 1 row\? \[y/N\] ", ANSWERED)
        t.ctrl("c")
        t.expect(r"Nothing written: add CONFIRM", ANSWERED)
        t.prompt()
    assert stored_note(cassandra, repl_ks) == before
    t.exit()


@needs_less
def test_ctrl_c_answers_the_password_prompt_after_a_paged_scan_was_quit(term, cassandra, repl_ks, loaded):
    t = term(rows=24, cols=80)
    t.prompt()
    for _ in range(TRIES):
        quit_a_paged_scan(t, repl_ks)
        t.type(f"LOGIN {cassandra.username}")
        t.enter()
        t.expect(r"Password: ", ANSWERED)
        t.ctrl("c")
        t.expect(r"Cancelled\.", ANSWERED)
        t.prompt()
    # Still the session it was: the login never happened.
    out = t.run(f"SELECT count(*) FROM {repl_ks}.orders;", until=r"\(1 rows\)")
    assert re.search(r"\b60\b", out)
    t.exit()


def test_ctrl_c_answers_more_inside_a_payload_query(term, repl_ks, loaded):
    # No pager installed: cqlsh's ---MORE--- pauses, while the scan holds its next page.
    t = term(env={"PAGER": "no-such-pager-anywhere"}, rows=24, cols=80)
    t.prompt()
    t.run("PAGING 20", until=r"Page size: 20")  # pages of 20 of the 60 rows: a pause after each
    for _ in range(TRIES):
        t.type(scan(repl_ks))
        t.enter()
        t.expect(r"---MORE---", ANSWERED)
        t.ctrl("c")
        t.expect(r"payload query: [\d,]+ rows? read, [\d,]+ matched; stopped by Ctrl-C", ANSWERED)
        t.expect(r"Cancelled\.", ANSWERED)
        t.prompt()
    t.exit()


@needs_less
def test_ctrl_c_quits_the_pager(term, repl_ks, loaded):
    t = term(rows=24, cols=80)  # the default pager
    t.prompt()
    for _ in range(TRIES):
        t.type(scan(repl_ks))
        t.enter()
        pager_shows(t)
        t.ctrl("c")
        t.expect(r"payload query: 60 rows read, 60 matched", ANSWERED)
        t.prompt()
        assert not [row for row in t.display() if row == ":"]  # less is gone from the screen
    t.exit()
