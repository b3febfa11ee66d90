"""The decoded structure of a binary payload, and how people and scripts read it.

Decoders turn a payload into plain Python values (dict, list, str, int, float, bool, None,
bytes) plus the few types below for what JSON lacks. `render` writes readable JSON-like text
(compact for a table cell, indented under EXPAND); `jsonable` gives a structure json.dumps writes
(bytes as {"$base64": ...}, integers exact, tags and symbols as marked objects).
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import math
from dataclasses import dataclass
from typing import Any

#: Deeper nesting is shown as a marker, never walked (decoders stop earlier still).
MAX_DEPTH = 64
#: Items shown per map or array before "… N more"; the rest is counted, not rendered.
MAX_ITEMS = 10_000


@dataclass(frozen=True)
class Tagged:
    """A value with a format's semantic tag the display does not interpret (CBOR tag 35: a
    regular expression, never compiled; a BSON ObjectId; ...)."""

    tag: str
    value: Any


@dataclass(frozen=True)
class Symbol:
    """What a pickle or Java stream would have called or built: `module.name(args)`. Shown, never
    executed."""

    text: str


class PayloadError(ValueError):
    """A payload that does not decode as the named format; str() is the one-line reason."""


def read_varint(data: bytes, pos: int, fmt: str) -> tuple[int, int]:
    """An unsigned base-128 varint at `pos` (Protocol Buffers, and Avro under its zig-zag):
    (value, position after it); at most 64 bits."""
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise PayloadError(f"{fmt}: truncated or overlong number")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def int_text(value: int) -> str:
    """Decimal digits, or hex for integers past Python's 4,300-digit conversion limit (a hostile
    bignum must not stop the display)."""
    try:
        return str(value)
    except ValueError:
        return f"{'-' if value < 0 else ''}0x{abs(value):x}"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int_text(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return '"NaN"' if math.isnan(value) else ('"Infinity"' if value > 0 else '"-Infinity"')
        return repr(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    if isinstance(value, datetime.datetime):
        return json.dumps(value.isoformat())
    if isinstance(value, Symbol):
        return f"{value.text} (not executed)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(str(value), ensure_ascii=False)


def _not_json(value: Any) -> Any:
    raise TypeError(type(value).__name__)


@functools.cache
def _orjson_options() -> int:
    import orjson

    # Integer keys (msgpack-java) as JSON writes them; dataclasses (Tagged, Symbol) and datetimes
    # go to the walk below, which marks them, rather than orjson's own spelling.
    return (orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)


def json_native(tree: Any, indent: int | None = None) -> str | None:
    """The tree as JSON text when it holds only what JSON has (the common case), else None.

    orjson renders a 4 KB record in about a tenth of the time of json's C encoder, which was
    most of the cost of showing a MessagePack or CBOR value (docs/performance.md). It writes NaN
    and infinities as null, which would hide them: output with a null is checked again by json,
    which refuses them, so the walk below shows them as they are.
    """
    if indent is None or indent == 2:
        import orjson

        options = _orjson_options() | (orjson.OPT_INDENT_2 if indent else 0)
        try:
            text = orjson.dumps(tree, default=_not_json, option=options)
        except TypeError:  # orjson.JSONEncodeError: bytes, big integers, tags, deep nesting
            return None
        if b"null" not in text:
            return text.decode("utf-8")
    try:
        return json.dumps(tree, ensure_ascii=False, allow_nan=False, default=_not_json, indent=indent,
                          separators=(",", ":") if indent is None else (",", ": "))
    except (TypeError, ValueError, RecursionError):
        return None


def _key(key: Any) -> str:
    """A map key as JSON writes it (numbers quoted, as json and orjson do, so a record reads the
    same whichever renders it); keys JSON cannot have (bytes, tags) as their own text."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f'"{int_text(key)}"'
    if key is None or isinstance(key, (bool, float)):
        return '"' + _scalar(key).strip('"') + '"'
    if isinstance(key, (dict, list, tuple, Tagged)):
        return render(key)
    return _scalar(key)


def render(tree: Any, indent: int | None = None) -> str:
    """JSON-like text: one line (indent None) or indented by `indent` spaces per level."""
    if isinstance(tree, (dict, list)):
        native = json_native(tree, indent)
        if native is not None:
            return native
    out: list[str] = []

    def walk(node: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            out.append("…")
            return
        pad = "" if indent is None else "\n" + " " * (indent * (depth + 1))
        end = "" if indent is None else "\n" + " " * (indent * depth)
        sep = ","
        if isinstance(node, Tagged):
            out.append(f"{node.tag}(")
            walk(node.value, depth)
            out.append(")")
        elif isinstance(node, dict):
            if not node:
                out.append("{}")
                return
            out.append("{")
            for i, (key, value) in enumerate(node.items()):
                if i == MAX_ITEMS:
                    out.append(f"{sep}{pad}… {len(node) - i} more")
                    break
                out.append(("" if i == 0 else sep) + pad)
                out.append(_key(key))
                out.append(":" if indent is None else ": ")
                walk(value, depth + 1)
            out.append(end + "}")
        elif isinstance(node, (list, tuple)):
            if not node:
                out.append("[]")
                return
            out.append("[")
            for i, value in enumerate(node):
                if i == MAX_ITEMS:
                    out.append(f"{sep}{pad}… {len(node) - i} more")
                    break
                out.append(("" if i == 0 else sep) + pad)
                walk(value, depth + 1)
            out.append(end + "]")
        else:
            out.append(_scalar(node))

    walk(tree, 0)
    return "".join(out)


def jsonable(tree: Any, depth: int = 0) -> Any:
    """The structure as JSON-able values: bytes {"$base64": ...}, tags {"$tag": t, "value": v},
    symbols {"$call": "module.name(...)", "executed": false}; integers stay exact."""
    if depth > MAX_DEPTH:
        return {"$truncated": "nesting too deep"}
    if isinstance(tree, Tagged):
        return {"$tag": tree.tag, "value": jsonable(tree.value, depth + 1)}
    if isinstance(tree, Symbol):
        return {"$call": tree.text, "executed": False}
    if isinstance(tree, dict):
        return {k if isinstance(k, str) else render(k): jsonable(v, depth + 1) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [jsonable(v, depth + 1) for v in tree]
    if isinstance(tree, (bytes, bytearray, memoryview)):
        return {"$base64": base64.b64encode(bytes(tree)).decode("ascii")}
    if isinstance(tree, float) and not math.isfinite(tree):
        return "NaN" if math.isnan(tree) else ("Infinity" if tree > 0 else "-Infinity")
    if isinstance(tree, datetime.datetime):
        return tree.isoformat()
    if isinstance(tree, int) and not isinstance(tree, bool) and tree.bit_length() > 14_000:
        return {"$hex": int_text(tree)}  # json cannot write past 4,300 digits
    if tree is None or isinstance(tree, (str, int, float, bool)):
        return tree
    return str(tree)
