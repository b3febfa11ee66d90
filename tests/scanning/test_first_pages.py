"""A bulk reading's first pages (ScanSpec.sized_first, COMPRESSION STATS): only the first token
range starts at FIRST_PAGE rows; the others start at the size its rows call for, so each range of a
small-row table comes in one page, where an interactive reading starts every range small. Against
the test Cassandra, through the Scanner a whole-table read uses."""

from __future__ import annotations

from collections import Counter

from cqlsh_ext.scanning.ring import ring_for
from cqlsh_ext.scanning.scan import FIRST_PAGE, Scanner, ScanSpec

ROWS = 4000
RANGES = 16


def _read(session, ks: str, sized_first: bool) -> tuple[Counter[int], list[int], set[int]]:
    """Pages with rows per range, the rows of each page, the keys read."""
    ring = ring_for("org.apache.cassandra.dht.Murmur3Partitioner")
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


def test_a_bulk_reading_starts_small_once_and_reads_every_row(cassandra):
    ks = cassandra.create_keyspace("first_pages")
    session = cassandra.session(ks)
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute("CREATE TABLE small (id int PRIMARY KEY, v blob)")
    insert = session.prepare("INSERT INTO small (id, v) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, [(i, bytes(20)) for i in range(ROWS)], concurrency=32,
                                 raise_on_first_error=True)
    try:
        each, each_sizes, each_keys = _read(session, ks, sized_first=False)
        bulk, bulk_sizes, bulk_keys = _read(session, ks, sized_first=True)
    finally:
        session.shutdown()
    assert each_keys == bulk_keys == set(range(ROWS))
    # Interactive: every range holding more than FIRST_PAGE rows takes a second page.
    assert sum(each.values()) > RANGES + 1 and each_sizes.count(FIRST_PAGE) > 1
    # Bulk: one small page (the first range's first), every other range in one page.
    assert bulk_sizes.count(FIRST_PAGE) <= 1
    assert sum(n - 1 for n in bulk.values()) <= 1
