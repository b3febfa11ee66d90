"""What each call passes on the shell's thread, around its tool's own answer (tools.py): the policy
(policy.py), the names it reads made sure of, the call's `decode` argument, and its answer made fit
to leave (redact.py, hints.py). What a call reads is what its tool declares with itself
(features.feature.Reads: a statement, a table, a column, a keyspace, the keyspaces, nothing), never a list of
tool names here: a tool that declares nothing is refused, never admitted with an empty Scope.

Before the statement runs:
- every keyspace and table it names: not one the policy refuses (the tables of credentials among
  them: no spelling gets through, since a keyspace refused whole is refused wherever its name is a
  token of the statement; the tables of system keyspaces but those it allows, wherever a
  `keyspace.table` of one is in the statement as the shell's lexer reads it, whose tokens' text
  the server is sent), and one the schema has (a missing keyspace or table says so);
- a SELECT (a tool that reads a `statement`) lexed once here, its table resolved and read by the payload
  parser (plain=True) once: the tool takes them as they are (Work.admitted); and
  prepared on the server once (features.read_rule.server_tables): a table its metadata names that
  the policy refuses or hides, or that is not the table read here, is refused;
- on a table the policy redacts values of: its conditions, groups, order, aggregates and DISTINCT
  touch no redacted value (a filter on one would tell it; DISTINCT tells which of them are equal),
  read with the payload parser itself (query.grammar, plain=True); a statement it cannot read is
  refused when a redacted column's name sits anywhere but in the plain list of what it selects
  (anywhere at all after DISTINCT);
- `decode` ({"data": "deflate"}): column settings for this call only; a spec naming a schema file
  takes only files the server was started with (`--schema-file`, the start-up column settings),
  checked before any file is looked at.
- a SELECT of a system table whose rows name keyspaces and tables (`keyspace_name`, `table_name`,
  `view_name`: system_schema's, the size estimates, an allow-listed one keyed so): where the policy
  file may hide a table of the keyspaces it reads (its WHERE's keyspace_name, else any), it is read
  with the columns that name them (selected, or *), rows kept as they are (no aggregate, DISTINCT,
  GROUP BY or payload path), else refused: the rows naming a hidden table are then left out
  (`_hiding`), and its own LIMIT and PER PARTITION LIMIT are taken off what the server is sent and
  applied to the rows left (Caps): the server would count the rows left out, and its answer would
  then tell, one question at a time, what they name. Only a tool each row of whose answer passes
  the screen (Tool.screens_rows) reads such a table, through a statement or by its name; a system
  table naming tables in a form the screen does not read (a list of names, a table's id) is not
  read at all while the policy hides a table.
While it runs, before anything measures or sends a row, an INSPECT value or a report
(answers.Screen, set on the call's Work): redacted values replaced, the tables and keyspaces the
policy hides left out of lists and of the system tables' rows (denied means absent: no answer
names or counts them, the reading's counts and progress included), `count` spelt as for a plain
SELECT.
After: hints naming what the assistant can do (hints.py) in its prose; a query that answered
nothing diagnosed (diagnose.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.system import is_system_keyspace
from cqlsh_ext.mcp_server import diagnose, hints, redact
from cqlsh_ext.mcp_server.answers import Screen, SpeltRow, ToolAnswer, failed
from cqlsh_ext.mcp_server.gate import READER, Refused
from cqlsh_ext.mcp_server.policy import Policy
from cqlsh_ext.mcp_server.tools import Caps, Scope

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.mcp_server.tools import Tool, Work
    from cqlsh_ext.reading.resolve import TableTarget

#: The columns of a system table whose rows are of a keyspace (the first of them it has), and of a
#: table or view of it (system_distributed's and the older system tables' own: ks_name,
#: columnfamily_name).
KEYSPACE_COLUMNS = ("keyspace_name", "ks_name")
TABLE_COLUMNS = ("table_name", "view_name", "columnfamily_name", "base_table_name")
#: Those of them a statement selects for its rows to be screened (a view's base table is known
#: from the driver's schema too).
SELECTED_NAMES = TABLE_COLUMNS[:3]
#: Columns that name tables in a form the screen does not read: lists of names (system_views'
#: repairs, system_distributed's parent repairs) and a table's id (system.paxos's cf_id, whose rows
#: are another table's mutations). A system table with one is not read while the policy hides a table.
UNSCREENED_NAMES = ("table_names", "columnfamily_names", "tables", "cf_id")


@dataclass
class Guard:
    policy: Policy
    #: Schema files a decode spec may name (as given, expanded and absolute).
    schema_files: tuple[str, ...] = ()
    _startup_files: set[str] | None = None

    def wrap(self, tool: Tool) -> Tool:
        """`tool` with its answer guarded."""

        def answer(work: Work, arguments: dict[str, Any]) -> ToolAnswer:
            return self.answer(tool, work, arguments)

        return replace(tool, answer=answer)

    def answer(self, tool: Tool, work: Work, arguments: dict[str, Any]) -> ToolAnswer:
        from cqlsh_ext.features.arguments import Invalid

        arguments = dict(arguments)
        decode = arguments.pop("decode", None)
        try:
            scope = self.admit(tool, work, arguments)
            if scope.patterns and not tool.screened:
                raise Refused(f"refused: the policy ({self.policy.source}) redacts values of "
                              f"{scope.keyspace}.{scope.table}, and {tool.name} answers values no "
                              "redaction passes over: use query")
            work.screen = self.screen_of(tool, scope, work.served.context.cluster)
            work.scope = scope
            with self.decoding(work.served.context.display.columns, scope, decode):
                answer = tool.answer(work, arguments)
        except (Refused, Invalid) as err:
            return failed(self._meant(work, str(err)))
        if scope.plan is not None and not work.stop.is_set() and _nothing(answer):
            assert answer.data is not None
            mismatch = diagnose.type_mismatch(work, scope.keyspace, scope.table, scope.plan,
                                              answer.data.get("reading"), self._describe(scope))
            if mismatch is not None:
                answer = ToolAnswer(error=mismatch, notes=answer.notes + _notes(answer), cap=answer.cap)
        return self.after(work, answer)

    def _describe(self, scope: Scope) -> Any:
        """How diagnose reads a column's paths: DESCRIBE PAYLOAD's figures on a sample, its values
        redacted (the typed report, never sent)."""

        def describe(work: Work, column: str, sample: int) -> dict[str, Any] | None:
            from cqlsh_ext.describe.parse import DescribeStatement
            from cqlsh_ext.mcp_server.tools import describe_reader

            assert scope.keyspace is not None and scope.table is not None
            request = DescribeStatement(scope.keyspace, scope.table, column, sample=sample)
            report = describe_reader(work.context(), request)
            if report is None:
                return None
            return redact.payload_report(scope.patterns, scope.keyspace, scope.table, report.data())

        return describe

    # ------------------------------------------------------------------------------ before

    def admit(self, tool: Tool, work: Work, arguments: dict[str, Any]) -> Scope:
        """The call's Scope, from what its tool declares it reads (features.feature.Reads); raises Refused (a
        tool that declares nothing of it among them: never admitted with an empty Scope), or
        features.arguments.Invalid for an argument it cannot read."""
        from cqlsh_ext.cql.spelling import spell
        from cqlsh_ext.features.arguments import names
        from cqlsh_ext.mcp_server import tools

        reads = tool.reads
        if reads is None:
            raise Refused(f"refused: the tool {tool.name} declares nothing of what it reads (Reads), "
                          "and the guard admits no call it cannot scope")
        given = arguments.get(reads.argument) if reads.argument is not None else None
        if reads.what == "statement":
            scope = self._statement(work, tools.statement_of({"statement": given}))
            if scope.hiding and not tool.screens_rows:
                raise Refused(self._unscreened(tool, scope))
            return scope
        if reads.what == "column":
            keyspace, table, column = names(given, (3,), "column")
            scope = self._table(work, keyspace, table)
            self._named_rows(tool, scope)
            where = arguments.get("where")
            if isinstance(where, str) and where.strip() and scope.patterns:
                self._statement(work, f"SELECT {spell(column)} FROM {spell(keyspace)}."
                                      f"{spell(table)} WHERE {where} ALLOW FILTERING")
            return scope
        if reads.what == "table":
            scope = self._table(work, *tools.table_of(work, given))
            self._named_rows(tool, scope)
            return scope  # read and resolved: the tool takes it (Work.named)
        if reads.what == "keyspace":
            keyspace = names(given, (1,), "keyspace")[0]
            why = self.policy.refusal(keyspace)
            if why is not None:
                raise Refused(why)
            if _keyspace_meta(work.served.context.cluster, keyspace) is None:
                raise _absent(work.served.context.cluster, keyspace)
            return Scope(keyspace)
        return Scope()  # the keyspaces (each screened: screen_of), or nothing of the database

    def _table(self, work: Work, keyspace: str, table: str) -> Scope:
        why = self.policy.refusal(keyspace, table)
        if why is not None:
            raise Refused(why)
        cluster = work.served.context.cluster
        target = _target(cluster, keyspace, table)
        if target.view:
            base = str(getattr(target.meta, "base_table_name", ""))
            if self.policy.hides(keyspace, base):  # a view of a hidden table holds its rows: absent as it is
                raise _absent(cluster, keyspace, table)
            why = self.policy.view_refusal(keyspace, table, base)
            if why is not None:
                raise Refused(why)
        return Scope(keyspace, table, self.policy.redactions(keyspace, table),
                     columns=frozenset(target.columns), target=target)

    def _statement(self, work: Work, statement: str) -> Scope:
        from cqlsh_ext.cql.errors import QueryError
        from cqlsh_ext.cql.lexer import Lexed
        from cqlsh_ext.mcp_server import bounds
        from cqlsh_ext.query.recognize import table_of

        lexed = Lexed(statement)  # the call's one lexing: the tool takes it (Scope.lexed)
        try:
            bounds.check_text(statement, "a statement")
            tokens = lexed.tokens
            bounds.check_tokens(tokens)
        except (QueryError, bounds.TooLarge):
            return Scope(lexed=lexed)  # the gate says why, in one line, before anything runs
        why = self.policy.named_refusal(tokens)
        if why is not None:
            raise Refused(why)
        first = _first_statement(lexed)
        found = table_of(first)
        keyspace = found[0] or work.served.context.keyspace if found is not None else None
        self._server_tables(work, first, (keyspace, found[1]) if found is not None else None)
        if found is None:
            return Scope(lexed=lexed)
        if keyspace is None:
            return Scope(lexed=lexed)  # the server says: no keyspace in use
        scope = self._table(work, keyspace, found[1])
        scope.lexed = lexed
        scope.plan = _plan(first, scope)
        if scope.patterns:
            self._filters(work, lexed, scope)
        if is_system_keyspace(keyspace):
            self._hiding(scope, first)
        return scope

    def _server_tables(self, work: Work, statement: Lexed, read: tuple[str | None, str] | None) -> None:
        """The tables the server reads for `statement` once it has prepared it (features.read_rule):
        refused when the policy refuses one, or when the server reads another table than the one
        the guard read in its text (`read`: what the guard decides on)."""
        from cqlsh_ext.features.read_rule import server_tables

        tables = server_tables(work.served.context.session.prepare, statement.spanned())
        for keyspace, table in tables or ():
            why = self.policy.refusal(keyspace, table)
            if why is not None:
                raise Refused(why)
            if self.policy.hides(keyspace, table):
                raise _absent(work.served.context.cluster, keyspace, table)
            if read != (keyspace, table):
                raise Refused(f"refused: the server reads {keyspace}.{table} in this statement, where "
                              f"{READER} reads {'.'.join(str(n) for n in read) if read else 'no table'}: "
                              "a statement is served only as the server reads it")

    def _hiding(self, scope: Scope, statement: Lexed) -> None:
        """A SELECT of a system table whose rows name keyspaces (and tables or views of them): where
        the policy may hide a table of the keyspaces its WHERE reads (keyspace_name = or IN; else
        any), its rows naming one are left out of the answer (scope.hiding), which needs them read
        whole with the columns that name them; a statement whose rows do not carry them, or that
        folds rows into others (an aggregate, DISTINCT, GROUP BY, a form the payload parser does
        not read) or reads inside their values (a payload path: read and counted here before the
        screen) is refused. Its own LIMIT and PER PARTITION LIMIT are taken off what the server is
        sent and applied after the screen (scope.sent, scope.caps): the server would count the rows
        left out. Decided by the policy and the statement alone, never by the schema."""
        from cqlsh_ext.query.grammar import reaches_payload

        naming = self._naming(scope)
        if naming is None:
            return
        pinned = _pinned(statement.tokens, naming[0])
        if not any(self.policy.may_hide(keyspace) for keyspace in (pinned if pinned is not None else [None])):
            return
        sent, caps = _caps_taken_off(statement)
        plan = _plan(sent, scope) if sent is not None else scope.plan
        selected = set(scope.columns) if plan is not None and any(i.kind == "star" for i in plan.items) else \
            {i.name for i in plan.items if i.kind == "column"} if plan is not None else set()
        if plan is None or plan.aggregates or plan.distinct or plan.group_by or reaches_payload(plan) \
                or not set(naming) <= selected:
            raise Refused(f"refused: the policy ({self.policy.source}) hides tables, and the rows of "
                          f"{scope.keyspace}.{scope.table} that name one are left out of its answers: "
                          f"select {', '.join(naming)} (or *) with what you want, each row as it is (no "
                          "aggregate, DISTINCT, GROUP BY or payload path), or name in the WHERE only "
                          f"keyspaces it hides no table of ({naming[0]} = '...')")
        assert scope.target is not None
        key = tuple(scope.target.schema.partition_key)
        if caps.per_partition is not None and not set(key) <= selected:
            raise Refused(f"refused: the policy ({self.policy.source}) hides tables, so PER PARTITION LIMIT "
                          f"counts the rows of {scope.keyspace}.{scope.table} left once those naming one are "
                          f"left out, by their partition key: select {', '.join(key)} too")
        scope.hiding, scope.sent, scope.plan = True, sent, plan
        scope.caps = replace(caps, partition_key=key)

    def _naming(self, scope: Scope) -> list[str] | None:
        """The columns by which the rows of a system table name a keyspace (first) and tables of it,
        or None when they name no keyspace; refuses a table naming tables in a form the screen does
        not read (UNSCREENED_NAMES) while the policy hides a table."""
        columns = scope.columns
        if scope.keyspace is None or not is_system_keyspace(scope.keyspace):
            return None
        unread = [c for c in UNSCREENED_NAMES if c in columns]
        if unread and self.policy.may_hide(None):
            raise Refused(f"refused: the policy ({self.policy.source}) hides tables, and the rows of "
                          f"{scope.keyspace}.{scope.table} name tables by {', '.join(unread)}, which it "
                          "cannot leave out the hidden ones of: cqlsh-ext mcp does not read it while the "
                          "policy hides a table")
        keyspace = next((c for c in KEYSPACE_COLUMNS if c in columns), None)
        if keyspace is None:
            return None
        return [keyspace, *[c for c in SELECTED_NAMES if c in columns]]

    def _named_rows(self, tool: Tool, scope: Scope) -> None:
        """A tool naming a system table whose rows may name a table the policy hides (any: it has
        no WHERE to say which keyspaces it reads): read only by a tool each row of whose answer
        passes the screen, or that reads none it answers (Tool.screens_rows: describe_table, its
        sample of values left unread); refused otherwise (a report's figures, INSPECT's values and
        a file count or hold every row it reads)."""
        if self._naming(scope) is None or not self.policy.may_hide(None):
            return
        if not tool.screens_rows:
            raise Refused(self._unscreened(tool, scope))
        scope.hiding = True

    def _unscreened(self, tool: Tool, scope: Scope) -> str:
        return (f"refused: the policy ({self.policy.source}) hides tables, and {tool.name} would answer from "
                f"rows of {scope.keyspace}.{scope.table} that name one, which it cannot leave out: query "
                "its rows instead (the query tool leaves them out)")

    def _filters(self, work: Work, lexed: Any, scope: Scope) -> None:
        """Refuse a statement whose conditions, groups, order or aggregates touch a redacted value;
        fill scope.places with what each result name reads."""
        from cqlsh_ext.cql.lexer import Lexed

        assert scope.keyspace is not None and scope.table is not None
        base = [scope.keyspace, scope.table]
        touched = frozenset(c for c in scope.columns if redact.touches(scope.patterns, [*base, c]))
        said = (f"refused: the policy ({self.policy.source}) redacts values of "
                f"{scope.keyspace}.{scope.table}, and a condition, group, order or function of this "
                "statement reads ")
        plan = scope.plan
        if plan is None:
            # A form the parser does not read (AS, functions, JSON): a redacted column may only be
            # selected plainly; the answer's names it cannot place are redacted whole (redact.rows).
            # After DISTINCT no selection is plain: the rows it leaves tell which values are equal.
            for tok in _outside_plain_selection(lexed.tokens):
                if tok.kind in ("word", "qname") and tok.name in touched:
                    raise Refused(said + f"{tok.name} (select it plainly, without a function, "
                                         "condition or DISTINCT, and its values come redacted)")
            return
        refs = [(p.ref, "a condition") for p in plan.predicates]
        if plan.distinct:  # the rows left tell which values are equal, as GROUP BY's groups do
            refs += [(i.ref, "DISTINCT") for i in plan.items if i.ref is not None]
            if any(i.kind == "star" for i in plan.items):
                refs += [(_column(c), "DISTINCT") for c in sorted(touched)]
        refs += [(r, "GROUP BY") for r in plan.group_by] + [(r, "ORDER BY") for r, _ in plan.order_by]
        refs += [(i.ref, f"{i.func}()") for i in plan.items if i.kind == "agg" and i.ref is not None]
        for ref, where in refs:
            place = _place(ref)
            if redact.touches(scope.patterns, [*base, *place]):
                raise Refused(said + f"{'.'.join(place)} ({where})")
        if plan.server_where:
            for tok in Lexed(plan.server_where).tokens:
                if tok.kind in ("word", "qname") and tok.name in touched:
                    raise Refused(said + f"{tok.name} (a condition)")
        for item in plan.items:
            if item.kind == "star":
                scope.places.update({c: [c] for c in scope.columns})
            elif item.kind == "agg":
                scope.places[item.name] = None
            elif item.ref is not None:
                scope.places[item.name] = _place(item.ref)

    # ------------------------------------------------------------------------------ decode

    @contextmanager
    def decoding(self, columns: dict[str, str], scope: Scope, decode: Any) -> Iterator[None]:
        """The call's `decode` settings in force in `columns` (the shell's DECODE settings) while it
        runs; the shell's own ones after."""
        if decode is None:
            yield
            return
        settings = self.decode_settings(columns, scope, decode)
        before = dict(columns)
        columns.update(settings)
        try:
            yield
        finally:
            columns.clear()
            columns.update(before)

    def decode_settings(self, columns: dict[str, str], scope: Scope, decode: Any) -> dict[str, str]:
        """{place: spec} of a `decode` argument; raises Refused."""
        from cqlsh_ext.settings import SettingError, parse_column_spec

        if not isinstance(decode, dict) or not decode:
            raise Refused('decode must be an object of column -> spec, e.g. {"data": "deflate"} or '
                          '{"data": "zstd>protobuf:Order@orders.desc"}')
        if scope.keyspace is None or scope.table is None:
            raise Refused("decode needs a statement that reads one table (SELECT ... FROM keyspace.table)")
        found: dict[str, str] = {}
        for column, spec in decode.items():
            if not isinstance(spec, str) or not column.strip():
                raise Refused(f"decode: {column!r} takes a spec text, such as \"deflate\"")
            self._schema_file(columns, spec)
            try:
                found[f"{scope.keyspace}.{scope.table}.{column.strip()}"] = parse_column_spec(spec)
            except SettingError as err:
                raise Refused(f"decode {column}: {err}") from None
        return found

    def _schema_file(self, columns: dict[str, str], spec: str) -> None:
        """Refuse a spec naming a schema file the server was not started with, before any file is
        looked at (an assistant must not make the server read, or probe, its host's files)."""
        from cqlsh_ext.payload.names import ARGUMENT_NAMES, FILE_AFTER

        allowed = self._allowed_files(columns)
        for step in spec.split(">"):
            name, colon, arg = step.partition(":")
            name = name.strip().lower()
            if not colon or name not in ARGUMENT_NAMES:
                continue
            sep = FILE_AFTER.get(name)
            path = arg.rpartition(sep)[2] if sep else arg
            if _normal_path(path.strip()) not in allowed:
                named = ", ".join(sorted(self.schema_files)) or "none"
                raise Refused(f"refused: decode may name only the schema files cqlsh-ext mcp was started "
                              f"with (--schema-file: {named}), not {path.strip()!r}")

    def _allowed_files(self, columns: dict[str, str]) -> set[str]:
        """The schema files named at start: --schema-file's, and those of the DECODE settings
        `columns` held at the first call (the server's start-up settings)."""
        if self._startup_files is None:
            from cqlsh_ext.payload.spec import SpecError, parse_spec

            files = {_normal_path(path) for path in self.schema_files}
            for spec in columns.values():
                try:
                    argument = parse_spec(spec).argument
                except SpecError:
                    continue
                if argument:
                    files.add(_normal_path(argument.rpartition("@")[2]))
            self._startup_files = files
        return self._startup_files

    # ------------------------------------------------------------------------------ after

    def screen_of(self, tool: Tool, scope: Scope, cluster: Any = None) -> Screen:
        """What the call's rows, values and report go through before anything measures or sends
        them: redaction, the hidden tables and keyspaces left out (by what its tool reads)."""
        policy = self.policy
        hidden = _HiddenTables(policy, cluster)
        what = tool.reads.what if tool.reads is not None else "nothing"
        if what == "keyspaces":
            return Screen(row=lambda row: None if policy.refusal(str(row.get("keyspace_name"))) is not None
                          else row, columns=None, hides=True, hidden_table=hidden)
        if what == "keyspace" and scope.keyspace is not None:
            ks = scope.keyspace
            return Screen(row=lambda row: None if policy.refusal(ks, str(row.get("table_name"))) is not None
                          else row, columns=None, hides=True, hidden_table=hidden)
        if scope.hiding:
            return _hiding_screen(hidden, scope.caps)
        if scope.keyspace is None or scope.table is None:
            return Screen(hidden_table=hidden)
        keyspace, table, patterns = scope.keyspace, scope.table, scope.patterns
        if not patterns:
            return Screen(hidden_table=hidden)

        def row(found: dict[str, Any]) -> dict[str, Any]:
            return redact.rows(patterns, keyspace, table, [found], scope.places, scope.columns)[0]

        def columns(names: Sequence[str]) -> list[str | Callable[[Any], Any] | None]:
            return redact.column_screens(patterns, keyspace, table, names, scope.places, scope.columns)

        def value(found: Any) -> Any:
            return redact.inspected(patterns, keyspace, table, [found])[0]

        def report(found: dict[str, Any]) -> dict[str, Any]:
            if what != "column":  # a table's reports are figures; a column's says its paths' values
                return found
            return redact.payload_report(patterns, keyspace, table, found)

        return Screen(row=row, value=value, report=report, hidden_table=hidden, columns=columns)

    def after(self, work: Work, answer: ToolAnswer) -> ToolAnswer:
        """The answer's prose said in the tools' terms (hints.py). What a list left out is never
        counted: denied means absent."""
        if answer.error is not None:
            answer.error = hints.for_assistant(self._meant(work, answer.error))
        answer.notes = [hints.for_assistant(note) for note in answer.notes]
        data = answer.data
        if data is None:
            return answer
        if isinstance(data.get("notes"), list):
            data["notes"] = [hints.for_assistant(n) if isinstance(n, str) else n for n in data["notes"]]
        if isinstance(data.get("error"), str):
            data["error"] = hints.for_assistant(data["error"])
        hints.report(data)  # a report's sentences; never rows, values or paths (hints._VALUES)
        return answer


    def _meant(self, work: Work, error: str) -> str:
        """`error` with the name it names meant added, as the shell adds it (output.meant: a table,
        a keyspace, a column, a word of the grammar), among the keyspaces and tables the policy lets the
        client see: never one it hides or refuses."""
        from cqlsh_ext.output.meant import columns_of, schema_of, with_meant
        from cqlsh_ext.upstream.seams import grammar_words

        policy, ctx = self.policy, work.served.context
        metadata = getattr(ctx.cluster, "metadata", None)
        keyspaces, tables = schema_of(metadata)

        def seen_tables(keyspace: str) -> list[str]:
            return [name for name in tables(keyspace)
                    if not policy.hides(keyspace, name) and policy.refusal(keyspace, name) is None]

        seen = [ks for ks in keyspaces if not policy.hides(ks) and policy.refusal(ks) is None]
        statement = work.scope.lexed.text if work.scope is not None and work.scope.lexed is not None else None
        return with_meant(error, seen_tables, seen, ctx.keyspace, grammar_words, statement,
                          lambda keyspace, table: columns_of(metadata)(keyspace, table)
                          if table in seen_tables(keyspace) else [])


