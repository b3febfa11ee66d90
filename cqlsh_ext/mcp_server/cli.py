"""`cqlsh-ext mcp [HOST [PORT]] [the shell's connection options] [--time-limit S] [--max-bytes N]`.

The entry point (cqlsh_ext.cli) asks `prepare(args)` for the shell's command line and the first
base of the shell's class, builds the shell with cqlsh's main() as for `cqlsh-ext` itself, and
hands main() to `Serving.run`. prepare() takes the protocol's file descriptors before anything
else runs: the client's stdin and stdout are the protocol's alone; for everything else standard
input is the null device (nothing can wait for input) and standard output is standard error
(nothing printed can reach the wire). The protocol starts in its thread at once: it answers
`initialize` while the shell connects, and calls wait until the shell serves them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.calls import Calls

USAGE = "cqlsh-ext mcp [HOST [PORT]] [connection options] [--time-limit SECONDS] [--max-bytes N]"
DESCRIPTION = """A Model Context Protocol server over stdio: an AI assistant's tools that read the
database through cqlsh-ext, read-only (docs/mcp.md). It connects as the shell does: the shell's
connection options (cqlsh-ext --help: -u, --credentials, --cqlshrc, -k, --ssl, --keyspaces,
--sigv4, ...), cqlshrc and the environment; its display settings (-d, --decode, --cap) decide how
values decode."""
#: Options of the shell that read statements: a server takes its statements from the client.
_NOT_HERE = ("-e", "--execute", "-f", "--file", "-t", "--tty")


def _not_here(arg: str) -> str | None:
    """The statement-reading option `arg` is (cqlsh's parser takes `-eX` and abbreviations), or None."""
    name = arg.split("=", 1)[0]
    if name.startswith("--"):
        long = (o for o in _NOT_HERE if o.startswith("--") and len(name) > 3 and o.startswith(name))
        return next(long, None)
    return next((o for o in _NOT_HERE if len(o) == 2 and arg.startswith(o)), None)


def _parser() -> argparse.ArgumentParser:
    from cqlsh_ext.mcp_server.calls import DEFAULT_SECONDS
    from cqlsh_ext.mcp_server.tools import DEFAULT_BYTES

    parser = argparse.ArgumentParser(prog="cqlsh-ext mcp", usage=USAGE, description=DESCRIPTION,
                                     allow_abbrev=False)
    parser.add_argument("--time-limit", type=float, default=DEFAULT_SECONDS, metavar="SECONDS",
                        help="a call's time limit, its wait for earlier calls included; then it stops as "
                             "at Ctrl-C (default %(default)g)")
    parser.add_argument("--max-bytes", type=int, default=DEFAULT_BYTES, metavar="N",
                        help="the rows of one answer at most, in bytes of JSON (default %(default)s)")
    return parser


@dataclass
class Serving:
    """What the entry point builds the shell with: its command line, the first base of its class
    (its loop serves `calls`)."""

    shell_args: list[str]
    shell_base: type
    calls: Calls

    def run(self, main: Callable[[], None]) -> int:
        """cqlsh's main() (which builds the shell and runs its loop); the exit code."""
        try:
            main()
        except SystemExit as err:  # a connection error, a missing password: one line, as the shell
            if isinstance(err.code, str):
                print(err.code, file=sys.stderr)
                return 1
            return int(err.code or 0)
        except KeyboardInterrupt:  # Ctrl-C where it was started by hand: the server ends
            return 130
        return 0


def prepare(args: list[str]) -> Serving | int:
    """The shell's command line and class base, the protocol started; or an exit code."""
    parser = _parser()
    options, rest = parser.parse_known_args(args)  # -h, --help: this parser's help, and exit
    given = [option for option in map(_not_here, rest) if option is not None]
    if given:
        print(f"cqlsh-ext mcp: {given[0]} is not an option here: the assistant sends the statements",
              file=sys.stderr)
        return 2
    if options.time_limit <= 0 or options.max_bytes < 1024:
        print("cqlsh-ext mcp: --time-limit must be above 0 and --max-bytes at least 1024", file=sys.stderr)
        return 2
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        from cqlsh_ext.common.install import install_hint

        print(f"cqlsh-ext mcp: the MCP server needs the mcp package: {install_hint('mcp')}", file=sys.stderr)
        return 2
    from cqlsh_ext.mcp_server import connection, server
    from cqlsh_ext.mcp_server.calls import Calls

    read_fd, write_fd = _take_stdio()
    calls = Calls(options.time_limit, options.max_bytes)
    server.start(calls, read_fd, write_fd)
    base = type("Headless", (connection.Headless,), {"serve": staticmethod(calls.serve)})
    # The shell's answers are its JSON (flags win over cqlshrc: given last, this one wins). Its
    # per-value cap (--max-output-size) stays the user's: it is also each value's decoding budget,
    # so a smaller one would change what a payload query finds.
    return Serving([*rest, "--output-format", "json"], base, calls)


def _take_stdio() -> tuple[int, int]:
    """The client's stdin and stdout as the protocol's own descriptors; standard input becomes the
    null device and standard output standard error for everything else."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return read_fd, write_fd
