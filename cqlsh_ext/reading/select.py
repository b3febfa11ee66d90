"""A SELECT's typed answer (reading.typed.TypedAnswer), read one of three ways, each giving batches
of answer rows as the front end takes them:

- *as the plain SELECT reads*: paths only in the projection (the server's rows are the answer's
  rows one for one). The session's page size, so it reads and pages like the same SELECT without
  the paths.
- *one scan*: the partitions a WHERE names, or a table too small to be worth worker processes
  (scanning.plan.STREAMS token ranges at once). cqlsh_ext.scanning's Scanner: prefetch, retries
  with backoff, Ctrl-C at a page boundary.
- *worker processes*: a whole table (ALLOW FILTERING) by token ranges (cqlsh_ext.scanning.plan
  decides); each worker evaluates its rows and streams back the matching ones, or its part of
  the aggregates at the end.

The last two fill a ScanAnswer the same way (`answer_pages`), in this process or in each worker.
Streamed answers come out batch by batch as rows are found; grouped and sorted ones once the
reading ends. The answer's notes (reading.typed.ReadNotes) keep the counts and how it ended.

    answer = read_select(ctx, plan, target)     # None: refused or declined (ctx.error said why)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from cqlsh_ext.payload.columns import AGGREGATE, BLOB, CQL, PATH, AnswerColumn, BlobReading
from cqlsh_ext.payload.program import Given
from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Path
from cqlsh_ext.reading.typed import (
    AnswerBatch,
    PagePositions,
    Position,
    ReadNotes,
    TypedAnswer,
)

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.reading.statement import ServerPages
    from cqlsh_ext.scanning.plan import ReadPlan
    from cqlsh_ext.scanning.scan import Binder, Progress

Row = tuple[Any, ...]

#: A payload query's label, where its lines start ("payload query: ...").
LABEL = "payload query"
#: A partial batch of found rows goes out after this long (seconds), so rare matches show up.
FLUSH_SECONDS = 1.0
#: Rows a batch holds when the context sets no page size (cqlsh's own when paging is off).
DEFAULT_BATCH = 100


def payload_plan(ctx: ReadContext, statement: Lexed, refresh: bool = False,
                 markers: bool = False) -> tuple[Plan, TableTarget] | None:
    """A SELECT that reaches into a payload, planned on its table: (plan, target); None for any
    other statement (not a SELECT ... FROM, no path in it, an unknown table, CQL this parser does
    not know and that names no payload), which the server answers as written. A SELECT that names
    no path costs no schema and no parse. Raises QueryError for a statement that reaches into a
    payload and is refused (one line). `refresh`: a table the driver does not know yet is looked
    up once more. `markers`: a payload condition's literal may be a bind marker (a program's
    parameter: query.grammar.parse)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.query.recognize import may_reach_payload, names_payload, table_of
    from cqlsh_ext.reading.resolve import find_table

    named = table_of(statement)
    if named is None or not may_reach_payload(statement):
        return None
    target = find_table(ctx.cluster, ctx.keyspace, *named, refresh=refresh)
    if target is None:
        return None  # an unknown table: the server says so, as for any SELECT
    try:
        plan = parse(statement, target.schema, markers=markers)
    except QueryError:
        if not names_payload(statement, target.schema):
            return None  # CQL this parser does not know, and no payload in it: the server's
        raise
    return (plan, target) if plan is not None else None


