"""The shell's entry for loads (docs/load.md), the claim of the write feature's statement (load/declared.py:
Statement.claims): `intercept` sees every COPY before cqlsh parses it and takes the loads
(load.parse.is_load: a JSON Lines or Parquet file, ENCODE, PACE or CONFIRM, COPY RESUME); any other COPY
... FROM goes to cqlsh's COPY FROM as written. Nothing heavy is imported here: the shell imports this
module at start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.settings.shell import Shell


def intercept(shell: Shell, statement: Lexed) -> bool:
    """True for a load or its RESUME (run, or refused in one line); False for any other COPY."""
    from cqlsh_ext.load.parse import is_load

    if not is_load(statement):
        return False
    import sys

    from cqlsh_ext.common.text import message, screen_width, unheld
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.load.load_job import LABEL
    from cqlsh_ext.load.parse import parse
    from cqlsh_ext.load.run import load, resume
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.writing.journal import shell_write_context
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import ResumeRequest

    # Its lines reach the screen as they are written (not held by the shell's pager): the heading
    # and the journal's path come before the progress line.
    unheld(sys.stdout)
    ctx = shell_write_context(shell_context(shell), shell.settings)
    try:
        asked = parse(statement, ctx.keyspace)
        if isinstance(asked, ResumeRequest):
            resume(ctx, asked)
        else:
            load(ctx, asked)
    except (QueryError, WriteRefused) as err:
        ctx.error(message(f"{LABEL}: {err}; nothing was written", screen_width(sys.stderr)))
    return True
