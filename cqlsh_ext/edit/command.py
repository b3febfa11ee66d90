"""The shell's entry for edits of stored payloads (docs/edit.md): UPDATE and DELETE naming payload paths,
the claim of the edit feature's statement (edit/declared.py), tried before encode()'s (an UPDATE without
a path is encode()'s, then cqlsh's, byte for byte), and the UNDO command that writes a journal back.

UNDO of a journal undone already (UNDO LAST after UNDO LAST CONFIRM names the same edit, whose rows
hold their old values again) says so first, with the UNDO that did it and how to have the journal's
values back (undoing that UNDO), before the preview that finds no row still as it was written. An
undo journal names the journal it undid in its sealed first line (its request's path); those of
the same table are looked for in the user's journal directory (`undo-KS.TABLE-*.jsonl`, the user's
own regular files, the newest MAX_UNDO_JOURNALS by their time), each read and verified as any
journal is; one that does not verify counts for nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed
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
        run_undo(ctx, request, finishing=_say_if_undone(ctx, path))
    except WriteRefused as err:
        shell.printerr(f"undo: {err}; nothing was written")


def _say_if_undone(ctx: WriteContext, given: str) -> int | None:
    """First of all, when the journal `given` names was undone already (see the module doc: UNDO LAST
    twice), which UNDO did it and how to have its values back; a journal not found is left to UNDO
    to refuse. An UNDO that stopped on its way is not said so: this one finishes it, and says that
    first (writing.undo), from the rows it wrote back, returned."""
    from cqlsh_ext.common.text import say
    from cqlsh_ext.writing.journal_names import find_journal, hint_name
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.undo import UNDONE_KINDS

    try:
        path, _found = find_journal(given, ctx.journal_dir, UNDONE_KINDS)
    except WriteRefused:
        return None
    undo = _undone_by(ctx.journal_dir, path)
    if undo is not None and not undo.ended:
        return undo.written
    if undo is not None:
        say(undo.text(hint_name(undo.journal, ctx.journal_dir)), ctx.out)
    return None


#: Undo journals of one table looked at at most, newest first.
MAX_UNDO_JOURNALS = 200
#: A journal's file name: KIND-KS.TABLE-STAMP-ID.jsonl (writing.journal: the stamp in UTC).
_NAME = re.compile(r"^(?P<kind>[a-z]+)-(?P<table>.+)-(?P<stamp>\d{8}T\d{6})-[0-9a-f]{8}\.jsonl$")


@dataclass(frozen=True)
class _Undone:
    """The UNDO that wrote a journal's rows back: its journal, when it started (UTC, from its name),
    the rows it wrote back, and whether it ran to its end."""

    journal: str
    started: str
    written: int
    ended: bool
    #: Whose rows: "the edit", "the rewrite", "the load" (the journal undone's kind).
    whose: str = "the edit"

    def text(self, hint: str) -> str:
        """What UNDO of the journal says first, two lines, the second the statement that undoes that
        UNDO as the UNDO's own closing line says it (`hint`: how the undo journal is named in it)."""
        whose = self.whose
        rows = f"{self.written:,} row{'' if self.written == 1 else 's'}"
        ended = "" if self.ended else ", then stopped before its end"
        return (f"undo: already undone: UNDO '{hint}' wrote {rows} of {whose} back at {self.started}{ended}; "
                f"{whose}'s values come back by undoing that UNDO:\nUndo the undo: UNDO '{hint}' CONFIRM")


def _undone_by(directory: str, path: str) -> _Undone | None:
    """The newest UNDO of this user's that wrote rows of the journal at `path` back, unless a later
    UNDO of that UNDO put them back again; None when there is none (or the journal's name is not one
    a run gives)."""
    named = _NAME.match(os.path.basename(os.path.normpath(path)))
    if named is None or named.group("kind") == "undo":
        return None
    undos = _undo_journals(directory, named.group("table"))
    target = os.path.realpath(os.path.expanduser(path))
    found = next((u for u in undos if u[0] == target), None)
    if found is None:
        return None
    _, undo = found
    again = os.path.realpath(undo.journal)
    if any(named_path == again and u.started >= undo.started for named_path, u in undos):
        return None  # that UNDO was undone in turn: the journal's values are back
    # Stopped on its way (a Ctrl-C closes its journal too): the UNDOs of the journal, together,
    # wrote back fewer rows than it holds written; they are the rows written back so far.
    back = sum(u.written for named_path, u in undos if named_path == target)
    if back < _written_rows(path):
        undo = replace(undo, written=back, ended=False)
    return replace(undo, whose=_WHOSE.get(named.group("kind"), "the edit"))


def _written_rows(path: str) -> int:
    """The rows the journal at `path` says were written (or may have been: a kill left them
    unsaid), which its UNDO writes back; 0 for one that does not verify (UNDO refuses it)."""
    from cqlsh_ext.writing.journal_read import read_journal
    from cqlsh_ext.writing.refused import WriteRefused

    try:
        read = read_journal(path)
    except WriteRefused:
        return 0
    return sum(1 for applied in read.outcomes.values() if applied is not False)


#: A journal's kind as a person says whose rows UNDO writes back (writing.undo's words).
_WHOSE = {"rewrite": "the rewrite", "load": "the load"}


def _undo_journals(directory: str, table: str) -> list[tuple[str, _Undone]]:
    """The table's undo journals that verify and wrote rows back, newest first, each with the path of
    the journal it undid (real)."""
    from cqlsh_ext.writing.journal_names import own_journals
    from cqlsh_ext.writing.journal_read import read_journal
    from cqlsh_ext.writing.refused import WriteRefused

    out: list[tuple[str, _Undone]] = []
    for journal in own_journals(directory, "undo", table, MAX_UNDO_JOURNALS, _NAME.match):
        try:
            read = read_journal(journal)
        except WriteRefused:
            continue  # not verified: it counts for nothing
        undid = getattr(read.request, "path", None)
        written = sum(1 for applied in read.outcomes.values() if applied)
        if read.kind != "undo" or not isinstance(undid, str) or not written:
            continue
        named = _NAME.match(os.path.basename(journal))
        if named is None:  # listed above by this name: never
            continue
        stamp = named.group("stamp")
        started = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]} UTC"
        undone = _Undone(journal, started, written, read.closed)
        out.append((os.path.realpath(os.path.expanduser(undid)), undone))
    return out
