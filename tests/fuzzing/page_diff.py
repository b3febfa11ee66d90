"""The value engine's page answers on both roads, page by page and value by value: read_page()
for every kind of page request (paths, texts, views, needles) and measure_rows() (COMPRESSION
STATS' page answer: a blob column, a text column, the blobs of a collection, sized from headers
and decoded whole), the native core's against the Python engine's (the reference). Used by
tests/native/test_engine_pages.py over the corpora and by the `native` fuzz target on each input.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from cqlsh_ext.insight.stats import SPEC as STATS_SPEC
from cqlsh_ext.payload import native
from cqlsh_ext.payload.engine import ValueEngine, measure_rows
from cqlsh_ext.payload.measures import MeasuredPlace, PageMeasures
from cqlsh_ext.payload.pages import PageRead, ReadRequest
from cqlsh_ext.payload.view import BINARY, BlobView

from .native_diff import Counts, same


def _no_paid(text: str) -> bool:
    """A needle test (query.evaluate's kind): True when `data.status = 'PAID'` certainly fails."""
    return "PAID" not in text


def _no_ada(text: str) -> bool:
    return "Ada" not in text and "\\" not in text


def asks(paths: list[tuple[str | int, ...]]) -> list[tuple[str, Callable[[], ReadRequest], set[int]]]:
    """The page requests a differential makes: (name, a fresh ReadRequest, the path indexes some
    earlier page had: where needles apply at once). `paths` has at least three."""
    return [
        ("paths and texts", lambda: ReadRequest(paths, text=True), set()),
        ("paths", lambda: ReadRequest(paths), set()),
        ("kinds only", lambda: ReadRequest(), set()),
        ("texts without paths (LIKE)", lambda: ReadRequest(text=True), set()),
        ("views and texts", lambda: ReadRequest(paths[:3], text=True, views=True), set()),
        ("views", lambda: ReadRequest(paths, views=True), set()),
        ("needles", lambda: ReadRequest(paths, needles=[_no_paid, _no_ada, *[None] * (len(paths) - 2)]),
         {0, 1}),
        ("a path none has", lambda: ReadRequest([("nope",), ("status", "deeper"), (0, "name")]), set()),
    ]


def shown(view: BlobView) -> tuple[Any, ...]:
    """What a reader reads of a view (tests/payload/test_engine.py's account of one). A layer's
    declared size is read of a cut layer only (the size it would have had: payload.view.Layer), and
    a layer the native core peeled for the Python engine (ValueEngine.take_peeled) has none."""
    return (view.kind, view.label, view.short_label, view.cut, view.text, view.clean, view.data,
            view.reason, None if view.error is None else (type(view.error).__name__, str(view.error)),
            view.payload_format, repr(view.tree), view.object_class, view.stream_format,
            view.tree_input_size, view.payload_size, view.measured_size, view.stored,
            [(layer.label, layer.input_size, layer.output_size, layer.truncated,
              layer.declared_size if layer.truncated else None, layer.reading) for layer in view.layers])


def answer_shown(view: BlobView) -> tuple[Any, ...]:
    """What a reader of an answer's blob reads of its view (the display, the JSON and CSV
    spellings, MCP, Parquet's parts): shown() but the sizes of its layers and of what its record
    was read from, and a record's bytes, which the view of the native core's held reading does
    not carry (payload.held_views; a reader counts sizes only to decide how a value is cut or
    metered, and reads a view's bytes only for a binary payload)."""
    return (view.kind, view.label, view.short_label, view.chain, view.reading, view.cut, view.text,
            view.clean, view.data if view.kind == BINARY else None, view.reason, view.quiet,
            None if view.error is None else (type(view.error).__name__, str(view.error)),
            view.payload_format, repr(view.tree), repr(view.record), view.object_class, view.stream_format,
            view.stored, view.truncated_layer is None, view.unverified_layer is None, view.named)


def compare_pages(values: list[bytes], got: PageRead, want: PageRead, counts: Counts, where: str,
                  paths: Sequence[tuple[str | int, ...]] = ()) -> None:
    """Each value's answer in `got` (the core's road) against `want` (Python alone); `paths`
    names the columns in messages."""
    counts.compared += len(values)
    differences = counts.differences
    for name in ("kinds", "cut", "rejected", "found", "missed"):
        if getattr(got, name) != getattr(want, name):
            differences.append(f"{where}: {name} {getattr(got, name)!r:.300} != {getattr(want, name)!r:.300}")
    for p, (column, expected) in enumerate(zip(got.columns, want.columns, strict=True)):
        for i, (a, b) in enumerate(zip(column, expected, strict=True)):
            if not same(a, b):
                differences.append(f"{where}: value {i}, path {paths[p] if p < len(paths) else p}: "
                                   f"{a!r:.200} != {b!r:.200}")
    if len(got.columns) != len(want.columns) or any(
            len(c) != len(values) for c in got.columns):
        differences.append(f"{where}: columns of other lengths")
    if not same(list(got.texts), list(want.texts)):
        differences.append(f"{where}: texts differ")
    if len(got.trees) != len(want.trees):
        differences.append(f"{where}: {len(got.trees)} trees != {len(want.trees)}")
    for i, (a, b) in enumerate(zip(got.trees, want.trees, strict=False)):
        if not same(a, b):
            differences.append(f"{where}: value {i}: tree {a!r:.200} != {b!r:.200}")
    if bool(got.views) != bool(want.views) or len(got.views) != len(want.views):
        differences.append(f"{where}: {len(got.views)} views != {len(want.views)}")
    for i, (a, b) in enumerate(zip(got.views, want.views, strict=False)):
        if shown(a) != shown(b):
            differences.append(f"{where}: value {i}: view {shown(a)!r:.300} != {shown(b)!r:.300}")


def differential(values: list[bytes], caps: tuple[int, ...], paths: list[tuple[str | int, ...]],
                 size: int = 64) -> Counts:
    """Every ReadRequest of asks(paths) and measure_page, page by page (one engine per road, kept over the
    pages as a reader keeps it), under each cap."""
    counts = Counts()
    pages = [values[i:i + size] for i in range(0, len(values), size)]
    for cap in caps:
        for name, make, known in asks(paths):
            core, python = ValueEngine("auto", cap), ValueEngine("auto", cap)
            python.native = False
            core_ask, python_ask = make(), make()
            core_ask.known |= known
            python_ask.known |= known
            for n, page in enumerate(pages):
                got, want = core.read_page(page, core_ask), python.read_page(page, python_ask)
                compare_pages(page, got, want, counts, f"{name}, cap {cap}, page {n}", paths)
            if core.native is not True:
                counts.differences.append(f"{name}: the native core did not run ({native.refusal()})")
            if core_ask.known != python_ask.known:
                counts.differences.append(f"{name}: paths known {core_ask.known} != {python_ask.known}")
        compare_measures(pages, cap, counts)
    return counts


def same_measures(got: PageMeasures, want: PageMeasures) -> list[str]:
    """The fields of two page answers that differ (ratios in any order: a median reads them)."""
    out = [f"rows {name}: {getattr(got, name)} != {getattr(want, name)}" for name in ("before", "after")
           if getattr(got, name) != getattr(want, name)]
    for p, (a, b) in enumerate(zip(got.places, want.places, strict=True)):
        for name in vars(b):
            mine, theirs = getattr(a, name), getattr(b, name)
            if name == "ratios":
                mine, theirs = sorted(mine), sorted(theirs)
            if mine != theirs:
                out.append(f"place {p} {name}: {mine!r:.300} != {theirs!r:.300}")
    return out


def compare_measures(pages: list[list[bytes]], cap: int, counts: Counts) -> None:
    """COMPRESSION STATS' page answers (payload.engine.measure_rows) on both roads: each page as
    a blob column, beside a text column and as the blobs of a collection (values with their rows),
    sized from headers and decoded whole, then each value alone (value by value)."""
    for from_headers in (True, False):
        spec = dataclasses.replace(STATS_SPEC, from_headers=from_headers)
        # per road: the blob column's engine, the text column's, the collection's
        core = [ValueEngine("auto", cap) for _ in range(3)]
        python = [ValueEngine("auto", cap) for _ in range(3)]
        for engine in python:
            engine.native = False
        for n, page in enumerate(pages):
            rows = [(value, f"t{i}" * (i % 3) if i % 4 else None) for i, value in enumerate(page)]
            nested = [value for value in page if value]
            places = [MeasuredPlace(column=0, exact_ratios=n % 2 == 0), MeasuredPlace(column=1, text=True),
                      MeasuredPlace(values=nested, rows=[i % len(rows) for i in range(len(nested))],
                                    exact_ratios=n % 2 == 1)]
            got, want = measure_rows(rows, places, core, spec), measure_rows(rows, places, python, spec)
            counts.compared += len(page)
            counts.differences += [f"measures, cap {cap}, page {n}, headers {from_headers}: {d}"
                                   for d in same_measures(got, want)]
            for i, value in enumerate(page):
                alone = [MeasuredPlace(column=0)]
                got = measure_rows([(value,)], alone, core[:1], spec)
                want = measure_rows([(value,)], alone, python[:1], spec)
                counts.compared += 1
                counts.differences += [f"measure, cap {cap}, headers {from_headers}, value {i} "
                                       f"({value[:16].hex()}): {d}" for d in same_measures(got, want)]
        if not all(engine.native for engine in core):
            counts.differences.append(f"measures: the native core did not run ({native.refusal()})")


def compare_cells(values: list[bytes], counts: Counts,
                  widths: Sequence[int | None] = (None, 8, 40, 200)) -> None:
    """The display's cells (output.display.BlobDisplay, a page prepared at once) on both roads:
    the core's cells against the Python engine's views, plain and coloured, whole (scripts) and
    cut to terminal cells of several widths: the same text, coloured text and width; and the
    page's cells taken at once (BlobDisplay.cells, output.table's way for a top-level blob
    column), on both roads, against the Python engine's cells one by one."""
    from cqlsh_ext.output.display import BlobDisplay, CoreRaw, CoreText
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.settings import DisplaySettings
    from cqlsh_ext.upstream import seams

    place = ValuePlace("ks", "t", "data")
    for width in widths:
        for colored in (False, True):
            colormap = seams.value_colormap(colored)
            settings = DisplaySettings(max_field_width=width)
            displays = [BlobDisplay(settings, width is not None, False) for _road in ("core", "python")]
            displays[1]._engine(place).native = False  # the Python engine alone: the reference
            for display in displays:
                display.prepare(place, values)
            prepared = displays[0]._prepared[place]
            on_core = sum(isinstance(cell, (CoreText, CoreRaw)) for _value, cell in prepared)
            counts.handed_back += len(values) - on_core
            wanted = []
            for i, value in enumerate(values):
                got, want = (display(value, colormap, place=place) for display in displays)
                wanted.append(want)
                _same_cell(counts, got, want, f"cells, width {width}, colored {colored}, value {i} "
                                              f"({value[:12].hex()})")
            for road, display in zip(("core", "python"), displays, strict=True):
                display.prepare(place, values)
                for i, (got, want) in enumerate(zip(display.cells(place, values, colormap), wanted,
                                                    strict=True)):
                    _same_cell(counts, got, want, f"a page's cells at once, {road}, width {width}, colored "
                                                  f"{colored}, value {i} ({values[i][:12].hex()})")
            compare_held_cells(values, counts, settings, width, colored)


def _same_cell(counts: Counts, got: Any, want: Any, where: str) -> None:
    """One cell compared: the same text, coloured text and width, else a difference noted."""
    counts.compared += 1
    if (got.strval, got.coloredval, got.displaywidth) != (want.strval, want.coloredval, want.displaywidth):
        counts.differences.append(f"{where}: {got.strval!r:.160} != {want.strval!r:.160}")


def compare_held_cells(values: list[bytes], counts: Counts, settings: Any, width: int | None,
                       colored: bool) -> None:
    """The cells of an answer's blob column the core read (a page held: payload.columns'
    BlobReading.read, whose values are the views of the core's reading, payload.held_views, as
    the terminal shows a payload query's or MCP's blobs) against the Python engine's views' cells,
    in the table and in EXPAND."""
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.payload.columns import BlobReading, ValueColumn
    from cqlsh_ext.payload.places import Decoding, ValuePlace
    from cqlsh_ext.upstream import seams

    place = ValuePlace("ks", "t", "data")
    colormap = seams.value_colormap(colored)
    held = BlobReading(Decoding()).read(ValueColumn(values), place).values()
    for expanded in (False, True):
        displays = [BlobDisplay(settings, width is not None, expanded) for _road in ("held", "python")]
        displays[1]._engine(place).native = False  # the Python engine alone: the reference
        for i, (value, view) in enumerate(zip(values, held, strict=True)):
            got, want = displays[0](view, colormap, place=place), displays[1](value, colormap, place=place)
            _same_cell(counts, got, want, f"an answer's held cells, expanded {expanded}, width {width}, "
                                          f"colored {colored}, value {i} ({value[:12].hex()})")
