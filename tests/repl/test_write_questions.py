"""Every write of stored values asks the same way at the interactive prompt: UPDATE, UNDO and
COMPRESSION REWRITE preview, then ask `[y/N]`; a no writes nothing and says how to go ahead from a
script (CONFIRM), a yes writes as CONFIRM does. On a real terminal (pyte) against the real server."""

from __future__ import annotations

import gzip
import json

ROWS = 12


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
    t.expect(r"Journal: /\S+")  # the path, wrapped at its slashes
    t.expect(rf"{ROWS} rows rewritten")
    t.prompt()
    after = _stored(cassandra, ks)
    assert set(after) == set(docs)
    for i, doc in docs.items():
        assert after[i][:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame now
        assert zstandard.ZstdDecompressor().decompress(after[i]) == doc  # the payload kept byte for byte
    assert t.exit() == 0
