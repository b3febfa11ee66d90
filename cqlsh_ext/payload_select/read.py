"""Reading a payload query's rows, three ways, each giving pages of answer rows as printing asks:

- *as the plain SELECT reads*: paths only in the projection (the server's rows are the answer's
  rows one for one). The shell's own session and page size, so it reads and pages like the same
  SELECT without the paths.
- *one scan*: the partitions a WHERE names, or a table too small to be worth worker processes.
  cqlsh_ext.insight.scanning's Scanner: prefetch, retries with backoff, Ctrl-C at a page boundary.
- *worker processes*: a whole table (ALLOW FILTERING) by token ranges, one process per core, as
  COMPRESSION STATS scans; each worker evaluates its rows and streams back the matching ones, or
  its part of the aggregates at the end.

Streamed answers come out page by page as rows are found; grouped and sorted ones once the
reading ends. `Reading` keeps the counts for the closing line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator

if TYPE_CHECKING:
    from cqlsh_ext.shellapi import Shell

Row = tuple[Any, ...]

#: A whole-table scan uses worker processes (one per core) from this estimated size: below it,
#: starting them costs more than they save (bench/query_scan.py).
WORKERS_FROM_BYTES = 4 << 20
MAX_WORKERS = 32
#: A whole-table scan in the shell's own process reads this many token ranges at once, each of
#: RANGES_PER_STREAM parts of the ring in turn (bench/query_scan.py).
STREAMS = 4
RANGES_PER_STREAM = 4


@dataclass
class Reading:
    """What a reading saw, for the closing line."""

    answer: Answer
    interrupted: bool = False
    error: str | None = None
    retried: dict[str, int] = field(default_factory=dict)
    how: str = ""
    #: Rows printed (streamed answers); the LIMIT stops the reading when reached.
    emitted: int = 0


def _chunks(rows: list[Row], size: int) -> Iterator[list[Row]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def _limited(reading: Reading, rows: list[Row]) -> tuple[list[Row], bool]:
    """`rows` cut at the LIMIT; whether the LIMIT is reached."""
    limit = reading.answer.plan.limit
    if limit is None:
        return rows, False
    rows = rows[:max(0, limit - reading.emitted)]
    reading.emitted += len(rows)
    return rows, reading.emitted >= limit


def plain_pages(shell: Shell, reading: Reading, evaluator: Evaluator, result: Any) -> Iterator[list[Row]]:
    """The shell's own paged result (a driver ResultSet of dict rows), a page per page."""
    answer = reading.answer
    while True:
        yield [row for r in result.current_rows for row in answer.add(evaluator, r)]
        if not result.has_more_pages:
            return
        result.fetch_next_page()


def scanned_pages(reading: Reading, evaluator: Evaluator, scanner: Any,
                  page_size: int) -> Iterator[list[Row]]:
    """One Scanner's pages: streamed rows as they match, else the answer once the scan ends."""
    answer = reading.answer
    names: Sequence[str] = ()
    try:
        with closing(scanner.pages()) as pages:
            for page_names, _types, rows in pages:
                names = page_names
                out = [row for r in rows for row in answer.add(evaluator, dict(zip(names, r, strict=True)))]
                if answer.streamed and out:
                    out, enough = _limited(reading, out)
                    yield from _chunks(out, page_size)
                    if enough:
                        scanner.stop()
                        break
    except KeyboardInterrupt:
        scanner.interrupted = True
    reading.interrupted = scanner.interrupted
    reading.retried = scanner.retried
    reading.how = scanner.description
    if scanner.error is not None:
        from cqlsh_ext.insight.scanning.scan import error_text

        reading.error = error_text(scanner.error)
    if not answer.streamed:
        yield from _chunks(answer.final(), page_size)


class ScanAnswer:
    """The Aggregate a worker process scans into (cqlsh_ext.insight.scanning.workers): its part of
    the answer; matching rows of a streamed answer leave with each page (`drain`). The evaluator
    is inherited through fork and never pickled."""

    def __init__(self, query: str, answer: Answer, evaluator: Evaluator) -> None:
        self.query = query
        self.answer = answer
        self.evaluator: Evaluator | None = evaluator
        self.rows = 0
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""
        self.names: list[str] = []
        self.pending: list[Row] = []

    def fresh(self) -> ScanAnswer:
        assert self.evaluator is not None
        return ScanAnswer(self.query, self.answer.fresh(), self.evaluator)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self.names = list(names)

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        assert self.evaluator is not None
        add, evaluator, names = self.answer.add, self.evaluator, self.names
        for r in rows:
            self.pending.extend(add(evaluator, dict(zip(names, r, strict=True))))
        self.rows += len(rows)

    def drain(self) -> list[Row]:
        out, self.pending = self.pending, []
        return out

    def progress_counts(self) -> tuple[int, int]:
        counts = self.answer.counts
        return counts.matched, counts.undecodable + counts.cut

    def merge(self, other: ScanAnswer) -> None:
        self.answer.merge(other.answer)
        self.rows += other.rows

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["evaluator"] = None
        state["pending"] = []
        return state


def worker_pages(shell: Shell, reading: Reading, evaluator: Evaluator, query: str, keyspace: str,
                 partition_key: list[str], ring: Any, workers: int, progress: Any,
                 page_size: int) -> Iterator[list[Row]]:
    from cqlsh_ext.insight.scanning.workers import WorkerScan

    template = ScanAnswer(query, reading.answer, evaluator)
    run = WorkerScan(shell, template, keyspace, partition_key, ring, workers, progress)
    if progress is not None:
        progress.detail = lambda: progress_detail(run.seen_total())
    enough = False
    for batch in run:
        if enough or not reading.answer.streamed:
            continue
        rows, enough = _limited(reading, batch)
        yield from _chunks(rows, page_size)
        if enough:
            run.stop()
    reading.interrupted = run.merged.interrupted
    reading.error = run.merged.error
    reading.retried = run.retried
    reading.how = run.merged.scan
    if not reading.answer.streamed:
        yield from _chunks(reading.answer.final(), page_size)


def progress_detail(seen: tuple[int, ...]) -> str:
    if not seen:
        return ""
    matched, undecodable = seen
    return f"{matched:,} matched, {undecodable:,} undecodable"


def default_workers(size: Any) -> int:
    """One per core from WORKERS_FROM_BYTES; CQLSH_EXT_SCAN_WORKERS=N forces N (tests, benchmarks:
    the server's size estimate lags behind a freshly written table)."""
    forced = os.environ.get("CQLSH_EXT_SCAN_WORKERS")
    if forced and forced.isdigit():
        return max(1, min(MAX_WORKERS, int(forced)))
    if size is None or size.bytes < WORKERS_FROM_BYTES:
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
