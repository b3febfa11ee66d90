"""What COMPRESSION STATS counts of a page of values, summed a page at a time: the page is the
unit of work. A reader hands the value engine a page's rows and the places holding payloads (a
blob column, a text column, the blobs inside collections with the row each is in); the engine
measures every value (ValueEngine.measure: the containers peeled, a size read from a header where
the format allows, an uncompressed value's kind peeked at) and answers with PageMeasures: per
place the counters of insight.stats.ColumnStats, and per row the size counters capacity units are
priced from. The native core gives the same PageMeasures from one call (payload.native); this
module's summarize() is the Python road and the reference the core is checked against, page by
page (tests/native).

What is counted in (bins, units, the median sketch's step) is the reader's: MeasureSpec.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import truediv
from typing import Any, Protocol, runtime_checkable

from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.view import FAILED, KIND_TITLES, UNKNOWN

#: What measuring a value found (a STATS chain's status): a container peeled (COMPRESSED); none,
#: the value read as stored text or a record (STORED); no known format (UNKNOWN); a recognised
#: format that failed (FAILED). The last two are what a query calls undecodable.
COMPRESSED, STORED = "compressed", "not compressed"
STATUSES = (COMPRESSED, STORED, UNKNOWN, FAILED)
#: How reports name each status (the view's words: payload.view.KIND_TITLES).
STATUS_TITLES = {COMPRESSED: COMPRESSED, STORED: STORED, UNKNOWN: KIND_TITLES[UNKNOWN], FAILED: FAILED}
#: The reason of a compressed value sized from its header (not decompressed).
FROM_HEADER = "size from header"
#: Decompressed bytes looked at behind a declared size: enough for every signature detection knows.
PEEK = 64
#: A measure: (status, the chain spelt, payload size, exact, reason).
Measure = tuple[str, str, int, bool, "str | None"]


@dataclass(frozen=True)
class MeasureSpec:
    """What a reader counts a page's measures in: `bucket_bounds` and `size_bounds` (inclusive
    upper bounds of the size bins, bisect_left), the median sketch's log step (`median_inv_step`,
    1 / log of a bin's width; `median_zero`, the bin of a zero ratio), the rows' units (bytes per
    unit: a write unit, a read unit), and the row quota with the share of it that is "near"."""

    bucket_bounds: tuple[int, ...]
    size_bounds: tuple[int, ...]
    median_inv_step: float
    median_zero: int
    units: tuple[int, int]
    row_quota: int
    near_share: float
    #: Size compressed values from their headers where the format allows (not DECODE ALL).
    from_headers: bool = True

    @property
    def near_bytes(self) -> float:
        return self.near_share * self.row_quota


@dataclass
class RowUnits:
    """Rows counted by size: how many, their write and read units, those near and over the
    quota, the largest."""

    rows: int = 0
    wcu: int = 0
    rcu: int = 0
    near_quota: int = 0
    over_quota: int = 0
    largest: int = 0

    def add(self, size: int, spec: MeasureSpec) -> None:
        self.rows += 1
        write, read = spec.units
        self.wcu += (size + write - 1) // write or 1
        self.rcu += (size + read - 1) // read or 1
        if size >= spec.near_bytes:
            if size > spec.row_quota:
                self.over_quota += 1
            else:
                self.near_quota += 1
        if size > self.largest:
            self.largest = size

    def add_many(self, sizes: list[int], spec: MeasureSpec) -> None:
        """add() of each size, the per-size work in comprehensions and builtins."""
        if not sizes:
            return
        write, read = spec.units
        self.rows += len(sizes)
        self.wcu += sum([(s + write - 1) // write or 1 for s in sizes])
        self.rcu += sum([(s + read - 1) // read or 1 for s in sizes])
        top = max(sizes)
        near, quota = spec.near_bytes, spec.row_quota
        if top >= near:
            self.over_quota += sum(1 for s in sizes if s > quota)
            self.near_quota += sum(1 for s in sizes if near <= s <= quota)
        if top > self.largest:
            self.largest = top

    def merge(self, other: RowUnits) -> None:
        self.rows += other.rows
        self.wcu += other.wcu
        self.rcu += other.rcu
        self.near_quota += other.near_quota
        self.over_quota += other.over_quota
        self.largest = max(self.largest, other.largest)


@dataclass
class PlaceMeasures:
    """One place's counters over a page (insight.stats.ColumnStats merges them)."""

    values: int = 0
    nulls: int = 0
    stored: int = 0
    size: int = 0
    inexact: int = 0
    from_headers: int = 0
    #: (status, chain) -> [values, stored bytes, decompressed bytes], in the order first met.
    chains: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    #: Compressed values: [values, stored bytes, decompressed bytes].
    compressed: list[int] = field(default_factory=lambda: [0, 0, 0])
    buckets_before: list[int] = field(default_factory=list)
    buckets_after: list[int] = field(default_factory=list)
    sizes_before: list[int] = field(default_factory=list)
    sizes_after: list[int] = field(default_factory=list)
    #: The compressed values' ratios in order (while the reader's median sketch is exact), or
    #: their bins (bin -> count).
    ratios: list[float] = field(default_factory=list)
    ratio_bins: dict[int, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, spec: MeasureSpec) -> PlaceMeasures:
        buckets, sizes = len(spec.bucket_bounds) + 1, len(spec.size_bounds) + 1
        return cls(buckets_before=[0] * buckets, buckets_after=[0] * buckets, sizes_before=[0] * sizes,
                   sizes_after=[0] * sizes)

    def add_many(self, measured: list[Measure], stored: list[int], spec: MeasureSpec,
                 exact_ratios: bool) -> None:
        """add() of each value: when every value has the same chain, compressed, with an exact size
        and no reason (the usual page), the per-value work is done by builtins; otherwise value
        by value. The same counters either way."""
        if not measured:
            return
        chain = measured[0][1]
        if any(m[0] != COMPRESSED or m[1] != chain or not m[3] or m[4] for m in measured):
            for m, size in zip(measured, stored, strict=True):
                self.add(m, size, spec, exact_ratios)
            return
        sizes = [m[2] for m in measured]
        n, st_total, sz_total = len(sizes), sum(stored), sum(sizes)
        self.values += n
        self.stored += st_total
        self.size += sz_total
        comp = self.compressed
        comp[0] += n
        comp[1] += st_total
        comp[2] += sz_total
        ratios = list(map(truediv, sizes, stored))
        if exact_ratios:
            self.ratios.extend(ratios)
        else:
            bins = self.ratio_bins
            for k, count in Counter([median_bin(r, spec) for r in ratios]).items():
                bins[k] = bins.get(k, 0) + count
        entry = self.chains.get((COMPRESSED, chain))
        if entry is None:
            self.chains[(COMPRESSED, chain)] = [n, st_total, sz_total]
        else:
            entry[0] += n
            entry[1] += st_total
            entry[2] += sz_total
        for counts, bounds, of in ((self.buckets_before, spec.bucket_bounds, sizes),
                                   (self.buckets_after, spec.bucket_bounds, stored),
                                   (self.sizes_before, spec.size_bounds, sizes),
                                   (self.sizes_after, spec.size_bounds, stored)):
            for index, count in Counter(map(partial(bisect_left, bounds), of)).items():
                counts[index] += count

    def add(self, measure: Measure, stored: int, spec: MeasureSpec, exact_ratios: bool) -> None:
        """One value, measured."""
        status, chain, size, exact, reason = measure
        self.values += 1
        self.stored += stored
        self.size += size
        if status == COMPRESSED:
            comp = self.compressed
            comp[0] += 1
            comp[1] += stored
            comp[2] += size
            ratio = size / stored
            if exact_ratios:
                self.ratios.append(ratio)
            else:
                k = median_bin(ratio, spec)
                self.ratio_bins[k] = self.ratio_bins.get(k, 0) + 1
            if not exact:
                self.inexact += 1
            if reason == FROM_HEADER:
                self.from_headers += 1
        elif reason:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
        entry = self.chains.get((status, chain))
        if entry is None:
            self.chains[(status, chain)] = [1, stored, size]
        else:
            entry[0] += 1
            entry[1] += stored
            entry[2] += size
        self.buckets_before[bisect_left(spec.bucket_bounds, size)] += 1
        self.buckets_after[bisect_left(spec.bucket_bounds, stored)] += 1
        self.sizes_before[bisect_left(spec.size_bounds, size)] += 1
        self.sizes_after[bisect_left(spec.size_bounds, stored)] += 1


