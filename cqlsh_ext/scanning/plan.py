"""The one plan for reading rows into an Aggregate (COMPRESSION STATS, payload queries), and the
one worker policy.

    plan = whole_table(ctx, query, meta, ask, workers=None, streams=1)   # None: not accepted
    plan = ReadPlan(query, limit=...)         # a statement as written: one stream
    run = plan.read(ctx, aggregate, progress)
    for drained in run: ...                   # what the Aggregate lets out as it reads (rows found)
    run.stop()                                # enough read (a LIMIT reached)

A whole table: the partitioner (system.local) and its token ring, the server's size estimate
(system.size_estimates), the cost said first and accepted (cost.py: on Amazon Keyspaces and from
1 GB), then worker processes (workers.py) or this process, as `workers_for` decides. `ctx` is
the reading's context as scan.ScanContext declares it (reading.context.ReadContext).
Retries, progress and Ctrl-C come with the Scanner and WorkerScan. Either way the Aggregate ends
with `interrupted`, `error` (one line) and `scan` (how it was read) set, `run.retried` counts the
errors retried by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

from cqlsh_ext.payload.server_rows import MalformedPage
from cqlsh_ext.scanning.aggregate import A, drained, progress_counts, stamp
from cqlsh_ext.scanning.ring import Ring, RingError, ring_for, server_partitioner
from cqlsh_ext.scanning.scan import (
    Progress,
    Scanner,
    ScanSpec,
    TableSize,
    error_text,
    scanner_for,
    table_size,
)
from cqlsh_ext.scanning.workers import WorkerScan

if TYPE_CHECKING:
    from cqlsh_ext.scanning.scan import Binder, ScanContext

#: Without the native core, a whole-table read uses worker processes, one per core, from this size
#: by the server's estimate: below it, starting them (about a second) costs more than they save
#: (docs/insight-scale.md, "Exact scans": a 4 MB table of small values read 2.4 times slower with
#: them, a 42 MB one 1.5 times faster). With the core, this process answers a page in a
#: few microseconds a row and the server sets the pace: workers only take cores from it
#: (the rounds of docs/performance.md before 0c7af19: git show), so the default is one process,
#: STREAMS at once.
WORKERS_FROM_BYTES = 16 << 20
MAX_WORKERS = 32
#: N forces N worker processes (1: none) for every whole-table read that does not say PARALLEL: the
#: server's size estimate of a table written minutes ago is often empty (tests, benchmarks).
WORKERS_VARIABLE = "CQLSH_EXT_SCAN_WORKERS"
#: A token-range read in this process cuts the ring into this many ranges per stream.
RANGES_PER_STREAM = 4
#: Token ranges a whole-table read in this process reads at once: requests in flight,
#: so that the server works on the next pages while this one is answered (bench/readers.py,
#: docs/performance.md: one stream left the server idle between pages; 4 to 16 read alike).
STREAMS = 8


def workers_for(size: TableSize | None, asked: int | None = None) -> int:
    """Worker processes for a whole-table read (1: this process): `asked` (PARALLEL n),
    else CQLSH_EXT_SCAN_WORKERS, else one where the value engine reads pages whole (the native
    core: payload.running.reads_pages_whole), else one per core from WORKERS_FROM_BYTES."""
    if asked is not None:
        return max(1, min(MAX_WORKERS, asked))
    forced = os.environ.get(WORKERS_VARIABLE, "")
    if forced.isdigit():
        return max(1, min(MAX_WORKERS, int(forced)))
    if size is None or size.bytes < WORKERS_FROM_BYTES:
        return 1
    from cqlsh_ext.payload.running import reads_pages_whole

    if reads_pages_whole():  # this process keeps pace with the server
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


@dataclass(frozen=True)
class FullScanQuestion:
    """How a command asks before an expensive full scan (cost.full_scan_accepted): `label` starts
    its lines, `script_hint` tells a script how to go ahead, `question` is asked at a terminal,
    `confirmed` is the statement's CONFIRM."""

    label: str
    script_hint: str
    question: str
    confirmed: bool


