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

import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from cqlsh_ext.common import retry
from cqlsh_ext.common.interrupt import CtrlC

if TYPE_CHECKING:
    from cqlsh_ext.settings import KeyspacesOptions

#: Rows in the first page (cqlsh's own page size): small until the row size is known.
FIRST_PAGE = 100
PAGE_BYTES = 4 << 20
MIN_PAGE, MAX_PAGE = 100, 5000


class ScanContext(Protocol):
    """What the scanning layer reads of a reading's context (reading.context.ReadContext, declared
    there, above this layer): the session and its levels, the connection worker processes copy,
    Amazon Keyspaces' options (what a scan costs), and whom to ask or tell before a costly one."""

    session: Any
    cluster: Any
    host: str
    consistency: int
    serial_consistency: int
    @property
    def ask(self) -> Callable[[str], bool] | None:
        """A yes/no question to the person; None: nobody to ask (a script, `cqlsh-ext mcp`)."""

    @property
    def say(self) -> Callable[[str], None]:
        """A message to the person."""

    @property
    def error(self) -> Callable[[str], None]:
        """An error, one line."""

    @property
    def keyspaces(self) -> KeyspacesOptions: ...

    @property
    def timeout(self) -> float | None: ...


#: Makes the statement to send for a query text and its %s arguments (a token range's bounds, or
#: None): a prepared statement with a program's parameters bound (ScanSpec.bind).
Binder = Callable[[str, "tuple[Any, ...] | None"], Any]


@dataclass
class ScanSpec:
    """What to scan: a statement as written, or a whole table split into token ranges."""

    query: str
    #: The statement's LIMIT. Cassandra ignores the paging state of a request whose page size is
    #: not below the LIMIT (it runs the query unpaged, from the start), so pages must stay smaller.
    limit: int | None = None
    #: For a token-range scan: the partition key columns and the ranges (lo, hi] to read (a list,
    #: or an iterator for a sample that decides as it goes how many it reads).
    partition_key: list[str] = field(default_factory=list)
    ranges: Iterable[tuple[int, int]] | None = None
    #: Ranges read at once (requests in flight).
    streams: int = 1
    #: Said after a range's token restriction (`AND x = 1 ALLOW FILTERING`): a statement that
    #: restricts more than the ring (an edit's or a rewrite's WHERE).
    also: str = ""
    #: A statement read as written: the paging state its first page is asked with (a reading that
    #: goes on where an earlier one stopped: Scanner.page_state, Scanner.next_state).
    paging_state: bytes | None = None
    #: A bulk reading that answers nobody before its end (COMPRESSION STATS: in this process, in
    #: each worker process, sampled): one range is asked first, at FIRST_PAGE rows; the others start
    #: once its page has come, at the page size its rows call for (_page_rows), not at FIRST_PAGE
    #: each (a whole-table read's 32 ranges otherwise cost a small first page each:
    #: measured in the rounds of docs/performance.md before 0c7af19: git show).
    sized_first: bool = False
    #: A program's parameters (the Python API's): makes the statement sent for a text (with its
    #: token range's %s formatted in, when ranged) prepared, its parameters bound; None: the text
    #: as written (a SimpleStatement).
    bind: Binder | None = None

    @property
    def ranged(self) -> bool:
        return self.ranges is not None and bool(self.partition_key)


def ranged_query(query: str, partition_key: Sequence[str], also: str = "") -> str:
    """The whole-table SELECT restricted to one token range (lo, hi], with %s placeholders, and
    `also` after the restriction."""
    from cassandra.metadata import protect_name

    token = f"token({', '.join(protect_name(c) for c in partition_key)})"
    base = query.rstrip().rstrip(";").rstrip().replace("%", "%%")
    tail = f" {also.replace('%', '%%')}" if also else ""
    return f"{base} WHERE {token} > %s AND {token} <= %s{tail}"


#: Words of a ServerError that Amazon Keyspaces sends for throttling (it reuses Cassandra's codes).
_THROTTLE_WORDS = ("throttl", "capacity", "rate exceeded")


