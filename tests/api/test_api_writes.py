"""The API's writes on the real server (docs/api.md, "Writes"): db.rewrite previews, then with
confirm=True rewrites a column's gzip'd JSON to zstd (journaled); db.undo previews, then writes the
original bytes back; db.resume goes on from a journal cut part-way; a tampered journal and a system
keyspace are refused with cqlsh_ext.Error; a write's lines are its own, never standard output's."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import zstandard

import cqlsh_ext

ROWS = 50
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def payload(n: int) -> dict[str, Any]:
    return {"order": n, "status": "PAID" if n % 2 else "NEW",
            "items": [{"sku": f"s{n}-{i}"} for i in range(3)]}


@pytest.fixture(scope="module")
def table(cassandra) -> tuple[str, Any]:
    ks = cassandra.create_keyspace("apiwrite")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE blobs (pk text PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO blobs (pk, data) VALUES (?, ?)")
    for n in range(ROWS):
        session.execute(insert, (f"k{n}", gzip.compress(json.dumps(payload(n)).encode(), mtime=0)))
    yield f"{ks}.blobs", session
    session.shutdown()


def stored(session: Any, name: str) -> dict[str, bytes]:
    return {row.pk: bytes(row.data) for row in session.execute(f"SELECT pk, data FROM {name}")}


def digest(values: dict[str, bytes]) -> str:
    return hashlib.md5(b"".join(k.encode() + v for k, v in sorted(values.items()))).hexdigest()


@pytest.fixture
def journals(db, tmp_path: Path, monkeypatch) -> Path:
    """The journal directory the shell would take from --journal-dir (cqlshrc's journal_dir)."""
    directory = tmp_path / "journal"
    monkeypatch.setattr(db.config.display, "journal_dir", str(directory))
    return directory


def test_rewrite_previews_writes_journaled_and_undo_restores_every_byte(db, table, journals) -> None:
    name, session = table
    original = stored(session, name)

    preview = db.rewrite(f"{name}.data", "zstd:3", pace=500)
    assert isinstance(preview, cqlsh_ext.RewriteResult)
    assert (preview.confirmed, preview.rows_read, preview.to_rewrite) == (False, ROWS, ROWS)
    assert preview.journal is None
    assert preview.bytes_before == sum(len(v) for v in original.values())
    assert "add CONFIRM" in preview.text
    assert digest(stored(session, name)) == digest(original)  # nothing written
    assert not journals.exists() or not any(journals.iterdir())

    events: list[dict[str, Any]] = []
    done = db.rewrite(f"{name}.data", "zstd:3", pace=500, confirm=True, progress=events.append)
    assert (done.confirmed, done.written, done.left_alone, done.complete) == (True, ROWS, 0, True)
    steps = [e for e in events if e.get("step")]  # the run's progress line, as events
    assert steps and all(e["reading"] == "REWRITE data" and "units/s" in e["step"] for e in steps), events
    assert done.stopped is None
    assert done.journal is not None and Path(done.journal).parent == journals
    now = stored(session, name)
    assert all(value.startswith(ZSTD_MAGIC) for value in now.values())
    assert {pk: json.loads(zstandard.ZstdDecompressor().decompress(value, max_output_size=1 << 20))
            for pk, value in now.items()} == {f"k{n}": payload(n) for n in range(ROWS)}
    assert done.bytes_before == sum(len(v) for v in original.values())
    assert done.bytes_after == sum(len(v) for v in now.values())

    looked = db.undo(done)  # the result stands for its journal
    assert (looked.confirmed, looked.rows, looked.still, looked.written) == (False, ROWS, ROWS, None)
    assert digest(stored(session, name)) == digest(now)  # nothing written

    undone = db.undo(done.journal, confirm=True)
    assert (undone.confirmed, undone.written, undone.left_alone, undone.stopped) == (True, ROWS, 0, None)
    assert undone.journal is not None and Path(undone.journal).exists()
    assert stored(session, name) == original  # the original bytes, exactly

    # A journal changed after it was sealed is refused, and nothing is written.
    lines = Path(done.journal).read_text().splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if i > 0 and '"old"' in line)
    lines[row] = lines[row].replace('"old"', '"old" ', 1)
    Path(done.journal).write_text("".join(lines))
    with pytest.raises(cqlsh_ext.Error, match=r"^undo: .*seal does not verify.*; nothing was written$"):
        db.undo(done.journal, confirm=True)
    assert stored(session, name) == original


