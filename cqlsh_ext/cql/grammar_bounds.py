"""How much of a statement is read before a reader whose cost is not linear in it: the bounds the
shell (shell/statement_bounds.py, before cqlsh's lexer and grammar) and `cqlsh-ext mcp`
(mcp_server/bounds.py, before any parser) share, and the measures they take of a statement.

cqlsh's grammar (pylexotron: what cqlsh's handle_statement runs on every statement it hands to a
`do_<command>` method, SELECT among them, and what it runs again on a SELECT's text to find the
table whose metadata formats the result) takes time and memory that grow with the square of the
statement's tokens, and a parse in progress cannot be stopped: a 20,000-key IN list (40,000 tokens)
took the shell 7 GiB and was killed, and cqlsh-ext mcp 187 s and 7.8 GB. bench/mcp_parse.py
measures each reader by shape and size (docs/mcp.md, "Bounded before parsing"): the lexers (cqlsh's
and the shell's, cql/lexer.py), the gate and the payload parser are linear; cqlsh's grammar costs
about 5.4 bytes times the square of its tokens in its worst shapes (chains of AND, IN lists, long
column lists). At PARSED_TOKENS it takes about 0.5 s of CPU and 90 MB.

- PARSED_TOKENS: cqlsh's lexer's tokens of a statement (a string literal, a UUID, a number is
  one; comments and space none) that cqlsh's grammar is given at most.
- DEPTH: brackets of any kind inside one another. cqlsh's grammar recurses once or more per level
  and runs out of stack at a few hundred, and Cassandra's parser answers StackOverflowError.

The text is measured before any lexer: `size` (UTF-8 bytes), each reader with a bound of its own.
The shell's are a statement's text, measured as it comes, a line at a time, each character once
(`Measure`; a whole text: `measured`), before cqlsh's lexer reads it: at most STATEMENT_BYTES,
STATEMENT_TOKENS (as the shell's lexer splits them) and STATEMENT_LINES, else refused in one line
(`refusal`); past LEXED_BEFORE_ITS_END characters, cqlsh's lexer reads it only where it may end.
The shell (shell/statement_bounds.py) and the interactive shell (cqlsh_ext.repl) read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

PARSED_TOKENS = 4096
DEPTH = 64

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
#: (Measure.may_end). A statement typed over a few lines is lexed at each; a 20,000-line IN list
#: once, not 20,000 times.
LEXED_BEFORE_ITS_END = 16 << 10

#: What a refusal advises instead.
ADVICE = "split it into several statements (a long IN list into several of a few thousand keys each)"

_OPEN, _CLOSE = "([{", ")]}"
_BRACKETS = frozenset(_OPEN + _CLOSE)


class TooLarge(Exception):
    """An input over its bound; str() is the one line the caller is told."""


def size(text: str) -> int:
    """The UTF-8 size of `text` (lone surrogates, which a file or a message may carry, counted too)."""
    return len(text.encode("utf-8", "surrogatepass"))


def amount(count: int) -> str:
    """A size as a bound is said: '128 KiB', '1.3 MiB', '4,000 bytes'."""
    if count >= 1 << 20:
        return f"{count / (1 << 20):.1f} MiB" if count % (1 << 20) else f"{count >> 20} MiB"
    if count >= 1 << 10:
        return f"{count / (1 << 10):.0f} KiB" if count % 1024 == 0 else f"{count:,} bytes"
    return f"{count:,} bytes"


def cqlsh_count(tokens: Sequence[Any]) -> tuple[int, int]:
    """cqlsh's lexer's tokens ((kind, text, (start, end))) of a statement, its end token aside, and
    how many of them are commas (what a long IN or column list is made of)."""
    count = sum(1 for tok in tokens if tok[0] != "endtoken")
    return count, sum(1 for tok in tokens if tok[1] == "," and tok[0] == "op")


def cqlsh_brackets(tokens: Sequence[Any]) -> Iterable[tuple[str, int]]:
    """The brackets among cqlsh's lexer's tokens, each with where it starts (cqlsh's lexer calls
    `(` an op and `[` a bracket: both nest)."""
    # The text first: nearly every token is no bracket, and that alone says so.
    return ((str(tok[1]), tok[2][0]) for tok in tokens
            if tok[1] in _BRACKETS and len(tok) > 2 and tok[0] in ("op", "brackets"))


def lexed_brackets(tokens: Sequence[Any]) -> Iterable[tuple[str, int]]:
    """The brackets among the shell's lexer's tokens (cql.lexer.Token), each with where it starts."""
    return ((tok.value, tok.start) for tok in tokens if tok.kind == "punct" and tok.value in "()[]{}")


def too_deep(brackets: Iterable[tuple[str, int]], limit: int = DEPTH) -> int | None:
    """Where brackets first nest more than `limit` deep (the position of the one too many), or None."""
    depth = 0
    for value, start in brackets:
        if value in _OPEN:
            depth += 1
            if depth > limit:
                return start
        elif value in _CLOSE:
            depth = max(0, depth - 1)
    return None


#: What the Measure looks for outside strings, names and comments: what opens one, a `;`, a line's end.
_MARK = re.compile(r"""'|"|\$\$|/\*|--|//|;|\n""")
#: The shell's lexer's tokens (cql.lexer) of text outside strings, names and comments: its words,
#: numbers and marks; any other character one, as if it were (cqlsh's lexer or ours fails on it).
_COUNTED = re.compile(r"\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?|\d+"
                      r"|[A-Za-z_][A-Za-z0-9_]*|<=|>=|!=|<>|\S")
