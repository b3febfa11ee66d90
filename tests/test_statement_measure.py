"""cql.grammar_bounds.Measure, the shell's measure of a statement as its lines come, against the
readers it stands in for: whether a text may end a statement is what cqlsh's own onecmd decides
(its lexer and splitter, on the whole text: strings, quoted names, $$ strings, comments, BEGIN ...
APPLY BATCH, the shell commands that end at their line), however the text is cut into pieces; its
tokens are those of the shell's lexer (cql.lexer). Texts made of the pieces those readers treat
apart, in a fixed random order (the same texts every run)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.grammar_bounds import Measure
from cqlsh_ext.cql.lexer import tokenize
from cqlsh_ext.upstream import seams

#: What opens, closes or ends something, and what does not.
PIECES = ["'", '"', "$$", "$", "/*", "*/", "*", "/", "--", "-", "//", ";", "\n", "\r", " ", "\t", "''", '""',
          "a", "1", "1.5", "e5", "0x", "<", "=", ",", "(", ")", "x", "é", "SELECT", "HELP", "DESC", "BEGIN",
          "BATCH", "APPLY", "apply batch", "begin batch"]
#: Whole tokens, for counting.
TOKENS = ["'a b'", '"Q"', "$$x$$", "/* c */", "-- c\n", ";", "\n", " ", "abc", "12", "1.5", "1e5", ".5", "<=",
          "<>", "!=", "(", ")", ",", ".", "-", "+", "[", "]", "*", "?", ":", "{", "}", "0x1f", "5055-d6e",
          "'it''s'", '"a""b"']


@pytest.fixture(scope="module", autouse=True)
def ruleset() -> Any:
    """cqlsh's grammar as its main() sets it up (our commands among its own)."""
    from cqlshlib import cql3handling

    from cqlsh_ext.shell.completion import register_grammar

    cqlshmain = seams.import_cqlshmain(None)
    register_grammar()
    if cqlshmain.cqlruleset is None:
        cqlshmain.setup_cqlruleset(cql3handling)
    return cqlshmain.cqlruleset


def _cqlsh_ends(text: str) -> bool | None:
    """cqlsh's onecmd's decision: the text runs (or holds nothing); None where its lexer fails."""
    from cqlshlib import pylexotron

    ruleset = seams.import_cqlshmain(None).cqlruleset
    try:
        statements, open_block = ruleset.cql_split_statements(text)
    except pylexotron.LexingError:
        return None
    while statements and not statements[-1]:
        statements = statements[:-1]
    return not statements or (not open_block and statements[-1][-1][0] == "endtoken")


def _measured(text: str, cuts: list[int]) -> Measure:
    measure = Measure(seams.newline_commands())
    last = 0
    for cut in [*cuts, len(text)]:
        measure.add(text[last:cut])
        last = cut
    return measure


def test_a_text_may_end_where_cqlsh_would_run_it_however_it_is_cut() -> None:
    chance = random.Random(73)
    compared = 0
    for _ in range(6_000):
        text = "".join(chance.choice(PIECES) for _ in range(chance.randint(1, 14)))
        cuts = sorted(chance.sample(range(1, len(text)), min(len(text) - 1, chance.randint(0, 4)))) \
            if len(text) > 1 else []
        wanted = _cqlsh_ends(text)
        if wanted is None:
            continue
        compared += 1
        assert _measured(text, cuts).may_end == wanted, (text, cuts)
    assert compared > 4_000


def test_passing_over_a_line_never_changes_where_a_text_may_end() -> None:
    """A refused statement's rest is passed over where passes_over says a line cannot change
    whether the text may end: line by line, the text so far may end exactly where cqlsh's onecmd
    would run it, with each line passed over or added (and some lines are passed over)."""
    chance = random.Random(74)
    compared = passed = 0
    for _ in range(4_000):
        lines = ["".join(chance.choice(PIECES) for _ in range(chance.randint(0, 6))).replace("\n", "") + "\n"
                 for _ in range(chance.randint(1, 6))]
        measure, text = Measure(seams.newline_commands()), ""
        for line in lines:
            text += line
            if measure.passes_over(line):
                passed += 1
            else:
                measure.add(line)
            wanted = _cqlsh_ends(text)
            if wanted is not None:
                compared += 1
                assert measure.may_end == wanted, lines
    assert compared > 4_000 and passed > 500, (compared, passed)


def test_its_tokens_are_the_shell_lexers() -> None:
    chance = random.Random(7)
    compared = 0
    for _ in range(3_000):
        text = "".join(chance.choice(TOKENS) for _ in range(chance.randint(1, 20))) + "\n"
        try:
            wanted = len(tokenize(text)) - 1  # the end token aside
        except QueryError:
            continue
        compared += 1
        measure = _measured(text, [i + 1 for i, ch in enumerate(text[:-1]) if ch == "\n"])  # a line at a time
        assert measure.tokens == wanted, text
    assert compared > 2_000


def test_its_size_and_lines() -> None:
    measure = _measured("SELECT 'é'\n;\n", [4, 11])
    assert (measure.size, measure.lines, measure.may_end) == (len("SELECT 'é'\n;\n".encode()), 2, True)


def test_a_line_ends_a_command_where_cqlsh_ends_it_there() -> None:
    # What a paste joins (repl.statement_end.pasted): whether a newline after the text ends its last
    # statement, a shell command ending at its line (cqlsh: its end token is the line's end).
    from cqlshlib import pylexotron

    ruleset = seams.import_cqlshmain(None).cqlruleset
    chance = random.Random(11)
    compared = 0
    for _ in range(3_000):
        text = "".join(chance.choice(PIECES) for _ in range(chance.randint(1, 10)))
        try:
            statements, open_block = ruleset.cql_split_statements(text + "\n")
        except pylexotron.LexingError:
            continue
        while statements and not statements[-1]:
            statements = statements[:-1]
        last = statements[-1][-1] if statements else None
        wanted = bool(last is not None and not open_block and last[0] == "endtoken"
                      and "\n" in str(last[1]) and ";" not in str(last[1]))
        measure = _measured(text, [])
        after = measure.copy()
        after.add("\n")
        compared += 1
        assert after.ended_at_its_line == wanted, text
    assert compared > 2_000
