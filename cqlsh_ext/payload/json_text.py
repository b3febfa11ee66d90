"""A text payload's JSON, read exactly as Python's json module reads it, and fast.

A view keeps what json_container found (payload.view.BlobView.tree), so a text's JSON is parsed
at most once, by whichever reader asks first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from cqlsh_ext.common import long_int
from cqlsh_ext.payload import budget


class StoredFloat(float):
    """A stored JSON text's number read as a float, with its text as stored (`spelling`: `1.50`
    stays `1.50`, `1e3` stays `1e3` when the text is written again: an edit, a load)."""

    spelling: str

    def __new__(cls, spelling: str) -> StoredFloat:
        found = super().__new__(cls, spelling)
        found.spelling = spelling
        return found


class StoredInt(int):
    """A stored JSON text's integer, with its text as stored (`-0`)."""

    spelling: str

    def __new__(cls, spelling: str) -> StoredInt:
        found = super().__new__(cls, spelling)
        found.spelling = spelling
        return found


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members (json's object_pairs_hook) for a reading whose text becomes what is
    written (a load, encode()): ValueError naming a key given twice, which json.loads would read
    as its last value without a word."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"{json.dumps(key, ensure_ascii=False)} given twice in one object")
            seen.add(key)
    return found


def json_container(text: str) -> dict[str, object] | list[object] | None:
    """The parsed value when `text` is a JSON object or array (whitespace around allowed), else None.

    A text past the value's budget (past_budget) is not parsed: it is shown as stored."""
    head = text[:1]
    if head.isspace():  # the first character after the whitespace (no copy of the text otherwise)
        head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    raw = text.encode("utf-8", "surrogatepass")
    deep = _nesting_above(raw, _ORJSON_DEPTH)  # (one count for both below)
    if _past_budget(text, raw, deep) is not None:
        return None
    digits = raw.translate(_DIGITS_ONLY)
    parsed = (_with_long_integers(text) if _PAST_PYTHON_DIGITS in digits
              else _exact_orjson(text, raw, digits, deep))
    if parsed is None:
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):  # nested deeper than the parser goes: shown as text
            return None
    return parsed if isinstance(parsed, (dict, list)) else None


def past_budget(text: str) -> str | None:
    """Why a text that starts like a JSON object or array is not read as one although it may be
    JSON: it is past the value's budget (`nested deeper than 512 levels`, `over 100,000 nodes`: the
    budget's words), so it is shown as stored. None when the budget is no reason (the text is read
    as JSON, or is no JSON: json_container says which). The one rule both engines keep: the native
    core hands such a text back, and this decides."""
    head = text[:1]
    if head.isspace():
        head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    raw = text.encode("utf-8", "surrogatepass")
    return _past_budget(text, raw, _nesting_above(raw, _ORJSON_DEPTH))


def _past_budget(text: str, raw: bytes, deep: bool) -> str | None:
    """past_budget of a text starting with `{` or `[` (`raw`: its UTF-8, surrogates passed; `deep`:
    it may nest deeper than _ORJSON_DEPTH, below JSON_DEPTH).

    Nodes: a text with more values than the budget's nodes is not parsed (json.loads takes no limit:
    4 MiB of `["a","a",...]` would be a million strings). Its commas and brackets bound its values
    from above; counted first in the whole text (fast), then, past the limit, outside its strings
    only (a long string full of commas is one value). Depth: json.loads stops at the interpreter's
    recursion limit, which depends on the caller's stack; the budget's JSON_DEPTH, half the default
    limit, is read wherever it is called from, and deeper nesting (outside strings) is past it."""
    limits = budget.current()
    nodes = limits.nodes
    if len(text) > nodes and text.count(",") + text.count("[") + text.count("{") > nodes:
        outside = _STRINGS.sub(b"", raw)
        if outside.count(b",") + outside.count(b"[") + outside.count(b"{") > nodes:
            return limits.nodes_reason
    if deep and _nesting_above(raw, budget.JSON_DEPTH) and _nesting_above(_STRINGS.sub(b"", raw),
                                                                           budget.JSON_DEPTH):
        return limits.json_depth_reason
    return None


def _with_long_integers(text: str) -> Any:
    """json.loads(text) for a text with a run of digits past Python's int-string limit: each
    integer that long read whole as a common.long_int.LongInt (its digits kept as written), up to
    INTEGER_DIGITS of them in all (the value's budget); None past it, or when the text is no JSON
    (it is then shown as stored, as a text with more values than the budget's nodes is)."""
    left = long_int.INTEGER_DIGITS

    def integer(written: str) -> int:
        nonlocal left
        if len(written) <= long_int.PYTHON_DIGITS:
            return int(written)
        left -= len(written) - written.startswith("-")
        if left < 0:
            raise ValueError("past the value's digits")
        return long_int.LongInt(written)

    try:
        return json.loads(text, parse_int=integer)
    except (ValueError, RecursionError):
        return None


_orjson_loads: Callable[[str], Any] | None = None
#: ASCII digits to "0", every other byte to a space: a run of LONG_DIGITS is then a run of digits.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
#: Integers of up to 18 digits fit orjson's 64 bits; from 19 on it may read one as a float.
_LONG_DIGITS = b"0" * 19
#: A run of digits longer than Python's int() reads by default.
_PAST_PYTHON_DIGITS = b"0" * (long_int.PYTHON_DIGITS + 1)
#: Nesting orjson reads for json.loads, at the most: json.loads refuses what nests deeper than the
#: interpreter's recursion limit allows (about 1,000 levels, fewer when called from deep in a
#: stack), orjson reads up to 1,024; deeper texts are json.loads'.
_ORJSON_DEPTH = 256
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: A JSON string (escapes included): what past_budget leaves out where it counts nodes and depth.
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def _nesting_above(raw: bytes, limit: int) -> bool:
    """Whether JSON text `raw` may nest deeper than `limit` (False only when it certainly does
    not). Brackets inside strings count too, so this bounds the depth from above: the innermost
    pairs are removed pass by pass (an enclosing pair only after what it encloses), and what no
    pass removes counts whole."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = raw.translate(None, _NOT_BRACKETS)
    passes = 0
    while passes <= limit:
        shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(brackets):
            break
        brackets, passes = shorter, passes + 1
    return passes + len(brackets) > limit


def _exact_orjson(text: str, raw: bytes, digits: bytes, deep: bool) -> Any:
    """What json.loads(text) gives, read by orjson (several times faster), when orjson reads it
    exactly; None otherwise, and the caller reads it with json.loads. orjson reads integers past
    64 bits as floats without a word, so a text with a run of 19 digits anywhere is left to
    json.loads (floats it reads as Python does, correctly rounded); what it refuses and json.loads
    takes (NaN, Infinity, 1e400, lone surrogates) is an error here, so left to json.loads too, as
    is a text that may nest deeper than _ORJSON_DEPTH (json.loads may refuse what orjson reads).
    Duplicate keys: the last value wins at the first key's place in both. `raw`: the text as UTF-8
    (surrogates passed), `digits`: raw translated by _DIGITS_ONLY, `deep`: _nesting_above(raw,
    _ORJSON_DEPTH)."""
    global _orjson_loads
    loads = _orjson_loads
    if loads is None:
        try:
            import orjson
        except ImportError:  # a broken install: json.loads reads everything
            return None
        loads = _orjson_loads = orjson.loads
    if _LONG_DIGITS in digits or deep:
        return None
    try:
        return loads(text)
    except Exception:  # orjson.JSONDecodeError, RecursionError: json.loads decides
        return None
