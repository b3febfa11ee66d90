"""The shell's entry for COMPRESSION REWRITE and its RESUME (docs/rewrite.md), the claim of the rewrite
feature's statement (rewrite/declared.py declares it, with its grammar): `intercept` takes a COMPRESSION
statement whose second word is REWRITE before cqlsh parses it (the others, STATS, ADVISE, SETTINGS and
TRIAL, are read from their features' declarations before the claims).

The statement is lexed once (cql.lexer.Lexed) and read by rewrite.parse straight into its typed
request (writing.requests.RewriteRequest, ResumeRequest); cqlsh's grammar for REWRITE (declared.py's
GRAMMAR) is there for Tab completion only: cqlsh never parses the statement. What does not parse is
said in one line. The shell imports this module when a statement starts with COMPRESSION.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.settings.shell import Shell


def is_rewrite(statement: Lexed) -> bool:
    """Whether the statement is COMPRESSION REWRITE ... (its second word; a statement our lexer
    refuses is read by its text's words, so that REWRITE's error is ours)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Cursor

    try:
        return Cursor(statement.tokens).word(1) == "rewrite"
    except QueryError:
        words = statement.text.split(None, 2)
        return len(words) > 1 and words[1].rstrip(";").lower() == "rewrite"


def intercept(shell: Shell, statement: Lexed) -> bool:
    """True for COMPRESSION REWRITE ... (run, or refused in one line); False for the other
    COMPRESSION statements (cqlsh's grammar, insight.command)."""
    if not is_rewrite(statement):
        return False
    import sys

    from cqlsh_ext.common.text import unheld
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.rewrite.run import run
    from cqlsh_ext.writing.journal import shell_write_context

    # Its lines reach the screen as they are written, fitted to it (not held by the shell's pager):
    # the header and the journal's path come before the progress line, and stay there.
    unheld(sys.stdout)
    run(shell_write_context(shell_context(shell), shell.settings), statement)
    return True
