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
readers) is mirrored in Rust; a container or record format the mirror does not know makes the core
refuse the configuration, and the Python engine runs alone (`refusal()` says why).

    page = decode_page(values, cap, paths=[("order", "status"), ("items", 0)],
                       want_text=False, want_tree=False, missing=MISSING)

gives, per value (columns, in the order of `values`):

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
- `texts[i]` (want_text): a TEXT value's text, else None;
- `trees[i]` (want_tree): a TEXT value's JSON object or array, a RECORD's tree, else None;
- per path, `paths[p].values[i]`: the Python object at that path of a readable value (TEXT or
  RECORD, not cut: its JSON container or record, or the text itself when it is no JSON), `missing`
  when it lacks the path, None for any other value; `paths[p].found`: some value had the path;
  `paths[p].miss`: the deepest miss of the values read before the first that had the path, as
  the engine's Page.missed records it (depth, key wanted, the string keys of the mapping there,
  at most 200), None when there was none;
- `handed_back`: the indexes of the values the core leaves to the Python engine (their columns
  hold placeholders: kind HANDED_BACK, label "", None), with the reason-bearing cases among them:
  a serialization stream, a record format only Python reads, a nested layer that failed or found
  the cap reached, a value past the node budget, UTF-16 text, and any value a reader doubts.

A FAILED value's reason is not given: a reader that shows it asks the Python engine for the view.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.measures import STORED, TEXT_CHAIN, MeasuredPlace, Measurer, MeasureSpec, PageMeasures
from cqlsh_ext.payload.pages import MISS_KEYS, Lazy, PageRead, ReadRequest, note_miss, path_of, tree_of
from cqlsh_ext.payload.paths import CUT, MISSING, keys_of, read_path
from cqlsh_ext.payload.view import FAILED as FAILED_KIND
from cqlsh_ext.payload.view import KINDS as VIEW_KINDS
from cqlsh_ext.payload.view import RECORD as RECORD_KIND
from cqlsh_ext.payload.view import TEXT as TEXT_KIND
from cqlsh_ext.payload.view import BlobView

MODULE = "cqlsh_ext_native"
#: `CQLSH_EXT_NATIVE=0` runs the Python engine alone.
ENV = "CQLSH_EXT_NATIVE"

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


class PathColumn(NamedTuple):
    """One path's answer in a DecodedPage: its value in each value, whether some value had it,
    the deepest miss before the first that had it (depth, the key wanted, the keys there)."""

    values: list[Any]
    found: bool
    miss: tuple[int, str | int, tuple[str, ...]] | None


class DecodedPage(NamedTuple):
    """decode_page()'s answer (the module doc describes each field)."""

    kinds: bytes
    labels: list[str]
    stored: list[int]
    decoded: list[int]
    cut: bytes
    texts: list[str | None] | None
    trees: list[Any] | None
    paths: list[PathColumn]
    handed_back: list[int]


class PythonRoad(Protocol):
    """What the core's adapter uses of the Python engine (payload.engine.ValueEngine) for the
    values the core hands back."""

    cap: int
    budget: Budget

    def content(self, value: bytes) -> tuple[str, bool, Any]: ...

    def view(self, value: bytes) -> BlobView: ...


_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def _config() -> dict[str, object]:
    """The registry's data the core reads (its container labels, grades and order; the
    thresholds and budgets; the record formats auto-detection tries, in order)."""
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
        "signature": [fmt.label for fmt in order["signature"]],
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
        "printable_bmp": bytes(map(str.isprintable, "".join(map(chr, range(0x10000))))),
        "stats": _stats_config(),
    }


def _stats_config() -> dict[str, object]:
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


#: A place of query_page: (values or rows, the column or None, its paths, its needles).
CorePlace = tuple[Any, "int | None", "list[tuple[str | int, ...]]", "list[tuple[bool, list[str]]]"]


class Core(Protocol):
    """What the adapter calls of the core's module: checked by mypy against the module's stub
    (native/cqlsh_ext_native.pyi), which describes each answer's fields."""

    FLOAT_SUM_SHIFT: int

    def configure(self, config: dict[str, Any]) -> None: ...

    def decode_page(self, values: Any, cap: int, paths: list[tuple[str | int, ...]], want_text: bool,
                    want_tree: bool, missing: Any, measure: bool = ...) -> core_types.DecodedPage: ...

    def measure_page(self, rows: int, places: list[tuple[Any, int | None, list[int] | None, bool, bool]],
                     cap: int, from_headers: bool,
                     spec: tuple[list[int], list[int], float, int, tuple[int, int], int, float]
                     ) -> core_types.MeasuredPage: ...

    def query_page(self, rows: int,
                   places: list[CorePlace],
                   conditions: list[tuple[str, int, int | None, list[tuple[Any, ...]]]],
                   outputs: list[tuple[int, int] | None], order: list[tuple[int, int] | None],
                   keys: list[tuple[int, int]], aggregates: list[tuple[str, bool, tuple[int, int] | None]],
                   grouped: bool, cap: int, undecodable_group: Any) -> core_types.QueryPage: ...

    def describe_page(self, values: Any, cap: int,
                      bounds: tuple[int, int, int, int, int, int, int]) -> core_types.DescribedPage: ...