def read_select(ctx: ReadContext, plan: Plan, target: TableTarget, batch_rows: int | None = None,
                fetch_size: int | None = None, evaluator: Evaluator | None = None,
                stored_blobs: bool | None = None, paging_state: bytes | None = None,
                given: int = 0, text_trees: bool = True, text_gaps: bool = False,
                bind: Binder | None = None,
                ranges: Sequence[tuple[int, int]] | None = None) -> TypedAnswer | None:
    """The answer of `plan` on `target`, read as the context reads (cost asked first where someone can
    answer, CONFIRM, workers, progress, retries, the stop signal): a TypedAnswer whose batches are
    read as they are taken, or None when it is refused or declined (ctx.error said why). `batch_rows`:
    rows a batch holds (default: the context's page size); `fetch_size`: the server's page size when
    it returns the answer's rows one for one. `stored_blobs`: the blobs the answer gives come as the
    engine holds its reading of them (payload.program.Given.held: batches of columns where the reading
    makes them, no value decoded twice), else as views; None: as the value engine reads them (held
    where the native core reads every blob column of the table: blobs_on_core), for every front end
    alike. `text_trees` False: a file of text, whose blobs' texts need no JSON tree (Given.trees);
    `text_gaps` True: JSON Lines, which writes a JSON text minified from the whitespace runs its check
    notes (Given.gaps). `paging_state`: go on from there (a row's Position: a reading `resumable` says
    can), `given` rows an earlier reading gave out before it (they count toward the LIMIT). `bind`: a
    program's parameters, bound into the server's statement prepared
    (reading.statement.sent_statement). `ranges`: only these token ranges (lo, hi] of the table are
    read, the plan's WHERE said after each one's restriction (a partition of the answer: the Python
    API's; the plan must not restrict partitions). Raises QueryError."""
    if evaluator is None:
        held = blobs_on_core(ctx, target) if stored_blobs is None else stored_blobs
        evaluator = Evaluator(plan, ctx.decoding(), target.keyspace, Given(held, text_trees, text_gaps))
    star = target.columns if any(i.kind == "star" for i in plan.items) else []
    answer = Answer(plan, star)
    notes = ReadNotes(answer, emitted=given)
    try:
        prepared = ctx.session.prepare(plan.server_statement)  # its types; sent as it is (bind None)
        types = result_types(ctx.session, plan, answer, prepared)
    except Exception as err:  # the server refuses the ordinary part: its one line
        from cqlsh_ext.scanning.scan import error_text

        ctx.error(error_text(err, ctx.where))
        return None
    batch = batch_rows or ctx.page_size or DEFAULT_BATCH
    if ranges is not None:
        pages: Iterator[list[Row] | AnswerBatch] | None = _ranged_pages(
            ctx, plan, notes, answer, evaluator, target, batch, list(ranges), bind)
    else:
        if bind is None:  # the statement prepared for its types is the one sent, not its text again
            bind = _as_prepared(prepared)
        pages = _pages(ctx, plan, notes, answer, evaluator, target, batch, fetch_size, paging_state, bind)
    if pages is None:
        return None
    columns = answer_columns(plan, answer, types)
    places = [target.place(c.name) if c.role == BLOB else None for c in columns]
    # (a file of text's blobs read with no JSON tree, as the evaluator's own: Given)
    reading = BlobReading(ctx.decoding(), trees=evaluator.given.trees, gaps=evaluator.given.gaps)
    return TypedAnswer(columns, pages, notes, plan, places, reading)


def reads_in_order(ctx: ReadContext) -> bool:
    """Whether a whole-table payload query of this run is read as one stream in the server's order,
    so that an answer cut by --max-rows, stopped at --timeout or by an answer's cap (`in_order`: an
    MCP query's) goes on (--resume, a cursor) from where it was cut: a run that cuts or resumes
    answers (cqlsh_ext.agent)."""
    agent = ctx.settings.agent
    return ctx.in_order or agent.max_rows is not None or agent.resume is not None or agent.timeout is not None


def resumable(plan: Plan, in_order: bool = False) -> str | None:
    """Why a cut answer of `plan` cannot be gone on with from where it was cut (None: it can):
    its rows must come out of one stream in the order the server pages them (`in_order`: a whole
    table is read so, reads_in_order)."""
    if not plan.local_rows:
        return None  # the server's pages, one answer row per row
    if plan.aggregates:
        return "groups and aggregates are counted over every row read before any is answered"
    if plan.distinct or plan.order_by:
        return "DISTINCT and ORDER BY sort every row read before any is answered"
    if plan.reads_beyond_partitions and not plan.server_where and not in_order:
        return "the whole table is read by token ranges at once, its rows answered in no fixed order"
    return None


def blobs_on_core(ctx: ReadContext, target: TableTarget) -> bool:
    """Whether the native core decodes every blob column of the table in this context (auto mode,
    no column setting for it, the core on): a reader that writes blobs out then takes them as
    stored and decodes them a page at a time (`stored_blobs`); without the core, the views the
    evaluator makes once serve it better than a second decode in Python."""
    from cqlsh_ext.payload.places import Engines

    return Engines(ctx.decoding()).all_on_core(
        target.place(name) for name in target.columns
        if (cqltype := target.type_of(name)) is not None and cqltype.holds())


def takes_pages(evaluator: Evaluator) -> bool:
    """Whether a reading hands the evaluator the server's pages (scanning.pages_in): where the
    native core runs the plan (a page's blob cells read from its bytes, the driver making only the
    rows kept, handed back or shown, and of a file's only the ordinary columns it names:
    payload.server_rows.ServerRows), or, for a file's reading whose blobs the core decodes
    (Evaluator.held), where the plan decodes nothing (its columns made alone). Not with
    CQLSH_EXT_PAGES_IN=0."""
    from cqlsh_ext.scanning import pages_in

    return pages_in.enabled() and (evaluator.on_core or (evaluator.held and not evaluator.places))


