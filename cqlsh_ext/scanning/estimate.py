"""Estimates with 95 % intervals from a sample of token-range slices (cluster sampling).

A sampled COMPRESSION STATS reads m slices chosen at random, without replacement, out of the M
equal slices of the token ring. Every partition lies in exactly one slice, so every partition has
the same chance (m / M) of being read, however many rows it holds: this is what keeps one wide
partition, or one node's ranges, from dominating. Each slice gives a vector of totals (rows,
stored bytes, decompressed bytes, values per bucket, ...).

- A table total is estimated by M times the mean slice total (the Horvitz-Thompson estimator).
- A ratio of two totals (the byte-weighted compression ratio, a bucket's share of the values, a
  saving in capacity units) by the ratio of the sampled sums, with the linearised variance of the
  ratio estimator: its residuals d_i = y_i - R x_i are per slice, so rows that share a partition
  share a residual and the interval widens when partitions are unlike one another.

Both use the finite population correction (1 - m / M) and Student's t with m - 1 degrees of freedom.
Standard library only: it is imported by the insight commands on first use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

_Z = NormalDist().inv_cdf(0.975)


def t_quantile(df: int) -> float:
    """Student's t 0.975 quantile (Cornish-Fisher expansion; within 0.2 % of tables from df = 3)."""
    if df <= 0:
        return math.inf
    if df == 1:
        return 12.706
    if df == 2:
        return 4.303
    z = _Z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@dataclass(frozen=True)
class Interval:
    """An estimate and its 95 % interval; `low`/`high` are None when the sample cannot give one."""

    estimate: float | None
    low: float | None
    high: float | None

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    @property
    def relative(self) -> float | None:
        """Half-width over the estimate (0.01 = +-1 %), or None."""
        hw = self.half_width
        if hw is None or not self.estimate:
            return None
        return hw / abs(self.estimate)

    def to_json(self, digits: int = 4) -> dict[str, float | None]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, digits)

        return {"estimate": r(self.estimate), "low": r(self.low), "high": r(self.high)}


def _fpc(m: int, population: int | None) -> float:
    return max(0.0, 1 - m / population) if population else 1.0


def total(ys: Sequence[float], population: int, *, floor: float = 0.0) -> Interval:
    """The table total of y from m sampled slices out of `population`."""
    m = len(ys)
    if not m:
        return Interval(None, None, None)
    mean = sum(ys) / m
    estimate = population * mean
    if m < 2:
        return Interval(estimate, None, None)
    var = sum((y - mean) ** 2 for y in ys) / (m - 1)
    half = t_quantile(m - 1) * population * math.sqrt(_fpc(m, population) * var / m)
    return Interval(estimate, max(floor, estimate - half), estimate + half)


def ratio(ys: Sequence[float], xs: Sequence[float], population: int | None,
          *, low_bound: float | None = None, high_bound: float | None = None) -> Interval:
    """Sum(y) / sum(x) over the sampled slices, with its interval; None when sum(x) is 0."""
    m = len(ys)
    sx, sy = sum(xs), sum(ys)
    if not m or not sx:
        return Interval(None, None, None)
    r = sy / sx
    if m < 2:
        return Interval(r, None, None)
    half = _ratio_half_width(m, sx, sum((y - r * x) ** 2 for y, x in zip(ys, xs, strict=True)), population)
    low, high = r - half, r + half
    if low_bound is not None:
        low = max(low, low_bound)
    if high_bound is not None:
        high = min(high, high_bound)
    return Interval(r, low, high)


def _ratio_half_width(m: int, sx: float, squared_residuals: float, population: int | None) -> float:
    """The 95 % half-width of a ratio of sums over m slices, from its residuals' sum of squares."""
    var_d = squared_residuals / (m - 1)
    return t_quantile(m - 1) * math.sqrt(_fpc(m, population) * var_d / m) / (sx / m)


def share(ys: Sequence[float], xs: Sequence[float], population: int | None) -> Interval:
    """A proportion (ratio bounded to [0, 1])."""
    return ratio(ys, xs, population, low_bound=0.0, high_bound=1.0)


def saving(before: Sequence[float], after: Sequence[float], population: int | None) -> Interval:
    """1 - sum(after) / sum(before): the share of capacity units saved."""
    r = ratio(after, before, population)
    if r.estimate is None:
        return r
    low = None if r.high is None else 1 - r.high
    high = None if r.low is None else 1 - r.low
    return Interval(1 - r.estimate, low, high)


# ------------------------------------------------------------------------------------- figures

#: A figure's kinds: a table total (precise within +-p of itself), a ratio of two totals (within
#: +-p of itself), a share of a total (within +-p of the whole: a share of 0.2 % cannot be known to
#: +-1 % of itself, but it can to +-1 point).
TOTAL, RATIO, SHARE = "total", "ratio", "share"


@dataclass(frozen=True)
class Figure:
    """A figure a sampled report prints, as the stopping rule sees it: `key`'s table total
    (TOTAL), or `key` over `of` (RATIO, SHARE), from the slices' additive counters; `name` says
    which it is in the report."""

    kind: str
    key: tuple[str, ...]
    of: tuple[str, ...] | None = None
    name: str = ""


class RunningSums:
    """Sums over the slices joined so far (one add() a slice: O(its counters)) from which every
    figure's interval width comes in O(1): the stopping rule is checked after each slice. Within
    rounding of total() and ratio(), which sum the slices themselves: report with those."""

    def __init__(self) -> None:
        self.m = 0
        self._sum: dict[tuple[str, ...], float] = {}
        self._squares: dict[tuple[str, ...], float] = {}
        self._products: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}
        self._slices: list[dict[tuple[str, ...], float]] = []

    def add(self, totals: dict[tuple[str, ...], float]) -> None:
        self.m += 1
        for key, value in totals.items():
            self._sum[key] = self._sum.get(key, 0.0) + value
            self._squares[key] = self._squares.get(key, 0.0) + value * value
        for (y, x) in self._products:
            self._products[(y, x)] += totals.get(y, 0.0) * totals.get(x, 0.0)
        self._slices.append(totals)

    def _product(self, y: tuple[str, ...], x: tuple[str, ...]) -> float:
        """Sum of y * x over the slices (kept up to date from its first use on)."""
        if (y, x) not in self._products:
            self._products[(y, x)] = sum(s.get(y, 0.0) * s.get(x, 0.0) for s in self._slices)
        return self._products[(y, x)]

    def width(self, figure: Figure, population: int | None) -> float | None:
        """The figure's 95 % half-width as its precision is judged: relative to the estimate for a
        TOTAL or a RATIO, absolute for a SHARE; 0 when the figure is 0 in every slice; None when
        the slices cannot give one."""
        m = self.m
        if m < 2:
            return None
        sy, syy = self._sum.get(figure.key, 0.0), self._squares.get(figure.key, 0.0)
        if figure.kind == TOTAL:
            if not sy:
                return 0.0
            var = max(0.0, syy - sy * sy / m) / (m - 1)
            return t_quantile(m - 1) * math.sqrt(_fpc(m, population) * var / m) / (sy / m)
        assert figure.of is not None
        sx, sxx = self._sum.get(figure.of, 0.0), self._squares.get(figure.of, 0.0)
        if not sx:
            return None
        if not sy:
            return 0.0
        r = sy / sx
        squared = max(0.0, syy - 2 * r * self._product(figure.key, figure.of) + r * r * sxx)
        half = _ratio_half_width(m, sx, squared, population)
        return half / abs(r) if figure.kind == RATIO else half
