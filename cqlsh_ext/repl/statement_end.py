"""Does the input hold complete statements? Decided by cqlsh's own lexer and splitter.

The same test as cqlsh's `Shell.onecmd`: the last statement ends with an end token, outside a
BATCH and outside a `$$` string. Shell commands that end at a newline (HELP, EXPAND, ...) count
as ended when Enter is pressed, hence the newline added before splitting.
"""

from __future__ import annotations

from typing import Any

#: cqlsh's lexer tokens for input that opens something it does not close: what closes each.
_UNCLOSED = {"unclosedString": "'", "unclosedName": '"', "unclosedPgString": "$$", "unclosedComment": "*/"}


def input_state(text: str, ruleset: Any) -> tuple[bool, str | None]:
    """(whether Enter should run `text` instead of starting a new line, what closes a string, quoted
    name or comment left open at its end: ', ", $$, */ or None)."""
    if not text.strip():
        return True, None
    from cqlshlib import pylexotron

    try:
        statements, open_block = ruleset.cql_split_statements(text + "\n")
    except pylexotron.LexingError:
        return True, None  # let cqlsh report the syntax error
    while statements and not statements[-1]:
        statements = statements[:-1]
    if not statements:
        return True, None  # only comments or blanks
    last = statements[-1][-1][0]
    return not open_block and last == "endtoken", _UNCLOSED.get(last)


def is_complete(text: str, ruleset: Any) -> bool:
    """True when Enter should run `text` instead of starting a new line."""
    return input_state(text, ruleset)[0]
