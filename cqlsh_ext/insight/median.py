"""A median in flat memory, for COMPRESSION STATS' per-value ratios (insight.stats): exact for the
first EXACT_VALUES values, then a log-spaced histogram (0.1 % wide bins); mergeable across workers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

_log, _floor = math.log, math.floor
_INV_STEP = 1 / math.log(1.001)


class StreamingMedian:
    """Exact median of the first EXACT_VALUES values, then a histogram with 0.1 %-wide log bins."""

    EXACT_VALUES = 8192
    _STEP = math.log(1.001)
    #: 1 / the log of a bin's width, and the bin of 0 (an empty payload): the bins the value
    #: engine counts a page's ratios in (payload.measures.median_bin).
    INV_STEP = _INV_STEP
    ZERO = -(10**9)

    def __init__(self) -> None:
        self.count = 0
        self._exact: list[float] | None = []
        self._bins: dict[int, int] = {}

    @property
    def exact(self) -> bool:
        return self._exact is not None

    def _bin(self, x: float) -> int:
        return _floor(_log(x) * _INV_STEP) if x > 0 else self.ZERO

    def add(self, x: float) -> None:
        self.count += 1
        exact = self._exact
        if exact is not None:
            exact.append(x)
            if len(exact) > self.EXACT_VALUES:
                self._fold(exact)
            return
        k = _floor(_log(x) * _INV_STEP) if x > 0 else self.ZERO  # _bin() inlined: once per value
        bins = self._bins
        bins[k] = bins.get(k, 0) + 1

    def extend(self, values: Iterable[float]) -> None:
        exact = self._exact
        if exact is None:
            for x in values:
                self.add(x)
            return
        before = len(exact)
        exact.extend(values)
        self.count += len(exact) - before
        if len(exact) > self.EXACT_VALUES:
            self._fold(exact)

    def _fold(self, exact: list[float]) -> None:
        """Past EXACT_VALUES: move to the histogram for good (memory stays flat)."""
        self._exact = None
        bins = self._bins
        for v in exact:
            k = self._bin(v)
            bins[k] = bins.get(k, 0) + 1

    def add_bins(self, bins: dict[int, int]) -> None:
        """Values counted in their bins already (a page's, by the value engine)."""
        if self._exact is not None:
            self._fold(self._exact)
        mine = self._bins
        for k, n in bins.items():
            mine[k] = mine.get(k, 0) + n
            self.count += n

    def merge(self, other: StreamingMedian) -> None:
        if other._exact is not None:
            self.extend(other._exact)
            return
        if self._exact is not None:
            self._fold(self._exact)
        self.count += other.count
        for k, n in other._bins.items():
            self._bins[k] = self._bins.get(k, 0) + n

    def median(self) -> float | None:
        if not self.count:
            return None
        if self._exact is not None:
            values = sorted(self._exact)
            mid = len(values) // 2
            return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
        half = self.count / 2
        seen = 0
        for k in sorted(self._bins):
            seen += self._bins[k]
            if seen >= half:
                return 0.0 if k == self.ZERO else math.exp((k + 0.5) * self._STEP)
        raise AssertionError("unreachable")