#: What closes each thing a text may be left inside; a line comment ends at its line's end.
_CLOSER = {"'": "'", '"': '"', "$$": "$$", "/*": "*/"}
_LINE_END = re.compile(r"[\n\r]")
#: A character that may start or end a string, name, comment or statement outside them.
_MAY_TURN = re.compile(r"""['"$/;-]""")


class Measure:
    """A statement's text measured as it accumulates, each character once (a piece at a time, in
    linear time whatever the text): its UTF-8 size, its lines, its tokens as the shell's lexer splits
    them (cql.lexer: a number, a word, a mark, a string literal is one; a UUID several; comments and
    space none), and whether the text read so far may end a statement as cqlsh's onecmd decides
    (`may_end`): outside any string, quoted name, $$ string or comment, no token after its last
    `;` (or after the line's end that ends a shell command ending at its line: `newline_words`,
    cqlsh's commands_end_with_newline), outside a BEGIN ... APPLY BATCH. cqlsh's lexer decides that
    by lexing the whole text again at every line; this decides it for the line added.

    The test is cqlsh's lexer's (cqlsh_ext/cql3handling's terminals: its JUNK, strings and
    endtoken), so a text it says may end is one cqlsh may run; one it says may not end is one
    cqlsh would not run either (where cqlsh's lexer fails on a character, it says so when the
    statement ends instead of at its line)."""

    __slots__ = ("size", "lines", "tokens", "commas", "newline_words", "_inside", "_pending", "_since_end",
                 "_first", "_last", "_batch", "_only_ends", "_ended_by")

    def __init__(self, newline_words: frozenset[str] = frozenset()) -> None:
        self.size = 0
        self.lines = 0
        self.tokens = 0
        self.commas = 0
        self.newline_words = newline_words
        #: What the text is inside at its end ("'", '"', "$$", "/*", "--": a line comment), or None.
        self._inside: str | None = None
        #: The last characters of the text, not yet read: they may start a mark with what follows.
        self._pending = ""
        #: Tokens after the last statement end; the first of them (its command word, lower case);
        #: the last two tokens (cqlsh reads `APPLY BATCH ;` from them).
        self._since_end = 0
        self._first = ""
        self._last: tuple[str, str] = ("", "")
        self._batch = False
        #: No token but `;` so far: nothing to run.
        self._only_ends = True
        #: What ended the last statement: ";", a line's end ("\n": a command ending at its line), or "".
        self._ended_by = ""

    @property
    def may_end(self) -> bool:
        """Whether cqlsh's onecmd may find the text so far a whole (it runs it, or it holds nothing)."""
        return self._inside in (None, "--") and not self._pending and not self._since_end and not self._batch

    @property
    def closes(self) -> str | None:
        """What closes the string, quoted name, $$ string or block comment the text ends inside:
        ', ", $$, */; None outside them."""
        return _CLOSER.get(self._inside or "")

    @property
    def ended_at_its_line(self) -> bool:
        """Whether the text ends with a shell command its line's end ended (HELP, UNDO '...'), nothing
        after it."""
        return self._ended_by == "\n" and self.may_end

    def copy(self) -> Measure:
        """A measure of the same text, measured on apart."""
        other = Measure.__new__(Measure)
        for name in Measure.__slots__:
            setattr(other, name, getattr(self, name))
        return other

    @property
    def empty(self) -> bool:
        """No statement in the text: space, comments and `;` only (nothing for cqlsh to send)."""
        return self._only_ends and self.may_end

    def passes_over(self, piece: str) -> bool:
        """Counts `piece`'s lines and returns True where, added, it could not change whether the
        text may end, nor where: inside a string, name or block comment whose closer it does not
        hold, or inside a statement (tokens since its last end) with no character that starts or
        ends anything. A refused statement's rest is read to its end so (a million lines in a
        second, not five); its tokens and size are not counted (it was refused already). False:
        `add` it."""
        if not piece.endswith("\n") or self._pending:  # (a mark may span it and the next piece)
            return False
        inside = self._inside
        if inside is None:
            if not self._since_end or self._batch or self._first in self.newline_words \
                    or self._last[1].lower() == "apply" or _MAY_TURN.search(piece) \
                    or "apply" in piece.lower():
                return False
            if not piece.isspace():
                # Its tokens, as _count and _end read them: more than one since the end (its size
                # unknown, two more say so), and no `apply` among the last two.
                self._since_end += 2
                self._last = ("", "")
        elif inside == "--" or _CLOSER[inside] in piece:
            return False
        self.lines += 1 + piece.count("\n", 0, -1)
        return True

    def add(self, piece: str) -> None:
        """Measure `piece`, the text that follows what was measured so far."""
        self.size += len(piece) if piece.isascii() else size(piece)
        self.lines += piece.count("\n")
        text = self._pending + piece if self._pending else piece
        self._pending = ""
        pos, end = 0, len(text)
        while pos < end:
            if self._inside is not None:
                pos = self._close(text, pos)
                continue
            found = _MARK.search(text, pos)
            stop = end if found is None else found.start()
            if stop > pos:
                tokens = _COUNTED.findall(text, pos, stop)
                if found is None and tokens and not text[-1].isspace():
                    # The last token may go on in the next piece (a word, a number, `-` of `--`).
                    self._pending = tokens.pop()
                self._count(tokens)
            if found is None:
                return
            mark = found.group()
            pos = found.end()
            if mark == ";":
                self._end(";")
            elif mark == "\n":
                if self._since_end and self._first in self.newline_words:
                    self._end("\n")  # cqlsh reads this line's end as the command's end
            elif mark in ("--", "//"):
                self._inside = "--"
            else:
                self._inside = mark
                if mark != "/*":
                    self._count([mark])

    def _close(self, text: str, pos: int) -> int:
        """Past the end of what the text is inside, from `pos`; the text's end when it goes on."""
        inside = self._inside
        if inside == "--":
            found = _LINE_END.search(text, pos)
            if found is None:
                return len(text)
            self._inside = None
            return found.end()
        closer = _CLOSER[inside or ""]
        at = text.find(closer, pos)
        if at < 0:
            if text.endswith(closer[0]) and len(closer) == 2:  # `$` of `$$`, `*` of `*/`
                self._pending = closer[0]
            return len(text)
        after = at + len(closer)
        if closer in ("'", '"'):
            if after == len(text):
                self._pending = closer  # '' is a quote inside: wait for the next character
                return after
            if text[after] == closer:
                return after + 1
        self._inside = None
        return after

    def _count(self, found: list[str]) -> None:
        if not found:
            return
        if not self._since_end:
            self._first = found[0].lower()
        self._since_end += len(found)
        self.tokens += len(found)
        self.commas += found.count(",")
        self._only_ends = False
        self._last = (self._last[1], found[-1]) if len(found) == 1 else (found[-2], found[-1])

    def _end(self, mark: str) -> None:
        """A statement's end token, as cqlsh's cql_split_statements reads the statements in turn."""
        if mark == ";":
            self.tokens += 1
        if self._since_end >= 2:  # cqlsh: a statement of more than 2 tokens, its end token among them
            if self._last[0].lower() == "apply":
                self._batch = False
            elif self._first == "begin":
                self._batch = True
        self._since_end = 0
        self._first = ""
        self._last = ("", "")
        self._ended_by = mark


