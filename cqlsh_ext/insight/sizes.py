"""Value sizes on a log scale, 64 B to 1 MB, for COMPRESSION STATS' size histogram: a count per
power of two, in flat memory and mergeable (worker processes, Spark tasks, sample slices add
their counts), like insight.median's sketch.

The Keyspaces buckets (scanning.capacity) answer "how many values cost how many units"; this
answers "what do the sizes look like", in finer steps: a bin per doubling, so a column whose
values cluster just under or over 1 KB shows it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable

from cqlsh_ext.common.units import human_size

#: Upper bounds (inclusive) of the bins: 64 B, 128 B, ... 1 MB; below the first and above the last
#: are a bin each.
BOUNDS: tuple[int, ...] = tuple(64 << k for k in range(15))


def _label(size: int) -> str:
    return human_size(size).replace(".0 ", " ").replace("KiB", "KB").replace("MiB", "MB")


def labels() -> list[str]:
    """'<= 64 B', '64-128 B', ..., '512 KB-1 MB', '> 1 MB' (1 KB = 1,024 bytes, as the buckets)."""
    out = [f"<= {_label(BOUNDS[0])}"]
    for low, high in zip(BOUNDS, BOUNDS[1:], strict=False):
        lo, hi = _label(low), _label(high)
        same_unit = lo.split()[1] == hi.split()[1]
        out.append(f"{lo.split()[0]}-{hi}" if same_unit else f"{lo}-{hi}")
    out.append(f"> {_label(BOUNDS[-1])}")
    return out


class SizeHistogram:
    """Counts of sizes per bin (BOUNDS)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts = [0] * (len(BOUNDS) + 1)

    def add(self, size: int) -> None:
        self.counts[bisect_left(BOUNDS, size)] += 1

    def extend(self, sizes: Iterable[int]) -> None:
        """add() for many sizes, the per-size work done by builtins."""
        counts = self.counts
        for index, n in Counter(map(_bin, sizes)).items():
            counts[index] += n

    def merge(self, other: SizeHistogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]

    @property
    def total(self) -> int:
        return sum(self.counts)

    def to_json(self) -> list[int]:
        return list(self.counts)


def _bin(size: int) -> int:
    return bisect_left(BOUNDS, size)
