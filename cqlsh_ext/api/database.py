"""The connection a program makes (`cqlsh_ext.connect`), as the shell would with the same
arguments and cqlshrc (reading.connecting reads them as cqlsh does), and what it asks: each
call builds a reading context (reading.context.ReadContext) and a typed request, hands them to the
service the shell's command uses, and gives back the typed answer (api.query_answer.QueryAnswer,
api.report.ReportResult). The Shell is never made."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error, one_line
from cqlsh_ext.api.query_answer import QueryAnswer
from cqlsh_ext.api.report import ReportResult

if TYPE_CHECKING:
    import os

    from cqlsh_ext.api.writes import ResumeResult, RewriteResult, UndoResult
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer

__all__ = ["Database", "connect"]

#: Rows a batch of the answer holds, and the server's page size when it pages the answer's rows:
#: an export's (export.run), so to_arrow() reads as COPY TO does.
PAGE_SIZE = 5000
FETCH_SIZE = 5000

Progress = Callable[[dict[str, Any]], None]


def connect(host: str = "127.0.0.1", port: int = 9042, *, username: str | None = None,
            password: str | None = None, credentials: str | os.PathLike[str] | None = None,
            keyspace: str | None = None, amazon_keyspaces: str | bool | None = None,
            decode: str | None = None, dictionaries: Iterable[str] | None = None,
            cqlshrc: str | None = None) -> Database:
    """A connection made as `cqlsh-ext host port -u ... -p ... --credentials FILE -k ...
    [--keyspaces [REGION]] [-d decode] [--dictionary FILE ...]` makes it, cqlshrc included
    (`cqlshrc`: another file; `credentials`: another file than ~/.cassandra/credentials, read as
    cqlsh reads it). Use it as a context manager (or call close()). Raises Error with the shell's
    line: a login refused says what to check, in this function's words."""
    args = [host, str(port)]
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
        args += ["--cqlshrc", cqlshrc]
    import contextlib
    import io

    from cqlsh_ext.keyspaces import wiring
    from cqlsh_ext.reading.connecting import Connection, connection

    said = io.StringIO()  # cqlsh's option reading: its warnings (a password given), its refusals
    try:
        with contextlib.redirect_stderr(said):
            # The Python driver takes any auth provider cqlshrc names (no plain_or_sigv4_only).
            conn = connection(args, wiring, Connection, prog="cqlsh_ext.connect")
    except SystemExit:  # cqlsh's option parser refused: its last line says why
        lines = [line for line in said.getvalue().splitlines() if line.strip()]
        raise Error(lines[-1] if lines else "cqlsh refused the connection's options") from None
    except Exception as err:
        raise Error(one_line(err)) from None
    from cqlsh_ext.keyspaces.errors import Asked, ConnectionFailed, connection_failures

    # As the shell says it, naming this function's arguments where the shell names its flags.
    arguments = Asked(login="username= and password=", user_password="username/password",
                      credentials_file="credentials=FILE", credentials="credentials=", keyspace="keyspace=")
    cluster = conn.cluster()
    try:
        with connection_failures(conn.host, conn.port, tls=conn.ssl, keyspaces=conn.settings.keyspaces.active,
                                 asked=arguments):
            session = cluster.connect(keyspace)
    except ConnectionFailed as failed:
        cluster.shutdown()
        raise Error(f"Connection error: {failed}") from None
    return Database(conn, cluster, session, keyspace)


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


