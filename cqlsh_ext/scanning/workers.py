"""A whole table read over worker processes (an exact COMPRESSION STATS, a payload query):
decoding scales past one interpreter's GIL.

The ring is split into RANGES_PER_WORKER ranges per worker; workers take ranges from a shared
queue (a worker that finishes early takes the next), scan them with their own connection and
Scanner, fill their own copy of the Aggregate (aggregate.py), and send it back once at the end:
the parent merges them. Between workers and parent there are only bounded queues of small
messages (progress counts, what an Aggregate drains, one Aggregate per worker), so memory stays
flat however big the table is.

Processes are forked from the shell: a worker inherits the loaded modules and the connection's
settings (contact points, authentication, TLS) without anything being written down or pickled,
and opens its own connection (the driver resets its event loop after a fork). Workers ignore
SIGINT: Ctrl-C reaches the whole terminal's process group, and the parent alone decides. On Ctrl-C
the parent tells the workers to stop at their next page; each reports what it read, and a worker
that does not within STOP_GRACE seconds is killed. No worker outlives the command.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol

from cqlsh_ext.common.interrupt import CtrlC, ignore_in_child
from cqlsh_ext.scanning.aggregate import A, drained, progress_counts, stamp
from cqlsh_ext.scanning.consume import consume
from cqlsh_ext.scanning.ring import Ring
from cqlsh_ext.scanning.scan import Progress, Scanner, ScanSpec, error_text

if TYPE_CHECKING:
    from cqlsh_ext.scanning.scan import ScanContext


class RingRead(Protocol):
    """What a worker scan reads of its plan (scanning.plan.ReadPlan): declared here, so the plan
    imports the workers and not the other way round, even for typing."""

    query: str
    keyspace: str | None
    partition_key: list[str]
    ring: Ring | None
    workers: int

#: Ranges per worker: more than one, so a worker that meets a slow range does not hold the rest up.
RANGES_PER_WORKER = 16
#: Requests in flight per worker (the next page is prefetched while a page is decoded).
WORKER_STREAMS = 2
STOP_GRACE = 10.0
_PROGRESS_EVERY = 0.25


def _worker_session(conn: Any, keyspace: str | None, timeout: float | None) -> tuple[Any, Any]:
    """A new Cluster with the shell's connection settings (inherited through fork)."""
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy

    kwargs: dict[str, Any] = {
        "contact_points": list(conn.contact_points),
        "port": conn.port,
        "protocol_version": conn.protocol_version,
        "auth_provider": conn.auth_provider,
        "load_balancing_policy": WhiteListRoundRobinPolicy(list(conn.contact_points)),
        "connect_timeout": conn.connect_timeout,
        "control_connection_timeout": conn.control_connection_timeout,
    }
    if getattr(conn, "ssl_context", None) is not None:
        kwargs["ssl_context"] = conn.ssl_context
    if getattr(conn, "ssl_options", None):
        kwargs["ssl_options"] = conn.ssl_options
    if getattr(conn, "cql_version", None):
        kwargs["cql_version"] = conn.cql_version
    cluster = Cluster(**kwargs)
    session = cluster.connect(keyspace) if keyspace else cluster.connect()
    if timeout is not None:
        session.default_timeout = timeout
    return cluster, session


def _worker(job: dict[str, Any], tasks: Any, results: Any, stop: Any, index: int) -> None:
    ignore_in_child()
    stats = job["template"].fresh()
    scanner: Scanner | None = None
    cluster = None
    error = None
    try:
        cluster, session = _worker_session(job["conn"], job["keyspace"], job["timeout"])

        def ranges() -> Iterator[tuple[int, int]]:
            while not stop.is_set():
                try:
                    item = tasks.get(timeout=0.2)
                except queue.Empty:
                    continue
                if item is None:
                    return
                yield item

        # STATS (an Aggregate that answers at its end): the worker's first range alone starts at a
        # small page, its others at the size that page's rows call for (ScanSpec.sized_first); a
        # payload query's workers keep every range's small first page (its first rows shown soonest).
        spec = ScanSpec(job["query"], partition_key=job["partition_key"], ranges=ranges(),
                        streams=WORKER_STREAMS, sized_first=bool(getattr(stats, "answers_at_end", False)))
        last = time.monotonic()
        sent = 0

        def start(names: Sequence[str], types: Sequence[Any]) -> bool:
            stats.set_columns(names, types)
            return True

        def take(_names: Sequence[str], _types: Sequence[Any], rows: list[Any]) -> None:
            nonlocal last, sent
            stamp(stats, scanner_.page_sent)
            stats.add_rows(rows)
            out = drained(stats)
            if out:  # a query's matching rows stream to the parent as they are found
                results.put(("out", out))
            now = time.monotonic()
            if now - last >= _PROGRESS_EVERY:
                last = now
                results.put(("rows", stats.rows - sent, index, progress_counts(stats)))
                sent = stats.rows
            if stop.is_set():
                scanner_.stop()

        scanner = scanner_ = Scanner(session, spec, consistency=job["consistency"], timeout=job["timeout"],
                                     pages_in=bool(getattr(stats, "pages_in", False)))
        consume(scanner_, start, take)
        if scanner.error is not None:
            error = error_text(scanner.error)
        results.put(("rows", stats.rows - sent, index, progress_counts(stats)))
    except Exception as err:  # connecting failed, or a bug: reported by the parent, never a traceback
        error = error_text(err)
    stats.interrupted = stop.is_set()
    retried = scanner.retried if scanner is not None else {}
    results.put(("done", stats, error, retried))
    if cluster is not None:
        try:
            cluster.shutdown()
        except Exception:
            pass


