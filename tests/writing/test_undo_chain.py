"""UNDO in a chain, through the real binary on the real server (issue 73, "What broke" 2): three
successive edits undone newest first come back to the original bytes (each older UNDO writing back
cells an UNDO of a later journal put back, known by its sealed journal's bytes and write time);
a stranger's write in between, of the same bytes or others, is left alone; an UNDO journal is
sealed and records each cell it wrote with its write time; an UNDO that writes nothing leaves no
journal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from shell_runner import ext, journal_of

CAP = 4 << 20


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("undo_chain")
    s = cassandra.session(name)
    s.execute("CREATE TABLE t (p int, c int, data blob, PRIMARY KEY (p, c))")
    s.shutdown()
    return name


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def zdoc(doc: dict[str, Any]) -> bytes:
    return zstandard.ZstdCompressor().compress(json.dumps(doc, separators=(",", ":")).encode())


def cells(session: Any, p: int) -> dict[int, tuple[bytes, int]]:
    return {row.c: (row.data, row.w) for row in
            session.execute("SELECT c, data, writetime(data) AS w FROM t WHERE p = %s", (p,))}


def edits(cassandra: Any, ks: str, home: Path, p: int, values: list[int]) -> list[str]:
    """One edit per value (data.a = value, on every row of partition p): their journals."""
    journals = []
    for value in values:
        statement = f"UPDATE t SET data.a = {value} WHERE p = {p} ALLOW FILTERING CONFIRM"
        done = ext(cassandra, home, "-e", statement, keyspace=ks)
        assert "3 rows written." in done.stdout, done.stdout + done.stderr
        journals.append(journal_of(done.stdout))
    return journals


def test_three_successive_edits_undone_newest_first_come_back_to_the_original_bytes(cassandra, ks, session,
                                                                                     tmp_path) -> None:
    for c in range(3):
        session.execute("INSERT INTO t (p, c, data) VALUES (1, %s, %s)", (c, zdoc({"a": 0, "c": c})))
    original = {c: data for c, (data, _) in cells(session, 1).items()}
    first, second, third = edits(cassandra, ks, tmp_path, 1, [1, 2, 3])
    newest = ext(cassandra, tmp_path, "-e", f"UNDO '{third}' CONFIRM", keyspace=ks)
    assert "3 rows written back." in newest.stdout.splitlines(), newest.stdout + newest.stderr
    undo_journal = Path(journal_of(newest.stdout))
    preview = ext(cassandra, tmp_path, "-e", f"UNDO '{second}'", keyspace=ks)
    assert ("3 still as the edit wrote them (3 as an UNDO of a later journal put them back); 0 changed since "
            "the edit (left alone)") in preview.stdout, preview.stdout
    for journal in (second, first):
        done = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks)
        assert "3 rows written back." in done.stdout.splitlines(), done.stdout + done.stderr
    assert {c: data for c, (data, _) in cells(session, 1).items()} == original  # every byte
    # The undo's own journal is sealed, and records each cell it wrote with the write time it wrote it
    # at (the one its UNDO of an older journal then found).
    lines = [json.loads(line) for line in undo_journal.read_text().splitlines()]
    assert lines[0]["kind"] == "undo" and all(len(line["mac"]) == 64 for line in lines)
    written = [line for line in lines if "key" in line]
    assert len(written) == 3 and all(isinstance(line["at"], int) and line["at"] == line["writetime"] + 1
                                     for line in written)


def test_a_strangers_write_in_between_is_left_alone(cassandra, ks, session, tmp_path) -> None:
    for c in range(3):
        session.execute("INSERT INTO t (p, c, data) VALUES (2, %s, %s)", (c, zdoc({"a": 0, "c": c})))
    original = {c: data for c, (data, _) in cells(session, 2).items()}
    first, second = edits(cassandra, ks, tmp_path, 2, [1, 2])
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{second}' CONFIRM", keyspace=ks)
    assert "3 rows written back." in undo.stdout.splitlines(), undo.stdout + undo.stderr
    now = cells(session, 2)
    # Another client: the same bytes written again at a later write time (c = 0), other bytes (c = 1).
    session.execute("UPDATE t SET data = %s WHERE p = 2 AND c = 0", (now[0][0],))
    session.execute("UPDATE t SET data = %s WHERE p = 2 AND c = 1", (zdoc({"a": 9, "c": 1}),))
    theirs = cells(session, 2)
    journals = set((tmp_path / ".cassandra" / "journal").iterdir())
    again = ext(cassandra, tmp_path, "-e", f"UNDO '{second}' CONFIRM",
                keyspace=ks)  # nothing of its own left to write
    # c = 0 and c = 2 hold what it writes back (the stranger wrote those very bytes to c = 0): done.
    assert "2 rows already restored (they hold the value from before the edit): nothing written to them.\n" \
        "0 rows written back, 1 changed since the edit: left alone." in again.stdout, again.stdout
    # It says first that the first UNDO undid this journal, and how to undo that one (its journal,
    # named by the first run's 'Undo the undo' line); of its own run, no journal and no hint.
    first_hint = next(line for line in undo.stdout.splitlines() if line.startswith("Undo the undo: "))
    hints = [line for line in again.stdout.splitlines() if line.startswith("Undo the undo: ")]
    assert again.stdout.startswith("undo: already undone: ") and hints == [first_hint], again.stdout
    assert "Journal: " not in again.stdout
    assert set((tmp_path / ".cassandra" / "journal").iterdir()) == journals  # an UNDO that wrote nothing
    older = ext(cassandra, tmp_path, "-e", f"UNDO '{first}' CONFIRM", keyspace=ks)
    said = older.stdout
    rewritten = "written again since the edit (the same bytes, a later write): left alone"
    assert f"p = 2, c = 0: {rewritten}" in said, said
    assert "p = 2, c = 1: changed since the edit: left alone" in said, said
    assert f"1 row written back, 1 changed since the edit: left alone, 1 {rewritten}." in said, said
    after = cells(session, 2)
    assert after[0] == theirs[0] and after[1] == theirs[1]  # the stranger's writes stand
    assert after[2][0] == original[2]  # the row nobody else wrote is back
