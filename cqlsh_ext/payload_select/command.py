"""The shell's entry for payload queries, the claim of the query feature's statement (Statement.claims,
payload_select/declared.py; `refuse_copy`, copy_paths'): `intercept` runs a SELECT that reaches into a
payload and returns True; for any other statement it returns False and cqlsh runs it as written (stock
behaviour, byte for byte). The statement is lexed once (cql.lexer.Lexed): its tokens serve the
recognition, the parse and the error path; a SELECT that names no path costs no schema and no parse.
Errors are one line; nothing is read then.

The answer is the one reading's (cqlsh_ext.reading.select), printed by the terminal renderer
(cqlsh_ext.render.terminal) with its closing line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.settings.shell import Shell

LABEL = "payload query"


def intercept(shell: Shell, statement: Lexed) -> bool:
    from cqlsh_ext.query.recognize import may_reach_payload

    if not may_reach_payload(statement):
        return False  # no path in it: cqlsh's, no schema asked, nothing more imported
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.reading.select import payload_plan

    ctx = shell_context(shell)
    try:
        planned = payload_plan(ctx, statement)
    except QueryError as err:
        shell.printerr(f"{LABEL}: {err}")
        return True
    if planned is None:
        return False  # cqlsh's: the server answers it as written
    try:
        run(shell, ctx, *planned)
    except QueryError as err:
        shell.printerr(f"{LABEL}: {err}")
    return True


def refuse_copy(shell: Shell, statement: Lexed) -> bool:
    """COPY keeps stored bytes: a payload path in its column list is refused in one line (True)."""
    import re

    columns = re.match(r"\s*copy\s+[\w.\"]+\s*\(([^)]*)\)", statement.text, re.IGNORECASE)
    if columns is None or not re.search(r"[.\[]", columns.group(1)):
        return False
    shell.printerr("COPY reads and writes the stored bytes: payload paths are not columns here "
                   "(a SELECT with paths and --output-format csv writes them)")
    return True


def run(shell: Shell, ctx: ReadContext, plan: Plan, target: TableTarget) -> None:
    """The plan read (reading.select) in the command's context and printed (render.terminal).
    Raises QueryError."""
    from cqlsh_ext.reading.select import read_select, reads_in_order, resumable
    from cqlsh_ext.render.terminal import print_answer

    rows = shell.results.rows
    state, given = rows.reading_start()  # a resumed SELECT's (--resume)
    why_not = resumable(plan, reads_in_order(ctx))
    if rows.start is not None and why_not is not None:
        rows.start = None
        raise QueryError(f"--resume: this statement's answer cannot be gone on with ({why_not})")
    answer = read_select(ctx, plan, target, paging_state=state, given=given)
    if answer is not None:
        begun = len(rows.printed)
        try:
            print_answer(shell.results, answer, target.meta)
        finally:
            if len(rows.printed) > begun and rows.printed[-1].resume is None:
                # said with a cut or a stop (agent.door: resume_unavailable)
                rows.printed[-1].why_not = why_not
