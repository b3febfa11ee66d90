"""The tokens of a CQL statement, with CQL's literals: 'strings' ('' escapes), $$strings$$, integers
(exact; past Python's int-string limit left unread, None), decimals and floats (as Decimal, exact),
"quoted names"; comments (--, //,
/* */) are space. `Lexed` is a statement lexed once and read by everyone: recognition
(query.recognize), the payload-query parser (query.grammar) and its error path, COPY (SELECT ...)'s,
encode()'s and Spark's readers. The Cursor is how the parsers walk the tokens."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from cqlsh_ext.cql.errors import QueryError


# slots: a long statement's million tokens in 100 MB less. Compared and hashed by value as a frozen
# dataclass is, but not frozen: a frozen one's __init__ sets each field through object.__setattr__,
# 1.4 us a token more (0.17 s of a 20,000-condition chain's 120,000 tokens). Nothing changes a token.
@dataclass(slots=True, unsafe_hash=True)
class Token:
    kind: str  # word, qname, string, int, decimal, punct, end
    value: str
    start: int
    end: int
    literal: str | int | Decimal | None = None

    def describe(self) -> str:
        return "the end" if self.kind == "end" else repr(self.value)

    @property
    def name(self) -> str:
        """A name token as the schema spells it: a word in lower case, a "quoted name" as written."""
        return self.value.lower() if self.kind == "word" else self.value


#: Space and comments: what may come before a token. A `--` or `//` comment ends at a newline or a
#: carriage return, a `/* */` one at its first `*/` (not nested), as Cassandra's lexer ends them
#: (src/antlr/Lexer.g: COMMENT, MULTILINE_COMMENT).
_SPACE = r"(?:\s+|--[^\n\r]*|//[^\n\r]*|/\*.*?\*/)*"
_SPACE_RE = re.compile(_SPACE, re.DOTALL)
#: A token with the space before it, one match a token (half the matches of a space a match). The
#: space is read in a lookahead and taken by a back-reference: atomically (Python 3.10 has no
#: atomic groups), so a token is never found by reading a comment's or a space's end otherwise.
_TOKEN = re.compile(r"""
    (?=(?P<space>""" + _SPACE + r"""))(?P=space)
    (?:
    (?P<string>'(?:[^']|'')*')
  | (?P<dollar>\$\$.*?\$\$)
  | (?P<qname>"(?:[^"]|"")*")
  | (?P<decimal>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
  | (?P<int>[0-9]+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct><=|>=|!=|<>|[=<>(),.\[\]*;\-+:?{}])
    )
""", re.VERBOSE | re.DOTALL)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    append, match, size = tokens.append, _TOKEN.match, len(text)
    pos = 0
    while pos < size:
        m = match(text, pos)
        if m is None:  # space to the end, or a character that starts no token after the space
            space = _SPACE_RE.match(text, pos)  # (it matches "" at least)
            pos = space.end() if space is not None else pos
            if pos < size:
                raise QueryError(f"unexpected character {text[pos]!r} at {pos}")
            break
        kind = m.lastgroup or ""
        raw = m.group(kind)
        start, pos = m.start(kind), m.end()
        if kind == "word":  # the most common first: a chain of conditions is words and marks
            append(Token(kind, raw, start, pos))
        elif kind == "punct":
            append(Token(kind, "!=" if raw == "<>" else raw, start, pos))
        elif kind == "string":
            value = raw[1:-1].replace("''", "'")
            append(Token(kind, value, start, pos, value))
        elif kind == "dollar":
            append(Token("string", raw[2:-2], start, pos, raw[2:-2]))
        elif kind == "qname":
            append(Token(kind, raw[1:-1].replace('""', '"'), start, pos))
        elif kind == "int":
            append(Token(kind, raw, start, pos, _integer(raw)))
        else:  # decimal
            append(Token(kind, raw, start, pos, _decimal(raw)))
    append(Token("end", "", size, size))
    return tokens


def _integer(raw: str) -> int | None:
    """An integer literal's value; None past Python's int-string limit (a reader that takes such a
    number says how long it may be: query.grammar)."""
    try:
        return int(raw)
    except ValueError:
        return None


def _decimal(raw: str) -> Decimal | None:
    """A decimal literal's value; None for one whose exponent no decimal holds (1.5e999999999999999999999:
    Decimal() raises InvalidOperation), which a reader that takes numbers refuses in its words."""
    try:
        return Decimal(raw)
    except ArithmeticError:
        return None


class Lexed:
    """A statement's text and its tokens, lexed on first use and once: whoever reads the statement
    after that reads these tokens. `text` is what the tokens' positions index, the statement or a
    text it is part of (`part`: the SELECT inside COPY ( ... ), a statement of a script); `tokens`
    are the statement's, the end token last."""

    __slots__ = ("text", "_tokens", "_error")

    def __init__(self, text: str, tokens: list[Token] | None = None) -> None:
        self.text = text
        self._tokens = tokens
        self._error: str | None = None

    @property
    def tokens(self) -> list[Token]:
        """Raises QueryError when the text does not lex (said again on each use, not lexed again)."""
        if self._tokens is None:
            if self._error is None:
                try:
                    self._tokens = tokenize(self.text)
                except QueryError as err:
                    self._error = str(err)
            if self._tokens is None:
                raise QueryError(self._error)
        return self._tokens

    def __repr__(self) -> str:
        return f"Lexed({self.text!r})"

    def spanned(self) -> str:
        """The text from its first token to its last (a `;`, a comment or space after it left
        out): what the server is sent of it, the tokens read and no more."""
        tokens = self.tokens
        return self.text[tokens[0].start:tokens[-2].end] if len(tokens) > 1 else ""

    def part(self, first: int, stop: int) -> Lexed:
        """The statement made of tokens[first:stop], in the same text; its end token sits where
        tokens[stop] starts."""
        tokens = self.tokens
        end = tokens[stop].start
        return Lexed(self.text, [*tokens[first:stop], Token("end", "", end, end)])


