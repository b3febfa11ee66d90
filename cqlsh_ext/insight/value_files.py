"""Stored values read from files, for `cqlsh-ext inspect` and COMPRESSION TRIAL FROM '<path>'.

A value is the stored bytes (a file, or stdin with '-'), or a `0x...` hex string as cqlsh prints a
blob (given as the argument itself, or as the content of the file/stdin; a trailing "(reason)"
that cqlsh-ext prints after undecoded values is ignored). `raw` never reads hex.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

_HEX = re.compile(r"0[xX]([0-9a-fA-F]*)")


def as_hex(data: bytes) -> bytes | None:
    """The bytes a `0x...` text stands for, or None when `data` is not such a text."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    words = text.split()
    if not words:
        return None
    match = _HEX.fullmatch(words[0])
    if match is None or (len(words) > 1 and not words[1].startswith("(")):
        return None
    digits = match.group(1)
    if len(digits) % 2:
        raise ValueError("odd number of hex digits")
    return bytes.fromhex(digits)


def _is_file(name: str) -> bool:
    try:
        return Path(name).is_file()
    except OSError:  # a long hex string is no file name
        return False


def read_value(source: str, raw: bool = False) -> tuple[bytes, str]:
    """(value, label) for a FILE, '-' or 0x... argument."""
    if source == "-":
        data, label = sys.stdin.buffer.read(), "stdin"
    elif source[:2].lower() == "0x" and not _is_file(source):
        value = as_hex(source.encode("ascii", "replace"))
        if value is None:
            raise ValueError(f"not a hex string: {source[:40]}")
        return value, "hex argument"
    else:
        data, label = Path(source).read_bytes(), source
    if not raw:
        value = as_hex(data)
        if value is not None:
            return value, f"{label} (hex)"
    return data, label


def read_values(path: str, limit: int) -> list[bytes]:
    """At most `limit` values from `path`: a directory holds one value per file (read as
    read_value reads one; files in name order, subdirectories included), a file one value, or one
    per line when every line that is not blank is a 0x... hex value. OSError or ValueError (with
    the file's name) when one cannot be read."""
    if os.path.isdir(path):
        values: list[bytes] = []
        for found in sorted(p for p in Path(path).rglob("*") if p.is_file()):
            if len(values) >= limit:
                break
            try:
                values.append(read_value(str(found))[0])
            except ValueError as err:
                raise ValueError(f"{found}: {err}") from None
        return values
    data = Path(path).read_bytes()
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) > 1:
        try:
            per_line = [as_hex(line) for line in lines]
        except ValueError:
            per_line = []
        if per_line and all(v is not None for v in per_line):
            return [v for v in per_line if v is not None][:limit]
    value = as_hex(data)
    return [value if value is not None else data][:limit]