def error_text(err: BaseException, where: str | None = None) -> str:
    """The one line an error of the driver or of the server is said in (the shell's reports and
    closing lines, the Python API's cqlsh_ext.Error, MCP's answers): its class, then what it says
    as cqlsh says it (the server's `message` where the driver keeps it apart, else its text:
    'Error from server: code=... [...] message="..."'), never the driver's repr of its dicts: the
    replicas a timeout or an Unavailable counted are said in words, a NoHostAvailable says what each
    host answered and names it (one host: its answer, then "at host:port"), an OperationTimedOut
    which host did not answer in time, one the driver sent to no host that every host is down
    (`where`: the host and port the caller connected to, named then)."""
    from cassandra import OperationTimedOut
    from cassandra.cluster import NoHostAvailable

    if isinstance(err, NoHostAvailable):
        answers = list((err.errors or {}).items())
        if len(answers) == 1 and isinstance(answers[0][1], BaseException):
            host, inner = answers[0]
            return f"{error_text(inner)} (at {host})"
        said = "; ".join(f"{host}: {_answer_text(inner)}" for host, inner in answers)
        if not said:  # no host was tried: the driver holds every one down (the server gone, say)
            said = f"{where} is down or cannot be reached" if where else \
                "every host the driver knows is down or cannot be reached"
        first = err.args[0] if err.args and isinstance(err.args[0], str) else "no host could answer"
        return _one_line(f"NoHostAvailable: {first} ({said})")
    if isinstance(err, OperationTimedOut):
        host = err.last_host if err.last_host is not None else next(iter(err.errors or {}), None)
        others = "; ".join(f"{at}: {_answer_text(inner)}" for at, inner in (err.errors or {}).items()
                           if at != host and "timeout" not in str(inner).lower())
        waited = f"{host} did not answer" if host is not None else "no host answered"
        return _one_line(f"OperationTimedOut: {waited} within the client's request timeout"
                         + (f" ({others})" if others else ""))
    message = getattr(err, "message", None)  # a server's error the driver raises as it came
    text = str(message if message is not None else err)
    counted = _replicas(err)
    if counted is not None:
        text = f"{text.split(' info=', 1)[0]} ({counted})"
    return _one_line(f"{type(err).__name__}: {text}")


def _answer_text(answer: object) -> str:
    """What one host answered (NoHostAvailable's, OperationTimedOut's per-host errors)."""
    return error_text(answer) if isinstance(answer, BaseException) else _one_line(str(answer))


def _replicas(err: BaseException) -> str | None:
    """What a timeout or an Unavailable counted, in words ("0 of 1 replica responses at ONE");
    None for any other error."""
    from cassandra import ConsistencyLevel, Timeout, Unavailable

    level = ConsistencyLevel.value_to_name.get(getattr(err, "consistency", None), "?")
    if isinstance(err, Timeout) and getattr(err, "required_responses", None) is not None:
        return f"{err.received_responses} of {err.required_responses} replica responses at {level}"
    if isinstance(err, Unavailable) and getattr(err, "required_replicas", None) is not None:
        return f"{err.alive_replicas} of {err.required_replicas} replicas alive at {level}"
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def retry_reason(err: BaseException) -> str | None:
    """A short name when `err` is worth retrying a read for, else None."""
    from cassandra import OperationTimedOut, ReadTimeout, Unavailable
    from cassandra.cluster import NoHostAvailable
    from cassandra.connection import ConnectionException
    from cassandra.protocol import IsBootstrappingErrorMessage, OverloadedErrorMessage, ServerError

    if isinstance(err, OverloadedErrorMessage):
        return "overloaded"
    if isinstance(err, ReadTimeout):
        return "read timeout (Keyspaces: throttling)"
    if isinstance(err, Unavailable):
        return "unavailable"
    if isinstance(err, OperationTimedOut):
        return "client timeout"
    if isinstance(err, IsBootstrappingErrorMessage):
        return "node bootstrapping"
    if isinstance(err, ServerError) and any(w in str(err).lower() for w in _THROTTLE_WORDS):
        return "throttled"
    if isinstance(err, NoHostAvailable):
        # What each host answered: the driver moves on to the next host after an overload or a
        # server error, and gives up with this once the query plan (one host, for the shell) is used.
        inner = [retry_reason(e) for e in (err.errors or {}).values() if isinstance(e, BaseException)]
        if inner and all(inner):
            return inner[0]
        return "connection lost" if not inner else None
    if isinstance(err, ConnectionException):
        return "connection lost"
    return None


