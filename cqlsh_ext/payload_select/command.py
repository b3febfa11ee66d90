"""The shell's entry for payload queries, a statement intercept (cqlsh_ext.commands): `intercept`
runs a SELECT that reaches into a payload and returns True; for any other statement it returns
False and cqlsh runs it as written (stock behaviour, byte for byte). The statement is lexed once
(cql.lexer.Lexed): its tokens serve the recognition, the parse and the error path; a SELECT that
names no path costs no schema and no parse. Errors are one line; nothing is read then."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cqlsh_ext.commands import statement_intercept
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.payload_select.help import QUERIES_HELP, SELECT_SEE_ALSO

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.grammar import Plan, Schema
    from cqlsh_ext.upstream.protocol import Shell

LABEL = "payload query"


@statement_intercept("a SELECT reaching into payloads", ("select",), topics=(("queries", QUERIES_HELP),),
                     see_also=(("select", SELECT_SEE_ALSO),))
def intercept(shell: Shell, statement: Lexed) -> bool:
    from cqlsh_ext.query.recognize import may_reach_payload, table_of

    target = table_of(statement)
    if target is None or not may_reach_payload(statement):
        return False  # not a SELECT ... FROM, or no path in it: cqlsh's, no schema asked
    from cqlsh_ext.payload_select.schema import schema_of, table_meta
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.query.recognize import names_payload

    keyspace = target[0] or shell.current_keyspace
    meta = table_meta(shell, keyspace, target[1])
    if meta is None or keyspace is None:
        return False  # an unknown table: the server says so, as for any SELECT
    schema = schema_of(shell, keyspace, meta)
    try:
        plan = parse(statement, schema)
    except QueryError as err:
        if not names_payload(statement, schema):
            return False  # CQL this parser does not know, and no payload in it: the server's
        shell.printerr(f"{LABEL}: {err}")
        return True
    if plan is None:
        return False
    try:
        run(shell, plan, schema, keyspace, meta)
    except QueryError as err:
        shell.printerr(f"{LABEL}: {err}")
    return True


@statement_intercept("COPY with payload paths in its columns", ("copy",))
def refuse_copy(shell: Shell, statement: Lexed) -> bool:
    """COPY keeps stored bytes: a payload path in its column list is refused in one line (True)."""
    import re

    columns = re.match(r"\s*copy\s+[\w.\"]+\s*\(([^)]*)\)", statement.text, re.IGNORECASE)
    if columns is None or not re.search(r"[.\[]", columns.group(1)):
        return False
    shell.printerr("COPY reads and writes the stored bytes: payload paths are not columns here "
                   "(a SELECT with paths and --output-format csv writes them)")
    return True


def run(shell: Shell, plan: Plan, schema: Schema, keyspace: str, meta: Any) -> None:
    page_size = shell.page_size if shell.use_paging else 100
    answer = read_answer(shell, plan, schema, keyspace, meta, page_size)
    if answer is None:
        return
    reading, names, types, pages = answer
    _print(shell, plan, reading, names, types, pages, meta)


def read_answer(shell: Shell, plan: Plan, schema: Schema, keyspace: str, meta: Any, page_size: int,
                fetch_size: int | None = None) -> tuple[Any, list[str], list[Any], Any] | None:
    """The answer of `plan` read as the shell reads it (cost prompt, CONFIRM, workers, progress,
    retries): (ReadSummary, column names, driver types or None, a generator of pages of answer rows),
    or None when it is refused or declined (said in one line). The printed result and COPY
    (SELECT ...) TO (cqlsh_ext.export) are its two sinks; `fetch_size`: the server's page size
    when it returns the answer's rows one for one (default: the shell's). Raises QueryError."""
    from cqlsh_ext.payload_select import read
    from cqlsh_ext.query.answer import Answer
    from cqlsh_ext.query.evaluate import Evaluator

    evaluator = Evaluator(plan, shell.settings.display.decoding(), keyspace)
    star = [name for name in meta.columns] if any(i.kind == "star" for i in plan.items) else []
    reading = read.ReadSummary(Answer(plan, star))
    names, types = _columns(shell, plan, reading.answer, schema)
    if names is None:
        return None
    pages = _pages(shell, plan, reading, evaluator, keyspace, meta, page_size, fetch_size)
    if pages is None:
        return None
    return reading, names, types, pages


def _columns(shell: Shell, plan: Plan, answer: Any, schema: Schema) -> tuple[Any, Any]:
    """The answer's column names and their driver types (None for values found by a path, whose
    type is the record's), from the server's metadata of the statement it is sent: nothing read."""
    try:
        types = result_types(shell.session, plan, answer)
    except Exception as err:  # the server refuses the ordinary part: its one line
        from cqlsh_ext.scanning.scan import error_text

        shell.printerr(error_text(err))
        return None, None
    return answer.header(), types


def result_types(session: Any, plan: Plan, answer: Any) -> list[Any]:
    """Driver types of the answer's columns (None for a path's or an aggregate's value), from the
    server's metadata of the statement sent (prepared: nothing read). Spark mode uses it too."""
    from cqlsh_ext.query.grammar import Column

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


