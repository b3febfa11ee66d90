"""The native (Rust) core of the value engine, when it is installed: a page of one column's
values decoded in one call, each exactly as the Python engine (payload.unwrap.unwrap in auto mode)
decodes it, or handed back to it.

The core is the optional distribution `cqlsh-ext-native` (module `cqlsh_ext_native`, built from
the repository's native/ folder by bin/setup when cargo is found). `CQLSH_EXT_NATIVE=0` turns it
off. Nothing here imports it at shell start-up: `engine_name()` tells which engine runs from the
installed files and the environment; the module is imported and configured by the first
`available()` or `decode_page()`.

Configuration (at first use) passes what the Python registry holds as data: the detection order,
the dispatch table, the containers' grades, the thresholds (MIN_AUTO_LENGTH, MIN_TEXT_LENGTH, ...),
the budgets and the record formats auto-detection tries. What is code (trials, ruled_out, the
readers) is mirrored in Rust. A container or record format the core lacks (or knows at another
grade) refuses nothing: a value whose detection reaches it is handed back, and only that value,
the rest of the page staying on the core, as for the formats it recognises but leaves to Python
(bzip2, xz, Avro, ...) and a library of another release than the Python side's. `reading()` names
what it reads and what it hands back (`cqlsh-ext --version` prints it). Only a registry of
another shape (a dispatch table not of 256 rows, a walk deeper than the core follows) is refused,
and the Python engine runs alone (`refusal()` says why).

    page = decode_page(values, cap, paths=[("order", "status"), ("items", 0)],
                       want_text=False, want_tree=False, missing=MISSING)

builds the core's named request (`DecodeRequest`) and gives its named answer (`DecodedPage`,
native/cqlsh_ext_native.pyi), per value (columns, in the order of `values`):

- `kinds[i]`: TEXT, RECORD, BINARY (a binary payload), UNKNOWN (no known format), FAILED (a
  recognised format that failed to decode: the label names it) or HANDED_BACK; `KINDS[code]` is
  the view's kind (payload.view: text, record, binary, unknown, failed; None for HANDED_BACK);
- `labels[i]`: the chain, container labels and the payload's reading joined by ">" as the view
  spells its label ("<codec>>json", "<codec>><format>", "json" for stored plain JSON,
  "<codec>>text", "<codec>>binary"; "" for UNKNOWN);
  the reading of a text is "json" when the text is a JSON object or array;
- `stored[i]`, `decoded[i]`: the stored size, and the size of the payload under the last container
  (the stored size when there is none);
- `cut[i]`: the output cap cut a layer (a query reads such a value as cut);
- `texts[i]` (want_text): a TEXT value's text, else None; `clean[i]`: 1 when it holds no control
  character (the view's `clean`: cqlsh's escaping changes nothing but backslashes);
- `trees[i]` (want_tree): a TEXT value's JSON object or array, a RECORD's tree, else None;
- per path, `paths[p].values[i]`: the Python object at that path of a readable value (TEXT or
  RECORD, not cut: its JSON container or record, or the text itself when it is no JSON), `missing`
  when it lacks the path, None for any other value; `paths[p].found`: some value had the path;
  `paths[p].miss`: the deepest miss of the values read before the first that had the path, as
  the engine's Page.missed records it (a PathMiss: `depth`, the `key` wanted, the string `keys`
  of the mapping there, at most 200), None when there was none;
- `handed_back`: the indexes of the values the core leaves to the Python engine (their columns
  hold placeholders: kind HANDED_BACK, label "", None), with the reason-bearing cases among them:
  a serialization stream, a record format only Python reads, a nested layer that failed or found
  the cap reached, a value past the node budget, UTF-16 text, and any value a reader doubts;
- `peeled`: those of them the core handed back with their containers peeled whole (a record
  format under them that only Python reads, or a record it builds: a tagged value), by index:
  (the containers' labels, each one's output size, the payload). The Python engine reads these
  from the payload (ValueEngine.take_peeled), never from the stored bytes: hold_page's answers
  give them too, query_page's (per place) and describe_page's with each value's stored bytes.

A FAILED value's reason is not given: a reader that shows it asks the Python engine for the view.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, TypeVar, cast

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.confidence import confidence_of
from cqlsh_ext.payload.describe_bounds import DescribedValues
from cqlsh_ext.payload.measures import (
    STORED,
    TEXT_CHAIN,
    MeasuredPlace,
    Measurer,
    MeasureSpec,
    PageMeasures,
    PlaceMeasures,
    RowsSection,
    RowUnits,
)
from cqlsh_ext.payload.numbers import nearest_float
from cqlsh_ext.payload.page_rows import PageRows
from cqlsh_ext.payload.pages import MISS_KEYS, Lazy, PageRead, ReadRequest, note_miss, tree_of
from cqlsh_ext.payload.paths import CUT, MISSING, keys_of, read_path
from cqlsh_ext.payload.program import GroupState, PageProgram, PathSeen, PythonReading, Result
from cqlsh_ext.payload.view import KINDS as VIEW_KINDS
from cqlsh_ext.payload.view import RECORD as RECORD_KIND
from cqlsh_ext.payload.view import TEXT as TEXT_KIND
from cqlsh_ext.payload.view import UNKNOWN as UNKNOWN_KIND
from cqlsh_ext.payload.view import BlobView

MODULE = "cqlsh_ext_native"
#: `CQLSH_EXT_NATIVE=0` runs the Python engine alone.
ENV = "CQLSH_EXT_NATIVE"
Shown = TypeVar("Shown")
Raw = TypeVar("Raw")

TEXT, RECORD, BINARY, UNKNOWN, FAILED, HANDED_BACK = range(6)
#: The view's kind (payload.view) of each code; None: handed back to the Python engine.
KINDS: tuple[str | None, ...] = (*VIEW_KINDS, None)


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


#: The default `missing` of decode_page (query.evaluate.MISSING is what a query passes).
ABSENT: Any = _Absent()


def disabled() -> bool:
    """The environment turns the core off (CQLSH_EXT_NATIVE=0)."""
    return os.environ.get(ENV, "").strip() == "0"


def installed() -> bool:
    """The core's module is installed (found, not imported)."""
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        return False


def engine_name() -> str:
    """'native' when the core is installed and not turned off, else 'python' (nothing imported)."""
    return "native" if installed() and not disabled() else "python"


class PythonRoad(Protocol):
    """What the core's adapter uses of the Python engine (payload.engine.ValueEngine) for the
    values the core hands back."""

    cap: int
    budget: Budget

    def content(self, value: bytes) -> tuple[str, bool, Any]: ...

    def read_page(self, values: Sequence[bytes], request: ReadRequest, core: bool = True) -> PageRead: ...

    def view(self, value: bytes) -> BlobView: ...

    def views(self, values: Sequence[bytes]) -> Sequence[BlobView]: ...

    def on_core(self) -> bool: ...

    def take_peeled(self, values: Sequence[Any], peeled: Mapping[int, tuple[Any, Any, bytes]]) -> None: ...

    def keep_peeled(self, stored: bytes, chain: Sequence[str], sizes: Sequence[int],
                    payload: bytes) -> None: ...

    def forget_peeled(self) -> None: ...


