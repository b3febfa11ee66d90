"""Does the input hold complete statements? Decided by cqlsh's own lexer and splitter.

The same test as cqlsh's `Shell.onecmd`: the last statement ends with an end token, outside a
BATCH and outside a `$$` string. Shell commands that end at a newline (HELP, EXPAND, UNDO, ...)
count as ended when Enter is pressed, hence the newline added before splitting.

A paste of several lines (`pasted`): a line that starts with blanks continues the line before when
that line is a command that would end at its newline, as a hint wrapped on a narrow screen is
shown (`UNDO '...'` / `    CONFIRM`), so that what was copied runs as one statement.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.cql import grammar_bounds as bounds

#: cqlsh's lexer tokens for input that opens something it does not close: what closes each.
_UNCLOSED = {"unclosedString": "'", "unclosedName": '"', "unclosedPgString": "$$", "unclosedComment": "*/"}


def input_state(text: str, ruleset: Any) -> tuple[bool, str | None]:
    """(whether Enter should run `text` instead of starting a new line, what closes a string, quoted
    name or comment left open at its end: ', ", $$, */ or None). A long input is measured
    (cql.grammar_bounds.measured: in linear time, once for the toolbar at every keystroke
    and for Enter), not lexed by cqlsh: one past the shell's bounds runs, to be refused in a line."""
    if not text.strip():
        return True, None
    if len(text) > bounds.LEXED_BEFORE_ITS_END:
        measure = bounds.measured(text + "\n", frozenset(ruleset.commands_end_with_newline))
        if bounds.refusal(measure) is not None:
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


def pasted(before: str, data: str, ruleset: Any) -> str:
    """`data` pasted after `before` (the input so far): a line that starts with blanks joined to
    the line before it with one space where that line's command would otherwise end at the
    newline (see the module doc); every other line break kept as pasted. The text is measured as
    the lines come (cql.grammar_bounds.Measure: each character once), not lexed again for each."""
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    measure = bounds.Measure(frozenset(ruleset.commands_end_with_newline))
    measure.add(before)
    measure.add(lines[0])
    out = [lines[0]]
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and line.strip() and _ends_at_newline(measure):
            out[-1] = out[-1].rstrip()
            out.append(" " + line.strip())
            measure.add(out[-1])
        else:
            out.append("\n" + line)
            measure.add(out[-1])
    return "".join(out)


def _ends_at_newline(measure: Any) -> bool:
    """Whether a newline after the text `measure` measured would end its last statement (a command
    that ends at a newline, not ended by ';')."""
    after = measure.copy()
    after.add("\n")
    return bool(after.ended_at_its_line)
