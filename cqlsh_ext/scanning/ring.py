"""The token ring of the server's partitioner: its bounds, even splits, and random slices.

The partitioner is read from `system.local` (the driver's metadata has it too, but not before its
schema refresh, and a Keyspaces account can change it at any time):

- Murmur3Partitioner: tokens are signed 64-bit integers, -2**63 excluded (it is the minimum token,
  which no key hashes to).
- RandomPartitioner, and Amazon Keyspaces' DefaultPartitioner (documented to return the same
  token() results): tokens are integers in [0, 2**127].
- Others (ByteOrderedPartitioner, OrderPreservingPartitioner) have no numeric ring to split: such
  tables are scanned as one stream and cannot be sampled.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MURMUR3 = "org.apache.cassandra.dht.Murmur3Partitioner"
RANDOM = "org.apache.cassandra.dht.RandomPartitioner"
KEYSPACES_DEFAULT = "com.amazonaws.cassandra.DefaultPartitioner"


class RingError(ValueError):
    """A partitioner whose tokens cannot be split; str() is the one-line reason."""


@dataclass(frozen=True)
class Ring:
    partitioner: str
    #: Every token t of a key satisfies low < t <= high.
    low: int
    high: int

    @property
    def short_name(self) -> str:
        return self.partitioner.rsplit(".", 1)[-1]

    @property
    def span(self) -> int:
        return self.high - self.low

    def split(self, parts: int) -> list[tuple[int, int]]:
        """`parts` contiguous ranges (lo, hi] covering the ring."""
        parts = max(1, parts)
        bounds = [self.low + self.span * k // parts for k in range(parts)] + [self.high]
        return [(bounds[k], bounds[k + 1]) for k in range(parts)]

    def slice(self, index: int, slices: int) -> tuple[int, int]:
        """Slice `index` of `slices` equal ones: (lo, hi]."""
        return (self.low + self.span * index // slices, self.low + self.span * (index + 1) // slices)

    def random_slices(self, slices: int, rng: random.Random) -> Iterator[int]:
        """Slice indices in random order without repeats (stops after all `slices`)."""
        if slices <= 1 << 16:
            order = list(range(slices))
            rng.shuffle(order)
            yield from order
            return
        seen: set[int] = set()
        while len(seen) < slices:
            k = rng.randrange(slices)
            if k not in seen:
                seen.add(k)
                yield k


def ring_for(partitioner: str) -> Ring:
    name = partitioner or ""
    short = name.rsplit(".", 1)[-1]
    if short == "Murmur3Partitioner":
        return Ring(name, -(2**63), 2**63 - 1)
    if short in ("RandomPartitioner", "DefaultPartitioner"):
        return Ring(name, -1, 2**127)
    raise RingError(f"the partitioner {short or '(unknown)'} has no numeric token ring to split or sample")


def server_partitioner(session: Any) -> str:
    """system.local's partitioner ('' when the server does not say)."""
    try:
        row = session.execute("SELECT partitioner FROM system.local", timeout=10).one()
    except Exception:
        return ""
    if row is None:
        return ""
    value = row["partitioner"] if isinstance(row, dict) else row[0]
    return str(value or "")


def is_keyspaces(partitioner: str, host: str, asked_for: bool) -> bool:
    """Amazon Keyspaces (billed per read): --keyspaces or SigV4 asked for, its partitioner, or an
    AWS host name."""
    from cqlsh_ext.settings import region_from_host

    return asked_for or partitioner.startswith("com.amazonaws.") or region_from_host(host) is not None
