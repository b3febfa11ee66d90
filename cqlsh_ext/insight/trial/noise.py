"""How much of a difference between two variants is the cluster's noise: intervals for the change
of a latency percentile (or of operations per second) from the trial's rounds.

The trial runs in rounds; in each round every variant does its share of the operations, so a
round is one small trial of its own, run in that round's conditions. For each round r the change
of a figure is d_r = ln(variant's figure in r / uncompressed's in r): paired within the round, a
compaction or a GC pause that slows the whole round cancels out. The change reported is the mean
of the d_r, and its interval the mean plus and minus Student's t with R - 1 degrees of freedom
times sd(d_r) / sqrt(R), taken back from logarithms: +45 % (+12 to +80 %). An interval that holds
0 is no measurable difference.

Why the rounds' mean and not the change of the whole trial's percentiles (what the report's tables
show): when rounds differ (one slowed by a compaction), the whole trial's p99 is mostly the slow
rounds' tail, and the rounds' spread does not measure how far that moves; the paired mean keeps
its 95 % (tests/insight/test_noise.py checks both by simulation).

Fewer than MIN_ROUNDS rounds, or rounds too small to hold the percentile (a round's p99 needs
some tens of operations), give no interval: the report says the difference cannot be told.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from cqlsh_ext.scanning.estimate import t_quantile

#: Rounds an interval needs at least (two give a t of 12.7: nothing would ever be measurable).
MIN_ROUNDS = 3
#: Operations a round needs for its own percentile p: at least this many, and enough that p leaves
#: HALF_TAIL operations above it (a p99 from 50 operations is its next-to-largest).
MIN_ROUND_OPS = 10
HALF_TAIL = 0.5

HIGHER, LOWER, SAME, UNKNOWN = "higher", "lower", "no measurable difference", "unknown"


def percentile(values: Sequence[float], pct: float) -> float:
    """The value at `pct` of sorted `values` by nearest rank (as HdrHistogram reports it): the
    smallest value at least pct % of the values do not exceed."""
    rank = max(1, math.ceil(pct / 100 * len(values)))
    return values[rank - 1]


def needs(pct: float) -> int:
    """Operations a round needs to have its own `pct` percentile."""
    tail = (100 - pct) / 100
    return max(MIN_ROUND_OPS, math.ceil(HALF_TAIL / tail)) if tail > 0 else MIN_ROUND_OPS


@dataclass(frozen=True)
class Difference:
    """A figure's change against the baseline (0.45: 45 % higher), with its 95 % interval from the
    rounds; `low`/`high` None when the rounds cannot give one."""

    change: float | None
    low: float | None = None
    high: float | None = None
    rounds: int = 0
    #: The whole trial's change (its percentiles' or rates'), which the report's tables show.
    overall: float | None = None

    @property
    def outcome(self) -> str:
        """HIGHER or LOWER when the interval leaves out 0, SAME when it holds it, UNKNOWN without."""
        if self.change is None or self.low is None or self.high is None:
            return UNKNOWN
        if self.low > 0:
            return HIGHER
        if self.high < 0:
            return LOWER
        return SAME

    def text(self) -> str:
        """'+45 % (+12 to +80 %)', 'no measurable difference (-12 to +9 %)', '+10 % (no interval)'."""
        if self.change is None:
            return "-"
        if self.low is None or self.high is None:
            return f"{signed(self.change)} (no interval)"
        span = f"{signed(self.low, unit=False)} to {signed(self.high)}"
        if self.outcome == SAME:
            return f"{SAME} ({span})"
        return f"{signed(self.change)} ({span})"

    def to_json(self) -> dict[str, object]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {"change": r(self.change), "low": r(self.low), "high": r(self.high), "rounds": self.rounds,
                "outcome": self.outcome, "overall": r(self.overall)}


def signed(share: float, unit: bool = True) -> str:
    """'+45 %', '-3.2 %', '+180 %' (unit False: without ' %')."""
    value = 100 * share
    text = f"{value:+.1f}" if abs(value) < 10 else f"{value:+,.0f}"
    return f"{text} %" if unit else text


def _difference(logs: list[float], overall: float) -> Difference:
    """The rounds' mean change and its interval from their log changes; without enough rounds the
    whole trial's change (`overall`, a share) alone."""
    if len(logs) < MIN_ROUNDS:
        return Difference(overall, rounds=len(logs), overall=overall)
    mean = statistics.fmean(logs)
    half = t_quantile(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    low, high = math.exp(mean - half) - 1, math.exp(mean + half) - 1
    return Difference(math.exp(mean) - 1, low, high, len(logs), overall)


def latency_difference(variant: Sequence[Sequence[float]], base: Sequence[Sequence[float]], pct: float,
                       overall: float | None, overall_base: float | None) -> Difference:
    """The change of latency percentile `pct` from the rounds' latencies (`variant[r]`, `base[r]`:
    round r's, in any order); `overall` against `overall_base`: the whole trial's percentiles."""
    if not overall or not overall_base:
        return Difference(None)
    least = needs(pct)
    logs = []
    for mine, theirs in zip(variant, base, strict=False):
        if len(mine) >= least and len(theirs) >= least:
            a, b = percentile(sorted(mine), pct), percentile(sorted(theirs), pct)
            if a > 0 and b > 0:
                logs.append(math.log(a / b))
    return _difference(logs, overall / overall_base - 1)


def rate_difference(variant: Sequence[tuple[int, float]], base: Sequence[tuple[int, float]],
                    overall: float | None, overall_base: float | None) -> Difference:
    """The change of operations per second from the rounds' (operations, seconds) pairs; `overall`
    against `overall_base`: the whole trial's rates."""
    if not overall or not overall_base:
        return Difference(None)
    logs = [math.log((n / s) / (m / t)) for (n, s), (m, t) in zip(variant, base, strict=False)
            if n >= MIN_ROUND_OPS and m >= MIN_ROUND_OPS and s > 0 and t > 0]
    return _difference(logs, overall / overall_base - 1)
