"""The tokens of a CQL statement, with CQL's literals: 'strings' ('' escapes), $$strings$$, integers
of any size (exact), decimals and floats (as Decimal, exact), "quoted names"; comments (--, //,
/* */) are space. `Lexed` is a statement lexed once and read by everyone: recognition
(query.recognize), the payload-query parser (query.grammar) and its error path, COPY (SELECT ...)'s,
encode()'s and Spark's readers. The Cursor is how the parsers walk the tokens."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from cqlsh_ext.cql.errors import QueryError


@dataclass(frozen=True, slots=True)  # slots: a long statement's million tokens in 100 MB less
class Token:
    kind: str  # word, qname, string, int, decimal, punct, end
    value: str
    start: int
    end: int
    literal: str | int | Decimal | None = None

    def describe(self) -> str:
        return "the end" if self.kind == "end" else repr(self.value)


_TOKEN = re.compile(r"""
    (?P<space>\s+|--[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:[^']|'')*')
  | (?P<dollar>\$\$.*?\$\$)
  | (?P<qname>"(?:[^"]|"")*")
  | (?P<decimal>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<int>\d+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct><=|>=|!=|<>|[=<>(),.\[\]*;\-+:?{}])
""", re.VERBOSE | re.DOTALL)


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise QueryError(f"unexpected character {text[pos]!r} at {pos}")
        kind = m.lastgroup or ""
        raw = m.group()
        pos = m.end()
        if kind == "space":
            continue
        if kind == "string":
            value = raw[1:-1].replace("''", "'")
            tokens.append(Token(kind, value, m.start(), pos, value))
        elif kind == "dollar":
            tokens.append(Token("string", raw[2:-2], m.start(), pos, raw[2:-2]))
        elif kind == "qname":
            tokens.append(Token(kind, raw[1:-1].replace('""', '"'), m.start(), pos))
        elif kind == "int":
            tokens.append(Token(kind, raw, m.start(), pos, int(raw)))
        elif kind == "decimal":
            tokens.append(Token(kind, raw, m.start(), pos, Decimal(raw)))
        else:
            tokens.append(Token(kind, "!=" if raw == "<>" else raw, m.start(), pos))
    tokens.append(Token("end", "", len(text), len(text)))
    return tokens


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

    def peek(self, ahead: int = 0) -> Token:
        at = self.pos + ahead
        tokens = self.tokens
        return tokens[at] if at < len(tokens) else tokens[-1]

    def next(self) -> Token:
        tok = self.peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return tok

    def word(self, ahead: int = 0) -> str:
        """The token's word in lower case; "" when it is not a word."""
        tok = self.peek(ahead)
        return tok.value.lower() if tok.kind == "word" else ""

    def mark(self, value: str, ahead: int = 0) -> bool:
        """Whether the token is the punctuation `value` (not a string or a name that says it)."""
        tok = self.peek(ahead)
        return tok.kind == "punct" and tok.value == value

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
        if tok.kind == "word":
            return tok.value.lower()
        if tok.kind == "qname":
            return tok.value
        raise self.expected(None, tok)

    def expected(self, value: str | None, found: Token) -> Exception:
        """The error raised when `found` is not `value` (a keyword or a punctuation; None: a name)."""
        return QueryError(f"expected {value or 'a name'} at {found.describe()}")