@dataclass
class PageMeasures:
    """A page's answer: per place its counters, and the rows' units (decompressed sizes before,
    stored sizes after)."""

    places: list[PlaceMeasures]
    before: RowUnits = field(default_factory=RowUnits)
    after: RowUnits = field(default_factory=RowUnits)


@dataclass(frozen=True)
class MeasuredPlace:
    """A place of a page handed to measure_rows(): its values (the page's column `column`, or
    `values` with the row each is in), whether it is a text column (its values stored as text,
    measured at their UTF-8 size, never decoded), and whether the reader's median sketch of it
    still keeps ratios exactly."""

    column: int | None = None
    values: Sequence[Any] = ()
    rows: Sequence[int] | None = None
    text: bool = False
    exact_ratios: bool = True

    def cells(self, page: Sequence[Sequence[Any]]) -> tuple[Sequence[Any], Sequence[int] | range]:
        """(the values, the row of each)."""
        if self.column is not None:
            column = self.column
            if isinstance(page, (RowsSection, ArrowRows)):  # the server's page, an Arrow batch:
                return page.column(column), range(len(page))  # this column made alone
            return [row[column] for row in page], range(len(page))
        return self.values, self.rows if self.rows is not None else range(len(self.values))


@runtime_checkable
class RowsSection(Protocol):
    """A page's rows as the server sent them (payload.server_rows.ServerRows): `message[start:]`
    holds `row_count` rows of `columns` cells; column(i) is a column's values as the driver makes
    them; holds_blobs(i) says whether its cells are a bare blob column's stored values; make(rows)
    makes those rows in one call (a reader's kept rows)."""

    message: bytes
    start: int
    row_count: int

    @property
    def columns(self) -> int: ...

    def column(self, i: int) -> list[Any]: ...

    def holds_blobs(self, i: int) -> bool: ...

    def make(self, indexes: Sequence[int]) -> None: ...

    def __len__(self) -> int: ...


