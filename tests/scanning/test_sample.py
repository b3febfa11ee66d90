"""A sampled STATS is the first K slices in the order drawn, whatever order their pages arrive in:
the sampler fed as the Scanner feeds it (16 slices at once, pages interleaved), with real values
measured by the real Stats. The same against the server: tests/insight/test_scale.py."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable

import pytest
from cassandra.cqltypes import BytesType

from cqlsh_ext.demo.records import documents
from cqlsh_ext.insight.sampled import SampledStats
from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.scanning import estimate
from cqlsh_ext.scanning.ring import MURMUR3, ring_for
from cqlsh_ext.scanning.sample import SAMPLE_STREAMS, SamplePlan

DOCS = [d.encode() for d in documents(40, seed=5)]
SLICES = 400


def _pages(lo: int) -> list[list[tuple[bytes]]]:
    """A slice's pages, fixed by where it starts: 0-3 pages of 0-6 rows, gzip JSON or random bytes
    (so slices differ in size and in ratio)."""
    rng = random.Random(lo)
    pages = []
    for _ in range(rng.randint(1, 3)):
        rows = []
        for _ in range(rng.randint(0, 6)):
            doc = rng.choice(DOCS)
            value = gzip.compress(doc, mtime=0) if rng.random() < 0.7 else rng.randbytes(len(doc) // 3)
            rows.append((value,))
        pages.append(rows)
    return pages


def _sample(plan: SamplePlan, pick: Callable[[list[int]], int]) -> SampledStats:
    """The sample, its slices read SAMPLE_STREAMS at a time as the Scanner does; `pick` chooses
    which running slice's next page arrives."""
    sampler = SampledStats(Stats("SELECT data FROM ks.t"), ring_for(MURMUR3), SLICES, plan, None, "test")
    sampler.set_columns(["data"], [BytesType])
    ranges = sampler.ranges()
    running: dict[int, list[list[tuple[bytes]]]] = {}
    launched, exhausted = 0, False
    while True:
        while not exhausted and len(running) < SAMPLE_STREAMS:
            try:
                lo, _hi = next(ranges)
            except StopIteration:
                exhausted = True
                break
            running[launched] = _pages(lo)
            launched += 1
        if not running:
            return sampler
        index = pick(sorted(running))
        pages = running[index]
        rows = pages.pop(0)
        if not pages:
            del running[index]
        if not sampler.add_page(index, rows, not pages):
            return sampler


def _report(sampler: SampledStats) -> dict:
    doc = sampler.to_json()
    for volatile in ("elapsed_s", "rows_per_s"):
        doc.pop(volatile)
    return doc


@pytest.mark.parametrize("plan", [SamplePlan(precision=0.05, seed=3), SamplePlan(rows=300, seed=4),
                                  SamplePlan(percent=10, seed=5)], ids=["until", "rows", "percent"])
def test_the_sample_does_not_depend_on_which_slice_finishes_first(plan):
    in_order = _sample(plan, lambda running: running[0])
    reports = [_report(in_order)]
    for seed in range(4):
        shuffled = random.Random(seed)
        reports.append(_report(_sample(plan, lambda running, r=shuffled: r.choice(running))))
    reversed_ = _sample(plan, lambda running: running[-1])  # the latest slice always first
    reports.append(_report(reversed_))
    assert all(report == reports[0] for report in reports[1:])
    assert 0 < len(in_order.done) < SLICES


def test_a_precision_target_stops_at_the_first_slice_count_that_meets_it():
    sampler = _sample(SamplePlan(precision=0.05, seed=3), lambda running: running[-1])
    k = len(sampler.done)
    assert sampler.stopped == "interval within +-5 %"
    assert sampler.overall_ratio().relative <= 0.05
    before = estimate.ratio(sampler._decompressed[:-1], sampler._stored[:-1], SLICES).relative
    assert before is None or before > 0.05, "one slice fewer already met the target"
    assert sampler.stats.rows == sum(d.get(("rows",), 0) for d in sampler.done)
    assert k >= 30


def test_sample_n_is_the_first_slices_that_hold_n_rows():
    sampler = _sample(SamplePlan(rows=300, seed=4), lambda running: running[-1])
    rows = [d.get(("rows",), 0) for d in sampler.done]
    assert sum(rows) >= 300 > sum(rows[:-1])
    assert sampler.stats.rows == sum(rows) and sampler.stopped == "300 rows read"


def test_running_sums_give_the_interval_of_the_slices():
    rng = random.Random(7)
    running = estimate.RunningRatio()
    ys, xs = [], []
    for _ in range(500):
        x = rng.lognormvariate(7, 1)
        y = x * rng.lognormvariate(1, 0.3)
        running.add(y, x)
        ys.append(y)
        xs.append(x)
        if len(xs) >= 2:
            assert running.relative(5000) == pytest.approx(estimate.ratio(ys, xs, 5000).relative, rel=1e-9)