@pytest.mark.parametrize(("column", "spec", "said"), [
    ("system_auth.roles.salted_hash", "zstd", "system_auth is a system keyspace: cqlsh-ext never writes"),
    ("SYSTEM_AUTH.roles.salted_hash", "zstd", "system_auth is a system keyspace: cqlsh-ext never writes"),
    ("{table}.data", "nozip:3", "nozip"),
    ("{table}.nope", "zstd", "has no column nope"),
])
def test_rewrite_refusals_are_one_line_errors(db, table, journals, column, spec, said) -> None:
    name, session = table
    before = digest(stored(session, name))
    with pytest.raises(cqlsh_ext.Error) as caught:
        db.rewrite(column.format(table=name), spec, confirm=True)
    text = str(caught.value)
    assert text.startswith("COMPRESSION REWRITE: ") and said in text and "\n" not in text, text
    assert digest(stored(session, name)) == before
    assert not journals.exists() or not any(journals.iterdir())


def test_resume_previews_then_goes_on_from_a_journal_cut_part_way(db, table, journals) -> None:
    name, session = table
    original = stored(session, name)
    done = db.rewrite(f"{name}.data", "zstd:3", confirm=True)
    assert (done.written, done.complete) == (ROWS, True)
    assert db.undo(done, confirm=True).written == ROWS  # gzip again; the rewrite's journal is kept
    # Cut as a kill leaves it: the head and its lines up to the fourth token range finished.
    assert done.journal is not None
    lines = Path(done.journal).read_text().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if '"range"' in line]
    Path(done.journal).write_text("".join(lines[:ends[3] + 1]))
    before = sum(1 for line in lines[1:ends[3] + 1] if json.loads(line).get("applied"))

    preview = db.resume(done.journal)
    assert isinstance(preview, cqlsh_ext.ResumeResult)
    assert (preview.confirmed, preview.ranges_finished, preview.rows_before, preview.journal) == \
        (False, 4, before, None)
    assert preview.request == done.request  # rebuilt from the journal's sealed request
    assert preview.ranges == len(ends) and 0 < preview.to_rewrite < ROWS and preview.already == 0
    assert "Nothing written: add CONFIRM" in preview.text
    assert stored(session, name) == original  # nothing written
    assert preview.to_dict()["resumed"] == {"request": "resume", "path": done.journal, "confirm": False}

    went_on = db.resume(done.journal, confirm=True)
    assert (went_on.confirmed, went_on.written, went_on.left_alone, went_on.complete, went_on.journal) == \
        (True, preview.to_rewrite, 0, True, done.journal)  # appended to the same journal
    now = stored(session, name)
    changed = {pk for pk in now if now[pk] != original[pk]}
    assert len(changed) == preview.to_rewrite and all(now[pk].startswith(ZSTD_MAGIC) for pk in changed)
    finished = db.resume(done, confirm=True)  # nothing left: nothing read or written
    assert (finished.ranges_finished, finished.rows_read, finished.written) == (len(ends), 0, 0)
    db.undo(done.journal, confirm=True)
    assert stored(session, name) == original


def test_resume_of_what_is_no_rewrite_journal_is_one_line(db, table, journals, tmp_path: Path) -> None:
    with pytest.raises(cqlsh_ext.Error, match=r"^COMPRESSION REWRITE: .*nothing was written$"):
        db.resume(tmp_path / "nope.jsonl")