def _nothing(answer: ToolAnswer) -> bool:
    """An answer of no row, or of one count that is 0: what a condition no value can meet gives."""
    data = answer.data
    if data is None or data.get("stopped") or data.get("error"):
        return False
    rows = data.get("rows")
    if not isinstance(rows, list) or len(rows) > 1:
        return False
    first = rows[0].value() if rows and isinstance(rows[0], SpeltRow) else rows[0] if rows else None
    return not rows or (isinstance(first, dict) and list(first.values()) == [0]
                        and next(iter(first)) == "count")


def _notes(answer: ToolAnswer) -> list[str]:
    notes = answer.data.get("notes") if answer.data is not None else None
    return [str(n) for n in notes] if isinstance(notes, list) else []


class _HiddenTables:
    """Which tables and views the policy file hides (policy.Policy.hides): a view of a hidden table
    too (the driver's schema says what it is a view of)."""

    def __init__(self, policy: Policy, cluster: Any) -> None:
        self.policy = policy
        self.cluster = cluster

    def __call__(self, keyspace: str, name: str) -> bool:
        if self.policy.hides(keyspace, name):
            return True
        meta = self.cluster.metadata.keyspaces.get(keyspace) if self.cluster is not None else None
        view = meta.views.get(name) if meta is not None else None
        return view is not None and self.policy.hides(keyspace, str(view.base_table_name))

    def names_one(self, row: dict[str, Any]) -> bool:
        """Whether a row of a system table names a keyspace or a table (or view) the policy hides."""
        keyspace = next((row[c] for c in KEYSPACE_COLUMNS if isinstance(row.get(c), str)), None)
        if keyspace is None:
            return False
        if self.policy.hides(keyspace):
            return True
        return any(isinstance(row.get(name), str) and self(keyspace, row[name]) for name in TABLE_COLUMNS)


