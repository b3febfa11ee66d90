"""The value engine is the one road a stored value takes: on the same page of values, every reader
(the display, COMPRESSION STATS, INSPECT, JSON, CSV, Parquet's columns, a payload query and what
it gives the display) decodes each value once, and parses a value's JSON at most once. Counted,
not timed: every container's decode and trial are wrapped with a counter that counts a value's
outermost call that decoded something (a trial that decodes inside counts once; a trial that
finds the value is another format's counts nothing), and every JSON reading of a payload.

Counted on the Python engine alone (the native core decodes out of these counters' sight), and,
with the core built, on the core's road: one call per page, each value handed to it once. The
front ends' roads (ROADS: the terminal's page step, MCP's answer of rows, COPY's files, the Python
API's Arrow batches; a plain SELECT and payload queries, their blobs given whole) read what the
core read of a value and never decode it again in Python: counted value by value, the Python
engine decodes only the values the core hands back (formats it does not know: bzip2 here), each
once (`_handed_back_values`), and none the core read.

Then the real entry points (the shell's SELECT output, MCP's query tool through its guard with a
redaction policy, the Python API's rows and Arrow table, the polars source, an explicit DECODE),
against the test server, on a page the core does not read: BSON under zstd. Counted value by
value: containers decoded in Python, BSON documents decoded (pymongo's bson.decode), JSON parsed,
values handed to the core: each zstd frame decompressed once (by the core on its road, never again
in Python), each document decoded once, no JSON parsed. And `cqlsh-ext spark`'s statements on that
page (Spark 3.5 and 4), counted the same way in its driver and in Spark's Python workers, where the
executors' tasks run (tests/road_counts.py, installed there by tests/road_site/sitecustomize.py):
nothing a task read is read again, in the task or on the driver."""

from __future__ import annotations

import bz2
import gzip
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
import snappy
import zstandard
from cassandra import cqltypes
from cqlshlib import formatting

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload import native
from tests.road_counts import CoreCalls, Counts, install

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from orders import rows as order_rows  # noqa: E402


def _page() -> list[bytes]:
    """The order table's values (snappy JSON, zstd MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR,
    random bytes) and JSON documents in the other common containers, written by their libraries."""
    values = [row["data"] for row, _doc in order_rows(60, seed=9)]
    for i in range(12):
        doc = json.dumps({"status": "FAILED" if i % 3 == 0 else "PAID", "n": i * 100,
                          "note": "x" * (50 * i)}).encode()
        values += [snappy.compress(doc), gzip.compress(doc), zstandard.ZstdCompressor().compress(doc),
                   lz4.frame.compress(doc)]
        if i % 2 == 0:  # a format the native core hands back to the Python engine
            values.append(bz2.compress(doc))
    return values


PAGE = _page()


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    counts = Counts()
    install(monkeypatch.setattr, counts)
    yield counts


def _readable() -> int:
    """Values on PAGE that detection reads into containers (the ones a decode count can see)."""
    found = 0
    for value in PAGE:
        try:
            found += registry.decode_auto(value) is not None
        except Exception:
            found += 1
    return found


@cache
def _records() -> int:
    """Values on PAGE whose payload is a record format (the order table's MessagePack and CBOR)."""
    from cqlsh_ext.payload.unwrap import unwrap
    from cqlsh_ext.payload.view import RECORD

    return sum(unwrap(value, "auto", DEFAULT_CAP).kind == RECORD for value in PAGE)


@cache
def _handed_back_values() -> tuple[bytes, ...]:
    """Values on PAGE in containers the native core hands back to the Python engine (a format it
    does not know): the only ones the Python engine decodes on the core's road, once each."""
    if not native.available():
        return ()
    handed = native.decode_page(PAGE, DEFAULT_CAP).handed_back
    return tuple(PAGE[i] for i in handed if registry.decode_auto(PAGE[i]) is not None)


def _handed_back() -> int:
    return len(_handed_back_values())


def test_the_page_has_values_in_containers() -> None:
    assert _readable() >= 50
    if native.available():
        assert _handed_back() == 6  # bzip2: its values are the Python engine's


def _display(values: list[bytes]) -> None:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.settings import DisplaySettings

    display = BlobDisplay(DisplaySettings(), interactive=False, expanded=False)
    display.prepare("data", values)
    for value in values:
        display(value, formatting.empty_colormap, place="data")


def _expanded(values: list[bytes]) -> None:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.settings import DisplaySettings

    display = BlobDisplay(DisplaySettings(), interactive=False, expanded=True)
    display.prepare("data", values)
    for value in values:
        display(value, formatting.empty_colormap, place="data")


def _stats(values: list[bytes]) -> None:
    from cqlsh_ext.insight.stats import Stats

    stats = Stats("q")
    stats.set_columns(["data"], [cqltypes.BytesType])
    stats.add_rows([(v,) for v in values])


def _inspect(values: list[bytes]) -> None:
    from cqlsh_ext.insight.inspect import inspect_value

    for value in values:
        inspect_value(value, {"file": "v"}).render()


def _json(values: list[bytes]) -> None:
    from cqlsh_ext.output.spellings import JsonSpelling
    from cqlsh_ext.settings import DisplaySettings

    spelling = JsonSpelling(DisplaySettings())
    for value in values:
        spelling.value(value, cqltypes.BytesType)


def _csv(values: list[bytes]) -> None:
    from cqlsh_ext.output.spellings import CsvSpelling
    from cqlsh_ext.settings import DisplaySettings

    spelling = CsvSpelling(DisplaySettings())
    for value in values:
        spelling.value(value, cqltypes.BytesType)


