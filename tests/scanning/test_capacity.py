"""Amazon Keyspaces arithmetic (the size buckets, capacity units, the row quota) against the rules
written out independently."""

from __future__ import annotations

import math

import pytest

from cqlsh_ext.scanning import capacity


def expected_bucket(size: int) -> str:
    # The article's buckets written out as comparisons (independent of capacity.BUCKET_BOUNDS).
    if size <= 1024:
        return "<= 1 KB"
    if size <= 4 * 1024:
        return "1-4 KB"
    if size <= 20 * 1024:
        return "4-20 KB"
    if size <= 67 * 1024:
        return "20-67 KB"
    if size <= 1024 * 1024:
        return "67 KB-1 MB"
    return "> 1 MB"


@pytest.mark.parametrize(
    "size", [0, 1, 1023, 1024, 1025, 4096, 4097, 20480, 20481, 68608, 68609, 1048576, 1048577, 5 << 20]
)
def test_buckets_and_capacity_units(size):
    assert capacity.BUCKET_LABELS[capacity.bucket_of(size)] == expected_bucket(size)
    assert capacity.wcu(size) == max(1, math.ceil(size / 1024))
    assert capacity.rcu(size) == max(1, math.ceil(size / 4096))
    c = capacity.Capacity()
    c.add(size)
    assert (c.wcu, c.rcu) == (capacity.wcu(size), capacity.rcu(size))
    assert c.over_quota == (size > 1048576)
    assert c.near_quota == (0.9 * 1048576 <= size <= 1048576)