def _hiding_screen(hidden: _HiddenTables, caps: Caps) -> Screen:
    """The screen of a system table's rows where the policy hides tables: a row naming a hidden one
    left out, then the statement's own PER PARTITION LIMIT and LIMIT applied to the rows left, as
    the server would have applied them to a schema without the hidden tables."""
    per_partition = caps.per_partition
    seen: dict[str, int] = {}

    def row(found: dict[str, Any]) -> dict[str, Any] | None:
        if hidden.names_one(found):
            return None
        if per_partition is not None:
            key = json.dumps([found.get(c) for c in caps.partition_key], sort_keys=True, default=str)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > per_partition:
                return None
        return found

    # A cursor carries no count of the partition it stops in: an answer cut short is not continued.
    why_not = (f"PER PARTITION LIMIT {per_partition} counts this answer's rows after the policy's screen, "
               "which a cursor cannot carry on: a larger limit or max_bytes") if per_partition else None
    return Screen(row=row, columns=None, hides=True, hidden_table=hidden, limit=caps.limit, why_not=why_not)


def _caps_taken_off(statement: Lexed) -> tuple[Lexed | None, Caps]:
    """`statement` without its own LIMIT and PER PARTITION LIMIT (None: it has neither), and their
    counts; Refused for a count that is no whole number of 1 or more (a bind marker, 0)."""
    tokens = statement.tokens
    runs: list[tuple[int, int]] = []
    counts: dict[str, int] = {}
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.value in "([{":
            depth += 1
        elif tok.kind == "punct" and tok.value in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and tok.kind == "word" and tok.value.lower() == "limit":  # a reserved word
            per = i >= 2 and [_word(t) for t in tokens[i - 2:i]] == ["per", "partition"]
            said = "PER PARTITION LIMIT" if per else "LIMIT"
            count = tokens[i + 1]
            if said in counts:
                raise Refused(f"refused: a statement takes one {said}, not two")
            if not (count.kind == "int" and isinstance(count.literal, int) and count.literal >= 1):
                raise Refused(f"refused: {said} takes a whole number of 1 or more, not {count.describe()}")
            counts[said] = count.literal
            runs.append((i - 2 if per else i, i + 2))
    if not runs:
        return None, Caps()
    return _without(statement, runs), Caps(counts.get("LIMIT"), counts.get("PER PARTITION LIMIT"))