#: A progress label that ends in a table's (or column's) name: the command's words, then the name.
_NAMED = re.compile(r"(.+) ((?:[\w$]+|\"[^\"]+\")(?:\.(?:[\w$]+|\"[^\"]+\"))+)")


class Progress:
    """One status line on a terminal's stderr, redrawn at most 8 times a second: the one place a
    progress line is drawn and cleared. close() clears it; whatever prints while a scan runs
    (a message, a page of rows) closes it first, and it is drawn again at the next update."""

    def __init__(self, out: TextIO, label: str, estimate: int | None = None) -> None:
        self.out = out
        self.label = label
        self.estimate = estimate
        self.started = time.monotonic()
        self._last = 0.0
        self._shown = False
        #: Whether a line with rows read has been drawn: the first rows are drawn at once (a read
        #: whose pages come in one burst just after a '0 rows' line would otherwise end without one).
        self._rows_drawn = False
        #: Called for extra text at the end of the line (a sample's interval as it narrows).
        self.detail: Any = None
        #: Called before drawing: True while something else owns the terminal (a pager).
        self.paused: Any = None
        #: What Ctrl-C does, said at the end of the line: the longest that fits is shown.
        self.ctrl_c: tuple[str, ...] = ("(Ctrl-C stops and reports)", "(Ctrl-C: stop)")

    def update(self, rows: int, fraction: float | None = None, force: bool = False) -> None:
        now = time.monotonic()
        first_rows = rows > 0 and not self._rows_drawn
        if not force and not first_rows and now - self._last < 0.125:
            return
        if self.paused is not None and self.paused():
            return
        self._last = now
        self._rows_drawn = self._rows_drawn or rows > 0
        elapsed = now - self.started
        if fraction is not None and fraction <= 0 and rows:
            # Rows read while no token range is finished: '~0 %' after thousands of rows says the
            # read is endless. The size estimate when it holds them, else the rows read alone.
            fraction = None
        if fraction is None and self.estimate and rows <= self.estimate:
            fraction = rows / self.estimate
        rate = rows / elapsed if elapsed > 0 else 0
        counted = f"{rows:,} row" if rows == 1 else f"{rows:,} rows"
        self._draw(f": {counted}, {rate:,.0f} rows/s, {elapsed:.0f} s", fraction)

    def step(self, what: str, fraction: float | None = None) -> None:
        """A stage that is no count of rows (ADVISE measuring one codec after another), drawn at once."""
        if self.paused is None or not self.paused():
            self._draw(f": {what}, {time.monotonic() - self.started:.0f} s", fraction)

    def _draw(self, figures: str, fraction: float | None) -> None:
        done = None if fraction is None else min(max(fraction, 0.0), 1.0)
        detail = f"  {self.detail()}" if self.detail is not None else ""
        self.out.write("\r" + self._fit(figures, done, detail) + "\x1b[K")
        self.out.flush()
        self._shown = True

    def _fit(self, figures: str, done: float | None, detail: str) -> str:
        """The line at most one terminal row wide: a line the terminal wraps cannot be redrawn in
        place. The bar, the detail and the long hint go first; then, for a label that ends in a
        table's name ('COMPRESSION TRIAL ks.table.column'), the command's words and the keyspace,
        and the figures' last fields, before any of the table's name: it says what runs. Other
        labels are cut."""
        try:
            # Room for the cursor's cell and for the "^C" the terminal echoes after the line when
            # Ctrl-C is pressed: a line it wraps leaves its first row behind when cleared.
            width = os.get_terminal_size(self.out.fileno()).columns - 3
        except (OSError, ValueError, AttributeError):
            width = 0
        percent = bar = ""
        if done is not None:
            # A sliver finished (one small token range of 256): '~0 %' beside thousands of rows
            # read looks like an endless read.
            percent = "  <1 %" if 0 < done < 0.005 else f"  ~{100 * done:.0f} %"
            bar = f"  [{'#' * round(20 * done)}{'.' * (20 - round(20 * done))}]"
        long, short = self.ctrl_c[0], self.ctrl_c[-1]
        for tail in (f"{figures}{bar}{percent}{detail}  {long}",
                     f"{figures}{percent}{detail}  {long}",
                     f"{figures}{percent}{detail}  {short}",
                     f"{figures}{percent}  {short}"):
            if width <= 0 or len(self.label) + len(tail) <= width:
                return self.label + tail
        named = _NAMED.fullmatch(self.label)
        if named is not None:
            name = named.group(2)
            labels = [name, "…" + name.split(".", 1)[1]] if name.count(".") > 1 else [name]
            fields = figures.split(", ")
            for kept in range(len(fields), 0, -1):  # the richest figures first, the shortest label that fits
                fewer = ", ".join(fields[:kept]) + f"{percent}  {short}"
                fitting = next((label for label in labels if len(label) + len(fewer) <= width), None)
                if fitting is not None:
                    return fitting + fewer
            if len(labels[-1]) + len(fields[0]) + len(percent) <= width:  # a narrow screen: no hint
                return labels[-1] + fields[0] + percent
        room = width - len(tail)
        if room >= 12:  # the start of the label still says what runs
            return self.label[: room - 1] + "…" + tail
        # The figures' last fields go, whole (they are said most wanted first): no word is cut.
        fields = figures.split(", ")
        for kept in range(len(fields) - 1, 0, -1):
            tail = ", ".join(fields[:kept]) + f"{percent}  {short}"
            if len(self.label) + len(tail) <= width:
                return self.label + tail
        line = self.label + tail
        cut = line.rfind(" ", 0, max(width - 1, 0))
        return line[: cut if cut > 0 else max(width - 1, 0)] + "…"

    def close(self) -> None:
        if self._shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self._shown = False