_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def _config() -> core_types.Registry:
    """The registry's data the core reads (its container labels, grades and order; the
    thresholds and budgets; the record formats auto-detection tries, in order). Its fields are
    declared once, in the stub's Registry and StatsRegistry (native/cqlsh_ext_native.pyi);
    tests/native/test_registry_fields.py checks this dict, the core's structs, the bindings' and
    the core's tests' readings against them. (The signatures' order is the dispatch table's.)"""
    import zlib

    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import DEFAULT_CAP
    from cqlsh_ext.codecs.lz4 import _native as lz4_native
    from cqlsh_ext.payload import budget, unwrap
    from cqlsh_ext.payload.formats import auto_formats
    from cqlsh_ext.payload.formats.msgpack import MIN_LENGTH as MSGPACK_MIN_LENGTH
    from cqlsh_ext.payload.names import STREAM_MAGICS

    order = registry.detection_order()
    return {
        "grades": {fmt.label: fmt.grade for fmt in registry.all_containers()},
        "dispatch": [[fmt.label for fmt in row] for row in registry.dispatch_table()],
        "early": [fmt.label for fmt in order["early"]],
        "trial": [fmt.label for fmt in order["trial"]],
        "trial_zero": [fmt.label for fmt in order["trial_zero"]],
        "min_auto_length": registry.MIN_AUTO_LENGTH,
        "trial_min_cap": registry.TRIAL_MIN_CAP,
        "walk_depth": unwrap.MAX_DEPTH,
        "min_text_length": unwrap.MIN_TEXT_LENGTH,
        "short_text": unwrap.SHORT_TEXT,
        "min_structured_length": unwrap.MIN_STRUCTURED_LENGTH,
        "default_cap": DEFAULT_CAP,
        "max_nodes": budget.MAX_NODES,
        "min_nodes": budget.MIN_NODES,
        "tree_depth": budget.MAX_DEPTH,
        "msgpack_min_length": MSGPACK_MIN_LENGTH,
        "stream_magics": list(STREAM_MAGICS),
        "records": [fmt.name for fmt in auto_formats()],
        "lz4block_checksums": lz4_native._xxh() is not None,
        # the releases of the C libraries the Python side decodes with: the core decodes their
        # formats only with the same (it hands the values back otherwise)
        "zlib_version": zlib.ZLIB_RUNTIME_VERSION,
        "lz4_version": _lz4_version(),
        "zstd_version": _zstd_version(),
        # str.isprintable of the Basic Multilingual Plane, by this interpreter's Unicode tables
        "printable_bmp": bytes(map(str.isprintable, map(chr, range(0x10000)))),
        "stats": _stats_config(),
    }


def _stats_config() -> core_types.StatsRegistry:
    """What measuring a value needs (payload.engine's measure): the formats sized from their
    headers, the serialization streams' first bytes, the peek's length, the words of the
    statuses and reasons."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.capabilities import HeaderSized
    from cqlsh_ext.payload import measures, view
    from cqlsh_ext.payload.names import STREAM_MAGICS

    return {
        "header_sized": [(fmt.magic[0], fmt.label, fmt.header_sized_from)
                         for fmt in registry.all_containers() if isinstance(fmt, HeaderSized)],
        "stream_leads": sorted({magic[0] for magic in STREAM_MAGICS}),
        "peek": measures.PEEK,
        "statuses": list(measures.STATUSES),
        "reasons": [measures.FROM_HEADER, view.TOO_SHORT, view.NOT_DETECTED],
    }


def _lz4_version() -> int:
    try:
        import lz4

        return int(lz4.library_version_number())
    except (ImportError, AttributeError):
        return -1


def _zstd_version() -> int:
    try:
        import zstandard

        major, minor, release = zstandard.ZSTD_VERSION
        return int(major * 10000 + minor * 100 + release)
    except (ImportError, AttributeError, ValueError):
        return -1


def _load() -> Any:
    """The configured module, or None (its reason in _STATE['refusal'])."""
    if "module" in _STATE:
        return _STATE["module"]
    with _LOCK:
        if "module" in _STATE:
            return _STATE["module"]
        module: Any = None
        if disabled():
            _STATE["refusal"] = f"turned off ({ENV}=0)"
        elif not installed():
            _STATE["refusal"] = "not installed"
        else:
            try:
                from importlib import import_module

                module = import_module(MODULE)
                module.configure(_config())
            except Exception as err:  # a refused configuration or a broken install: Python alone
                _STATE["refusal"] = f"{type(err).__name__}: {err}"
                module = None
        _STATE["module"] = module
        return module


def available() -> bool:
    """The core is installed, on, and took the registry's configuration (loads it once)."""
    return _load() is not None


def refusal() -> str | None:
    """Why the core does not run (after available() said False), else None."""
    _load()
    reason: str | None = _STATE.get("refusal")
    return reason


def reading() -> str:
    """What the core reads and what it hands back to the Python engine, in a line (loads it)."""
    if not available():
        return f"native core: not running ({refusal()})"
    now = module().configured()
    return (f"native core reads: {', '.join(now.reads)}; hands back to the Python engine: "
            f"{', '.join(now.hands_back) or 'nothing'}")


class Core(Protocol):
    """What the adapter and the readers use of the core's module: checked by mypy against the
    module's stub (native/cqlsh_ext_native.pyi), which declares each request and answer type."""

    FLOAT_SUM_SHIFT: int
    DecodeRequest: type[core_types.DecodeRequest]
    MeasurePlace: type[core_types.MeasurePlace]
    MeasureRequest: type[core_types.MeasureRequest]
    RowsPage: type[core_types.RowsPage]
    ArrowBinary: type[core_types.ArrowBinary]
    Literal: type[core_types.Literal]
    Needle: type[core_types.Needle]
    QueryPlace: type[core_types.QueryPlace]
    Condition: type[core_types.Condition]
    Aggregate: type[core_types.Aggregate]
    QueryRequest: type[core_types.QueryRequest]
    DescribeRequest: type[core_types.DescribeRequest]

    def configure(self, registry: core_types.Registry) -> core_types.Configured: ...

    def configured(self) -> core_types.Configured: ...

    def decode_page(self, request: core_types.DecodeRequest) -> core_types.DecodedPage: ...

    def measure_page(self, request: core_types.MeasureRequest) -> core_types.MeasuredPage: ...

    def split_page(self, page: core_types.RowsPage, wanted: list[int],
                   rows: list[int] | None = None) -> list[list[bytes | None]]: ...

    def select_rows(self, page: core_types.RowsPage, wanted: list[int],
                    rows: list[int] | None = None) -> bytes: ...

    def cql_columns(self, page: core_types.RowsPage, wanted: list[int], kinds: list[str],
                    rows: list[int] | None = None) -> list[list[Any] | None]: ...

    def cql_array(self, values: list[Any], format: str, name: str) -> core_types.HeldArray | None: ...

    def query_page(self, request: core_types.QueryRequest) -> core_types.QueryPage: ...

    def arrow_cells(self) -> int: ...

    def describe_page(self, request: core_types.DescribeRequest) -> core_types.DescribedPage: ...

    def page_columns(self, request: core_types.DecodeRequest, names: list[str]) -> core_types.PageColumns: ...

    def held_array(self, chunks: Sequence[core_types.HeldColumn], kind: core_types.KindSpec, name: str,
                   filled: dict[int, Any] | None = None) -> tuple[core_types.HeldArray | None, list[Any]]: ...

    def contents_arrays(self, chunks: Sequence[core_types.HeldContents], kind: core_types.KindSpec, name: str,
                        raw: bool, confidence: Callable[[str | None, str], str | None],
                        filled: dict[int, tuple[Any, ...]] | None = None
                        ) -> tuple[list[core_types.HeldArray] | None, list[Any]]: ...

    def hold_page(self, values: Sequence[Any], cap: int, text_trees: bool = True,
                  text_gaps: bool = False) -> core_types.HeldContents: ...

    def json_lines(self, layout: list[Any], rows: int, cut: tuple[int, int] | None = None) -> bytes: ...

    def answer_rows(self, layout: list[Any], rows: int, cut: tuple[int, int]
                    ) -> tuple[list[bytes | None], list[int]]: ...

    def json_text_escaped(self, text: bytes) -> bytes: ...


