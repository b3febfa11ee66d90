"""A bulk reading's first pages (ScanSpec.sized_first, COMPRESSION STATS): only the first token
range starts at FIRST_PAGE rows; the others start at the size its rows call for, so each range of a
small-row table comes in one page, where an interactive reading starts every range small. Against
the test Cassandra, through what each reading uses: the Scanner of a whole-table read in this
process, the worker processes (WorkerScan: each worker starts small once), and a sample's slices
(SliceSampler.spec: the same report from fewer pages)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from cqlsh_ext.insight.sampled import SampledStats
from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.scanning.plan import ReadPlan
from cqlsh_ext.scanning.ring import MURMUR3, ring_for
from cqlsh_ext.scanning.sample import SamplePlan
from cqlsh_ext.scanning.scan import FIRST_PAGE, Scanner, ScanSpec
from cqlsh_ext.scanning.workers import RANGES_PER_WORKER, WorkerScan

ROWS = 4000
RANGES = 16
WORKERS = 2
#: A sample of 8 slices of the 16 (about 250 rows each: more than a small first page).
SLICES, PERCENT, SEED = 16, 50, 7


@pytest.fixture(scope="module")
def small(cassandra) -> str:
    """A keyspace with `small`: ROWS rows of a 20-byte blob, one partition each."""
    ks = cassandra.create_keyspace("first_pages")
    session = cassandra.session(ks)
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute("CREATE TABLE small (id int PRIMARY KEY, v blob)")
    insert = session.prepare("INSERT INTO small (id, v) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, [(i, bytes(20)) for i in range(ROWS)], concurrency=32,
                                 raise_on_first_error=True)
    session.shutdown()
    return ks


def _read(session, ks: str, sized_first: bool) -> tuple[Counter[int], list[int], set[int]]:
    """Pages with rows per range, the rows of each page, the keys read."""
    ring = ring_for(MURMUR3)
    spec = ScanSpec(f"SELECT id, v FROM {ks}.small", partition_key=["id"], ranges=ring.split(RANGES),
                    streams=4, sized_first=sized_first)
    scanner = Scanner(session, spec, timeout=60)
    per_range: Counter[int] = Counter()
    sizes: list[int] = []
    keys: set[int] = set()
    for _names, _types, rows in scanner.pages():
        if rows:
            per_range[scanner.page_range] += 1
            sizes.append(len(rows))
            keys.update(r[0] for r in rows)
    assert scanner.error is None
    return per_range, sizes, keys


def test_a_bulk_reading_starts_small_once_and_reads_every_row(cassandra, small):
    session = cassandra.session(small)
    try:
        each, each_sizes, each_keys = _read(session, small, sized_first=False)
        bulk, bulk_sizes, bulk_keys = _read(session, small, sized_first=True)
    finally:
        session.shutdown()
    assert each_keys == bulk_keys == set(range(ROWS))
    # Interactive: every range holding more than FIRST_PAGE rows takes a second page.
    assert sum(each.values()) > RANGES + 1 and each_sizes.count(FIRST_PAGE) > 1
    # Bulk: one small page (the first range's first), every other range in one page.
    assert bulk_sizes.count(FIRST_PAGE) <= 1
    assert sum(n - 1 for n in bulk.values()) <= 1


class Pages:
    """An Aggregate that keeps the rows of each page and the keys read (a worker's, merged): a
    payload query's reading (answers as it goes)."""

    answers_at_end = False

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.keys: set[int] = set()
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""

    @property
    def rows(self) -> int:
        return sum(self.sizes)

    def fresh(self) -> Pages:
        return type(self)()

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        pass

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.sizes.append(len(rows))
            self.keys.update(r[0] for r in rows)

    def merge(self, other: Pages) -> None:
        self.sizes += other.sizes
        self.keys |= other.keys


class ReportPages(Pages):
    """The same, answering at its end (as COMPRESSION STATS)."""

    answers_at_end = True


def _over_workers(cassandra, ks: str, template: Pages) -> Pages:
    session = cassandra.session(ks)
    try:
        ctx = SimpleNamespace(cluster=session.cluster, timeout=60.0, consistency=None)
        plan = ReadPlan(f"SELECT id, v FROM {ks}.small", keyspace=ks, partition_key=["id"],
                        ring=ring_for(MURMUR3), workers=WORKERS)
        scan = WorkerScan(ctx, template, plan, None)  # type: ignore[arg-type]
        for _ in scan:
            pass
    finally:
        session.shutdown()
    assert scan.merged.error is None and not scan.merged.interrupted
    return scan.merged


def test_each_worker_process_starts_small_once(cassandra, small):
    each = _over_workers(cassandra, small, Pages())
    bulk = _over_workers(cassandra, small, ReportPages())
    assert each.keys == bulk.keys == set(range(ROWS))
    ranges = WORKERS * RANGES_PER_WORKER  # about 125 rows each
    assert each.sizes.count(FIRST_PAGE) > WORKERS and len(each.sizes) > ranges + WORKERS
    # A report's workers: one small page each, every other range in one page.
    assert bulk.sizes.count(FIRST_PAGE) <= WORKERS and len(bulk.sizes) <= ranges + WORKERS


class ShownStats(Stats):
    """COMPRESSION STATS' figures from a reading that starts every slice small (as DESCRIBE's)."""

    answers_at_end = False


def _sampled(cassandra, ks: str, stats: Stats) -> tuple[list[int], dict[tuple[str, ...], int]]:
    """The rows of each page of a seeded sample of `small`, and the sample's totals."""
    session = cassandra.session(ks)
    sampler = SampledStats(stats, ring_for(MURMUR3), SLICES, SamplePlan(percent=PERCENT, seed=SEED), None, "")
    scanner = Scanner(session, sampler.spec(stats.query, ["id"]), timeout=60)
    sizes: list[int] = []
    try:
        for names, types, rows in scanner.pages():
            if not sizes:
                sampler.set_columns(names, types)
            if rows:
                sizes.append(len(rows))
            if not sampler.add_page(scanner.page_range, rows, scanner.range_finished):
                break
    finally:
        session.shutdown()
    assert scanner.error is None and len(sampler.done) == SLICES * PERCENT // 100
    return sizes, stats.snapshot()


def test_a_sampled_report_reads_its_slices_in_fewer_pages(cassandra, small):
    query = f"SELECT v FROM {small}.small"
    each, each_totals = _sampled(cassandra, small, ShownStats(query))
    bulk, bulk_totals = _sampled(cassandra, small, Stats(query))
    assert bulk_totals == each_totals and sum(bulk) == sum(each) > FIRST_PAGE * len(bulk)
    slices = SLICES * PERCENT // 100
    # Started small, a slice of about 250 rows takes two pages; a report's, one.
    assert each.count(FIRST_PAGE) >= slices - 1 and len(each) > slices + 1
    assert bulk.count(FIRST_PAGE) <= 1 and len(bulk) <= slices + 1
