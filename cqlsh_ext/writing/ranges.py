"""The paced run over token ranges every rewrite shares (COMPRESSION REWRITE and RESUME in the
shell, Spark's tasks in their executors): the rows of some of a blob's token ranges read (a page at a
time, each stamped with when it was asked for: writing.ttl), each one's new value asked of the
front end (`Changes`: COMPRESSION REWRITE's re-encoding), journaled (fsync'd) before its write and
written by the one mechanism on threads as the pace allows (writing.pace); a token range whose rows
are all written is journaled as finished, and RESUME reads the others again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from cqlsh_ext.writing.blob_target import BlobTarget, key_text
from cqlsh_ext.writing.journal import JournalError

if TYPE_CHECKING:
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.writing.cell_reads import CellRead
    from cqlsh_ext.writing.cell_writer import CellWriter
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.mechanism import Mechanism
    from cqlsh_ext.writing.pace import Pace

#: Token ranges read at once (the writes, not the reads, set the pace).
READ_STREAMS = 2


@dataclass(frozen=True)
class RangeWork:
    """What rewriting token ranges of one blob reads and writes (picklable: Spark's tasks carry it)."""

    keyspace: str
    table: str
    partition_key: tuple[str, ...]
    keys: tuple[str, ...]
    blob: BlobTarget
    static: bool
    mechanism: Mechanism
    plan: Plan
    decoding: Any
    default_ttl: int
    #: SELECT <keys, blob, write time, TTL> FROM ks.t, before a WHERE.
    select: str
    #: Said after a range's token restriction (the WHERE's ordinary conditions, ALLOW FILTERING).
    also: str
    #: The token ranges (lo, hi] the ring is cut into; None: the WHERE names the partitions, read
    #: as one range (plan.server_statement).
    ranges: tuple[tuple[int, int], ...] | None
    consistency: Any
    serial: Any

    @property
    def name(self) -> str:
        return f"{self.keyspace}.{self.table}.{self.blob}"

    @property
    def range_count(self) -> int:
        return len(self.ranges) if self.ranges is not None else 1


@dataclass(frozen=True)
class NewValue:
    """A row's new bytes, and the row's size before and after (its key and value: what it costs in
    write units)."""

    value: bytes
    before: int
    after: int


class Changes(Protocol):
    """What the front end makes of the rows read: counts them, and gives a row's new value (None:
    left as it is, counted by the front end); of a server's page, which rows it leaves as they are
    from their stored values alone (`settle`, where `settles`; None: every row is examined), each
    then counted by `leave` (writing.cell_reads.PageCells.page_in)."""

    def read(self, rows: int) -> None: ...

    def examine(self, cell: CellRead) -> NewValue | None: ...

    @property
    def settles(self) -> bool: ...

    def settle(self, stored: Sequence[bytes | None]) -> list[bool] | None: ...

    def leave(self, stored: Sequence[bytes | None], key_sizes: Sequence[int]) -> None: ...


C = TypeVar("C", bound=Changes)


@dataclass
class WriteTally:
    """What the run's writes did (merged from Spark's tasks too)."""

    written: int = 0
    changed: int = 0
    expired: int = 0
    #: Stored bytes of the rows written, before and after.
    before: int = 0
    after: int = 0
    units: int = 0
    retried: int = 0

    def merge(self, other: WriteTally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class RangeState:
    """Per token range: rows sent and not yet done, whether its reading ended, whether a write of
    it failed (then it is not finished: RESUME reads it again)."""

    pending: dict[int, int] = field(default_factory=dict)
    read: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    #: Rows sent to be written per range, for the share done: every range of which a page was
    #: read is in it (every range read gives a page, an empty one included).
    sent: dict[int, int] = field(default_factory=dict)

    def share_done(self, todo: int) -> float | None:
        """The share of the work of `todo` ranges done, counted in rows written, which is what takes
        the time: a range weighs its rows sent against the mean of the finished ranges that wrote
        any (at most one range; a range under way at most nine tenths of one), so that the share
        grows row by row, and a range of rows already in the target (RESUME's first ones) weighs
        next to nothing at the start and at the end alike. None until a range that wrote rows is
        finished (how many a range holds is not known before)."""
        if todo <= 0 or len(self.finished) >= todo:
            return 1.0
        writing = [self.sent.get(r, 0) for r in self.finished if self.sent.get(r, 0)]
        if not writing:
            return None
        mean = sum(writing) / len(writing)
        weights = {r: min(self.sent.get(r, 0) / mean, 1.0) for r in self.finished}
        under_way = sum(min(n / mean, 0.9) for r, n in self.sent.items() if r not in self.finished)
        total = todo - sum(1 - w for w in weights.values())
        return min((sum(weights.values()) + under_way) / total, 1.0) if total > 0 else 1.0


class RangeRewriter(Generic[C]):
    """Rewrites the rows of some of a work's token ranges on one session (the shell's, or a Spark
    executor's), journaling each row and each finished range; the writes on threads, as the
    pace allows. `changes(writer)` makes the front end's Changes (it may size keys with the
    writer)."""

    def __init__(self, session: Any, work: RangeWork, journal: Journal, pace: Pace,
                 changes: Callable[[CellWriter], C], timeout: float | None = None) -> None:
        from cqlsh_ext.writing.cell_reads import PageCells
        from cqlsh_ext.writing.cell_writer import CellWriter

        self.session, self.work, self.journal, self.pace = session, work, journal, pace
        self.timeout = timeout
        self.writer = CellWriter(session, work.keyspace, work.table, work.blob, work.keys, work.mechanism,
                                 work.consistency, work.serial, work.default_ttl)
        self.cells = PageCells(work.plan, work.keyspace, work.keys, work.blob, work.mechanism, work.decoding,
                               work.static)
        self.changes = changes(self.writer)
        self.tally = WriteTally()
        self.state = RangeState()
        self.lock = threading.Lock()
        #: Why it stopped before the end ('' while it runs on): a write that failed, the journal.
        self.failure = ""
        #: The rows sent whose outcome is not known: a second Ctrl-C left them in flight.
        self.in_flight_left = 0
        self.interrupted = False
        #: A Ctrl-C was seen: nothing more is sent, the writes in flight finish.
        self.stop_seen = False
        self.hard_stop = False
        self.read_error = ""

    def run(self, todo: Sequence[int], stop: Callable[[], bool],
            tick: Callable[[], None] | None = None) -> None:
        """The ranges `todo` (indexes into work.ranges; [0] when it has none) read and rewritten,
        until the end or `stop()` (Ctrl-C) or a failure."""
        from cqlsh_ext.scanning.scan import Scanner, ScanSpec, error_text
        from cqlsh_ext.writing.cell_reads import LeftAlone

        work = self.work
        if not todo:
            return
        if work.ranges is None:
            spec = ScanSpec(work.plan.server_statement)
        else:
            spec = ScanSpec(work.select, partition_key=list(work.partition_key),
                            ranges=[work.ranges[i] for i in todo], streams=READ_STREAMS, also=work.also)
        # The server's pages whole where the front end decides rows from their cells (pages in).
        scanner = Scanner(self.session, spec, consistency=work.consistency, timeout=self.timeout,
                          pages_in=self.cells.settles_pages and self.changes.settles)
        pool = ThreadPoolExecutor(max_workers=self.pace.max_window, thread_name_prefix="rewrite")

        def stopping() -> bool:
            if stop() or scanner.interrupted:
                self.stop_seen = True
            return self.stop_seen or bool(self.failure)

        try:
            for names, _types, rows in scanner.pages():
                r = todo[scanner.page_range]
                self.changes.read(len(rows))
                sent = self.state.sent
                sent.setdefault(r, 0)
                whole = True  # every row of the page handled: its range may be finished
                for cell in self.cells.page_in(names, rows, scanner.page_sent, self.changes):
                    if isinstance(cell, LeftAlone):
                        self.changes.leave(cell.stored, cell.key_sizes)
                        continue
                    found = self.changes.examine(cell)
                    if found is None:
                        continue
                    if not self._send(pool, r, cell, found, stopping, tick):
                        whole = False
                        break
                    sent[r] += 1
                if whole and scanner.range_finished:
                    with self.lock:
                        self.state.read.add(r)
                        self._maybe_finished(r)
                if tick is not None:
                    tick()
                if stopping():
                    scanner.stop()
                    break
            if stopping() and tick is not None:  # a Ctrl-C the scanner took: said before the writes finish
                tick()
        except KeyboardInterrupt:
            self.hard_stop = True
            self.interrupted = True
        finally:
            if self.hard_stop:
                with self.lock:
                    self.in_flight_left = self.pace.in_flight
                pool.shutdown(wait=False, cancel_futures=True)
            else:
                pool.shutdown(wait=True)
        self.interrupted = self.interrupted or scanner.interrupted or stop()
        if scanner.error is not None:
            self.read_error = error_text(scanner.error)

    def _send(self, pool: ThreadPoolExecutor, r: int, cell: CellRead, new: NewValue,
              stopping: Callable[[], bool], tick: Callable[[], None] | None) -> bool:
        """The row journaled and its write started once the pace allows; False when it stops first."""
        from cqlsh_ext.scanning.capacity import wcu

        # A failed condition costs the stored row's units: the condition's writes are paced by the larger.
        units = wcu(new.after) if self.work.mechanism.timestamped else max(wcu(new.after), wcu(new.before))
        granted = self.pace.acquire(units, stopping, tick)
        if granted is None:
            return False
        key = [cell.key[k] for k in self.work.keys]
        with self.lock:
            n = self.journal.rows
            self.journal.rows += 1
            self.state.pending[r] = self.state.pending.get(r, 0) + 1
        at = self.writer.timestamp(cell.writetime)
        try:
            self.journal.before(n, dict(zip(self.work.keys, self.writer.serialized(key), strict=True)),
                                bytes(cell.stored), new.value, cell.ttl, cell.expires, cell.writetime, at,
                                granted)
        except JournalError as err:
            with self.lock:
                self.failure = str(err)
                self.state.failed.add(r)
            self.pace.release(False)
            return False
        pool.submit(self._write, n, r, key, cell, new.value, at, units)
        return True

    def _write(self, n: int, r: int, key: list[Any], cell: CellRead, value: bytes, at: int | None,
               units: int) -> None:
        from cqlsh_ext.writing.cell_writer import EXPIRED, WriteFailed

        throttled = False
        try:
            written = self.writer.write(key, cell.stored, value, cell.writetime, cell.expires, at)
            throttled = bool(written.retried)
            self.journal.after(n, written.applied)
        except (WriteFailed, JournalError) as err:
            with self.lock:
                if not self.failure:
                    what = key_text(dict(zip(self.work.keys, key, strict=True)))
                    self.failure = str(err) if isinstance(err, JournalError) else \
                        f"{what} (its write failed, whether it applied is unknown: {err})"
                self.state.failed.add(r)
                self.state.pending[r] -= 1
            self.pace.release(True)
            return
        except BaseException:
            self.pace.release(True)
            raise
        with self.lock:
            tally = self.tally
            tally.units += units * (1 + len(written.retried))
            tally.retried += len(written.retried)
            if written.applied:
                tally.written += 1
                tally.before += len(bytes(cell.stored))
                tally.after += len(value)
            elif written.outcome == EXPIRED:
                tally.expired += 1
            else:
                tally.changed += 1
            self.state.pending[r] -= 1
            self._maybe_finished(r)
        self.pace.release(throttled)

    def _maybe_finished(self, r: int) -> None:
        """Under the lock: a range read to the end whose rows are all done is journaled finished."""
        state = self.state
        if r in state.read and not state.pending.get(r) and r not in state.failed and r not in state.finished:
            try:
                self.journal.range_done(r)
            except JournalError as err:
                self.failure = self.failure or str(err)
                state.failed.add(r)
                return
            state.finished.add(r)