if TYPE_CHECKING:
    # The one import of the core's module (tests/test_native_room.py holds it).
    import cqlsh_ext_native as core_types

    from cqlsh_ext.payload.describe_bounds import DescribeBounds

    #: The stub describes a module that is a Core (mypy checks the assignment).
    _STUB: Core = core_types

    # The columns the core holds (a query's kept rows; render.parquet_columns lays them out, until
    # the renderers read the one column type: tests/test_native_room.py's LEFT_TO_THE_RENDERERS).
    HeldColumn: TypeAlias = core_types.HeldColumn
    HeldContents: TypeAlias = core_types.HeldContents


def module() -> Core:
    """The configured native module (available() must be True)."""
    found: Core | None = _load()
    if found is None:
        raise RuntimeError(f"the native value engine does not run: {refusal()}")
    return found


def decode_page(values: Sequence[bytes], cap: int, paths: Sequence[Sequence[str | int]] = (), *,
                want_text: bool = False, want_tree: bool = False, missing: Any = ABSENT,
                text_limit: int = 0, read_json: bool = True) -> core_types.DecodedPage:
    """One call for a page of one column's values (see the module docstring). Values that are
    not `bytes` are handed back. Raises RuntimeError when the core is not available().
    `text_limit`: the clean texts given at most that many characters (0: whole; `clean` says of
    the whole text; a text that is not clean comes whole). `read_json` False: a text's JSON is not
    read (its label's reading is "text", JSON or not; no paths): for a reader of the texts alone,
    the display."""
    core = module()
    request = core.DecodeRequest(values, cap=cap, paths=[tuple(p) for p in paths], text=want_text,
                                 trees=want_tree, missing=missing, text_limit=text_limit, json=read_json)
    return core.decode_page(request)


def decoded_chains(values: Sequence[bytes], cap: int) -> list[str | None]:
    """Per value, the chain of containers the core peeled to reach its text, its bytes or its
    record, spelt as a view's chain is (`zstd`, `gzip>zstd`; '' for none), where the core read it
    whole: not handed back, not cut at the cap (a serialization stream's object, an undecodable
    value: None, for the Python engine to read; a record's chain is its label's steps before its
    reading, a stream's among them; a value handed back peeled, the containers it peeled). One
    call for a page (COMPRESSION REWRITE: which values are in its target already). Raises
    RuntimeError when the core is not available()."""
    from cqlsh_ext.payload.view import BINARY, BINARY_READING, RECORD, SEPARATOR, TEXT, TEXT_READING

    page = decode_page(values, cap, read_json=False)
    handed, peeled = set(page.handed_back), page.peeled
    readings = {TEXT: TEXT_READING, BINARY: BINARY_READING}
    out: list[str | None] = []
    for i, (code, label, cut) in enumerate(zip(page.kinds, page.labels, page.cut, strict=True)):
        kind = KINDS[code] or ""
        reading = readings.get(kind)
        if i in peeled:  # its containers, peeled whole (its record format is Python's to read)
            out.append(SEPARATOR.join(peeled[i][0]))
        elif i in handed or cut:
            out.append(None)
        elif kind == RECORD:
            out.append(label.rpartition(SEPARATOR)[0])
        elif reading is None:
            out.append(None)
        elif label == reading:
            out.append("")
        elif label.endswith(SEPARATOR + reading):
            out.append(label[:-len(reading) - 1])
        else:  # (a stream's object: its stream is a layer the label ends with)
            out.append(None)
    return out


def measure_rows(page: Sequence[Sequence[Any]], places: Sequence[MeasuredPlace], spec: MeasureSpec, cap: int,
                 engines: Sequence[Measurer]) -> PageMeasures | None:
    """COMPRESSION STATS' answer for a page from one call to the core (payload.engine's
    measure_rows), the values it hands back measured by their place's Python engine and added,
    with their rows' units. None when the core fails the call (it should not): the Python road
    answers."""
    try:
        native = module()
        rows: Any = page
        if isinstance(page, RowsSection):  # the server's page: the core reads its cells
            rows = native.RowsPage(page.message, page.row_count, page.columns, page.start)
        core = native.measure_page(native.MeasureRequest(
            rows=len(page),
            places=[_measured_place(native, rows, place) for place in places],
            cap=cap, from_headers=spec.from_headers, bucket_bounds=list(spec.bucket_bounds),
            size_bounds=list(spec.size_bounds), median_inv_step=spec.median_inv_step,
            median_zero=spec.median_zero, write_unit=spec.units[0], read_unit=spec.units[1],
            row_quota=spec.row_quota, near_share=spec.near_share))
    except Exception:
        return None
    answer = PageMeasures([], _units(core.before), _units(core.after))
    # The rows holding a value handed back: (decompressed, stored) bytes so far.
    left = {partial.row: [partial.before, partial.after] for partial in core.rows_left}
    for p, (place, column) in enumerate(zip(places, core.columns, strict=True)):
        counters = PlaceMeasures(
            column.values, column.nulls, column.stored, column.size, column.inexact, column.from_headers,
            {(c.status, c.chain): [c.values, c.stored, c.size] for c in column.chains},
            dict(column.reasons), list(column.compressed), column.buckets_before, column.buckets_after,
            column.sizes_before, column.sizes_after, column.ratios, dict(column.ratio_bins))
        answer.places.append(counters)
        if column.handed_back:
            values, rows_of = place.cells(page)
            for i in column.handed_back:
                value = values[i]
                if isinstance(value, (bytes, str)):
                    stored = len(value.encode("utf-8")) if isinstance(value, str) else len(value)
                    found = ((STORED, TEXT_CHAIN, stored, True, None) if isinstance(value, str)
                             else engines[p].measure(value, spec.from_headers))
                else:  # (not what a driver hands over for a blob or a text column)
                    stored = len(bytes(value))
                    found = engines[p].measure(bytes(value), spec.from_headers)
                counters.add(found, stored, spec, place.exact_ratios)
                sizes = left[rows_of[i]]
                sizes[0] += found[2]
                sizes[1] += stored
    for before, after in left.values():
        answer.before.add(before, spec)
        answer.after.add(after, spec)
    return answer


class NotOnCore(Exception):
    """A program (or a literal) the core does not evaluate: the caller's Python evaluator does."""


def compile_program(program: PageProgram, engines: Sequence[PythonRoad]) -> CoreProgram | None:
    """A payload query's program as the core answers it a page at a time (payload.engine's
    query_program: every place's engine runs on it, `engines[p]` place p's, which reads the values
    the core hands back peeled from their payloads): its conditions, aggregates and needles made
    into the core's request types once. None where the core does not evaluate the program (a
    literal past its numbers: an integer past 128 bits, a decimal past the floats)."""
    try:
        return CoreProgram(program, engines)
    except NotOnCore:
        return None


