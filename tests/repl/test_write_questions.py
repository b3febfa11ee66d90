"""Every write of stored values asks the same way at the interactive prompt: UPDATE, UNDO and
COMPRESSION REWRITE preview, then ask `[y/N]`; a no writes nothing and says how to go ahead from a
script (CONFIRM), a yes writes as CONFIRM does. On a real terminal (pyte) against the real server."""

from __future__ import annotations

import gzip
import json
import re
import time

ROWS = 12
#: Rows an UNDO writes back, 8 at a time, each write 100 ms late: seconds of a bar to see.
UNDONE = 200


def _stored(cassandra, ks: str) -> dict[int, bytes]:  # type: ignore[no-untyped-def]
    session = cassandra.session(ks)
    try:
        return {row.id: bytes(row.data) for row in session.execute("SELECT id, data FROM docs")}
    finally:
        session.shutdown()


def test_rewrite_asks_at_the_prompt_as_update_and_undo_do(term, cassandra):
    import zstandard

    ks = cassandra.create_keyspace("rewrite_ask")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (id int PRIMARY KEY, data blob)")
    docs = {i: json.dumps({"id": i, "status": "NEW", "note": "x" * 200}).encode() for i in range(ROWS)}
    for i, doc in docs.items():
        session.execute("INSERT INTO docs (id, data) VALUES (%s, %s)", (i, gzip.compress(doc, mtime=0)))
    session.shutdown()
    before = _stored(cassandra, ks)
    statement = f"COMPRESSION REWRITE {ks}.docs.data AS 'zstd';"
    t = term(env={"PAGER": ""}, rows=40, cols=80)
    t.prompt()
    # No: nothing written, and how a script goes ahead.
    t.type(statement)
    t.enter()
    t.expect(rf"would rewrite {ROWS} rows")
    t.expect(rf"Rewrite {ROWS} rows\? \[y/N\] ")
    t.type("n")
    t.enter()
    t.expect(rf"Nothing written: add CONFIRM at the end of the statement to rewrite {ROWS} rows\.")
    t.prompt()
    assert _stored(cassandra, ks) == before
    # Yes: written as CONFIRM writes, journaled, undoable.
    t.type(statement)
    t.enter()
    t.expect(rf"Rewrite {ROWS} rows\? \[y/N\] ")
    t.type("y")
    t.enter()
    t.expect(r"Journal:\s+[~/]\S+")  # the path, whole (from ~ when too wide): its own line if need be
    t.expect(rf"{ROWS} rows rewritten")
    t.prompt()
    after = _stored(cassandra, ks)
    assert set(after) == set(docs)
    for i, doc in docs.items():
        assert after[i][:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame now
        assert zstandard.ZstdDecompressor().decompress(after[i]) == doc  # the payload kept byte for byte
    assert t.exit() == 0


def _bar_seen(t, bar: re.Pattern[str]) -> None:  # type: ignore[no-untyped-def]
    """Wait (with a deadline) for the bar drawn part way: some rows of all done."""
    deadline = time.monotonic() + 120
    while True:
        row = next((r for r in t.display() if bar.search(r)), None)
        if row is not None and 0 < int(bar.search(row).group(1).replace(",", "")) < UNDONE:
            return
        assert time.monotonic() < deadline, t.since()[-3000:]


def test_undo_shows_its_progress_as_a_bar_as_rewrite_does(term, cassandra):
    # Every write of the UNDO 100 ms late (the server's fault handler: a faults_* keyspace, a
    # *_slow table), on a 180-column screen: a line of rows done with a bar, redrawn in place,
    # cleared before a row's own line (whole, from its first column), before Ctrl-C's note and
    # before the closing line.
    ks = cassandra.create_keyspace("faults_undo_bar")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs_slow (id int PRIMARY KEY, data blob)")
    for i in range(UNDONE):
        session.execute("INSERT INTO docs_slow (id, data) VALUES (%s, %s)",
                        (i, gzip.compress(json.dumps({"id": i, "note": "y" * 100}).encode(), mtime=0)))
    t = term(env={"PAGER": ""}, rows=40, cols=180)
    t.prompt()
    t.run(f"COMPRESSION REWRITE {ks}.docs_slow.data AS 'zstd' CONFIRM;", until=rf"{UNDONE} rows rewritten")
    t.prompt()
    changed = (7, 77, 177)  # changed since the rewrite: the UNDO leaves them, a line each
    for i in changed:
        session.execute("UPDATE docs_slow SET data = %s WHERE id = %s", (b"changed", i))
    session.shutdown()
    bar = re.compile(r"^UNDO data: ([\d,]+) rows, .*\[[#.]{20}\]\s+~\d+ %.*\(Ctrl-C")
    cassandra.faults.set("delay", -1, 100, table=".*_slow")
    try:
        t.type("UNDO LAST CONFIRM;")
        t.enter()
        _bar_seen(t, bar)
        t.expect(rf"{UNDONE - len(changed)} rows written back", timeout=300)
        undo_id = t.expect(r"Undo the undo: UNDO '(\w+)' CONFIRM").group(1)
        t.prompt()
        screen = t.display()
        assert not [r for r in screen if bar.search(r)]  # cleared, not left above the closing line
        for i in changed:  # each row's line whole on its own row, never drawn over by the bar
            assert f"  id = {i}: changed since the rewrite: left alone" in screen, "\n".join(screen)
        t.ctrl("l")  # a clean screen for the next
        # The undo undone, stopped part way by Ctrl-C: its note replaces the bar on its row.
        t.type(f"UNDO '{undo_id}' CONFIRM;")
        t.enter()
        _bar_seen(t, bar)
        t.ctrl("c")
        t.expect(r"rows written back; stopped by Ctrl-C after the writes in flight", timeout=120)
    finally:
        cassandra.faults.clear()
    t.prompt()
    screen = t.display()
    assert not [r for r in screen if bar.search(r) or "UNDO data:" in r], "\n".join(screen)
    assert "Ctrl-C: stopping after the row being written (Ctrl-C again stops at once)" in screen
    assert t.exit() == 0