def lexed(statement: Lexed | str) -> Lexed:
    """`statement` as a Lexed: a text (a test's, an offline caller's) is lexed here."""
    return statement if isinstance(statement, Lexed) else Lexed(statement)


class Cursor:
    """A position in a statement's tokens, never past the end token. A parser subclasses it and
    says its own errors (`expected`)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self._questions: list[int] | None = None

    def questions_before(self, at: int) -> int:
        """How many `?` markers are among the tokens before token `at` (a marker's index): their
        places found once, each asked in log time (counting them again at each marker of an IN
        list of 20,000 took 17 s)."""
        if self._questions is None:
            self._questions = [i for i, t in enumerate(self.tokens) if t.kind == "punct" and t.value == "?"]
        import bisect

        return bisect.bisect_left(self._questions, at)

    def peek(self, ahead: int = 0) -> Token:
        at = self.pos + ahead
        tokens = self.tokens
        return tokens[at] if at < len(tokens) else tokens[-1]

    def next(self) -> Token:
        # peek() and a step, without its calls: parsers call this once a token (a chain of 20,000
        # conditions is 120,000)
        pos, tokens = self.pos, self.tokens
        last = len(tokens) - 1
        if pos < last:
            self.pos = pos + 1
            return tokens[pos]
        self.pos = last
        return tokens[last]

    def word(self, ahead: int = 0) -> str:
        """The token's word in lower case; "" when it is not a word."""
        tok = self.peek(ahead)
        return tok.value.lower() if tok.kind == "word" else ""

    def mark(self, value: str, ahead: int = 0) -> bool:
        """Whether the token is the punctuation `value` (not a string or a name that says it)."""
        at, tokens = self.pos + ahead, self.tokens
        tok = tokens[at] if at < len(tokens) else tokens[-1]
        return tok.value == value and tok.kind == "punct"

    def take(self, *words: str) -> bool:
        """Past the next token when it is one of `words` (lower case)."""
        if self.word() in words:
            self.next()
            return True
        return False

    def expect(self, value: str) -> Token:
        """The next token, which must be the keyword or punctuation `value`."""
        tok = self.next()
        if tok.value.lower() != value.lower() or tok.kind in ("string", "qname"):
            raise self.expected(value, tok)
        return tok

    def statement_end(self) -> tuple[bool, bool]:
        """A payload statement's last words, `[ALLOW FILTERING] [CONFIRM] [;]`, then its end:
        (ALLOW FILTERING given, CONFIRM given); anything after them is a QueryError."""
        allow = self.take("allow")
        if allow:
            self.expect("filtering")
        confirm = self.take("confirm")
        if self.mark(";"):
            self.next()
        if self.peek().kind != "end":
            raise QueryError(f"unexpected {self.peek().describe()}")
        return allow, confirm

    def name(self) -> str:
        """A name: a word in lower case, a "quoted name" as written."""
        tok = self.next()
        if tok.kind in ("word", "qname"):
            return tok.name
        raise self.expected(None, tok)

    def expected(self, value: str | None, found: Token) -> Exception:
        """The error raised when `found` is not `value` (a keyword or a punctuation; None: a name)."""
        return QueryError(f"expected {value or 'a name'} at {found.describe()}")