def _without(statement: Lexed, runs: Sequence[tuple[int, int]]) -> Lexed:
    """`statement` without the tokens of each run [first, stop) and the text they span: its other
    tokens as they were, where they sit in what is left of its text (not lexed again)."""
    from cqlsh_ext.cql.lexer import Lexed

    tokens, text = statement.tokens, statement.text
    pieces: list[str] = []
    kept: list[Token] = []
    at = shift = i = 0
    for first, stop in sorted(runs):
        kept += [replace(tok, start=tok.start - shift, end=tok.end - shift) for tok in tokens[i:first]]
        start, end = tokens[first].start, tokens[stop - 1].end
        pieces.append(text[at:start])
        at, shift, i = end, shift + end - start, stop
    kept += [replace(tok, start=tok.start - shift, end=tok.end - shift) for tok in tokens[i:]]
    pieces.append(text[at:])
    return Lexed("".join(pieces), kept)


def _word(tok: Token) -> str:
    return tok.value.lower() if tok.kind == "word" else ""


def _pinned(tokens: Sequence[Token], column: str) -> list[str] | None:
    """The values a WHERE gives `column` (`column = 'x'`, `column IN ('x', 'y')`, outside brackets),
    or None when it gives none."""
    depth = 0
    after_where = False
    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.value in "([{":
            depth += 1
        elif tok.kind == "punct" and tok.value in ")]}":
            depth = max(0, depth - 1)
        elif tok.kind == "word" and tok.value.lower() == "where" and depth == 0:
            after_where = True
        elif after_where and depth == 0 and tok.kind in ("word", "qname") and tok.name == column:
            return _values_given(tokens[i + 1:])
    return None