def test_a_writes_lines_are_its_own_never_the_process_standard_output(db, table, journals, capsys) -> None:
    """Another thread printing while db.rewrite runs: its lines stay on standard output, the
    rewrite's are the result's alone (no redirect of the process's stdout)."""
    name, _ = table
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            print("chatter")
            stop.wait(0.001)

    thread = threading.Thread(target=chatter)
    thread.start()
    try:
        preview = db.rewrite(f"{name}.data", "zstd:3")
    finally:
        stop.set()
        thread.join()
    out, err = capsys.readouterr()
    assert "would rewrite" in preview.text and "chatter" not in preview.text, preview.text
    assert out.count("chatter") == len(out.splitlines()) > 0 and not err, (out, err)


def test_an_edit_previews_writes_journaled_and_undo_restores_every_byte(db, table, journals) -> None:
    """db.edit: UPDATE of a path inside the gzip'd JSON previews (its changes as data, nothing
    written), then with confirm=True writes the row in its own form and journals it; db.undo
    writes the original bytes back. A DELETE of a path the same way; CQL's own statements are
    refused there, and an edit through db.execute."""
    name, session = table
    original = stored(session, name)
    statement = f"UPDATE {name} SET data.status = 'CANCELLED', data.items[0].sku = 'X' WHERE pk = 'k3'"

    preview = db.edit(statement)
    assert isinstance(preview, cqlsh_ext.EditResult)
    assert (preview.confirmed, preview.found, preview.to_change, preview.unchanged, preview.refused) == \
        (False, 1, 1, 0, {})
    (change,) = preview.changes
    assert change.key == {"pk": "k3"}
    assert change.changes == [{"path": "data.status", "old": "PAID", "new": "CANCELLED"},
                              {"path": "data.items[0].sku", "old": "s3-0", "new": "X"}]
    assert preview.written is None and preview.journal is None and "add CONFIRM" in preview.text
    assert stored(session, name) == original  # nothing written

    done = db.edit(statement, confirm=True)
    assert (done.confirmed, done.written, done.left_alone, done.stopped) == (True, 1, 0, None)
    assert done.journal is not None and Path(done.journal).parent == journals
    now = stored(session, name)
    assert {pk for pk in now if now[pk] != original[pk]} == {"k3"}
    edited = json.loads(gzip.decompress(now["k3"]))
    assert edited == {**payload(3), "status": "CANCELLED", "items": [{"sku": "X"}, *payload(3)["items"][1:]]}
    assert done.to_dict()["changes"][0]["key"] == {"pk": "k3"}

    removed = db.edit(f"DELETE data.items FROM {name} WHERE pk = 'k4' CONFIRM")
    assert removed.written == 1 and removed.changes[0].changes[0]["removed"] is True
    assert "items" not in json.loads(gzip.decompress(stored(session, name)["k4"]))

    assert db.undo(removed.journal, confirm=True).written == 1
    assert db.undo(done.journal, confirm=True).written == 1
    assert stored(session, name) == original  # the original bytes, exactly

    with pytest.raises(cqlsh_ext.Error, match=r"^edit: db.edit takes UPDATE \.\.\. SET path = value"):
        db.edit(f"UPDATE {name} SET data = 0x00 WHERE pk = 'k3'")
    with pytest.raises(cqlsh_ext.Error, match=r"^db.execute sends CQL as written; this UPDATE names payload "
                                              r"paths: db.edit\(statement\)"):
        db.execute(statement)
    with pytest.raises(cqlsh_ext.Error, match=r"^edit: .*nothing was written$"):
        db.edit(f"UPDATE {name} SET data.status = 'X' WHERE data.status = 'PAID'")
    assert stored(session, name) == original


