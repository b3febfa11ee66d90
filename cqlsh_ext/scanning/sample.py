"""A sampled COMPRESSION STATS: random token-range slices, whole partitions, estimates with intervals.

The ring is cut into M equal slices, sized from the table's partition count so that a slice holds
about SLICE_PARTITIONS partitions; slices are read in random order (whole partitions: no LIMIT,
paged), several at once, until the plan says stop:

    SAMPLE n              about n rows (slices already started are finished)
    SAMPLE p PERCENT      p % of the slices, so about p % of the partitions
    SAMPLE UNTIL x PERCENT [WITHIN s SECONDS]
                          until the 95 % interval on the byte-weighted ratio is within +-x %
                          of the estimate (relative), or the time limit passes
    SAMPLE                the same, +-1 % within 60 s

The partition count comes from system.size_estimates when the server has it (Cassandra refreshes
it every few minutes; Keyspaces documents it too), else from DISTINCT partition keys read after a
few random tokens. Estimates and their intervals are cqlsh_ext.scanning.estimate's; only slices
read to the end count (one cut by Ctrl-C or an error does not).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cqlsh_ext.scanning import estimate
from cqlsh_ext.scanning.ring import Ring

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


@dataclass
class SamplePlan:
    rows: int | None = None
    percent: float | None = None
    #: Relative half-width of the ratio's interval to reach (0.01 = +-1 %).
    precision: float | None = None
    seconds: float = DEFAULT_SECONDS
    seed: int | None = None

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
                     rng: random.Random, timeout: float | None) -> int | None:
    """Partition count from the density of DISTINCT partition keys after a few random tokens."""
    from cassandra.metadata import protect_name

    token = f"token({', '.join(protect_name(c) for c in partition_key)})"
    query = (f"SELECT DISTINCT {token} FROM {protect_name(keyspace)}.{protect_name(table)} "
             f"WHERE {token} > %s LIMIT {PROBE_LIMIT}")
    counts, spans = 0, 0
    for _ in range(PROBES):
        start = rng.randrange(ring.low, ring.high)
        try:
            tokens = [row[0] for row in session.execute(query, (start,), timeout=timeout)]
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


class Totals(Protocol):
    """What a sample accumulates into (insight.stats.Stats): rows read, and counters by key whose
    differences give one slice's totals. The overall ratio the precision target is checked on is
    the ('decompressed', ...) counters over the ('stored', ...) ones."""

    rows: int

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None: ...

    def snapshot(self) -> dict[tuple[str, ...], int]: ...


class SliceSampler:
    """Drives a sampled scan (ranges()) and collects per-slice totals (add_page()); the estimates
    and the report are the subclass's (insight.sampled.SampledStats)."""

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
        self.started = time.monotonic()
        #: Totals per finished slice; and the running ones, by the scanner's range index.
        self.done: list[dict[tuple[str, ...], int]] = []
        self._open: dict[int, dict[tuple[str, ...], int]] = {}
        #: Per finished slice, stored and decompressed bytes over every blob column: the overall
        #: ratio is checked as the sample grows, so it is kept apart from the totals' dicts.
        self._stored: list[float] = []
        self._decompressed: list[float] = []
        self._last_check = 0.0
        self._precision_met = False

    # -------------------------------------------------------------------- scanning
    def ranges(self) -> Iterator[tuple[int, int]]:
        """Slices in random order until the plan is met (read lazily by the Scanner)."""
        plan = self.plan
        target_slices = math.ceil(self.slices * plan.percent / 100) if plan.percent is not None else None
        for index in self.ring.random_slices(self.slices, self.rng):
            if plan.rows is not None and self.stats.rows >= plan.rows:
                self.stopped = f"{plan.rows:,} rows read"
                return
            if target_slices is not None and self.launched >= target_slices:
                self.stopped = f"{plan.percent:g} % of the ring read"
                return
            if plan.rows is None and plan.percent is None:
                if self._precision_met:
                    self.stopped = f"interval within +-{100 * self.target:g} %"
                    return
                if time.monotonic() - self.started > plan.seconds:
                    self.stopped = f"time limit ({plan.seconds:g} s)"
                    return
            self.launched += 1
            yield self.ring.slice(index, self.slices)
        self.stopped = "every slice read (the whole table)"

    @property
    def target(self) -> float:
        return self.plan.precision or DEFAULT_PRECISION

    def add_page(self, index: int, rows: list[Any], finished: bool) -> None:
        before = self.stats.snapshot()
        self.stats.add_rows(rows)
        after = self.stats.snapshot()
        totals = self._open.setdefault(index, {})
        for key, value in after.items():
            diff = value - before.get(key, 0)
            if diff:
                totals[key] = totals.get(key, 0) + diff
        if finished:
            totals = self._open.pop(index)
            self.done.append(totals)
            self._stored.append(float(sum(v for k, v in totals.items() if k[0] == "stored")))
            self._decompressed.append(float(sum(v for k, v in totals.items() if k[0] == "decompressed")))
            self._check_precision()

    def _check_precision(self) -> None:
        if self.plan.rows is not None or self.plan.percent is not None or len(self.done) < MIN_SLICES:
            return
        now = time.monotonic()
        if now - self._last_check < 0.1:
            return
        self._last_check = now
        rel = self.overall_ratio().relative
        self._precision_met = rel is not None and rel <= self.target

    # -------------------------------------------------------------------- estimates
    def _column(self, *key: str) -> list[float]:
        return [float(d.get(key, 0)) for d in self.done]

    def overall_ratio(self) -> estimate.Interval:
        return estimate.ratio(self._decompressed, self._stored, self.slices)