def answer_columns(plan: Plan, answer: Answer, types: Sequence[Any]) -> list[AnswerColumn]:
    """The answer's columns: names (Answer.header), roles, driver types, what each reads."""
    from cqlsh_ext.cql.types import from_driver

    names, computed = answer.header(), answer.computed()
    sources: list[tuple[str, str | None]] = []
    for item in plan.items:
        if item.kind == "star":
            sources.extend((CQL, None) for _ in answer.star_columns)
        elif item.kind == "column":
            sources.append((CQL, None))
        elif item.kind == "path":
            sources.append((PATH, item.ref.text if isinstance(item.ref, Path) else item.name))
        else:
            sources.append((AGGREGATE, item.written or item.name))
    out = []
    for name, cqltype, (role, source), own in zip(names, types, sources, computed, strict=True):
        if role == CQL and cqltype is not None and from_driver(cqltype).is_blob:
            role = BLOB
        out.append(AnswerColumn(name, role, cqltype, source, own))
    return out


def result_types(session: Any, plan: Plan, answer: Answer, prepared: Any = None) -> list[Any]:
    """Driver types of the answer's columns (None for a path's or an aggregate's value), from the
    server's metadata of the statement sent (prepared: nothing read; `prepared`, the statement
    prepared already)."""
    from cqlsh_ext.query.grammar import Column

    if prepared is None:
        prepared = session.prepare(plan.server_statement)
    # result_metadata: (keyspace, table, name, type) per column of the result.
    by_name = {column[2]: column[3] for column in prepared.result_metadata or ()}
    types: list[Any] = []
    for item in plan.items:
        if item.kind == "star":
            types.extend(by_name.get(name) for name in answer.star_columns)
        elif item.kind == "column" and isinstance(item.ref, Column):
            types.append(by_name.get(item.ref.name))
        else:
            types.append(None)
    return types


def _as_prepared(prepared: Any) -> Binder:
    """How the plan's server statement is sent (scanning.scan.Binder: the plain road's pages, a
    scan of the partitions its WHERE names): as the statement prepared for its types, bound with
    no values, not as its text again. Nothing else is sent through it."""
    query = prepared.query_string

    def bind(text: str, args: tuple[Any, ...] | None) -> Any:
        if text == query and args is None:
            return prepared.bind(())
        raise ValueError(f"a statement that is not the one prepared: {text[:80]}")

    return bind


def _ranged_pages(ctx: ReadContext, plan: Plan, notes: ReadNotes, answer: Answer, evaluator: Evaluator,
                  target: TableTarget, batch: int, ranges: list[tuple[int, int]],
                  bind: Binder | None) -> Iterator[list[Row] | AnswerBatch]:
    """The plan read over `ranges` of the table's token ring (read_select's `ranges`), STREAMS of
    them at once, its WHERE after each range's restriction."""
    from cqlsh_ext.query.grammar import server_select
    from cqlsh_ext.scanning.plan import STREAMS, ReadPlan

    also = f"AND {plan.server_where} ALLOW FILTERING" if plan.server_where else ""
    scan = ReadPlan(server_select(plan, target.schema), keyspace=target.keyspace,
                    partition_key=[c.name for c in target.meta.partition_key],
                    streams=max(1, min(STREAMS, len(ranges))), ranges=ranges, also=also, bind=bind)
    progress = ctx.progress(f"SELECT {target.qualified}", True, None)
    return answer_pages(ctx, notes, answer, evaluator, scan, progress, batch)