def test_a_keyspace_created_quoted_in_capitals_is_an_application_s(db, cassandra, journals) -> None:
    """The server spells its own keyspaces in lower case (system_schema.keyspaces): "System_words",
    created quoted, is another keyspace, an application's, and an edit writes it as any other."""
    session = cassandra.session()
    try:
        session.execute("CREATE KEYSPACE \"System_words\" WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute('CREATE TABLE "System_words".blobs (pk text PRIMARY KEY, data blob)')
        session.execute('INSERT INTO "System_words".blobs (pk, data) VALUES (%s, %s)',
                        ("k1", gzip.compress(json.dumps(payload(1)).encode(), mtime=0)))
        named = {row.keyspace_name
                 for row in session.execute("SELECT keyspace_name FROM system_schema.keyspaces")}
        assert "System_words" in named and "system_words" not in named
        done = db.edit('UPDATE "System_words".blobs SET data.status = \'CANCELLED\' WHERE pk = \'k1\'',
                       confirm=True)
        assert (done.confirmed, done.written) == (True, 1)
        row = session.execute('SELECT data FROM "System_words".blobs WHERE pk = \'k1\'').one()
        assert json.loads(gzip.decompress(row.data))["status"] == "CANCELLED"
    finally:
        session.execute('DROP KEYSPACE IF EXISTS "System_words"')
        session.shutdown()


def test_an_edit_with_parameters_previews_writes_and_undo_restores_every_byte(db, table, journals) -> None:
    """db.edit(statement, params): `?` markers in the SET values and in the WHERE (its server part,
    pk, and its payload condition), bound as db.query binds them: a value with quotes stays a
    value, a number is written as the same number written in the statement would be; `:name`
    markers the same. Previewed, confirmed, undone to the original bytes."""
    from decimal import Decimal

    name, session = table
    original = stored(session, name)
    statement = f"UPDATE {name} SET data.status = ?, data.items[0] = ?, data.total = ? WHERE pk = ? " \
        "AND data.status = ?"
    params = ["it's 'CANCELLED'", {"sku": "X-1", "qty": 2}, Decimal("737.26"), "k5", "PAID"]
    preview = db.edit(statement, params)
    assert (preview.confirmed, preview.found, preview.to_change, preview.refused) == (False, 1, 1, {})
    (change,) = preview.changes
    assert change.key == {"pk": "k5"}
    assert change.changes == [
        {"path": "data.status", "old": "PAID", "new": "it's 'CANCELLED'"},
        {"path": "data.items[0]", "old": {"sku": "s5-0"}, "new": {"sku": "X-1", "qty": 2}},
        {"path": "data.total", "old": None, "new": 737.26, "added": True}]
    assert stored(session, name) == original  # nothing written
    # The payload condition's parameter filters: k4 is NEW, so nothing is found.
    assert db.edit(statement, [*params[:3], "k4", "PAID"]).found == 0

    done = db.edit(statement, params, confirm=True)
    assert (done.confirmed, done.written, done.left_alone, done.stopped) == (True, 1, 0, None)
    text = gzip.decompress(stored(session, name)["k5"])
    items = [{"sku": "X-1", "qty": 2}, *payload(5)["items"][1:]]
    assert json.loads(text) == {**payload(5), "status": "it's 'CANCELLED'", "items": items, "total": 737.26}
    assert b"737.26" in text  # as written, not the double's 737.25999...

    removed = db.edit(f"DELETE data.items FROM {name} WHERE pk = :key AND data.order = :order CONFIRM",
                      {"key": "k6", "order": 6})
    assert removed.written == 1 and "items" not in json.loads(gzip.decompress(stored(session, name)["k6"]))
    assert db.undo(removed.journal, confirm=True).written == 1
    assert db.undo(done.journal, confirm=True).written == 1
    assert stored(session, name) == original  # the original bytes, exactly

    refusals = [
        ([], "the statement has 5 markers (?), 0 values given"),
        ([*params[:3], 5, "PAID"], "parameter 4 (pk) is text: it takes a str, not int 5"),
        ([b"X", *params[1:]], "parameter 1 (data.status =): an edit's value is a str, an int, a float, a "
                              "Decimal, a bool, None, a dict or a list (a JSON value), not bytes"),
        ([float("nan"), *params[1:]], "parameter 1 (data.status =): nan is no JSON number"),
        ([*params[:4], b"PAID"], "parameter 5 (data.status =): a payload condition compares with a str, an "
                                 "int, a float, a Decimal, a bool or None, not bytes"),
    ]
    for wrong, why in refusals:
        with pytest.raises(cqlsh_ext.Error, match=f"^{re.escape(f'edit: {why}; nothing was written')}$"):
            db.edit(statement, wrong, confirm=True)
    assert stored(session, name) == original  # nothing was written
