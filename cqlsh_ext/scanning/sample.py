"""Sampling a table: random token-range slices, whole partitions, estimates with intervals. The one
policy for every command that samples a table (COMPRESSION STATS SAMPLE; COMPRESSION TRIAL takes
its values with it; DESCRIBE PAYLOAD), in one class, `SliceSampler`:

    sampler = SliceSampler.of_table(session, totals, SamplePlan(...), keyspace, table, partition_key)
                            # the ring, the table's size, the slices (count_partitions)
    sampler.read(scanner_for(ctx, sampler.spec(query, partition_key), progress))
                            # slices SAMPLE_STREAMS at a time: set_columns(names, types) on the
                            # first page, add_page(scanner.page_range, rows, scanner.range_finished)
                            # for every page (False: the sample is decided)
    sampler.whole_table     '' for a sample; else why the table should be read whole instead (an
                            exact scan: cheaper than the sample), found before any slice is read
                            (the server's size estimate) or after the first ones (theirs)
    sampler.short()         the figures that did not reach the precision asked (a time limit)

`totals` is the command's aggregate (a `Totals`): what it adds up per slice, and the figures it
prints (`figures()`), which the stopping rule judges.

The policy. A sample must not cost more truth than it saves:
- Where the table is small enough that reading it whole is cheap (WHOLE_TABLE_BYTES, by the
  server's size estimate, or by the first slices' when the server has none), a SAMPLE that asks
  for a precision is not a sample: `whole_table` says why, the sampler reads no further, and the
  command reads the table whole (one stream: many small slices would take longer) and says so.
- Otherwise it stops only when every figure it prints has reached its precision: totals and ratios
  within +-x % of themselves, shares (codecs, size buckets, units saved) within +-x points, at 95 %;
  or at the time limit, saying which figures fell short.
- SAMPLE n and SAMPLE p PERCENT are sizes the user chose: they are read as asked.

The ring is cut into M equal slices, sized from the table's partition count so that a slice holds
about SLICE_PARTITIONS partitions; slices are read in random order (whole partitions: no LIMIT,
paged), several at once, until the plan says stop:

    SAMPLE n              the first slices (in the order drawn) that hold n rows, the last one
                          cut at the n-th row (its part counts as a slice: one of K)
    SAMPLE p PERCENT      the first p % of the slices, so about p % of the partitions
    SAMPLE UNTIL x PERCENT [WITHIN s SECONDS]
                          the first slices (30 at least) whose every figure is within its
                          precision (above), or those read when the time limit passes; the whole
                          table where that is cheap
    SAMPLE                the same, +-1 % within 60 s

The sample is always the first K slices in the order drawn, whichever finish first: a slice read
before an earlier one waits for it before it counts, and every stopping rule but the time limit is
checked after each slice joins in that order. So a seed draws the same slices, and the same seed
with the same slice count gives the same sample and the same estimates, however the reads
interleave (only WITHIN's clock can end a sample at a different K). Slices drawn after K are
dropped, read or not. Each slice is read into a fresh Totals of its own and merged into the
report's in that order; slices that wait hold their Totals until they join.

The partition count comes from system.size_estimates when the server has it (Cassandra refreshes
it every few minutes; Keyspaces documents it too), else from DISTINCT partition keys read after a
few random tokens. Estimates and their intervals are cqlsh_ext.scanning.estimate's; only slices
read to the end count (one cut by Ctrl-C or an error does not, nor any drawn after it).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from cqlsh_ext.common.interrupt import Flag
from cqlsh_ext.scanning import estimate
from cqlsh_ext.scanning.aggregate import Aggregate
from cqlsh_ext.scanning.consume import consume
from cqlsh_ext.scanning.ring import Ring, ring_for, server_partitioner
from cqlsh_ext.scanning.scan import ScanSpec

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from cqlsh_ext.scanning.scan import Scanner

#: Partitions a slice should hold: small enough that many slices make the sample (the variance
#: is estimated between slices), large enough that a request is not wasted on an empty range.
#: bench/scale.py: 256 reached +-1 % on the 1M-row table in 13.5 s, 64 in 14.7 s.
SLICE_PARTITIONS = 256
#: At least this many slices, however small the table: the interval needs many units.
MIN_SLICE_COUNT = 1024
MAX_SLICES = 1 << 24
#: Slices read at once.
SAMPLE_STREAMS = 16
#: A precision target is not trusted before this many slices (the variance estimate needs them).
MIN_SLICES = 30
DEFAULT_PRECISION = 0.01
DEFAULT_SECONDS = 60.0
#: Partition count probe when size_estimates has nothing: DISTINCT keys after PROBES random tokens.
PROBES, PROBE_LIMIT = 4, 500
#: Where a table's size comes from, as reports say it ("about 2,011 partitions, {basis}"): the
#: server's estimate, or the partition keys read after a few random tokens (probe_partitions).
SERVER_ESTIMATE = "the server's estimate (system.size_estimates)"
PROBED = f"estimated from the partition keys found after {PROBES} random places in the ring"
#: A sample that asks for a precision reads the whole table when it is estimated at this many bytes
#: or fewer: one stream reads that in a second or two (docs/insight-scale.md), where a sample would
#: still leave intervals (the 2,000-row demo table: +-20 % on its row count after 64 rows).
WHOLE_TABLE_BYTES = 16 << 20


@dataclass
class SamplePlan:
    rows: int | None = None
    percent: float | None = None
    #: Relative half-width of the ratio's interval to reach (0.01 = +-1 %).
    precision: float | None = None
    seconds: float = DEFAULT_SECONDS
    seed: int | None = None

    @property
    def until(self) -> bool:
        """A precision is asked for (SAMPLE, SAMPLE UNTIL), not a size."""
        return self.rows is None and self.percent is None

    def describe(self) -> str:
        if self.rows is not None:
            return f"SAMPLE {self.rows:,} rows"
        if self.percent is not None:
            return f"SAMPLE {self.percent:g} % of the ring"
        return f"SAMPLE UNTIL +-{100 * (self.precision or DEFAULT_PRECISION):g} % WITHIN {self.seconds:g} s"


def slice_count(partitions: int | None) -> int:
    if not partitions:
        return 4 * MIN_SLICE_COUNT
    return max(MIN_SLICE_COUNT, min(MAX_SLICES, partitions // SLICE_PARTITIONS))


def probe_partitions(session: Any, ring: Ring, keyspace: str, table: str, partition_key: list[str],
                     rng: random.Random, timeout: float | None, stop: Flag | None = None) -> int | None:
    """Partition count from the density of DISTINCT partition keys after a few random tokens;
    None when `stop` is set between two probes (the reading was stopped: nothing is counted)."""
    from cassandra.metadata import protect_name

    token = f"token({', '.join(protect_name(c) for c in partition_key)})"
    query = (f"SELECT DISTINCT {token} FROM {protect_name(keyspace)}.{protect_name(table)} "
             f"WHERE {token} > %s LIMIT {PROBE_LIMIT}")
    counts, spans = 0, 0
    for _ in range(PROBES):
        if stop is not None and stop.is_set():
            return None
        start = rng.randrange(ring.low, ring.high)
        try:
            # The shell's session gives rows as dicts (cqlsh's row factory), a plain one tuples.
            tokens = [next(iter(row.values())) if isinstance(row, dict) else row[0]
                      for row in session.execute(query, (start,), timeout=timeout)]
        except Exception:
            return None
        if len(tokens) < PROBE_LIMIT:  # reached the end of the ring: count what is there
            counts += len(tokens)
            spans += ring.high - start
            continue
        counts += len(tokens) - 1
        spans += int(tokens[-1]) - start
    if not counts or spans <= 0:
        return None
    return max(1, round(counts * ring.span / spans))


class Totals(Aggregate, Protocol):
    """What a sample accumulates into (insight.stats.Stats): an Aggregate (each slice is read into
    a fresh() one, merged into the report's in launch order) whose additive counters, flat by key,
    are one slice's totals (snapshot()), and the figures its report prints from them (figures():
    the precision is judged on every one). The ('stored', ...) counters are the bytes read (what
    makes the whole table cheap or not); the ('decompressed', ...) over them, the overall ratio the
    progress line shows."""

    def snapshot(self) -> dict[tuple[str, ...], int]: ...

    def figures(self) -> list[estimate.Figure]: ...


class SliceSampler:
    """Drives a sampled scan (ranges()) and collects per-slice totals (set_columns(), then
    add_page() for every page); the estimates and the report are the subclass's
    (insight.sampled.SampledStats)."""

    def __init__(self, stats: Totals, ring: Ring, slices: int, plan: SamplePlan,
                 server_partitions: int | None, partitions_basis: str) -> None:
        self.stats = stats
        self.ring = ring
        self.slices = slices
        self.plan = plan
        self.server_partitions = server_partitions
        self.partitions_basis = partitions_basis
        self.seed = plan.seed if plan.seed is not None else random.SystemRandom().randrange(1 << 31)
        self.rng = random.Random(self.seed)
        self.launched = 0
        self.stopped = ""
        #: Why every slice is read, the whole table ('' for a sample).
        self.whole_table = ""
        #: The sample is decided (its K slices joined): nothing more is launched or counted.
        self.enough = False
        self.started = time.monotonic()
        #: Totals per joined slice, in launch order: the first len(done) slices are the sample.
        self.done: list[dict[tuple[str, ...], int]] = []
        #: Per joined slice, stored and decompressed bytes over every column (the overall ratio,
        #: and the table's size the first slices estimate); each figure's width is checked after
        #: every slice joins from running sums (O(1) a slice).
        self._stored: list[float] = []
        self._decompressed: list[float] = []
        self._sums = estimate.RunningSums()
        self._columns: tuple[Sequence[str], Sequence[Any]] | None = None
        #: By launch index (the scanner's range index): slices being read, and slices read to the
        #: end that wait for an earlier one.
        self._reading: dict[int, Totals] = {}
        self._waiting: dict[int, Totals | list[Any]] = {}
        #: SAMPLE n: by launch index, the rows of a slice being read, held until it joins.
        self._held: dict[int, list[Any]] = {}

    @classmethod
    def of_table(cls, session: Any, stats: Totals, plan: SamplePlan, keyspace: str, table: str,
                 partition_key: Sequence[str], ring: Ring | None = None) -> Self:
        """A sampler of the table, its partitions counted (count_partitions); on the server's ring
        unless `ring` is given. Raises RingError where the server's partitioner has no ring to cut."""
        sampler = cls(stats, ring or ring_for(server_partitioner(session)), 1, plan, None, "")
        sampler.count_partitions(session, keyspace, table, list(partition_key))
        return sampler

    # -------------------------------------------------------------------- scanning
    def count_partitions(self, session: Any, keyspace: str, table: str, partition_key: list[str]) -> None:
        """How many partitions the table has, and so how many slices to take: the server's size
        estimate, else a probe (probe_partitions)."""
        from cqlsh_ext.scanning.scan import table_size

        size = table_size(session, keyspace, table, self.ring.span)
        partitions: int | None
        if size is not None:
            partitions, basis = size.partitions, SERVER_ESTIMATE
            self._whole_if_cheap(size.bytes, "the server estimates it")
        else:
            partitions = probe_partitions(session, self.ring, keyspace, table, partition_key, self.rng,
                                          session.default_timeout)
            basis = PROBED
        self.slices = slice_count(partitions)
        self.server_partitions, self.partitions_basis = partitions, basis

    def _whole_if_cheap(self, size: float, by: str) -> None:
        """A precision asked for, and the table estimated at WHOLE_TABLE_BYTES or less: read it
        whole (the policy, in the module docstring)."""
        if self.plan.until and not self.whole_table and size <= WHOLE_TABLE_BYTES:
            self.whole_table = (f"{by} at {_megabytes(size)}, which reads whole in less time than a sample "
                                "takes: exact figures")

    @property
    def target_slices(self) -> int | None:
        """SAMPLE p PERCENT's slice count."""
        return math.ceil(self.slices * self.plan.percent / 100) if self.plan.percent is not None else None

    def ranges(self) -> Iterator[tuple[int, int]]:
        """Slices in random order until the sample is decided (read lazily by the Scanner)."""
        plan = self.plan
        target = self.target_slices
        for index in self.ring.random_slices(self.slices, self.rng):
            if self.enough or self.whole_table or (target is not None and self.launched >= target):
                return
            if plan.until and time.monotonic() - self.started > plan.seconds:
                # The slices running finish and join; the sample is what has joined then.
                self.stopped = f"time limit ({plan.seconds:g} s)"
                return
            self.launched += 1
            yield self.ring.slice(index, self.slices)
        self.stopped = self.stopped or "every slice read (the whole table)"

    def spec(self, query: str, partition_key: Sequence[str], also: str = "") -> ScanSpec:
        """The scan of the sample's slices (ranges(), SAMPLE_STREAMS at once). A sample whose
        Totals answer nobody before the report (STATS: `answers_at_end`) asks its first slice alone at
        a small page and the others at the size that page's rows call for (ScanSpec.sized_first);
        the others (DESCRIBE, TRIAL, a rewrite's preview) start every slice small."""
        return ScanSpec(query, partition_key=list(partition_key), ranges=self.ranges(),
                        streams=SAMPLE_STREAMS, also=also,
                        sized_first=bool(getattr(self.stats, "answers_at_end", False)))

    @property
    def target(self) -> float:
        return self.plan.precision or DEFAULT_PRECISION

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        """The result's columns (first page), for the report's Totals and every slice's."""
        self.stats.set_columns(names, types)
        self._columns = (list(names), list(types))

    def read(self, scanner: Scanner, accept: Callable[[], bool] | None = None,
             stop: threading.Event | None = None, enough: Callable[[], bool] | None = None) -> bool:
        """The sample read through `scanner` (on spec()), each page added to its slice (add_page);
        False when `accept()`, asked after the first page's columns are set, refused them. A `stop`
        set (the reading's ctx.stop) ends the scan, marked interrupted. Without `enough` the slices
        started are read to their end; with it, the scan ends once `enough()` says so."""

        def start(names: Sequence[str], types: Sequence[Any]) -> bool:
            self.set_columns(names, types)
            return accept is None or accept()

        def take(_names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> bool:
            self.add_page(scanner.page_range, rows, scanner.range_finished)
            if stop is not None and stop.is_set():
                scanner.interrupted = True
                return False
            return enough is None or not enough()

        return consume(scanner, start, take) is not None

    def add_page(self, index: int, rows: list[Any], finished: bool) -> bool:
        """One page of the slice launched `index`-th; False once the sample is decided."""
        if self.enough:
            return False
        if self.plan.rows is not None:
            # SAMPLE n is n rows: a slice's rows are held until it joins, and the slice that reaches
            # n adds only those up to it; the one that joins next is cut there as it is read.
            held = self._held.setdefault(index, [])
            held.extend(rows)
            if finished or (index == len(self.done) and self.stats.rows + len(held) >= self.plan.rows):
                self._waiting[index] = self._held.pop(index)
                self._join()
            return not self.enough
        part = self._reading.get(index)
        if part is None:
            part = self._reading[index] = self._fresh()
        part.add_rows(rows)
        if finished:
            self._waiting[index] = self._reading.pop(index)
            self._join()
        return not self.enough

    def _fresh(self) -> Totals:
        assert self._columns is not None, "set_columns first"
        part = self.stats.fresh()
        part.set_columns(*self._columns)
        return part

    def _cut(self, rows: list[Any]) -> Totals:
        """A SAMPLE n slice's totals: its rows up to the n-th of the sample."""
        assert self.plan.rows is not None
        part = self._fresh()
        part.add_rows(rows[:self.plan.rows - self.stats.rows])
        return part

    def _join(self) -> None:
        """Slices read to the end join in launch order, each followed by the stopping rules."""
        while not self.enough and len(self.done) in self._waiting:
            waited = self._waiting.pop(len(self.done))
            part = self._cut(waited) if isinstance(waited, list) else waited
            totals = {key: value for key, value in part.snapshot().items() if value}
            self.stats.merge(part)
            self.done.append(totals)
            stored = float(sum(v for k, v in totals.items() if k[0] == "stored"))
            decompressed = float(sum(v for k, v in totals.items() if k[0] == "decompressed"))
            self._stored.append(stored)
            self._decompressed.append(decompressed)
            self._sums.add({k: float(v) for k, v in totals.items()})
            reason = self._stop_reason()
            if reason:
                self.stopped, self.enough = reason, True
                self._reading.clear()
                self._waiting.clear()
                self._held.clear()

    def _stop_reason(self) -> str:
        plan, joined = self.plan, len(self.done)
        if plan.rows is not None:
            return f"{plan.rows:,} rows read" if self.stats.rows >= plan.rows else ""
        target = self.target_slices
        if target is not None:
            return f"{plan.percent:g} % of the ring read" if joined >= target else ""
        if joined < MIN_SLICES:
            return ""
        if not self.whole_table:
            # No size estimate from the server: the slices read so far give one.
            self._whole_if_cheap(self.slices * sum(self._stored) / joined, "the first slices estimate it")
        if self.whole_table:
            return "the whole table is cheaper to read"
        # The running sums say when to look; the intervals reported (estimate's, over the slices)
        # decide, so a sample stopped here always shows its target met.
        figures = self.stats.figures()
        if any(not self._precise(self._sums.width(f, self.slices)) for f in figures):
            return ""
        if self.short(figures):
            return ""
        return f"every figure within +-{100 * self.target:g} %"

    def _precise(self, width: float | None) -> bool:
        return width is not None and width <= self.target

    def short(self, figures: list[estimate.Figure] | None = None
              ) -> list[tuple[estimate.Figure, float | None]]:
        """The figures whose interval is wider than the precision asked, with their widths (the
        slices joined so far, as the report computes them)."""
        out = []
        for figure in figures if figures is not None else self.stats.figures():
            width = self.width(figure)
            if not self._precise(width):
                out.append((figure, width))
        return out

    def width(self, figure: estimate.Figure) -> float | None:
        """A figure's half-width as its precision is judged (estimate.RunningSums.width), from the
        slices themselves."""
        ys = self._column(*figure.key)
        if figure.kind == estimate.TOTAL:
            return estimate.total(ys, self.slices).relative if any(ys) else 0.0
        assert figure.of is not None
        found = estimate.ratio(ys, self._column(*figure.of), self.slices)
        if found.estimate == 0:
            return 0.0
        return found.relative if figure.kind == estimate.RATIO else found.half_width

    # -------------------------------------------------------------------- estimates
    def _column(self, *key: str) -> list[float]:
        return [float(d.get(key, 0)) for d in self.done]

    def overall_ratio(self) -> estimate.Interval:
        return estimate.ratio(self._decompressed, self._stored, self.slices)


def _megabytes(size: float) -> str:
    return f"{size / 1e6:,.1f} MB" if size >= 1e5 else f"{size / 1e3:,.0f} KB"
