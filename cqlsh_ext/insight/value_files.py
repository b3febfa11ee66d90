"""Stored values read from files, for `cqlsh-ext inspect` and COMPRESSION TRIAL FROM '<path>'.

A value is the stored bytes (a file, or stdin with '-'), or a `0x...` hex string as cqlsh prints a
blob (given as the argument itself, or as the content of the file/stdin, one value per line; a
trailing "(reason)" that cqlsh-ext prints after undecoded values is ignored). `raw` never reads hex.
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


def hex_values(data: bytes) -> list[bytes] | None:
    """The values a text of `0x...` lines stands for, one per line that is not blank (each as
    as_hex reads it: a trailing "(reason)" ignored); None when the first such line is no hex value.
    ValueError naming the line when a later line is not one: a text that starts as hex values and
    goes on as something else is no value cqlsh printed."""
    if data.lstrip()[:2].lower() != b"0x":  # binary values end here, before any splitting
        return None
    lines = [(number, line) for number, line in enumerate(data.splitlines(), 1) if line.strip()]
    values: list[bytes] = []
    for number, line in lines:
        try:
            value = as_hex(line)
        except ValueError as err:
            raise ValueError(f"line {number}: {err}" if len(lines) > 1 else str(err)) from None
        if value is None:
            if not values:
                return None
            raise ValueError(f"line {number} is not a 0x... hex value (one value per line; --raw reads "
                             "the input as the stored bytes)")
        values.append(value)
    return values


def _is_file(name: str) -> bool:
    try:
        return Path(name).is_file()
    except OSError:  # a long hex string is no file name
        return False


def read_inputs(source: str, raw: bool = False) -> list[tuple[bytes, str]]:
    """(value, label) for each value a FILE, '-' or 0x... argument holds: the stored bytes, or one
    value per `0x...` line (labelled with its line when there are several). `raw` never reads hex."""
    if source == "-":
        data, label = sys.stdin.buffer.read(), "stdin"
    elif source[:2].lower() == "0x" and not _is_file(source):
        value = as_hex(source.encode("ascii", "replace"))
        if value is None:
            raise ValueError(f"not a hex string: {source[:40]}")
        return [(value, "hex argument")]
    else:
        data, label = Path(source).read_bytes(), source
    try:
        return [(value, f"{label}{where}") for value, where in _values_in(data, raw)]
    except ValueError as err:
        raise ValueError(f"{label}: {err}") from None


def _values_in(data: bytes, raw: bool) -> list[tuple[bytes, str]]:
    """The values in a file's or stdin's bytes, each with what to add to its label."""
    values = None if raw else hex_values(data)
    if values is None:
        return [(data, "")]
    if len(values) == 1:
        return [(values[0], " (hex)")]
    lines = [n for n, line in enumerate(data.splitlines(), 1) if line.strip()]
    return [(value, f" line {n} (hex)") for value, n in zip(values, lines, strict=True)]


def read_values(path: str, limit: int) -> list[bytes]:
    """At most `limit` values from `path`: a directory holds values in files (each file read as
    read_inputs reads one; files in name order, subdirectories included), a file the stored bytes,
    or one value per line when its lines are 0x... hex values. OSError or ValueError (with the
    file's name) when one cannot be read."""
    files = sorted(p for p in Path(path).rglob("*") if p.is_file()) if os.path.isdir(path) else [Path(path)]
    values: list[bytes] = []
    for found in files:
        if len(values) >= limit:
            break
        try:
            values.extend(value for value, _ in _values_in(found.read_bytes(), raw=False))
        except ValueError as err:
            raise ValueError(f"{found}: {err}") from None
    return values[:limit]
