"""An answer's size as it is sent: the cap an answer keeps to is measured on the bytes the client
receives, not on the JSON before it is sent.

A tool's answer travels as a CallToolResult in a JSON-RPC message, one line: each text block is a
JSON string inside the message (its quotes, backslashes and control characters escaped; other
characters as UTF-8, as the SDK writes them), and the structured content is the same answer's
JSON once more, compact. So an answer of rows costs, per row, its compact JSON twice, once escaped
inside the text block:

    sent = sum(wire_size(text) for text in texts) + len(compact(structured))
    message = sent + MESSAGE_BYTES + BLOCK_BYTES * len(texts)      (the line the client reads)

`message_size` is what an answer's cap is held to; `row_cost` what one more row adds to it,
measured on the row's bytes as spelt once (an answer of rows is the join of its rows' bytes,
`joined`, never encoded again); `cut_value` cuts long values inside an answer (saying where and
how much); `prefix` is the short prefix of a statement an answer echoes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.common import jsonenc

#: tools/list's message at most, in bytes as sent (every tool's declaration, its schemas among them):
#: what a client reads at connect, before a question is asked.
LIST_BYTES = 12 << 10
#: An answer's cap by default, the message as sent: within what every client reads whole (Codex
#: keeps 10 KiB or 256 lines of a tool's output; Claude Code warns past 10,000 tokens), about 2,500
#: tokens of an assistant's context.
DEFAULT_ANSWER_BYTES = 10_000
#: The key of a tool's `_meta` that tells Claude Code how many characters of a result to take inline,
#: and what the export-like tools declare (the most it takes): no other tool declares it.
RESULT_CHARS_KEY = "anthropic/maxResultSizeChars"
EXPORT_RESULT_CHARS = 500_000
#: A value's text longer than this is cut inside an answer by default.
DEFAULT_VALUE_CHARS = 2000
#: A list (an array, an object's keys) inside a value longer than this is cut inside an answer.
DEFAULT_VALUE_ITEMS = 1000
#: The statement an answer echoes at most.
PREFIX_CHARS = 120
#: What a tool result's JSON-RPC message adds around its content at most: {"jsonrpc":"2.0","id":...,
#: "result":{"content":[],"structuredContent":...,"isError":false}} (an id of up to 20 digits).
MESSAGE_BYTES = 112
#: What each text block adds besides its text: {"type":"text","text":...} and a comma.
BLOCK_BYTES = len('{"type":"text","text":},')


def compact(data: Any) -> bytes:
    """`data` as compact JSON (no spaces), UTF-8: as the SDK serializes structured content (spelt()
    says what it changed)."""
    return spelt(data).body


@dataclass(frozen=True)
class Spelt:
    """A JSON value's compact JSON (`body`, UTF-8), how many lone surrogates it sent as U+FFFD
    (`replaced`), and the place and digits of each integer it sent as a string (`long_integers`)."""

    body: bytes
    replaced: int = 0
    long_integers: tuple[tuple[str, int], ...] = ()


def spelt(data: Any, where: str = "") -> Spelt:
    """compact(data), and what it spelt otherwise. Three things a stored value may hold that no JSON
    number or UTF-8 string the client reads can are spelt otherwise (all rare, so looked for only
    when the plain spelling fails or shows a long run of digits): a float past the double's range (a
    document's 1e400) by its name (jsonenc.finite, as every JSON we write spells it; json.dumps'
    bare Infinity is no JSON); a lone surrogate (jsonenc.without_surrogates) as U+FFFD: the SDK
    cannot write it (it ended the server) and its client cannot read its JSON escape (pydantic's
    parser refuses the message); and an integer past 4,300 digits (a document's, a varint's) as the
    string of its digits (jsonenc.long_integers_as_text): the SDK's client (pydantic-core's JSON
    parser) refuses the whole message holding such a number ("number out of range"), as Python's
    json refuses the text. `where` names the value in the places said (rows[3])."""
    try:
        body, replaced = _spelt(data)
    except ValueError:  # an integer past this process's digits: spelt as text below
        body, replaced = b"", 0
    if body and not jsonenc.has_long_digits(body):
        return Spelt(body, replaced)
    found: list[tuple[str, int]] = []
    texts = jsonenc.long_integers_as_text(data, found, where)
    if not found:  # a long run of digits in a string: nothing to spell otherwise
        return Spelt(body, replaced) if body else Spelt(*_spelt(texts))
    return Spelt(*_spelt(texts), tuple(found))


def _spelt(data: Any) -> tuple[bytes, int]:
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a float JSON cannot hold
        text = json.dumps(jsonenc.finite(data), ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8"), 0
    except UnicodeEncodeError:  # a lone surrogate
        text, replaced = jsonenc.without_surrogates(text)
        return text.encode("utf-8"), replaced


def for_the_sdk(data: Any, body: bytes) -> Any:
    """The structured content the SDK is given to write itself, `data` as `body` (its compact() bytes)
    spells it: with compact()'s names for the floats JSON cannot hold and its U+FFFD for a lone
    surrogate, its integers past 4,300 digits as strings. The walks are made only when `body` shows
    that they may be needed."""
    if jsonenc.has_long_digits(body):
        data = jsonenc.long_integers_as_text(data)
    if jsonenc.REPLACEMENT.encode() not in body and not any(name in body for name in _NAMES_END):
        return data
    return jsonenc.unicode_only(jsonenc.finite(data))[0]


#: How the names of the floats JSON cannot hold end in compact()'s JSON ("-Infinity" too).
_NAMES_END = tuple(f"{jsonenc.float_name(x)}\"".encode() for x in (math.nan, math.inf))


def wire_size(text: str) -> int:
    """The bytes `text` takes as a JSON string on the wire, its quotes included."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def text_wire_size(body: bytes, escapes: int | None = None) -> int:
    """wire_size of a JSON text as compact() spells it, from its UTF-8 bytes, without encoding it
    again: JSON has escaped its control characters already, so only its quotes and backslashes are
    escaped inside the string, a backslash each (`escapes`: how many, when known)."""
    if escapes is None:
        escapes = body.count(b'"') + body.count(b"\\")
    return len(body) + 2 + escapes


