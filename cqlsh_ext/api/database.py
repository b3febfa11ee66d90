"""The connection a program makes (`cqlsh_ext.connect`), as the shell would with the same
arguments and cqlshrc (reading.connecting reads them as cqlsh does), and what it asks: each
call builds a reading context (reading.context.ReadContext) and a typed request, hands them to the
service the shell's command uses, and gives back the typed answer (api.query_answer.QueryAnswer,
api.report.ReportResult). The Shell is never made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.call import Call, refuse_write, verb
from cqlsh_ext.api.errors import Error, one_line
from cqlsh_ext.api.params import Params
from cqlsh_ext.api.query_answer import Progress, QueryAnswer
from cqlsh_ext.api.report import ReportResult
from cqlsh_ext.cql.first_words import READS, SESSION

if TYPE_CHECKING:
    import os

    import polars
    from cassandra.cluster import Cluster, Session

    from cqlsh_ext.api.loads import LoadResult
    from cqlsh_ext.api.partitions import Partition
    from cqlsh_ext.api.query_answer import Resume
    from cqlsh_ext.api.writes import EditResult, Journal, ResumeResult, RewriteResult, UndoResult
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.connecting import Connection
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.reading.typed import ReportAnswer, TypedAnswer
    from cqlsh_ext.settings import Settings

__all__ = ["Database", "Executed", "connect", "connect_with", "read_partition"]

#: Rows a batch of the answer holds, and the server's page size when it pages the answer's rows:
#: an export's (export.run), so to_arrow() reads as COPY TO does.
PAGE_SIZE = 5000
FETCH_SIZE = 5000

@dataclass(frozen=True)
class Executed:
    """What the server answered a write (db.execute): `applied`, a conditional write's outcome
    (IF ...; None for any other), the rows it answered (a conditional write's current values),
    the server's warnings."""

    applied: bool | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _positive(value: int | None, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise Error(f"{name} takes a positive whole number of rows, not {value!r}")
    return value


def _positive_seconds(value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise Error(f"timeout takes a positive number of seconds, not {value!r}")
    return float(value)


def _level(value: str | int | None) -> int | None:
    """A consistency level by name ("QUORUM", "local_one") or the driver's number; None: the
    connection's."""
    from cassandra import ConsistencyLevel

    if value is None:
        return None
    names: dict[str, int] = ConsistencyLevel.name_to_value
    if isinstance(value, str) and value.upper() in names:
        return names[value.upper()]
    if isinstance(value, int) and not isinstance(value, bool) and value in names.values():
        return value
    raise Error(f"consistency: unknown level {value!r} (one of {', '.join(names)})")


def _told(progress: Progress, made: list[bool]) -> Progress:
    """`progress`, noting in `made` that the reading gave an event of its own."""

    def told(event: dict[str, Any]) -> None:
        if not made:
            made.append(True)
        progress(event)

    return told


def connect(host: str | None = None, port: int | None = None, *, username: str | None = None,
            password: str | None = None, credentials: str | os.PathLike[str] | None = None,
            keyspace: str | None = None, amazon_keyspaces: str | bool | None = None,
            decode: str | None = None, dictionaries: Iterable[str] | None = None,
            cqlshrc: str | os.PathLike[str] | None = None) -> Database:
    """A connection made as `cqlsh-ext [host [port]] -u ... -p ... --credentials FILE -k ...
    [--keyspaces [REGION]] [-d decode] [--dictionary FILE ...] [--cqlshrc FILE]` makes it: what is
    not given is read as cqlsh reads it (cqlshrc's [connection] hostname, port and ssl,
    [authentication] keyspace, username, password and credentials, [ssl], [auth_provider];
    CQLSH_HOST and CQLSH_PORT; the credentials file beside the cqlshrc), 127.0.0.1:9042 where
    nothing says; an argument given wins (`cqlshrc`: another file than ~/.cassandra/cqlshrc;
    `credentials`: another file than the one beside it). Use it as a context manager (or call
    close()). Raises Error with the shell's line: a login refused says what to check, in this
    function's words."""
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise Error(f"port takes a port number (1 to 65535), not {port!r}")
    # cqlsh reads the host and port as positionals, host first: a port given alone is set below
    args = [] if host is None else [host] if port is None else [host, str(port)]
    if username is not None:
        args += ["-u", username]
    if password is not None:
        args += ["-p", password]
    if credentials is not None:
        args += ["--credentials", _credentials_file(credentials)]
    if keyspace is not None:
        args += ["-k", keyspace]
    if amazon_keyspaces:
        args += ["--keyspaces"] if amazon_keyspaces is True else [f"--keyspaces={amazon_keyspaces}"]
    if decode is not None:
        args += ["-d", decode]
    for path in dictionaries or ():
        args += ["--dictionary", path]
    if cqlshrc is not None:
        args += ["--cqlshrc", _cqlshrc_file(cqlshrc)]
    return _connected(args, port if host is None else None)


def connect_with(args: Sequence[str]) -> Database:
    """A connection made from cqlsh-ext's own command-line arguments (host, port, -u, -p, --ssl,
    --cqlshrc, --keyspaces, -d, ...), read as the shell reads them: how `cqlsh-ext spark` hands its
    connection to the data source its Spark 4 reads go through (spark/datasource.py). As connect."""
    return _connected(list(args), None)


def _connected(args: list[str], port: int | None) -> Database:
    """connect's connection made from its arguments; `port`: a port given without a host."""
    import contextlib
    import io

    from cqlsh_ext.keyspaces import wiring
    from cqlsh_ext.reading.connecting import Connection, connection

    said = io.StringIO()  # cqlsh's option reading: its warnings (a password given), its refusals
    try:
        with contextlib.redirect_stderr(said):
            # The Python driver takes any auth provider cqlshrc names (no plain_or_sigv4_only).
            conn = connection(args, wiring, Connection, prog="cqlsh_ext.connect")
    except SystemExit as refused:  # cqlsh refused: its message (sys.exit's), else its last line says why
        lines = [line for line in said.getvalue().splitlines() if line.strip()]
        why = refused.code if isinstance(refused.code, str) else lines[-1] if lines else \
            "cqlsh refused the connection's options"
        raise Error(" ".join(why.split())) from None
    except Exception as err:
        raise Error(one_line(err)) from None
    if port is not None:
        conn.port = port
    from cqlsh_ext.keyspaces.errors import Asked, ConnectionFailed, connection_failures

    # As the shell says it, naming this function's arguments where the shell names its flags.
    arguments = Asked(login="username= and password=", user_password="username/password",
                      credentials_file="credentials=FILE", credentials="credentials=", keyspace="keyspace=")
    # The keyspace given, else cqlshrc's (cqlsh's reading of both: its options' keyspace).
    keyspace = conn.options.keyspace or None
    cluster = conn.cluster()
    try:
        with connection_failures(conn.host, conn.port, tls=conn.ssl, keyspaces=conn.settings.keyspaces.active,
                                 asked=arguments):
            session = cluster.connect(keyspace)
    except ConnectionFailed as failed:
        cluster.shutdown()
        raise Error(f"Connection error: {failed}") from None
    from cqlsh_ext.api.query_answer import warm

    warm()  # a reading's imports paid here, not by its first answer's rows
    return Database(conn, cluster, session, keyspace)


def _cqlshrc_file(path: str | os.PathLike[str]) -> str:
    """The cqlshrc to read, refused in one line when there is none at the path (cqlsh would warn
    and read ~/.cassandra/cqlshrc instead: a program gets no warning to see)."""
    import os

    named = os.path.expanduser(os.fspath(path))
    if not os.path.isfile(named):
        raise Error(f"cqlshrc file {named}: no such file")
    return named


def _credentials_file(path: str | os.PathLike[str]) -> str:
    """The credentials file to read, refused in one line when cqlsh would not read it (a missing
    file, or one others can read: cqlsh then logs in without it)."""
    import os

    from cqlsh_ext.upstream.seams import credentials_file_secure

    named = os.path.expanduser(os.fspath(path))
    if not os.path.isfile(named):
        raise Error(f"credentials file {named}: no such file")
    if not credentials_file_secure(named):
        raise Error(f"credentials file {named} not used: it must be yours and readable by you only "
                    f"(chmod 600 {named}), as cqlsh requires")
    return named


def read_partition(part: Partition, db: Database | None = None, *, progress: Progress | None = None,
                   **connect_args: Any) -> QueryAnswer:
    """The answer of one part (db.partitions, api.partitions): on `db`, or on a connection made
    with `connect_args` (connect's: host, port, username, credentials, ...; `keyspace` the part's
    by default), closed when the answer ends. An answer of its own: iterate it, to_arrow(), ..."""
    from cqlsh_ext.api.partitions import LABEL, Partition

    if not isinstance(part, Partition):
        raise Error(f"read_partition takes a Partition of db.partitions, not {type(part).__name__}")
    owner = None
    if db is None:
        connect_args.setdefault("keyspace", part.keyspace)
        db = owner = connect(**connect_args)
    elif connect_args:
        raise Error("read_partition takes a db or connect's arguments, not both")
    return db._answer(part.statement, part.params, Call(progress=progress),
                      ranges=part.ranges, kinds=part.kinds, plain=True, keyspace=part.keyspace,
                      owner=owner, label=f"{LABEL}: part {part.index + 1} of {part.count}")


class Database:
    """A connected session (see the module doc). Each method raises cqlsh_ext.Error with the shell's
    one line when the statement is refused or fails."""

    def __init__(self, conn: Connection, cluster: Cluster, session: Session, keyspace: str | None) -> None:
        from cassandra import ConsistencyLevel

        from cqlsh_ext.api.params import Prepared

        self._conn = conn
        self.cluster = cluster
        self.session = session
        self.keyspace = keyspace
        #: The shell's settings (cqlshrc's and the arguments'): how values decode, Keyspaces' options.
        self.config: Settings = conn.settings
        # The shell's levels: ONE, or LOCAL_QUORUM on Amazon Keyspaces (which reads at no other).
        self.consistency: int = ConsistencyLevel.LOCAL_QUORUM if self.config.keyspaces.keyspaces \
            else ConsistencyLevel.ONE
        #: The statements prepared on this session, by text (a program's parameters).
        self._prepared = Prepared(session)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """The connections ended, and the driver's event loop thread with them when no other
        connection of this process uses it (upstream.seams.end_idle_event_loop)."""
        from cqlsh_ext.upstream.seams import end_idle_event_loop

        self.cluster.shutdown()
        end_idle_event_loop(self.cluster.connection_class)

    @property
    def where(self) -> str:
        """The host and port connected to ("127.0.0.1:9042"), as errors name them."""
        return f"{self._conn.host}:{self._conn.port}"

    def context(self, errors: list[str], messages: list[str], progress: Progress | None = None, *,
                timeout: float | None = None, consistency: int | None = None,
                keyspace: str | None = None) -> ReadContext:
        """A reading's context on this session: nobody to ask (a costly full scan is refused with
        how to confirm it), errors and messages kept, progress as events to `progress`; a call's
        own `timeout` (seconds), `consistency` level and `keyspace` (where a table named alone is)."""
        from cassandra import ConsistencyLevel

        from cqlsh_ext.reading.context import ReadContext, progress_events

        ctx = ReadContext(session=self.session, cluster=self.cluster, host=self._conn.host,
                          keyspace=keyspace or self.keyspace,
                          consistency=self.consistency if consistency is None else consistency,
                          serial_consistency=ConsistencyLevel.SERIAL, settings=self.config,
                          page_size=100, ask=None, say=messages.append, error=errors.append,
                          request_timeout=timeout)
        if progress is not None:
            ctx.progress = progress_events(progress)
        return ctx

    # ------------------------------------------------------------ a SELECT

    def query(self, statement: str, params: Params = None, *, page_size: int | None = None,
              timeout: float | None = None, consistency: str | int | None = None,
              paging_state: bytes | None = None, progress: Progress | None = None,
              sample_rows: int | None = None, schema: Any = None) -> QueryAnswer:
        """The answer of one statement that reads: a payload query's (paths, payload conditions,
        GROUP BY: docs/queries.md), else the server's as written. Read when taken (iterate it, or
        to_arrow()). `params`: the values of its `?` markers (a list) or `:name` markers (a dict),
        bound through a prepared statement, a payload condition's too; `page_size` rows a page and
        a batch, `timeout` seconds a request, `consistency` a level ("QUORUM"); `paging_state`: go
        on where an answer of the same statement and parameters stopped (answer.paging_state).
        Its Arrow types (docs/api.md, "Types"): `sample_rows`, the leading rows the types of
        values are read from (5,000); `schema`, types given (a pyarrow.Schema, or a dict of
        column names or payload paths, "data.total", to Arrow types or their names,
        "decimal128(20, 2)"). A write is refused: db.execute runs it."""
        return self._answer(statement, params, Call(page_size, timeout, consistency, progress),
                            paging_state=paging_state, sample_rows=sample_rows, schema=schema)

    def _answer(self, statement: str, params: Params, call: Call, *, paging_state: bytes | None = None,
                ranges: Sequence[tuple[int, int]] | None = None, kinds: Sequence[Kind | None] | None = None,
                plain: bool = False, keyspace: str | None = None, owner: Database | None = None,
                label: str | None = None, sample_rows: int | None = None, schema: Any = None) -> QueryAnswer:
        """The answer of `statement` read as `call` says (see query); `ranges`: only those token
        ranges of its table (a partition: plain SELECTs too, `plain`), `kinds` its columns' Arrow
        kinds given (the whole answer's), `keyspace` where its table is, `owner` closed with it,
        `sample_rows` and `schema` its types (see query)."""
        from cqlsh_ext.api.query_answer import AnswerReading, decode_state, identity, need
        from cqlsh_ext.common.interrupt import CtrlC
        from cqlsh_ext.cql.lexer import Lexed

        lexed = Lexed(statement)
        refuse_write(lexed, "query")
        page_size = _positive(call.page_size, "page_size")
        sample_rows = _positive(sample_rows, "sample_rows")
        if schema is not None:
            need("pyarrow")
        level = _level(call.consistency)
        owned = identity(statement, params)
        resume = decode_state(owned, paging_state)
        errors: list[str] = []
        made: list[bool] = []  # whether the reading gives progress events of its own (a scan's)
        progress = call.progress
        ctx = self.context(errors, [], None if progress is None else _told(progress, made),
                           timeout=_positive_seconds(call.timeout), consistency=level, keyspace=keyspace)
        ctrl_c = CtrlC(inner=True).__enter__()  # until the answer ends (QueryAnswer._finish)
        try:
            typed, name, why_not = self._typed_answer(
                ctx, lexed, statement, params, errors, resume, page_size, plain=plain, ranges=ranges,
                kinds=kinds, label=label, sample_rows=sample_rows, schema=schema)
        except BaseException as err:
            ctrl_c.restore()
            if owner is not None:
                owner.close()
            if isinstance(err, Error) or not isinstance(err, Exception):
                raise
            raise Error(one_line(err, self.where)) from None
        reading = AnswerReading(ctrl_c, ctx.stop, progress, name, lambda: bool(made), owned, resume.state,
                                resume.skip, resume.given, why_not, owner, page_size or PAGE_SIZE)
        return QueryAnswer(typed, ctx.display, reading)

    def _typed_answer(self, ctx: ReadContext, lexed: Lexed, statement: str, params: Params,
                      errors: list[str], resume: Resume, page_size: int | None, *, plain: bool,
                      ranges: Sequence[tuple[int, int]] | None, kinds: Sequence[Kind | None] | None,
                      label: str | None, sample_rows: int | None,
                      schema: Any) -> tuple[TypedAnswer, str, str | None]:
        """_answer's reading, typed: a payload query's planned on its table, else the server's as
        written; with the answer's name and why it cannot be gone on with (None when it can)."""
        from cqlsh_ext.api.params import bind_statement
        from cqlsh_ext.api.query_answer import FROM_START
        from cqlsh_ext.reading.select import LABEL, blobs_on_core, read_select, resumable
        from cqlsh_ext.reading.statement import read_statement

        try:
            planned = self._planned(ctx, lexed, plain or ranges is not None)
        except Error:
            raise
        except Exception as err:
            raise Error(f"{LABEL}: {one_line(err, self.where)}") from None
        fetch = page_size or FETCH_SIZE
        why_not: str | None
        if planned is not None:
            plan, target = planned
            bound = bind_statement(self._prepared, lexed, plan.server_statement, plan, params)
            plan = bound.plan or plan
            why_not = resumable(plan) if ranges is None else \
                "a partition's token ranges are read at once, its rows answered in no fixed order"
            if resume is not FROM_START and why_not is not None:
                raise Error(f"paging_state: this statement's answer cannot be gone on with ({why_not})")
            typed = read_select(ctx, plan, target, page_size or PAGE_SIZE, fetch,
                                stored_blobs=blobs_on_core(ctx, target), paging_state=resume.state,
                                given=resume.given, bind=bound.binder(), ranges=ranges)
            name = label or f"SELECT {target.qualified}"
        else:
            text = statement.strip().rstrip(";")
            bound = bind_statement(self._prepared, lexed, text, None, params)
            why_not = None
            typed = read_statement(ctx, text, fetch, paging_state=resume.state, bind=bound.binder())
            name = label or " ".join(text.split()[:4])
        if typed is None:
            raise Error(errors[-1] if errors else "the statement answered nothing")
        if kinds is not None:
            typed.fix(kinds)
        try:
            typed.typed_by(sample_rows, schema)
        except ValueError as err:
            typed.close()
            raise Error(str(err)) from None
        return typed, name, why_not

    def _plain_plan(self, statement: str, label: str) -> tuple[Lexed, Plan, TableTarget]:
        """A reading's statement lexed and planned on its table (db.partitions, cqlsh_ext.scan): a
        write refused, any error one line under `label`."""
        from cqlsh_ext.cql.lexer import Lexed

        lexed = Lexed(statement)
        refuse_write(lexed, label)
        try:
            planned = self._planned(self.context([], []), lexed, plain=True)
        except Error as err:
            raise Error(f"{label}: {err}") from None
        except Exception as err:
            raise Error(f"{label}: {one_line(err, self.where)}") from None
        assert planned is not None
        return lexed, *planned

    def _planned(self, ctx: ReadContext, lexed: Lexed, plain: bool) -> tuple[Plan, TableTarget] | None:
        """The statement's plan on its table: a payload query's (reading.select.payload_plan), or,
        `plain`, any SELECT the payload parser reads (its columns alone too: a partition's)."""
        from cqlsh_ext.reading.select import payload_plan

        if not plain:
            return payload_plan(ctx, lexed, refresh=True, markers=True)
        from cqlsh_ext.query.grammar import parse
        from cqlsh_ext.query.recognize import table_of
        from cqlsh_ext.reading.resolve import find_table

        named = table_of(lexed)
        if named is None:
            raise Error("partitions are of a SELECT ... FROM table")
        target = find_table(ctx.cluster, ctx.keyspace, *named, refresh=True)
        if target is None:
            raise Error(f"unknown table {'.'.join(n for n in named if n)}")
        plan = parse(lexed, target.schema, plain=True, markers=True)
        if plan is None:
            raise Error("partitions are of a SELECT ... FROM table")
        return plan, target

    def execute(self, statement: str, params: Params = None, *, timeout: float | None = None,
                consistency: str | int | None = None) -> Executed:
        """A statement that writes (INSERT, UPDATE, DELETE, BATCH, CREATE, ALTER, DROP, TRUNCATE,
        GRANT, ...), sent as written, its markers bound to `params` as db.query binds them: what
        the server answered (`Executed`: a conditional write's `applied`, its rows, warnings). A
        SELECT is db.query's; an UPDATE or DELETE of payload paths is db.edit's."""
        from cqlsh_ext.api.params import bind_statement
        from cqlsh_ext.cql.lexer import Lexed
        from cqlsh_ext.reading.statement import sent_statement

        lexed = Lexed(statement)
        first = verb(lexed)
        if first in READS:
            raise Error(f"db.execute writes; {first.upper()} reads: db.query(statement, params) answers it")
        if first in SESSION:
            raise Error("USE would change the connection's keyspace under its answers: connect(keyspace=...) "
                        "or name the keyspace in the statement")
        if first in ("update", "delete") and self._edit_of(lexed) is not None:
            raise Error(f"db.execute sends CQL as written; this {first.upper()} names payload paths: "
                        "db.edit(statement) edits them (previewed, journaled, undoable)")
        text = statement.strip().rstrip(";")
        level = _level(consistency)
        bound = bind_statement(self._prepared, lexed, text, None, params)
        sent = sent_statement(text, None, self.consistency if level is None else level,
                              _serial(), bound.binder())
        try:
            seconds = _positive_seconds(timeout) or self.session.default_timeout
            result = self.session.execute(sent, timeout=seconds)
        except Exception as err:
            raise Error(one_line(err, self.where)) from None
        names = result.column_names or ()
        rows = [dict(row) if isinstance(row, Mapping) else dict(zip(names, row, strict=False))
                for row in result.current_rows or ()]
        applied = rows[0].get("[applied]") if rows and "[applied]" in rows[0] else None
        return Executed(applied if isinstance(applied, bool) else None, rows,
                        list(getattr(result.response_future, "warnings", None) or ()))

    def _edit_of(self, lexed: Lexed) -> object | None:
        """The edit an UPDATE or DELETE asks for when it names payload paths (edit.parse), else None."""
        from cqlsh_ext.edit.parse import TableColumns, parse, recognized

        if not recognized(lexed):
            return None
        lookup = TableColumns(self.cluster, self.keyspace)
        try:
            return parse(lexed, lookup, lookup.schema)
        except Exception:
            return None

    def partitions(self, statement: str, n: int, params: Params = None) -> list[Partition]:
        """The statement's answer in `n` parts (docs/api.md, "Partitions"): descriptors, each
        picklable, that cqlsh_ext.read_partition reads in any process, their answers together
        the whole answer exactly (rows and notes). See api.partitions."""
        from cqlsh_ext.api.partitions import partitions

        return partitions(self, statement, n, params)

    def scan(self, statement: str, params: Params = None) -> polars.LazyFrame:
        """The statement's answer as a polars.LazyFrame (docs/api.md, "polars"): its projection
        picks the paths read, its simple predicates become payload or server conditions. See
        api.polars_source."""
        from cqlsh_ext.api.polars_source import scan

        return scan(self, statement, params)

    # ------------------------------------------------------------ the reports

    def _report(self, read: Callable[[ReadContext], ReportAnswer | None],
                progress: Progress | None) -> ReportResult:
        errors: list[str] = []
        messages: list[str] = []
        try:
            answer = read(self.context(errors, messages, progress))
        except Error:
            raise
        except Exception as err:
            raise Error(one_line(err, self.where)) from None
        if answer is None:
            raise Error(errors[-1] if errors else "nothing to report")
        if progress is not None:  # every reading's events end with how it ended
            progress({"reading": answer.title, "done": 1.0 if answer.stopped is None else None,
                      "stopped": answer.stopped})
        return ReportResult(answer, messages)

    def _request(self, name: str, arguments: dict[str, Any]) -> Any:
        """The request of cqlsh-ext's feature `name`, built by its declared builder
        (insight/report_requests.py) from the arguments, as MCP's tools build theirs (a table
        alone in the connection's keyspace). Raises Error, one line naming the argument."""
        from cqlsh_ext.features import declared
        from cqlsh_ext.features.arguments import Invalid
        from cqlsh_ext.features.calling import request_of, table_named
        from cqlsh_ext.features.feature import FeatureCall

        feature = declared(plugins=False)[name]
        try:
            return request_of(feature, FeatureCall(arguments, table_named(feature, arguments, self.keyspace)))
        except Invalid as err:
            raise Error(str(err)) from None

    def feature(self, name: str, /, **arguments: Any) -> ReportResult:
        """A read feature a package declares (docs/features.md, features.ENTRY_POINT_GROUP) run by its
        name: `arguments` checked against its declaration, the table it reads looked up (a table
        alone is in the connection's keyspace), its service handed a FeatureCall, its report
        answered. cqlsh-ext's own reports are called by their methods (db.stats, db.advise, ...)."""
        from cqlsh_ext.api.report_methods import call
        from cqlsh_ext.features.calling import plugins

        declared = plugins()
        if name not in declared:
            from cqlsh_ext.common.text import unknown

            raise Error(unknown("read feature of a package", name, list(declared))
                        if declared else f"no package declares a read feature {name!r}")
        return call(self, declared[name], arguments, None)

    def __getattr__(self, name: str) -> Callable[..., ReportResult]:
        """A report's method, made from its feature's declaration (api.report_methods: db.stats,
        db.advise, db.settings, db.describe_payload, ...; help(db.stats) says its arguments)."""
        from cqlsh_ext.api.report_methods import method_of

        return method_of(self, name)

    def __dir__(self) -> list[str]:
        from cqlsh_ext.api.report_methods import method_names

        return sorted({*super().__dir__(), *method_names(self)})

    def inspect(self, statement: str) -> list[dict[str, Any]]:
        """INSPECT SELECT ...: each blob value of the SELECT's rows, layer by layer, as data."""
        from cqlsh_ext.features import service_of

        request = self._request("inspect_value", {"statement": statement})
        errors: list[str] = []
        found: list[dict[str, Any]] = []

        def take(value: dict[str, Any]) -> bool:
            found.append(value)
            return True

        try:
            seen = service_of("inspect_value")(self.context(errors, []), request,
                                               lambda report: report.to_json(), take)
        except Exception as err:
            raise Error(one_line(err, self.where)) from None
        if seen is None:
            raise Error(errors[-1] if errors else "nothing to inspect")
        return found

    # ------------------------------------------------------------ the writes

    # db.rewrite, db.resume, db.undo, db.edit and db.write are made from their features' declarations
    # (api.report_methods, run by api.writes.declared_write), as the reports' are: their arguments,
    # docs, services and result types are declared there. What the class says of them is their static
    # types alone, which no declaration read at run time gives a type checker (tests/mcp_server/
    # test_declarations.py holds these signatures to the declarations').
    if TYPE_CHECKING:
        def rewrite(self, column: str, spec: str, *, where: str | None = None, allow_filtering: bool = False,
                    pace: int | None = None, every_row: bool = False, confirm: bool = False,
                    progress: Progress | None = None) -> RewriteResult: ...

        def resume(self, journal: Journal, *, confirm: bool = False,
                   progress: Progress | None = None) -> ResumeResult: ...

        def undo(self, journal: Journal, *, unsealed: bool = False, confirm: bool = False, cut: bool = False,
                 progress: Progress | None = None) -> UndoResult: ...

        def edit(self, statement: str, params: Params = None, *, confirm: bool = False,
                 progress: Progress | None = None) -> EditResult: ...

        def write(self, table: str, data: Any, *, encode: Mapping[str, str] | None = None,
                  ttl: int | None = None, pace: int | None = None, confirm: bool = False,
                  resume: Journal | LoadResult | None = None,
                  progress: Progress | None = None) -> LoadResult: ...


def _serial() -> int:
    from cassandra import ConsistencyLevel

    serial: int = ConsistencyLevel.SERIAL
    return serial