class WorkerScan(Generic[A]):
    """A whole table read by `plan.workers` processes into `template` (an empty Aggregate with the
    command's settings; cqlsh_ext.scanning.plan makes it): iterating yields each worker's drained
    batch as it arrives (a payload query's matching rows); `merged` and `retried` are complete
    once the iteration ends. `stop()` ends it early (a LIMIT reached): the workers stop at their
    next page and report."""

    def __init__(self, ctx: ScanContext, template: A, plan: RingRead, progress: Progress | None) -> None:
        assert plan.ring is not None
        self.merged = template
        self.retried: dict[str, int] = {}
        #: As InProcessScan's; never True here: the columns are seen in the workers only.
        self.refused = False
        self._args = (ctx, plan, progress)
        self._stop: Any = None
        self.enough = False
        #: Each worker's latest progress_counts() (a payload query's matched and undecodable rows).
        self.seen: dict[int, tuple[int, ...]] = {}

    def stop(self) -> None:
        """Enough has been read (not an interruption): the workers stop at their next page."""
        self.enough = True
        if self._stop is not None:
            self._stop.set()

    def seen_total(self) -> tuple[int, ...]:
        """The sum of the workers' latest `progress_counts()` (() when the Aggregate has none)."""
        columns = list(zip(*self.seen.values(), strict=True))
        return tuple(sum(c) for c in columns)

    def __iter__(self) -> Iterator[Any]:
        progress, workers = self._args[2], self._args[1].workers
        merged = self.merged
        results, stop, procs = self._spawn()
        retried: dict[str, int] = {}
        errors: list[str] = []
        interrupted = False
        ctrl_c = CtrlC(stop)
        rows = 0
        finished = 0
        try:
            ctrl_c.__enter__()  # inside the try: a press right after it still restores
            for p in procs:
                p.start()
            deadline: float | None = None
            while finished < workers:
                if stop.is_set() and deadline is None:
                    interrupted = not self.enough
                    deadline = time.monotonic() + STOP_GRACE
                if deadline is not None and time.monotonic() > deadline:
                    break
                try:
                    msg = results.get(timeout=0.1)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs) and results.empty():
                        errors.append("a worker process ended without reporting")
                        break
                    if progress:
                        progress.update(rows)
                    continue
                if msg[0] == "rows":
                    rows += msg[1]
                    if msg[3] is not None:
                        self.seen[msg[2]] = msg[3]
                    if progress:
                        progress.update(rows)
                    continue
                if msg[0] == "out":
                    yield msg[1]
                    continue
                finished += 1
                _merge_report(merged, msg, retried, errors, stop)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            stop.set()
            _reap(procs)
            ctrl_c.restore()
            if progress:
                progress.close()
        merged.interrupted = interrupted and not errors
        if errors:
            merged.error = errors[0]
        merged.scan = f"{workers} worker processes"
        self.retried = retried

    def _spawn(self) -> tuple[Any, Any, list[Any]]:
        """(results queue, stop event, worker processes not yet started), the ranges queued for them."""
        reading, plan, _ = self._args
        workers = plan.workers
        assert plan.ring is not None
        ctx = multiprocessing.get_context("fork")
        tasks = ctx.Queue()
        results = ctx.Queue(maxsize=4 * workers)
        stop = self._stop = ctx.Event()
        for rng in plan.ring.split(workers * RANGES_PER_WORKER):
            tasks.put(rng)
        for _ in range(workers):
            tasks.put(None)
        job = {
            "template": self.merged,  # inherited through fork, never pickled
            "query": plan.query,
            "keyspace": plan.keyspace,
            "partition_key": plan.partition_key,
            "conn": reading.cluster,
            "timeout": reading.timeout,
            "consistency": reading.consistency,
        }
        procs = [ctx.Process(target=_worker, args=(job, tasks, results, stop, i), daemon=True)
                 for i in range(workers)]
        return results, stop, procs


def _merge_report(merged: Any, msg: tuple[Any, ...], retried: dict[str, int], errors: list[str],
                  stop: Any) -> None:
    """A worker's last message ("done", its Aggregate, its error or None, its retries) merged in."""
    _, stats, error, worker_retried = msg
    merged.merge(stats)
    for k, n in worker_retried.items():
        retried[k] = retried.get(k, 0) + n
    if error:
        errors.append(error)
        stop.set()  # one range failed for good: the result cannot be complete, stop the rest


def _reap(procs: list[Any]) -> None:
    """Every worker is gone when this returns: joined, else terminated, else killed."""
    end = time.monotonic() + STOP_GRACE
    for p in procs:
        if p.pid is not None:
            p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(2)
        if p.is_alive():
            os.kill(p.pid, signal.SIGKILL)
            p.join(2)