@dataclass(frozen=True)
class TableSize:
    """The server's own estimate of a table (system.size_estimates), scaled to the whole ring."""

    partitions: int
    mean_partition_bytes: int
    #: Share of the ring the queried node's estimates covered (they cover its own ranges only).
    coverage: float

    @property
    def bytes(self) -> int:
        return self.partitions * self.mean_partition_bytes


def table_size(session: Any, keyspace: str, table: str, ring_span: int | None = None) -> TableSize | None:
    """system.size_estimates for the table, or None (not every server has it; it is only a hint)."""
    try:
        rows = list(session.execute(
            "SELECT range_start, range_end, partitions_count, mean_partition_size FROM system.size_estimates "
            "WHERE keyspace_name = %s AND table_name = %s",
            (keyspace, table),
            timeout=5,
        ))
    except Exception:
        return None
    partitions = size = covered = 0
    for row in rows:
        start, end, count, mean = (row[k] for k in ("range_start", "range_end", "partitions_count",
                                                    "mean_partition_size")) if isinstance(row, dict) else row
        partitions += count or 0
        size += (count or 0) * (mean or 0)
        if ring_span:
            try:
                covered += (int(end) - int(start)) % ring_span or ring_span
            except (TypeError, ValueError):
                ring_span = None
    if not partitions:
        return None
    coverage = min(1.0, covered / ring_span) if ring_span and covered else 1.0
    return TableSize(round(partitions / coverage), round(size / partitions), coverage)


@dataclass
class _Run:
    """One pages() call's ranges in flight, by the index of their range in the order given."""

    work: Iterator[tuple[Any, Any]]
    #: How many ranges there are, when known (the progress bar's fraction).
    total: int | None
    launched: int = 0
    exhausted: bool = False
    #: per running range: its request in flight
    active: dict[int, Any] = field(default_factory=dict)
    #: per running range: (statement, parameters, paging state of its next page, attempts)
    state: dict[int, list[Any]] = field(default_factory=dict)
    #: per range whose page failed: when it is asked for again (time.monotonic())
    retry_at: dict[int, float] = field(default_factory=dict)
    #: per running range: when its page in flight was asked for (time.time())
    sent: dict[int, float] = field(default_factory=dict)
    arrived: queue.Queue[int] = field(default_factory=queue.Queue)