class Database:
    """A connected session (see the module doc). Each method raises cqlsh_ext.Error with the shell's
    one line when the statement is refused or fails."""

    def __init__(self, conn: Any, cluster: Any, session: Any, keyspace: str | None) -> None:
        from cassandra import ConsistencyLevel

        self._conn = conn
        self.cluster = cluster
        self.session = session
        self.keyspace = keyspace
        #: The shell's settings (cqlshrc's and the arguments'): how values decode, Keyspaces' options.
        self.config = conn.settings
        # The shell's levels: ONE, or LOCAL_QUORUM on Amazon Keyspaces (which reads at no other).
        self.consistency = ConsistencyLevel.LOCAL_QUORUM if self.config.keyspaces.keyspaces \
            else ConsistencyLevel.ONE

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.cluster.shutdown()

    def context(self, errors: list[str], messages: list[str],
                progress: Progress | None = None) -> ReadContext:
        """A reading's context on this session: nobody to ask (a costly full scan is refused with
        how to confirm it), errors and messages kept, progress as events to `progress`."""
        from cassandra import ConsistencyLevel

        from cqlsh_ext.reading.context import ReadContext, progress_events

        ctx = ReadContext(session=self.session, cluster=self.cluster, host=self._conn.host,
                          keyspace=self.keyspace, consistency=self.consistency,
                          serial_consistency=ConsistencyLevel.SERIAL, settings=self.config,
                          page_size=100, ask=None, say=messages.append, error=errors.append)
        if progress is not None:
            ctx.progress = progress_events(progress)
        return ctx

    # ------------------------------------------------------------ a SELECT

    def query(self, statement: str, progress: Progress | None = None) -> QueryAnswer:
        """The answer of one statement: a payload query's (paths, payload conditions, GROUP BY:
        docs/queries.md), else the server's as written. Read when taken (iterate it, or to_arrow())."""
        from cqlsh_ext.cql.lexer import Lexed
        from cqlsh_ext.reading.select import LABEL, blobs_on_core, payload_plan, read_select
        from cqlsh_ext.reading.statement import read_statement

        errors: list[str] = []
        ctx = self.context(errors, [], progress)
        try:
            lexed = Lexed(statement)
            planned = payload_plan(ctx, lexed, refresh=True)
        except Exception as err:
            raise Error(f"{LABEL}: {one_line(err)}") from None
        try:
            if planned is not None:
                plan, target = planned
                typed = read_select(ctx, plan, target, PAGE_SIZE, FETCH_SIZE,
                                    stored_blobs=blobs_on_core(ctx, target))
            else:
                typed = read_statement(ctx, statement.strip().rstrip(";"), FETCH_SIZE)
        except Error:
            raise
        except Exception as err:
            raise Error(one_line(err)) from None
        if typed is None:
            raise Error(errors[-1] if errors else "the statement answered nothing")
        return QueryAnswer(typed, ctx.display)

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
            raise Error(one_line(err)) from None
        if answer is None:
            raise Error(errors[-1] if errors else "nothing to report")
        return ReportResult(answer, messages)

    def _table(self, text: str, what: str = "table") -> tuple[str | None, str]:
        found = _names(text, (1, 2), what)
        return (None, found[0]) if len(found) == 1 else (found[0], found[1])

    def describe_payload(self, column: str, sample: int | None = None, where: str | None = None,
                         every_row: bool = False, confirm: bool = False,
                         progress: Progress | None = None) -> ReportResult:
        """DESCRIBE PAYLOAD [ks.]table.column [WHERE where] [SAMPLE sample | ALL [CONFIRM]]: the
        places inside the column's payloads, their types and shares (`json_schema()` too)."""
        from cqlsh_ext.describe.parse import LABEL, DescribeStatement
        from cqlsh_ext.describe.run import describe

        found = _names(column, (2, 3), "column")
        keyspace = found[0] if len(found) == 3 else None
        request = DescribeStatement(keyspace, found[-2], found[-1], where, sample=sample, every_row=every_row,
                                    confirm=confirm)

        def read(ctx: ReadContext) -> ReportAnswer | None:
            try:
                return describe(ctx, request)
            except Exception as err:
                if type(err).__name__ == "DescribeError":
                    raise Error(f"{LABEL}: {err}") from None
                raise

        return self._report(read, progress)

    def stats(self, table: str, column: str | None = None, sample: int | None = None,
              confirm: bool = False, progress: Progress | None = None) -> ReportResult:
        """COMPRESSION STATS [SAMPLE sample] [CONFIRM] of a table's payload columns (or one
        `column`): sizes, ratios, codecs and formats of the stored values."""
        from cqlsh_ext.insight.run_stats import stats_answer
        from cqlsh_ext.reading.read_requests import SampleSpec, StatsRequest

        request = StatsRequest(self._target(table, column), SampleSpec(rows=sample) if sample else None,
                               confirm=confirm)
        return self._report(lambda ctx: stats_answer(ctx, request), progress)

    def advise(self, column: str, sample: int | None = None,
               progress: Progress | None = None) -> ReportResult:
        """COMPRESSION ADVISE SELECT column FROM ks.table: what each codec and level would do."""
        from cqlsh_ext.insight.run_advise import advise_answer
        from cqlsh_ext.reading.read_requests import AdviseRequest

        found = _names(column, (2, 3), "column")
        table = ".".join(_spell(name) for name in found[:-1])
        request = AdviseRequest(self._target(table, found[-1]), sample)
        return self._report(lambda ctx: advise_answer(ctx, request), progress)

    def settings(self, table: str, sample: int | None = None) -> ReportResult:
        """COMPRESSION SETTINGS ks.table: the table's compression and compaction, and what a
        sample of its rows says of them."""
        from cqlsh_ext.insight.run_settings import settings_answer
        from cqlsh_ext.reading.read_requests import SettingsRequest

        request = SettingsRequest(*self._table(table), sample)
        return self._report(lambda ctx: settings_answer(ctx, request), None)

    def inspect(self, statement: str) -> list[dict[str, Any]]:
        """INSPECT SELECT ...: each blob value of the SELECT's rows, layer by layer, as data."""
        from cqlsh_ext.insight.run_inspect import inspect_values
        from cqlsh_ext.query.recognize import table_of
        from cqlsh_ext.reading.read_requests import InspectRequest, ReportTarget

        try:
            named = table_of(_lexed(statement))
        except Exception as err:
            raise Error(one_line(err)) from None
        keyspace, table = (named[0], named[1]) if named is not None else (None, None)
        request = InspectRequest(ReportTarget(keyspace, table, statement.strip().rstrip(";")))
        errors: list[str] = []
        found: list[dict[str, Any]] = []

        def take(value: dict[str, Any]) -> bool:
            found.append(value)
            return True

        try:
            seen = inspect_values(self.context(errors, []), request, lambda report: report.to_json(), take)
        except Exception as err:
            raise Error(one_line(err)) from None
        if seen is None:
            raise Error(errors[-1] if errors else "nothing to inspect")
        return found

    # ------------------------------------------------------------ the writes

    def rewrite(self, column: str, spec: str, *, where: str | None = None, allow_filtering: bool = False,
                pace: int | None = None, every_row: bool = False, confirm: bool = False,
                progress: Progress | None = None) -> RewriteResult:
        """COMPRESSION REWRITE column AS 'spec' (docs/rewrite.md): `column` as `ks.table.column` (a
        map's `m['key']`, a UDT's `u.field`), `spec` the target chain ('zstd:3', 'gzip>json',
        'none'), `where` conditions (payload ones need allow_filtering), `pace` write units a
        second, `every_row` a preview of every row. A preview unless confirm=True; then each row is
        journaled and written on the shell's condition, and the result names its journal.
        `progress`: events as a query's, and the write's notes as {"note": line}."""
        from cqlsh_ext.api.writes import rewrite

        return rewrite(self, column, spec, where=where, allow_filtering=allow_filtering, pace=pace,
                       every_row=every_row, confirm=confirm, progress=progress)

    def resume(self, journal: str | os.PathLike[str] | RewriteResult, *,
               confirm: bool = False, progress: Progress | None = None) -> ResumeResult:
        """COMPRESSION REWRITE RESUME 'journal' (docs/rewrite.md): a rewrite stopped part-way (Ctrl-C,
        a kill, a failure) gone on with from its journal (a RewriteResult stands for its journal):
        the work is rebuilt from the journal's sealed request and the token ranges it has not
        finished are read. A preview of those unless confirm=True; then they are rewritten and
        journaled in the same journal. `progress` as db.rewrite's."""
        from cqlsh_ext.api.writes import resume

        return resume(self, journal, confirm=confirm, progress=progress)

    def undo(self, journal: str | os.PathLike[str] | RewriteResult, *, unsealed: bool = False,
             confirm: bool = False, cut: bool = False, progress: Progress | None = None) -> UndoResult:
        """UNDO 'journal' (docs/edit.md): the journal's old values written back where the rows still
        hold what was written (a RewriteResult stands for its journal; a path, the id a journal's
        name ends with, or "LAST"). A preview unless confirm=True; a journal that is not sealed,
        not the user's or tampered with is refused; one without its closing line is written back
        only with cut=True (the rows it holds), an unsealed one only with unsealed=True.
        `progress` as db.rewrite's."""
        from cqlsh_ext.api.writes import undo

        return undo(self, journal, unsealed=unsealed, confirm=confirm, cut=cut, progress=progress)

    def _target(self, table: str, column: str | None) -> Any:
        from cqlsh_ext.reading.read_requests import ReportTarget

        keyspace, name = self._table(table)
        if column is None:
            return ReportTarget(keyspace, name)
        where = f"{_spell(keyspace)}.{_spell(name)}" if keyspace else _spell(name)
        return ReportTarget(keyspace, name, f"SELECT {_spell(column)} FROM {where}", whole_table=True)


def _lexed(text: str) -> Any:
    from cqlsh_ext.cql.lexer import Lexed

    return Lexed(text)


def _names(text: str, parts: tuple[int, ...], what: str) -> list[str]:
    """`ks.table` or `ks.table.column` as the schema spells each name (mcp_server.tools.names)."""
    from cqlsh_ext.mcp_server.tools import Invalid, names

    try:
        return names(text, parts, what)
    except Invalid as err:
        raise Error(str(err)) from None


def _spell(name: str | None) -> str:
    from cqlsh_ext.mcp_server.tools import spell

    return spell(name or "")
