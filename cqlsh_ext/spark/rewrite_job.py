"""COMPRESSION REWRITE on Spark: the same statement, its writes made from the executors, a front end
on the writing layer.

The driver reads the statement and the schema as the shell does (rewrite.job.job_for in a context
of the Spark driver's Python session: writing.write_context.WriteContext) and cuts the ring into the same
token ranges; the ranges (those a journal has not finished, for RESUME) are spread over Spark tasks,
and each task, in its executor, runs the shell's own writing.ranges.RangeRewriter on a Python
driver session of its own: the same reading, re-encoding, write mechanism and journal, paced at PACE
divided by the tasks that run at once. Each task writes its journal part (`part-NNNN-...jsonl`) in
one directory, which RESUME and UNDO read whole: on a cluster that directory must be a path every
executor and the driver can write and read (--journal-dir on a shared file system). The driver
seals each part's head line with the user's journal key and gives each task only a key of that
run's own (writing.seal.run_key), which seals the rest of its part: parts are accepted by their seal
and run, not by who owns the file. The dictionaries travel to the executors as reads' do
(spark.rows.with_dictionaries): a rewrite into 'zstd:dict=ID' writes with them there.

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
from typing import TYPE_CHECKING, Any

from cqlsh_ext.spark.session import SparkError, java_error

if TYPE_CHECKING:
    from cqlsh_ext.rewrite.job import Job
    from cqlsh_ext.writing.journal import PartHead
    from cqlsh_ext.writing.requests import ResumeRequest
    from cqlsh_ext.writing.write_context import WriteContext


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
    from cqlsh_ext.rewrite.job import LABEL, job_for, table_meta, table_schema
    from cqlsh_ext.rewrite.parse import parse
    from cqlsh_ext.rewrite.preview import preview
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import ResumeRequest
    from cqlsh_ext.writing.seal import new_run

    ctx = _context(db, conn)
    try:
        asked = parse(statement.statement, lambda ks, t: table_meta(ctx, ks, t),
                      lambda meta: table_schema(ctx, meta), ctx.keyspace)
        if isinstance(asked, ResumeRequest):
            _resume(spark, ctx, conn, asked)
            return
        job = job_for(ctx, asked.request, asked.where)
        if job.work.ranges is None:
            raise QueryError("Spark mode rewrites token ranges of the whole table: a WHERE that names "
                             "partitions is the shell's")
        if not asked.request.confirm:
            preview(ctx, job, asked.request.every_row)
            return
        run_id = new_run()
        directory = _parts_directory(ctx, job, run_id)
        print(f"Journal: {directory}")
        _write(spark, ctx, conn, job, directory, list(range(job.work.range_count)), 0, run_id)
    except (QueryError, WriteRefused) as err:
        raise SparkError(f"{LABEL}: {err}; nothing was written") from None


def _context(db: Any, conn: Any) -> WriteContext:
    """The driver's context: its Python session, at the connector's levels (LOCAL_QUORUM and
    LOCAL_SERIAL on Amazon Keyspaces, ONE and SERIAL elsewhere), errors on stderr, a preview's
    progress line on a terminal's stderr, its lines on stdout, nobody to ask."""
    from cassandra import ConsistencyLevel

    from cqlsh_ext.scanning.scan import progress_for
    from cqlsh_ext.writing.journal import journal_directory
    from cqlsh_ext.writing.write_context import WriteContext

    keyspaces = conn.settings.keyspaces.keyspaces
    level = ConsistencyLevel.LOCAL_QUORUM if keyspaces else ConsistencyLevel.ONE
    serial = ConsistencyLevel.LOCAL_SERIAL if keyspaces else ConsistencyLevel.SERIAL
    return WriteContext(session=db, cluster=db.cluster, host=conn.host, keyspace=db.keyspace,
                        consistency=level, serial_consistency=serial, settings=conn.settings, error=_error,
                        progress=progress_for, journal_dir=journal_directory(conn.settings))