class Scanner:
    """Runs a ScanSpec on a driver session; see the module docstring.

    While pages() runs, `page_range` is the index (in the order given) of the range the last page
    came from, and `range_finished` says whether that page was its range's last.
    """

    def __init__(
        self,
        session: Any,
        spec: ScanSpec,
        *,
        consistency: Any = None,
        serial_consistency: Any = None,
        timeout: float | None = None,
        progress: Progress | None = None,
        pages_in: bool = False,
    ) -> None:
        self.session = session
        #: Pages come as the server sent them (payload.server_rows.ServerRows, a sequence of rows
        #: too) rather than as the driver's tuples: scanning.pages_in.
        self.pages_in = pages_in
        self.spec = spec
        self.consistency = consistency
        self.serial_consistency = serial_consistency
        self.timeout = timeout
        self.progress = progress
        self.rows = 0
        self.interrupted = False
        self.error: BaseException | None = None
        self.streams = 1
        self.page_range = 0
        self.range_finished = False
        self.ranges_done = 0
        #: The paging state the page last given out was asked with (None: its range's first page),
        #: and its range's next page's (None: the range ended with it): where a reading that stops
        #: after it goes on from.
        self.page_state: bytes | None = None
        self.next_state: bytes | None = None
        #: The wall-clock time (time.time()) the request of the page last given out was sent: a
        #: TTL read on it counts from then (the next page is asked for before this one is worked
        #: on, so a time taken when a row is looked at is late by as long as the work took).
        self.page_sent = 0.0
        #: Errors retried, by short name (retry_reason), for the report.
        self.retried: dict[str, int] = {}
        self._stop = threading.Event()
        #: spec.sized_first: whether a page has come yet, and the page size its rows called for.
        self._paged = False
        self._learned: int | None = None

    def stop(self) -> None:
        self._stop.set()

    @property
    def description(self) -> str:
        return f"{self.streams} parallel streams" if self.streams > 1 else "single stream"

    def _statement(self, text: str, params: tuple[Any, ...] | None = None) -> tuple[Any, Any]:
        """The statement sent for `text` and its %s parameters: (statement, parameters left to
        send with it)."""
        from cassandra.query import SimpleStatement

        if self.spec.bind is not None:
            statement, params = self.spec.bind(text, params), None
            statement.consistency_level = self.consistency
            statement.serial_consistency_level = self.serial_consistency
            statement.fetch_size = self._learned or FIRST_PAGE
        else:
            statement = SimpleStatement(
                text,
                consistency_level=self.consistency,
                fetch_size=self._learned or FIRST_PAGE,
                serial_consistency_level=self.serial_consistency,
            )
        statement.retry_policy = _scan_retry_policy()
        return statement, params

    def _work(self) -> Iterator[tuple[Any, Any]]:
        """(statement, parameters) per range, lazily."""
        if not self.spec.ranged:
            yield self._statement(self.spec.query)
            return
        text = ranged_query(self.spec.query, self.spec.partition_key, self.spec.also)
        for lo, hi in self.spec.ranges or ():
            yield self._statement(text, (lo, hi))

    def _launch(self, stmt: Any, params: Any, paging_state: Any, arrived: queue.Queue[int], i: int,
                sent: dict[int, float]) -> Any:
        sent[i] = time.time()
        fut = execute_tuples(self.session, stmt, params, timeout=self.timeout, paging_state=paging_state,
                             pages_in=self.pages_in)
        fut.add_callbacks(lambda _rows: arrived.put(i), errback=lambda _exc: arrived.put(i))
        return fut

    def pages(self) -> Generator[tuple[Sequence[str], Sequence[Any], list[Any]], None, None]:
        run = _Run(iter(self._work()),
                   len(self.spec.ranges) if isinstance(self.spec.ranges, (list, tuple)) else None)
        self.streams = max(1, self.spec.streams) if self.spec.ranged else 1
        ctrl_c = CtrlC(self._stop, on_first=self._interrupted)
        try:
            ctrl_c.__enter__()  # inside the try: a press right after it still restores
            while True:
                self._start_ranges(run)
                self._retry_due(run)
                if not run.state:
                    return
                if self._stop.is_set():
                    self.interrupted = True
                    return
                try:
                    i = run.arrived.get(timeout=0.1)
                except queue.Empty:
                    self._show(run)
                    continue
                fut = run.active.pop(i)
                try:
                    result = fut.result()
                except Exception as err:
                    if self._retry_later(run, i, err):
                        continue
                    return
                rows = result.current_rows
                names, types = result.column_names, result.column_types
                self._took(run, i, fut, result)
                self.rows += len(rows)
                self._show(run)
                if rows or self.range_finished:
                    yield names, types, rows
        finally:
            ctrl_c.restore()
            if self.progress:
                self.progress.close()

    def _start_ranges(self, run: _Run) -> None:
        """Ranges started until `streams` run at once, the work is done or the scan stops."""
        while not run.exhausted and len(run.state) < self.streams and not self._stop.is_set():
            if self.spec.sized_first and run.launched and not self._paged:
                break  # the others wait for the first page's row size
            try:
                stmt, params = next(run.work)
            except StopIteration:
                run.exhausted = True
                break
            i = run.launched
            run.launched += 1
            first = self.spec.paging_state if not self.spec.ranged else None
            run.state[i] = [stmt, params, first, 0]
            run.active[i] = self._launch(stmt, params, first, run.arrived, i, run.sent)

    def _retry_due(self, run: _Run) -> None:
        """The failed pages whose wait is over asked for again."""
        now = time.monotonic()
        for i in [k for k, at in run.retry_at.items() if at <= now]:
            del run.retry_at[i]
            stmt, params, paging, _ = run.state[i]
            run.active[i] = self._launch(stmt, params, paging, run.arrived, i, run.sent)

    def _retry_later(self, run: _Run, i: int, err: Exception) -> bool:
        """Whether range `i`'s failed page is asked for again after a wait; when not, `error` is set
        and the scan ends."""
        entry = run.state[i]
        reason = retry_reason(err)
        if reason is None or retry.exhausted(entry[3]):
            self.error = err
            return False
        entry[3] += 1
        self.retried[reason] = self.retried.get(reason, 0) + 1
        run.retry_at[i] = time.monotonic() + retry.delay(entry[3])
        return True

    def _took(self, run: _Run, i: int, fut: Any, result: Any) -> None:
        """Range `i`'s page arrived: its range's next page is asked for at once (in flight while the
        consumer works on this one), or the range is done; the page_* attributes describe it."""
        rows = result.current_rows
        if self.spec.sized_first and self._learned is None:
            # The ranges waiting start now; at the size these rows call for, or at
            # FIRST_PAGE until a page with rows has come (a sample's first slice may be empty).
            self._paged = True
            self._learned = _page_rows(rows, self.spec.limit)
        entry = run.state[i]
        entry[3] = 0
        self.page_range = i
        self.page_state = entry[2]
        self.page_sent = run.sent[i]
        if fut.has_more_pages:
            entry[2] = result.paging_state
            adapt_page_size(fut, rows, self.spec.limit)
            size = getattr(getattr(fut, "message", None), "fetch_size", None)
            if size:
                entry[0].fetch_size = size  # a retried page asks for the same size
            run.sent[i] = time.time()
            fut.start_fetching_next_page()
            run.active[i] = fut
            self.range_finished = False
            self.next_state = entry[2]
        else:
            self.next_state = None
            del run.state[i]
            self.ranges_done += 1
            self.range_finished = True

    def _show(self, run: _Run) -> None:
        if self.progress:
            total = run.total
            self.progress.update(self.rows, self.ranges_done / total if total and total > 1 else None)

    def _interrupted(self) -> None:
        # Said at the first Ctrl-C, not when the loop next looks at the flag: a consumer that stops
        # reading on its own (ADVISE's sample full, the last page) would otherwise never learn of it.
        self.interrupted = True


