"""The value engine is the one road a stored value takes: on the same page of values, every reader
(the display, COMPRESSION STATS, INSPECT, JSON, CSV, Parquet's columns, a payload query and what
it gives the display) decodes each value once, and parses a value's JSON at most once. Counted,
not timed: every container's decode and trial are wrapped with a counter that counts a value's
outermost call that decoded something (a trial that decodes inside counts once; a trial that
finds the value is another format's counts nothing), and every JSON reading of a payload.

Counted on the Python engine alone (the native core decodes out of these counters' sight), and,
with the core built, on the core's road: one call per page, each value handed to it once, and
the Python engine decoding a value at most once beside it (what the core hands back, and the
views a query's answer shows)."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
import snappy
import zstandard
from cassandra import cqltypes
from cqlshlib import formatting

from cqlsh_ext.codecs import registry
from cqlsh_ext.payload import engine as engine_module
from cqlsh_ext.payload import json_text, native, pages

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
    return values


PAGE = _page()
CONTAINERS = {type(fmt) for fmt in registry.all_containers()}


class Counts:
    def __init__(self) -> None:
        self.decodes = 0
        self.parses = 0
        self._depth = 0


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    counts = Counts()

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            outermost = counts._depth == 0
            counts._depth += 1
            try:
                found = method(self, *args, **kwargs)
            finally:
                counts._depth -= 1
            if outermost and found is not None:  # a trial that finds another format decoded nothing
                counts.decodes += 1
            return found
        return counting

    for cls in CONTAINERS:
        for name in ("decode", "trial"):
            if name in vars(cls):
                monkeypatch.setattr(cls, name, wrap(vars(cls)[name]))
    real = json_text.json_container

    def parsing(text: str) -> Any:
        counts.parses += 1
        return real(text)

    monkeypatch.setattr(json_text, "json_container", parsing)
    monkeypatch.setattr(engine_module, "json_container", parsing)
    monkeypatch.setattr(pages, "json_container", parsing)
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


def test_the_page_has_values_in_containers() -> None:
    assert _readable() >= 50


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
    "export of paths and the blob, Parquet": _export("SELECT pk, ck, data.status, data.n, data FROM t",
                                                     "parquet"),
    "export of paths and the blob, JSON Lines": _export("SELECT ck, data.status, data FROM t", "json"),
    "export of paths and the blob, CSV": _export("SELECT ck, data.n, data FROM t", "csv"),
    "export of the blob, Parquet": _export("SELECT pk, data FROM t", "parquet"),
    "export of paths, Parquet": _export("SELECT ck, data.status, data.n FROM t", "parquet"),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_every_reader_decodes_a_value_once_and_parses_its_json_at_most_once(
        reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "available", lambda: False)  # the Python engine alone
    with counted(monkeypatch) as counts:
        READERS[reader](PAGE)
    # Each value in a container: one decode (a value in none is tried, not decoded: no count).
    assert counts.decodes == _readable(), reader
    assert counts.parses <= len(PAGE), reader


@pytest.mark.parametrize("reader", list(READERS))
def test_on_the_native_core_every_reader_hands_a_value_to_it_once(
        reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not native.available():
        pytest.skip(f"the native core does not run ({native.refusal()})")
    handed: list[int] = []
    real = native.module()

    class Counting:
        """The core's calls, counting the values each is handed (a page of places: rows x places)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def decode_page(self, request: Any) -> Any:
            handed.append(len(request.values))
            return real.decode_page(request)

        def describe_page(self, request: Any) -> Any:
            handed.append(len(request.values))
            return real.describe_page(request)

        def measure_page(self, request: Any) -> Any:
            handed.append(request.rows * len(request.places))
            return real.measure_page(request)

        def query_page(self, request: Any) -> Any:
            handed.append(request.rows * len(request.places))
            return real.query_page(request)

        def hold_page(self, values: Any, cap: int) -> Any:
            handed.append(len(values))
            return real.hold_page(values, cap)

    monkeypatch.setattr(native, "module", Counting)
    with counted(monkeypatch) as counts:
        READERS[reader](PAGE)
    decodes, parses = counts.decodes, counts.parses  # (_readable() decodes under the counters)
    assert sum(handed) <= len(PAGE), reader  # one call per page, no value twice
    assert decodes <= _readable(), reader  # and the Python engine beside it once at the most
    assert parses <= len(PAGE), reader
    if reader in ("COMPRESSION STATS", "payload query", "GROUP BY", "DESCRIBE PAYLOAD") or "export" in reader:
        assert handed and decodes == 0, reader  # the core answers this page whole


def test_the_counter_sees_a_second_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check above can fail: a reader that decodes twice is counted twice.
    with counted(monkeypatch) as counts:
        _json(PAGE)
        _csv(PAGE)
    assert counts.decodes == 2 * _readable()
