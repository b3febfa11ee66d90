"""How every JSON cqlsh-ext writes spells a value: query rows (OUTPUT FORMAT JSON), INSPECT and
COMPRESSION reports, offline `cqlsh-ext inspect`.

- timestamps: ISO-8601 in UTC with milliseconds and a Z (CQL timestamps have millisecond precision);
- bytes: "0x" + hex, as cqlsh prints blobs;
- UUIDs, inet addresses, dates, times, decimals in reports: their text; sets and tuples: arrays;
- floats: the shortest text that reads back as the same value (32-bit floats too); NaN and
  infinities, which JSON numbers cannot hold, as the strings "NaN", "Infinity", "-Infinity".

cqlsh_ext.output.values writes CQL values typed by their column with these same functions (and
keeps decimals and varints digit for digit); `dumps` writes report documents. Standard library
only: offline inspect imports neither the driver nor cqlshlib.
"""

from __future__ import annotations

import datetime
import json
import math
import struct
from typing import Any


def string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def timestamp_text(value: datetime.datetime) -> str:
    """ISO-8601 in UTC with milliseconds."""
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value.isoformat(timespec="milliseconds") + "Z"


def blob_text(value: bytes | bytearray | memoryview) -> str:
    return "0x" + bytes(value).hex()


def float32_text(value: float) -> str:
    """The shortest decimal that reads back as the same 32-bit float (1.1, not 1.100000023841858)."""
    packed = struct.pack(">f", value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            if struct.pack(">f", float(text)) == packed:
                return text
        except OverflowError:  # rounded beyond the largest float32
            continue
    return repr(value)


def float_text(value: float, single: bool = False) -> str:
    """A JSON number, or a JSON string for NaN and the infinities."""
    if math.isnan(value):
        return string("NaN")
    if math.isinf(value):
        return string("Infinity" if value > 0 else "-Infinity")
    return float32_text(value) if single else repr(value)


def duration_text(value: Any) -> str:
    """A CQL duration as cqlsh prints it (1h30m, 2mo3d...)."""
    from cqlshlib.formatting import duration_as_str  # only rows hold durations

    return str(duration_as_str(value.months, value.days, value.nanoseconds))


def jsonable(value: Any) -> Any:
    """A value json.dumps cannot write, as one it can (json.dumps' `default`)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return blob_text(value)
    if isinstance(value, datetime.datetime):
        return timestamp_text(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if all(hasattr(value, name) for name in ("months", "days", "nanoseconds")):
        return duration_text(value)
    if hasattr(value, "isoformat"):  # date, time and the driver's Date/Time
        return value.isoformat()
    return str(value)  # UUID, Decimal, inet, ...


def _finite(value: Any) -> Any:
    """json.dumps would write NaN/Infinity bare (not JSON): as strings, like float_text."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def dumps(document: Any, pretty: bool = False) -> str:
    """A report document as JSON: one line, or indented with `pretty`."""
    try:
        return json.dumps(document, default=jsonable, ensure_ascii=False, allow_nan=False,
                          indent=2 if pretty else None, separators=None if pretty else (",", ":"))
    except ValueError:  # a NaN or infinity somewhere: spelled as float_text spells them
        return dumps(_finite(document), pretty)