def _error(line: str) -> None:
    print(line, file=sys.stderr)


def _parts_directory(ctx: WriteContext, job: Job, run_id: str) -> str:
    """A new directory for the run's journal parts (0700), in the journal directory, its name ending
    in the run's short id (writing.journal_names)."""
    from cqlsh_ext.writing.journal import secure_directory
    from cqlsh_ext.writing.journal_names import name_base, short_id

    base = ctx.journal_dir
    secure_directory(base)
    path = os.path.join(base, name_base("rewrite", job.work.keyspace, job.work.table))
    ident = short_id(run_id)
    n = 1
    while True:
        made = f"{path}-{ident}" if n == 1 else f"{path}-{n}-{ident}"
        try:
            os.mkdir(made, 0o700)
            return made
        except FileExistsError:
            n += 1


def _executor_cluster(conn: Any) -> ExecutorCluster:
    ssl_options = conn.tls.get("ssl_options") if conn.tls and conn.tls_settings is None else None
    return ExecutorCluster(conn.host, conn.port, conn.auth_provider, conn.tls_settings, ssl_options,
                           float(conn.options.connect_timeout), float(conn.options.request_timeout))


def _write(spark: Any, ctx: WriteContext, conn: Any, job: Job, directory: str, todo: list[int],
           done_before: int, run_id: str) -> None:
    """The run from the executors, its directory of parts held by this driver for as long as the
    tasks run (writing.journal_lock: a RESUME or an UNDO of it started meanwhile is refused)."""
    from cqlsh_ext.writing.journal_lock import JournalLock

    with JournalLock.take(directory, "COMPRESSION REWRITE on Spark"):
        _run_tasks(spark, ctx, conn, job, directory, todo, done_before, run_id)


def _run_tasks(spark: Any, ctx: WriteContext, conn: Any, job: Job, directory: str, todo: list[int],
               done_before: int, run_id: str) -> None:
    from cqlsh_ext.common.text import message, plural, screen_width
    from cqlsh_ext.rewrite.job import LABEL
    from cqlsh_ext.rewrite.report import RowTally, closing_lines
    from cqlsh_ext.spark.rows import with_dictionaries
    from cqlsh_ext.spark.session import TaskProgress
    from cqlsh_ext.writing.journal import journal_head, part_heads
    from cqlsh_ext.writing.journal_names import hint_name
    from cqlsh_ext.writing.ranges import WriteTally

    context = spark.sparkContext
    tasks = max(1, min(len(todo), context.defaultParallelism * 2))
    at_once = max(1, min(tasks, context.defaultParallelism))
    share = None if job.pace is None else max(1.0, job.pace / at_once)
    chunks = [todo[i::tasks] for i in range(tasks)]
    work = job.work
    head = journal_head("rewrite", work.keyspace, work.table, work.blob, work.mechanism.kind, job.request,
                        run_id, None, job.head())
    heads = part_heads(head, tasks, ctx.journal_dir)  # sealed here: the executors get the run's key only
    rows = context.accumulator(0)
    label = f"{LABEL} {job.name} on Spark"
    task = with_dictionaries(partial(_task, job, head, _executor_cluster(conn), directory, share, rows))
    try:
        with TaskProgress(spark, label, rows):
            parts = [pickle.loads(blob) for blob in context.parallelize(
                list(zip(heads, chunks, strict=True)), tasks).mapPartitions(task).collect()]
    except Exception as err:
        named = hint_name(directory, ctx.journal_dir)
        raise SparkError(f"{LABEL}: the Spark tasks failed: {java_error(err)}; the journal parts "
                         f"in {directory} say what was written (UNDO '{named}' reads them)") from None
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
    # The ranges this run read (RESUME: those left).
    ranges = f" in {plural(len(todo), 'token range')}, {len(parts)} Spark tasks ({context.master})"
    busiest = max(per_second.values(), default=0)
    lines = closing_lines(f"{LABEL} {job.name}", counts, tally, job.target.shown, span, job.pace,
                          busiest, slowed, ranges)
    if finished < work.range_count:
        why = f"; stopped: {failures[0]}" if failures else ""
        lines.append(f"  {finished:,} of {work.range_count:,} token ranges finished{why}")
        lines.append(f"Resume: {LABEL} RESUME '{hint_name(directory, ctx.journal_dir)}' CONFIRM")
    lines.append(f"Undo: UNDO '{hint_name(directory, ctx.journal_dir)}' CONFIRM")
    width = screen_width(sys.stdout)
    print("\n".join(message(line, width) for line in lines))
    sys.stdout.flush()
    if failures:
        raise SparkError(f"{LABEL}: {len(failures)} task(s) stopped: {failures[0]}")


