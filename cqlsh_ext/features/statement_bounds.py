"""The shell's bounds on a statement before cqlsh's parser: no input makes the shell use more than
1 GiB of memory or about 2 s of its own work (CPU) after a statement's end before it is sent or
refused, with `-d none` too, whatever its shape and however it comes (-e, -f, stdin, SOURCE, the
interactive shell); a script's lines cost time in proportion to their number and size.

cqlsh reads a statement with its lexer (linear), then hands every statement whose first word has a
`do_<word>` method (SELECT among them) to its grammar, whose time and memory grow with the square of
the tokens (cql/grammar_bounds.py: a 20,000-key IN list took 7 GiB and was killed), and it parses a
SELECT's text once more after it ran, for the table whose metadata formats the result
(Shell.parse_for_select_meta). Its loop hands onecmd all of the statement read so far at every line,
and its lexer reads it all again: an unclosed comment of 100,000 lines took 123 s. In the order the
shell meets a statement:

1. Its text, as it comes (`StatementSoFar`, before cqlsh's lexer; the scripts' loop is the shell's:
   shell/script.py, which reads a `-f` file and SOURCE's as stdin is read, each character once):
   measured a line at a time, each character once (cql.grammar_bounds.Measure): at most
   STATEMENT_BYTES, STATEMENT_TOKENS (as the shell's lexer splits them) and STATEMENT_LINES, else
   refused in one line at the line that passes the bound; the rest of it (to its end) is dropped
   and the shell goes on. Once cqlsh's lexer has read LEXED_BEFORE_ITS_END characters of it at
   lines where it could not end, a statement is handed to cqlsh's onecmd only at a line where it may
   end (outside strings and comments, nothing after its `;`, a batch at its APPLY BATCH;): its
   lexing costs once, not once a line. A statement of nothing (a lone `;`) is not sent.
2. At the door (ExtShell.handle_statement, on cqlsh's tokens): its brackets' depth, then its tokens
   past what cqlsh's grammar reads (sent whole, or refused for a shell command): shell/door_bounds.py.
3. Input that is not text (`-f` of a binary file, a pipe): one line, and nothing from there on runs
   (shell/script.py).

Completion in the interactive shell runs cqlsh's grammar on the statement being typed, at every
keystroke: past PARSED_TOKENS it offers nothing (`completes`), as a statement that long is never
parsed to run either.

This module measures a statement's text and words its refusal (each function answers what becomes
of the statement, and the line to say), for the shell and the interactive shell alike; the shell
(ExtShell.onecmd, shell/script.py) says the line and sends or refuses.
"""

from __future__ import annotations

from cqlsh_ext.cql import grammar_bounds as bounds

#: One statement's text at most (UTF-8): what the lexers hold of it, whatever its tokens (a string
#: literal of 1 MiB is one).
STATEMENT_BYTES = 1 << 20
#: One statement's tokens at most, as the shell's lexer splits them (cql.lexer: a number, a word, a
#: mark, a string literal is one; a UUID several, `0x...` two): what cqlsh's lexer and the shell's
#: take time for, about 3 µs each on a loaded machine. An IN list of 65,000 numbers or 9,000 UUIDs;
#: a 1 MiB IN list of the key 1 (a token a byte), within the size, took the shell 15 s of CPU
#: (bench/statement_shapes.py measures each shape).
STATEMENT_TOKENS = 1 << 17
#: One statement's lines at most: cqlsh's lexer reads a line's end as a token too, and its loop
#: reads a script a line at a time (a 20,000-key IN list a key a line is 20,000 lines).
STATEMENT_LINES = 1 << 16
#: The characters of a statement cqlsh's lexer may read at lines where it cannot end, as cqlsh's loop
#: does at every line (a lexing error is then said at its line): past them, the statement is handed
#: to cqlsh's onecmd (whose lexer reads all of it again) only at a line where it may end
#: (cql.grammar_bounds.Measure.may_end). A statement typed over a few lines is lexed at each;
#: a 20,000-line IN list once, not 20,000 times.
LEXED_BEFORE_ITS_END = 16 << 10
#: What becomes of a line read (`StatementSoFar.line`): cqlsh's onecmd is handed the statement so far; it
#: cannot end yet; the statement holds nothing to run (space, comments, `;`: cqlsh sent a lone `;`
#: to the server, for a syntax error); it is the rest of a refused statement.
LEX, WAIT, NOTHING, DROPPED = "lex", "wait", "nothing", "dropped"
#: A statement refused (`StatementSoFar.line`, `StatementSoFar.whole`; the shell's door too:
#: shell/door_bounds.admit).
REFUSED = "refused"

