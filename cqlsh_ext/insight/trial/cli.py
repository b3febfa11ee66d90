"""`cqlsh-ext trial PATH --into KEYSPACE [options] [connection options]`: COMPRESSION TRIAL on values
from files, written to the cluster the shell's connection options name.

The values are a file (one value, or one 0x... hex value per line) or a directory (a value per
file), each read as `cqlsh-ext inspect` reads one (insight.value_files). The run is the shell's own
`COMPRESSION TRIAL FROM '<path>' ... INTO <keyspace>` statement, executed as `cqlsh-ext -e` executes
one: every connection option and cqlshrc setting of the shell applies (host, port, credentials,
TLS, --keyspaces and SigV4), as does the exit code (2 when the trial is refused).
"""

from __future__ import annotations

import argparse

USAGE = "cqlsh-ext trial PATH --into KEYSPACE [options] [host [port]] [connection options]"
#: cqlsh's own ways of giving statements: the trial is the statement here.
_STATEMENT_FLAGS = ("-e", "--execute", "-f", "--file")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cqlsh-ext trial", usage=USAGE, allow_abbrev=False,
        description="Measures what each codec does to latency, throughput and capacity units: the values "
        "of PATH re-compressed per codec, written into scratch tables of KEYSPACE and read back "
        "(COMPRESSION TRIAL, HELP TRIAL in the shell). The other options are the shell's "
        "connection options (cqlsh-ext --help).")
    p.add_argument("path", metavar="PATH",
                   help="a file (one value, or one 0x... hex value per line) or a directory "
                   "(a value per file)")
    p.add_argument("--into", metavar="KEYSPACE", required=True,
                   help="the keyspace for the scratch tables (dropped at the end unless --keep)")
    p.add_argument("--codecs", metavar="CHAIN,...",
                   help="the variants: encode() chains, stored, uncompressed (default: stored, "
                   "uncompressed and three common codecs)")
    p.add_argument("--rows", type=int, metavar="N", help="values to measure at most (default 1000)")
    p.add_argument("--concurrency", type=int, metavar="N", help="requests in flight (default 16)")
    p.add_argument("--keep", action="store_true", help="keep the scratch tables")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of the text report")
    p.add_argument("--confirm", action="store_true",
                   help="go ahead on Amazon Keyspaces without asking (capacity units are billed)")
    return p


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def statement(args: argparse.Namespace) -> str:
    """The shell statement the arguments stand for."""
    words = ["COMPRESSION TRIAL FROM", _literal(args.path)]
    if args.codecs:
        words += ["CODECS", ", ".join(_literal(c.strip()) for c in args.codecs.split(",") if c.strip())]
    if args.rows is not None:
        words += ["ROWS", str(args.rows)]
    if args.concurrency is not None:
        words += ["CONCURRENCY", str(args.concurrency)]
    words += ["INTO", '"' + args.into.replace('"', '""') + '"']
    flags = (("KEEP", args.keep), ("JSON", args.json), ("CONFIRM", args.confirm))
    words += [flag for flag, on in flags if on]
    return " ".join(words)


def shell_args(argv: list[str]) -> list[str]:
    """The shell's command line for `cqlsh-ext trial ARGV`: the connection options given and the
    statement to execute. argparse exits with its usage message when ARGV is wrong."""
    parser = _parser()
    args, rest = parser.parse_known_args(argv)
    if any(word in _STATEMENT_FLAGS or word.startswith(("--execute=", "--file=")) for word in rest):
        parser.error("the trial is the statement to run: no -e or -f")
    for name in ("rows", "concurrency"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    return [*rest, "-e", statement(args)]
