"""The typed answer of the one reading (cqlsh_ext.reading), read from the real server in a context
without a shell: named, typed columns; rows or groups in batches, as rows and as columns; notes as
data (rows read and matched, undecodable values by kind, the LIMIT, how it was read, stopped and
how far); errors as data. The truth is tools/orders.py's documents, written by their producers."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from orders import MISSING, take

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.payload.columns import AGGREGATE, BLOB, CQL, PATH
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.paths import UNDECODABLE_GROUP
from cqlsh_ext.payload.view import BlobView
from cqlsh_ext.reading.context import ReadContext
from cqlsh_ext.reading.select import payload_plan, read_select
from cqlsh_ext.reading.statement import read_statement
from cqlsh_ext.reading.typed import CANCELLED, AnswerBatch, TypedAnswer
from cqlsh_ext.render.closing import closing_text

from .conftest import COUNT, Orders, Said

pytestmark = pytest.mark.server


def _answer(ctx: ReadContext, text: str, **options: Any) -> TypedAnswer:
    planned = payload_plan(ctx, Lexed(text))
    assert planned is not None, text
    answer = read_select(ctx, *planned, **options)
    assert answer is not None
    return answer


def _path(doc: dict[str, Any] | None, *steps: Any) -> Any:
    found = take(doc, steps)
    return None if found is MISSING else found


def test_a_payload_select_answers_typed_columns_rows_and_notes(ctx: ReadContext, orders: Orders) -> None:
    answer = _answer(ctx, f"SELECT pk, ck, data.status, data FROM {orders.name} WHERE data.n >= 0 "
                          "ALLOW FILTERING")
    assert [(c.name, c.role, c.type_text) for c in answer.columns] == [
        ("pk", CQL, "text"), ("ck", CQL, "int"), ("data.status", PATH, "json"), ("data", BLOB, "blob")]
    assert answer.columns[2].source == "data.status"
    got = [row for batch in answer for row in batch]
    truth = {(row["pk"], row["ck"]): doc for row, doc in orders.rows if doc is not None}
    assert sorted((pk, ck) for pk, ck, _status, _view in got) == sorted(truth)
    for pk, ck, status, view in got:
        assert status == _path(truth[(pk, ck)], "status")
        assert view.kind in ("text", "record")  # the blob as its view, decoded once with the page
    notes = answer.notes
    assert notes is not None
    undecodable = sum(doc is None for _row, doc in orders.rows)
    assert (notes.rows_read, notes.matched, notes.undecodable) == (COUNT, len(truth), undecodable)
    assert notes.undecodable_kinds == {"unknown": undecodable} and notes.cut == 0
    assert notes.stopped is None and notes.how  # read by token ranges, and it says how
    figures = notes.to_json()
    assert figures["rows_read"] == COUNT and figures["undecodable_by_kind"] == {"unknown": undecodable}
    assert closing_text(notes).startswith(f"payload query: {COUNT:,} rows read, {len(truth):,} matched")


def test_groups_come_with_their_counts_and_the_aggregates_typed(ctx: ReadContext, orders: Orders) -> None:
    answer = _answer(ctx, f"SELECT data.status, count(*), max(data.n) FROM {orders.name} "
                          "GROUP BY data.status ALLOW FILTERING")
    assert [(c.role, c.type_text) for c in answer.columns] == [(PATH, "json"), (AGGREGATE, "bigint"),
                                                              (AGGREGATE, "json")]
    got = {status: count for batch in answer for status, count, _max in batch}
    truth = Counter(UNDECODABLE_GROUP if doc is None else _path(doc, "status") for _row, doc in orders.rows)
    assert got == dict(truth)
    assert answer.notes is not None and answer.notes.matched == COUNT


def test_a_limit_reached_is_said(ctx: ReadContext, orders: Orders) -> None:
    answer = _answer(ctx, f"SELECT ck FROM {orders.name} WHERE data.n >= 0 LIMIT 7 ALLOW FILTERING")
    assert sum(len(batch) for batch in answer) == 7
    assert answer.notes is not None and answer.notes.limit_reached
    assert answer.notes.to_json()["limit_reached"] == 7 and answer.notes.to_json()["exact"] is True


def test_the_closing_line_names_the_first_five_paths_no_value_had_then_counts_the_others(
        ctx: ReadContext, orders: Orders) -> None:
    # A chain of conditions on missing paths (20,000 of them were one 1.6 MB stderr line).
    missing = [f"data.nokey{i}" for i in range(8)]
    answer = _answer(ctx, f"SELECT ck FROM {orders.name} WHERE "
                          + " AND ".join(f"{path} = 1" for path in missing) + " ALLOW FILTERING")
    assert sum(len(batch) for batch in answer) == 0
    notes = answer.notes
    assert notes is not None
    line = closing_text(notes)
    assert line is not None
    named = [path for path in missing if f"no value read has {path}" in line]
    assert named == missing[:5], line
    assert line.count("no value read has data.") == 5 and "; and 3 more paths no value read has" in line, line
    figures = notes.to_json()
    assert [entry["path"] for entry in figures["paths_no_value_had"]] == missing[:5]
    assert figures["paths_no_value_had_more"] == 3


def test_a_stopped_reading_keeps_what_it_read_and_says_how_far(ctx: ReadContext, orders: Orders) -> None:
    # The server's own pages (paths only in the projection): stopped after the first.
    answer = _answer(ctx, f"SELECT pk, ck, data.status FROM {orders.name}", batch_rows=20, fetch_size=20)
    kept = []
    for batch in answer:
        kept += batch.rows
        ctx.stop.set()  # the caller's stop (a client's cancellation, a time limit), after one page
    notes = answer.notes
    assert notes is not None and notes.stopped == CANCELLED
    assert len(kept) == notes.rows_read == 20 < COUNT
    assert "stopped before its end (cancelled, or a time limit)" in closing_text(notes)
    assert notes.to_json()["exact"] is False  # its counts are of the rows read, not the table's
    # A whole-table scan: stopped at the first page that matched, the rows found kept.
    ctx.stop.clear()
    answer = _answer(ctx, f"SELECT ck FROM {orders.name} WHERE data.n >= 0 ALLOW FILTERING")
    found = []
    for batch in answer:
        found += batch.rows
        ctx.stop.set()
    notes = answer.notes
    assert notes is not None and notes.stopped == CANCELLED
    assert 0 < notes.matched < COUNT and 0 < notes.rows_read < COUNT
    assert notes.to_json()["stopped"] == CANCELLED


def test_progress_is_an_event_stream_of_the_reading(ctx: ReadContext, orders: Orders) -> None:
    from dataclasses import replace

    from cqlsh_ext.reading.context import progress_events

    events: list[dict[str, Any]] = []
    watched = replace(ctx, progress=progress_events(events.append, every=0))
    answer = _answer(watched, f"SELECT ck FROM {orders.name} WHERE data.status = 'PAID' ALLOW FILTERING")
    found = sum(len(batch) for batch in answer)
    assert events and all(e["reading"] == f"SELECT {orders.name}" for e in events)
    rows = [e["rows"] for e in events if "rows" in e]
    assert rows == sorted(rows) and 0 < rows[-1] <= COUNT
    notes = answer.notes
    assert notes is not None and notes.matched == found
    assert notes.ranges is not None and notes.ranges[0] == notes.ranges[1] > 1  # every token range read


def _blob(value: Any) -> Any:
    """A blob an answer gives, as a reader sees it: its view's stored bytes, kind and label (the
    value engine's reading of it, made once: a view of it), or the value as it is."""
    if isinstance(value, BlobView):
        return value.stored, value.kind, value.label
    return value


