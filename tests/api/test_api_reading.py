"""How a program reads, on the real server: a payload condition's parameter, a paging state
resumed on another connection giving exactly the rest, per-call page size, timeout and
consistency; the edges: an empty answer, close() at once, progress ending with done: 1.0, a write
refused in favour of db.execute, CQL the lexer does not read (sent as written), and Ctrl-C at 20
points of readings in a subprocess, never lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from orders import take

import cqlsh_ext

from .conftest import Orders

pytestmark = pytest.mark.server

HERE = Path(__file__).resolve().parent


def keys(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(row["pk"], row["ck"]) for row in rows]


def test_a_payload_condition_s_parameter_is_its_literal(db, orders: Orders):
    """`data.status = ?` bound to 'PAID' answers what the literal does; by name too; a bytes value
    there is refused in one line."""
    literal = list(db.query(f"SELECT pk, ck FROM {orders.name} WHERE pk IN ('p0', 'p1') "
                            "AND data.status = 'PAID' ALLOW FILTERING"))
    bound = list(db.query(f"SELECT pk, ck FROM {orders.name} WHERE pk IN (?, ?) AND data.status = ? "
                          "ALLOW FILTERING", ["p0", "p1", "PAID"]))
    named = list(db.query(f"SELECT pk, ck FROM {orders.name} WHERE pk IN (:a, :b) AND data.status = :s "
                          "ALLOW FILTERING", {"a": "p0", "b": "p1", "s": "PAID"}))
    truth = sorted((row["pk"], row["ck"]) for row, doc in orders.rows
                   if row["pk"] in ("p0", "p1") and doc is not None and take(doc, ("status",)) == "PAID")
    assert sorted(keys(literal)) == sorted(keys(bound)) == sorted(keys(named)) == truth and truth
    with pytest.raises(cqlsh_ext.Error, match=r"^parameter 3 \(data.status =\): a payload condition "
                                              r"compares with a str, an int, a float, a Decimal, a bool or "
                                              r"None, not bytes$"):
        db.query(f"SELECT pk FROM {orders.name} WHERE pk IN (?, ?) AND data.status = ? ALLOW FILTERING",
                 ["p0", "p1", b"PAID"])


@pytest.mark.parametrize("statement, params", [
    ("SELECT pk, ck, data.status FROM {t}", None),  # the server's pages, a path read from each row
    ("SELECT pk, ck, data.status FROM {t} WHERE pk IN ('p0', 'p1', 'p2') AND data.status IN (?, ?) "
     "ALLOW FILTERING", ["PAID", "NEW"]),  # one stream of the named partitions, filtered here
    ("SELECT pk, ck FROM {t} WHERE ck > ? ALLOW FILTERING", [3]),  # as written: the server's
])
def test_a_paging_state_resumed_on_another_connection_gives_exactly_the_rest(
        cassandra, db, orders: Orders, cqlshrc: str, statement: str, params: Any):
    text = statement.format(t=orders.name)
    whole = keys(list(db.query(text, params, page_size=7)))
    assert len(whole) > 12
    for cut in (1, 7, 12):  # inside a page, at a page's end, inside the next one
        answer = db.query(text, params, page_size=7)
        first = [row for _, row in zip(range(cut), answer, strict=False)]
        answer.close()
        state = answer.paging_state
        assert isinstance(state, bytes) and answer.notes["stopped"] == "output closed"
        with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                               password=cassandra.password, cqlshrc=cqlshrc) as other:
            rest = other.query(text, params, page_size=5, paging_state=state)
            assert keys(first) + keys(list(rest)) == whole, cut
            assert rest.paging_state is None  # read to its end: nothing left
    with pytest.raises(cqlsh_ext.Error, match="another statement's"):
        db.query(text + " LIMIT 3", params, paging_state=state)


def test_a_paging_state_of_a_read_by_token_ranges_is_refused_with_why(db, orders: Orders):
    answer = db.query(f"SELECT pk, ck FROM {orders.name} WHERE data.status = 'PAID' ALLOW FILTERING")
    next(iter(answer))
    answer.close()
    with pytest.raises(cqlsh_ext.Error, match=r"^this answer cannot be gone on with: the whole table is read "
                                              r"by token ranges at once"):
        answer.paging_state  # noqa: B018


def test_per_call_page_size_timeout_and_consistency(db, orders: Orders):
    answer = db.query(f"SELECT pk, ck FROM {orders.name}", page_size=11, timeout=30, consistency="LOCAL_ONE")
    sizes = [len(batch) for batch in answer.to_reader()]
    assert sizes[0] == 11 and sum(sizes) == len(orders.rows)
    with pytest.raises(cqlsh_ext.Error, match=r"^consistency: unknown level 'MOST'"):
        db.query(f"SELECT pk FROM {orders.name}", consistency="MOST")
    with pytest.raises(cqlsh_ext.Error, match=r"^page_size takes a positive whole number of rows, not 0$"):
        db.query(f"SELECT pk FROM {orders.name}", page_size=0)
    with pytest.raises(cqlsh_ext.Error, match="Cannot achieve consistency level THREE"):
        list(db.query(f"SELECT pk FROM {orders.name}", consistency="THREE"))


def test_empty_answers_iterate_to_nothing(db, orders: Orders):
    for text in (f"SELECT pk, ck, data FROM {orders.name} WHERE pk = 'nope'",
                 f"SELECT pk, data.status FROM {orders.name} WHERE pk = 'nope'",
                 f"SELECT pk FROM {orders.name} WHERE pk = 'p0' AND data.status = 'NOPE' ALLOW FILTERING"):
        assert list(db.query(text)) == []
        table = db.query(text).to_arrow()
        assert table.num_rows == 0 and table.column_names[0] == "pk"
        assert db.query(text).to_pandas().empty


def test_close_stops_at_once(db, orders: Orders):
    answer = db.query(f"SELECT pk, ck, data.status FROM {orders.name}", page_size=50)
    rows = iter(answer)
    taken = [next(rows) for _ in range(3)]
    answer.close()
    assert list(rows) == []  # not the 47 rows left in the batch
    assert len(taken) == 3 and answer.notes["stopped"] == "output closed"


@pytest.mark.parametrize("statement", [
    "SELECT pk, ck FROM {t}",  # as written
    "SELECT pk, data.status FROM {t}",  # the server's pages, paths read
    "SELECT pk, ck FROM {t} WHERE data.status = 'PAID' ALLOW FILTERING",  # a scan by token ranges
])
def test_progress_events_of_every_reading_end_with_done(db, orders: Orders, statement: str):
    events: list[dict[str, Any]] = []
    answer = db.query(statement.format(t=orders.name), progress=events.append)
    rows = len(list(answer))
    assert events, "no progress event"
    last = events[-1]
    assert last["done"] == 1.0 and last["stopped"] is None and last["matched"] == rows
    assert last["rows"] == len(orders.rows)
    reported: list[dict[str, Any]] = []
    db.stats(orders.name, progress=reported.append)
    assert reported[-1]["done"] == 1.0


def test_a_write_is_refused_for_db_execute(cassandra, db, orders: Orders):
    before = len(list(db.query(f"SELECT pk FROM {orders.name} WHERE pk = 'w'")))
    with pytest.raises(cqlsh_ext.Error, match=r"^db.query reads; INSERT writes: "
                                              r"db.execute\(statement, params\) runs it$"):
        db.query(f"INSERT INTO {orders.name} (pk, ck, data) VALUES ('w', 1, 0x00)")
    assert len(list(db.query(f"SELECT pk FROM {orders.name} WHERE pk = 'w'"))) == before == 0
    with pytest.raises(cqlsh_ext.Error, match=r"^db.execute writes; SELECT reads"):
        db.execute(f"SELECT pk FROM {orders.name}")
    applied = db.execute(f"INSERT INTO {orders.name} (pk, ck, data) VALUES (?, ?, ?) IF NOT EXISTS",
                         ["w", 1, b"\x00"])
    assert applied.applied is True
    again = db.execute(f"INSERT INTO {orders.name} (pk, ck, data) VALUES (?, ?, ?) IF NOT EXISTS",
                       ["w", 1, b"\x01"])
    assert again.applied is False and again.rows[0]["data"] == b"\x00"
    db.execute(f"DELETE FROM {orders.name} WHERE pk = ? AND ck = ?", ["w", 1])


def test_a_word_that_starts_no_statement_is_answered_as_the_server_answers_it(cassandra, db):
    """A batch begins with BEGIN: APPLY BATCH alone starts no statement of the server's, and db.query
    answers it as db.execute and the server do (a syntax error), never sending it to db.execute."""
    from cassandra.protocol import SyntaxException

    session = cassandra.session()
    try:
        with pytest.raises(SyntaxException, match="no viable alternative at input 'APPLY'"):
            session.execute("APPLY BATCH")
    finally:
        session.shutdown()
    for call in (db.query, db.execute):
        with pytest.raises(cqlsh_ext.Error, match=r"^SyntaxException: line 1:0 no viable alternative at "
                                                  r"input 'APPLY'"):
            call("APPLY BATCH")


def test_cql_this_lexer_does_not_read_is_sent_as_written_and_a_write_still_refused(db, orders: Orders):
    # `/` and `%` (CQL's arithmetic) are the server's alone: the statement goes as written.
    plain = {row["ck"]: row["ck"] // 2 for row in db.query(f"SELECT ck FROM {orders.name} WHERE pk = 'p1'")}
    halves = {row["ck"]: row["half"] for row in db.query(f"SELECT ck, ck / 2 AS half FROM {orders.name} "
                                                         "WHERE pk = 'p1'")}
    assert plain and halves == plain
    with pytest.raises(cqlsh_ext.Error, match=r"^params are bound to markers, and this statement does not "
                                              r"lex here: unexpected character '%'"):
        db.query(f"SELECT ck % 3 FROM {orders.name} WHERE pk = ?", ["p1"])
    # A write the lexer does not read is still known by its first word, and nothing is sent.
    with pytest.raises(cqlsh_ext.Error, match=r"^db.query reads; INSERT writes: "):
        db.query(f"INSERT INTO {orders.name} (pk, ck, data) VALUES ('w2', 4 / 2, 0x00)")
    assert list(db.query(f"SELECT pk FROM {orders.name} WHERE pk = 'w2'")) == []


def test_ctrl_c_at_24_points_of_readings_is_never_lost(cassandra, orders: Orders, cqlshrc: str, tmp_path):
    """A program reads 24 times, pressing Ctrl-C (SIGINT to itself) at a different row each time,
    over the server's pages and over a scan (whose own Ctrl-C sits inside the answer's), iterating
    and taking Arrow batches: each reading stops at that row, its notes say interrupted and not
    exact, nothing is raised; inside to_arrow() and to_pandas() (at a count of batches) the reading
    stops at its next page, the rows read kept; a second press raises KeyboardInterrupt; the
    handler before is back at the end."""
    script = HERE / "ctrl_c_reader.py"
    done = subprocess.run([sys.executable, str(script), cassandra.host, str(cassandra.port),
                           cassandra.username, cassandra.password, cqlshrc, orders.name],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    readings = [r for r in results if "point" in r]
    assert len(readings) == 24
    for reading in readings:
        assert reading["stopped"] == "interrupted" and reading["exact"] is False, reading
        assert reading["raised"] is None, reading
        if reading["how"] in ("arrow", "pandas"):  # the batches converted before the press, and more
            assert 0 < reading["given"] < len(orders.rows), reading
            assert reading["given"] >= reading["expected"] * reading["page"] or reading["page"] == 4, reading
        else:
            assert reading["given"] == reading["expected"], reading
    final = next(r for r in results if "second_press" in r)
    assert final["second_press"] == "KeyboardInterrupt" and final["handler_restored"] is True


def test_every_undecodable_value_has_a_note(db, orders: Orders):
    """Random bytes (no known format) say why in data:note, in the Arrow table and in the rows'
    details alike; the values that decode have none."""
    text = f"SELECT pk, ck, data FROM {orders.name}"
    table = db.query(text).to_arrow().to_pylist()
    details = list(db.query(text).records(details=True))
    undecodable = {(row["pk"], row["ck"]) for row, doc in orders.rows if doc is None}
    for rows in (table, details):
        notes = {(r["pk"], r["ck"]): (r["data:kind"], r["data:note"]) for r in rows}
        assert {key for key, (kind, _note) in notes.items() if kind == "unknown"} == undecodable
        assert {notes[key][1] for key in undecodable} == {"no compression detected"}
        assert all(note is None for key, (_kind, note) in notes.items() if key not in undecodable)
