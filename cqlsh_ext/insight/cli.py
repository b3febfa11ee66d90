"""`cqlsh-ext inspect FILE|-|0x...`: the INSPECT report for stored values, without a server.

The value is the stored bytes (a file, or stdin with '-'), or a `0x...` hex string as cqlsh prints a
blob, one value per line of a file or stdin (insight.value_files). --raw never reads hex. The report
is fitted to a terminal (insight.report.fit) and printed in whole lines to a pipe or a file. Exit
status 1 when a value could not be decoded.
"""

from __future__ import annotations

import argparse
import shutil
import sys

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.common.text import say
from cqlsh_ext.insight.value_files import read_inputs


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cqlsh-ext inspect",
        description="Describe one stored blob value: compression layers, header fields, "
        "checksums, sizes and payload kind.",
        epilog="Exit status: 0 when every value was decoded or is in no known format, 1 when one is "
        "in a known format that could not be decoded (corrupt, cut short), 2 when the input cannot "
        "be read.")
    p.add_argument(
        "source",
        metavar="FILE|-|0x...",
        help="a file holding the value, '-' for stdin, or a 0x... hex string as cqlsh prints it "
        "(a file or stdin of 0x... lines: one value per line)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of the text report")
    p.add_argument("-d", "--decompress", metavar="CODEC", default="auto",
                   help=f"decode as this codec instead of detecting it ({', '.join(CODEC_NAMES[:4])}, ...)")
    p.add_argument("--max-output-size", metavar="SIZE", default=None,
                   help="decompressed bytes at most over all layers (default 4MiB)")
    p.add_argument(
        "--raw", action="store_true", help="the input is the stored bytes even if it reads as 0x...")
    p.add_argument(
        "--dictionary", metavar="FILE", action="append", default=[],
        help="a zstd dictionary or raw dictionary (zlib preset, zstd raw content) the value may need "
        "(repeatable; also "
        "CQLSH_EXT_DICTIONARIES, as in the shell)")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from cqlsh_ext.codecs.base import DEFAULT_CAP
    from cqlsh_ext.settings import SettingError, parse_mode, parse_size

    try:
        mode = parse_mode(args.decompress)
        cap = parse_size(args.max_output_size) if args.max_output_size else DEFAULT_CAP
    except SettingError as err:
        say(f"cqlsh-ext inspect: error: {err}")
        return 2
    from cqlsh_ext.codecs import dictionaries

    try:
        dictionaries.load([*dictionaries.environment_paths(), *args.dictionary])
    except dictionaries.DictionaryError as err:
        say(f"cqlsh-ext inspect: error: dictionary {err}")
        return 2
    try:
        inputs = read_inputs(args.source, args.raw)
    except (OSError, ValueError) as err:
        say(f"cqlsh-ext inspect: error: {err}")
        return 2
    from cqlsh_ext.common import jsonenc as jsonout
    from cqlsh_ext.common.text import fit
    from cqlsh_ext.insight.inspect import inspect_value
    from cqlsh_ext.insight.view_measures import FAILED, effective_mode

    # As in the shell: fitted to a terminal, whole lines to a pipe or a file.
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
    undecodable = False
    for n, (value, label) in enumerate(inputs):
        where: dict[str, object] = {"file": label}
        report = inspect_value(value, where, effective_mode(mode), cap)
        try:
            text = jsonout.dumps(report.to_json()) if args.json else "\n".join(fit(report.render(), width))
        except Exception as err:  # the last resort: the value's one line, not a traceback
            from cqlsh_ext.codecs._common import reason
            from cqlsh_ext.insight.inspect import unreadable

            report = unreadable(value, where, f"could not be inspected: {reason(err)}")
            text = jsonout.dumps(report.to_json()) if args.json else "\n".join(fit(report.render(), width))
        if n and not args.json:
            print()  # reports apart, as the shell's INSPECT prints them
        print(text)
        undecodable = undecodable or report.status == FAILED
    # As grep and diff do: 1 when a value is in a known format that could not be decoded (the
    # report says why), 2 for a usage error; a script can tell good values from broken ones.
    return 1 if undecodable else 0
