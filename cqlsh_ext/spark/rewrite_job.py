"""COMPRESSION REWRITE on Spark: the same statement, its writes made from the executors.

The driver reads the statement and the schema as the shell does (rewrite.run.job_for on a
shell-like view of the Spark driver's Python session) and cuts the ring into the same token ranges;
the ranges (those a journal has not finished, for RESUME) are spread over Spark tasks, and each
task, in its executor, runs the shell's own RangeRewriter on a Python driver session of its own:
the same reading, re-encoding, write mechanism and journal, paced at PACE divided by the tasks that
run at once. Each task writes its journal part (`part-NNNN-...jsonl`, the whole head in each) in
one directory, which RESUME and UNDO read whole: on a cluster that directory must be a path every
executor and the driver can write and read (--journal-dir on a shared file system). The
dictionaries travel to the executors as reads' do (spark.rows.with_dictionaries): a rewrite into
'zstd:dict=ID' writes with them there.

The preview (no CONFIRM) runs on the driver, as the shell's does (a sample of a big table).
Executors connect with the driver's connection: the host and port, the user name and password (as
the connector has them in Spark's configuration) or SigV4 (each executor's own AWS credentials),
and TLS with the same CA file.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from cqlsh_ext.spark.session import SparkError, java_error


@dataclass
class DriverSide:
    """What the rewrite's shell-side functions use of a shell (upstream.protocol.Shell), made of
    the Spark driver's Python session."""

    session: Any
    conn: Any
    settings: Any
    hostname: str
    current_keyspace: str | None
    consistency_level: Any
    serial_consistency_level: Any
    tty: bool = False
    # What reading.context.shell_context reads besides: the driver's scans page by the scanner's
    # own size, not cqlsh's paging.
    page_size: int = 100
    use_paging: bool = False

    def printerr(self, text: str) -> None:
        print(text, file=sys.stderr)


@dataclass(frozen=True)
class ExecutorCluster:
    """How an executor connects (picklable): the driver's connection's host, port, provider and TLS."""

    host: str
    port: int
    auth_provider: Any
    tls_settings: Any
    ssl_options: Any
    connect_timeout: float
    request_timeout: float

    def session(self) -> Any:
        from cassandra.cluster import Cluster

        kwargs: dict[str, Any] = {}
        if self.tls_settings is not None:
            tls = self.tls_settings
            kwargs = {"ssl_context": tls.context(), "ssl_options": tls.ssl_options()}
        elif self.ssl_options:
            kwargs = {"ssl_options": self.ssl_options}
        cluster = Cluster([self.host], port=self.port, auth_provider=self.auth_provider,
                          connect_timeout=self.connect_timeout, **kwargs)
        session = cluster.connect()
        session.default_timeout = self.request_timeout
        return session


@dataclass
class TaskPart:
    """One task's part of the run, merged on the driver."""

    counts: Any
    tally: Any
    finished: list[int] = field(default_factory=list)
    units: int = 0
    per_second: dict[int, int] = field(default_factory=dict)
    slowed: int = 0
    first: float | None = None
    last: float | None = None
    failure: str = ""
    journal: str = ""