if TYPE_CHECKING:
    import cqlsh_ext_native as core_types

    #: The stub describes a module that is a Core (mypy checks the assignment).
    _STUB: Core = core_types


def module() -> Core:
    """The configured native module (available() must be True)."""
    found: Core | None = _load()
    if found is None:
        raise RuntimeError(f"the native value engine does not run: {refusal()}")
    return found


def decode_page(values: Sequence[bytes], cap: int, paths: Sequence[Sequence[str | int]] = (), *,
                want_text: bool = False, want_tree: bool = False, missing: Any = ABSENT,
                measure: bool = False) -> DecodedPage:
    """One call for a page of one column's values (see the module docstring). Values that are
    not `bytes` are handed back. Raises RuntimeError when the core is not available().
    `measure` (COMPRESSION STATS): the containers only; a payload under a container is not read
    (BINARY, its label's reading "binary"), no paths, texts or trees."""
    page = module().decode_page(values, cap, [tuple(p) for p in paths], want_text, want_tree, missing,
                                measure)
    return DecodedPage(page.kinds, page.labels, page.stored, page.decoded, page.cut, page.texts, page.trees,
                       [PathColumn(*column) for column in page.paths], page.handed_back)


def measure_rows(page: Sequence[Sequence[Any]], places: Sequence[MeasuredPlace], spec: MeasureSpec, cap: int,
                 engines: Sequence[Measurer]) -> PageMeasures | None:
    """COMPRESSION STATS' answer for a page from one call to the core (payload.engine's
    measure_rows), the values it hands back measured by their place's Python engine and added,
    with their rows' units. None when the core fails the call (it should not): the Python road
    answers."""
    from cqlsh_ext.payload.measures import PlaceMeasures, RowUnits

    try:
        args: list[tuple[Any, int | None, list[int] | None, bool, bool]] = [
            (page, place.column, None, place.text, place.exact_ratios) if place.column is not None
            else (place.values, None, list(place.rows) if place.rows is not None else None, place.text,
                  place.exact_ratios)
            for place in places]
        core = module().measure_page(len(page), args, cap, spec.from_headers,
                                     (list(spec.bucket_bounds), list(spec.size_bounds), spec.median_inv_step,
                                      spec.median_zero, spec.units, spec.row_quota, spec.near_share))
    except Exception:
        return None
    answer = PageMeasures([], RowUnits(*core.before), RowUnits(*core.after))
    # The rows holding a value handed back: (decompressed, stored) bytes so far.
    left = {row: [before, after] for row, before, after in core.rows_left}
    for p, (place, column) in enumerate(zip(places, core.columns, strict=True)):
        counters = PlaceMeasures(
            column.values, column.nulls, column.stored, column.size, column.inexact, column.from_headers,
            {(status, chain): [n, stored, size] for status, chain, n, stored, size in column.chains},
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


class QueryPlace(NamedTuple):
    """A place a payload query reads, for query_page: its values (`values`), or the page's column
    `column`; the paths it reads; the needles of its conditions, (any, strings): a JSON text that
    cannot hold any (all) of the strings verbatim is not parsed (a condition fails on it)."""

    column: int | None
    values: Sequence[Any] | None
    paths: Sequence[Sequence[str | int]]
    needles: Sequence[tuple[bool, Sequence[str]]] = ()


def query_page(page: Sequence[Sequence[Any]], places: Sequence[QueryPlace],
               conditions: Sequence[tuple[str, int, int | None, Sequence[tuple[Any, ...]]]],
               outputs: Sequence[tuple[int, int] | None], order: Sequence[tuple[int, int] | None],
               keys: Sequence[tuple[int, int]],
               aggregates: Sequence[tuple[str, bool, tuple[int, int] | None]], grouped: bool, cap: int,
               undecodable_group: Any) -> Any:
    """One call for a payload query's page (query.evaluate compiles the plan into these): the
    places' values decoded, the conditions tested, and the rows kept with their projected path
    values, or the page's per-group partial results. Its answer's fields: `kept` and
    `handed_rows` (row indexes: the rows the core leaves to the Python evaluator), `outputs` and
    `order` (per projected path, its value in each kept row), `undecodable`, `cut`, `kinds`
    ((kind code, count): KINDS names them), `paths` (per place and path: (found, (depth, keys)
    of the deepest miss or None)), `groups` ((key, per aggregate (count, int sum, float sum as
    little-endian two's complement bytes over 2**FLOAT_SUM_SHIFT or None, floats, num_min,
    num_max, str_min, str_max, skipped))), `overflow` (a sum past 128 bits: Python reads the
    page). Raises when the core is not available() or the arguments are not its own."""
    args = [(page if place.column is not None else place.values, place.column,
             [tuple(p) for p in place.paths], [(any_of, list(strings)) for any_of, strings in place.needles])
            for place in places]
    conds = [(op, p, path, list(lits)) for op, p, path, lits in conditions]
    return module().query_page(len(page), args, conds, list(outputs), list(order), list(keys),
                               list(aggregates), grouped, cap, undecodable_group)


def float_sum(encoded: bytes | None) -> Fraction:
    """A query_page group's float sum, exactly."""
    if encoded is None:
        return Fraction(0)
    return Fraction(int.from_bytes(encoded, "little", signed=True), 1 << module().FLOAT_SUM_SHIFT)


def describe_page(values: Sequence[bytes], cap: int, bounds: tuple[int, int, int, int, int, int, int]) -> Any:
    """DESCRIBE PAYLOAD's page of one place's values in one call: each decoded with its tree, the
    trees walked and their paths' values sketched (describe.structure and describe.sketch's
    rules, `bounds` theirs: MAX_PATHS, MAX_VISITS, MAX_DEPTH, EXACT, LONG_TEXT, LONG_KEY, P). Its
    answer: `encodings` ((kind code, label, values): KINDS names the codes), `handed_back` (the
    indexes of the values left to the Python engine: failed and cut values, keys that are not
    ASCII text, numbers past 128 bits), `structure` (the page's partial structure: the describe
    package rebuilds it, describe.structure.Structure.from_partial)."""
    return module().describe_page(values, cap, bounds)


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
    # Trees the Python engine made for the values handed back (the others' on demand).
    made: dict[int, Any] = {}
    if handed:
        token = budget.enter(engine.budget)
        try:
            for i in handed:
                try:
                    kind, cut, found = engine.content(values[i])
                except Exception:  # the boundary of one value, as in the Python road
                    kind, cut, found = FAILED_KIND, False, None
                kinds[i], cuts[i] = kind, cut
                if texts is not None:
                    texts[i] = found if kind == TEXT_KIND else None
                if cut or (kind != TEXT_KIND and kind != RECORD_KIND):
                    made[i] = None
                    continue
                if kind == TEXT_KIND and any(rejects(found) for rejects in rejecters):
                    rejected[i], made[i] = True, None
                    continue
                tree = made[i] = tree_of(kind, found, paths, views)
                for p, steps in enumerate(paths):
                    columns[p][i] = path_of(tree, found if kind == TEXT_KIND else None, steps)
        finally:
            budget.leave(token)
    page.texts = texts if request.text and texts is not None else []
    trees = core.trees
    page.trees = Lazy(n, lambda i: made[i] if i in made
                      else _tree_at(engine, page, values, i, request, trees))
    if views:
        page.views = Lazy(n, lambda i: engine.view(values[i]))
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


def _count_paths(engine: PythonRoad, page: PageRead, request: ReadRequest, core: DecodedPage,
                 answered: list[list[Any]], handed: set[int], values: Sequence[bytes]) -> None:
    """PageRead.found and PageRead.missed as the Python road counts them: a path is found by the
    first readable value (not rejected) that has it; the misses are those of the readable
    values before it. The core's miss is that one when it counted the same values (no value
    handed back or rejected among them); else the misses are read again here, in order."""
    kinds, cuts, rejected, columns = page.kinds, page.cut, page.rejected, page.columns
    n = len(kinds)
    core_kinds, core_cut = core.kinds, core.cut
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
        miss = core.paths[p].miss
        if counted == misses and miss is not None:
            page.missed[p] = (miss[0], miss[1], set(miss[2]))
            continue
        token = budget.enter(engine.budget)
        try:
            for i in misses:
                kind, _cut, found = engine.content(values[i])
                tree = tree_of(kind, found, request.paths, False)
                _value, depth, parent = read_path(tree, steps)
                note_miss(page.missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
        finally:
            budget.leave(token)
