"""Amazon Keyspaces arithmetic: the compression article's size buckets, capacity units, row quota
(what a full scan costs in read units, cost.py; what COMPRESSION STATS, ADVISE and TRIAL count).

Keyspaces bills a write by the row's size, 1 WCU per started 1 KB, and a read at LOCAL_QUORUM by
1 RCU per started 4 KB (half at LOCAL_ONE and ONE, eventually consistent reads); a row may hold
1 MB at most (docs/keyspaces.md, "Capacity"). KB and MB are 1024 and 1024*1024 bytes, as in the
article's buckets.

The one rule for pricing reads (`Pricing`): counters hold a row's read units at LOCAL_QUORUM (whole
numbers, which add up across slices and workers); a report prices them at the session's consistency
level and names it wherever units are shown.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from cqlsh_ext.payload.measures import MeasureSpec, RowUnits

KB = 1024
MB = 1024 * KB
#: Upper bounds (inclusive) of the compression article's buckets; the last is open.
BUCKET_BOUNDS: tuple[int, ...] = (KB, 4 * KB, 20 * KB, 67 * KB, MB)
BUCKET_LABELS: tuple[str, ...] = ("<= 1 KB", "1-4 KB", "4-20 KB", "20-67 KB", "67 KB-1 MB", "> 1 MB")
ROW_QUOTA = MB
#: "Near the quota": at least this share of it.
NEAR_QUOTA = 0.9


def bucket_of(size: int) -> int:
    """Index into BUCKET_LABELS for a size in bytes (bounds are inclusive)."""
    return bisect_left(BUCKET_BOUNDS, size)


def wcu(size: int) -> int:
    """Write capacity units for one row of `size` bytes: 1 per started KB, at least 1."""
    return max(1, -(-size // KB))


def rcu(size: int) -> int:
    """Read capacity units (LOCAL_QUORUM) for one row of `size` bytes: 1 per started 4 KB, at least 1."""
    return max(1, -(-size // (4 * KB)))


#: Read consistency levels Keyspaces bills as eventually consistent reads: half the read units.
EVENTUAL_READS = frozenset({"ONE", "LOCAL_ONE"})
#: The level reads are priced at when nothing else is known (Keyspaces' strongly consistent reads).
STRONG_READS = "LOCAL_QUORUM"


@dataclass(frozen=True)
class Pricing:
    """How a report prices capacity units, and what the user pays for.

    `consistency`: the level reads are priced at (the session's; TRIAL reads at it too), named
    wherever units are shown. `keyspaces`: the user pays in capacity units (Amazon Keyspaces), so a
    verdict speaks of write and read units first, then storage; else (Apache Cassandra) of storage
    and latency, and units are shown for what they would be on Keyspaces."""

    consistency: str = STRONG_READS
    keyspaces: bool = False

    @property
    def read_share(self) -> float:
        """A read's units at `consistency` over its units at LOCAL_QUORUM (0.5 or 1)."""
        return 0.5 if self.consistency.upper() in EVENTUAL_READS else 1.0

    def reads(self, strong_units: float) -> float:
        """Read units at `consistency` for reads that cost `strong_units` at LOCAL_QUORUM."""
        return strong_units * self.read_share

    def per_read(self) -> str:
        """'1 RCU per started 4 KB at LOCAL_QUORUM', '0.5 RCU per started 4 KB at LOCAL_ONE'."""
        return f"{self.read_share:g} RCU per started 4 KB read at {self.consistency}"

    def basis(self) -> str:
        """The whole rule in words, for a report's heading."""
        return f"1 WCU per started KB written, {self.per_read()}"

    def to_json(self) -> dict[str, object]:
        return {"consistency": self.consistency, "read_share": self.read_share, "keyspaces": self.keyspaces,
                "basis": self.basis()}


def units(value: float) -> str:
    """Capacity units as a report shows them: whole numbers with separators, halves kept."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


@dataclass
class Buckets:
    """Counts per size bucket."""

    counts: list[int] = field(default_factory=lambda: [0] * len(BUCKET_LABELS))

    def add(self, size: int) -> None:
        self.counts[bisect_left(BUCKET_BOUNDS, size)] += 1

    @property
    def total(self) -> int:
        return sum(self.counts)

    def to_json(self) -> dict[str, int]:
        return dict(zip(BUCKET_LABELS, self.counts, strict=True))


#: The units a row costs and its quota, as the value engine counts a page's rows
#: (payload.measures.RowUnits): 1 WCU per started KB, 1 RCU per started 4 KB, 1 MB at most.
ROW_UNITS = MeasureSpec(BUCKET_BOUNDS, (), 0.0, 0, (KB, 4 * KB), ROW_QUOTA, NEAR_QUOTA)


@dataclass
class Capacity(RowUnits):
    """Capacity units and quota use of a set of rows (or values), summed: a page's rows come
    counted from the value engine (payload.measures.RowUnits, merged); add() counts one more."""

    def add(self, size: int, spec: MeasureSpec = ROW_UNITS) -> None:
        super().add(size, spec)

    def to_json(self, pricing: Pricing | None = None) -> dict[str, float | int]:
        """The counters; `rcu` priced by `pricing` (None: at LOCAL_QUORUM)."""
        rcu = pricing.reads(self.rcu) if pricing is not None else self.rcu
        per = (lambda v: round(v / self.rows, 3)) if self.rows else (lambda v: 0)
        return {
            "rows": self.rows,
            "wcu": self.wcu,
            "rcu": rcu,
            "wcu_per_row": per(self.wcu),
            "rcu_per_row": per(rcu),
            "near_quota": self.near_quota,
            "over_quota": self.over_quota,
            "largest": self.largest,
        }


def saving(before: int, after: int) -> float | None:
    """Share saved going from `before` to `after` (0.25 = 25 % fewer); None when before is 0."""
    return round(1 - after / before, 4) if before else None


def saving_text(before: int, after: int) -> str:
    """`saving` as the reports print it: "25.0 %", "-" when before is 0."""
    s = saving(before, after)
    return "-" if s is None else f"{100 * s:.1f} %"