def _pages(ctx: ReadContext, plan: Plan, notes: ReadNotes, answer: Answer, evaluator: Evaluator,
           target: TableTarget, batch: int, fetch_size: int | None,
           paging_state: bytes | None = None,
           bind: Binder | None = None) -> Iterator[list[Row] | AnswerBatch] | None:
    if not plan.local_rows:
        from cqlsh_ext.reading.statement import ServerPages, sent_statement

        try:  # rows as tuples, whatever the session's own factory (cqlsh's makes ordered dicts)
            statement = sent_statement(plan.server_statement, fetch_size or ctx.page_size,
                                       ctx.consistency, ctx.serial_consistency, bind)
            pages = ServerPages(ctx, statement, paging_state, pages_in=takes_pages(evaluator))
            result = pages.first()
        except Exception as err:
            from cqlsh_ext.scanning.scan import error_text

            ctx.error(error_text(err, ctx.where))
            return None
        if result is None:  # stopped before the first page came
            notes.cancelled, notes.resume = True, (pages.resume_state, 0)
            return iter(())
        return plain_pages(ctx, notes, answer, evaluator, pages, list(result.column_names or []))
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table

    label = f"SELECT {target.qualified}"
    if plan.reads_beyond_partitions and not plan.server_where:
        ask = FullScanQuestion(
            LABEL, "Add CONFIRM after ALLOW FILTERING to run it from a script, or name partitions in the "
            "WHERE.", "Scan the whole table? [y/N] ", plan.confirm)
        # A streamed answer that --max-rows may cut, or one --resume goes on with, is read as one
        # stream in the server's order: each row's Position is then a paging state to go on from
        # (output.row_limit); token ranges read at once give the rows in no order to go on from.
        in_order = answer.streamed and reads_in_order(ctx)
        scan = whole_table(ctx, plan.server_statement.removesuffix(" ALLOW FILTERING"), target.meta, ask,
                           **({"workers": 1, "streams": 1} if in_order else {}))
        if scan is None:
            return None
        scan.paging_state = paging_state if in_order else None
        progress = ctx.progress(label, True, scan.size.partitions if scan.size is not None else None)
    else:
        scan = ReadPlan(plan.server_statement, paging_state=paging_state, bind=bind)
        progress = ctx.progress(label, plan.reads_beyond_partitions, None)
    return answer_pages(ctx, notes, answer, evaluator, scan, progress, batch)


def _clear(progress: Any) -> None:
    """Rows are about to go out: the progress line goes first (it is drawn again below them)."""
    if progress is not None:
        progress.close()