def _parquet_columns(values: list[bytes]) -> None:
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.payload.columns import ValueColumn
    from cqlsh_ext.settings import DisplaySettings

    blob_reading(DisplaySettings()).parts([ValueColumn(values)], None)


def _describe(where: str | None) -> Callable[[list[bytes]], None]:
    """DESCRIBE PAYLOAD of the column; with a WHERE reading a path, the evaluator's reading is the
    description's (the rows it keeps are not decoded again)."""
    def run(values: list[bytes]) -> None:
        from cqlsh_ext.describe.description import Description
        from cqlsh_ext.payload.places import Decoding
        from cqlsh_ext.query.evaluate import Evaluator
        from cqlsh_ext.query.grammar import Schema, parse

        evaluator = None
        if where is not None:
            plan = parse(f"SELECT data FROM t WHERE {where} ALLOW FILTERING",
                         Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {}))
            evaluator = Evaluator(plan, Decoding())
        description = Description("q", "data", Decoding(), evaluator=evaluator)
        description.set_columns(["pk", "ck", "data"],
                                [cqltypes.UTF8Type, cqltypes.Int32Type, cqltypes.BytesType])
        description.add_rows([("p", k, v) for k, v in enumerate(values)])
        assert description.matched

    return run


def _query(select: str) -> Callable[[list[bytes]], None]:
    def run(values: list[bytes]) -> None:
        from cqlsh_ext.output.spellings import JsonSpelling
        from cqlsh_ext.payload.places import Decoding
        from cqlsh_ext.query.answer import Answer
        from cqlsh_ext.query.evaluate import Evaluator
        from cqlsh_ext.query.grammar import Schema, parse
        from cqlsh_ext.settings import DisplaySettings

        plan = parse(select, Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"], {}))
        assert plan is not None
        answer = Answer(plan, ["pk", "ck", "data"] if "*" in select else ())
        found = answer.add_page(Evaluator(plan, Decoding()), ["pk", "ck", "data"],
                                [("p", k, v) for k, v in enumerate(values)])
        spelling = JsonSpelling(DisplaySettings())
        for row in found:  # what the answer gives is written out, blobs included
            for value in row:
                spelling.value(value)

    return run


def _export(select: str, fmt: str) -> Callable[[list[bytes]], None]:
    """COPY (SELECT ...) TO a file, as export.run reads and writes it: on the native core the blobs
    as stored and the columns held by it (each blob decoded once, by the query when it reads the
    blob's paths, else a page at a time for the file), without it the evaluator's views."""
    def run(values: list[bytes]) -> None:
        import tempfile
        from pathlib import Path

        from cqlsh_ext.settings import DisplaySettings
        from tests.file_pages import write_file

        with tempfile.TemporaryDirectory() as folder:
            rows = [("p", k, v) for k, v in enumerate(values)]
            write_file(select, rows, Path(folder), fmt, DisplaySettings(), native.available(),
                       page=len(values))

    return run


# ------------------------------------------------------------------ the front ends' roads

def _rows(values: list[bytes]) -> list[tuple[Any, ...]]:
    return [("p", k, v) for k, v in enumerate(values)]


def _query_answer(select: str, values: list[bytes]) -> Any:
    """`select`'s typed answer over the page, read as reading.select reads it: the blobs given as
    the value engine holds them where it does (read_select's blobs_on_core), else as views."""
    from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace
    from cqlsh_ext.settings import DisplaySettings
    from tests.file_pages import typed_answer

    held = Engines(Decoding()).all_on_core([ValuePlace("ks", "t", "data")])
    return typed_answer(select, _rows(values), DisplaySettings(), held)


def _statement_answer(values: list[bytes]) -> Any:
    """A plain SELECT's typed answer (reading.statement.read_statement: the server's rows as the
    driver made them, a blob column read a page at a time by the answer's BlobReading)."""
    from cassandra import cqltypes as types

    from cqlsh_ext.payload.columns import BLOB, CQL, AnswerColumn, BlobReading
    from cqlsh_ext.payload.places import Decoding, ValuePlace
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    columns = [AnswerColumn("pk", CQL, types.UTF8Type), AnswerColumn("ck", CQL, types.Int32Type),
               AnswerColumn("data", BLOB, types.BytesType)]
    rows = _rows(values)
    batches = iter([AnswerBatch(rows[start:start + 97]) for start in range(0, len(rows), 97)])
    return TypedAnswer(columns, batches, ReadNotes(None), None,
                       [ValuePlace("ks", "t", c.name) for c in columns], BlobReading(Decoding()))


def _terminal_page(names: list[str], types: list[Any], rows: list[tuple[Any, ...]], display: Any) -> None:
    """One page through the terminal's page step (output.table.formatted_rows: the blob columns
    handed to the display a page at a time, then each column's cells), as the result pipeline
    formats a stock result's page and a typed answer's."""
    from cqlsh_ext.output.table import PageFormats, PlacedFormatter, formatted_rows

    colormap = formatting.empty_colormap

    def cell(value: Any, cqltype: Any) -> Any:
        formatter = cqltype.formatter
        return formatter(value, colormap) if isinstance(formatter, PlacedFormatter) else repr(value)

    formats = PageFormats(cell, lambda values, _t: [repr(v) for v in values], colormap)
    formatted_rows(names, types, rows, "ks", "t", None, formats, display)


def _terminal_display() -> Any:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.settings import DisplaySettings

    return BlobDisplay(DisplaySettings(), interactive=False, expanded=False)


def _terminal_select(values: list[bytes]) -> None:
    """The terminal's plain SELECT: the driver's pages of rows, each through the page step."""
    from cassandra import cqltypes as types

    display, rows = _terminal_display(), _rows(values)
    for start in range(0, len(rows), 97):
        _terminal_page(["pk", "ck", "data"], [types.UTF8Type, types.Int32Type, types.BytesType],
                       rows[start:start + 97], display)


def _terminal(answer: Callable[[list[bytes]], Any]) -> Callable[[list[bytes]], None]:
    """The terminal's payload query (render.terminal.print_answer): the answer's batches, each row
    as its presenter shows it, through the result pipeline's page step."""
    def run(values: list[bytes]) -> None:
        from cassandra.cqltypes import UTF8Type

        from cqlsh_ext.payload.budget import Budget
        from cqlsh_ext.render.terminal import presented, presenter

        typed, display = answer(values), _terminal_display()
        present = presenter(typed.types, [c.computed for c in typed.columns], False,
                            Budget.for_cap(display.cap), 5)
        shown = [UTF8Type if t is None else t for t in typed.types]
        for rows in presented(typed.pages(), present):
            _terminal_page(typed.names, shown, rows, display)

    return run


def _mcp(answer: Callable[[list[bytes]], Any]) -> Callable[[list[bytes]], None]:
    """`cqlsh-ext mcp`'s query (mcp_server.tools' rows: answers.rows spelling each row as JSON
    values, render.json_lines), every row taken (a cap that holds them all)."""
    def run(values: list[bytes]) -> None:
        from cqlsh_ext.mcp_server import answers
        from cqlsh_ext.render.json_lines import JsonRows
        from cqlsh_ext.settings import DisplaySettings

        typed = answer(values)
        spelling = JsonRows(typed.columns, DisplaySettings(), typed.places)
        done = answers.rows("SELECT", typed, spelling, len(values), 1 << 30, [], [], answers.Screen(),
                            answers.Continuation(None, "SELECT"))
        assert done.data is not None and done.data["truncated"] is False, done.error

    return run


def _api(answer: Callable[[list[bytes]], Any]) -> Callable[[list[bytes]], None]:
    """The Python API's rows and tables (api.query_answer: records() and to_arrow() read the
    answer's Arrow batches, render.arrow_batches)."""
    def run(values: list[bytes]) -> None:
        from cqlsh_ext.output.spellings import blob_reading
        from cqlsh_ext.render.arrow_batches import ArrowBatches
        from cqlsh_ext.settings import DisplaySettings

        for batch in ArrowBatches(answer(values), blob_reading(DisplaySettings())):
            batch.to_pylist()

    return run


def _read(select: str) -> Callable[[list[bytes]], Any]:
    return lambda values: _query_answer(select, values)


#: The payload queries the roads read, each giving the blob whole.
FILTER = "SELECT ck, data FROM t WHERE data.status = 'FAILED' ALLOW FILTERING"
STAR = "SELECT * FROM t WHERE data.n > 200 ALLOW FILTERING"
PATHS_AND_BLOB = "SELECT pk, ck, data.status, data FROM t"

#: Every front end's road, a plain SELECT and payload queries (the terminal, MCP, COPY's files, the
#: Python API): on the core, no value it read is decoded again in Python.
ROADS: dict[str, Callable[[list[bytes]], None]] = {
    "terminal, plain SELECT": _terminal_select,
    "terminal, payload query giving the blob": _terminal(_read(FILTER)),
    "terminal, payload query giving *": _terminal(_read(STAR)),
    "terminal, paths and the blob": _terminal(_read(PATHS_AND_BLOB)),
    "MCP, plain SELECT": _mcp(_statement_answer),
    "MCP, payload query giving the blob": _mcp(_read(FILTER)),
    "MCP, payload query giving *": _mcp(_read(STAR)),
    "MCP, paths and the blob": _mcp(_read(PATHS_AND_BLOB)),
    "files, the blob, Parquet": _export("SELECT pk, data FROM t", "parquet"),
    "files, the blob, JSON Lines": _export("SELECT pk, ck, data FROM t", "json"),
    "files, the blob, CSV": _export("SELECT pk, ck, data FROM t", "csv"),
    "files, payload query giving the blob, JSON Lines": _export(FILTER, "json"),
    "files, paths and the blob, Parquet": _export("SELECT pk, ck, data.status, data.n, data FROM t",
                                                  "parquet"),
    "files, paths and the blob, JSON Lines": _export("SELECT ck, data.status, data FROM t", "json"),
    "files, paths and the blob, CSV": _export("SELECT ck, data.n, data FROM t", "csv"),
    "files, paths, Parquet": _export("SELECT ck, data.status, data.n FROM t", "parquet"),
    "API, plain SELECT": _api(_statement_answer),
    "API, payload query giving the blob": _api(_read(FILTER)),
    "API, paths and the blob": _api(_read(PATHS_AND_BLOB)),
}


READERS: dict[str, Callable[[list[bytes]], None]] = {
    "display": _display,
    "display, EXPAND": _expanded,
    "COMPRESSION STATS": _stats,
    "INSPECT": _inspect,
    "JSON": _json,
    "CSV": _csv,
    "Parquet's columns": _parquet_columns,
    "payload query": _query("SELECT ck, data.status FROM t WHERE data.n >= 0 ALLOW FILTERING"),
    "payload query giving the blob": _query("SELECT ck, data FROM t WHERE data.status = 'FAILED' "
                                            "ALLOW FILTERING"),
    "payload query giving *": _query("SELECT * FROM t WHERE data.n > 200 ALLOW FILTERING"),
    "GROUP BY": _query("SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING"),
    "DESCRIBE PAYLOAD": _describe(None),
    "DESCRIBE PAYLOAD with a WHERE on a path": _describe("data.n >= 0"),
    **ROADS,
}
#: The readers the native core takes no part in: each value read once by the Python engine (the
#: display in EXPAND, INSPECT's trace, the JSON and CSV output of a result cqlsh prints).
PYTHON_ALONE = ("display, EXPAND", "INSPECT", "JSON", "CSV")


@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_decodes_a_value_once_and_parses_its_json_at_most_once(
        reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "available", lambda: False)  # the Python engine alone
    records = _records()  # (it reads them: before the counters)
    with counted(monkeypatch) as counts:
        READERS[reader](PAGE)
    # Each value in a container: one decode (a value in none is tried, not decoded: no count).
    assert counts.decodes == _readable(), reader
    assert counts.parses <= len(PAGE), reader
    # Each record (MessagePack, CBOR) read once, and only records.
    assert all(n == 1 for n in counts.records.values()), f"{reader}: a record read twice"
    assert len(counts.records) <= records, reader


@pytest.mark.parametrize("reader", list(READERS))
def test_on_the_native_core_every_reader_hands_a_value_to_it_once(
        reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not native.available():
        pytest.skip(f"the native core does not run ({native.refusal()})")
    calls = CoreCalls(native.module())
    readable, handed_back = _readable(), Counter(_handed_back_values())  # (they decode: before the counters)
    monkeypatch.setattr(native, "module", calls.module)
    with counted(monkeypatch) as counts:
        READERS[reader](PAGE)
    decodes, parses, handed = counts.decodes, counts.parses, calls.handed
    assert handed <= len(PAGE), reader  # one call per page, no value twice
    assert parses <= len(PAGE), reader
    assert all(n == 1 for n in counts.records.values()), f"{reader}: a record read twice"
    if reader not in PYTHON_ALONE:  # what the core read is not parsed again: only what it hands back
        assert parses <= len(handed_back), f"{reader}: {parses} JSON parses in Python"
        assert not counts.records, f"{reader}: {len(counts.records)} records the core read read again"
    if reader in PYTHON_ALONE:  # the Python engine's views alone, each value once
        assert not handed and decodes <= readable, reader
    else:  # the core reads the page: in Python only what it hands back, each once, nothing it read
        assert handed, reader
        again = counts.decoded - handed_back
        assert not again, f"{reader}: {sum(again.values())} values decoded again in Python"
        assert counts.decoded == handed_back, reader


def test_the_counter_sees_a_second_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check above can fail: a reader that decodes twice is counted twice.
    records = _records()
    with counted(monkeypatch) as counts:
        _json(PAGE)
        _csv(PAGE)
    assert counts.decodes == 2 * _readable()
    assert len(counts.records) == records and set(counts.records.values()) == {2}


# ------------------------------------------------------------------ the writers' roads

#: The page's table, as the writers' readings read it (an edit's plan, a rewrite's examiner).
_WRITE_SCHEMA = {"pk": "text", "ck": "int", "data": "blob"}


def _write_reading(where: str) -> tuple[Any, Any, Any, Any]:
    """The reading's plan of `UPDATE t SET data.n = 0 WHERE <where>` (writing.cell_reads.plan_for,
    as edit.run.preview_edit makes it): the edit, the blob, the key columns' names and the plan."""
    from types import SimpleNamespace

    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.cql.types import parse as cql_type
    from cqlsh_ext.edit.parse import parse
    from cqlsh_ext.query.grammar import Schema
    from cqlsh_ext.writing.blob_target import BlobTarget
    from cqlsh_ext.writing.cell_reads import plan_for
    from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

    schema = Schema(_WRITE_SCHEMA, ["pk"], {})
    columns = {name: cql_type(text, {}) for name, text in _WRITE_SCHEMA.items()}
    edit = parse(Lexed(f"UPDATE t SET data.n = 0 WHERE {where}"), lambda _ks, _t: columns, lambda: schema)
    assert edit is not None
    blob, keys = BlobTarget("data"), ["pk", "ck"]
    plan = plan_for("ks", SimpleNamespace(name="t"), schema, blob, keys, edit.where, edit.allow_filtering,
                    False, Mechanism(TIMESTAMP))
    return edit, blob, keys, plan


def _write_names() -> list[str]:
    from cqlsh_ext.writing.cell_reads import TTL_ALIAS, WRITETIME_ALIAS

    return ["pk", "ck", "data", WRITETIME_ALIAS, TTL_ALIAS]


def _edit(where: str) -> Callable[[list[bytes]], set[bytes]]:
    """An edit of one path (data.n) on the page's rows: read as edit.run reads them (the reading's
    plan evaluated a page at a time, writing.cell_reads.PageCells), each value found rewritten in
    its own chain (edit.run's outcome: edit.rewrite, the new value read back); the new values."""
    def run(values: list[bytes]) -> set[bytes]:
        from types import SimpleNamespace

        from cqlsh_ext.edit.run import _outcome
        from cqlsh_ext.payload.places import Decoding
        from cqlsh_ext.writing.cell_reads import PageCells
        from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

        edit, blob, keys, plan = _write_reading(where)
        cells = PageCells(plan, "ks", keys, blob, Mechanism(TIMESTAMP), Decoding())
        rows = [(pk, ck, v, 1, None) for pk, ck, v in _rows(values)]
        pages = [cells.page(_write_names(), rows[start:start + 97], 0.0) for start in range(0, len(rows), 97)]
        outcome = _outcome(edit, blob, "ks", SimpleNamespace(name="t"), pages, Decoding())
        assert outcome.found and outcome.rows, outcome.refused
        return {row.new for row in outcome.rows}

    return run


def _cells_page(rows: list[tuple[Any, ...]]) -> Any:
    """The rows as the server sends a page of them (payload.server_rows.ServerRows: its rows section,
    each cell its length and bytes), as a rewrite's scan hands them over (scanning.pages_in)."""
    from cqlsh_ext.payload.server_rows import ServerRows

    types = [cqltypes.UTF8Type, cqltypes.Int32Type, cqltypes.BytesType, cqltypes.LongType, cqltypes.Int32Type]
    body = bytearray()
    for row in rows:
        for value, cqltype in zip(row, types, strict=True):
            if value is None:
                body += (-1).to_bytes(4, "big", signed=True)
            else:
                cell = cqltype.to_binary(value, 5)
                body += len(cell).to_bytes(4, "big") + cell
    return ServerRows(bytes(body), len(rows), types, 5)


def _rewrite(spec: str) -> Callable[[list[bytes]], set[bytes]]:
    """COMPRESSION REWRITE ... AS `spec` of the page's rows, read as writing.ranges reads a server's
    page (PageCells.page_in: the values the examiner settles from the page's cells left as they are,
    rewrite.job.Examiner.settle; the others made and examined, rewrite.recode); the new values."""
    def run(values: list[bytes]) -> set[bytes]:
        from types import SimpleNamespace

        from cqlsh_ext.payload.places import Decoding
        from cqlsh_ext.rewrite.job import Examiner
        from cqlsh_ext.rewrite.recode import target_of
        from cqlsh_ext.writing.cell_reads import LeftAlone, PageCells
        from cqlsh_ext.writing.mechanism import TIMESTAMP, Mechanism

        _edit_, blob, keys, plan = _write_reading("pk = 'p'")
        decoding = Decoding()
        work = SimpleNamespace(keyspace="ks", table="t", keys=tuple(keys), blob=blob, decoding=decoding)
        examiner = Examiner(SimpleNamespace(work=work, target=target_of(spec, decoding.cap)),
                            lambda key: 8)
        cells = PageCells(plan, "ks", keys, blob, Mechanism(TIMESTAMP), decoding)
        rows = [(pk, ck, v, 1, None) for pk, ck, v in _rows(values)]
        written = set()
        for start in range(0, len(rows), 97):
            for found in cells.page_in(_write_names(), _cells_page(rows[start:start + 97]), 0.0, examiner):
                if isinstance(found, LeftAlone):
                    examiner.leave(found.stored, found.key_sizes)
                elif (new := examiner.examine(found)) is not None:
                    written.add(new.value)
        counts = examiner.counts
        assert counts.found == len(values) and counts.change and counts.already, counts
        return written

    return run


#: The writers' roads (an edit, COMPRESSION REWRITE): a value's layers and payload are read once,
#: by the Python engine where the writer re-encodes it (a held reading of the core has neither);
#: the core reads only the values a rewrite may leave as they are (those whose outer container may
#: be its target's). Levels other than the page's own (zstd's 3), so that a new value, which the
#: writer reads back, is seldom a stored one (the test cannot tell those apart).
#: Not here: a rewrite AS 'none', which hands the core every value no signature claims, a value in
#: a signature-less container (raw snappy) among them, then read again by the Python engine.
WRITERS: dict[str, Callable[[list[bytes]], set[bytes]]] = {
    "edit, a payload WHERE": _edit("data.status = 'FAILED' ALLOW FILTERING"),
    "edit, a partition's rows": _edit("pk = 'p'"),
    "COMPRESSION REWRITE to gzip": _rewrite("gzip:4"),
    "COMPRESSION REWRITE to zstd": _rewrite("zstd:19"),
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_on_the_native_core_a_writer_never_decodes_again_what_the_core_read(
        writer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stored value is read by the core or by the Python engine, never by both (but those the
    core hands back, read by each): a value the writer re-encodes is read by the Python engine
    alone, the core reads those a rewrite may leave as they are. (The writer's own checks read some
    values again in Python, by design: writing.beside's trailing bytes, edit.rewrite's proof of an
    unverified container by writing its payload again; the new values it reads back are left out,
    and with them a stored value the same as one written.)"""
    if not native.available():
        pytest.skip(f"the native core does not run ({native.refusal()})")
    handed_back = set(_handed_back_values())  # (they decode: before the counters)
    calls = CoreCalls(native.module())
    monkeypatch.setattr(native, "module", calls.module)
    stored = set(PAGE)
    assert len(stored) == len(PAGE)
    with counted(monkeypatch) as counts:
        written = WRITERS[writer](PAGE)
    python = {value for value in counts.decoded if value in stored} - written
    again = {value for value in python if calls.values[value]} - handed_back
    assert not again, f"{writer}: {len(again)} values the core read decoded again in Python"
    # No value handed to the core twice, nor read by both (its calls that do not name their
    # values, query_page's, counted by the values they are handed).
    assert all(n == 1 for n in calls.values.values()), writer
    assert calls.handed + len(python) <= len(PAGE) + len(handed_back), \
        f"{writer}: {calls.handed} values handed to the core, {len(python)} decoded in Python"


# ------------------------------------------------------------------ the doors, a page the core does not read

#: Documents stored as BSON under zstd (written by pymongo's bson and zstandard): a record format
#: the native core recognises and leaves to Python, under a container it decompresses.
BSON_ROWS = 40


def _bson_docs() -> list[dict[str, Any]]:
    return [{"status": "FAILED" if i % 4 == 0 else "PAID", "n": i, "secret": f"s3cr3t-{i}",
             "items": [{"sku": f"k{i}-{j}", "q": j} for j in range(i % 3 + 1)]} for i in range(BSON_ROWS)]


def _bson_values() -> list[bytes]:
    import bson

    return [zstandard.ZstdCompressor(level=3).compress(bson.encode(doc)) for doc in _bson_docs()]


@pytest.fixture(scope="module")
def bson_table(cassandra: Any) -> str:
    ks = cassandra.create_keyspace("one_road")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO docs (pk, ck, data) VALUES (1, ?, ?)")
    for ck, value in enumerate(_bson_values()):
        session.execute(insert, (ck, value))
    session.shutdown()
    return ks


class Reads:
    """What one entry point's reading of the bson page did, value by value: the Python engine's
    container decodes and BSON documents decoded (Counts: pymongo's bson.decode, whose input is the
    payload, keyed by it), JSON parses, and the core's values (those a page call names; `handed`
    counts every value a call is handed, named or not)."""

    def __init__(self, counts: Counts, core: CoreCalls) -> None:
        self.counts, self.core = counts, core


@contextmanager
def reads(monkeypatch: pytest.MonkeyPatch, on_core: bool) -> Iterator[Reads]:
    if not on_core:
        monkeypatch.setattr(native, "available", lambda: False)
    core = CoreCalls(native.module() if on_core else None)
    counts = Counts()
    install(monkeypatch.setattr, counts, core if on_core else None)
    yield Reads(counts, core)


def _check_once(found: Reads, on_core: bool, shown: int = BSON_ROWS) -> None:
    """Each stored value's zstd frame decompressed once (by the core on its road, by the Python
    engine without it), its BSON decoded once, no JSON parsed."""
    import bson

    stored = set(_bson_values())
    payloads = {bson.encode(doc) for doc in _bson_docs()}
    python = Counter({value: n for value, n in found.counts.decoded.items() if value in stored})
    assert all(n == 1 for n in found.counts.bson.values()), \
        f"BSON decoded again: {sum(found.counts.bson.values()) - len(found.counts.bson)} times"
    assert set(found.counts.bson) <= payloads and len(found.counts.bson) >= shown
    assert not found.counts.parses, f"{found.counts.parses} JSON parses of a page that holds no JSON"
    if on_core:
        core_values = found.core.values
        assert all(n == 1 for n in core_values.values()), "a value handed to the core twice"
        assert not python, f"{sum(python.values())} values the core decompressed decompressed again in Python"
        assert found.core.handed >= shown
    else:
        assert all(n == 1 for n in python.values()) and len(python) >= shown, python


ON_CORE = [pytest.param(True, id="core"), pytest.param(False, id="python")]


def _skip_without_core(on_core: bool) -> None:
    if on_core and not native.available():
        pytest.skip(f"the native core does not run ({native.refusal()})")


@pytest.fixture
def bson_shell(cassandra: Any, bson_table: str) -> Iterator[Any]:
    """A shell of its own for each test: its engines (the display's, kept by the shell) decide at
    their first page which engine runs, and a test runs on one."""
    from shell_runner import in_process_shell

    with in_process_shell(cassandra, bson_table) as sh:
        yield sh


def _docs_shown(text: str, docs: int = BSON_ROWS) -> None:
    """Every document's own values are in the output (`status` and its `sku`s), under the label
    the stored chain has."""
    for doc in _bson_docs()[:docs]:
        assert doc["items"][-1]["sku"] in text, doc
    assert "zstd>bson" in text


def _shell_output(shell: Any, monkeypatch: pytest.MonkeyPatch, statement: str) -> str:
    """What the shell prints for `statement` (cqlsh writes a result to its query_out)."""
    import io

    out = io.StringIO()
    monkeypatch.setattr(shell, "query_out", out)
    shell.onecmd(statement)
    return out.getvalue()


@pytest.mark.parametrize("on_core", ON_CORE)
@pytest.mark.parametrize("statement", ["SELECT ck, data FROM docs WHERE pk = 1;",
                                       "SELECT ck, data.status, data FROM docs WHERE pk = 1;"])
def test_the_shell_s_select_reads_each_bson_value_once(
        bson_shell: Any, statement: str, on_core: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _skip_without_core(on_core)
    with reads(monkeypatch, on_core) as found:
        out = _shell_output(bson_shell, monkeypatch, statement)
    _docs_shown(out)
    _check_once(found, on_core)


@pytest.mark.parametrize("on_core", ON_CORE)
def test_describe_payload_reads_each_bson_value_once(
        bson_shell: Any, bson_table: str, on_core: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """DESCRIBE PAYLOAD in the shell: the documents' structure, each value read once."""
    _skip_without_core(on_core)
    with reads(monkeypatch, on_core) as found:
        out = _shell_output(bson_shell, monkeypatch, f"DESCRIBE PAYLOAD {bson_table}.docs.data;")
    assert "zstd>bson" in out and "40 values" in out, out
    assert all(path in out for path in ("status", "secret", "items", "sku")), out
    _check_once(found, on_core)


@pytest.mark.parametrize("on_core", ON_CORE)
def test_an_explicit_decode_reads_each_bson_value_once(
        bson_shell: Any, bson_table: str, on_core: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """DECODE names the chain: the Python engine reads it (a column setting: the core takes no part),
    each value once."""
    _skip_without_core(on_core)
    bson_shell.onecmd(f"DECODE '{bson_table}.docs.data' AS 'zstd>bson';")
    try:
        with reads(monkeypatch, on_core) as found:
            out = _shell_output(bson_shell, monkeypatch, "SELECT ck, data FROM docs WHERE pk = 1;")
    finally:
        bson_shell.onecmd(f"DECODE '{bson_table}.docs.data' AS 'auto';")
    _docs_shown(out)
    _check_once(found, on_core=False)  # Python alone either way
    assert not found.core.handed


@pytest.mark.parametrize("on_core", ON_CORE)
def test_mcp_s_query_tool_with_redaction_reads_each_bson_value_once(
        bson_shell: Any, bson_table: str, on_core: bool, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """`cqlsh-ext mcp`'s query tool, through the guard with a policy that redacts a path inside the
    documents: each value read once, the redacted path never answered."""
    import threading

    from cqlsh_ext.mcp_server.connection import Served
    from cqlsh_ext.mcp_server.guard import Guard
    from cqlsh_ext.mcp_server.policy import load
    from cqlsh_ext.mcp_server.tools import MAX_BYTES, TOOLS, Work
    from cqlsh_ext.reading.context import shell_context

    _skip_without_core(on_core)
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(f'[redact]\ncolumns = ["{bson_table}.docs.data.secret"]\n')
    guard = Guard(load(str(policy_file), TOOLS))
    work = Work(Served(shell_context(bson_shell)), threading.Event(), max_bytes=MAX_BYTES)
    with reads(monkeypatch, on_core) as found:
        statement = f"SELECT ck, data FROM {bson_table}.docs WHERE pk = 1"
        answer = guard.answer(TOOLS["query"], work, {"statement": statement, "limit": 100})
    assert answer.error is None, answer.error
    body = answer.body()  # the structured content as the client receives it (rows as the core spelt them)
    assert body is not None
    text = body.decode()
    assert "s3cr3t" not in text and "redacted" in text
    _docs_shown(text)
    _check_once(found, on_core)


@pytest.fixture(scope="module")
def bson_db(cassandra: Any, bson_table: str) -> Iterator[Any]:
    import cqlsh_ext

    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, keyspace=bson_table) as db:
        yield db


@pytest.mark.parametrize("on_core", ON_CORE)
@pytest.mark.parametrize("road", ["rows", "arrow", "polars source"])
def test_the_api_reads_each_bson_value_once(bson_db: Any, road: str, on_core: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import cqlsh_ext

    _skip_without_core(on_core)
    statement = "SELECT ck, data FROM docs WHERE pk = 1"
    # (the polars source reads its schema from the answer's leading sample when it is made: that
    # reading is its own, before polars collects the frame; counted here is what collect() reads)
    frame = cqlsh_ext.scan(bson_db, statement) if road == "polars source" else None
    with reads(monkeypatch, on_core) as found:
        if road == "rows":
            got = [row["data"] for row in bson_db.query(statement)]
        elif road == "arrow":
            got = bson_db.query(statement).to_arrow().column("data").to_pylist()
        else:
            assert frame is not None
            got = frame.collect()["data"].to_list()
    assert [json.loads(doc) if isinstance(doc, str) else doc for doc in got] == _bson_docs()
    _check_once(found, on_core)



# ------------------------------------------------------------------ Spark's tasks, the bson page

def _view_fields(view: Any) -> tuple[Any, ...]:
    return (view.stored, view.kind, view.label, view.short_label, view.text, view.tree, view.cut,
            view.payload_size, view.reason, view.codec, [layer.output_size for layer in view.layers])


@pytest.mark.parametrize("on_core", ON_CORE)
def test_a_view_crossing_to_another_process_lands_with_its_reading(
        monkeypatch: pytest.MonkeyPatch, on_core: bool) -> None:
    """What a Spark task sends its driver of a blob (payload.view.crossing, pickled): the view as
    it was read, landed without a decode, a record read or a JSON parse. (A view pickled as it is
    crosses as its stored bytes, decoded again where it lands: the counters see that.)"""
    import pickle

    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import FAILED, crossing

    _skip_without_core(on_core)
    if not on_core:
        monkeypatch.setattr(native, "available", lambda: False)
    values = PAGE + _bson_values()
    engine = ValueEngine("auto", DEFAULT_CAP)
    views = [engine.view(value) for value in values]
    for view in views:
        _ = view.tree  # what a task read of it (a query's path)
    crossed = [pickle.dumps(crossing(view)) for view in views]
    with counted(monkeypatch) as counts:
        landed = [pickle.loads(data) for data in crossed]
        got = [_view_fields(view) for view in landed]
    assert got == [_view_fields(view) for view in views]
    assert (counts.decodes, counts.parses, sum(counts.records.values()), sum(counts.bson.values())) == \
        (0, 0, 0, 0)
    as_bytes = [isinstance(pickle.loads(data), bytes) for data in crossed]  # a failed view's: its error's
    assert as_bytes == [view.kind == FAILED for view in views]
    with counted(monkeypatch) as counts:  # the counters see a view that crossed as its bytes read again
        again = ValueEngine("auto", DEFAULT_CAP)
        [again.view(pickle.loads(pickle.dumps(view))).tree for view in views[-5:]]
    assert counts.decodes == 5 and sum(counts.bson.values()) == 5



#: What `cqlsh-ext spark` runs over the bson page (each statement a Spark job whose tasks run in
#: Spark's Python workers), and how many BSON documents each decodes at least.
SPARK_STATEMENTS = {
    "COMPRESSION STATS": ("COMPRESSION STATS JSON {t}", 0),
    "SELECT paths and the blob": ("SELECT ck, data.status, data FROM {t} WHERE data.status = 'FAILED' "
                                  "ALLOW FILTERING CONFIRM", BSON_ROWS),
    "DESCRIBE PAYLOAD": ("DESCRIBE PAYLOAD {t}.data JSON", BSON_ROWS),
    "sorted SELECT giving the blob": ("SELECT ck, data FROM {t} WHERE data.status = 'FAILED' "
                                      "ORDER BY data.n DESC ALLOW FILTERING CONFIRM", BSON_ROWS),
}
#: One run per road a task's values take (a run is a Spark start: 30-70 s in CI). The Spark picks
#: the source of a task's Arrow batches (spark/rows.read_table: 3.5's connector, in the JVM; 4's
#: data source, which reads with decode "none", on the core's road or Python's); the engine picks
#: what the task does with them, the same code after either source (rows.arrow_pages, ArrowRows,
#: the value engine). Spark 3.5 on Python's engine would add no road: its source is 3.5-core's,
#: its task's engine 4-python's.
SPARK_RUNS = [pytest.param((spark, on_core), id=f"spark{spark}-{'core' if on_core else 'python'}")
              for spark, on_core in (("3.5", True), ("4", True), ("4", False))]


class SparkRun:
    """One `cqlsh-ext spark` run of SPARK_STATEMENTS: its output, its driver's pid and what each
    statement counted in the driver and the workers (tests/road_counts.py, by statement)."""

    def __init__(self, spark: Any, pid: int, statements: list[Any], on_core: bool) -> None:
        self.spark, self.pid, self.statements, self.on_core = spark, pid, statements, on_core


@pytest.fixture(scope="module", params=SPARK_RUNS)
def spark_run(request: pytest.FixtureRequest, cassandra: Any, bson_table: str,
              tmp_path_factory: pytest.TempPathFactory) -> SparkRun:
    """`cqlsh-ext spark` (local[2]) running SPARK_STATEMENTS over the bson table, the counters in
    its driver and in Spark's Python workers (tests/road_site/sitecustomize.py)."""
    import subprocess

    from shell_runner import CQLSH_EXT

    from tests.road_counts import program_env, read_events
    from tests.spark.conftest import spark_env

    spark, on_core = request.param
    _skip_without_core(on_core)
    home = tmp_path_factory.mktemp("spark-road")
    folder = home / "counts"
    folder.mkdir()
    env = spark_env(home, spark)
    env.update(program_env(folder, env.get("PYTHONPATH")))
    env["CQLSH_EXT_NATIVE"] = "1" if on_core else "0"
    script = "".join(f"{text.format(t=f'{bson_table}.docs')};\n" for text, _ in SPARK_STATEMENTS.values())
    with subprocess.Popen([CQLSH_EXT, "spark", "--master", "local[2]", "--output-format", "json",
                           "-e", script, *cassandra.cqlsh_args, "--insecure-password-without-warning"],
                          cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    statements = read_events(folder)
    assert len(statements) == len(SPARK_STATEMENTS), f"{len(statements)} statements counted: {err}"
    return SparkRun(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), proc.pid,
                    statements, on_core)


def _spark_answer(run: SparkRun, statement: str) -> list[dict[str, Any]]:
    """What the run printed for `statement`: its JSON lines (a report a line, a SELECT's rows one a
    line)."""
    docs = [json.loads(line) for line in run.spark.stdout.splitlines() if line.startswith("{")]
    kind = {"COMPRESSION STATS": lambda d: d.get("command") == "COMPRESSION STATS",
            "DESCRIBE PAYLOAD": lambda d: "describe" in d}
    if statement in kind:
        return [d for d in docs if kind[statement](d)]
    columns = {"SELECT paths and the blob": {"ck", "data.status", "data"},
               "sorted SELECT giving the blob": {"ck", "data"}}
    return [d for d in docs if set(d) == columns[statement]]


@pytest.mark.spark
@pytest.mark.parametrize("statement", list(SPARK_STATEMENTS))
def test_spark_s_tasks_read_each_bson_value_once(spark_run: SparkRun, statement: str) -> None:
    """`cqlsh-ext spark`'s statements over the bson page: counted in its driver and in Spark's
    Python workers (the executors' tasks), each zstd frame decompressed once (by the core on its
    road, handed to it once in all; by the Python engine without it), each document decoded once,
    no JSON parsed: nothing the workers read is read again by the driver."""
    counted = spark_run.statements[list(SPARK_STATEMENTS).index(statement)]
    assert counted.pids - {spark_run.pid}, "nothing counted in Spark's Python workers"
    _check_once(Reads(counted.counts, counted.core), spark_run.on_core, SPARK_STATEMENTS[statement][1])
    if spark_run.on_core:
        assert counted.core.handed == BSON_ROWS, f"{counted.core.handed} values handed to the core"
    answer = _spark_answer(spark_run, statement)
    if "SELECT" in statement:  # the FAILED documents, whole
        failed = {doc["n"]: doc for doc in _bson_docs() if doc["status"] == "FAILED"}
        assert {row["ck"]: row["data"]["payload"] for row in answer} == failed, answer
        assert {row["data"]["label"] for row in answer} == {"zstd>bson"}, answer
        if statement.startswith("sorted"):
            assert [row["ck"] for row in answer] == sorted(failed, reverse=True), answer
    elif statement == "COMPRESSION STATS":  # the producers' sizes
        (report,) = answer
        (data,) = report["columns"]
        assert (report["rows"], data["values"]) == (BSON_ROWS, BSON_ROWS)
        assert data["by_codec"] == {"zstd": BSON_ROWS}
        assert data["stored_bytes"] == sum(map(len, _bson_values())), data
    else:
        (report,) = answer
        assert report["rows_read"] == BSON_ROWS and "zstd>bson" in json.dumps(report), report