def run(spark: Any, db: Any, conn: Any, statement: Any) -> None:
    """The statement (RewriteOnSpark): previewed on the driver, or written from the executors."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.edit.document import EditRefused
    from cqlsh_ext.rewrite import run as rewrite_run
    from cqlsh_ext.rewrite.parse import ResumeAsked, parse

    driver = _driver(db, conn)
    try:
        asked = parse(statement.statement, lambda ks, t: rewrite_run._table(driver, ks, t),  # type: ignore[arg-type]
                      lambda meta: rewrite_run._schema(driver, meta), driver.current_keyspace)  # type: ignore[arg-type]
        if isinstance(asked, ResumeAsked):
            _resume(spark, driver, conn, asked)
            return
        job = rewrite_run.job_for(driver, asked)  # type: ignore[arg-type]
        if job.ranges is None:
            raise QueryError("Spark mode rewrites token ranges of the whole table: a WHERE that names "
                             "partitions is the shell's")
        if not asked.confirm:
            rewrite_run.preview(driver, job, asked.every_row)  # type: ignore[arg-type]
            return
        directory = _parts_directory(driver, job)
        print(f"Journal: {directory}")
        _write(spark, driver, conn, job, directory, list(range(job.range_count)), 0)
    except (QueryError, EditRefused) as err:
        raise SparkError(f"{rewrite_run.LABEL}: {err}; nothing was written") from None


def _driver(db: Any, conn: Any) -> DriverSide:
    from cassandra import ConsistencyLevel

    keyspaces = conn.settings.keyspaces.keyspaces
    level = ConsistencyLevel.LOCAL_QUORUM if keyspaces else ConsistencyLevel.ONE
    serial = ConsistencyLevel.LOCAL_SERIAL if keyspaces else ConsistencyLevel.SERIAL
    return DriverSide(db, db.cluster, conn.settings, conn.host, db.keyspace, level, serial)


def _parts_directory(driver: DriverSide, job: Any) -> str:
    """A new directory for the run's journal parts (0700), in the journal directory."""
    from cqlsh_ext.edit.journal import secure_directory
    from cqlsh_ext.edit.run import journal_directory

    base = journal_directory(driver)  # type: ignore[arg-type]
    secure_directory(base)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = os.path.join(base, f"rewrite-{job.keyspace}.{job.table}-{stamp}")
    n = 1
    while True:
        try:
            os.mkdir(path if n == 1 else f"{path}-{n}", 0o700)
            return path if n == 1 else f"{path}-{n}"
        except FileExistsError:
            n += 1


def _executor_cluster(conn: Any) -> ExecutorCluster:
    ssl_options = conn.tls.get("ssl_options") if conn.tls and conn.tls_settings is None else None
    return ExecutorCluster(conn.host, conn.port, conn.auth_provider, conn.tls_settings, ssl_options,
                           float(conn.options.connect_timeout), float(conn.options.request_timeout))


def _write(spark: Any, driver: DriverSide, conn: Any, job: Any, directory: str, todo: list[int],
           done_before: int) -> None:
    from cqlsh_ext.common.text import message, screen_width
    from cqlsh_ext.rewrite import run as rewrite_run
    from cqlsh_ext.rewrite.report import RowTally, WriteTally, closing_lines
    from cqlsh_ext.spark.rows import with_dictionaries
    from cqlsh_ext.spark.session import TaskProgress

    context = spark.sparkContext
    tasks = max(1, min(len(todo), context.defaultParallelism * 2))
    at_once = max(1, min(tasks, context.defaultParallelism))
    share = None if job.pace is None else max(1.0, job.pace / at_once)
    chunks = [todo[i::tasks] for i in range(tasks)]
    rows = context.accumulator(0)
    label = f"{rewrite_run.LABEL} {job.name} on Spark"
    task = with_dictionaries(partial(_task, job, _executor_cluster(conn), directory, share, rows))
    try:
        with TaskProgress(spark, label, rows):
            parts = [pickle.loads(blob) for blob in
                     context.parallelize(list(enumerate(chunks)), tasks).mapPartitions(task).collect()]
    except Exception as err:
        raise SparkError(f"{rewrite_run.LABEL}: the Spark tasks failed: {java_error(err)}; the journal parts "
                         f"in {directory} say what was written (UNDO '{directory}' reads them)") from None
    counts, tally = RowTally(), WriteTally()
    finished = done_before
    units = slowed = 0
    per_second: dict[int, int] = {}
    firsts, lasts, failures = [], [], []
    for part in parts:
        counts.merge(part.counts)
        tally.merge(part.tally)
        finished += len(part.finished)
        units += part.units
        for second, sent in part.per_second.items():  # the tasks' units, second by second of the clock
            per_second[second] = per_second.get(second, 0) + sent
        slowed += part.slowed
        firsts += [part.first] if part.first is not None else []
        lasts += [part.last] if part.last is not None else []
        failures += [part.failure] if part.failure else []
    span = (max(lasts) - min(firsts)) if firsts and lasts else 0.0
    ranges = f" in {job.range_count:,} token ranges, {len(parts)} Spark tasks ({context.master})"
    busiest = max(per_second.values(), default=0)
    lines = closing_lines(f"{rewrite_run.LABEL} {job.name}", counts, tally, job.target.shown, span, job.pace,
                          busiest, slowed, ranges)
    if finished < job.range_count:
        why = f"; stopped: {failures[0]}" if failures else ""
        lines.append(f"  {finished:,} of {job.range_count:,} token ranges finished{why}")
        lines.append(f"Resume: {rewrite_run.LABEL} RESUME '{directory}' CONFIRM")
    lines.append(f"Undo: UNDO '{directory}' CONFIRM")
    width = screen_width(sys.stdout)
    print("\n".join(message(line, width) for line in lines))
    sys.stdout.flush()
    if failures:
        raise SparkError(f"{rewrite_run.LABEL}: {len(failures)} task(s) stopped: {failures[0]}")


