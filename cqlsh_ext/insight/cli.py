"""`cqlsh-ext inspect FILE|-|0x...`: the INSPECT report for one value, without a server.

The value is the stored bytes (a file, or stdin with '-'), or a `0x...` hex string as cqlsh prints a
blob (given as the argument itself, or as the content of the file/stdin; a trailing "(reason)"
that cqlsh-ext prints after undecoded values is ignored). --raw never reads hex.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from cqlsh_ext.codecs.base import CODEC_NAMES

_HEX = re.compile(r"0[xX]([0-9a-fA-F]*)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cqlsh-ext inspect",
        description="Describe one stored blob value: compression layers, header fields, "
        "checksums, sizes and payload kind.",
    )
    p.add_argument(
        "source",
        metavar="FILE|-|0x...",
        help="a file holding the value, '-' for stdin, or a 0x... hex string as cqlsh prints it",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead of the text report")
    p.add_argument(
        "-d",
        "--decompress",
        metavar="CODEC",
        default="auto",
        help=f"decode as this codec instead of detecting it ({', '.join(CODEC_NAMES[:4])}, ...)",
    )
    p.add_argument(
        "--max-output-size",
        metavar="SIZE",
        default=None,
        help="decompressed bytes at most over all layers (default 4MiB)",
    )
    p.add_argument(
        "--raw", action="store_true", help="the input is the stored bytes even if it reads as 0x..."
    )
    return p


def _as_hex(data: bytes) -> bytes | None:
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
        value = _as_hex(source.encode("ascii", "replace"))
        if value is None:
            raise ValueError(f"not a hex string: {source[:40]}")
        return value, "hex argument"
    else:
        data, label = Path(source).read_bytes(), source
    if not raw:
        value = _as_hex(data)
        if value is not None:
            return value, f"{label} (hex)"
    return data, label


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from cqlsh_ext.codecs.base import DEFAULT_CAP
    from cqlsh_ext.settings import SettingError, parse_mode, parse_size

    try:
        mode = parse_mode(args.decompress)
        cap = parse_size(args.max_output_size) if args.max_output_size else DEFAULT_CAP
    except SettingError as err:
        print(f"cqlsh-ext inspect: error: {err}", file=sys.stderr)
        return 2
    try:
        value, label = read_value(args.source, args.raw)
    except (OSError, ValueError) as err:
        print(f"cqlsh-ext inspect: error: {err}", file=sys.stderr)
        return 2
    from cqlsh_ext.common import jsonenc as jsonout
    from cqlsh_ext.insight.inspect import inspect_value
    from cqlsh_ext.insight.measure import effective_mode

    where: dict[str, object] = {"file": label}
    report = inspect_value(value, where, effective_mode(mode), cap)
    try:
        text = jsonout.dumps(report.to_json()) if args.json else "\n".join(report.render())
    except Exception as err:  # the last resort: the value's one line, not a traceback
        from cqlsh_ext.codecs._common import reason
        from cqlsh_ext.insight.inspect import unreadable

        report = unreadable(value, where, f"could not be inspected: {reason(err)}")
        text = jsonout.dumps(report.to_json()) if args.json else "\n".join(report.render())
    print(text)
    return 0