_POLICY: list[Any] = []


def execute_tuples(session: Any, statement: Any, parameters: Any = None, timeout: float | None = None,
                   paging_state: Any = None, pages_in: bool = False) -> Any:
    """session.execute_async with the rows as tuples, the cheapest rows the driver makes (cqlsh's
    session builds OrderedDicts), whatever the session's own row factory: a future keeps the
    factory it was made with, its later pages too. A session of cqlsh's (legacy settings) has its
    factory swapped around the launch only; one configured by execution profiles (Spark mode's, a
    front end's own driver session: the driver refuses the swap there) gets a profile of its own.
    `pages_in`: the rows as the server sent them (scanning.pages_in: the session's protocol
    handler swapped around the launch too, as the future copies it when made), where the
    session's handler allows it."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT
    from cassandra.query import tuple_factory

    factory: Any = tuple_factory
    saved_handler = session.client_protocol_handler
    if pages_in:
        from cqlsh_ext.scanning.pages_in import handler_for, pass_through

        handler = handler_for(saved_handler)
        if handler is not None:
            factory = pass_through
            session.client_protocol_handler = handler
    try:
        saved_factory = session.row_factory
        try:
            session.row_factory = factory
        except ValueError:  # "Cannot set Session.row_factory while using Configuration Profiles"
            profile = session.execution_profile_clone_update(EXEC_PROFILE_DEFAULT, row_factory=factory)
            if timeout is not None:
                profile.request_timeout = timeout
            return session.execute_async(statement, parameters, paging_state=paging_state,
                                         execution_profile=profile)
        try:
            return session.execute_async(statement, parameters, timeout=timeout, paging_state=paging_state)
        finally:
            session.row_factory = saved_factory
    finally:
        session.client_protocol_handler = saved_handler


def _scan_retry_policy() -> Any:
    """The driver's retry policy for a scan's pages: a server's error is handed to the Scanner as
    it is (no retry on a next host), which retries it with backoff and counts it by its name. The
    driver's own next-host retry, with its own thread, could hand over a NoHostAvailable whose
    errors it had not filled in yet: the same throttle then counted as a lost connection."""
    if not _POLICY:
        from cassandra.policies import RetryPolicy

        class ScanRetryPolicy(RetryPolicy):
            def on_request_error(self, query: Any, consistency: Any, error: Any, retry_num: int) -> Any:
                return self.RETHROW, None

        _POLICY.append(ScanRetryPolicy())
    return _POLICY[0]


def scanner_for(ctx: ScanContext, spec: ScanSpec, progress: Progress | None = None) -> Scanner:
    """A Scanner on the context's session, with its consistency levels and request timeout."""
    return Scanner(
        ctx.session,
        spec,
        consistency=ctx.consistency,
        serial_consistency=ctx.serial_consistency,
        timeout=ctx.timeout,
        progress=progress,
    )


