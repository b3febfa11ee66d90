"""The shell's bounds on a statement before cqlsh's parser, checked here: no input makes the shell
use more than 1 GiB of memory or about 2 s of its own work (CPU) after a statement's end before it
is sent or refused, with `-d none` too, whatever its shape and however it comes (-e, -f, stdin,
SOURCE, the interactive shell); a script's lines cost time in proportion to their number and size.

cqlsh reads a statement with its lexer (linear), then hands every statement whose first word has a
`do_<word>` method (SELECT among them) to its grammar, whose time and memory grow with the square of
the tokens (cql/grammar_bounds.py, where the bounds and the measure are: a 20,000-key IN list took
7 GiB and was killed), and it parses a SELECT's text once more after it ran, for the table whose
metadata formats the result (Shell.parse_for_select_meta). Its loop hands onecmd all of the
statement read so far at every line, and its lexer reads it all again: an unclosed comment of
100,000 lines took 123 s. In the order the shell meets a statement:

1. Its text, as it comes (`StatementSoFar`, before cqlsh's lexer; the scripts' loop is the shell's:
   shell/script.py, which reads a `-f` file and SOURCE's as stdin is read, each character once):
   measured a line at a time, each character once (cql.grammar_bounds.Measure): at most
   STATEMENT_BYTES, STATEMENT_TOKENS and STATEMENT_LINES (cql.grammar_bounds), else refused in one
   line at the line that passes the bound; the rest of it (to its end) is dropped and the shell goes
   on. Once cqlsh's lexer has read LEXED_BEFORE_ITS_END characters of it at lines where it could not
   end, a statement is handed to cqlsh's onecmd only at a line where it may end (outside strings and
   comments, nothing after its `;`, a batch at its APPLY BATCH;): its lexing costs once, not once a
   line. A statement of nothing (a lone `;`) is not sent. The interactive shell measures its input
   with the same bounds (cqlsh_ext.repl: statement_end, completer.completes).
2. At its door (ExtShell.handle_statement, on cqlsh's tokens), before cqlsh's grammar reads it:
   - its brackets: at most cql.grammar_bounds.DEPTH inside one another, else refused before
     anything reads or sends it (`too_deep`); each statement of a text that holds several is read
     in its own text (`own_text`), not in all of it;
   - its tokens: past cql.grammar_bounds.PARSED_TOKENS of cqlsh's, cqlsh's grammar never reads it
     (`admit`): a SELECT the claims left, or any statement cqlsh sends as written without a `do_`
     method (INSERT, UPDATE, BATCH, ...), goes to the server whole (`whole_statement`; a SELECT of
     system_traces untraced: `reads_traces`), and the table whose metadata formats its result is
     found by the shell's lexer (cql/lexer.py) where cqlsh would parse the text again
     (`table_of_whole`): the same table, so the same output, byte for byte. A shell command (COPY,
     DESCRIBE, SOURCE, ours) needs cqlsh's grammar: refused in one line.
3. Input that is not text (`-f` of a binary file, a pipe): one line, and nothing from there on runs
   (shell/script.py).

Each function answers what becomes of the statement, and the line to say; the shell
(ExtShell.onecmd and handle_statement, shell/script.py) says it and sends or refuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql import grammar_bounds as bounds

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed

__all__ = ["DROPPED", "LEX", "NOTHING", "PARSE", "REFUSED", "WAIT", "WHOLE", "StatementSoFar", "admit",
           "own_text", "reads_traces", "table_of_whole", "too_deep", "whole_statement"]

#: What becomes of a line read (`StatementSoFar.line`): cqlsh's onecmd is handed the statement so far; it
#: cannot end yet; the statement holds nothing to run (space, comments, `;`: cqlsh sent a lone `;`
#: to the server, for a syntax error); it is the rest of a refused statement.
LEX, WAIT, NOTHING, DROPPED = "lex", "wait", "nothing", "dropped"
#: A statement refused (`StatementSoFar.line`, `StatementSoFar.whole`; the shell's door too:
#: `admit`).
REFUSED = "refused"
#: What handle_statement does with one statement (`admit`): cqlsh's grammar may read it; it is sent
#: as written; REFUSED.
PARSE, WHOLE = "parse", "whole"


class StatementSoFar:
    """The statement being read, measured as its text comes (cql.grammar_bounds.Measure: each
    character once, at most its STATEMENT_BYTES, STATEMENT_TOKENS and STATEMENT_LINES), and the rest of
    a refused one, dropped up to its end. `newline_words`: cqlsh's commands that end at their line.

    The shell's loop for scripts (shell/script.py's `run_script`) hands each line to `line`; the
    interactive shell hands its whole input to `whole` (ExtShell.onecmd)."""

    def __init__(self, newline_words: frozenset[str]) -> None:
        self.newline_words = newline_words
        self.measure = bounds.Measure(newline_words)
        #: Characters measured of the statement so far (ExtShell.onecmd: a text of this length is
        #: the one measured).
        self.chars = 0
        #: Characters of the statement cqlsh's lexer read at lines where it could not end.
        self.lexed = 0
        #: The rest of a statement refused before its end is being read: dropped up to its end.
        self.dropping = False

    def line(self, text: str) -> tuple[str, str | None]:
        """What becomes of the statement now that `text` (a line) was read after what was: (LEX,
        WAIT, NOTHING, REFUSED or DROPPED, the line to say or None)."""
        measure = self.measure
        if self.dropping and measure.passes_over(text):
            return DROPPED, None
        measure.add(text)
        if self.dropping:  # the rest of a refused statement: read to its end, not run, not said again
            if measure.may_end:
                self.dropping = False
                self.forget()
            return DROPPED, None
        self.chars += len(text)
        said = bounds.refusal(measure)
        if said is not None:
            self.dropping = not measure.may_end  # measured on, for where it ends
            self.forget()
            return REFUSED, said
        if measure.empty:
            return NOTHING, None
        if not measure.may_end:
            if self.lexed + self.chars > bounds.LEXED_BEFORE_ITS_END:
                return WAIT, None
            self.lexed += self.chars
        return LEX, None

    def whole(self, text: str) -> tuple[str, str | None]:
        """What becomes of `text` handed to onecmd whole (the interactive shell's input, measured
        here unless it was line by line): (LEX, REFUSED or NOTHING, the line to say or None)."""
        measure = self.measure if len(text) == self.chars else bounds.measured(text, self.newline_words)
        said = bounds.refusal(measure)
        if said is not None:
            self.forget()
            return REFUSED, said
        return (NOTHING if measure.empty else LEX), None

    def forget(self) -> None:
        """Done with the statement being read (run, refused, reset); the rest of a refused one is
        still dropped up to its end (its measure kept: it knows where that is)."""
        self.chars = self.lexed = 0
        if not self.dropping and self.measure.size:
            self.measure = bounds.Measure(self.newline_words)


def own_text(tokens: Any, srcstr: str) -> tuple[Any, str]:
    """One statement's cqlsh tokens and the text they index, from those of a text that holds
    several (cqlsh's onecmd hands every statement of a text all of it, which its handle_statement
    and ours read again: a line of 30,000 statements read 30,000 times): the statement's own
    text, its tokens' places moved to it. A text not much longer than the statement is kept."""
    start, end = tokens[0][2][0], tokens[-1][2][1]
    if len(srcstr) - (end - start) <= bounds.LEXED_BEFORE_ITS_END:
        return tokens, srcstr
    return [(tok[0], tok[1], (tok[2][0] - start, tok[2][1] - start), *tok[3:]) for tok in tokens], \
        srcstr[start:end]


