"""A load's writes against the real server and the real binary (docs/load.md): over existing rows and
UNDO back to every original byte (TTLs too) with no new row left, a row changed since left alone;
kill -9 part-way, then COPY RESUME and UNDO exact; a value that does not come back equal refused
with nothing of its row written; a key loaded twice."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_runner import ext, journal_of, killed_part_way

from cqlsh_ext.encode.chain import encode
from cqlsh_ext.payload.engine import ValueEngine

CAP = 4 << 20


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_w")


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def shell(cassandra: Any, home: Path, ks: str, statement: str, ok: bool = True) -> Any:
    run = ext(cassandra, home, "-e", statement, keyspace=ks, timeout=600)
    if ok:
        assert run.returncode == 0, run.stdout + run.stderr
    return run


def rows_of(session: Any, table: str, columns: str = "data, note") -> dict[Any, tuple[Any, ...]]:
    found = session.execute(f"SELECT id, {columns} FROM {table}")
    return {r[0]: tuple(r[1:]) for r in found}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def doc(i: int, version: str) -> dict[str, Any]:
    return {"id": i, "status": version, "items": [{"sku": f"S{i}", "qty": i % 4}], "total": i * 1.5}


def test_a_load_over_existing_rows_then_undo_gives_every_byte_back_and_no_new_row(cassandra, ks, session,
                                                                                   tmp_path) -> None:
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob, note text)")
    insert = session.prepare("INSERT INTO t (id, data, note) VALUES (?, ?, ?)")
    for i in range(10):
        session.execute(insert, (i, encode("snappy", json.dumps(doc(i, "OLD")), CAP).value, f"old {i}"))
    session.execute("UPDATE t USING TTL 86400 SET data = %s WHERE id = 5",
                    (encode("gzip", json.dumps(doc(5, "OLD-TTL")), CAP).value,))
    original = rows_of(session, "t")
    original_ttl = session.execute("SELECT TTL(data) FROM t WHERE id = 5").one()[0]
    read_at = time.time()
    # Rows 5..9 overwritten, 10..14 new: plain documents, their chain named by ENCODE.
    path = write_jsonl(tmp_path / "orders.jsonl", [{"id": i, "data": doc(i, "NEW"), "note": f"new {i}"}
                                                    for i in range(5, 15)])
    statement = f"COPY t (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' AND TTL = 3600"
    preview = shell(cassandra, tmp_path, ks, statement).stdout
    assert "read 10 rows: 5 new, 5 overwritten, 0 already as loaded (not written), 0 refused" in preview, \
        preview
    assert "  data: 10 zstd>json" in preview and rows_of(session, "t") == original
    done = shell(cassandra, tmp_path, ks, statement + " CONFIRM").stdout
    assert "10 rows written (5 new, 5 overwritten)" in done, done
    journal = journal_of(done)
    engine = ValueEngine(cap=CAP)
    loaded = rows_of(session, "t")
    assert sorted(loaded) == list(range(15))
    for i in range(5, 15):
        data, note = loaded[i]
        view = engine.view(data)
        assert (view.label, json.loads(view.text), note) == ("zstd>json", doc(i, "NEW"), f"new {i}")
    assert all(loaded[i] == original[i] for i in range(5))
    assert 3590 <= session.execute("SELECT TTL(data) FROM t WHERE id = 5").one()[0] <= 3600
    # Another client writes row 7's note after the load: UNDO leaves that cell alone, and says so.
    session.execute("UPDATE t SET note = 'theirs' WHERE id = 7")
    undone = shell(cassandra, tmp_path, ks, f"UNDO '{journal}' CONFIRM").stdout
    assert "undo: 20 cells of" in undone, undone
    assert "id = 7 (note): changed since the load: left alone" in undone, undone
    assert "19 cells written back, 1 changed since the load: left alone." in undone, undone
    after = rows_of(session, "t")
    assert sorted(after) == list(range(10))  # the load's new rows are gone
    assert after == {**original, 7: (original[7][0], "theirs")}  # every other byte as it was
    ttl = session.execute("SELECT TTL(data) FROM t WHERE id = 5").one()[0]
    assert abs((time.time() + ttl) - (read_at + original_ttl)) <= 3  # its moment of expiry kept


def test_undo_stopped_by_a_bad_key_in_its_second_window_says_what_it_wrote_back(cassandra, ks, session,
                                                                               tmp_path) -> None:
    """A load's UNDO writes back a window of cells at a time: a key that is no int in its second
    window (a journal sealed by whoever holds the key) stops it there, the first window's rows gone
    as before the load, and it says so: never "nothing was written"."""
    from writing.journals import entry, key_of, lines_of, reseal

    session.execute("CREATE TABLE w (id int PRIMARY KEY, data blob)")
    path = write_jsonl(tmp_path / "many.jsonl", [{"id": i, "data": doc(i, "NEW")} for i in range(600)])
    done = shell(cassandra, tmp_path, ks, f"COPY w (id, data) FROM '{path}' WITH ENCODE data = 'gzip>json' "
                 "CONFIRM").stdout
    assert "600 rows written (600 new" in done, done
    journal = Path(journal_of(done))
    lines = lines_of(journal)
    order = [entry(line)["key"]["id"] for line in lines if b'"row": ' in line and b'"key": ' in line]
    first_window = list(dict.fromkeys(order))[:500]  # the undo's first window: the journal's first 500 cells
    bad = list(dict.fromkeys(order))[550]
    lines = [line.replace(f'"id": "{bad}"'.encode(), b'"id": "0000ff"') for line in lines]
    journal.write_bytes(reseal(lines, key_of(tmp_path)))
    undone = shell(cassandra, tmp_path, ks, f"UNDO '{journal}' CONFIRM", ok=False)
    said = undone.stdout + undone.stderr
    assert "nothing was written" not in said, said
    assert "the key's id is 3 bytes that are no int" in said, said
    assert "500 rows written back; stopped: " in said, said
    left = {row.id for row in session.execute("SELECT id FROM w")}
    assert left == set(range(600)) - {int(k, 16) for k in first_window}, said


def test_kill_9_part_way_then_resume_and_undo_are_exact(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE k (p int, c int, data blob, PRIMARY KEY (p, c))")
    insert = session.prepare("INSERT INTO k (p, c, data) VALUES (?, ?, ?)")
    for p in range(0, 60, 6):  # every sixth partition holds rows the load overwrites
        for c in range(10):
            old = encode("gzip", json.dumps({"p": p, "c": c, "v": "old"}), CAP).value
            session.execute(insert, (p, c, old))
    original = {(r.p, r.c): r.data for r in session.execute("SELECT p, c, data FROM k")}
    path = write_jsonl(tmp_path / "many.jsonl", [{"p": p, "c": c, "data": {"p": p, "c": c, "v": "new" * 20}}
                                                  for p in range(60) for c in range(10)])
    statement = f"COPY k (p, c, data) FROM '{path}' WITH ENCODE data = 'lz4>json' PACE 60 CONFIRM"
    journal = killed_part_way(cassandra, tmp_path, ks, statement, 100, "100 cells written (part-way)")
    written_before = journal.read_text().count('"applied": true')
    assert 100 <= written_before < 600
    preview = shell(cassandra, tmp_path, ks, f"COPY RESUME '{journal}'").stdout
    assert "ends at line" in preview and "Nothing written: add CONFIRM" in preview, preview
    resumed = shell(cassandra, tmp_path, ks, f"COPY RESUME '{journal}' CONFIRM").stdout
    assert f"Journal: {journal} (appended to)" in resumed, resumed
    after = {(r.p, r.c): r.data for r in session.execute("SELECT p, c, data FROM k")}
    assert len(after) == 600
    engine = ValueEngine(cap=CAP)
    assert all(json.loads(engine.view(v).text) == {"p": p, "c": c, "v": "new" * 20}
               for (p, c), v in after.items())
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    applied = {e["row"] for e in entries if e.get("applied") is True}
    sources = [e["source_row"] for e in entries if "key" in e and e["row"] in applied]
    assert sorted(sources) == list(range(600))  # every row of the file written once
    undone = shell(cassandra, tmp_path, ks, f"UNDO '{journal}' CONFIRM").stdout
    assert "600 rows written back." in undone and "left alone" not in undone, undone
    assert {(r.p, r.c): r.data for r in session.execute("SELECT p, c, data FROM k")} == original


def test_a_value_that_does_not_come_back_equal_refuses_its_row(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE r (id int PRIMARY KEY, data blob, note text)")
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        {"id": 1, "data": {"ok": True}, "note": "kept"},
        {"id": 2, "data": {}, "note": "an empty map is no record the display reads"},
        {"id": 3, "data": {"n": 2 ** 70}, "note": "past MessagePack's integers"},
        {"id": 4, "data": "not json", "note": "text"},
        {"id": 1, "data": {"ok": False}, "note": "the same key again"}])
    out = shell(cassandra, tmp_path, ks,
                f"COPY r FROM '{path}' WITH ENCODE data = 'zstd>msgpack' CONFIRM").stdout
    assert "1 row written (1 new, 0 overwritten), 0 already as loaded, 4 refused." in out, out
    refused = [line.strip() for line in out.splitlines() if line.startswith("  refused: ")]
    # (a record's document is encoded once the row's stored value is read: after the window's keys)
    assert {*refused} >= {
        "refused: mixed.jsonl line 2, id = 2: data: zstd>msgpack: not verified: the display reads it back as "
        "failed (as zstd>msgpack: msgpack: not a map or an array)",
        "refused: mixed.jsonl line 3, id = 3: data: zstd>msgpack: msgpack cannot hold this value (Integer "
        "value out of range)"}, out
    assert "id = 4: data: zstd>msgpack: the value is not JSON" in out, out
    assert "id = 1: its key is loaded twice" in out, out
    assert rows_of(session, "r") == {1: (encode("zstd>msgpack", '{"ok": true}', CAP).value, "kept")}