def one_page(session: Any, query: str, rows: int, timeout: float, consistency_level: Any = None) -> list[Any]:
    """The first page of `query`, at most `rows` rows, within `timeout` seconds: one request, never
    a second (a sample, not a scan: key completion's). Raises what the driver raises."""
    from cassandra.query import SimpleStatement

    statement = SimpleStatement(query, fetch_size=rows, consistency_level=consistency_level)
    return session.execute_async(statement, timeout=timeout).result().current_rows


def adapt_page_size(fut: Any, rows: Sequence[Any], limit: int | None) -> None:
    """Aim at PAGE_BYTES per page from the sizes of the rows just received (below the LIMIT)."""
    message = getattr(fut, "message", None)
    if not rows or message is None or not hasattr(message, "fetch_size"):
        return
    if limit is not None and limit <= (message.fetch_size or 0) + 1:
        return
    size = _page_rows(rows, limit)
    if size is not None:
        message.fetch_size = size


def _page_rows(rows: Sequence[Any], limit: int | None) -> int | None:
    """The rows a page of PAGE_BYTES holds by the sizes of `rows` (MIN_PAGE to MAX_PAGE, below the
    LIMIT); None without rows."""
    if not rows:
        return None
    from cqlsh_ext.payload.server_rows import ServerRows

    if isinstance(rows, ServerRows):  # the page's bytes, lengths included
        per_row = rows.size / len(rows)
    else:
        sample = rows[:: max(1, len(rows) // 32)]
        per_row = sum(len(v) for row in sample for v in row if isinstance(v, (bytes, str))) / len(sample)
    size = int(min(MAX_PAGE, max(MIN_PAGE, PAGE_BYTES // max(per_row, 1))))
    return min(size, limit - 1) if limit is not None else size


def progress_for(label: str, enabled: bool, estimate: int | None = None) -> Progress | None:
    """A Progress on stderr when it is a terminal and `enabled`."""
    if not enabled or not sys.stderr.isatty():
        return None
    return Progress(sys.stderr, label, estimate)