def too_deep(tokens: Any) -> str | None:
    """The line refusing one statement (cqlsh's tokens) that nests brackets past
    cql.grammar_bounds.DEPTH, before anything reads it; None when it does not."""
    at = bounds.too_deep(bounds.cqlsh_brackets(tokens))
    if at is None:
        return None
    return (f"Statement refused: brackets nested more than {bounds.DEPTH} deep (at char {at:,}): "
            "the shell sends no statement nested so deep (Cassandra's parser fails on it)")


def admit(tokens: Any, has_command: Callable[[str], bool]) -> tuple[str, str | None]:
    """What becomes of one statement (cqlsh's tokens) that no claim took: (PARSE (cqlsh's
    grammar may read it), WHOLE (sent as written: ExtShell.send_whole) or REFUSED, the line
    refusing it or None). `has_command(word)`: the shell has a `do_<word>` method (a command its
    grammar must read)."""
    count, commas = bounds.cqlsh_count(tokens)
    if count <= bounds.PARSED_TOKENS:
        return PARSE, None
    word = str(tokens[0][1]).lower()
    if word == "select" or not has_command(word):
        return WHOLE, None
    return REFUSED, (f"{word.upper()} refused: its {count:,} tokens ({commas:,} commas) are more than "
                     f"cqlsh's parser reads ({bounds.PARSED_TOKENS:,}; its time and memory grow with "
                     f"their square): {bounds.ADVICE}")


def whole_statement(tokens: Any, srcstr: str, statement: Lexed | None) -> Lexed:
    """The statement to send whole (ExtShell.send_whole): as the claims read it when they
    did (lexed once, when at all: it is read again for the table of its result), else its text
    from cqlsh's tokens."""
    if statement is not None:
        return statement
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.upstream.seams import statement_text

    return Lexed(statement_text(tokens, srcstr))


def reads_traces(tokens: Any, statement: Lexed, keyspace: str | None) -> bool:
    """A SELECT of system_traces (named, or the keyspace in use): sent without tracing it, as cqlsh's
    do_select does."""
    from cqlsh_ext.query.recognize import table_of

    if str(tokens[0][1]).lower() != "select":
        return False
    named = table_of(statement)
    named_keyspace = named[0] if named is not None else None
    return named_keyspace == "system_traces" or (named_keyspace is None and keyspace == "system_traces")


def table_of_whole(sent: Lexed | None, query_string: str, written: bool) -> tuple[bool, Any]:
    """(True, the ([keyspace], table) a statement sent whole reads, or `written` writes, or None),
    found by the shell's lexer as cqlsh's parse_for_select_meta (parse_for_update_meta) finds it by
    its grammar; (False, None) for any other statement (cqlsh's own way then). `sent`: the
    statement being sent whole, if any."""
    if sent is None or query_string != sent.text:
        return False, None
    from cqlsh_ext.query.recognize import table_of

    return True, _written_table(sent) if written else table_of(sent)


def _written_table(statement: Lexed) -> tuple[str | None, str] | None:
    """([keyspace], table) the first INSERT INTO, UPDATE or DELETE ... FROM of a statement (a batch's
    first) writes, or None."""
    tokens = statement.tokens
    for i, tok in enumerate(tokens[:-1]):
        word = tok.value.lower() if tok.kind == "word" else ""
        if word in ("into", "update", "from") and tokens[i + 1].kind in ("word", "qname"):
            names = [t.name for t in tokens[i + 1:i + 4:2]]
            if tokens[i + 2].kind == "punct" and tokens[i + 2].value == "." and len(names) == 2:
                return names[0], names[1]
            return None, names[0]
    return None