def _pages(shell: Shell, plan: Plan, reading: Any, evaluator: Any, keyspace: str, meta: Any,
           page_size: int, fetch_size: int | None = None) -> Any:
    from cqlsh_ext.payload_select import read

    if not plan.local_rows:
        from cassandra.query import SimpleStatement

        statement = SimpleStatement(plan.server_statement, consistency_level=shell.consistency_level,
                                    serial_consistency_level=shell.serial_consistency_level,
                                    fetch_size=fetch_size or (shell.page_size if shell.use_paging else None))
        try:
            result = shell.session.execute(statement)
        except Exception as err:
            from cqlsh_ext.scanning.scan import error_text

            shell.printerr(error_text(err))
            return None
        return read.plain_pages(reading, evaluator, result)
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table

    label = f"SELECT {keyspace}.{meta.name}"
    if plan.reads_beyond_partitions and not plan.server_where:
        ask = FullScanQuestion(
            LABEL, "Add CONFIRM after ALLOW FILTERING to run it from a script, or name partitions in the "
            "WHERE.", "Scan the whole table? [y/N] ", plan.confirm)
        scan = whole_table(shell, plan.server_statement.removesuffix(" ALLOW FILTERING"), meta, ask)
        if scan is None:
            return None
        progress = scan.progress(label)
    else:
        scan = ReadPlan(plan.server_statement)
        progress = scan.progress(label, plan.reads_beyond_partitions)
    if progress is not None:
        # Rows stream into the interactive shell's pager: while it runs, it owns the terminal.
        progress.paused = lambda: bool(getattr(sys.stdout, "paging", False))
    return read.answer_pages(shell, reading, evaluator, scan, progress, page_size)


def _print(shell: Shell, plan: Plan, reading: Any, names: list[str], types: list[Any], pages: Any,
           meta: Any) -> None:
    from cassandra.cqltypes import UTF8Type

    from cqlsh_ext.payload.budget import Budget
    from cqlsh_ext.payload_select.result import AnswerResult, presenter

    machine = shell.settings.display.output_format.machine
    present = presenter(types, reading.answer.computed(), machine, Budget.for_cap(shell.settings.display.cap),
                        shell.display_float_precision)
    shown = types if machine else [UTF8Type if t is None else t for t in types]
    try:
        shell.print_result(AnswerResult(names, shown, pages, present), meta)
    except BaseException:  # the pager quit, the pipe closed, a second Ctrl-C: said, then raised
        reading.output_closed = True
        raise
    finally:
        pages.close()
        # In the interactive shell the result goes through the pager (held until the command
        # ends): the closing line follows it there, not above it.
        if shell.repl_mode:
            closing_line(plan, reading, sys.stdout, shell.results.screen_width())
        else:
            closing_line(plan, reading, sys.stderr)


def closing_line(plan: Plan, reading: Any, out: Any, width: int = 0) -> None:
    """On stderr in scripts (JSON Lines on stdout stay valid): what was read, matched and not
    decodable, and the paths no value read had (a typo is otherwise a column of nulls). A SELECT
    whose paths are only projected says something only then, or when a value was not decodable.
    `width`: the screen it is fitted to, else that of `out` when it is a terminal (common.text.message)."""
    counts = reading.answer.counts
    problems = counts.undecodable + counts.cut
    unknown = counts.paths.never_found()
    if not plan.local_rows and not problems and not reading.error and not unknown:
        return
    notes = [f"no value read has {path}{_keys_named(nearest, seen)}" for path, nearest, seen in unknown]
    line = f"{LABEL}: " + "; ".join([", ".join(closing_parts(plan, reading)), *notes, *closing_ends(reading)])
    from cqlsh_ext.common.text import message, screen_width

    print(message(line, width or screen_width(out)), file=out)


def undecodable_breakdown(kinds: Mapping[str, int]) -> str:
    """' (3 no known format, 1 a format that failed)': the undecodable values by kind, in the
    view's words (payload.view.KIND_TITLES), in its order; '' without kinds."""
    from cqlsh_ext.payload.view import KIND_TITLES, KINDS

    parts = [f"{kinds[kind]:,} {KIND_TITLES[kind]}" for kind in KINDS if kinds.get(kind)]
    return f" ({', '.join(parts)})" if parts else ""


def closing_parts(plan: Plan, reading: Any) -> list[str]:
    """What the reading saw, for a closing line: rows read and matched, values undecodable or
    cut, aggregate inputs skipped, LIMIT, how the table was read."""
    counts = reading.answer.counts
    parts = [f"{counts.read:,} rows read", f"{counts.matched:,} matched"]
    if counts.undecodable:
        parts.append(f"{counts.undecodable:,} undecodable{undecodable_breakdown(counts.kinds)}")
    if counts.cut:
        parts.append(f"{counts.cut:,} cut by the budget")
    skipped = reading.answer.skipped()
    if skipped:
        parts.append(f"{skipped:,} aggregate inputs not numbers (skipped)")
    if plan.limit is not None and reading.emitted >= plan.limit and reading.answer.streamed:
        parts.append(f"stopped at LIMIT {plan.limit}")
    if reading.how:
        parts.append(reading.how)
    return parts


def closing_ends(reading: Any) -> list[str]:
    """How the reading ended, when not by reaching the end: Ctrl-C, a closed output, an error."""
    ends = []
    if reading.interrupted:
        ends.append("interrupted (Ctrl-C): the answer covers the rows read")
    elif reading.output_closed:
        ends.append("stopped when the output closed")
    if reading.error:
        ends.append(f"stopped by an error: {reading.error}")
    return ends


#: Keys named when none is near the one a path wanted.
_KEYS_NAMED = 6


def _keys_named(nearest: list[str], seen: list[str]) -> str:
    """What the closing line says of the keys where a path stopped: the nearest, else some."""
    from cqlsh_ext.query.grammar import spell_key

    if nearest:
        return f" (nearest keys seen there: {', '.join(map(spell_key, nearest))})"
    if seen:
        more = ", …" if len(seen) > _KEYS_NAMED else ""
        return f" (keys seen there: {', '.join(map(spell_key, seen[:_KEYS_NAMED]))}{more})"
    return ""