def _values_given(rest: Sequence[Token]) -> list[str] | None:
    """The strings of `= 'x'` or `IN ('x', 'y')` at the head of `rest` (the end token last)."""
    if len(rest) < 3:
        return None
    if rest[0].kind == "punct" and rest[0].value == "=":
        return [rest[1].value] if rest[1].kind == "string" else None
    if not (rest[0].kind == "word" and rest[0].value.lower() == "in" and rest[1].value == "("):
        return None
    values = []
    for at in range(2, len(rest) - 1, 2):
        if rest[at].kind != "string":
            return None
        values.append(rest[at].value)
        if rest[at + 1].value != ",":
            return values if rest[at + 1].value == ")" else None
    return None


def _first_statement(lexed: Lexed) -> Lexed:
    """The statement up to the first `;` of `lexed` (its tokens, not lexed again)."""
    tokens = lexed.tokens
    end = next((i for i, tok in enumerate(tokens) if tok.kind == "punct" and tok.value == ";"), None)
    return lexed if end is None else lexed.part(0, end)


def _plan(lexed: Any, scope: Scope) -> Any:
    """The statement read by the payload parser (plain=True), or None when it does not read it."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.query import grammar

    assert scope.target is not None
    try:
        return grammar.parse(lexed, scope.target.schema, plain=True)
    except QueryError:
        return None


def _place(ref: Any) -> list[str]:
    from cqlsh_ext.query.grammar import Path

    if isinstance(ref, Path):
        return redact.path_place(ref.column, ref.steps, ref.access)
    return [ref.name]


def _column(name: str) -> Any:
    from cqlsh_ext.query.grammar import Column

    return Column(name)


def _outside_plain_selection(tokens: Sequence[Token]) -> Iterator[Token]:
    """The tokens of a SELECT that are not plain selected names: inside a function call's
    brackets, after an AS, and everything from FROM on; every token after a DISTINCT."""
    depth = 0
    after_as = False
    for i, tok in enumerate(tokens):
        if tok.kind == "word" and tok.value.lower() == "distinct" and depth == 0:
            yield from tokens[i:]
            return
        if tok.kind == "word" and tok.value.lower() == "from" and depth == 0:
            yield from tokens[i:]
            return
        if tok.kind == "punct" and tok.value == "(":
            depth += 1
        elif tok.kind == "punct" and tok.value == ")":
            depth = max(0, depth - 1)
        if depth or after_as:
            yield tok
        after_as = tok.kind == "word" and tok.value.lower() == "as"


def _keyspace_meta(cluster: Any, keyspace: str) -> Any:
    meta = cluster.metadata.keyspaces.get(keyspace)
    if meta is None:
        try:
            cluster.refresh_schema_metadata()
        except Exception:  # noqa: BLE001 - the server away: said by the statement
            return None
        meta = cluster.metadata.keyspaces.get(keyspace)
    return meta


def _target(cluster: Any, keyspace: str, table: str) -> TableTarget:
    """The table as the reading finds it (looked up again once when the driver does not know it
    yet: made a moment ago); Refused for a keyspace or table the schema does not have."""
    from cqlsh_ext.reading.resolve import find_table

    target = find_table(cluster, keyspace, keyspace, table, refresh=True)
    if target is not None:
        return target
    raise _absent(cluster, keyspace, table)


def _absent(cluster: Any, keyspace: str, table: str | None = None) -> Refused:
    """The one line for a keyspace, or a table (`table`), the schema has not or the policy hides:
    absent alike (after() adds the one meant, among the names the client may see)."""
    if table is None or cluster.metadata.keyspaces.get(keyspace) is None:
        return Refused(f"no keyspace {keyspace} (list_keyspaces names them)")
    return Refused(f"no table {keyspace}.{table} (list_tables names the tables of {keyspace})")


def _normal_path(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))

