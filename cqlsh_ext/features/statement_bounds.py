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

1. Its text, as it comes (`StatementSoFar`, before cqlsh's lexer; the scripts' loop is `run_script`):
   measured a line at a time, each character once (cql.grammar_bounds.Measure): at most
   STATEMENT_BYTES, STATEMENT_TOKENS (as the shell's lexer splits them) and STATEMENT_LINES, else
   refused in one line at the line that passes the bound; the rest of it (to its end) is dropped
   and the shell goes on. Once cqlsh's lexer has read LEXED_BEFORE_ITS_END characters of it at
   lines where it could not end, a statement is handed to cqlsh's onecmd only at a line where it may
   end (outside strings and comments, nothing after its `;`, a batch at its APPLY BATCH;): its
   lexing costs once, not once a line. A statement of nothing (a lone `;`) is not sent.
2. Its brackets (handle_statement, on cqlsh's tokens): at most cql.grammar_bounds.DEPTH inside one another,
   else refused before anything reads or sends it (cqlsh's grammar and our parsers recurse on them;
   Cassandra's parser answers StackOverflowError). Each statement of a text that holds several is
   read in its own text (`own_text`), not in all of it.
3. Its tokens: past cql.grammar_bounds.PARSED_TOKENS of cqlsh's, cqlsh's grammar never reads it. The
   intercepts (payload queries, exports, DESCRIBE PAYLOAD, encode(), edits: linear readers) take it
   first; a SELECT they leave, or any statement cqlsh sends as written without a `do_` method
   (INSERT, UPDATE, BATCH, ...), goes to the server whole as cqlsh sends a statement its grammar
   does not read (handle_parse_error), and the table whose metadata formats its result is found by
   the shell's lexer (cql/lexer.py) where cqlsh would parse the text again (`table_of_whole`): the
   same table, so the same output, byte for byte. A shell command (COPY, DESCRIBE, SOURCE, ours)
   needs cqlsh's grammar: refused in one line.
4. Input that is not text (`-f` of a binary file, a pipe): one line, and nothing from there on runs.

Completion in the interactive shell runs cqlsh's grammar on the statement being typed, at every
keystroke: past PARSED_TOKENS it offers nothing (`completes`), as a statement that long is never
parsed to run either.

This module decides and words it (each function answers what becomes of the statement, and the
line to say), and runs cqlsh's loop of scripts on it (`run_script`); the shell (cqlsh_ext.shell.ExtShell:
onecmd, handle_statement, get_input_line, parse_for_select_meta) keeps the reading, says the line and
sends or refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.cql import grammar_bounds as bounds

if TYPE_CHECKING:
    import io
    from contextlib import AbstractContextManager

    from cqlsh_ext.cql.lexer import Lexed

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
#: What handle_statement does with one statement (`admit`).
PARSE, WHOLE, REFUSED = "parse", "whole", "refused"

#: What a line of nothing to run holds (space, `;`).
_NOTHING = " \t\r\n\f\v;"
_ADVICE = "split it into several statements (a long IN list into several of a few thousand keys each)"


class StatementSoFar:
    """The statement being read, measured as its text comes (cql.grammar_bounds.Measure: each
    character once, at most STATEMENT_BYTES, STATEMENT_TOKENS and STATEMENT_LINES), and the rest of
    a refused one, dropped up to its end. `newline_words`: cqlsh's commands that end at their line.

    The shell's loop for scripts (`run_script`) hands each line to `line`; the interactive
    shell hands its whole input to `whole` (ExtShell.onecmd)."""

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
                f"statement ({bounds.amount(STATEMENT_BYTES)}): {_ADVICE}")
    if measure.tokens > STATEMENT_TOKENS:
        return (f"Statement refused: {over}{measure.tokens:,} tokens ({measure.commas:,} commas), more than "
                f"the shell reads as one statement ({STATEMENT_TOKENS:,}: a number, a word, a mark or a "
                f"string is one, a UUID several): {_ADVICE}")
    if measure.lines > STATEMENT_LINES:
        return (f"Statement refused: {over}{measure.lines:,} lines, more than the shell reads as one "
                f"statement ({STATEMENT_LINES:,}): {_ADVICE}")
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


def nothing_to_run(line: str) -> bool:
    """Whether a line holds nothing to run (space, `;`): with nothing before it, the scripts' loop
    passes it at once (a million lines of `;`)."""
    return not line.strip(_NOTHING)


def own_text(tokens: Any, srcstr: str) -> tuple[Any, str]:
    """One statement's cqlsh tokens and the text they index, from those of a text that holds
    several (cqlsh's onecmd hands every statement of a text all of it, which its handle_statement
    and ours read again: a line of 30,000 statements read 30,000 times): the statement's own
    text, its tokens' places moved to it. A text not much longer than the statement is kept."""
    start, end = tokens[0][2][0], tokens[-1][2][1]
    if len(srcstr) - (end - start) <= LEXED_BEFORE_ITS_END:
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
    """What becomes of one statement (cqlsh's tokens) that no intercept took: (PARSE (cqlsh's
    grammar may read it), WHOLE (sent as written: ExtShell._send_whole) or REFUSED, the line
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
                     f"their square): {_ADVICE}")


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


def whole_statement(tokens: Any, srcstr: str, statement: Lexed | None) -> Lexed:
    """The statement to send whole (ExtShell._send_whole): as the intercepts read it when they
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
            names = [t.value.lower() if t.kind == "word" else t.value for t in tokens[i + 1:i + 4:2]]
            if tokens[i + 2].kind == "punct" and tokens[i + 2].value == "." and len(names) == 2:
                return names[0], names[1]
            return None, names[0]
    return None


def unreadable_input(err: UnicodeDecodeError, lineno: int) -> str:
    """The line for input that is not text in its encoding (a binary file given to -f), at cqlsh's
    line number `lineno`: the shell drops the statement read so far and reads nothing from there
    on."""
    read = lineno - 1  # cqlsh counts from 1, and a line once it is read
    return (f"not {err.encoding} text (byte 0x{err.object[err.start]:02x}: {err.reason}) after "
            f"{read:,} line{'' if read == 1 else 's'} read: nothing from there on is run")


class ScriptLoop(Protocol):
    """What the scripts' loop (`run_script`) uses of the shell: cqlsh's reading of a script's lines
    (its statement so far, its prompts, onecmd, its end of input) and the statement's bounds."""

    statement_reading: StatementSoFar
    statement: io.StringIO
    stop: bool
    single_statement: str | None
    prompt: str

    def prepare_loop(self) -> AbstractContextManager[Any]: ...
    def get_input_line(self, prompt: str = "") -> str: ...
    def onecmd(self, statementtext: str) -> Any: ...
    def reset_statement(self) -> None: ...
    def set_continue_prompt(self) -> None: ...
    def handle_eof(self) -> None: ...
    def printerr(self, text: Any, *args: Any, **kwargs: Any) -> None: ...


def run_script(loop: ScriptLoop, cql_errors: tuple[type[BaseException], ...]) -> None:
    """cqlsh's cmdloop (upstream.seams.COPIED pins it: -e, -f, stdin, SOURCE, --classic), each line
    measured (StatementSoFar) before anything lexes it. cqlsh's loop hands onecmd all of the
    statement read so far at every line, and its lexer reads it all again (an unclosed comment of
    100,000 lines took 123 s): here onecmd is handed it only where it may end, a statement past a
    bound is refused at the line that passes it, and one of nothing to run (a lone `;`) is not sent.
    `cql_errors`: what cqlsh's loop says in one line (cqlshmain.CQL_ERRORS)."""
    reading = loop.statement_reading
    with loop.prepare_loop():
        while not loop.stop:
            try:
                if loop.single_statement:
                    line = loop.single_statement
                    loop.stop = True
                else:
                    line = loop.get_input_line(loop.prompt)
                if nothing_to_run(line) and not reading.dropping and not loop.statement.tell():
                    continue  # nothing to run, nothing before it (a million lines of `;`: at once)
                way, said = reading.line(line)
                if said is not None:
                    loop.printerr(said)
                if way == LEX:
                    loop.statement.write(line)
                    if loop.onecmd(loop.statement.getvalue()):
                        loop.reset_statement()
                elif way == WAIT:
                    loop.statement.write(line)
                    loop.set_continue_prompt()
                elif way == REFUSED or loop.statement.tell():
                    loop.reset_statement()
                else:  # nothing read before it: nothing to reset
                    reading.forget()
            except EOFError:
                loop.handle_eof()
            except cql_errors as cqlerr:
                loop.printerr(getattr(cqlerr, "message", str(cqlerr)))
            except KeyboardInterrupt:
                loop.reset_statement()
                print("")
