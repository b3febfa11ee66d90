"""--export-dir DIR: under --read-only, `COPY (SELECT ...) TO 'file'` may write a NEW file directly
inside DIR, and nothing else (docs/agents.md). The directory is held as `cqlsh-ext mcp` holds its
export directory (mcp_server.exports.ExportDir: made 0700 when missing, else the user's own and
open to nobody else, common.private_dir; its descriptor opened once, at start); the file is made
through that descriptor, 0600 (export.target.PrivateFile), never over a file.

`copy_refusal(statement, held)` is the one decision, "does --export-dir let this COPY through?":
None, or the one line that says why not. The SELECT inside is a read, which --read-only's own
rules judge (the door hands it to them: `inner_select`), the tables the policy refuses with it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.export.target import PrivateFile
    from cqlsh_ext.mcp_server.exports import ExportDir

#: How a refusal names the switch.
FLAG = "--export-dir"


def hold(path: str) -> ExportDir:
    """The directory, made or checked, its descriptor held (mcp_server.exports.ExportDir.of);
    raises ExportRefused (one line)."""
    from cqlsh_ext.mcp_server.exports import ExportDir

    # (no age nor size kept here: the shell's files are the user's to keep)
    return ExportDir.of(path, float("inf"), 1 << 62)


def private_file(held: ExportDir) -> PrivateFile:
    """How an export's file is written in the held directory: through its descriptor, 0600."""
    from cqlsh_ext.export.target import PrivateFile

    return PrivateFile(1 << 62, FLAG, held.descriptor)


def is_copy(statement: Lexed) -> bool:
    tokens = statement.tokens
    return bool(tokens) and tokens[0].kind == "word" and tokens[0].value.lower() == "copy"


def inner_select(statement: Lexed) -> Lexed:
    """The SELECT of a `COPY (SELECT ...) TO` statement (copy_refusal said it is one)."""
    from cqlsh_ext.export.parse import parse

    return parse(statement).query


def copy_refusal(statement: Lexed, held: ExportDir) -> str | None:
    """Why --export-dir does not let `statement` (a COPY) write, or None: it is `COPY (SELECT ...) TO
    'file'` naming a file directly inside the held directory (after `~`, `..` and links are
    resolved) that does not exist yet, without OVERWRITE."""
    from cqlsh_ext.export.parse import CopyError, parse

    where = f"the export directory {held.path} ({FLAG})"
    tokens = statement.tokens
    if len(tokens) < 2 or tokens[1].kind != "punct" or tokens[1].value != "(":
        return (f"refused: {FLAG} lets COPY (SELECT ...) TO 'file' write a new file in {held.path}; "
                "COPY table TO and COPY ... FROM stay refused")
    try:
        export = parse(statement)
    except CopyError as err:
        return f"refused: {err}"
    if export.overwrite:
        return f"refused: {FLAG} never writes over a file: drop WITH OVERWRITE and name a new file"
    named = os.path.abspath(os.path.expanduser(export.path))
    name = os.path.basename(named)
    if os.path.realpath(os.path.dirname(named)) != str(held.path) or name in ("", ".", ".."):
        return f"refused: {export.path} is not a file directly inside {where}: name one there"
    try:
        os.stat(name, dir_fd=held.descriptor, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"refused: {export.path}: {err.strerror}"
    return f"refused: {export.path} exists, and {FLAG} writes new files only: name another"
