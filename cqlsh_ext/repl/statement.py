"""Does the input hold complete statements? Decided by cqlsh's own lexer and splitter.

The same test as cqlsh's `Shell.onecmd`: the last statement ends with an end token, outside a
BATCH and outside a `$$` string. Shell commands that end at a newline (HELP, EXPAND, ...) count
as ended when Enter is pressed, hence the newline added before splitting.
"""

from __future__ import annotations

from typing import Any


def is_complete(text: str, ruleset: Any) -> bool:
    """True when Enter should run `text` instead of starting a new line."""
    if not text.strip():
        return True
    from cqlshlib import pylexotron

    try:
        statements, open_block = ruleset.cql_split_statements(text + "\n")
    except pylexotron.LexingError:
        return True  # let cqlsh report the syntax error
    while statements and not statements[-1]:
        statements = statements[:-1]
    if not statements:
        return True  # only comments or blanks
    return not open_block and statements[-1][-1][0] == "endtoken"