def joined(data: dict[str, Any], key: str, items: list[bytes], item_escapes: int = 0) -> tuple[bytes, int]:
    """compact(data) with data[key]'s items given as their compact() bytes, spelt once already:
    the other keys' values encoded here (an object's compact JSON is its pairs joined), the whole
    copied once; and its quotes and backslashes (text_wire_size's `escapes`), `item_escapes`
    those of the items, not counted again."""
    pieces: list[bytes] = [b"{"]
    escapes = item_escapes
    for name, value in data.items():
        if len(pieces) > 1:
            pieces.append(b",")
        if name == key:
            pair = compact(name) + b":["
            pieces.append(pair)
            for at, item in enumerate(items):
                if at:
                    pieces.append(b",")
                pieces.append(item)
            pieces.append(b"]")
        else:
            pair = compact(name) + b":" + compact(value)
            pieces.append(pair)
        escapes += pair.count(b'"') + pair.count(b"\\")
    pieces.append(b"}")
    return b"".join(pieces), escapes


def framed_wire_size(body: bytes, head: str, tail: str, escapes: int | None = None) -> int:
    """wire_size of the text `head + body + tail` (body: a JSON text as compact() spells it, its
    UTF-8; `escapes`: its quotes and backslashes, when known), without decoding the body or
    encoding it again (text_wire_size)."""
    return text_wire_size(body, escapes) + wire_size(head) + wire_size(tail) - 4


def answer_size(texts: list[str], structured: Any) -> int:
    """The bytes of an answer's content as sent: its text blocks as JSON strings and its structured
    content (None: an error answer has none)."""
    structured_size = len(compact(structured)) if structured is not None else 0
    return sum(wire_size(text) for text in texts) + structured_size


def message_size(texts: list[str], structured: Any) -> int:
    """The bytes of the message line that carries the answer, at most: what a cap is held to."""
    return answer_size(texts, structured) + MESSAGE_BYTES + BLOCK_BYTES * len(texts)


def row_cost(body: bytes, escapes: int | None = None) -> int:
    """What one more row (its compact() bytes, `body`; `escapes`: its quotes and backslashes, when
    known) adds to an answer whose text block is the answer's compact JSON and whose structured
    content is the same: the row twice, once escaped inside the text block's string (without that
    string's two quotes), and a comma each."""
    return len(body) + text_wire_size(body, escapes) - 2 + 2


def row_escapes(body: bytes, cost: int) -> int:
    """The quotes and backslashes of a row (its compact() bytes, `body`) whose row_cost is `cost`,
    not counted again."""
    return cost - 2 * len(body) - 2


def cut_value(value: Any, chars: int = DEFAULT_VALUE_CHARS, items: int | None = DEFAULT_VALUE_ITEMS,
              path: str = "") -> tuple[Any, list[str]]:
    """`value` with each string longer than `chars` characters cut to `chars` (an ellipsis after)
    and each array or object of more than `items` entries cut to its first `items` (None: none
    cut); and where each cut was made ("rows[3].data.payload.items: 20 of 1,310 elements")."""
    if within(value, chars, items):  # the common value: nothing to cut, no copy, no paths made
        return value, []
    cuts: list[str] = []

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, str):
            if len(item) <= chars:
                return item
            cuts.append(f"{where or 'value'}: {chars:,} of {len(item):,} characters")
            return item[:chars] + "…"
        if isinstance(item, dict):
            pairs = list(item.items())
            if items is not None and len(pairs) > items:
                cuts.append(f"{where or 'value'}: {items:,} of {len(pairs):,} keys")
                pairs = pairs[:items]
            return {k: walk(v, f"{where}.{k}" if where else str(k)) for k, v in pairs}
        if isinstance(item, list):
            if items is not None and len(item) > items:
                cuts.append(f"{where or 'value'}: {items:,} of {len(item):,} elements")
                item = item[:items]
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(item)]
        return item

    return walk(value, path), cuts


def within(value: Any, chars: int, items: int | None) -> bool:
    """Whether cut_value would cut nothing in `value` (no string longer than `chars`, no array or
    object of more than `items` entries)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            if len(item) > chars:
                return False
        elif kind is dict:
            if items is not None and len(item) > items:
                return False
            push(item.values())
        elif kind is list:
            if items is not None and len(item) > items:
                return False
            push(item)
        elif isinstance(item, (str, dict, list)):  # (a subclass: walk() reads it as its base)
            return False
    return True


def prefix(statement: str, chars: int = PREFIX_CHARS) -> str:
    """The statement as an answer echoes it: whole when short, else its start and its length."""
    text = " ".join(statement.split())
    if len(text) <= chars:
        return text
    return f"{text[:chars]}… ({len(statement.encode('utf-8', 'surrogatepass')):,} bytes)"
