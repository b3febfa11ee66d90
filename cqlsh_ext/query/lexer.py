"""The tokens of a CQL SELECT, with CQL's literals: 'strings' ('' escapes), $$strings$$, integers
of any size (exact), decimals and floats (as Decimal, exact), "quoted names"."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from cqlsh_ext.query.errors import QueryError


@dataclass(frozen=True)
class Token:
    kind: str  # word, qname, string, int, decimal, punct, end
    value: str
    start: int
    end: int
    literal: str | int | Decimal | None = None

    def describe(self) -> str:
        return "the end" if self.kind == "end" else repr(self.value)


_TOKEN = re.compile(r"""
    (?P<space>\s+|--[^\n]*|//[^\n]*)
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
