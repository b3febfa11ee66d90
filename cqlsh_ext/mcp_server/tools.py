"""The tools: each a read feature declared once in its package's declared.py (its name, which clients and
docs/mcp.md rely on, title, description, arguments, what it reads, OAuth scope and answer's JSON
Schema), served with MCP's adapter of it here (`ADAPTERS`: its answer function, whether the guard's
screen passes all it answers, whether it writes a file); `TOOLS` is built from the two.
Every statement passes the read-only gate (gate.py) first, the ones a tool writes itself too (the
reports write none: their typed requests, reading.read_requests and describe.parse.DescribeStatement,
are built from the arguments, INSPECT's from the SELECT the gate let through, and handed to the
shell's services as they are); names
given as arguments are read with the shell's lexer and spelt back as CQL names, so an argument
cannot carry a second statement. What the guard read is taken as it is, never read again: a
SELECT's tokens (lexed once), its table and its plan (`Scope`), a `table` argument's names and
table (`Work.named`). Each tool then reads through the one reading (cqlsh_ext.reading, in a context
of the call: nobody to ask, its errors kept, its stop the call's) and answers from the typed answer
it gets (answers.py: rows as JSON values): nothing is printed and read back.

A tool's arguments, title and description are its declaration's, what it runs its adapter's
(`ADAPTERS`); a read feature with none is served by `declared_answer` (its request built by its
feature's declared builder, as the Python API builds it).

Each tool carries its feature's `reads` (features.feature.Reads) and OAuth `scope`, and its
adapter's `screened` and `files`; the guard and the server take these, never a list of tool names.

Every tool takes `max_bytes` (its answer's cap as sent; answers.py keeps to it); query,
inspect_value and describe_payload also take `decode` (column -> spec, for that call only: guard.py
applies it); every call passes guard.py (the policy) around its answer. Each feature declares the
JSON Schema of its answer (features/output_schemas.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.describe.declared import TEXT_SAMPLE_ROWS
from cqlsh_ext.features import read_features, service_of
from cqlsh_ext.features.arguments import Invalid, names
from cqlsh_ext.features.calling import checked, refusal, request_of
from cqlsh_ext.features.feature import FEATURES, Feature, FeatureCall, Reads
from cqlsh_ext.insight.declared import INSPECT_VALUES
from cqlsh_ext.mcp_server import answers, bounds, gate, schema_check, sizing
from cqlsh_ext.mcp_server.answers import Screen, ToolAnswer, failed
from cqlsh_ext.payload_select.declared import DEFAULT_ROWS, MAX_ROWS

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.describe.parse import DescribeStatement
    from cqlsh_ext.mcp_server.connection import Served
    from cqlsh_ext.mcp_server.cursor import Cursors, CursorState
    from cqlsh_ext.mcp_server.exports import ExportDir
    from cqlsh_ext.mcp_server.policy import Pattern
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.reading.typed import ReportAnswer, TypedAnswer

#: An answer's cap by default, in bytes of the message that carries it (`cqlsh-ext mcp
#: --max-bytes`, a call's `max_bytes`), and the most a call may ask for.
DEFAULT_BYTES = sizing.DEFAULT_ANSWER_BYTES
MIN_BYTES, MAX_BYTES = 1024, 1 << 20


@dataclass(frozen=True)
class Caps:
    """A statement's own LIMIT and PER PARTITION LIMIT (None: none), where the screen leaves rows out:
    taken off what the server is sent, applied after the screen (answers.Screen.limit, the screen's
    `row`), the partitions told apart by `partition_key`'s values."""

    limit: int | None = None
    per_partition: int | None = None
    partition_key: tuple[str, ...] = ()