class Measurer(Protocol):
    """What measures one value (payload.engine.ValueEngine)."""

    def measure(self, value: bytes, from_headers: bool = False) -> Measure: ...

    def measure_many(self, values: Sequence[bytes], from_headers: bool = False) -> list[Measure]: ...


def median_bin(ratio: float, spec: MeasureSpec) -> int:
    """The median sketch's bin of a ratio (insight.median's, from the spec's step)."""
    return math.floor(math.log(ratio) * spec.median_inv_step) if ratio > 0 else spec.median_zero


#: The measure of a text column's value: stored as text, its UTF-8 size.
TEXT_CHAIN = "text"


def summarize(page: Sequence[Sequence[Any]], places: Sequence[MeasuredPlace], spec: MeasureSpec,
              measure_many: Callable[[int, list[bytes]], list[Measure]]) -> PageMeasures:
    """The Python road: every place's values measured by `measure_many(place index, values)`
    (its engine's, a page at a time), summed as the core sums them."""
    rows = len(page)
    out = PageMeasures([])
    if len(places) == 1 and places[0].column is not None and not places[0].text:
        # One blob column (the usual table): a row's sizes are its value's (0 for a null).
        place = places[0]
        values, _rows = place.cells(page)
        present = [v for v in values if v is not None]
        stored = list(map(len, present))
        measured = measure_many(0, present)
        counters = PlaceMeasures.empty(spec)
        counters.nulls = len(values) - len(present)
        counters.add_many(measured, stored, spec, place.exact_ratios)
        out.places.append(counters)
        nulls = [0] * counters.nulls
        out.before.add_many([m[2] for m in measured] + nulls, spec)
        out.after.add_many(stored + nulls, spec)
        return out
    before, after = [0] * rows, [0] * rows
    for p, place in enumerate(places):
        counters = PlaceMeasures.empty(spec)
        out.places.append(counters)
        values, rows_of = place.cells(page)
        present_rows = [row for value, row in zip(values, rows_of, strict=True) if value is not None]
        present = [value for value in values if value is not None]
        counters.nulls = len(values) - len(present)
        if place.text:
            stored = [len(value.encode("utf-8")) for value in present]
            found: list[Measure] = [(STORED, TEXT_CHAIN, size, True, None) for size in stored]
        else:
            stored = list(map(len, present))
            found = measure_many(p, present)
        counters.add_many(found, stored, spec, place.exact_ratios)
        for row, m, size in zip(present_rows, found, stored, strict=True):
            before[row] += m[2]
            after[row] += size
    out.before.add_many(before, spec)
    out.after.add_many(after, spec)
    return out


__all__ = ["COMPRESSED", "FROM_HEADER", "PEEK", "STATUSES", "STATUS_TITLES", "STORED", "TEXT_CHAIN",
           "Measure", "MeasureSpec", "MeasuredPlace", "Measurer", "PageMeasures", "PlaceMeasures", "RowUnits",
           "RowsSection",
           "median_bin", "summarize"]
