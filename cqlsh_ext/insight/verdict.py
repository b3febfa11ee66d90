"""The verdicts COMPRESSION reports open with: a line or two that answers the user's question in
what the user pays (scanning.capacity.Pricing): on Amazon Keyspaces write and read capacity units,
then storage; on Apache Cassandra storage, then latency. Every report words its savings with these
phrases, so the same saving reads the same in STATS, ADVISE, TRIAL and SETTINGS.

Capacity units have a floor: a row costs at least 1 write unit and 1 read unit whatever its size,
so rows of at most 1 KB (4 KB for reads) cannot get cheaper by compression. A verdict never calls a
change that saves nothing on the measure paid a saving: it says what the change saves and what it
does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from cqlsh_ext.insight import report
from cqlsh_ext.scanning.capacity import Pricing

#: What a report's verdict line starts with.
LEAD = "Verdict:"
#: Less than this share of a measure is no saving worth a word.
NOTHING = 0.005
#: A change is worth making (ADVISE, SETTINGS) from this share of the measure paid; a dictionary is
#: worth keeping when it saves this much more than the best codec without one.
WORTH = 0.10


@dataclass(frozen=True)
class Change:
    """Measures before and after a change: write units, read units at LOCAL_QUORUM (a Pricing
    prices them: a share saved is the same at every level), stored bytes."""

    wcu: tuple[float, float]
    rcu: tuple[float, float]
    storage: tuple[float, float]

    @staticmethod
    def saving(pair: tuple[float, float]) -> float:
        before, after = pair
        return 1 - after / before if before else 0.0

    @property
    def wcu_saving(self) -> float:
        return self.saving(self.wcu)

    @property
    def rcu_saving(self) -> float:
        return self.saving(self.rcu)

    @property
    def storage_saving(self) -> float:
        return self.saving(self.storage)

    @property
    def saves_units(self) -> bool:
        return self.wcu_saving >= NOTHING or self.rcu_saving >= NOTHING

    def paid(self, pricing: Pricing) -> tuple[float, ...]:
        """The savings in the order the user pays them, to rank changes by: write units, read
        units, storage on Keyspaces; storage on Cassandra."""
        if pricing.keyspaces:
            return (round(self.wcu_saving, 4), round(self.rcu_saving, 4), round(self.storage_saving, 4))
        return (round(self.storage_saving, 4),)

    def paid_saving(self, pricing: Pricing) -> float:
        """The one share a change is judged on: write units on Keyspaces (read units when writes do
        not change, storage when neither does), storage on Cassandra."""
        if pricing.keyspaces:
            if abs(self.wcu_saving) >= NOTHING:
                return self.wcu_saving
            if abs(self.rcu_saving) >= NOTHING:
                return self.rcu_saving
        return self.storage_saving


def share(part: float, what: str) -> str:
    """'54 % of write units'; '3 % more read units' for a negative saving."""
    if part < 0:
        return f"{report.saved(-part)} more {what}"
    return f"{report.saved(part)} of {what}"


def saves(change: Change, pricing: Pricing, sizes: bool = False, sizes_of: str = "") -> str:
    """What a change saves, in what the user pays first: 'saves 54 % of write units, 21 % of read
    units and 64 % of storage'; on Keyspaces, units that do not move are said to be unchanged.
    Shares are the same at every consistency level: no level to name. `sizes`: the bytes after and
    before, '(2.5 MiB stored for 6.9 MiB)', after `sizes_of` ('in the sample: ')."""
    storage = share(change.storage_saving, "storage")
    if sizes:
        before, after = change.storage
        storage += f" ({sizes_of}{report.sized(round(after))} stored for {report.sized(round(before))})"
    if not pricing.keyspaces:
        return f"saves {storage}"
    units = [share(s, w) for s, w in ((change.wcu_saving, "write units"), (change.rcu_saving, "read units"))
             if abs(s) >= NOTHING]
    if not units:
        return f"saves {storage}; capacity units unchanged"
    return f"saves {', '.join(units)} and {storage}"


def floor_reason(rows: int, wcu: float, rcu: float, what: str = "row") -> str:
    """Why capacity units cannot drop, or '': `rows` rows (or values, `what`) cost `wcu` and `rcu`
    (LOCAL_QUORUM) uncompressed, and a row costs 1 of each at least."""
    whose = "every row's values are" if what == "row" else f"every {what} is"
    if rows and wcu <= rows and rcu <= rows:
        return (f"{whose} at most 1 KB even uncompressed (1 write unit and 1 read unit a {what}, "
                "whatever the codec)")
    return ""


def at_most(rows: int, wcu: float, rcu: float) -> str:
    """'at most 38 % of write units and 12 % of read units': the most compression could save on
    rows that cost `wcu` and `rcu` uncompressed, a row costing 1 of each at least."""
    parts = [share(1 - rows / total, what) for total, what in ((wcu, "write units"), (rcu, "read units"))
             if total and 1 - rows / total >= NOTHING]
    return f"at most {' and '.join(parts)}" if parts else ""