def refusal(measure: Measure) -> str | None:
    """The line refusing the statement measured so far, when it is over a bound (None: it is not);
    "over" when more of it is still to come."""
    over = "" if measure.may_end else "over "
    if measure.size > STATEMENT_BYTES:
        return (f"Statement refused: {over}{amount(measure.size)}, more than the shell reads as one "
                f"statement ({amount(STATEMENT_BYTES)}): {ADVICE}")
    if measure.tokens > STATEMENT_TOKENS:
        return (f"Statement refused: {over}{measure.tokens:,} tokens ({measure.commas:,} commas), more than "
                f"the shell reads as one statement ({STATEMENT_TOKENS:,}: a number, a word, a mark or a "
                f"string is one, a UUID several): {ADVICE}")
    if measure.lines > STATEMENT_LINES:
        return (f"Statement refused: {over}{measure.lines:,} lines, more than the shell reads as one "
                f"statement ({STATEMENT_LINES:,}): {ADVICE}")
    return None


#: The last texts `measured` whole, the latest first, and their measures.
_MEASURED: list[tuple[str, Measure]] = []


def measured(text: str, newline_words: frozenset[str]) -> Measure:
    """`text` measured whole (Measure), in linear time. The interactive shell asks of the same input
    at every keystroke and at Enter (its toolbar and whether Enter runs it, of the input and a line's
    end; completion, of the text before the cursor; then onecmd): the last two texts are measured
    once."""
    for known, measure in _MEASURED:
        if known == text:
            return measure
    measure = Measure(newline_words)
    measure.add(text)
    _MEASURED[:] = [(text, measure), *_MEASURED[:1]]
    return measure
