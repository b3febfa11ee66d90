"""Does the input hold complete statements? Decided by cqlsh's own lexer and splitter.

The same test as cqlsh's `Shell.onecmd`: the last statement ends with an end token, outside a
BATCH and outside a `$$` string. Shell commands that end at a newline (HELP, EXPAND, ...) count
as ended when Enter is pressed, hence the newline added before splitting.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.commands import statement_bounds
from cqlsh_ext.upstream import seams

#: cqlsh's lexer tokens for input that opens something it does not close: what closes each.
_UNCLOSED = {"unclosedString": "'", "unclosedName": '"', "unclosedPgString": "$$", "unclosedComment": "*/"}


def input_state(text: str, ruleset: Any) -> tuple[bool, str | None]:
    """(whether Enter should run `text` instead of starting a new line, what closes a string, quoted
    name or comment left open at its end: ', ", $$, */ or None). A long input is measured
    (commands.statement_bounds.measured: in linear time, once for the toolbar at every keystroke
    and for Enter), not lexed by cqlsh: one past the shell's bounds runs, to be refused in a line."""
    if not text.strip():
        return True, None
    if len(text) > statement_bounds.LEXED_BEFORE_ITS_END:
        measure = statement_bounds.measured(text + "\n", seams.newline_commands())
        if statement_bounds.refusal(measure) is not None:
            return True, None
        return measure.may_end, measure.closes
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
