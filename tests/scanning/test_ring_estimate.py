"""The token ring and the interval arithmetic of sampled reads, without a server: the statistics are
checked against simulation and textbook values."""

from __future__ import annotations

import random

import pytest

from cqlsh_ext.scanning import estimate
from cqlsh_ext.scanning.ring import KEYSPACES_DEFAULT, MURMUR3, RANDOM, RingError, ring_for


@pytest.mark.parametrize("partitioner", [MURMUR3, RANDOM, KEYSPACES_DEFAULT])
def test_split_and_slices_cover_the_ring_without_overlap(partitioner):
    ring = ring_for(partitioner)
    for parts in (1, 3, 16, 1000):
        ranges = ring.split(parts)
        assert ranges[0][0] == ring.low and ranges[-1][1] == ring.high and len(ranges) == parts
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:], strict=False))
        assert [ring.slice(k, parts) for k in range(parts)] == ranges
    # Murmur3 tokens are signed 64-bit; RandomPartitioner's (and Keyspaces' default) 0..2**127
    assert (ring.low, ring.high) == ((-(2**63), 2**63 - 1) if partitioner == MURMUR3 else (-1, 2**127))


def test_random_slices_visit_each_slice_once():
    ring = ring_for(MURMUR3)
    for n in (10, 70_000):
        order = list(ring.random_slices(n, random.Random(3)))
        assert sorted(order) == list(range(n))
    assert list(ring.random_slices(50, random.Random(1))) == list(ring.random_slices(50, random.Random(1)))


def test_unsplittable_partitioner_is_a_one_line_reason():
    with pytest.raises(RingError, match="ByteOrderedPartitioner has no numeric token ring"):
        ring_for("org.apache.cassandra.dht.ByteOrderedPartitioner")


def test_t_quantile_matches_tables():
    # Student's t, two-sided 95 %, from standard tables
    for df, value in ((3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042), (120, 1.980)):
        assert estimate.t_quantile(df) == pytest.approx(value, abs=0.004)


def _clustered_population(rng: random.Random, clusters: int) -> list[tuple[float, float]]:
    """(decompressed, stored) totals per slice: sizes vary a lot between slices, and each slice
    has its own compressibility (rows of one partition are alike), the case where treating rows as
    independent would make the interval too narrow."""
    out = []
    for _ in range(clusters):
        rows = rng.choice((1, 1, 2, 5, 40))
        ratio = rng.lognormvariate(1.1, 0.35)
        stored = sum(rng.lognormvariate(7, 0.8) for _ in range(rows))
        out.append((stored * ratio, stored))
    return out


def test_ratio_interval_covers_the_truth_95_percent_of_the_time():
    rng = random.Random(11)
    population = _clustered_population(rng, 4000)
    truth = sum(y for y, _ in population) / sum(x for _, x in population)
    hits = 0
    trials = 600
    for _ in range(trials):
        sample = rng.sample(population, 150)
        iv = estimate.ratio([y for y, _ in sample], [x for _, x in sample], len(population))
        assert iv.low is not None and iv.high is not None
        hits += iv.low <= truth <= iv.high
    assert 0.92 <= hits / trials <= 0.98, hits / trials


def test_total_interval_and_finite_population():
    rng = random.Random(5)
    population = [float(rng.randint(0, 20)) for _ in range(2000)]
    hits = sum(
        (lambda iv: iv.low <= sum(population) <= iv.high)(estimate.total(rng.sample(population, 100), 2000))
        for _ in range(400)
    )
    assert 0.92 <= hits / 400 <= 0.98
    # the whole population read: the estimate is exact and the interval has no width
    whole = estimate.total(population, len(population))
    assert whole.estimate == pytest.approx(sum(population)) and whole.half_width == pytest.approx(0)


def test_share_and_saving_bounds():
    assert estimate.share([1, 1], [1, 1], 10).high == 1.0
    s = estimate.saving([10, 12, 8], [4, 5, 3], 100)
    assert s.estimate == pytest.approx(1 - 12 / 30) and s.low < s.estimate < s.high
    assert estimate.ratio([], [], 10).estimate is None
    assert estimate.ratio([1.0], [2.0], 10).low is None  # one slice: no interval, never a fake one