class CoreProgram:
    """A PageProgram compiled for the core (compile_program; payload.program.CompiledProgram):
    `answer()` builds a page's request (its places' sources: the page's rows, the server's page,
    an Arrow batch's binary column, or a place's values) and answers it in one call, the rows
    the core leaves read by the caller's Python evaluator in the answer (QueryPageAnswer)."""

    def __init__(self, program: PageProgram, engines: Sequence[PythonRoad]) -> None:
        core = self.core = module()
        self.program = program
        self.engines = engines
        self.conditions = [core.Condition(op=c.op, place=c.place, path=c.path,
                                          literals=[_literal(core, v) for v in c.literals])
                           for c in program.conditions]
        self.aggregates = [core.Aggregate(func=a.func, star=a.star, input=a.input)
                           for a in program.aggregates]
        self.needles = [[(path, core.Needle(any=n.any, strings=list(n.strings))) for path, n in place.needles]
                        for place in program.places]
        self.paths = [[tuple(steps) for steps in place.paths] for place in program.places]
        #: The paths some value had ((place, path)): their needles apply from the next page on.
        self.known: set[tuple[int, int]] = set()

    def answer(self, rows: Sequence[Sequence[Any]], sources: Sequence[int | Sequence[Any]], *,
               held: bool, read_kept: bool) -> QueryPageAnswer | None:
        """payload.program.CompiledProgram.answer: one call for the page (query_page). Of the
        server's page, a blob column's cells are read by the core from its bytes, any other
        column's values made by the driver, that column alone; of an Arrow batch, a blob column
        from Arrow's buffers."""
        core, program = self.core, self.program
        server = cast(RowsSection, rows) if isinstance(rows, PageRows) and rows.as_sent else None
        page = None if server is None else core.RowsPage(server.message, server.row_count, server.columns,
                                                        server.start)
        places: list[core_types.QueryPlace] = []
        for p, source in enumerate(sources):
            needles = [needle for path, needle in self.needles[p] if (p, path) in self.known]
            paths = self.paths[p]
            if isinstance(source, int):
                # (a text column's values: the core refuses the page, Python reads it)
                values: Any = rows
                at: int | None = source
                if server is not None:
                    blobs = server.holds_blobs(source)
                    values = page if blobs else [(value,) for value in server.column(source)]
                    at = source if blobs else 0
                elif isinstance(rows, ArrowRows):  # an Arrow batch: a blob column's buffers, else that column
                    arrow = arrow_binary(rows, source)
                    values, at = (arrow, None) if arrow is not None else \
                        ([(value,) for value in rows.column(source)], 0)
                places.append(core.QueryPlace(values, column=at, paths=paths, needles=needles))
            else:
                places.append(core.QueryPlace(source, paths=paths, needles=needles))
        try:
            request = core.QueryRequest(
                rows=len(rows), places=places, conditions=self.conditions, outputs=list(program.outputs),
                order=list(program.order), keys=list(program.keys), aggregates=self.aggregates,
                grouped=program.grouped, cap=program.cap, undecodable_group=program.undecodable_group,
                held=held, contents=list(program.contents), text_trees=program.text_trees,
                text_gaps=program.text_gaps)
            found = core.query_page(request)
        except Exception:
            return None
        if found.overflow:
            return None
        for engine, peeled in zip(self.engines, found.peeled, strict=True):
            engine.forget_peeled()
            for stored, chain, sizes, payload in peeled:
                engine.keep_peeled(stored, chain, sizes, payload)
        if server is not None:  # the rows the answer reads, made by the driver in one call
            server.make([*found.handed_rows, *(found.kept if read_kept and not program.grouped else [])])
        answer = QueryPageAnswer(found, rows)
        for p, seen in enumerate(answer.paths):
            self.known.update((p, path) for path, (was_found, _miss) in enumerate(seen) if was_found)
        return answer