@dataclass
class ReadPlan:
    """How a statement's rows are read: `query` as one stream (with its LIMIT), or, for a whole
    table, over its token ring by `workers` processes or by `streams` token ranges at once."""

    query: str
    limit: int | None = None
    keyspace: str | None = None
    partition_key: list[str] = field(default_factory=list)
    ring: Ring | None = None
    size: TableSize | None = None
    workers: int = 1
    streams: int = 1
    #: One stream: the paging state its first page is asked with (go on where a reading stopped).
    paging_state: bytes | None = None
    #: The token ranges to read (lo, hi], `streams` at once, instead of the whole ring (a
    #: partition of a reading: the Python API's); `also` is said after each range's restriction.
    ranges: list[tuple[int, int]] | None = None
    also: str = ""
    #: A program's parameters bound into the statements sent (ScanSpec.bind).
    bind: Binder | None = None

    @property
    def over_workers(self) -> bool:
        return self.ring is not None and self.workers > 1

    @property
    def one_stream(self) -> bool:
        """Read as one stream in this process, its rows in the order the server pages them."""
        return not self.over_workers and (self.ring is None or self.streams <= 1)

    def spec(self) -> ScanSpec:
        """What this process reads."""
        if self.ranges is not None:
            return ScanSpec(self.query, partition_key=self.partition_key, streams=self.streams,
                            ranges=self.ranges, also=self.also, bind=self.bind)
        if self.ring is None or self.streams <= 1:
            return ScanSpec(self.query, limit=self.limit, paging_state=self.paging_state, bind=self.bind)
        return ScanSpec(self.query, partition_key=self.partition_key, streams=self.streams,
                        ranges=self.ring.split(self.streams * RANGES_PER_STREAM), bind=self.bind)

    def read(self, ctx: ScanContext, aggregate: A, progress: Progress | None = None,
             accept: Callable[[A], bool] | None = None) -> WorkerScan[A] | InProcessScan[A]:
        """The reading into `aggregate`, to iterate. `accept` sees the Aggregate once the first
        page's columns are set (in this process only) and may refuse the result (False:
        the caller says why)."""
        if self.over_workers:
            return WorkerScan(ctx, aggregate, self, progress)
        spec = self.spec()
        # A reading that answers nobody before its end (COMPRESSION STATS) needs no small first page
        # per range: only the first range's is small (ScanSpec.sized_first).
        spec.sized_first = bool(getattr(aggregate, "answers_at_end", False))
        scanner = scanner_for(ctx, spec, progress)
        # An Aggregate that reads the server's pages (COMPRESSION STATS on the core) gets them whole.
        scanner.pages_in = bool(getattr(aggregate, "pages_in", False))
        return InProcessScan(scanner, aggregate, accept)


def whole_table(ctx: ScanContext, query: str, meta: Any, ask: FullScanQuestion, workers: int | None = None,
                streams: int = STREAMS) -> ReadPlan | None:
    """The plan for `query`, a whole-table SELECT of `meta` (the driver's table metadata); None
    when the cost was not accepted (said why). `workers`: PARALLEL n; `streams`: token ranges read
    at once when this process reads."""
    from cqlsh_ext.scanning.cost import full_scan_accepted

    keyspace, table = meta.keyspace_name, meta.name
    partitioner = server_partitioner(ctx.session)
    try:
        ring: Ring | None = ring_for(partitioner)
    except RingError:  # no numeric ring: one stream, in this process
        ring = None
    size = table_size(ctx.session, keyspace, table, ring.span if ring is not None else None)
    if not full_scan_accepted(ctx, keyspace, table, size, partitioner, ask.confirmed, ask.label,
                              ask.script_hint, ask.question):
        return None
    return ReadPlan(query, keyspace=keyspace, partition_key=[c.name for c in meta.partition_key],
                    ring=ring, size=size, workers=workers_for(size, workers), streams=streams)


class InProcessScan(Generic[A]):
    """An Aggregate filled in this process as a worker fills its copy: the Scanner's
    pages into `set_columns` (first page) and `add_rows`; iterating yields what it drains after
    each page. `refused`: `accept` said no."""

    def __init__(self, scanner: Scanner, aggregate: A, accept: Callable[[A], bool] | None) -> None:
        self.scanner = scanner
        self.merged = aggregate
        self.accept = accept
        self.retried: dict[str, int] = {}
        self.refused = False
        self.enough = False

    def stop(self) -> None:
        """Enough has been read (not an interruption): the reading ends after this page."""
        self.enough = True

    def seen_total(self) -> tuple[int, ...]:
        """The Aggregate's `progress_counts()` (() when it has none), as WorkerScan's."""
        return progress_counts(self.merged) or ()

    def __iter__(self) -> Iterator[Any]:
        aggregate, scanner = self.merged, self.scanner
        started = False
        try:
            with closing(scanner.pages()) as pages:
                for names, types, rows in pages:
                    if not started:
                        started = True
                        aggregate.set_columns(names, types)
                        if self.accept is not None and not self.accept(aggregate):
                            self.refused = True
                            return
                    stamp(aggregate, scanner.page_sent)
                    try:
                        aggregate.add_rows(rows)
                    except MalformedPage as err:  # the server's page, not rows: said as a scan's error
                        scanner.error = err
                        break
                    out = drained(aggregate)
                    if out:
                        yield out
                    if self.enough:
                        break
        except KeyboardInterrupt:
            scanner.interrupted = True
        aggregate.interrupted = aggregate.interrupted or scanner.interrupted
        aggregate.scan = scanner.description
        self.retried = scanner.retried
        if scanner.error is not None:
            aggregate.error = error_text(scanner.error)