def test_batches_hand_out_columns_that_are_the_rows(ctx: ReadContext, orders: Orders) -> None:
    text = f"SELECT pk, ck, data.status, data.customer.name, data FROM {orders.name}"
    as_rows = [tuple(map(_blob, row)) for batch in _answer(ctx, text, stored_blobs=True)
               for row in batch.rows]
    columns: list[list[Any]] = []
    for batch in _answer(ctx, text, stored_blobs=True):
        assert isinstance(batch, AnswerBatch)
        for i, column in enumerate(batch.columns()):  # a sequence (a list, or one the core holds)
            columns[i:i + 1] = [(columns[i] if i < len(columns) else []) + list(map(_blob, column))]
    assert list(zip(*columns, strict=True)) == as_rows
    truth = {(row["pk"], row["ck"]): (row["data"], doc) for row, doc in orders.rows}
    assert len(as_rows) == COUNT
    for pk, ck, status, name, blob in as_rows:
        value, doc = truth[(pk, ck)]
        # the blob as the reading read it (its paths read with it): its stored bytes, its label
        assert blob[0] == value and blob[2] == ValueEngine().view(value).label
        assert (status, name) == (_path(doc, "status"), _path(doc, "customer", "name"))


def test_a_statement_the_server_answers_is_typed_too(ctx: ReadContext, orders: Orders) -> None:
    answer = read_statement(ctx, f"SELECT pk, ck, data FROM {orders.name} WHERE pk = 'p1'")
    assert answer is not None
    assert [(c.name, c.role, c.type_text) for c in answer.columns] == [
        ("pk", CQL, "text"), ("ck", CQL, "int"), ("data", BLOB, "blob")]
    got = sorted((pk, ck, _blob(data)) for batch in answer for pk, ck, data in batch)
    # each blob read once, a page at a time (the value engine's reading, its stored bytes kept)
    assert got == sorted((r["pk"], r["ck"], _blob(ValueEngine().view(r["data"])))
                         for r, _doc in orders.rows if r["pk"] == "p1")
    notes = answer.notes
    assert notes is not None and notes.rows_read == len(got) and notes.stopped is None
    # its notes as a query's: every row matched, its random values undecodable, by kind
    undecodable = sum(doc is None for r, doc in orders.rows if r["pk"] == "p1")
    assert (notes.matched, notes.undecodable, notes.cut) == (len(got), undecodable, 0)
    assert notes.undecodable_kinds == ({"unknown": undecodable} if undecodable else {})


def test_errors_are_data(ctx: ReadContext, orders: Orders, said: Said) -> None:
    # The server refuses the statement's ordinary part: no answer, its one line kept.
    planned = payload_plan(ctx, Lexed(f"SELECT data.status FROM {orders.name} WHERE ck = 1"))
    assert planned is not None
    assert read_select(ctx, *planned) is None
    assert len(said.errors) == 1 and "ALLOW FILTERING" in said.errors[0]
    assert read_statement(ctx, f"SELECT nope FROM {orders.name}") is None
    assert said.errors[1].startswith("InvalidRequest: ") and "nope" in said.errors[1]
