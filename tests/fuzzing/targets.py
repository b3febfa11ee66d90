"""Fuzz targets: one definition per entry point that reads hostile bytes, shared by both engines.

A target is a function of one input (bytes) that calls the code the way the shell does and checks
the invariant, raising `Violation` (or letting an unexpected exception escape) when it breaks:

- no exception escapes but the API's documented error (`DecodeError` from the codec layer,
  `PayloadError` from the payload formats), and none at all from what prints a value (the display
  in a table and under EXPAND, the JSON and CSV writers, INSPECT, ADVISE's sampling): they must
  return the value shown some way, with a one-line reason when it is not decoded;
- what comes out stays bounded: decoded bytes at most the output cap, rendered text at most
  `render_bound(cap)` characters.

The list is derived from the registries (cqlsh_ext.codecs.registry's formats and codec names,
cqlsh_ext.payload.formats.declarations()), so a new codec, container or payload format gets its
targets without editing this file. Engines: tests/fuzzing/engines.py (atheris when installed,
Hypothesis otherwise); the short run is tests/fuzzing/test_fuzz_short.py, the long one tools/fuzz.py.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import CODEC_NAMES, DecodeError
from cqlsh_ext.codecs.capabilities import Checksums, Headers, HeaderSized
from cqlsh_ext.payload.formats import declarations as payload_declarations
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.settings.output_formats import output_format

CORPUS = Path(__file__).resolve().parent / "corpus"

#: A per-format mutation (pickle_ops.mutate): a new input from one of its format, or None when
#: the input is not of its format.
Mutation = Callable[[bytes, random.Random], "bytes | None"]

#: The output cap the targets run with: the setting's default (-o / cqlshrc output cap), as a
#: user who changed nothing has it.
CAP = DisplaySettings().cap
#: Characters a rendered value may take beyond twice the cap: the label, the notes, a reason.
RENDER_SLACK = 64 << 10


def render_bound(cap: int = CAP) -> int:
    """The most characters one value may render to, whatever the path (table, EXPAND, JSON, CSV,
    INSPECT): the hex of a whole capped payload (2 characters per byte) and its label and notes.

    The per-value budget ("no value renders more than N characters") is the code's own statement of
    this; this bound is what the tests hold the code to, derived from the same output cap, so a
    budget of N <= 2 * cap passes it and a value that renders a multiple of the cap does not.
    """
    return 2 * cap + RENDER_SLACK


class Violation(AssertionError):
    """A target's invariant broke: str() says which and by how much."""


def bounded(what: str, text: str, cap: int = CAP) -> str:
    bound = render_bound(cap)
    if len(text) > bound:
        raise Violation(f"{what}: {len(text):,} characters rendered, bound {bound:,}")
    return text


def one_line(what: str, reason: str | None) -> None:
    if reason is not None and "\n" in reason:
        raise Violation(f"{what}: reason is not one line: {reason[:200]!r}")


@dataclass(frozen=True)
class Target:
    name: str
    #: One input: returns normally when the invariant holds, else raises.
    run: Callable[[bytes], None]
    #: Corpus directories (under corpus/) whose files seed this target.
    seeds: tuple[str, ...]
    #: One line for tools/fuzz.py --list.
    doc: str
    #: Seeds built from the corpus another way (display-spec prefixes the setting to use).
    make_seeds: Callable[[], list[bytes]] | None = None
    #: Mutations that know the structure of its inputs' formats (engines.py applies them).
    mutate: Mutation | None = None

    def seed_inputs(self) -> list[bytes]:
        if self.make_seeds is not None:
            return self.make_seeds()
        out: list[bytes] = []
        for name in self.seeds:
            out.extend(p.read_bytes() for p in sorted((CORPUS / name).rglob("*")) if p.is_file())
        return out


# ------------------------------------------------------------------------------------- codec layer


