"""Paging through a SELECT for the insight commands: prefetch, token-range streams, progress, Ctrl-C.

`Scanner.pages()` yields (column names, column types, rows) page by page, so the consumer's memory
is one page or two. Each stream keeps exactly one request in flight: the next page is requested as
soon as a page arrives, before the consumer processes it, so decoding overlaps the network and the
server. A whole-table scan (`SELECT cols FROM t`, nothing after the table name) can be split into
token ranges scanned by several streams at once (rows then come in no particular order, which
STATS does not mind).

Ctrl-C: while pages() runs, SIGINT only sets a flag (when we are on the main thread); the scan
stops at the next page boundary and the consumer reports what it has. A second Ctrl-C interrupts
at once. Page sizes adapt to the row size: about PAGE_BYTES per page.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

#: Rows in the first page (cqlsh's own page size): small until the row size is known.
FIRST_PAGE = 100
PAGE_BYTES = 4 << 20
MIN_PAGE, MAX_PAGE = 100, 5000
MIN_TOKEN, MAX_TOKEN = -(2**63), 2**63 - 1


@dataclass
class ScanSpec:
    """What to scan. `table`/`partition_key` are set for whole-table scans that may be split."""

    query: str
    keyspace: str | None = None
    table: str | None = None
    partition_key: list[str] = field(default_factory=list)
    #: Streams for a whole-table scan; 1 = one stream over the statement as written.
    parallel: int = 1
    #: The statement's LIMIT. Cassandra ignores the paging state of a request whose page size is
    #: not below the LIMIT (it runs the query unpaged, from the start), so pages must stay smaller.
    limit: int | None = None

    @property
    def splittable(self) -> bool:
        return bool(self.partition_key) and self.parallel > 1


def token_ranges(parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous Murmur3 token ranges (lo, hi] covering the ring; the first includes MIN_TOKEN."""
    span = 2**64
    bounds = [MIN_TOKEN + span * k // parts for k in range(parts)] + [MAX_TOKEN]
    return [(bounds[k], bounds[k + 1]) for k in range(parts)]


def ranged_query(spec: ScanSpec) -> tuple[str, str]:
    """The whole-table SELECT restricted to a token range: (first range's query, others' query)."""
    from cassandra.metadata import protect_name

    token = f"token({', '.join(protect_name(c) for c in spec.partition_key)})"
    base = spec.query.rstrip().rstrip(";").rstrip().replace("%", "%%")
    return (f"{base} WHERE {token} >= %s AND {token} <= %s", f"{base} WHERE {token} > %s AND {token} <= %s")


class Progress:
    """One status line on a terminal's stderr, redrawn at most 8 times a second."""

    def __init__(self, out: TextIO, label: str, estimate: int | None = None) -> None:
        self.out = out
        self.label = label
        self.estimate = estimate
        self.started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def update(self, rows: int, fraction: float | None = None, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.125:
            return
        self._last = now
        elapsed = now - self.started
        if fraction is None and self.estimate and rows <= self.estimate:
            fraction = rows / self.estimate
        rate = rows / elapsed if elapsed > 0 else 0
        line = f"{self.label}: {rows:,} rows, {rate:,.0f} rows/s, {elapsed:.0f} s"
        if fraction is not None:
            done = min(max(fraction, 0.0), 1.0)
            line += f"  [{'#' * round(20 * done)}{'.' * (20 - round(20 * done))}] ~{100 * done:.0f} %"
        line += "  (Ctrl-C stops and reports)"
        self.out.write("\r" + line + "\x1b[K")
        self.out.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.out.write("\r\x1b[K")
            self.out.flush()


def table_estimate(session: Any, keyspace: str, table: str) -> int | None:
    """Partitions Cassandra estimates for the table (system.size_estimates), or None."""
    try:
        rows = session.execute(
            "SELECT partitions_count FROM system.size_estimates WHERE keyspace_name = %s AND table_name = %s",
            (keyspace, table),
            timeout=5,
        )
        total = sum(_first(r) or 0 for r in rows)
    except Exception:  # not every server has the table (Keyspaces), and it is only a hint
        return None
    return total or None


def _first(row: Any) -> Any:
    if isinstance(row, dict):
        return next(iter(row.values()))
    return row[0]


class Scanner:
    """Runs a ScanSpec on a driver session; see the module docstring."""

    def __init__(
        self,
        session: Any,
        spec: ScanSpec,
        *,
        consistency: Any = None,
        serial_consistency: Any = None,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.session = session
        self.spec = spec
        self.consistency = consistency
        self.serial_consistency = serial_consistency
        self.timeout = timeout
        self.progress = progress
        self.rows = 0
        self.interrupted = False
        self.error: BaseException | None = None
        self.streams = 1
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    @property
    def description(self) -> str:
        return f"{self.streams} token-range streams" if self.streams > 1 else "single stream"

    def _statements(self) -> list[tuple[Any, Any]]:
        from cassandra.query import SimpleStatement

        def stmt(text: str) -> Any:
            return SimpleStatement(
                text,
                consistency_level=self.consistency,
                fetch_size=FIRST_PAGE,
                serial_consistency_level=self.serial_consistency,
            )

        if not self.spec.splittable:
            return [(stmt(self.spec.query), None)]
        first, rest = ranged_query(self.spec)
        # More ranges than streams: a range that ends early frees its stream for the next one.
        ranges = token_ranges(self.spec.parallel * 4)
        return [(stmt(first if k == 0 else rest), rng) for k, rng in enumerate(ranges)]

    def pages(self) -> Iterator[tuple[Sequence[str], Sequence[Any], list[Any]]]:
        from cassandra.query import tuple_factory

        statements = self._statements()
        self.streams = min(self.spec.parallel, len(statements)) if self.spec.splittable else 1
        pending = deque(range(len(statements)))
        done = 0
        active: dict[int, Any] = {}
        arrived: queue.Queue[tuple[int, bool]] = queue.Queue()
        restore_signal = self._catch_sigint()
        try:
            while pending or active:
                while pending and len(active) < self.streams and not self._stop.is_set():
                    i = pending.popleft()
                    stmt, params = statements[i]
                    # Tuples are the cheapest rows the driver makes (cqlsh's session builds
                    # OrderedDicts). A future keeps the factory it was created with, so the
                    # session's own is swapped only around the launch.
                    saved_factory = self.session.row_factory
                    self.session.row_factory = tuple_factory
                    try:
                        fut = self.session.execute_async(stmt, params, timeout=self.timeout)
                    finally:
                        self.session.row_factory = saved_factory
                    fut.add_callbacks(
                        lambda _rows, i=i: arrived.put((i, True)),
                        errback=lambda _exc, i=i: arrived.put((i, False)),
                    )
                    active[i] = fut
                if self._stop.is_set():
                    self.interrupted = True
                    return
                try:
                    i, _ok = arrived.get(timeout=0.1)
                except queue.Empty:
                    if self.progress:
                        self.progress.update(
                            self.rows, done / len(statements) if len(statements) > 1 else None
                        )
                    continue
                fut = active[i]
                try:
                    result = fut.result()
                except Exception as err:
                    self.error = err
                    return
                rows = result.current_rows
                names, types = result.column_names, result.column_types
                if fut.has_more_pages:
                    _adapt_page_size(fut, rows, self.spec.limit)
                    fut.start_fetching_next_page()  # in flight while the consumer works on this page
                else:
                    del active[i]
                    done += 1
                self.rows += len(rows)
                if self.progress:
                    self.progress.update(self.rows, done / len(statements) if len(statements) > 1 else None)
                if rows or not (pending or active):
                    yield names, types, rows
        finally:
            restore_signal()
            if self.progress:
                self.progress.close()

    def _catch_sigint(self) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum: int, frame: Any) -> None:
            if self._stop.is_set():  # a second Ctrl-C: stop waiting at once
                signal.signal(signal.SIGINT, previous)
                raise KeyboardInterrupt
            self._stop.set()

        try:
            signal.signal(signal.SIGINT, handler)
        except ValueError:
            return lambda: None
        return lambda: signal.signal(signal.SIGINT, previous)


def _adapt_page_size(fut: Any, rows: list[Any], limit: int | None) -> None:
    """Aim at PAGE_BYTES per page from the sizes of the rows just received (below the LIMIT)."""
    message = getattr(fut, "message", None)
    if not rows or message is None or not hasattr(message, "fetch_size"):
        return
    sample = rows[:: max(1, len(rows) // 32)]
    per_row = sum(len(v) for row in sample for v in row if isinstance(v, (bytes, str))) / len(sample)
    size = int(min(MAX_PAGE, max(MIN_PAGE, PAGE_BYTES // max(per_row, 1))))
    if limit is not None:
        if limit <= (message.fetch_size or 0) + 1:
            return
        size = min(size, limit - 1)
    message.fetch_size = size


def progress_for(label: str, enabled: bool, estimate: int | None = None) -> Progress | None:
    """A Progress on stderr when it is a terminal and `enabled`."""
    if not enabled or not sys.stderr.isatty():
        return None
    return Progress(sys.stderr, label, estimate)
