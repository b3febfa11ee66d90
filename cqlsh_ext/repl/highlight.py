"""Syntax highlighting from cqlsh's own lexer (no Pygments: prompt_toolkit does not need it).

cqlsh's lexer marks reserved words and literals; the rest of the keywords, including shell
commands and ours (DECOMPRESS, OUTPUT), are taken from the literal words of the grammar itself, so
highlighting follows what the parser accepts. Whitespace and comments are dropped by the lexer
("JUNK"): they are the gaps between tokens, and a gap starting with a comment marker is a comment.

In a SELECT, a payload path (`data.status`, `data."order-id"`, `data.items[0].sku`, `m['k'].n`) is
one token, `class:cql.path`: a key spelt like a keyword (`data.key`) is not coloured as one. It is
told by its shape alone (a name followed by `.name`, `."name"`, `[n]` or `['k']` steps, written
without spaces, not after FROM), with no schema lookup: `u.field` of a UDT is shown the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.styles import Style

from cqlsh_ext.upstream.seams import grammar_literals

TOKEN_CLASSES = {
    "reserved_identifier": "class:cql.keyword",
    "quotedStringLiteral": "class:cql.string",
    "pgStringLiteral": "class:cql.string",
    "unclosedString": "class:cql.string",
    "unclosedPgString": "class:cql.string",
    "quotedName": "class:cql.name",
    "unclosedName": "class:cql.name",
    "wholenumber": "class:cql.number",
    "float": "class:cql.number",
    "uuid": "class:cql.number",
    "blobLiteral": "class:cql.number",
    "unclosedComment": "class:cql.comment",
    "op": "class:cql.operator",
    "cmp": "class:cql.operator",
    "star": "class:cql.operator",
    "brackets": "class:cql.operator",
    "endtoken": "class:cql.operator",
}

#: The longest input highlighted: cqlsh's lexer reads all of it at every keystroke (about 0.1 s for
#: 64 KiB; a pasted statement of 1 MiB took seconds a key). A longer one is shown without colours.
HIGHLIGHTED = 64 << 10

STYLE = {
    "cql.keyword": "bold ansiblue",
    "cql.string": "ansigreen",
    "cql.name": "ansiyellow",
    "cql.number": "ansimagenta",
    "cql.comment": "italic ansibrightblack",
    "cql.operator": "",
    "cql.path": "ansicyan",
    "cql.error": "bg:ansired ansiwhite",
    "bottom-toolbar": "noreverse bg:ansibrightblack ansiwhite",
    "bottom-toolbar.key": "bold",
    "bottom-toolbar.warn": "bold ansiyellow",
    "completion-menu.meta.completion": "italic",
}


def style() -> Style:
    return Style.from_dict(STYLE)


def private_scanner(ruleset: Any) -> Callable[[str], tuple[list[Any], str]]:
    """cqlsh's token scanner for our own use.

    cqlsh's scanner object keeps per-scan state (see completer.py), so highlighting gets its own
    copy; the copy shares the compiled expression, which takes ~20 ms to build.
    """
    ruleset.lex("")  # builds cqlsh's scanner if it is not built yet
    shared = getattr(ruleset.scanner, "__self__", None)
    if shared is None:
        return ruleset.make_lexer()
    return copy.copy(shared).scan


class CqlLexer(Lexer):
    """Highlighting with cqlsh's own tokens; scanner and keyword set are built on the first
    non-empty input (~15 ms), so they are not part of start-up."""

    def __init__(self, ruleset: Any) -> None:
        self.ruleset = ruleset
        self.scan: Callable[[str], tuple[list[Any], str]] | None = None
        self.keywords: frozenset[str] = frozenset()

    def fragments(self, text: str) -> StyleAndTextTuples:
        if not text:
            return []
        if len(text) > HIGHLIGHTED:
            return [("", text)]
        if self.scan is None:
            self.scan = private_scanner(self.ruleset)
            self.keywords = grammar_literals(self.ruleset)
        tokens, unmatched = self.scan(text)
        out: StyleAndTextTuples = []
        pos = 0
        for kind, value, (start, end) in _paths_joined(tokens, text):
            if start > pos:
                out.extend(_gap(text[pos:start]))
            if kind == "path":
                out.append(("class:cql.path", value))
            elif kind == "identifier" and value.lower() in self.keywords:
                out.append(("class:cql.keyword", value))
            else:
                out.append((TOKEN_CLASSES.get(kind, ""), value))
            pos = end
        rest_start = len(text) - len(unmatched)
        if rest_start > pos:
            out.extend(_gap(text[pos:rest_start]))
        if unmatched:
            out.append(("class:cql.error", unmatched))
        return out

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        lines = list(_split_lines(self.fragments(document.text)))

        def get_line(lineno: int) -> StyleAndTextTuples:
            return lines[lineno] if 0 <= lineno < len(lines) else []

        return get_line


_NAMES = ("identifier", "quotedName")
_KEYS = ("identifier", "reserved_identifier", "quotedName")
_INDEXES = ("wholenumber", "quotedStringLiteral")


def _path_end(tokens: list[Any], i: int) -> int:
    """The index after the last token of the path starting at tokens[i] (i itself if none): a
    name, then `.key` and `[index]` steps, the tokens touching each other."""
    end = i
    j = i + 1
    while j + 1 < len(tokens):
        before, step, key = tokens[j - 1], tokens[j], tokens[j + 1]
        if step[2][0] != before[2][1] or key[2][0] != step[2][1]:
            break
        if step[0] == "op" and step[1] == "." and key[0] in _KEYS:
            j += 2
        elif step[1] == "[" and key[0] in _INDEXES and j + 2 < len(tokens) \
                and tokens[j + 2][1] == "]" and tokens[j + 2][2][0] == key[2][1]:
            j += 3
        else:
            break
        end = j - 1
    return end + 1 if end > i else i


def _paths_joined(tokens: list[Any], text: str) -> list[Any]:
    """cqlsh's tokens with each payload path in a SELECT made one ("path", text, span) token."""
    out: list[Any] = []
    in_select = False
    previous = ""
    i = 0
    while i < len(tokens):
        kind, value = tokens[i][0], tokens[i][1]
        if kind == "endtoken":
            in_select = False
        elif previous == "" or previous == ";":
            in_select = str(value).lower() == "select"
        end = _path_end(tokens, i) if in_select and kind in _NAMES and previous.lower() != "from" else i
        if end > i:
            span = (tokens[i][2][0], tokens[end - 1][2][1])
            out.append(("path", text[span[0]:span[1]], span))
            previous, i = "path", end
            continue
        out.append(tokens[i])
        previous = str(value)
        i += 1
    return out


def _gap(text: str) -> StyleAndTextTuples:
    """Whitespace and comments between tokens."""
    out: StyleAndTextTuples = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j].isspace():
            j += 1
        if j > i:
            out.append(("", text[i:j]))
        if j < len(text):
            # A comment runs to the end of the gap's line ('--', '//') or to '*/'.
            if text.startswith("/*", j):
                end = text.find("*/", j + 2)
                k = len(text) if end < 0 else end + 2
            else:
                end = text.find("\n", j)
                k = len(text) if end < 0 else end
            style = "class:cql.comment" if text.startswith(("--", "//", "/*"), j) else ""
            out.append((style, text[j:k]))
            j = k
        i = j
    return out


def _split_lines(fragments: StyleAndTextTuples) -> Iterable[StyleAndTextTuples]:
    line: StyleAndTextTuples = []
    for style_str, text, *_ in fragments:
        parts = text.split("\n")
        for n, part in enumerate(parts):
            if n:
                yield line
                line = []
            if part:
                line.append((style_str, part))
    yield line