def _check_decoded(what: str, decoded: Any, cap: int) -> None:
    if len(decoded.data) > cap:
        raise Violation(f"{what}: {len(decoded.data):,} bytes decoded, cap {cap:,}")


def _detection(data: bytes) -> None:
    from cqlsh_ext.payload.unwrap import unwrap, walk

    registry.detect(data)
    registry.detect(data, signatures_only=True)
    registry.signature_matches(data[:16])
    try:
        found = registry.decode_auto(data, CAP)
    except DecodeError:
        found = None
    if found is not None:
        _check_decoded(f"decode_auto ({found[0].label})", found[1], CAP)
    for view in (walk(data, "auto", CAP), unwrap(data, "auto", CAP)):
        total = sum(layer.output_size for layer in view.layers if layer.fmt is not None)
        if total > CAP:
            raise Violation(f"unwrap: {total:,} bytes decoded over all layers, cap {CAP:,}")
        one_line("unwrap", view.reason)


def _codec(codec: str) -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        try:
            fmt, decoded = registry.decode_named(codec, data, CAP)
        except DecodeError as err:
            one_line(f"decode_named({codec!r})", str(err))
            return
        _check_decoded(f"decode_named({codec!r}) as {fmt.label}", decoded, CAP)

    return run


def _container(fmt: Any) -> Callable[[bytes], None]:
    """Every method of one Container (container variant) that reads a stored value: the core's, and
    those of the capabilities it has (codecs.capabilities), as the registry, STATS and INSPECT call
    them."""

    def run(data: bytes) -> None:
        fmt.matches(data)  # documented: never raises
        fmt.ruled_out(data)  # never raises
        fmt.early(data)
        if isinstance(fmt, HeaderSized):
            fmt.declared_size(data)  # never raises
            fmt.peek(data, 64)  # None when it fails
        if isinstance(fmt, Headers):
            try:
                fmt.headers(data)
            except DecodeError:
                pass
        error = None
        try:
            decoded = fmt.decode(data, CAP)
        except DecodeError as err:
            decoded, error = None, str(err)
            one_line(f"{fmt.label}.decode", error)
        else:
            _check_decoded(f"{fmt.label}.decode", decoded, CAP)
        if isinstance(fmt, Checksums):
            try:  # may raise on a value it cannot walk (insight.checksums says so): bounded is all
                fmt.verify(data, decoded, CAP, error)
            except Exception:
                pass
        try:
            trial = fmt.trial(data, registry.TRIAL_MIN_CAP)
        except DecodeError:
            trial = None
        if trial is not None:
            _check_decoded(f"{fmt.label}.trial", trial, max(CAP, registry.TRIAL_MIN_CAP))

    return run


# ----------------------------------------------------------------------------------- payload layer


def _payload(name: str) -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        from cqlsh_ext.payload import formats
        from cqlsh_ext.payload.formats.tree import jsonable, render

        reader = formats.get(name)
        assert reader is not None, name
        reader.maybe(data)  # a cheap look: never raises
        if reader.detector is not None:
            try:
                reader.detector(data)
            except formats.PayloadError:
                pass
        try:
            tree = formats.decode_named(name, data)
        except formats.PayloadError as err:
            one_line(f"{name} decoder", str(err))
            return
        reader.label(data)  # the chain's label, asked of a value that decoded
        # The tree is rendered by the display (compact and indented) and written by JSON output.
        bounded(f"{name}: render", render(tree))
        bounded(f"{name}: render under EXPAND", render(tree, indent=2))
        bounded(f"{name}: JSON", json.dumps(jsonable(tree), ensure_ascii=False))

    return run


# ----------------------------------------------------------------------- what prints a value


