"""UNDO LAST in a journal directory other sessions of the user share (issue 96, item 8): it took the
newest journal there, another session's edit written a moment later; it takes this session's own
newest, and a session that wrote none says whose it took. Driven as a person does: the shell in a
pty at 80 columns, another session's edit run with -e meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import snappy
from shell_runner import CQLSH_EXT, run


def _status(cassandra, keyspace: str, key: str) -> str:
    session = cassandra.session(keyspace)
    try:
        stored = session.execute(f"SELECT data FROM table_with_compressed_json WHERE id = {key}").one().data
    finally:
        session.shutdown()
    return json.loads(snappy.uncompress(stored))["status"]


def test_undo_last_takes_this_session_s_newest_journal_and_says_whose(term, cassandra, demo_ks, home,
                                                                      tmp_path: Path):
    journals = tmp_path / "journals"
    session = cassandra.session(demo_ks)
    try:
        one, two = (str(r.id) for r in session.execute("SELECT id FROM table_with_compressed_json LIMIT 2"))
    finally:
        session.shutdown()
    before = _status(cassandra, demo_ks, one), _status(cassandra, demo_ks, two)
    t = term("-k", demo_ks, "--journal-dir", str(journals), env={"PAGER": ""}, rows=50, cols=80)
    t.prompt()
    t.run(f"UPDATE table_with_compressed_json SET data.status = 'MINE' WHERE id = {one} CONFIRM;",
          until=r"UNDO\s+'[0-9a-f]{8}'\s+CONFIRM")
    t.prompt()
    # Another session of the same user, sharing the directory, edits another order a moment later.
    shared = [cassandra.host, str(cassandra.port), "-k", demo_ks, "--journal-dir", str(journals)]
    other = run(CQLSH_EXT, [*shared, "-e", "UPDATE table_with_compressed_json SET data.status = 'THEIRS' "
                                           f"WHERE id = {two} CONFIRM"], home)
    assert other.returncode == 0, other.stderr
    assert _status(cassandra, demo_ks, two) == "THEIRS"
    shown = t.run("UNDO LAST CONFIRM;", until=r"written\s+back")
    said = " ".join(shown.split())
    assert "(this session's newest)" in said, said
    t.prompt()
    t.exit()
    # This session's edit undone; the other session's left as it wrote it.
    assert _status(cassandra, demo_ks, one) == before[0]
    assert _status(cassandra, demo_ks, two) == "THEIRS"
    # A session that wrote none (a script) takes the user's newest there, and says it is not its own.
    script = run(CQLSH_EXT, [*shared, "-e", "UNDO LAST"], home)
    assert "not this session's: this session wrote none; your newest in the directory, written " in \
        " ".join((script.stdout + script.stderr).split())
