"""How every JSON cqlsh-ext writes spells a value, in one place: query rows (OUTPUT FORMAT JSON,
and the JSON text of collections in CSV), the records decoded from blobs embedded in them
(payload.formats.tree.jsonable), INSPECT and COMPRESSION reports, offline `cqlsh-ext inspect --json`.

- bytes: "0x" + hex, as cqlsh prints blobs and Cassandra's toJson() writes them;
- times: ISO 8601 in UTC with a Z ("2024-02-23T02:16:41.000Z"): to the millisecond, or to the
  microsecond when the time has a finer part (a record format's); a time without a zone is UTC
  (the driver's timestamps); CQL timestamps are milliseconds by type, always to the millisecond;
- strings: as json.dumps(ensure_ascii=False) writes them, with U+0085, U+2028 and U+2029 escaped
  (LINE_BREAKS: characters line-oriented readers take for a line's end), so a row is one line;
- floats: the shortest text that reads back as the same value (32-bit floats too); NaN and the
  infinities, which JSON numbers cannot hold, as the strings "NaN", "Infinity", "-Infinity"
  (`float_name`, the one place that names them, also for the table's rendering of records);
- UUIDs, inet addresses, dates, times of day, decimals in reports: their text; durations as cqlsh
  prints them; sets and tuples: arrays;
- integers past 4,300 digits (a document's: long_int.LongInt; a CQL varint) are JSON numbers in
  files; where the reader is a program whose parser refuses them as Python's json and pydantic's
  do by default (an MCP client), strings of their digits (`long_integers_as_text`), said so there.

cqlsh_ext.output.spellings writes CQL values typed by their column with these functions (and keeps
decimals and varints digit for digit); `dumps` writes report documents, and `loaded` gives the
JSON values that text holds without writing it. It sits below every other
module of cqlsh_ext (payload and output both use it) and imports none of them: standard library
only, so offline inspect imports neither the driver nor cqlshlib.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import struct
from json.encoder import encode_basestring as _encode_string
from typing import Any

from cqlsh_ext.common.long_int import (
    PAST_PYTHON_DIGITS,
    PYTHON_DIGITS,
    LongInt,
    LongIntegerError,
    integer_text,
)

_UTC = datetime.timezone.utc


def string(text: str) -> str:
    """A JSON string literal: what json.dumps(text, ensure_ascii=False) writes, through the function
    it calls itself (json.dumps builds an encoder per call, ten times the cost of a short string),
    line_safe."""
    return line_safe(_encode_string(text) if isinstance(text, str) else json.dumps(text, ensure_ascii=False))


#: The characters str.splitlines(), JavaScript before ES2019 and many line-oriented tools take for
#: a line's end that json.dumps(ensure_ascii=False) and orjson write as they are (JSON escapes only
#: controls below U+0020), with the escapes every JSON text we write spells them with: a JSON Lines
#: row stays one line, and reads back as the same value.
LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_LINE_BREAK = re.compile("[\x85\u2028\u2029]")
_NEL, _LS, _PS = LINE_BREAKS


def line_safe(text: str) -> str:
    """A JSON text with each of LINE_BREAKS escaped (in JSON text they can only be inside a
    string, where the escape is the same character): `text` itself when it holds none."""
    # isascii() reads a flag of the str; `in` is a scan in C, three times faster than the regex's.
    if text.isascii() or not (_LS in text or _PS in text or _NEL in text):
        return text
    return _LINE_BREAK.sub(lambda found: LINE_BREAKS[found.group()], text)


def strings(texts: list[str]) -> list[str]:
    """string() of each text (a column of them: each spelt in C, looked at once for LINE_BREAKS)."""
    spelt = list(map(_encode_string, texts))
    if any(map(_LINE_BREAK.search, spelt)):
        return list(map(line_safe, spelt))
    return spelt


def blob_text(value: bytes | bytearray | memoryview) -> str:
    return "0x" + value.hex()


def base64_text(value: bytes | bytearray | memoryview) -> str:
    """Bytes as base64 text: where a protocol says so (MCP's blob resource contents)."""
    import base64

    return base64.b64encode(value).decode("ascii")


def time_text(value: datetime.datetime, millis: bool = False) -> str:
    """ISO 8601 in UTC with a Z: to the millisecond, or the microsecond when the time has a finer
    part; `millis`: a time that is milliseconds by type (a CQL timestamp, which the driver's float
    arithmetic leaves with noise below the millisecond), always to the millisecond."""
    if value.tzinfo is not None:
        value = value.astimezone(_UTC).replace(tzinfo=None)
    fine = not millis and value.microsecond % 1000
    return value.isoformat(timespec="microseconds" if fine else "milliseconds") + "Z"


#: The strings a float JSON numbers cannot hold is written as (float_name).
FLOAT_NAMES = frozenset({"NaN", "Infinity", "-Infinity"})


def float_name(value: float) -> str | None:
    """"NaN", "Infinity" or "-Infinity" for a float JSON numbers cannot hold; None for the others."""
    if math.isfinite(value):
        return None
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def float32_text(value: float) -> str:
    """The shortest decimal that reads back as the same 32-bit float (1.1, not 1.100000023841858),
    spelt as a double is (repr: `1.0`, `-0.0`, `100.0`, `1e+16`), so JSON reads a float back (`1`
    and `-0` read back as the integers 1 and 0, the sign lost)."""
    packed = struct.pack(">f", value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            if struct.pack(">f", float(text)) == packed:
                # repr's digits are these: the shortest that read back as the same double, which
                # `text` is one of, and none fewer reads back as the same 32-bit float.
                return repr(float(text))
        except OverflowError:  # rounded beyond the largest float32
            continue
    return repr(value)


def float_text(value: float, single: bool = False) -> str:
    """A JSON number, or a JSON string for NaN and the infinities."""
    name = float_name(value)
    if name is not None:
        return string(name)
    return float32_text(value) if single else repr(value)


def duration_text(value: Any) -> str:
    """A CQL duration as cqlsh prints it (1h30m, 2mo3d...), the zero one `0s`: cqlsh prints
    nothing for it, which CQL reads as no duration and a CSV field as a null."""
    from cqlshlib.formatting import duration_as_str  # only rows hold durations

    return str(duration_as_str(value.months, value.days, value.nanoseconds)) or "0s"


def leaf(value: Any) -> Any:
    """A value json.dumps cannot write, as one it can (json.dumps' `default`)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return blob_text(value)
    if isinstance(value, datetime.datetime):
        return time_text(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if all(hasattr(value, name) for name in ("months", "days", "nanoseconds")):
        return duration_text(value)
    if hasattr(value, "isoformat"):  # date, time and the driver's Date/Time
        return value.isoformat()
    return str(value)  # UUID, Decimal, inet, ...


def finite(value: Any) -> Any:
    """`value` with NaN and the infinities inside it as their names (json.dumps would write them
    bare, which is not JSON)."""
    if isinstance(value, float):
        return float_name(value) or value
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


#: ASCII digits to "0", every other byte to a space: a run of digits is then a run of "0".
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
#: A run of more digits than Python's json and pydantic's parser read in an integer by default.
_PAST_READ_DIGITS = b"0" * (PYTHON_DIGITS + 1)


def has_long_digits(body: bytes) -> bool:
    """Whether JSON text `body` may hold an integer of more than PYTHON_DIGITS digits (a run of
    that many digits anywhere, a string's too)."""
    return _PAST_READ_DIGITS in body.translate(_DIGITS_ONLY)


def long_integers_as_text(value: Any, found: list[tuple[str, int]] | None = None, where: str = "") -> Any:
    """A JSON value with each integer of more than PYTHON_DIGITS digits as the string of its digits
    (a document's LongInt as written, a CQL varint's every digit as the shell shows it; one past
    INTEGER_DIGITS, which no decimal text is written of, in hex as `0x...`); each container new.
    `found` gets each such integer's place (`where`, then .key or [i] inside) and its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        if isinstance(value, LongInt):
            text = value.text
        elif abs(value) < PAST_PYTHON_DIGITS:
            return value
        else:
            try:
                text = integer_text(value)
            except LongIntegerError:
                text = f"{'-' if value < 0 else ''}0x{abs(value):x}"
        if found is not None:
            found.append((where, len(text.lstrip("-"))))
        return text
    if isinstance(value, dict):
        return {k: long_integers_as_text(v, found, f"{where}.{k}" if where else str(k))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [long_integers_as_text(v, found, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


#: What a lone surrogate is read as where UTF-8 must hold the text.
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def without_surrogates(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate as U+FFFD, and how many. A stored JSON document may hold
    "\\ud800" (valid JSON, but no Unicode character): its string reaches Python so, and UTF-8 (an
    Arrow string, an MCP message) cannot hold it."""
    return _SURROGATE.subn(REPLACEMENT, text)


def escaped_surrogates(text: str) -> str:
    """A JSON text with each lone surrogate as its JSON escape ("\\ud800"): the same JSON value,
    which UTF-8 can write (in JSON text a lone surrogate can only sit inside a string)."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def unicode_only(value: Any) -> tuple[Any, int]:
    """A JSON value with without_surrogates' U+FFFD in its strings and keys, and how many; `value`
    itself when it holds none."""
    found = 0

    def walk(item: Any) -> Any:
        nonlocal found
        if isinstance(item, str):
            text, count = without_surrogates(item)
            found += count
            return text
        if isinstance(item, dict):
            return {walk(k): walk(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v) for v in item]
        return item

    out = walk(value)
    return (out, found) if found else (value, 0)


def loaded(document: Any) -> Any:
    """A report document as the JSON values its text is (json.loads(dumps(document))), made from
    the values themselves, without the text: for a reader that takes JSON values (cqlsh-ext mcp's
    answers, screened and measured before the SDK writes them). Leaves as `leaf` spells them,
    NaN and the infinities by name, object keys strings as json.dumps writes them, tuples and
    sets arrays; each container new (the caller may cut it)."""
    if document is None or isinstance(document, (str, bool)):
        return document
    if isinstance(document, int):
        return document if isinstance(document, LongInt) else int(document)
    if isinstance(document, float):
        return float_name(document) or float(document)
    if isinstance(document, dict):
        return {key_text(k): loaded(v) for k, v in document.items()}
    if isinstance(document, (list, tuple)):
        return [loaded(v) for v in document]
    return loaded(leaf(document))


def key_text(key: Any) -> str:
    """An object key as json.dumps writes it (a key that is not a string: its JSON text)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, float):
        return float_name(key) or float.__repr__(key)
    return int.__repr__(key) if isinstance(key, int) else str(key)


def dumps(document: Any, pretty: bool = False) -> str:
    """A report document as JSON: one line, or indented with `pretty`."""
    try:
        return line_safe(json.dumps(document, default=leaf, ensure_ascii=False, allow_nan=False,
                                    indent=2 if pretty else None, separators=None if pretty else (",", ":")))
    except ValueError:  # a NaN or infinity somewhere: spelled by their names
        return dumps(finite(document), pretty)