def _task(job: Any, cluster: ExecutorCluster, directory: str, share: float | None, rows: Any,
          chunks: Iterable[tuple[int, Sequence[int]]]) -> Iterator[bytes]:
    """One Spark task, in an executor: its token ranges rewritten on a session of its own, its
    journal part in the shared directory; yields its TaskPart, pickled."""
    from cqlsh_ext.edit.journal import Journal
    from cqlsh_ext.rewrite.pace import Pace
    from cqlsh_ext.rewrite.run import RangeRewriter

    for number, todo in chunks:
        if not todo:
            continue
        session = cluster.session()
        try:
            journal = Journal(directory, job.keyspace, job.table, job.blob, "rewrite", job.mechanism.kind,
                              job.head(), prefix=f"part-{number:04d}")
            pace = Pace(share)
            rewriter = RangeRewriter(session, job, journal, pace, cluster.request_timeout)
            try:
                rewriter.run(list(todo), lambda: False)
            finally:
                journal.close()
            figures = pace.figures
            rows.add(rewriter.counts.rows)
            first = time.time() - figures.span if figures.rows else None
            yield pickle.dumps(TaskPart(rewriter.counts, rewriter.tally, sorted(rewriter.state.finished),
                                        figures.units, figures.per_second, figures.slowed, first,
                                        time.time() if figures.rows else None,
                                        rewriter.failure or rewriter.read_error, journal.path))
        finally:
            session.cluster.shutdown()


def _resume(spark: Any, driver: DriverSide, conn: Any, asked: Any) -> None:
    """RESUME of a Spark run's directory (or a shell's journal): the unfinished ranges from the
    executors, new parts in the same directory (a shell's journal gets a directory of its own)."""
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.edit.document import EditRefused
    from cqlsh_ext.edit.run import read_journals
    from cqlsh_ext.rewrite import run as rewrite_run
    from cqlsh_ext.rewrite.parse import RewriteAsked, parse

    parts = read_journals(asked.path)
    head = parts[0].head
    if head.get("kind") != "rewrite" or not isinstance(head.get("statement"), str):
        raise EditRefused(f"{asked.path} is not a {rewrite_run.LABEL}'s journal")
    again = parse(Lexed(str(head["statement"])), lambda ks, t: rewrite_run._table(driver, ks, t),  # type: ignore[arg-type]
                  lambda meta: rewrite_run._schema(driver, meta), str(head.get("keyspace")))  # type: ignore[arg-type]
    assert isinstance(again, RewriteAsked)
    ranges = head.get("ranges")
    job = rewrite_run.job_for(driver, again, ranges if isinstance(ranges, list) else None)  # type: ignore[arg-type]
    done: set[int] = set()
    for part in parts:
        done |= part.ranges_done
    todo = [i for i in range(job.range_count) if i not in done]
    print(f"{rewrite_run.LABEL} RESUME {asked.path}: {len(done):,} of {job.range_count:,} token ranges "
          "finished")
    if not todo:
        print("  nothing left to rewrite")
        return
    if not asked.confirm:
        rewrite_run.preview(driver, job, True, todo,  # type: ignore[arg-type]
                            f"  the {len(todo):,} ranges left (preview: nothing is written)")
        return
    path = os.path.expanduser(asked.path)
    directory = path if os.path.isdir(path) else _parts_directory(driver, job)
    print(f"Journal: {directory}")
    _write(spark, driver, conn, job, directory, todo, len(done))