def _literal(core: Core, value: Any) -> core_types.Literal:
    """A condition's literal as the core compares it: None, a bool, an int within 128 bits, a str
    (no lone surrogate), a finite Decimal within 126 bits (a float value compares with its nearest
    double: payload.numbers); NotOnCore raised for others."""
    if value is None:
        return core.Literal.null()
    if isinstance(value, bool):
        return core.Literal.boolean(value)
    if isinstance(value, int):
        if not -(1 << 127) <= value < (1 << 127):
            raise NotOnCore("an integer past 128 bits")
        return core.Literal.integer(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise NotOnCore("a lone surrogate") from err
        return core.Literal.text(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise NotOnCore("a decimal that is not finite")
        if not -(1 << 126) < value < (1 << 126):
            raise NotOnCore("a decimal past 126 bits")
        integral = value == value.to_integral_value()
        return core.Literal.decimal(nearest=nearest_float(value), floor=math.floor(value),
                                    ceil=math.ceil(value), integral=integral)
    raise NotOnCore(f"a literal of type {type(value).__name__}")


class QueryPageAnswer:
    """A program's answer to a page (payload.program.PageProgramAnswer): the core's figures of the
    rows it read, in the program's terms (`kinds` named, `paths` as PathSeen, `groups` as
    GroupStates, their float sums exact), and the page's whole answer in `rows()` and `columns()`,
    the rows the core leaves read by the caller's Python evaluator here: a reader never sees
    which they were."""

    def __init__(self, page: core_types.QueryPage, rows: Sequence[Sequence[Any]]) -> None:
        self._page, self._rows = page, rows
        self.kept, self.outputs, self.order = page.kept, page.outputs, page.order
        self.held: list[Any] = page.held
        self.contents: list[Any] = page.contents
        self.kinds = [(kind, n) for code, n in page.kinds if (kind := KINDS[code]) is not None]
        self.paths = [[PathSeen(seen.found, seen.miss) for seen in place] for place in page.paths]
        self.groups = [(group.key, [GroupState(state.count, state.int_sum, _float_sum(state.float_sum),
                                               state.floats, state.num_min, state.num_max, state.str_min,
                                               state.str_max, state.skipped)
                                    for state in group.accumulators])
                       for group in page.groups] if page.groups else []

    def _python(self, python: PythonReading[Result]) -> tuple[list[tuple[int, Result]], int, int]:
        """The rows the core leaves, read by `python`: (row index, result) of those it keeps, in
        the page's order, and the undecodable and cut counts of the page (the core's with
        Python's)."""
        page, rows = self._page, self._rows
        undecodable, cut = page.undecodable, page.cut
        handed = page.handed_rows
        if not handed:
            return [], undecodable, cut
        more, u, c = python([rows[k] for k in handed])
        return [(handed[j], result) for j, result in more], undecodable + u, cut + c

    def rows(self, kept: list[tuple[int, Result]],
             python: PythonReading[Result]) -> tuple[list[tuple[int, Result]], int, int, int]:
        """payload.program.PageProgramAnswer.rows."""
        more, undecodable, cut = self._python(python)
        found = sorted(kept + more, key=lambda pair: pair[0]) if more else kept
        return found, undecodable, cut, len(self.kept) + len(more)

    def columns(self, columns: list[Sequence[Any]], python: PythonReading[Sequence[Any]]
                ) -> tuple[list[int], list[Sequence[Any]], int, int]:
        """payload.program.PageProgramAnswer.columns."""
        kept = list(self.kept)
        more, undecodable, cut = self._python(python)
        if not more:
            return kept, columns, undecodable, cut
        merged = sorted([(k, j, None) for j, k in enumerate(kept)]
                        + [(k, -1, values) for k, values in more], key=lambda item: item[0])
        order = [j for _k, j, _values in merged]
        read = [values for _k, _j, values in merged if values is not None]
        return ([k for k, _j, _values in merged],
                [_merged(column, order, [values[o] for values in read]) for o, column in enumerate(columns)],
                undecodable, cut)


def _merged(column: Sequence[Any], order: list[int], python: list[Any]) -> Sequence[Any]:
    """A page's column of kept rows with the rows the Python evaluator read put in their places:
    `order[i]` a row of `column`, or -1 for the next of `python`."""
    rearranged = getattr(column, "rearranged", None)
    if rearranged is not None:  # held by the core
        merged: Sequence[Any] = rearranged(order, python)
        return merged
    others = iter(python)
    return [column[j] if j >= 0 else next(others) for j in order]


def _float_sum(encoded: bytes | None) -> Fraction:
    """A query_page group's float sum, exactly."""
    if encoded is None:
        return Fraction(0)
    return Fraction(int.from_bytes(encoded, "little", signed=True), 1 << module().FLOAT_SUM_SHIFT)


def describe_page(engine: PythonRoad, values: Sequence[bytes] | RowsSection | ArrowRows,
                  bounds: DescribeBounds, column: int | None = None) -> DescribedValues:
    """DESCRIBE PAYLOAD's page of one place's values in one call: each decoded with its tree, the
    trees walked and their paths' values sketched (describe.structure and describe.sketch's
    rules, `bounds` theirs). `values`: the values, or the server's page (pages in: a
    RowsSection) or an Arrow batch (an ArrowRows: Spark's task) and `column`, its cells read
    by the core from the page's bytes or the batch's binary array, its nulls counted. Its
    answer (DescribedValues): `encodings` and `structure` (the page's StructurePartial:
    describe.structure.Structure.from_partial merges it) of the values the core read; `views`,
    the Python engine's views of the values it hands back (failed and cut values, keys that are
    not ASCII text, numbers past 128 bits), made here, for the caller to count as it counts a
    view; `nulls`, the page's column's nulls (0 for values). Raises when the core is not
    available() or fails the call."""
    core = module()
    whole: Any = None  # what the core reads the column from: the page's bytes, Arrow's buffers
    if isinstance(values, RowsSection):
        whole = core.RowsPage(values.message, values.row_count, values.columns, values.start)
    elif isinstance(values, ArrowRows) and column is not None:
        array = values.binary(column)
        if array is None:
            raise ValueError("describe_page: an Arrow batch's column that is not binary")
        whole = core.ArrowBinary(array)
    if (whole is None) != (column is None):
        raise ValueError("describe_page: a column is named of a server's page or an Arrow batch, "
                         "and only of one")
    source: Any = values if whole is None else whole
    described = core.describe_page(core.DescribeRequest(
        source, column=column if isinstance(values, RowsSection) else None, cap=engine.cap,
        max_paths=bounds.max_paths, max_visits=bounds.max_visits, max_depth=bounds.max_depth,
        exact=bounds.exact, long_text=bounds.long_text, long_key=bounds.long_key, p=bounds.p))
    handed = described.handed_back
    views: list[BlobView] = []
    engine.forget_peeled()
    for stored, chain, sizes, payload in described.peeled:
        engine.keep_peeled(stored, chain, sizes, payload)
    if handed:
        # the values, or those rows' cells (present: the core hands back no null)
        left: list[Any] = [source[i] for i in handed] if whole is None else \
            values.column(column or 0, list(handed)) if isinstance(values, ArrowRows) else \
            core.split_page(whole, [column or 0], list(handed))[0]
        views = list(engine.views(left))
    return DescribedValues([(KINDS[e.kind] or "", e.label, e.values) for e in described.encodings],
                           described.structure, views, described.nulls)


def arrow_binary(rows: Sequence[Sequence[Any]], column: int) -> core_types.ArrowBinary | None:
    """Column `column` of an Arrow batch (an ArrowRows: Spark's task) as the core reads a blob
    column from Arrow's buffers (a place's source in measure, query and describe pages); None
    for other rows or a column that is not binary. ValueError (one line) for malformed buffers."""
    array = rows.binary(column) if isinstance(rows, ArrowRows) else None
    return None if array is None else module().ArrowBinary(array)


def arrow_cells() -> int:
    """Cells the core has read from Arrow binary arrays in this process (0 without the core)."""
    return module().arrow_cells() if available() else 0


def split_page(body: bytes, count: int, columns: int, wanted: Sequence[int],
               rows: Sequence[int] | None = None, *, start: int = 0) -> list[list[bytes | None]]:
    """The wanted columns' cells of a RESULT page's rows section (`count` rows of `columns`
    cells), each a list of bytes or None (null), by the core: of every row, or of `rows` only (in
    its order). ValueError (one line) for a malformed page; raises when the core is not available()."""
    native = module()
    return native.split_page(native.RowsPage(body, count, columns, start), list(wanted),
                             None if rows is None else list(rows))


def select_rows(body: bytes, count: int, columns: int, wanted: Sequence[int],
                rows: Sequence[int] | None = None, *, start: int = 0) -> bytes:
    """The rows section of the wanted columns of every row, or of `rows` only (each in its order),
    as a server would send it (the row count, then the cells), by the core: what the driver's own
    row parser reads. ValueError (one line) for a malformed page; raises when the core is not
    available()."""
    native = module()
    return native.select_rows(native.RowsPage(body, count, columns, start), list(wanted),
                              None if rows is None else list(rows))


def cql_columns(body: bytes, count: int, columns: int, wanted: Sequence[int], kinds: Sequence[str],
                rows: Sequence[int] | None = None, *, start: int = 0) -> list[list[Any] | None]:
    """The wanted columns' values as the driver's row parser makes them (`kinds`: each column's CQL
    type as its driver type class names it, `typename`), laid out by the core from the page's
    cells without a tuple a row: of every row, or of `rows` only (in its order). None for a column
    the core does not read (its type, an empty value, a width or text the driver reads its own
    way): the caller makes that one by the driver. ValueError (one line) for a malformed page;
    raises when the core is not available()."""
    native = module()
    return native.cql_columns(native.RowsPage(body, count, columns, start), list(wanted), list(kinds),
                              None if rows is None else list(rows))


#: The Arrow types (by pyarrow's name) whose columns of Python values the core lays out
#: (cql_array), and the C data interface's format of each.
_ARRAY_FORMATS = {"int32": "i", "int64": "l", "double": "g", "bool": "b", "string": "u"}


def cql_array(values: list[Any], arrow: str, name: str = "") -> core_types.HeldArray | None:
    """A column of Python values as the Arrow array of type `arrow` (pyarrow's name of it: int32,
    int64, double, bool, string) that `pyarrow.array(values, type)` makes, laid out by the core:
    what cql_columns laid out, or any list of exactly those Python types and None. None where the
    core is not available(), the type is another, or a value is not exactly the type's (an int
    past its bits, a bool in an int column, ...): the caller asks pyarrow."""
    format = _ARRAY_FORMATS.get(arrow)
    if format is None or not available():
        return None
    return module().cql_array(values, format, name)


def _measured_place(native: Core, page: Any, place: MeasuredPlace) -> core_types.MeasurePlace:
    """A place of measure_rows as the core's request names it: the page's column, or its values
    with their rows."""
    text, exact = place.text, place.exact_ratios
    if place.column is not None and isinstance(page, ArrowRows):  # an Arrow batch (Spark's task)
        array = None if text else page.binary(place.column)
        if array is not None:  # a blob column: the core reads its cells from Arrow's buffers
            return native.MeasurePlace(native.ArrowBinary(array), text=text, exact_ratios=exact)
        return native.MeasurePlace(page.column(place.column), text=text, exact_ratios=exact)
    if place.column is not None:
        return native.MeasurePlace(page, column=place.column, text=text, exact_ratios=exact)
    rows = None if place.rows is None else list(place.rows)
    return native.MeasurePlace(place.values, rows=rows, text=text, exact_ratios=exact)


def _units(units: core_types.Units) -> RowUnits:
    return RowUnits(units.rows, units.wcu, units.rcu, units.near_quota, units.over_quota, units.largest)


# ------------------------------------------------------------------ a page's cells

def page_cells(engine: PythonRoad, values: Sequence[bytes], text_limit: int,
               shown_text: Callable[[str, str], Shown], no_format: Callable[[bytes], Raw],
               held_view: Callable[..., BlobView]) -> list[Shown | Raw | BlobView] | None:
    """The display's cells of a page (output.display.BlobDisplay) from one core call: a clean text
    the cap did not cut is `shown_text(containers, text)` (its containers' labels joined by ">",
    "text" when none; its first `text_limit` characters, its JSON not read), a value in no known
    format `no_format(stored)`; a record, or a text with something to escape, the view of the
    core's reading of it (`held_view`, payload.held_views.HeldView: a record's tree the core's, a
    text whole, its JSON read from it where the display asks); every other value (the ones the
    core hands back, cut, failed or binary) its view, made here by the Python engine. None when
    the core fails the call (it should not)."""
    try:
        page = decode_page(values, engine.cap, want_text=True, want_tree=True, text_limit=text_limit,
                           read_json=False)
    except Exception:
        return None
    engine.take_peeled(values, page.peeled)
    texts, clean, cuts, labels, trees = page.texts, page.clean, page.cut, page.labels, page.trees
    assert texts is not None and clean is not None and trees is not None
    tree_of = trees.__getitem__  # (a record's: a text's JSON is not read on this call)
    cells: list[Shown | Raw | BlobView | None] = []
    left: list[int] = []
    for i, code in enumerate(page.kinds):
        text = texts[i]
        if code == TEXT and clean[i] and not cuts[i] and text is not None:
            cells.append(shown_text(labels[i].rpartition(">")[0] or "text", text))
        elif code == UNKNOWN:
            cells.append(no_format(values[i]))
        elif (code == TEXT or code == RECORD) and not cuts[i]:
            kind = TEXT_KIND if code == TEXT else RECORD_KIND
            cells.append(held_view(values[i], kind, labels[i], text, page.decoded[i], tree_of, i, json=False))
        else:
            cells.append(None)
            left.append(i)
    for i, view in zip(left, engine.views([values[i] for i in left]), strict=True):
        cells[i] = view
    return [cell for cell in cells if cell is not None]


# ------------------------------------------------------------------ held columns, filled

def held_values(column: core_types.HeldColumn) -> list[Any]:
    """A held path column's values as Python objects, the rows the core left to Python being the
    Python evaluator's values (filled in here, where the core's list of them is read)."""
    values: list[Any] = column.to_pylist()
    for i in column.python_rows():
        values[i] = column[i]
    return values


#: How contents_views makes a row the core read: (stored, kind, label, text, decoded size, row).
RowView = Callable[[Any, str, "str | None", "str | None", int, int], Any]


def contents_views(column: core_types.HeldContents, view: RowView,
                   python: Callable[[int, Any], Any]) -> list[Any]:
    """A HeldContents' rows as the readers of values take them (payload.columns: ColumnValues.values):
    a row the core read as `view(stored, kind, label, text, decoded size, row)` (a text's text;
    its tree and a record's on demand: held_payload), a null blob None, a row the core leaves to
    Python as `python(row, stored)` gives it (that engine's view)."""
    kinds, labels, texts, python_rows = column.texts(False)
    stored = column.stored()
    decoded = column.decoded_sizes()
    odd = set(python_rows)
    out: list[Any] = []
    for i, kind in enumerate(kinds):
        if i in odd:
            out.append(python(i, stored[i]))
        elif kind is None:
            out.append(None)
        else:
            text = texts[i] if kind == TEXT_KIND else None
            out.append(view(stored[i], kind, labels[i], text, decoded[i], i))
    return out


def held_payload(column: core_types.HeldContents, row: int) -> Any:
    """One row's payload as the core holds it, as Python objects: a JSON text's object or array
    (made from the text where the core holds it for its value; the text itself where a file of
    text read it), a record's tree."""
    _kinds, _labels, payloads, _python = column[row:row + 1].parts()
    return payloads[0]


def is_held_column(value: Any) -> bool:
    """`value` is a HeldColumn (a path's values the core holds)."""
    return hasattr(value, "python_rows") and not hasattr(value, "sizes")


def is_held_contents(value: Any) -> bool:
    """`value` is a HeldContents (a blob column's rows the core read)."""
    return hasattr(value, "python_rows") and hasattr(value, "sizes")


#: held_texts' kind for a row the core left to Python: its text is spelt by the reader's function.
SPELT = "spelt"


def held_texts(column: Any, json: bool,
               spell: Callable[[bytes], str]) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """A HeldContents' kinds, labels and payload texts (JSON text, or the CSV field when not
    `json`) with its stored values, the rows the core leaves to Python spelt here by `spell` (of
    the stored value) and their kind SPELT: a reader above sees whole columns, no row list."""
    kinds, labels, texts, python = column.texts(json)
    stored = column.stored()
    kinds, texts = list(kinds), list(texts)
    for i in python:
        kinds[i] = SPELT
        texts[i] = spell(stored[i])
    return kinds, labels, texts, stored


class HeldJson(NamedTuple):
    """A blob column the core read, as json_lines lays its values out: `head(label, kind)` the
    text before a read payload (asked once per label and kind), `texts` the text after a payload,
    raw's before and after the stored hex, no known format's before and after its hex, and a null
    blob's; `spelt` the whole value of each row the core left to Python, by its index."""

    contents: core_types.HeldContents
    head: Callable[[str, str], str]
    texts: tuple[str, str, str, str, str, str]
    raw: bool
    spelt: dict[int, str]


class HeldFound(NamedTuple):
    """A path's column the core holds (HeldColumn), as json_lines lays its values out: the core
    writes the scalars it spells as JsonSpelling.found_column does (an int within 128 bits, a
    str, a bool, None, a float: native/core/src/held.rs found_text_into); `spell` spells each
    other row's value (the Python value the column gives for it)."""

    column: core_types.HeldColumn
    spell: Callable[[Any], str]


def held_json(column: Any, head: Callable[[str, str], str], texts: tuple[str, str, str, str, str, str],
              raw: bool, spell: Callable[[bytes], str]) -> HeldJson:
    """A HeldContents as json_lines lays it out, the rows the core leaves to Python spelt here by
    `spell` (of the stored value)."""
    return HeldJson(column, head, texts, raw, {i: spell(column[i]) for i in column.python_rows()})


def json_lines(layout: list[Any], rows: int, answer: tuple[int, int] | None = None) -> bytes:
    """`rows` JSON Lines as one UTF-8 buffer, each line `layout`'s pieces one after the other: a
    str (the same every line), a list of str (one a line), a HeldJson (a blob column, its
    payloads' texts written by the core, not made into a str a row) or a HeldFound (a path's
    column, its scalars spelt by the core). `answer` (chars, items): an MCP answer's rows, the
    core's values compact (a path's lists and objects too) and a NUL in a row holding a value the
    answer cuts (a string of more than `chars` characters, a list or object of more than `items`
    entries) or spells otherwise (a record, a float JSON cannot hold)."""
    if answer is None:
        return module().json_lines(layout, rows)
    return module().json_lines(layout, rows, answer)


def answer_rows(layout: list[Any], rows: int,
                answer: tuple[int, int]) -> tuple[list[bytes | None], list[int]]:
    """json_lines() of an MCP answer's rows (`answer`: chars, items), a row at a time: each row's
    compact JSON (no newline), or None for a row holding a NUL; and each row's quotes and
    backslashes (mcp_server/sizing.py's row_cost), counted as the core writes it."""
    return module().answer_rows(layout, rows, answer)


def json_text_escaped(text: bytes) -> bytes:
    """A JSON text (UTF-8) as the inside of a JSON string: its quotes and backslashes escaped (a
    JSON text holds no raw control character)."""
    return module().json_text_escaped(text)


def _shaped(chunks: Sequence[Any], filled: dict[int, Any], limit: int, bounds: tuple[int, int, int],
            of_filled: Callable[[Any], Any]) -> list[tuple[Any, int]]:
    """One value of each shape among the first `limit` rows the core holds, with how many rows
    have its shape, and the filled rows' values (one each), in the rows' order: the values a
    sample's kinds are read from, each weighing as many values (payload.columns.sample_kind)."""
    found: list[tuple[int, Any, int]] = []
    base = 0
    for chunk in chunks:
        if base >= limit:
            break
        found += [(base + i, value, count) for i, value, count in chunk.shapes(limit - base, bounds)]
        base += len(chunk)
    found += [(i, of_filled(value), 1) for i, value in filled.items() if i < limit]
    found.sort(key=lambda item: item[0])
    return [(value, count) for _i, value, count in found]


class FilledPaths:
    """A path's values over a row group as the core holds them (chunks of HeldColumn, a page's
    kept rows each), with the rows it leaves to Python (values it hands back, or does not hold)
    spelt by `spell` here (render.parquet_columns spells them as an export writes a path's
    value) and laid out by the core with the others: a reader above gets the whole column."""

    def __init__(self, chunks: Sequence[core_types.HeldColumn], spell: Callable[[Any], Any]) -> None:
        self.chunks = list(chunks)
        #: The Python rows' values as written, by their index over the chunks.
        self._filled: dict[int, Any] = {}
        base = 0
        for chunk in self.chunks:
            for i in chunk.python_rows():
                self._filled[base + i] = spell(chunk[i])
            base += len(chunk)

    def sample(self, limit: int, bounds: tuple[int, int, int]) -> list[tuple[Any, int]]:
        """The values the first `limit` rows' kinds are read from: one of each shape (`bounds`:
        payload.arrow_types.SHAPE_BOUNDS) with how many rows have it, in order."""
        return _shaped(self.chunks, self._filled, limit, bounds, lambda value: value)

    def array(self, kind: core_types.KindSpec, name: str) -> tuple[core_types.HeldArray | None, list[Any]]:
        """The column laid out by the core in `kind` (held_array): the array, or None and the
        values that do not fit it."""
        return module().held_array(self.chunks, kind, name, self._filled or None)

    def set(self, row: int, value: Any) -> None:
        """Row `row` given another value (a misfit's, payload.columns)."""
        self._filled[row] = value


class FilledContents:
    """A blob column's six export columns over a row group (payload, label, kind, note, stored,
    confidence) from the core's reading of its values (chunks of HeldContents), with the rows it
    leaves to Python (values it hands back, cut, binary or failed, records the Python side spells)
    given their six parts by `parts` (of the value's view; render.parquet_columns.Splitter.blob_parts)
    here, and laid out by the core with the others: a reader above gets whole columns. The core's
    own rows are auto-detected: their confidence is payload.confidence's of their label and kind."""

    def __init__(self, chunks: Sequence[core_types.HeldContents],
                 parts: Callable[[Any], tuple[Any, Any, Any, Any, Any, Any]], raw: bool,
                 known: Sequence[Mapping[int, Any]] = ()) -> None:
        self.chunks = list(chunks)
        self.raw = raw
        self._filled: dict[int, tuple[Any, Any, Any, Any, Any, Any]] = {}
        base = 0
        for at, chunk in enumerate(self.chunks):
            views = known[at] if at < len(known) else {}
            for i in chunk.python_rows():  # (their views made already, where a reading made them)
                self._filled[base + i] = parts(views.get(i, chunk[i]))
            base += len(chunk)

    def values(self, part: int, limit: int | None = None) -> list[Any]:
        """One of the six columns (0 payload, 1 label, 2 kind, 3 note, 4 stored, 5 confidence) as Python
        objects, as render.parquet_columns.Splitter.blob_columns gives them (the first `limit`
        rows)."""
        out: list[Any] = []
        base = 0
        for chunk in self.chunks:
            if limit is not None and len(out) >= limit:
                break
            kinds, labels, payloads, python = chunk.parts(None if limit is None else limit - len(out))
            stored = chunk.stored() if part == 4 else None
            odd = set(python)
            for i, kind in enumerate(kinds):
                if i in odd:
                    out.append(self._filled[base + i][part])
                elif kind is None:  # a null blob
                    out.append(None)
                elif part == 0:
                    out.append(payloads[i])
                elif part == 1:
                    out.append(labels[i])
                elif part == 2:
                    out.append(kind)
                elif part == 3:
                    out.append(None)
                elif part == 5:
                    out.append(confidence_of(labels[i], kind))
                else:
                    assert stored is not None
                    out.append(stored[i] if self.raw or kind == UNKNOWN_KIND else None)
            base += len(chunk)
        return out

    def sample(self, limit: int, bounds: tuple[int, int, int]) -> list[tuple[Any, int]]:
        """The payloads the first `limit` rows' kinds are read from: one of each shape with how
        many rows have it, in order."""
        return _shaped(self.chunks, self._filled, limit, bounds, lambda parts: parts[0])

    def arrays(self, kind: core_types.KindSpec, name: str
               ) -> tuple[list[core_types.HeldArray] | None, list[Any]]:
        """The six columns laid out by the core, the payload in `kind` (contents_arrays): the
        arrays, or None and the payloads that do not fit it."""
        return module().contents_arrays(self.chunks, kind, name, self.raw, confidence_of,
                                        self._filled or None)

    def set(self, row: int, parts: tuple[Any, Any, Any, Any, Any, Any]) -> None:
        """Row `row` given other parts (a misfit's, payload.columns)."""
        self._filled[row] = parts

    def stored(self, row: int) -> bytes:
        chunk, i = self._chunk_row(row)
        value = chunk[i]  # (a row the Python engine read: its view)
        return value.stored if isinstance(value, BlobView) else bytes(value)

    def label_kind(self, row: int) -> tuple[Any, Any]:
        if row in self._filled:
            parts = self._filled[row]
            return parts[1], parts[2]
        chunk, i = self._chunk_row(row)
        kinds, labels, _payloads, _python = chunk[i:i + 1].parts()
        return labels[0], kinds[0]

    def confidence(self, row: int) -> str | None:
        """The row's confidence: the Python side's part, or the core's row's by its label and kind."""
        if row in self._filled:
            sure: str | None = self._filled[row][5]
            return sure
        return confidence_of(*self.label_kind(row))

    def _chunk_row(self, row: int) -> tuple[Any, int]:
        for chunk in self.chunks:
            if row < len(chunk):
                return chunk, row
            row -= len(chunk)
        raise IndexError(row)


def hold_page(values: Sequence[Any], cap: int, text_trees: bool = True,
              text_gaps: bool = False) -> core_types.HeldContents:
    """A page of a blob column's stored values read by the core, held (an export's blob column
    the query did not read: render.parquet_columns). `text_trees`: a JSON text held for its value
    (its arrays laid out from its text, a Python value made of it where asked); False: a file of
    text, which writes it as text; `text_gaps`: then its whitespace runs noted (JSON Lines), as
    query_page's. Raises when the core fails the call."""
    return module().hold_page(values, cap, text_trees, text_gaps)


# ------------------------------------------------------------------ the engine's page on the core

def read_page(engine: PythonRoad, values: Sequence[bytes], request: ReadRequest) -> PageRead | None:
    """The engine's read_page() on the native core: one call for the page, the values it hands
    back read by the Python engine (`engine`) as its own road reads them, then the page's hits
    and misses counted as that road counts them (in order, rejected values left out). None when
    the core fails the call (it should not): the Python engine reads the page."""
    n, paths = len(values), request.paths
    views = request.views
    # The needle tests, as the Python road takes them (not with views: _read_view has none).
    rejecters = [] if views else [rejects for p, rejects in enumerate(request.needles)
                                  if rejects is not None and p in request.known]
    # LIKE on the bare column (ReadRequest.text) renders each record's tree: the core's, then.
    try:
        core = decode_page(values, engine.cap, paths, want_text=request.text or bool(rejecters),
                                  want_tree=request.text, missing=MISSING)
    except Exception:
        return None
    page = PageRead(n, len(paths))
    kinds: list[Any] = list(map(KINDS.__getitem__, core.kinds))
    cuts = list(map(bool, core.cut))
    page.kinds, page.cut = kinds, cuts
    handed = core.handed_back
    rejected = page.rejected
    # The core's own columns stay as it answered them (its misses were counted on them).
    answered = [column.values for column in core.paths]
    columns = [list(column) for column in answered] if handed or rejecters else answered
    page.columns = columns
    texts = core.texts
    if rejecters:
        assert texts is not None
        for i, code in enumerate(core.kinds):
            text = texts[i]
            if code == TEXT and not cuts[i] and text is not None:
                if any(rejects(text) for rejects in rejecters):
                    rejected[i] = True  # as the Python road: its paths are not read
                    for column in columns:
                        column[i] = None
    # The values handed back, read by the Python road as a page of their own: their trees (the
    # others' made on demand), and their views where asked.
    made: dict[int, Any] = {}
    own_views: dict[int, BlobView] = {}
    if handed:
        engine.take_peeled(values, core.peeled)
        own = engine.read_page([values[i] for i in handed], request, core=False)
        for j, i in enumerate(handed):
            kinds[i], cuts[i], rejected[i], made[i] = own.kinds[j], own.cut[j], own.rejected[j], own.trees[j]
            if request.text and texts is not None:
                texts[i] = own.texts[j]
            for column, found in zip(columns, own.columns, strict=True):
                column[i] = found[j]
        if views:
            own_views = dict(zip(handed, own.views, strict=True))
    page.texts = texts if request.text and texts is not None else []
    trees = core.trees
    page.trees = Lazy(n, lambda i: made[i] if i in made
                      else _tree_at(engine, page, values, i, request, trees))
    if views:
        page.views = Lazy(n, lambda i: own_views[i] if i in own_views else engine.view(values[i]))
    if paths:
        _count_paths(engine, page, request, core, answered, set(handed), values)
    return page


def _tree_at(engine: PythonRoad, page: PageRead, values: Sequence[bytes], i: int, request: ReadRequest,
             trees: list[Any] | None) -> Any:
    """PageRead.trees[i] of a value the core answered, as the Python road would have kept it:
    the core's tree when it gave them (the same, tests/native), else made by the Python engine
    (only readers that request pay for a tree)."""
    kind = page.kinds[i]
    if page.cut[i] or page.rejected[i] or (kind != TEXT_KIND and kind != RECORD_KIND):
        return None
    if not request.paths and (request.views or kind == TEXT_KIND):
        return None
    if trees is not None:
        return trees[i]
    token = budget.enter(engine.budget)
    try:
        kind, _cut, found = engine.content(values[i])
        return tree_of(kind, found, request.paths, request.views)
    finally:
        budget.leave(token)


def _count_paths(engine: PythonRoad, page: PageRead, request: ReadRequest, core: core_types.DecodedPage,
                 answered: list[list[Any]], handed: set[int], values: Sequence[bytes]) -> None:
    """PageRead.found and PageRead.missed as the Python road counts them: a path is found by the
    first readable value (not rejected) that has it; the misses are those of the readable
    values before it. The core's miss is that one when it counted the same values (no value
    handed back or rejected among them); else the misses are read again here, in order."""
    kinds, cuts, rejected, columns = page.kinds, page.cut, page.rejected, page.columns
    n = len(kinds)
    # The core's lists, taken once: each reading of one of them builds all of it anew.
    core_kinds, core_cut, core_paths = core.kinds, core.cut, core.paths
    #: Each value's tree, made once for all the paths read again (20,000 paths: once, not 20,000 times).
    trees: dict[int, Any] = {}
    for p, steps in enumerate(request.paths):
        column, own = columns[p], answered[p]
        misses: list[int] = []
        first = n
        for i in range(n):
            kind = kinds[i]
            if cuts[i] or rejected[i] or (kind != TEXT_KIND and kind != RECORD_KIND):
                continue
            value = column[i]
            if not steps or (value is not MISSING and value is not CUT):
                first = i
                break
            if value is MISSING:
                misses.append(i)
        if first < n:
            page.found[p] = True
            request.known.add(p)
        if not misses:
            continue
        # The values whose misses the core counted: those it answered, read, before its first hit.
        counted: list[int] = []
        for i in range(n):
            code = core_kinds[i]
            if i in handed or core_cut[i] or (code != TEXT and code != RECORD):
                continue
            if own[i] is not MISSING:
                break
            counted.append(i)
        miss = core_paths[p].miss
        if counted == misses and miss is not None:
            page.missed[p] = (miss.depth, miss.key, set(miss.keys))
            continue
        token = budget.enter(engine.budget)
        try:
            for i in misses:
                if i not in trees:
                    kind, _cut, found = engine.content(values[i])
                    trees[i] = tree_of(kind, found, request.paths, False)
                _value, depth, parent = read_path(trees[i], steps)
                note_miss(page.missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
        finally:
            budget.leave(token)
