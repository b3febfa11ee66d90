"""COMPRESSION STATS: streaming aggregation over a result (its report: insight.stats_report).

Memory stays flat however many rows are scanned: per payload column a handful of counters, one
entry per distinct chain and (bounded) per distinct failure reason, and a median that is exact for
the first EXACT_VALUES values and then a log-spaced histogram (0.1 % wide bins).

Payloads are as cql.types says: the blobs of a column, and a text column's values (stored uncompressed:
their UTF-8 bytes, chain "text", never decoded). Sizes: "decompressed" is the payload under the
compression layers (a serialization stream stays serialized); values that are not compressed, or
cannot be decoded, count at their stored size. Keyspaces figures are per row over the payload
values of the row (stored = "after", decompressed = "before").
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.common.text import Line
from cqlsh_ext.cql.types import payload_columns, payload_extractor
from cqlsh_ext.insight import report
from cqlsh_ext.insight.median import StreamingMedian
from cqlsh_ext.insight.sizes import BOUNDS, SizeHistogram
from cqlsh_ext.insight.stats_report import render_capacity, render_column, retried_lines, stats_verdict
from cqlsh_ext.payload.engine import ValueEngine, measure_rows
from cqlsh_ext.payload.measures import (
    COMPRESSED,
    STATUS_TITLES,
    MeasuredPlace,
    MeasureSpec,
    PlaceMeasures,
    RowsSection,
)
from cqlsh_ext.payload.view import FAILED, UNKNOWN
from cqlsh_ext.scanning import capacity
from cqlsh_ext.scanning.capacity import BUCKET_BOUNDS, BUCKET_LABELS, KB, NEAR_QUOTA, ROW_QUOTA
from cqlsh_ext.scanning.estimate import RATIO, SHARE, TOTAL, Figure

__all__ = ["ColumnStats", "Stats", "StreamingMedian", "chain_label", "retried_lines"]

#: Distinct failure reasons kept per column; more are counted as "other".
MAX_REASONS = 20
#: A column's counters a page and a merge add as they are.
_COUNTERS = ("values", "nulls", "stored", "size", "inexact", "from_headers")
#: What STATS counts a page's measures in (payload.measures): the Keyspaces buckets, the size
#: histogram's bins, the median sketch's bins, the units a row costs.
SPEC = MeasureSpec(BUCKET_BOUNDS, BOUNDS, StreamingMedian.INV_STEP, StreamingMedian.ZERO, (KB, 4 * KB),
                   ROW_QUOTA, NEAR_QUOTA)


def chain_label(status: str, chain: str) -> str:
    """The chain of a compressed value ('outer>inner'); else the status, after the chain when
    there is one ('<chain> (not compressed)'): 'not compressed', 'no known format', 'failed'."""
    if status == COMPRESSED:
        return chain
    words = STATUS_TITLES.get(status, status)
    return f"{chain} ({words})" if chain else words


class ColumnStats:
    """Counters for one payload column (or one blob position inside a collection/UDT column);
    `text`: a text column's."""

    def __init__(self, name: str, text: bool = False, named: int = 0) -> None:
        self.name = name
        self.text = text
        #: Layers -d CODEC named (1) or none (auto): a named layer is confident (payload.confidence).
        self.named = named
        self.values = 0
        self.nulls = 0
        self.stored = 0
        self.size = 0
        self.inexact = 0
        #: Compressed values sized from their headers, not decompressed (ValueEngine.measure's from_headers).
        self.from_headers = 0
        #: (status, chain) -> [values, stored bytes, decompressed bytes]
        self.chains: dict[tuple[str, str], list[int]] = {}
        self.reasons: dict[str, int] = {}
        #: compressed values: [values, stored bytes, decompressed bytes]
        self.compressed = [0, 0, 0]
        self.before = capacity.Buckets()
        self.after = capacity.Buckets()
        self._before, self._after = self.before.counts, self.after.counts
        #: Sizes on a log scale, decompressed and stored (the report's histogram).
        self.sizes_before = SizeHistogram()
        self.sizes_after = SizeHistogram()
        self.ratios = StreamingMedian()

    def _add_counts(self, other: PlaceMeasures | ColumnStats) -> None:
        """The counters a page of the column's (the value engine's measure_rows) and another
        ColumnStats both hold, added."""
        for name in _COUNTERS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, (c, st, sz) in other.chains.items():
            entry = self.chains.setdefault(key, [0, 0, 0])
            entry[0] += c
            entry[1] += st
            entry[2] += sz
        for reason, n in other.reasons.items():
            if reason not in self.reasons and len(self.reasons) >= MAX_REASONS:
                reason = "other"
            self.reasons[reason] = self.reasons.get(reason, 0) + n
        comp = self.compressed
        for k in range(3):
            comp[k] += other.compressed[k]

    def merge_page(self, page: PlaceMeasures) -> None:
        """A page's counters of this column (the value engine's measure_rows)."""
        self._add_counts(page)
        for mine, theirs in ((self._before, page.buckets_before), (self._after, page.buckets_after),
                             (self.sizes_before.counts, page.sizes_before),
                             (self.sizes_after.counts, page.sizes_after)):
            for k, n in enumerate(theirs):
                if n:
                    mine[k] += n
        if page.ratios:
            self.ratios.extend(page.ratios)
        if page.ratio_bins:
            self.ratios.add_bins(page.ratio_bins)

    def merge(self, other: ColumnStats) -> None:
        self._add_counts(other)
        for mine, theirs in ((self._before, other._before), (self._after, other._after)):
            for k, n in enumerate(theirs):
                mine[k] += n
        self.sizes_before.merge(other.sizes_before)
        self.sizes_after.merge(other.sizes_after)
        self.ratios.merge(other.ratios)

    def undecodable(self) -> dict[str, int]:
        """The values no reading can read, by kind (payload.view), as far as STATS can tell: no
        known format, and a format that failed. STATS measures containers and reads no payload
        under one (payload.measures), so a binary payload under a container counts as compressed;
        a value with no container is read for its kind (text or a record: not compressed)."""
        out: dict[str, int] = {}
        for (status, _), (count, _, _) in self.chains.items():
            if status == UNKNOWN or status == FAILED:
                out[status] = out.get(status, 0) + count
        return {kind: out[kind] for kind in (UNKNOWN, FAILED) if kind in out}

    def validated(self) -> dict[str, int]:
        """How the values under a container were checked: `decoded`, decompressed whole (the
        library checks the container's checksum where it carries one: zstd's content checksum,
        gzip's CRC-32 and ISIZE, zlib's Adler-32, LZ4 frame's, snappy framing's CRC-32C);
        `headers`, sized from their headers alone (default STATS: a gzip trailer's ISIZE that fits
        the stored size, a zstd or LZ4 frame's blocks walked to its end; the first bytes inflated
        to see what is inside, the rest never decompressed, so a corrupt payload under a sound
        header is not seen); `cut`, decoded up to the output cap; `failed`, a container whose check
        or decoding failed."""
        failed = sum(count for (status, _), (count, _, _) in self.chains.items() if status == FAILED)
        decoded = self.compressed[0] - self.from_headers - self.inexact
        return {"decoded": decoded, "headers": self.from_headers, "cut": self.inexact, "failed": failed}

    def by_codec(self) -> dict[str, int]:
        """Values per codec family (its -d name) or status ('not compressed', 'no known format',
        'failed')."""
        out: dict[str, int] = {}
        for (status, chain), (count, _, _) in self.chains.items():
            codec = chain.split(">", 1)[0].split("/", 1)[0] if status == COMPRESSED else STATUS_TITLES[status]
            out[codec] = out.get(codec, 0) + count
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def by_confidence(self) -> dict[str, int]:
        """The compressed values by how sure their containers' reading is (payload.confidence:
        confident, likely, guessed): STATS reads no payload under a container, so the containers
        alone decide."""
        from cqlsh_ext.payload.confidence import LEVELS, confidence_of

        out: dict[str, int] = {}
        for (status, chain), (count, _, _) in self.chains.items():
            if status == COMPRESSED:
                level = confidence_of(chain, "binary", self.named) or "guessed"
                out[level] = out.get(level, 0) + count
        return {level: out[level] for level in reversed(LEVELS) if level in out}

    def to_json(self) -> dict[str, object]:
        c_count, c_stored, c_size = self.compressed
        median = self.ratios.median()
        return {
            "column": self.name,
            "values": self.values,
            "nulls": self.nulls,
            "stored_bytes": self.stored,
            "decompressed_bytes": self.size,
            "ratio": round(self.size / self.stored, 4) if self.stored else None,
            "median_ratio": None if median is None else round(median, 4),
            "median_exact": self.ratios.exact,
            "compressed": {"values": c_count, "stored_bytes": c_stored, "decompressed_bytes": c_size,
                           "ratio": round(c_size / c_stored, 4) if c_stored else None},
            "inexact_values": self.inexact,
            "sized_from_headers": self.from_headers,
            "validated": self.validated(),
            "by_codec": self.by_codec(),
            "by_confidence": self.by_confidence(),
            "by_chain": [
                {"chain": chain_label(*k), "status": k[0], "values": c, "stored_bytes": s,
                 "decompressed_bytes": z, "ratio": round(z / s, 4) if s else None}
                # Ties by name: the same report whatever order the values came in (worker processes,
                # Spark tasks).
                for k, (c, s, z) in sorted(self.chains.items(), key=lambda kv: (-kv[1][0], kv[0]))],
            "reasons": dict(sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            "undecodable": self.undecodable(),
            "buckets": {"decompressed": self.before.to_json(), "stored": self.after.to_json()},
            "histogram": {"bounds": list(BOUNDS), "decompressed": self.sizes_before.to_json(),
                          "stored": self.sizes_after.to_json()}}


class Stats:
    """COMPRESSION STATS over one result: feed it pages, then render or to_json."""

    def __init__(
        self, query: str, mode: str = "auto", cap: int = DEFAULT_CAP, from_headers: bool = False,
        pricing: capacity.Pricing | None = None,
    ) -> None:
        self.query = query
        self.mode = mode
        self.cap = cap
        #: How capacity units are priced and what the user pays (the verdict's terms).
        self.pricing = pricing or capacity.Pricing()
        #: Size values from their headers where the format allows (ValueEngine.measure).
        self.from_headers = from_headers
        self.spec = dataclasses.replace(SPEC, from_headers=from_headers)
        self.rows = 0
        self.columns: dict[str, ColumnStats] = {}
        self.before = capacity.Capacity()  # per row, decompressed
        self.after = capacity.Capacity()  # per row, stored
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self.interrupted = False
        self.error: str | None = None
        self.scan = "single stream"
        #: Errors retried with backoff during the scan, by name (scan.retry_reason).
        self.retried: dict[str, int] = {}
        #: Lines the report says under its title (a SAMPLE that read the whole table says why).
        self.notes: list[str] = []
        #: A SAMPLE read as the whole table: its plan and why (JSON "sample").
        self.sample: dict[str, Any] | None = None
        self._layout: tuple[Any, ...] | None = None

    def fresh(self) -> Stats:
        """An empty Stats with the same settings (a worker process's: scanning.workers)."""
        return Stats(self.query, self.mode, self.cap, self.from_headers, self.pricing)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a worker process sends its Stats back): the per-result layout holds closures."""
        return {**self.__dict__, "_layout": None}

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        """The result's columns (first page): which hold payloads, and how to reach them."""
        cols = payload_columns(names, types)
        named = 0 if self.mode == "auto" else 1
        plain = tuple((i, self.columns.setdefault(n, ColumnStats(n, named=named))) for i, n, t in cols
                      if t.is_blob)
        texts = tuple((i, self.columns.setdefault(n, ColumnStats(n, text=True)))
                      for i, n, t in cols if t.is_text)
        nested = tuple((i, payload_extractor(n, t)) for i, n, t in cols if not (t.is_blob or t.is_text))
        # A value engine per payload place, made on first use (never pickled: see __getstate__).
        self._layout = (plain, texts, nested, {})

    #: Nothing is shown before the report: a whole-table read's ranges (in this process or in each
    #: worker process) and a sample's slices start at the page size the first page's rows call for
    #: (scanning.scan.ScanSpec.sized_first), not at FIRST_PAGE each.
    answers_at_end = True

    @property
    def pages_in(self) -> bool:
        """Pages are read as the server sent them (scanning.pages_in) when the value engine reads
        them whole (payload.running.reads_pages_whole)."""
        from cqlsh_ext.payload.running import reads_pages_whole
        from cqlsh_ext.scanning import pages_in

        return pages_in.enabled() and reads_pages_whole()

    @property
    def has_payloads(self) -> bool:
        """The result has a blob or a text column (cql.types.payload_columns)."""
        return bool(self._layout and any(self._layout[:3]))

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        """A page of rows: every payload place's values measured by the value engine in one call
        (payload.engine.measure_rows), its counters merged once."""
        assert self._layout is not None, "set_columns first"
        plain, texts, nested, engines = self._layout
        places = [MeasuredPlace(column=i, exact_ratios=col.ratios.exact) for i, col in plain]
        places += [MeasuredPlace(column=i, text=True, exact_ratios=col.ratios.exact) for i, col in texts]
        columns = [col for _, col in (*plain, *texts)]
        if nested:
            # Blobs inside collections, tuples and UDTs: taken out of their cells here, each with
            # its row, a place per schema path.
            found: dict[str, tuple[list[bytes], list[int]]] = {}
            if isinstance(rows, RowsSection):  # the server's page: only these columns decoded
                cells = [(extract, rows.column(i)) for i, extract in nested]
            else:
                cells = [(extract, [row[i] for row in rows]) for i, extract in nested]
            for r in range(len(rows)):
                for extract, column in cells:
                    for _path, schema, value in extract(column[r]):
                        values, rows_of = found.setdefault(schema, ([], []))
                        values.append(value)
                        rows_of.append(r)
            for schema, (values, rows_of) in found.items():
                col = self.columns.get(schema) or self.columns.setdefault(
                    schema, ColumnStats(schema, named=0 if self.mode == "auto" else 1))
                places.append(MeasuredPlace(values=values, rows=rows_of, exact_ratios=col.ratios.exact))
                columns.append(col)
        answer = measure_rows(rows, places, [self._engine(engines, col.name) for col in columns], self.spec)
        for col, counters in zip(columns, answer.places, strict=True):
            col.merge_page(counters)
        self.before.merge(answer.before)
        self.after.merge(answer.after)
        self.rows += len(rows)

    def _engine(self, engines: dict[str, ValueEngine], place: str) -> ValueEngine:
        engine = engines.get(place)
        if engine is None:
            engine = engines[place] = ValueEngine(self.mode, self.cap)
        return engine

    def snapshot(self) -> dict[tuple[str, ...], int]:
        """Every additive counter, flat: a sampled STATS differences two snapshots around a token
        range to get that range's totals (cqlsh_ext.scanning.sample)."""
        out: dict[tuple[str, ...], int] = {("rows",): self.rows}
        for side, cap in (("decompressed", self.before), ("stored", self.after)):
            out[("wcu", side)] = cap.wcu
            out[("rcu", side)] = cap.rcu
            out[("near_quota", side)] = cap.near_quota
            out[("over_quota", side)] = cap.over_quota
        for name, col in self.columns.items():
            out[("values", name)] = col.values
            out[("stored", name)] = col.stored
            out[("decompressed", name)] = col.size
            for k, (b, a) in enumerate(zip(col.before.counts, col.after.counts, strict=True)):
                out[("bucket", name, "decompressed", str(k))] = b
                out[("bucket", name, "stored", str(k))] = a
            for codec, n in col.by_codec().items():
                out[("codec", name, codec)] = n
        return out

    def figures(self) -> list[Figure]:
        """The figures a sampled report prints (insight.sampled), for the sample's stopping rule
        (scanning.sample): the table's rows; per column its values, bytes, ratio, codec mix and
        size buckets; the capacity units saved and the rows near and over the quota."""
        out = [Figure(TOTAL, ("rows",), name="rows in the table")]
        for name, col in self.columns.items():
            values = ("values", name)
            out += [Figure(TOTAL, values, name=f"{name}: values"),
                    Figure(TOTAL, ("stored", name), name=f"{name}: stored bytes"),
                    Figure(TOTAL, ("decompressed", name), name=f"{name}: decompressed bytes"),
                    Figure(RATIO, ("decompressed", name), ("stored", name), f"{name}: ratio")]
            out += [Figure(SHARE, ("codec", name, codec), values, f"{name}: share of {codec}")
                    for codec in col.by_codec()]
            out += [Figure(SHARE, ("bucket", name, side, str(k)), values, f"{name}: {side} {label}")
                    for side in ("decompressed", "stored") for k, label in enumerate(BUCKET_LABELS)]
        for unit in ("wcu", "rcu"):
            out.append(Figure(SHARE, (unit, "stored"), (unit, "decompressed"), f"{unit.upper()} saved"))
        out += [Figure(SHARE, (what, side), ("rows",), f"rows {words} 1 MB, {side}")
                for what, words in (("near_quota", "near"), ("over_quota", "over"))
                for side in ("decompressed", "stored")]
        return out

    def merge(self, other: Stats) -> None:
        """Add another Stats of the same query (a worker process's share of a scan)."""
        self.rows += other.rows
        for name, col in other.columns.items():
            mine = self.columns.get(name)
            if mine is None:
                self.columns[name] = col
            else:
                mine.merge(col)
        self.before.merge(other.before)
        self.after.merge(other.after)
        self.interrupted = self.interrupted or other.interrupted
        self.error = self.error or other.error

    def finish(self) -> None:
        self.elapsed = time.perf_counter() - self.started

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.error is None

    @property
    def undecodable(self) -> dict[str, int]:
        """Values no reading can read, by kind, over every column (ColumnStats.undecodable)."""
        out: dict[str, int] = {}
        for col in self.columns.values():
            for kind, n in col.undecodable().items():
                out[kind] = out.get(kind, 0) + n
        return out

    def verdict(self, sizes_of: str = "") -> str:
        return stats_verdict(self.pricing, list(self.columns.values()), self.before, self.after,
                             self.undecodable, sizes_of)

    def to_json(self) -> dict[str, object]:
        return {
            "command": "COMPRESSION STATS",
            "query": self.query,
            "complete": self.complete,
            "interrupted": self.interrupted,
            "error": self.error,
            "rows": self.rows,
            "elapsed_s": round(self.elapsed, 3),
            "rows_per_s": round(self.rows / self.elapsed, 1) if self.elapsed else None,
            "scan": self.scan,
            "retried": self.retried,
            "verdict": self.verdict(),
            **({"sample": self.sample} if self.sample is not None else {}),
            "notes": self.notes,
            "pricing": self.pricing.to_json(),
            "columns": [c.to_json() for c in self.columns.values()],
            "keyspaces": {
                "basis": f"per row, payload values (blob and text) of the row only; {self.pricing.basis()}; "
                "row quota 1 MB",
                "consistency": self.pricing.consistency,
                "decompressed": self.before.to_json(self.pricing),
                "stored": self.after.to_json(self.pricing),
                "wcu_saving": capacity.saving(self.before.wcu, self.after.wcu),
                "rcu_saving": capacity.saving(self.before.rcu, self.after.rcu)}}

    def render(self) -> list[Line]:
        rate = f", {self.rows / self.elapsed:,.0f} rows/s" if self.elapsed else ""
        lines: list[Line] = [
            f"COMPRESSION STATS: {report.count(self.rows)} rows in {self.elapsed:.1f} s{rate} ({self.scan})"]
        lines.extend(f"  {note}" for note in self.notes)
        # How the run ended comes before what it concludes: the verdict rests on the rows scanned.
        if self.interrupted:
            lines.append("  INTERRUPTED: the figures cover the rows scanned before Ctrl-C.")
        if self.error:
            lines.append(
                f"  STOPPED BY AN ERROR: {self.error}; the figures cover the rows scanned before it.")
        if self.columns:
            lines.append(self.verdict())
        lines.extend(retried_lines(self.retried))
        if not self.columns:
            lines.append("  No blob or text values in the result.")
            return lines
        for col in self.columns.values():
            lines.append("")
            lines.extend(render_column(col))
        lines.append("")
        lines.extend(render_capacity(self.before, self.after, "row", "per row over its blob and text values",
                                     self.pricing))
        return lines