@dataclass
class Scope:
    """What a call reads, once the guard (guard.py) has looked, taken by the tool as it is rather
    than read again (Work.scope): its table and the patterns reaching into it, and for a SELECT,
    each result name -> the place below the table it reads (None: no value of the table's, an
    aggregate the patterns leave alone)."""

    keyspace: str | None = None
    table: str | None = None
    patterns: tuple[Pattern, ...] = ()
    places: dict[str, Sequence[str] | None] = field(default_factory=dict)
    columns: frozenset[str] = frozenset()
    #: A SELECT's reading by the payload parser (query.grammar.Plan, plain=True), when it reads it.
    plan: Any = None
    #: The table as the reading finds it.
    target: TableTarget | None = None
    #: A SELECT lexed once (the whole text given; query.grammar's plan is of its first statement),
    #: for the tool to take as it is, its table and plan with it (Work.admitted).
    lexed: Lexed | None = None
    #: A system table whose rows name keyspaces and tables the policy hides: its rows naming one
    #: are left out (guard.Guard.screen_of).
    hiding: bool = False
    #: Where it is hiding, a SELECT's statement as the server is sent it: without its own LIMIT and
    #: PER PARTITION LIMIT (`caps`, applied after the screen); None: as given.
    sent: Lexed | None = None
    caps: Caps = field(default_factory=Caps)


@dataclass
class Work:
    """What a tool runs with: what the connection serves (`served`, connection.Served: the
    reading's context of the shell's session, keyspace, levels and settings), the call's stop flag
    (cancelled, out of time), the answer's cap (`max_bytes`), the server's cursors; what the
    guard does to each row, value and report before anything measures or sends it (`screen`);
    whom the reading's progress is told (`on_progress`: the client, when it asked) and the last
    of it (`seen`); what the call's reading said (`said`) and its errors, kept as data."""

    served: Served
    stop: threading.Event
    max_bytes: int = DEFAULT_BYTES
    said: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cursors: Cursors | None = None
    screen: Screen = field(default_factory=Screen)
    on_progress: Callable[[dict[str, Any]], None] | None = None
    seen: dict[str, Any] = field(default_factory=dict)
    #: What the guard read of the call (its statement lexed, planned, its table resolved with a
    #: refresh), once it has looked: taken as it is by the tool (`admitted`, `named`).
    scope: Scope | None = None
    #: The export tool's directory (None: the server has none, and no export tool).
    exports: ExportDir | None = None
    #: The client that called: the cursors it is given, and those it may give, are its own.
    owner: bytes = b""

    def context(self) -> ReadContext:
        """The call's reading context: the shell's session and settings; nobody to ask (a costly
        full scan is refused with how to confirm it); messages and errors kept; progress as
        events (kept, and told to the client when it asked); the call's stop."""
        from dataclasses import replace

        from cqlsh_ext.reading.context import progress_events

        return replace(self.served.context, ask=None, say=self.said.append, error=self.errors.append,
                       progress=progress_events(self._progressed, every=0.0), stop=self.stop,
                       interactive=False, width=0)

    def admitted(self, text: str) -> Scope | None:
        """The guard's reading of the call's statement when it is `text`, else None."""
        scope = self.scope
        return scope if scope is not None and scope.lexed is not None and scope.lexed.text == text else None

    def named(self) -> tuple[str, str] | None:
        """The table the guard read and resolved (keyspace, table), if it did."""
        scope = self.scope
        if scope is None or scope.keyspace is None or scope.table is None:
            return None
        return scope.keyspace, scope.table

    def _progressed(self, event: dict[str, Any]) -> None:
        if self.screen.hides:  # its rows read count those the policy leaves out
            return
        if "rows" in event:
            self.seen = event
        if self.on_progress is not None:
            self.on_progress(event)

    def rows(self, text: str, limit: int, key: str = "rows", resume: CursorState | None = None) -> ToolAnswer:
        """The rows of `text`, one SELECT: a payload query's answer, else the server's; `resume`:
        go on where a cursor says. The guard's reading of it (`admitted`) is taken as it is."""
        from cqlsh_ext.render.json_lines import JsonRows

        admitted = self.admitted(text)
        allowed = gate.read(text, {gate.SELECT}, admitted.lexed if admitted is not None else None)
        if admitted is not None and admitted.sent is not None:
            allowed = gate.read(admitted.sent.text, {gate.SELECT}, admitted.sent)
        ctx = self.context()
        ctx.in_order = True  # its answer, cut by the call's caps, goes on from its rows (a cursor)
        skip = before = 0
        if resume is not None:
            skip, before = _count(resume.extra.get("skip")), _count(resume.extra.get("answered"))
        # The first page at cqlsh's size (a time limit still answers what it read), those after it
        # grown to hold the rest the call may answer: a call of 1,000 small rows is 2 requests, not 11.
        ctx.wanted_rows = skip + limit + 1
        try:
            found = select_answer(ctx, allowed, resume.paging_state if resume else None, before - skip,
                                  resume is not None, admitted)
        except Refusal as err:
            return failed(str(err), self.said)
        if found is None:
            return failed(" ".join(self.errors) or "the statement answered nothing", self.said)
        answer, places, why_not = found
        spelling = JsonRows(answer.columns, ctx.display, places)
        # A cursor is bound to its tokens.
        whole = admitted.lexed if admitted is not None and admitted.lexed is not None else text
        continuation = answers.Continuation(self.cursors, whole, why_not, skip, before, self.owner)
        return answers.rows(text, answer, spelling, limit, self.max_bytes, self.said, self.errors,
                            self.screen, continuation, key)

