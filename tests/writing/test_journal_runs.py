"""One live run per journal, through the real binary on the real server (issue 73, "What broke" 1):
RESUME and UNDO started beside a live COMPRESSION REWRITE are refused in one line naming the run,
the journal still verifies, and the run stopped with a real Ctrl-C, RESUMEd and UNDOne puts every
byte back, its closing figures counted from what it wrote; a killed run's journal is taken over.
And the lines that misled (issue 73, 7): an UNDO's preview of a deleted row says no conditional
caveat, a row whose TTL ran out is said so (not "changed"), and RESUME of a run undone since says
its rows were written back, not "never applied"."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_runner import CQLSH_EXT, ext, isolated_env, journal_of, script

from cqlsh_ext.encode.chain import encode

from .journals import entry, key_of, lines_of, reseal, until

CAP = 4 << 20
DOC = {"status": "NEW", "items": [{"sku": "A1", "qty": 1}], "note": "call first " * 10}


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("journal_runs")


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def table(session: Any, name: str, rows: dict[int, bytes], ttl: int | None = None) -> None:
    session.execute(f"CREATE TABLE IF NOT EXISTS {name} (id int PRIMARY KEY, data blob)")
    using = f" USING TTL {ttl}" if ttl else ""
    for key, value in rows.items():
        session.execute(f"INSERT INTO {name} (id, data) VALUES (%s, %s){using}", (key, value))


def values(session: Any, name: str) -> dict[int, bytes]:
    return {row.id: row.data for row in session.execute(f"SELECT id, data FROM {name}")}


def started(cassandra: Any, ks: str, home: Path, statement: str) -> subprocess.Popen[str]:
    """The binary running `statement` (-e) in the background, its lines to read."""
    return subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, "-e", statement],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=isolated_env(home))


def orders(n: int, codec: str = "gzip") -> dict[int, bytes]:
    return {i: encode(codec, json.dumps({**DOC, "n": i}), CAP).value for i in range(n)}


def test_resume_and_undo_beside_a_live_rewrite_are_refused_and_undo_afterwards_is_complete(
        cassandra, ks, session, tmp_path) -> None:
    rows = 300
    original = orders(rows)
    table(session, "live", original)
    statement = f"COMPRESSION REWRITE {ks}.live.data AS 'zstd' PACE 10 CONFIRM"  # 30 s or more
    child = started(cassandra, ks, tmp_path, statement)
    try:
        assert child.stdout is not None
        journal = journal_of(child.stdout.readline())
        until(lambda: journal.read_text().count('"applied": true') >= 5, "rows written by the rewrite")
        ident = journal.name.rsplit("-", 1)[1].removesuffix(".jsonl")
        beside = ext(cassandra, tmp_path, "-e",
                     script(f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM", f"UNDO '{journal}' CONFIRM",
                            f"UNDO '{ident}'", "UNDO LAST CONFIRM", "COMPRESSION REWRITE RESUME LAST"),
                     keyspace=ks, timeout=600)
        assert child.poll() is None, "the rewrite ended before the statements beside it were refused"
    except BaseException:
        child.kill()
        raise
    refusals = [line for line in beside.stderr.splitlines() if "in use by a live run" in line]
    assert len(refusals) == 5 and beside.returncode == 2, beside.stdout + beside.stderr
    named = (f"{journal} is in use by a live run (COMPRESSION REWRITE, pid {child.pid} on "
             f"{socket.gethostname()}, started ")
    ends = "UTC): refused while it runs (let it finish, or stop it first); nothing was written"
    for line in refusals:
        assert named in line and line.endswith(ends), line
    assert "Journal: " not in beside.stdout and "rows of" not in beside.stdout  # nothing read or written
    # The rewrite goes on unharmed; stopped by a real Ctrl-C, it says so.
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 130, err  # interrupted (common/exits.py), its Resume line printed
    stopped = r"\d+ of 16 token ranges finished; stopped by Ctrl-C after the writes in flight"
    assert re.search(stopped, out), out
    assert f"Resume: COMPRESSION REWRITE RESUME '{ident}' CONFIRM" in out.splitlines(), out
    # One chain of MACs: the journal verifies, RESUME (by its id) goes on with it and finishes.
    resumed = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{ident}' CONFIRM", keyspace=ks,
                  timeout=600)
    assert resumed.returncode == 0 and f"Journal: {journal} (appended to)" in resumed.stdout, \
        resumed.stdout + resumed.stderr
    assert not (journal.parent / f".{journal.name}.run").exists()  # the run file goes with the run
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{ident}' CONFIRM", keyspace=ks, timeout=600)
    assert undo.returncode == 0, undo.stderr
    closing = [line for line in undo.stdout.splitlines() if "written back" in line]
    assert closing == [f"{rows} rows written back."], undo.stdout  # counted from what it wrote: no stop
    assert values(session, "live") == original  # every byte


def test_a_killed_runs_journal_is_taken_over(cassandra, ks, session, tmp_path) -> None:
    """kill -9 leaves the run file naming a process that is gone, and no lock: RESUME takes the
    journal over, and its own run file goes when it ends."""
    original = orders(120)
    table(session, "killed_run", original)
    statement = f"COMPRESSION REWRITE {ks}.killed_run.data AS 'zstd' PACE 20 CONFIRM"
    child = started(cassandra, ks, tmp_path, statement)
    assert child.stdout is not None
    journal = journal_of(child.stdout.readline())
    until(lambda: journal.read_text().count('"applied": true') >= 5, "rows written by the rewrite")
    child.send_signal(signal.SIGKILL)
    child.communicate()
    left = journal.parent / f".{journal.name}.run"
    assert json.loads(left.read_text())["pid"] == child.pid  # the dead run's name, left behind
    resumed = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM", keyspace=ks,
                  timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "ends at line" in resumed.stdout and "without its closing line" in resumed.stdout  # said first
    assert not left.exists()
    undo = ext(cassandra, tmp_path, "-e", "UNDO LAST CONFIRM", keyspace=ks, timeout=600)
    assert f"undo: LAST is {journal}" in undo.stdout and "120 rows written back." in undo.stdout, \
        undo.stdout + undo.stderr
    assert values(session, "killed_run") == original


# ------------------------------------------------------------------ lines that misled


def test_an_undo_of_a_deleted_row_says_no_conditional_caveat(cassandra, ks, session, tmp_path) -> None:
    table(session, "deleted", orders(2))
    edit = ext(cassandra, tmp_path, "-e",
               "UPDATE deleted SET data.status = 'DONE' WHERE id IN (0, 1) CONFIRM", keyspace=ks, timeout=600)
    assert "2 rows written." in edit.stdout, edit.stdout + edit.stderr
    session.execute("DELETE FROM deleted WHERE id = 1")
    preview = ext(cassandra, tmp_path, "-e", f"UNDO '{journal_of(edit.stdout)}'", keyspace=ks, timeout=600)
    assert "1 still as the edit wrote them; 1 changed since the edit (left alone)" in preview.stdout, \
        preview.stdout
    assert "written on a condition" not in preview.stdout  # the rows were written at a timestamp


def test_a_row_whose_ttl_ran_out_is_said_so_and_no_journal_is_left(cassandra, ks, session, tmp_path) -> None:
    table(session, "expiring", orders(1), ttl=20)
    edit = ext(cassandra, tmp_path, "-e", "UPDATE expiring SET data.status = 'DONE' WHERE id = 0 CONFIRM",
               keyspace=ks, timeout=600)
    assert "1 row written." in edit.stdout, edit.stdout + edit.stderr
    until(lambda: session.execute("SELECT data FROM expiring WHERE id = 0").one() is None, "the row expired",
          120)
    journals = set((tmp_path / ".cassandra" / "journal").iterdir())
    said = ext(cassandra, tmp_path, "-e",
               script(f"UNDO '{journal_of(edit.stdout)}'", f"UNDO '{journal_of(edit.stdout)}' CONFIRM"),
               keyspace=ks, timeout=600)
    assert ("0 still as the edit wrote them; 0 changed since the edit (left alone), 1 whose TTL ran out "
            "since (nothing to write back)") in said.stdout, said.stdout
    assert "id = 0: its TTL ran out since the edit: nothing to write back" in said.stdout
    assert "0 rows written back, 1 whose TTL ran out since the edit: nothing to write back." in said.stdout
    assert "changed since" not in said.stdout.split("(left alone)", 1)[1], said.stdout
    assert "Undo the undo" not in said.stdout
    assert set((tmp_path / ".cassandra" / "journal").iterdir()) == journals  # an UNDO that wrote nothing


def test_resume_of_a_run_undone_since_says_its_rows_were_written_back(cassandra, ks, session,
                                                                       tmp_path) -> None:
    """A rewrite's journal as a kill leaves it (three rows without their outcome, no range
    finished, no closing line: what a kill -9 mid-write leaves, resealed with the user's key),
    undone with CUT; RESUME then finds those rows holding the old bytes at another write time than
    the one read: written again since (by the UNDO), not "never applied"."""
    original = orders(20)
    table(session, "undone_run", original)
    done = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE {ks}.undone_run.data AS 'zstd' CONFIRM",
               keyspace=ks, timeout=600)
    assert "20 rows rewritten" in done.stdout, done.stdout + done.stderr
    journal = journal_of(done.stdout)
    lines = lines_of(journal)
    flying = [entry(line)["row"] for line in lines if "key" in entry(line)][:3]
    killed = [line for line in lines[1:] if "range" not in entry(line) and "closed" not in entry(line)
              and not ("applied" in entry(line) and entry(line)["row"] in flying)]
    journal.write_bytes(reseal([lines[0], *killed], key_of(tmp_path)))
    refused = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks, timeout=600)
    assert refused.returncode == 2 and f"{journal} has no closing line" in refused.stderr, refused.stderr
    assert values(session, "undone_run") != original
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CUT CONFIRM", keyspace=ks, timeout=600)
    assert "20 rows written back." in undo.stdout, undo.stdout + undo.stderr
    assert values(session, "undone_run") == original
    resume = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{journal}'", keyspace=ks,
                 timeout=600)
    said = " ".join(resume.stdout.split())
    assert ("3 rows with no outcome in the journal (in flight at the kill), looked up now: 3 hold the old "
            "bytes written again since (by an UNDO, or another client: rewritten with the token ranges "
            "left)") in said, said
    assert "never applied" not in said