def _chunks(rows: list[Row], size: int) -> Iterator[list[Row]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


class _Batches:
    """Found rows gathered into batches of `size` (so a sparse match does not print a table
    header every few rows), a partial batch let out after FLUSH_SECONDS (so it shows up while the
    scan goes on). The progress line is cleared before a batch goes out."""

    def __init__(self, size: int, progress: Any, positions: bool = False) -> None:
        self.size = size
        self.progress = progress
        self.held: list[Row] = []
        #: Each held row's Position, when the reading has them (one stream).
        self.places: list[Position] | None = [] if positions else None
        self.since = time.monotonic()

    def add(self, rows: list[Row], end: bool = False,
            places: list[Position] | None = None) -> Iterator[list[Row] | AnswerBatch]:
        self.held.extend(rows)
        if self.places is not None and places is not None:
            self.places.extend(places)
        due = end or time.monotonic() - self.since >= FLUSH_SECONDS
        full = len(self.held) // self.size * self.size
        cut = len(self.held) if due else full
        if cut:
            _clear(self.progress)
            out, self.held = self.held[:cut], self.held[cut:]
            self.since = time.monotonic()
            if self.places is None:
                yield from _chunks(out, self.size)
                return
            marks, self.places = self.places[:cut], self.places[cut:]
            for start in range(0, cut, self.size):
                yield AnswerBatch(out[start:start + self.size], positions=marks[start:start + self.size])


_Rows = TypeVar("_Rows", list[Row], AnswerBatch)


def _limited(notes: ReadNotes, limit: int | None, rows: _Rows) -> tuple[_Rows, bool]:
    """`rows` (a list of rows, or a batch of columns) cut at the LIMIT; whether the LIMIT is reached."""
    if limit is None:
        return rows, False
    left = max(0, limit - notes.emitted)
    rows = rows.head(left) if isinstance(rows, AnswerBatch) else rows[:left]
    notes.emitted += len(rows)
    return rows, notes.emitted >= limit


def plain_pages(ctx: ReadContext, notes: ReadNotes, answer: Answer, evaluator: Evaluator,
                pages: ServerPages, names: list[str]) -> Iterator[AnswerBatch]:
    """The server's pages (reading.statement.ServerPages), a page per batch, each row with its
    Position: each page's blobs decoded together; as columns where the evaluator answers in
    columns (no blob's view asked for: an export's reading). The context's stop ends it at once."""
    try:
        for state, rows in pages:
            columns = (answer.add_page_columns(evaluator, names, rows) if rows and evaluator.held
                       else None)
            if columns is not None:
                yield AnswerBatch(columns=columns, positions=PagePositions(state, 0, len(rows)))
            else:
                found = answer.add_page(evaluator, names, rows) if rows else []
                yield AnswerBatch(found, positions=PagePositions(state, 0, len(found)))
    except Exception as err:  # a later page refused, the server gone: the rows so far stand
        from cqlsh_ext.scanning.scan import error_text

        notes.error, notes.resume = error_text(err, pages.where), (pages.state, 0)
        return
    if pages.stopped:
        notes.cancelled, notes.resume = True, (pages.resume_state, 0)


def answer_pages(ctx: ReadContext, notes: ReadNotes, answer: Answer, evaluator: Evaluator, plan: ReadPlan,
                 progress: Progress | None, batch: int) -> Iterator[list[Row] | AnswerBatch]:
    """The plan read into a ScanAnswer (in this process or in worker processes): streamed rows as
    they match, up to the LIMIT, else the answer once the reading ends."""
    run = plan.read(ctx, ScanAnswer(plan.query, answer, evaluator, columns=True), progress)
    if progress is not None:  # what was matched and not decoded, wherever it was read
        progress.detail = lambda: progress_detail(run.seen_total())
    enough = False
    # One stream read in order (not by token ranges, not by workers): each match's Position is
    # its page's paging state and its index among the page's matches.
    scanner = getattr(run, "scanner", None) if plan.one_stream else None
    held = _Batches(batch, progress, positions=scanner is not None and answer.streamed)
    limited = False
    stopped_at: Position | None = None
    for found in run:
        if ctx.stop.is_set() and not enough:
            notes.cancelled = True
            enough = True
            run.stop()
            if scanner is not None:  # this page's matches are not given out: it is read again
                stopped_at = (scanner.page_state, 0)
        if enough or not answer.streamed:
            continue
        if found and isinstance(found[0], AnswerBatch):  # a page's kept rows as columns (a file's reading)
            for page in found:
                if held.places is not None and scanner is not None and page.positions is None:
                    page.positions = PagePositions(scanner.page_state, 0, len(page))  # its page's matches
                page, enough = _limited(notes, answer.plan.limit, page)
                if len(page):
                    yield from held.add([], end=True)  # rows held before it go first
                    _clear(progress)
                    yield page
                if enough:
                    break
        else:
            rows, enough = _limited(notes, answer.plan.limit, found)
            places = [(scanner.page_state, i) for i in range(len(rows))] if scanner is not None else None
            yield from held.add(rows, places=places)
        limited = enough
        if enough:
            run.stop()
    yield from held.add([], end=True)
    if scanner is not None and held.places is not None and not limited and ctx.stop.is_set():
        if stopped_at is None and scanner.next_state is not None:
            stopped_at = (scanner.next_state, 0)
        notes.resume = stopped_at
    notes.cancelled = notes.cancelled or ctx.stop.is_set()  # stopped by the caller, not by Ctrl-C
    notes.interrupted = run.merged.interrupted and not notes.cancelled
    notes.error = run.merged.error
    notes.retried = run.retried
    notes.how = run.merged.scan
    scanner = getattr(run, "scanner", None)  # read in this process: how far, in token ranges
    ranges = scanner.spec.ranges if scanner is not None else None
    if scanner is not None and isinstance(ranges, (list, tuple)) and len(ranges) > 1:
        notes.ranges = (scanner.ranges_done, len(ranges))
    if not answer.streamed:
        yield from _chunks(answer.final(), batch)


class ScanAnswer:
    """The Aggregate a reading fills (cqlsh_ext.scanning.aggregate): in this process the answer
    itself, in a worker process its part of the answer; matching rows of a streamed answer leave
    with each page (`drain`). The evaluator is inherited through fork and never pickled."""

    def __init__(self, query: str, answer: Answer, evaluator: Evaluator, columns: bool = False) -> None:
        self.query = query
        self.answer = answer
        self.evaluator: Evaluator | None = evaluator
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""
        self.names: list[str] = []
        #: Rows, or (`columns`: in this process, for an evaluator that answers in columns: a
        #: file's reading) each page's kept rows as an AnswerBatch of columns.
        self.pending: list[Any] = []
        self.columns = columns and evaluator.held

    @property
    def pages_in(self) -> bool:
        """The scan hands over the server's pages (takes_pages)."""
        return self.evaluator is not None and takes_pages(self.evaluator)

    def fresh(self) -> ScanAnswer:
        """A worker process' part (its rows are sent back pickled: rows, not columns)."""
        assert self.evaluator is not None
        return ScanAnswer(self.query, self.answer.fresh(), self.evaluator)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self.names = list(names)

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        assert self.evaluator is not None
        if self.columns:
            columns = self.answer.add_page_columns(self.evaluator, self.names, rows)
            if columns is not None:
                if columns and len(columns[0]):
                    self.pending.append(AnswerBatch(columns=columns))
                return
        self.pending.extend(self.answer.add_page(self.evaluator, self.names, rows))

    @property
    def rows(self) -> int:
        """Rows read (the workers' progress counts them)."""
        return self.answer.counts.read

    def drain(self) -> list[Any]:
        """What was found since the last drain: rows, or batches of columns."""
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