def _task(job: Job, head: dict[str, Any], cluster: ExecutorCluster, directory: str, share: float | None,
          rows: Any, chunks: Iterable[tuple[PartHead, Sequence[int]]]) -> Iterator[bytes]:
    """One Spark task, in an executor: its token ranges rewritten on a session of its own, its
    journal part (its head sealed by the driver) in the shared directory; yields its TaskPart,
    pickled."""
    from cqlsh_ext.rewrite.job import examiner_of
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.pace import Pace
    from cqlsh_ext.writing.ranges import RangeRewriter

    for part, todo in chunks:
        if not todo:
            continue
        session = cluster.session()
        try:
            journal = Journal(directory, head, part.prefix, part)
            pace = Pace(share)
            rewriter = RangeRewriter(session, job.work, journal, pace, examiner_of(job),
                                     cluster.request_timeout)
            try:
                rewriter.run(list(todo), lambda: False)
            finally:
                journal.close()
            figures = pace.figures
            counts = rewriter.changes.counts
            rows.add(counts.rows)
            first = time.time() - figures.span if figures.rows else None
            yield pickle.dumps(TaskPart(counts, rewriter.tally, sorted(rewriter.state.finished),
                                        figures.units, figures.per_second, figures.slowed, first,
                                        time.time() if figures.rows else None,
                                        rewriter.failure or rewriter.read_error, journal.path))
        finally:
            session.cluster.shutdown()


def _resume(spark: Any, ctx: WriteContext, conn: Any, request: ResumeRequest) -> None:
    """RESUME of a Spark run's directory (or a shell's journal): the unfinished ranges from the
    executors, new parts in the same directory (a shell's journal gets a directory of its own)."""
    from cqlsh_ext.rewrite.job import LABEL
    from cqlsh_ext.rewrite.preview import preview
    from cqlsh_ext.rewrite.resume import in_flight_lines, resumed
    from cqlsh_ext.writing.seal import new_run

    found = resumed(ctx, request.path)  # its journal locked until the run ends
    try:
        job, done, todo = found.job, found.done, found.todo
        print(f"{LABEL} RESUME {found.path}: {len(done):,} of {job.work.range_count:,} token ranges "
              "finished")
        for part in found.parts:
            if part.cut:
                print(f"  {part.path} {part.cut_text()}")
        for line in in_flight_lines(ctx, job, found.parts):
            print(line)
        if not todo:
            print("  nothing left to rewrite")
            return
        if not request.confirm:
            preview(ctx, job, True, todo, f"  the {len(todo):,} ranges left (preview: nothing is written)")
            return
        if os.path.isdir(found.path):  # new parts in the same directory, held by the lock RESUME took
            _run_tasks(spark, ctx, conn, job, found.path, todo, len(done), new_run())
            return
        run_id = new_run()  # a shell's journal: the parts in a directory of their own
        directory = _parts_directory(ctx, job, run_id)
        print(f"Journal: {directory}")
        _write(spark, ctx, conn, job, directory, todo, len(done), run_id)
    finally:
        found.lock.release()
