"""A sampled STATS is the first K slices in the order drawn, whatever order their pages arrive in:
the sampler fed as the Scanner feeds it (16 slices at once, pages interleaved), with real values
measured by the real Stats. The same against the server: tests/insight/test_scale.py."""

from __future__ import annotations

import functools
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
#: Slices of a table too big to read whole (about 60 MB at these slices' sizes): a sample.
BIG = 20_000


@functools.cache
def _slice(lo: int) -> tuple[tuple[tuple[bytes], ...], ...]:
    """_pages, made once per slice (the same slices are drawn by every run of a seed)."""
    return tuple(tuple(page) for page in _pages(lo))


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


def _sample(plan: SamplePlan, pick: Callable[[list[int]], int], slices: int = SLICES) -> SampledStats:
    """The sample of a table of `slices` slices, read SAMPLE_STREAMS at a time as the Scanner does;
    `pick` chooses which running slice's next page arrives."""
    sampler = SampledStats(Stats("SELECT data FROM ks.t"), ring_for(MURMUR3), slices, plan, None, "test")
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
            running[launched] = [list(page) for page in _slice(lo)]
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


@pytest.mark.parametrize(("plan", "slices"), [(SamplePlan(precision=0.1, seed=3), BIG),
                                             (SamplePlan(rows=300, seed=4), SLICES),
                                             (SamplePlan(percent=10, seed=5), SLICES)],
                         ids=["until", "rows", "percent"])
def test_the_sample_does_not_depend_on_which_slice_finishes_first(plan, slices):
    in_order = _sample(plan, lambda running: running[0], slices)
    reports = [_report(in_order)]
    for seed in range(2):
        shuffled = random.Random(seed)
        reports.append(_report(_sample(plan, lambda running, r=shuffled: r.choice(running), slices)))
    if slices == SLICES:  # the latest slice always first: the first slice waits for the whole ring
        reports.append(_report(_sample(plan, lambda running: running[-1], slices)))
    assert all(report == reports[0] for report in reports[1:])
    assert 0 < len(in_order.done) < slices and not in_order.whole_table


def test_a_precision_target_stops_at_the_first_slice_count_where_every_figure_meets_it():
    sampler = _sample(SamplePlan(precision=0.1, seed=3), lambda running: running[0], BIG)
    k = len(sampler.done)
    assert sampler.stopped == "every figure within +-10 %" and not sampler.whole_table
    figures = sampler.stats.figures()
    kinds = {f.kind for f in figures}
    assert kinds == {estimate.TOTAL, estimate.RATIO, estimate.SHARE}
    assert any(f.key[0] == "bucket" for f in figures) and any(f.key[0] == "codec" for f in figures)
    assert sampler.short() == []  # every figure the report prints: totals, ratios, shares, buckets
    # What the report prints holds it: the row count's interval within +-10 % of itself, a bucket's
    # share within +-10 points.
    est = sampler.estimates()
    assert est["rows"].relative <= 0.1
    col = est["columns"][0]
    assert all(i.half_width is not None and i.half_width <= 0.1 for side in col["buckets"].values()
               for i in side.values())
    # One slice fewer, some figure had not reached it.
    sampler.done.pop()
    assert sampler.short() != []
    assert k >= 30


def test_a_table_cheap_to_read_whole_is_not_sampled():
    # 400 slices of a few KB: about 3 MB, estimated from the first slices (no server estimate). The
    # sampler stops there and says why: the command reads the table whole instead (run_stats).
    sampler = _sample(SamplePlan(precision=0.01, seed=3), lambda running: running[0])
    assert sampler.whole_table.startswith("the first slices estimate it at ")
    assert "reads whole in less time than a sample takes: exact figures" in sampler.whole_table
    assert sampler.stopped == "the whole table is cheaper to read" and len(sampler.done) == 30
    assert list(sampler.ranges()) == []  # nothing more is drawn
    # A size the user chose is read as asked, however small the table.
    assert not _sample(SamplePlan(percent=10, seed=5), lambda running: running[0]).whole_table
    assert not _sample(SamplePlan(rows=300, seed=5), lambda running: running[0]).whole_table


def test_sample_n_is_the_first_slices_that_hold_n_rows():
    sampler = _sample(SamplePlan(rows=300, seed=4), lambda running: running[-1])
    rows = [d.get(("rows",), 0) for d in sampler.done]
    # Exactly n: the slice that reaches n is cut at the n-th row ('SAMPLE 200' reported "200 rows
    # asked, 201 read", its last slice read whole: issue 109).
    assert sum(rows) == 300 > sum(rows[:-1])
    assert sampler.stats.rows == 300 and sampler.stopped == "300 rows read"


def test_running_sums_give_every_figures_width_as_the_report_computes_it():
    rng = random.Random(8)
    sums = estimate.RunningSums()
    slices: list[dict] = []
    total = estimate.Figure(estimate.TOTAL, ("rows",))
    ratio = estimate.Figure(estimate.RATIO, ("decompressed",), ("stored",))
    share = estimate.Figure(estimate.SHARE, ("codec",), ("rows",))
    for n in range(300):
        rows = rng.randint(0, 20)
        stored = rows * rng.lognormvariate(7, 1)
        late = n > 100 and rng.random() < 0.3  # a counter first met after 100 slices: 0 before
        totals = {("rows",): rows, ("stored",): stored, ("decompressed",): stored * rng.uniform(1, 4),
                  **({("codec",): rng.randint(0, rows)} if late else {})}
        sums.add(totals)
        slices.append(totals)
        if n < 2:
            continue
        keys = (("rows",), ("stored",), ("decompressed",), ("codec",))
        col = [[s.get(k, 0.0) for s in slices] for k in keys]
        rows = estimate.total(col[0], 5000)
        if rows.low:  # a total's interval shown stops at 0: its width is then no longer the estimate's
            assert sums.width(total, 5000) == pytest.approx(rows.relative, rel=1e-9)
        by_ratio = estimate.ratio(col[2], col[1], 5000).relative
        assert sums.width(ratio, 5000) == pytest.approx(by_ratio, rel=1e-9)
        expected = estimate.ratio(col[3], col[0], 5000).half_width if any(col[3]) else 0.0
        assert sums.width(share, 5000) == pytest.approx(expected, rel=1e-9, abs=1e-12)
