"""Reading a payload query's rows, three ways, each giving pages of answer rows as printing asks:

- *as the plain SELECT reads*: paths only in the projection (the server's rows are the answer's
  rows one for one). The shell's own session and page size, so it reads and pages like the same
  SELECT without the paths.
- *one scan*: the partitions a WHERE names, or a table too small to be worth worker processes
  (scanning.plan.STREAMS token ranges at once). cqlsh_ext.scanning's Scanner: prefetch, retries with backoff,
  Ctrl-C at a page boundary.
- *worker processes*: a whole table (ALLOW FILTERING) by token ranges, as COMPRESSION STATS scans
  (cqlsh_ext.scanning.plan decides); each worker evaluates its rows and streams back the matching
  ones, or its part of the aggregates at the end.

The last two fill a ScanAnswer the same way (`answer_pages`), in this process or in each worker.

Streamed answers come out page by page as rows are found; grouped and sorted ones once the
reading ends. `ReadSummary` keeps the counts for the closing line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator

if TYPE_CHECKING:
    from cqlsh_ext.scanning.plan import ReadPlan
    from cqlsh_ext.scanning.scan import Progress
    from cqlsh_ext.upstream.protocol import Shell

Row = tuple[Any, ...]

#: A partial page of found rows prints after this long (seconds), so rare matches show up.
FLUSH_SECONDS = 1.0


@dataclass
class ReadSummary:
    """What a reading saw, for the closing line."""

    answer: Answer
    interrupted: bool = False
    error: str | None = None
    retried: dict[str, int] = field(default_factory=dict)
    how: str = ""
    #: Rows printed (streamed answers); the LIMIT stops the reading when reached.
    emitted: int = 0
    #: The output ended before the answer did (the pager quit, a closed pipe).
    output_closed: bool = False


def _clear(progress: Any) -> None:
    """Rows are about to print: the progress line goes first (it is drawn again below them)."""
    if progress is not None:
        progress.close()


def _chunks(rows: list[Row], size: int) -> Iterator[list[Row]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


class _Pages:
    """Found rows gathered into pages of the shell's page size (so a sparse match does not print
    a table header every few rows), a partial page let out after FLUSH_SECONDS (so it shows up
    while the scan goes on). The progress line is cleared before a page prints."""

    def __init__(self, page_size: int, progress: Any) -> None:
        self.page_size = page_size
        self.progress = progress
        self.held: list[Row] = []
        self.since = time.monotonic()

    def add(self, rows: list[Row], end: bool = False) -> Iterator[list[Row]]:
        self.held.extend(rows)
        due = end or time.monotonic() - self.since >= FLUSH_SECONDS
        full = len(self.held) // self.page_size * self.page_size
        cut = len(self.held) if due else full
        if cut:
            _clear(self.progress)
            out, self.held = self.held[:cut], self.held[cut:]
            self.since = time.monotonic()
            yield from _chunks(out, self.page_size)


def _limited(reading: ReadSummary, rows: list[Row]) -> tuple[list[Row], bool]:
    """`rows` cut at the LIMIT; whether the LIMIT is reached."""
    limit = reading.answer.plan.limit
    if limit is None:
        return rows, False
    rows = rows[:max(0, limit - reading.emitted)]
    reading.emitted += len(rows)
    return rows, reading.emitted >= limit


def plain_pages(reading: ReadSummary, evaluator: Evaluator, result: Any) -> Iterator[list[Row]]:
    """The shell's own paged result (a driver ResultSet of dict rows), a page per page: each
    page's blobs decoded together."""
    answer = reading.answer
    while True:
        rows = result.current_rows
        names = list(rows[0]) if rows else []
        yield answer.add_page(evaluator, names, [list(r.values()) for r in rows]) if rows else []
        if not result.has_more_pages:
            return
        result.fetch_next_page()


def answer_pages(shell: Shell, reading: ReadSummary, evaluator: Evaluator, plan: ReadPlan,
                 progress: Progress | None, page_size: int) -> Iterator[list[Row]]:
    """The plan read into a ScanAnswer (in this process or in worker processes): streamed rows as
    they match, up to the LIMIT, else the answer once the reading ends."""
    answer = reading.answer
    run = plan.read(shell, ScanAnswer(plan.query, answer, evaluator), progress)
    if progress is not None:  # what was matched and not decoded, wherever it was read
        progress.detail = lambda: progress_detail(run.seen_total())
    enough = False
    held = _Pages(page_size, progress)
    for batch in run:
        if enough or not answer.streamed:
            continue
        rows, enough = _limited(reading, batch)
        yield from held.add(rows)
        if enough:
            run.stop()
    yield from held.add([], end=True)
    reading.interrupted = run.merged.interrupted
    reading.error = run.merged.error
    reading.retried = run.retried
    reading.how = run.merged.scan
    if not answer.streamed:
        yield from _chunks(answer.final(), page_size)


class ScanAnswer:
    """The Aggregate a reading fills (cqlsh_ext.scanning.aggregate): in this process the answer
    itself, in a worker process its part of the answer; matching rows of a streamed answer leave
    with each page (`drain`). The evaluator is inherited through fork and never pickled."""

    def __init__(self, query: str, answer: Answer, evaluator: Evaluator) -> None:
        self.query = query
        self.answer = answer
        self.evaluator: Evaluator | None = evaluator
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
        self.pending.extend(self.answer.add_page(self.evaluator, self.names, rows))

    @property
    def rows(self) -> int:
        """Rows read (the workers' progress counts them)."""
        return self.answer.counts.read

    def drain(self) -> list[Row]:
        out, self.pending = self.pending, []
        return out

    def progress_counts(self) -> tuple[int, int]:
        counts = self.answer.counts
        return counts.matched, counts.undecodable + counts.cut

    def merge(self, other: ScanAnswer) -> None:
        self.answer.merge(other.answer)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["evaluator"] = None
        state["pending"] = []
        return state


def progress_detail(seen: tuple[int, ...]) -> str:
    if not seen:
        return ""
    matched, undecodable = seen
    return f"{matched:,} matched, {undecodable:,} undecodable"