def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class Refusal(Exception):
    """A statement the reading refuses before reading (one line, as the shell says it)."""


def select_answer(ctx: ReadContext, allowed: gate.ReadStatement, paging_state: bytes | None = None,
                  given: int = 0, resuming: bool = False, admitted: Scope | None = None,
                  ) -> tuple[TypedAnswer, list[Any], str | None] | None:
    """The typed answer of the SELECT the gate let through, where each column's values sit, and
    why a cut answer of it cannot be gone on with (None: a cursor can): a payload query's
    (reading.select), else the server's as it is written (reading.statement); from `paging_state`
    when `resuming` (`given` rows answered before its page). `admitted`: the guard's table and plan
    of it, taken as they are. None when the server refused it (ctx.error said so). Raises Refusal."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.reading.resolve import statement_table
    from cqlsh_ext.reading.select import LABEL, read_select, reads_in_order, resumable
    from cqlsh_ext.reading.statement import read_statement

    statement = allowed.lexed
    try:
        planned = _planned(ctx, statement, admitted)
        if planned is not None:
            plan, target = planned
            why_not = resumable(plan, reads_in_order(ctx))
            if resuming and why_not is not None:
                raise Refusal(f"refused: this statement's answer cannot be continued ({why_not})")
            answer = read_select(ctx, plan, target, paging_state=paging_state, given=max(0, given))
            if answer is None:
                return None
            return answer, [target.place(name) for name in answer.names], why_not
    except QueryError as err:
        raise Refusal(f"{LABEL}: {err}") from None
    table = admitted.target if admitted is not None and admitted.target is not None else \
        statement_table(ctx.cluster, ctx.keyspace, statement)[1]
    plain = read_statement(ctx, allowed.text, paging_state=paging_state, table=table)
    if plain is None:
        return None
    return plain, plain.places, None


def _planned(ctx: ReadContext, statement: Lexed,
             admitted: Scope | None) -> tuple[Plan, TableTarget] | None:
    """reading.select.payload_plan of the statement, from the guard's plan and table where it read
    them (its plan read with plain=True: a payload query's when it reaches into a payload);
    raises QueryError as payload_plan does."""
    from cqlsh_ext.query.grammar import reaches_payload
    from cqlsh_ext.query.recognize import may_reach_payload
    from cqlsh_ext.reading.select import payload_plan

    if admitted is None or admitted.plan is None or admitted.target is None:
        return payload_plan(ctx, statement, refresh=True)  # not read by the guard, or refused by its parse
    if not may_reach_payload(statement) or not reaches_payload(admitted.plan):
        return None
    return admitted.plan, admitted.target


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    #: Each argument's JSON Schema.
    arguments: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    answer: Callable[[Work, dict[str, Any]], ToolAnswer]
    #: The JSON Schema of its answer's structured content (output_schemas.py).
    output_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    #: The OAuth scope a token must carry to call it over HTTP (oauth.py): READ or REPORT. None:
    #: it declares none, and no token may call it.
    scope: str | None = None
    #: What its description leaves out (tools/list stays small): its document says it (document()).
    details: str = ""
    #: What it reads (the guard's scope comes from it); None: undeclared, and every call refused.
    reads: Reads | None = None
    #: Whether all it answers passes the guard's Screen (answers.Screen: the policy's redaction).
    #: A tool whose answer does not (a file written whole) is refused on a table with redacted values.
    screened: bool = True
    #: It writes its answer as a file into the export directory (exports.py): served only by a
    #: server that has one, and not idempotent (each call writes a file).
    files: bool = False
    #: Every row of a table it answers passes the screen's `row`, the statement's own LIMIT after it
    #: (Work.rows), or it answers from no row it reads (describe_table, where the screen hides rows):
    #: the only tools the guard lets read a system table whose rows may name a table the policy hides.
    screens_rows: bool = False
    #: Each argument's one-line doc (its declaration's), said in its document where tools/list does not.
    docs: dict[str, str] = field(default_factory=dict)
    #: The feature it serves: every call's arguments are checked against its declaration
    #: (features.calling.checked, as the shell's and the API's are) before the guard reads them.
    feature: Feature | None = None

    def input_schema(self) -> dict[str, Any]:
        properties = {**self.arguments, "max_bytes": _MAX_BYTES}
        return {"type": "object", "properties": properties, "required": list(self.required),
                "additionalProperties": False}

    def document(self) -> str:
        """Its full description, as its resource answers it (Markdown): the description, the
        details, each argument."""
        lines = [f"# {self.name}: {self.title}", "", self.description, ""]
        if self.details:
            lines += [self.details, ""]
        lines.append("Arguments:")
        for name, schema in self.input_schema()["properties"].items():
            kind = schema.get("type", "any")
            if "minimum" in schema:
                kind += f", {schema['minimum']:,} to {schema['maximum']:,}" if "maximum" in schema else \
                        f", at least {schema['minimum']:,}"
            said = schema.get("description") or {**self.docs, "max_bytes": MAX_BYTES_DOC}.get(name, "")
            needed = ", required" if name in self.required else ""
            lines.append(f"- {name} ({kind}{needed}): {said}")
        return "\n".join(lines) + "\n"

    def call(self, work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        """The answer to a call; a bad argument or a refused statement is an error answer. Its
        arguments (but MCP's own `max_bytes`) are checked against its feature's declaration, as every
        front end checks a call (features.calling.checked, in its words), and all of them held to the
        input schema it declares (schema_check: a JSON null, refused first, is no argument left
        out; an object's entries and their count; no argument it does not name)."""
        given, arguments = arguments, dict(arguments)
        schema = self.input_schema()
        try:
            why = schema_check.null_refusal(self.name, schema, given)
            if why is not None:  # a null is no argument left out: said as itself, first
                raise Invalid(why)
            cap = number(arguments, "max_bytes", work.max_bytes, MIN_BYTES, MAX_BYTES)
            arguments.pop("max_bytes", None)
            if self.feature is not None:  # (its words first: every door's, for what it declares)
                checked(self.feature, {name: value for name, value in arguments.items() if value is not None})
                _bounded(self.feature, arguments)
            else:  # a tool made without a declaration (a test's)
                _undeclared(self, arguments)
            why = schema_check.refusal(self.name, schema, given)
            if why is not None:  # a null, an object's entries, what the declaration does not say
                raise Invalid(why)
            work.max_bytes = cap or DEFAULT_BYTES
            return self.answer(work, arguments)
        except (Invalid, gate.Refused) as err:
            return failed(str(err))


def _bounded(feature: Feature, arguments: dict[str, Any]) -> None:
    """Each argument its declaration says holds conditions (Argument.conditions: DESCRIBE PAYLOAD's
    where) bounded as a statement is (bounds.check_tokens), before any parser reads it."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    for argument in feature.arguments:
        value = arguments.get(argument.name)
        if not argument.conditions or not isinstance(value, str) or not value.strip():
            continue
        try:
            bounds.check_tokens(Lexed(value).tokens)
        except QueryError as err:
            raise Invalid(f"syntax error in {argument.name}: {err}") from None
        except bounds.TooLarge as err:
            raise Invalid(str(err)) from None


def _undeclared(tool: Tool, arguments: dict[str, Any]) -> None:
    """A call of a tool that declares no feature: its arguments' names and the required ones."""
    unknown = sorted(set(arguments) - set(tool.arguments))
    if unknown:
        raise Invalid(f"{tool.name} takes no argument {', '.join(unknown)} "
                      f"(it takes {', '.join([*tool.arguments, 'max_bytes'])})")
    missing = [name for name in tool.required if arguments.get(name) in (None, "")]
    if missing:
        raise Invalid(f"{tool.name} needs {', '.join(missing)}")


# ------------------------------------------------------------------------------------- arguments


def number(arguments: dict[str, Any], name: str, default: int | None, low: int, high: int) -> int | None:
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid(f"{name} must be a whole number from {low:,} to {high:,}, not {value!r}")
    return value


def table_of(work: Work, given: Any) -> tuple[str, str]:
    """(keyspace, table) of a `table` argument; a table alone is in the shell's keyspace (-k). The
    guard's reading of it (`work.named`) when it read it."""
    named = work.named()
    if named is not None:
        return named
    found = names(given, (1, 2), "table")
    if len(found) == 1:
        keyspace = work.served.context.keyspace
        if keyspace is None:
            raise Invalid("table must be keyspace.table (no keyspace is in use: -k names one)")
        return keyspace, found[0]
    return found[0], found[1]


def statement_of(arguments: dict[str, Any]) -> str:
    statement = arguments.get("statement")
    if not isinstance(statement, str):
        raise Invalid("statement must be a string: one SELECT")
    return statement


# ------------------------------------------------------------------------------------- the tools


def _list_keyspaces(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    statement = "SELECT keyspace_name FROM system_schema.keyspaces"
    return work.rows(statement, MAX_ROWS, resume=_resume(work, arguments, statement))


def _list_tables(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    keyspace = names(arguments.get("keyspace"), (1,), "keyspace")[0]
    literal = "'" + keyspace.replace("'", "''") + "'"
    statement = f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = {literal}"
    return work.rows(statement, MAX_ROWS, resume=_resume(work, arguments, statement))


def _query(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    statement = statement_of(arguments)
    limit = arguments.get("limit", DEFAULT_ROWS)  # within its declared bounds (Tool.call checked it)
    return work.rows(statement, limit, resume=_resume(work, arguments, statement))


def _resume(work: Work, arguments: dict[str, Any], statement: str) -> CursorState | None:
    """Where the call's `cursor` says `statement`'s reading goes on from; None without one."""
    from cqlsh_ext.mcp_server.cursor import CursorError

    cursor = arguments.get("cursor")
    if cursor is None:
        return None
    if work.cursors is None:
        raise Invalid("this server issues no cursors")
    admitted = work.admitted(statement)
    given = admitted.lexed if admitted is not None and admitted.lexed is not None else statement
    try:
        return work.cursors.open(cursor, given, owner=work.owner)
    except CursorError as err:
        raise Invalid(f"refused: cursor: {err}") from None


def _inspect_value(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    from cqlsh_ext.query.recognize import table_of as select_table
    from cqlsh_ext.reading.resolve import find_table

    given = statement_of(arguments)
    admitted = work.admitted(given)
    allowed = gate.read(given, {gate.SELECT}, admitted.lexed if admitted is not None else None)  # one SELECT
    select = allowed.text
    text = f"INSPECT {select}"
    ctx = work.context()
    # The table as the guard resolved it (a table made a moment ago: the driver asked again);
    # else as the SELECT names it, looked up here.
    found = admitted.target if admitted is not None else None
    named = (found.keyspace, found.name) if found is not None else select_table(allowed.lexed)
    if found is None and named is not None:
        found = find_table(ctx.cluster, ctx.keyspace, *named, refresh=True)
    request = request_of(FEATURES["inspect_value"], FeatureCall({"statement": select}, named, found,
                                                                 select=allowed.lexed))
    taker = answers.Taker("values", INSPECT_VALUES, work.max_bytes, {"statement": sizing.prefix(text)},
                          f"INSPECT answers at most {INSPECT_VALUES} values: name fewer in the SELECT")
    seen = service_of("inspect_value")(ctx, request, lambda report: jsonenc.loaded(report.to_json()),
                          lambda value: taker.take(work.screen.value(value)))
    if seen is None:
        return failed(" ".join(work.errors) or "nothing to inspect", work.said)
    notes = list(work.said)
    if seen.interrupted:
        notes.append("INSPECT interrupted")
    return taker.finish({"notes": notes})


def _describe_payload(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    """DESCRIBE PAYLOAD's answer as every declared report's (`declared_answer`), and what MCP adds: with
    json_schema, the values' JSON Schema instead of the report (MCP's answer shape: the API's is
    ReportResult.json_schema(), and its method takes no json_schema)."""
    answer = declared_answer(FEATURES["describe_payload"], work, arguments)
    if arguments.get("json_schema") and answer.data is not None:
        from cqlsh_ext.describe.json_schema import schema_answer

        answer.data = schema_answer(answer.data)
    return answer


def describe_reader(ctx: ReadContext, request: DescribeStatement) -> ReportAnswer | None:
    """DESCRIBE PAYLOAD's report (describe.run.describe: its refusals said by ctx.error) of the request:
    the guard's diagnose reads it here, so that the guard names no tool."""
    answered: ReportAnswer | None = service_of("describe_payload")(ctx, request)
    return answered


def declared_answer(feature: Feature, work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    """The answer of a feature MCP adds nothing of its own to (cqlsh-ext's reports, a package's read
    features): the arguments the guard admitted (Tool.call checked them against the declaration),
    into the request its declared builder makes (features.calling.request_of, as the shell's and the
    API's are; else a features.feature.FeatureCall, a package's service's), with the table it reads
    as the guard read it (not resolved again), handed to its service in the call's context; its
    report answered as every report is. Never ADVISE's SAVE DICTIONARY: that writes a file on the
    server's host (no request built from arguments asks for it)."""
    from cqlsh_ext.cql.errors import QueryError

    table = found = None
    if feature.reads.what == "table" and feature.reads.argument is not None:
        table = table_of(work, arguments.get(feature.reads.argument))
        _known(work, *table)
        found = work.scope.target if work.scope is not None and work.named() == table else None
    request = request_of(feature, FeatureCall(arguments, table, found, bound=_statement_bound))
    try:
        answer = service_of(feature.name)(work.context(), request)
    except QueryError as err:  # its refusal: one line, as every front end says it (no fault of ours)
        return failed(refusal(feature, err))
    if isinstance(answer, Mapping):  # its declared fields as data (propose_edit's proposal), screened
        data = jsonenc.loaded(work.screen.report({**answer, "notes": list(work.said)}))
        return ToolAnswer(data=data, cap=work.max_bytes, fitting=answers.cut_lists)
    return answers.report(answer, work.max_bytes, work.said, work.errors, work.screen)


def _statement_bound(lexed: Lexed) -> None:
    """MCP's bound on a statement a service spells from a call's arguments (FeatureCall.bound): its
    tokens and how deep its brackets nest (bounds.check_tokens), as the gate bounds a statement given."""
    from cqlsh_ext.cql.errors import QueryError

    try:
        bounds.check_tokens(lexed.tokens)
    except bounds.TooLarge as err:
        raise QueryError(str(err)) from None


def _export(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    """The SELECT's answer written into the export directory by the shell's own export (the file
    COPY (SELECT ...) TO writes: 0600 here, and stopped at the directory's cap while it is written),
    answered with a link to read it back, by this client alone (exports.py). No line of the answer
    names the directory: the file's name, or its URI."""
    import datetime

    from cqlsh_ext.export.parse import ExportStatement
    from cqlsh_ext.export.target import PrivateFile
    from cqlsh_ext.mcp_server.exports import CAP_NAME, FORMATS, ExportRefused

    exports = work.exports
    if exports is None:
        raise Invalid("this server has no export directory (cqlsh-ext mcp --export-dir)")
    fmt = arguments.get("format", next(iter(FORMATS)))
    if fmt not in FORMATS:
        from cqlsh_ext.common.file_formats import listed

        raise Invalid(f"format must be {listed(FORMATS)}, not {fmt!r}")
    given = statement_of(arguments)
    admitted = work.admitted(given)
    allowed = gate.read(given, {gate.SELECT}, admitted.lexed if admitted is not None else None)
    exports.sweep()
    name = exports.new_name(fmt)
    statement = ExportStatement(allowed.text, allowed.lexed, str(exports.file(name)), fmt)
    private = PrivateFile(exports.max_bytes, CAP_NAME, exports.descriptor)
    written = service_of("export")(work.context(), statement, private)
    notes = [exports.without_directory(line) for line in work.said]
    if written is None:
        return failed(exports.without_directory(" ".join(work.errors)) or "nothing was exported", notes)
    exports.made(name, work.owner)
    try:
        file = exports.written(name, work.owner)
    except ExportRefused as err:  # replaced since it was written
        return failed(str(err), notes)
    size = file.st_size
    if name in exports.sweep(keep=name):  # older than the directory keeps files, once written
        return failed(f"the export's file ({size:,} bytes) was removed once written: the export directory "
                      f"keeps files {exports.max_age:g} s (mcp_export_max_age)", notes)
    uri, mime = exports.uri(name), FORMATS[fmt][1]
    expires = datetime.datetime.fromtimestamp(exports.expires(file), datetime.timezone.utc)
    data: dict[str, Any] = {"statement": sizing.prefix(allowed.text), "uri": uri, "mimeType": mime,
                            "format": fmt, "size": size, "rows": written.rows,
                            "expires": expires.isoformat(timespec="seconds"),
                            "notes": [*notes, exports.without_directory(written.line)]}
    link = {"uri": uri, "name": name, "mimeType": mime, "size": size,
            "description": f"{written.rows:,} rows of {sizing.prefix(allowed.text)} ({fmt}); "
                           f"resources/read answers it in chunks of at most the answer's cap"}
    return ToolAnswer(data=data, cap=work.max_bytes, fitting=answers.cut_lists, links=[link])


def _known(work: Work, keyspace: str, table: str) -> None:
    """A table made a moment ago, which the driver learns of by an event, asked of the server (the
    guard did, when it read the table: `work.named`)."""
    from cqlsh_ext.reading.resolve import find_table

    if work.named() == (keyspace, table):
        return
    find_table(work.served.context.cluster, keyspace, keyspace, table, refresh=True)


def _describe_table(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
    from cqlsh_ext.mcp_server.table_columns import columns, table_cql
    from cqlsh_ext.reading.resolve import find_table

    keyspace, table = table_of(work, arguments.get("table"))
    ctx = work.context()
    target = find_table(ctx.cluster, keyspace, keyspace, table, refresh=True)
    if target is None or target.view:
        return failed(f"no table {keyspace}.{table}", work.said)
    cql = table_cql(ctx, target, _server_major(work.served.versions), work.screen.hidden_table)
    if cql is None:
        return failed(" ".join(work.errors) or f"no table {keyspace}.{table}", work.said)
    # A system table's rows naming tables the policy hides: its sample would read them.
    hides = work.screen.hides
    try:
        described = columns(ctx, target, 0 if hides else TEXT_SAMPLE_ROWS)
    except LookupError as err:
        return failed(str(err), work.said)
    said = [*work.said, *([UNSAMPLED] if hides else [])]
    data = {"table": f"{keyspace}.{table}", "cql": cql, "columns": described, "notes": said}
    return ToolAnswer(data=data, cap=work.max_bytes, fitting=answers.cut_lists)


#: What describe_table says of a table whose rows may name a table the policy hides.
UNSAMPLED = ("no value of its text columns was read to tell JSON text: its rows name tables, and the policy "
             "hides some")


def _server_major(versions: dict[str, Any]) -> int:
    """The server's major release (of cqlsh's connection_versions): DESCRIBE is the server's from 4."""
    build = str(versions.get("build", "4"))
    head = build.split(".", 1)[0]
    return int(head) if head.isdigit() else 4



#: `max_bytes`: its range is not in tools/list's schema (36 bytes a tool would take tools/list past
#: sizing.LIST_BYTES); its document says it, and a call outside it is refused in words that say it
#: (Tool.call's `number`).
_MAX_BYTES = {"type": "integer"}
#: What `max_bytes` is (every tool's description names it; its tool's document says it).
MAX_BYTES_DOC = (f"the answer's bytes as sent at most, {MIN_BYTES:,} to {MAX_BYTES:,} "
                 f"(default {DEFAULT_BYTES:,})")
#: What every description ends with: the size of an answer (tools/list, which every client reads
#: whole, stays within sizing.LIST_BYTES: a few words).
_SIZE = f" Max {DEFAULT_BYTES // 1000} KB (max_bytes)."
#: What every document ends with: what a cut says.
_CUT = (" Every answer says whether a cap cut it (truncated: false, or the caps that did) and where it "
        "stopped (cut, values_cut, cursor); long values are cut inside it.")


@dataclass(frozen=True)
class Adapter:
    """What MCP adds to a read feature's declaration (its package's declared.py): its answer function (the
    arguments into the feature's request, its service in the call's context, the answer kept to its
    cap), whether all it answers passes the guard's screen, whether it writes a file, whether each
    row it answers passes the screen's `row` (screens_rows)."""

    #: None: its declaration's (`declared_answer`), the adapter carrying MCP's flags alone.
    answer: Callable[[Work, dict[str, Any]], ToolAnswer] | None = None
    screened: bool = True
    files: bool = False
    #: Tool.screens_rows.
    screens_rows: bool = False


ADAPTERS: dict[str, Adapter] = {
    "list_keyspaces": Adapter(_list_keyspaces, screens_rows=True),
    "list_tables": Adapter(_list_tables, screens_rows=True),
    "describe_table": Adapter(_describe_table, screens_rows=True),
    "query": Adapter(_query, screens_rows=True),
    "describe_payload": Adapter(_describe_payload), "inspect_value": Adapter(_inspect_value),
    "export": Adapter(_export, screened=False, files=True),
    # Its answer shows values: refused on a table whose values the policy redacts. The rest is its
    # declaration's (`declared_answer`: edit.run.propose_call, the statement bounded by MCP's bound).
    "propose_edit": Adapter(screened=False),
}


def declared_tool(feature: Feature, adapter: Adapter) -> Tool:
    """The MCP tool of a declared feature: its declaration's name, title, arguments (their JSON
    Schemas; the one-line docs tools/list leaves out in its document), what it reads and its scope;
    its description and details with what an answer's cap says; the adapter's answer. tools/list,
    which every client reads whole (and some hand to the model), stays within sizing.LIST_BYTES: a
    feature's long words go in its `details`, served as its resource (resources.tool_uri)."""
    answer = adapter.answer if adapter.answer is not None else _answer_of(feature)
    return Tool(feature.name, feature.title, feature.description + _SIZE,
                {argument.name: argument.schema() for argument in feature.arguments}, feature.required,
                answer, feature.output_schema, scope=feature.scope,
                details=feature.details + _CUT if feature.details else "", reads=feature.reads,
                screened=adapter.screened, files=adapter.files, screens_rows=adapter.screens_rows,
                docs={argument.name: argument.doc for argument in feature.arguments}, feature=feature)


def declared_adapter(feature: Feature) -> Adapter:
    """The adapter of a feature MCP has none of its own for (`ADAPTERS`): `declared_answer`."""
    return Adapter(_answer_of(feature))


def _answer_of(feature: Feature) -> Callable[[Work, dict[str, Any]], ToolAnswer]:
    """`declared_answer` of the feature, which declares its service."""
    if feature.service is None:
        raise ValueError(f"{feature.name} declares no service, and MCP has no adapter of it")
    return lambda work, arguments: declared_answer(feature, work, arguments)


def served_tools() -> dict[str, Tool]:
    """Every declared read feature as its tool (in declaration order), with MCP's adapter of it. No
    write feature is a tool: propose_edit proposes a write for a person to run."""
    return {name: declared_tool(feature, ADAPTERS.get(name) or declared_adapter(feature))
            for name, feature in read_features().items()}


TOOLS: dict[str, Tool] = served_tools()
