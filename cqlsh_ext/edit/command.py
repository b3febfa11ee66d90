"""The shell's entry for edits of stored payloads (docs/edit.md): UPDATE and DELETE naming payload
paths, a statement intercept tried before encode()'s (an UPDATE without a path is encode()'s, then
cqlsh's, byte for byte), and the UNDO command that writes a journal back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.upstream.protocol import Parsed, Shell
    from cqlsh_ext.writing.write_context import WriteContext

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
    from cqlsh_ext.writing.refused import WriteRefused

    try:
        run_edit(write_context(shell), edit, lookup.keyspace or "", lookup.meta)
    except (QueryError, WriteRefused) as err:
        shell.printerr(f"{LABEL}: {err}; nothing was written")
    return True


def write_context(shell: Shell) -> WriteContext:
    """The context a write of the shell's runs in: the shell's reading context, its journal
    directory, its lines to standard output."""
    import sys

    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.writing.journal import journal_directory
    from cqlsh_ext.writing.write_context import write_context as of

    return of(shell_context(shell), journal_directory(shell.settings), sys.stdout)


UNDO_GRAMMAR = r"""
<undoCommand> ::= "UNDO" ( path=<stringLiteral> | last="LAST" ) ( cut="CUT" )? ( unsealed="UNSEALED" )?
                  ( confirm="CONFIRM" ( confirmunsealed="UNSEALED" )? )?
                ;
"""


def undo_usage(words: list[str]) -> str:
    return ("UNDO 'journal' [CUT] [UNSEALED] [CONFIRM [UNSEALED]]: the journal's path, the id an edit's "
            "Undo: line names, or LAST (HELP EDIT)")


def do_undo(shell: Shell, parsed: Parsed) -> None:
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
    try:
        run_undo(write_context(shell), request)
    except WriteRefused as err:
        shell.printerr(f"undo: {err}; nothing was written")