def _display(expanded: bool) -> Callable[[bytes], None]:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.upstream import seams

    plain, color = seams.value_colormap(False), seams.value_colormap(True)
    # As a script gets it (no width limit: the worst case) and as a terminal does (cut to 500).
    script = BlobDisplay(DisplaySettings(), False, expanded)
    terminal = BlobDisplay(DisplaySettings(), True, expanded, 120)
    what = "EXPAND" if expanded else "table"

    def run(data: bytes) -> None:
        # A blob column, then a blob inside a collection (quoted as cqlsh quotes strings there).
        bounded(f"display ({what})", script(data, plain).strval)
        bounded(f"display ({what}, in a collection)", script(data, plain, quote=True).strval)
        cell = terminal(data, color)
        bounded(f"display ({what}, terminal)", cell.coloredval)
        if not expanded and "\n" in cell.strval:
            lines = cell.strval.count("\n") + 1
            raise Violation(f"display (table, terminal): a table cell of {lines} lines")

    return run


def _json_output(data: bytes) -> None:
    from cqlsh_ext.output.spellings import JsonSpelling

    for raw in (False, True):
        text = JsonSpelling(DisplaySettings(output_format=output_format("json"), raw_blobs=raw)).value(data)
        bounded("JSON output", text, CAP)
        try:
            json.loads(text)
        except ValueError as err:
            raise Violation(f"JSON output is not JSON: {err}") from None
        if "\n" in text:
            raise Violation("JSON output: a value spans lines (JSON Lines needs one)")


def _csv_output(data: bytes) -> None:
    from cqlsh_ext.output.spellings import CsvSpelling

    bounded("CSV output", CsvSpelling(DisplaySettings(output_format=output_format("csv"))).value(data))


#: Column settings (DECODE, [cqlsh_ext.decode]) the display-spec target picks from with its input's
#: first byte: every payload format and codec by itself, and each payload format under gzip.
SPECS: tuple[str, ...] = (*payload_declarations(), *CODEC_NAMES, "text", "hex", "gzip>auto",
                          *(f"gzip>{name}" for name in payload_declarations()))


def _display_spec(data: bytes) -> None:
    """A value under a column setting (payload.unwrap.unwrap_spec), in every output."""
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.upstream import seams

    if not data:
        return
    spec, value = SPECS[data[0] % len(SPECS)], data[1:]
    place = ValuePlace("ks", "t", "c")
    plain = seams.value_colormap(False)
    for expanded in (False, True):
        settings = DisplaySettings(columns={"ks.t.c": spec})
        cell = BlobDisplay(settings, False, expanded)(value, plain, place=place)
        bounded(f"display ({spec}, {'EXPAND' if expanded else 'table'})", cell.strval)
    settings = DisplaySettings(output_format=output_format("json"), columns={"ks.t.c": spec})
    text = bounded(f"JSON output ({spec})", JsonSpelling(settings).value(value, None, place))
    try:
        json.loads(text)
    except ValueError as err:
        raise Violation(f"JSON output ({spec}) is not JSON: {err}") from None
    bounded(f"CSV output ({spec})", CsvSpelling(settings).value(value, None, place))


def _spec_seeds() -> list[bytes]:
    """Each seed behind the first byte that names its own setting (payload/NAME -> NAME,
    codec/NAME -> NAME), so generated inputs start from values the setting fits."""
    out = []
    for folder in ("payload", "codec"):
        for path in sorted((CORPUS / folder).rglob("*")):
            name = path.parent.name
            if path.is_file() and name in SPECS:
                out.append(bytes([SPECS.index(name)]) + path.read_bytes())
    return out


def _inspect(data: bytes) -> None:
    from cqlsh_ext.insight.inspect import inspect_value

    report = inspect_value(data, {"row": 1, "key": {"id": 1}, "column": "c"}, "auto", CAP)
    bounded("INSPECT", "\n".join(report.render()))
    bounded("INSPECT (JSON)", json.dumps(report.to_json()))
    one_line("INSPECT", report.reason)


