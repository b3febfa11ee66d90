"""JSON encoding of the reports: one document per report (one line per value for INSPECT).

Keys are stable snake_case; sizes are bytes, ratios are decompressed / stored, shares are 0..1.
Values cqlsh would print in a row key (UUIDs, timestamps, decimals, blobs) become strings.
"""

from __future__ import annotations

import json
from typing import Any


def _default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def dumps(document: Any, pretty: bool = False) -> str:
    return json.dumps(
        document,
        default=_default,
        ensure_ascii=False,
        indent=2 if pretty else None,
        separators=None if pretty else (",", ":"),
    )