#: What a refusal advises instead.
ADVICE = "split it into several statements (a long IN list into several of a few thousand keys each)"


class StatementSoFar:
    """The statement being read, measured as its text comes (cql.grammar_bounds.Measure: each
    character once, at most STATEMENT_BYTES, STATEMENT_TOKENS and STATEMENT_LINES), and the rest of
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
        said = refusal(measure)
        if said is not None:
            self.dropping = not measure.may_end  # measured on, for where it ends
            self.forget()
            return REFUSED, said
        if measure.empty:
            return NOTHING, None
        if not measure.may_end:
            if self.lexed + self.chars > LEXED_BEFORE_ITS_END:
                return WAIT, None
            self.lexed += self.chars
        return LEX, None

    def whole(self, text: str) -> tuple[str, str | None]:
        """What becomes of `text` handed to onecmd whole (the interactive shell's input, measured
        here unless it was line by line): (LEX, REFUSED or NOTHING, the line to say or None)."""
        measure = self.measure if len(text) == self.chars else measured(text, self.newline_words)
        said = refusal(measure)
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


def refusal(measure: bounds.Measure) -> str | None:
    """The line refusing the statement measured so far, when it is over a bound (None: it is not);
    "over" when more of it is still to come."""
    over = "" if measure.may_end else "over "
    if measure.size > STATEMENT_BYTES:
        return (f"Statement refused: {over}{bounds.amount(measure.size)}, more than the shell reads as one "
                f"statement ({bounds.amount(STATEMENT_BYTES)}): {ADVICE}")
    if measure.tokens > STATEMENT_TOKENS:
        return (f"Statement refused: {over}{measure.tokens:,} tokens ({measure.commas:,} commas), more than "
                f"the shell reads as one statement ({STATEMENT_TOKENS:,}: a number, a word, a mark or a "
                f"string is one, a UUID several): {ADVICE}")
    if measure.lines > STATEMENT_LINES:
        return (f"Statement refused: {over}{measure.lines:,} lines, more than the shell reads as one "
                f"statement ({STATEMENT_LINES:,}): {ADVICE}")
    return None


#: The last texts `measured` whole, the latest first, and their measures.
_MEASURED: list[tuple[str, bounds.Measure]] = []


def measured(text: str, newline_words: frozenset[str]) -> bounds.Measure:
    """`text` measured whole (cql.grammar_bounds.Measure), in linear time. The interactive shell
    asks of the same input at every keystroke and at Enter (its toolbar and whether Enter runs it,
    of the input and a line's end; completion, of the text before the cursor; then onecmd): the
    last two texts are measured once."""
    for known, measure in _MEASURED:
        if known == text:
            return measure
    measure = bounds.Measure(newline_words)
    measure.add(text)
    _MEASURED[:] = [(text, measure), *_MEASURED[:1]]
    return measure


def completes(text: str) -> bool:
    """Whether cqlsh's grammar may complete the statement being typed at the end of `text` (the
    text before the cursor): at most PARSED_TOKENS of cqlsh's tokens in it. Measured first, in
    linear time: a text of fewer tokens as the shell's lexer splits them (as many as cqlsh's, or
    more) may; one past LEXED_BEFORE_ITS_END that has more is not lexed by cqlsh (a pasted statement
    of 1 MiB was lexed at every keystroke)."""
    if len(text) <= bounds.PARSED_TOKENS:  # a token is a character at least
        return True
    from cqlsh_ext.upstream.seams import newline_commands, split_statements

    if measured(text, newline_commands()).tokens <= bounds.PARSED_TOKENS:
        return True
    if len(text) > LEXED_BEFORE_ITS_END:
        return False

    try:
        statements = split_statements(text)
    except ValueError:
        return True  # cqlsh's completion offers nothing where its lexer fails
    return not statements or bounds.cqlsh_count(statements[-1])[0] <= bounds.PARSED_TOKENS