def _advise(data: bytes) -> None:
    from cqlsh_ext.insight.advise import AdviseSample
    from cqlsh_ext.payload.engine import ValueEngine

    sample = AdviseSample(4, "auto", CAP)
    sample.add("c", data)
    for payloads, _, _, _ in sample.columns.values():
        for payload in payloads:
            if len(payload) > CAP:
                raise Violation(f"ADVISE sample: a payload of {len(payload):,} bytes, cap {CAP:,}")
    # COMPRESSION STATS' per-value path, which ADVISE's scan shares.
    status, _, size, exact, reason = ValueEngine(cap=CAP).measure(data, from_headers=True)
    one_line("COMPRESSION STATS' measure", reason)


def _native(data: bytes) -> None:
    """The native core against the Python engine on one value (tests/fuzzing/native_diff.py),
    under the default cap and one that cuts layers; a page of the value and a variant of it, so
    what one value leaves behind (contexts, memory) meets the next; then the engine's page
    answers on that page, both roads (tests/fuzzing/page_diff.py: read_page, measure_rows)."""
    import os

    from cqlsh_ext.payload import native

    from .native_diff import both
    from .page_diff import differential

    if not native.available():
        if os.environ.get("CI") == "true" and os.environ.get(native.ENV) != "0":
            raise Violation(f"the native core does not run under CI=true: {native.refusal()}")
        return
    paths: list[tuple[str | int, ...]] = [("a",), (0,), ("status",), ("a", 0, "b"), ()]
    page = [data, data[: len(data) // 2], data]
    for cap in (CAP, 300):
        counts = both(page, cap, paths)
        if counts.differences:
            raise Violation(f"native core != Python engine: {counts.differences[0][:600]}")
    # The engine's page answers built on that call: every page request and STATS' measures.
    counts = differential(page, (CAP, 300), paths, size=len(page))
    if counts.differences:
        raise Violation(f"the engine's page answers differ between the roads: {counts.differences[0][:600]}")


def _server_rows(data: bytes) -> None:
    """A RESULT page's rows section (payload/server_rows.py; the first byte: 1 to 4 columns, the
    second: 0 to 7 rows, the rest the body): the core's splitter and the Python one read the same
    cells or both refuse the page in one line, and the core's select_rows gives the first and last
    rows' bytes as those cells make them, or refuses the page too; nothing else is raised."""
    from cqlsh_ext.payload import native
    from cqlsh_ext.payload.server_rows import MalformedPage, split_cells

    if len(data) < 2:
        return
    columns, count, body = 1 + data[0] % 4, data[1] % 8, data[2:]
    wanted = [*range(columns), 0]
    answers: list[Any] = []
    for read in ([split_cells] + ([native.split_page] if native.available() else [])):
        try:
            answers.append(read(body, count, columns, wanted))
        except (MalformedPage, ValueError) as err:
            one_line("a page's rows", str(err))
            answers.append("refused")
    if len(answers) == 2 and answers[0] != answers[1]:
        raise Violation(f"the core's split != the Python one: {answers[1]!r:.300} != {answers[0]!r:.300}")
    if len(answers) == 2:  # the core's select_rows of whole rows (a reader's kept rows), or refused
        picked = [count - 1, 0] if count else []
        try:
            rows: Any = native.select_rows(body, count, columns, list(range(columns)), picked)
        except ValueError as err:
            one_line("a page's rows", str(err))
            rows = "refused"
        cells = answers[0]
        want: Any = "refused" if cells == "refused" else [[column[row] for row in picked]
                                                          for column in cells[:columns]]
        if rows != "refused":  # (read back: a null is a length -1 or -2, as the server sent it)
            rows = split_cells(rows[4:], len(picked), columns, list(range(columns)))
        if rows != want:
            raise Violation(f"the core's select_rows != the rows' cells: {rows!r:.300} != {want!r:.300}")
        _laid_out(body, count, columns, data[0] >> 2, cells)


def _laid_out(body: bytes, count: int, columns: int, pick: int, cells: Any) -> None:
    """The core's cql_columns (payload/server_rows.py's laid_out) of the page, each column a type
    `pick` chooses: refused where the split refused, else each column it answers is the driver's
    from_binary of those cells, type for type (a column it leaves is the driver's anyway)."""
    from cassandra import cqltypes

    from cqlsh_ext.payload import native

    types = [cqltypes.Int32Type, cqltypes.LongType, cqltypes.DoubleType, cqltypes.BooleanType,
             cqltypes.UTF8Type, cqltypes.AsciiType]
    chosen = [types[(pick + c) % len(types)] for c in range(columns)]
    try:
        laid: Any = native.cql_columns(body, count, columns, list(range(columns)),
                                       [t.typename for t in chosen])
    except ValueError as err:
        one_line("a page's rows", str(err))
        laid = "refused"
    if (laid == "refused") != (cells == "refused"):
        raise Violation(f"the core's cql_columns and the split disagree on refusing: {laid!r:.100}")
    if laid == "refused":
        return
    for c, (kind, values) in enumerate(zip(chosen, laid, strict=True)):
        if values is None:
            continue
        want = [None if cell is None else kind.from_binary(cell, 4) for cell in cells[c]]
        if [(type(v), repr(v)) for v in values] != [(type(v), repr(v)) for v in want]:
            raise Violation(f"the core's {kind.typename} column != the driver's: {values!r:.300} "
                            f"!= {want!r:.300}")


def _server_rows_seeds() -> list[bytes]:
    """Pages of 1 to 4 columns: nulls, empty values, values of a few bytes."""
    def cell(value: bytes | None) -> bytes:
        return b"\xff\xff\xff\xff" if value is None else len(value).to_bytes(4, "big") + value

    cells = [b"k1", None, b"", b"\x1f\x8b\x08data", b"x" * 40, None, b"", b"\x00"]
    out = []
    for columns in range(1, 5):
        for count in (0, 1, 2):
            body = b"".join(cell(cells[(r * columns + c) % len(cells)]) for r in range(count)
                            for c in range(columns))
            out.append(bytes([columns - 1, count]) + body)
    return out


@functools.lru_cache(maxsize=1)
def _dictionaries() -> tuple[Any, list[bytes]]:
    """A store holding a trained zstd dictionary and a raw one (a zlib preset dictionary, and a
    zstd raw-content one; the same bytes every run: libzstd's trainer is deterministic), and values
    their producers' libraries wrote with them: zstd frames naming the trained one or none, zlib
    streams, RFC 9842 dcz values (section 5's layout) and a dcb header."""
    import hashlib
    import zlib

    import zstandard

    from cqlsh_ext.codecs import dictionaries

    docs = [json.dumps({"id": n, "status": ("NEW", "PAID")[n % 2], "items": [{"sku": f"S{n % 7}"}]}).encode()
            for n in range(120)]
    trained = zstandard.train_dictionary(1024, docs)
    preset = b"".join(docs[:6])
    store = dictionaries.Store()
    store.add(dictionaries.from_bytes(trained.as_bytes(), "fuzz.zstd-dict"))
    store.add(dictionaries.from_bytes(preset, "fuzz.zlib-dict"))
    seeds = []
    for doc in (docs[3], b"".join(docs)):
        for params in ({}, {"write_content_size": False}, {"write_checksum": True}):
            seeds.append(zstandard.ZstdCompressor(dict_data=trained, **params).compress(doc))
        obj = zlib.compressobj(zdict=preset)
        seeds.append(obj.compress(doc) + obj.flush())
        raw = zstandard.ZstdCompressionDict(preset, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        for params in ({}, {"write_checksum": True}):
            frame = zstandard.ZstdCompressor(dict_data=raw, write_dict_id=False, **params).compress(doc)
            seeds += [frame, b"\x5e\x2a\x4d\x18\x20\x00\x00\x00" + hashlib.sha256(preset).digest() + frame]
    seeds.append(b"\xff\x44\x43\x42" + hashlib.sha256(preset).digest() + b"\x0b\x03\x80text\x03")
    return store, seeds


def _with_dictionaries(data: bytes) -> None:
    """zstd and zlib values read with the store's dictionaries: every container method, the display
    and the native core against the Python engine (the core hands such values back)."""
    from cqlsh_ext.codecs import dictionaries

    store, _ = _dictionaries()
    before = dictionaries.STORE
    dictionaries.install(store)
    try:
        for fmt in registry.all_containers():
            if fmt.codec in ("zstd", "zlib", "dcz", "dcb"):
                _container(fmt)(data)
        _display(False)(data)
        _inspect(data)
        _native(data)
    finally:
        dictionaries.install(before)


# ------------------------------------------------------------------------------------ the list


def _slug(text: str) -> str:
    return text.replace("/", "-").replace(" ", "-")


def _any_format(data: bytes, rng: random.Random) -> bytes | None:
    """The first per-format mutation that takes `data` (inputs of every format: display, INSPECT)."""
    from .pickle_ops import MUTATIONS

    for mutation in MUTATIONS.values():
        changed = mutation(data, rng)
        if changed is not None:
            return changed
    return None


def _format_mutation(name: str) -> Mutation | None:
    from .pickle_ops import MUTATIONS

    return MUTATIONS.get(name)


def all_targets() -> dict[str, Target]:
    """Every target by name, derived from the registries."""
    targets: list[Target] = [
        Target("detect", _detection, ("codec", "payload", "text"),
               "registry.detect/decode_auto and unwrap in auto mode", mutate=_any_format),
    ]
    for codec in CODEC_NAMES:
        targets.append(Target(f"codec-{codec}", _codec(codec), (f"codec/{codec}",),
                              f"registry.decode_named({codec!r}): DecodeError only, output <= cap"))
    for fmt in registry.all_containers():
        targets.append(Target(f"container-{_slug(fmt.label)}", _container(fmt), (f"codec/{fmt.codec}",),
                              f"{fmt.label}: matches/decode/trial/headers/peek/declared_size"))
    for name in payload_declarations():
        targets.append(Target(f"payload-{name}", _payload(name), (f"payload/{name}",),
                              f"payload.formats.decode_named({name!r}): PayloadError only; render bounded",
                              mutate=_format_mutation(name)))
    everything = ("codec", "payload", "text")
    targets += [
        Target("display-table", _display(False), everything, "display.BlobDisplay in a table cell",
               mutate=_any_format),
        Target("display-expand", _display(True), everything, "display.BlobDisplay under EXPAND ON",
               mutate=_any_format),
        Target("display-spec", _display_spec, (), "a column setting (first byte picks it) in table, "
               "EXPAND, JSON and CSV", _spec_seeds),
        Target("output-json", _json_output, everything, "output.spellings JSON writer (JSON Lines)",
               mutate=_any_format),
        Target("output-csv", _csv_output, everything, "output.spellings CSV writer", mutate=_any_format),
        Target("inspect", _inspect, everything, "insight.inspect.inspect_value: text and JSON report",
               mutate=_any_format),
        Target("advise", _advise, everything,
               "insight.advise.AdviseSample.add and the engine's measure per value",
               mutate=_any_format),
        Target("dictionaries", _with_dictionaries, (), "zstd, zlib, dcz and dcb values with the store's "
               "dictionaries: containers, display, INSPECT, native core", lambda: _dictionaries()[1],
               mutate=_any_format),
        Target("server-rows", _server_rows, (), "payload/server_rows.py: a RESULT page's rows section "
               "split by the core and by Python alike, or refused in one line", _server_rows_seeds),
        Target("native", _native, everything, "payload/native.py's core against the Python engine: kind, "
               "label, sizes, text, tree, paths (a no-op when the core is not built)", mutate=_any_format),
    ]
    return {t.name: t for t in targets}
