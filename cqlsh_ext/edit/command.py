"""The shell's entry for edits of stored payloads (docs/edit.md): UPDATE and DELETE naming payload paths,
the claim of the edit feature's statement (edit/declared.py), tried before encode()'s (an UPDATE without
a path is encode()'s, then cqlsh's, byte for byte), and the UNDO command that writes a journal back
(saying first when it was undone already: writing.undo_chain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed

LABEL = "edit"


def intercept(shell: Shell, statement: Lexed) -> bool:
    """True when the statement edits payload paths (run or refused, said in one line), False for
    any other UPDATE or DELETE."""
    from cqlsh_ext.edit.parse import TableColumns, parse, recognized

    if not recognized(statement):
        return False  # no name followed by . or [ among the targets: no schema asked
    lookup = TableColumns(shell.conn, shell.current_keyspace)
    try:
        edit = parse(statement, lookup, lookup.schema)
    except QueryError as err:
        shell.printerr(f"{LABEL}: {err}; nothing was written")
        return True
    if edit is None:
        return False
    from cqlsh_ext.edit.run import run_edit
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.writing.journal import shell_write_context
    from cqlsh_ext.writing.refused import WriteRefused

    try:
        ctx = shell_write_context(shell_context(shell), shell.settings)
        run_edit(ctx, edit, lookup.keyspace or "", lookup.meta)
    except (QueryError, WriteRefused) as err:
        shell.printerr(f"{LABEL}: {err}; nothing was written")
    return True


def undo_usage(words: list[str]) -> str:
    return ("UNDO 'journal' [CUT] [UNSEALED] [CONFIRM [UNSEALED]]: the journal's path, the id an edit's "
            "Undo: line names, or LAST (HELP EDIT)")


def do_undo(shell: Shell, parsed: Parsed) -> None:
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.writing.journal import shell_write_context
    from cqlsh_ext.writing.journal_names import LAST
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import UndoRequest
    from cqlsh_ext.writing.undo import run_undo

    path = str(parsed.get_binding("path") or "").strip()
    if path.startswith(("'", "$$")):
        path = str(shell.cql_unprotect_value(path))
    if parsed.get_binding("last") is not None:
        path = LAST
    previewed = parsed.get_binding("unsealed") is not None
    confirm = parsed.get_binding("confirm") is not None
    confirmed = parsed.get_binding("confirmunsealed") is not None
    if previewed and confirm and not confirmed:
        # An unsealed journal's rows are whatever whoever could write the file chose: they are
        # written only by a confirmation that names what it confirms, after a preview of each.
        shell.printerr("undo: an unsealed journal is written back with CONFIRM UNSEALED at the end, once its "
                       "preview (UNSEALED without CONFIRM) has shown every row; nothing was written")
        return
    request = UndoRequest(path, previewed or confirmed, confirm, parsed.get_binding("cut") is not None)
    ctx = shell_write_context(shell_context(shell), shell.settings)
    try:
        run_undo(ctx, request, undone=True)
    except WriteRefused as err:
        shell.printerr(f"undo: {err}; nothing was written")
