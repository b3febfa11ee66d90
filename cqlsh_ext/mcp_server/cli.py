"""`cqlsh-ext mcp [HOST [PORT]] [the shell's connection options] [--time-limit S] [--max-bytes N]
[--policy FILE] [--audit-log FILE] [--calls-per-minute N] [--schema-file FILE ...]
[--http [HOST:]PORT [--token-file FILE | --oauth-issuer URL --oauth-jwks FILE|URL ...]
  [--tls-cert F --tls-key F [--tls-client-ca F]] [--http-body-timeout S] [--private-network]]`.

The entry point (cqlsh_ext.cli) asks `prepare(args)` for the shell's command line and the loop that
serves calls on the shell (connection.Headless), builds the shell with cqlsh's main() as for
`cqlsh-ext` itself, and hands main() to `Serving.run`. prepare() takes the protocol's file
descriptors before anything else runs: the client's stdin and stdout are the protocol's alone; for
everything else standard input is the null device (nothing can wait for input) and standard output
is standard error (nothing printed can reach the wire); with --http the protocol is the network's,
and only standard input is the null device. The policy file, the audit log and the HTTP set-up are
checked before the shell connects: a mistake is one line on standard error, exit status 2. The
OAuth settings are keys of cqlsh_ext.settings (flags here, or cqlshrc's [cqlsh_ext] as the shell
reads it). The protocol starts in its thread at once: it answers `initialize` while the shell
connects, and calls wait until the shell serves them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.calls import Calls
    from cqlsh_ext.mcp_server.connection import Headless
    from cqlsh_ext.mcp_server.server import Protocol

#: Within 80 columns after argparse's "usage: ".
USAGE = ("cqlsh-ext mcp [HOST [PORT]] [connection options] [--time-limit SECONDS]\n"
         "                     [--max-bytes N] [--policy FILE] [--audit-log FILE]\n"
         "                     [--export-dir DIR] [--http [HOST:]PORT ...]")
DESCRIPTION = """A Model Context Protocol server over stdio (or Streamable HTTP: --http): an AI
assistant's tools that read the database through cqlsh-ext, read-only (cqlsh-ext docs mcp). It connects as
the shell does: the shell's connection options (cqlsh-ext --help: -u, --credentials, --cqlshrc, -k,
--ssl, --keyspaces, --sigv4, ...), cqlshrc and the environment; its display settings (-d, --decode,
--cap) decide how values decode."""
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
                        help="an answer's size by default, in bytes as sent (a call's max_bytes may ask for "
                             "another; default %(default)s)")
    safety = parser.add_argument_group("policy and audit (cqlsh-ext docs mcp, \"Policy\")")
    safety.add_argument("--policy", metavar="FILE",
                        help="a policy file (TOML): tools allowed, tables denied, columns and payload paths "
                             "redacted, calls per minute")
    safety.add_argument("--audit-log", metavar="FILE",
                        help="append one JSON line per call: time, tool, the statement's hash and first "
                             "words, decision, rows, bytes, seconds (never a value)")
    safety.add_argument("--calls-per-minute", type=int, metavar="N",
                        help="refuse calls past N a minute (the policy's [limits], which this overrides)")
    safety.add_argument("--schema-file", action="append", default=[], metavar="FILE",
                        help="a schema file (protobuf descriptor set, Avro schema, ...) a decode argument "
                             "may name; repeat for more (no other file is ever read for a call)")
    http = parser.add_argument_group("Streamable HTTP (cqlsh-ext docs mcp, \"Over HTTP\")")
    http.add_argument("--http", metavar="[HOST:]PORT",
                      help="serve MCP over Streamable HTTP at http(s)://HOST:PORT/mcp instead of stdio "
                           "(HOST 127.0.0.1 by default)")
    http.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (visible to other users on "
                                      "the command line: prefer --token-file or CQLSH_EXT_MCP_TOKEN)")
    http.add_argument("--token-file", metavar="FILE", help="the bearer token, the file's first line")
    http.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM)")
    http.add_argument("--tls-key", metavar="FILE", help="and this private key (PEM)")
    http.add_argument("--tls-client-ca", metavar="FILE",
                      help="require client certificates signed by this CA (mutual TLS)")
    from cqlsh_ext.mcp_server.http_bounds import BODY_SECONDS, BODY_WHOLE

    http.add_argument("--http-body-timeout", type=float, metavar="SECONDS",
                      help="close a connection whose request body makes no progress this long, or is "
                           f"not whole within {BODY_WHOLE} times it, answered 408 (nginx's "
                           f"client_body_timeout; default {BODY_SECONDS:g})")
    http.add_argument("--private-network", action="store_true",
                      help="an address other than loopback without TLS: the network is yours alone "
                           "(a Compose network); a token (or OAuth) is still required")
    from cqlsh_ext.settings import add_flags

    add_flags(parser, "mcp")  # --oauth-*: their keys in cqlsh_ext.settings (cqlshrc's too)
    return parser


@dataclass
class Serving:
    """What the entry point builds the shell with: its command line, its loop (`server`: it serves
    `calls`)."""

    shell_args: list[str]
    server: Headless
    calls: Calls
    protocol: Protocol | None = None

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
        if self.protocol is not None and self.protocol.failed:
            print(f"cqlsh-ext mcp: {self.protocol.failed}", file=sys.stderr)
            return 1
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
    from cqlsh_ext.mcp_server.tools import MAX_BYTES, MIN_BYTES

    if options.time_limit <= 0 or not MIN_BYTES <= options.max_bytes <= MAX_BYTES:
        print(f"cqlsh-ext mcp: --time-limit must be above 0 and --max-bytes from {MIN_BYTES:,} to "
              f"{MAX_BYTES:,}", file=sys.stderr)
        return 2
    if options.http_body_timeout is not None and not options.http_body_timeout > 0:
        print("cqlsh-ext mcp: --http-body-timeout must be above 0", file=sys.stderr)
        return 2
    if options.calls_per_minute is not None and options.calls_per_minute < 1:
        print("cqlsh-ext mcp: --calls-per-minute must be 1 or more", file=sys.stderr)
        return 2
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        from cqlsh_ext.common.install import install_hint

        print(f"cqlsh-ext mcp: the MCP server needs the mcp package: {install_hint('mcp')}", file=sys.stderr)
        return 2
    setup = _setup(options, rest)
    if isinstance(setup, str):
        print(f"cqlsh-ext mcp: {setup}", file=sys.stderr)
        return 2
    from cqlsh_ext.mcp_server import connection, server

    if setup.http is None:
        setup.read_fd, setup.write_fd = _take_stdio()
    else:
        _null_stdin()
    protocol = server.Protocol(setup)
    protocol.start()
    calls = setup.calls
    headless = connection.Headless(calls.serve)
    # The shell's answers are its JSON (flags win over cqlshrc: given last, this one wins). Its
    # per-value cap (--max-output-size) stays the user's: it is also each value's decoding budget,
    # so a smaller one would change what a payload query finds.
    return Serving([*rest, "--output-format", "json"], headless, calls, protocol)


def _setup(options: argparse.Namespace, rest: list[str]) -> Any:
    """The protocol's Setup from the options (`rest`: the shell's, its --cqlshrc among them), or the
    one line that says what is wrong."""
    from cqlsh_ext.mcp_server import policy, transport
    from cqlsh_ext.mcp_server.calls import Calls
    from cqlsh_ext.mcp_server.guard import Guard
    from cqlsh_ext.mcp_server.server import Setup
    from cqlsh_ext.mcp_server.tools import TOOLS
    from cqlsh_ext.settings import SETTINGS

    try:
        rules = policy.load(options.policy, TOOLS, options.calls_per_minute)
    except policy.PolicyError as err:
        return str(err)
    if rules.system_allowed:
        from cqlsh_ext.mcp_server.log import log

        log(f"the policy ({rules.path or rules.source}) allows system tables besides the schema and "
            "topology ones: " + ", ".join(f"{keyspace}.{table}" for keyspace, table in rules.system_allowed))
    for path in options.schema_file:
        if not os.path.isfile(path):
            return f"--schema-file {path}: no such file"
    from cqlsh_ext.mcp_server.exports import ExportDir, ExportRefused
    from cqlsh_ext.mcp_server.http_bounds import BODY_SECONDS
    from cqlsh_ext.settings import SettingError, load
    from cqlsh_ext.upstream import seams

    try:  # flags over cqlshrc, as the shell reads it
        settings = load(options, seams.import_cqlshmain(seams.cqlshrc_arg(rest)).CONFIG_FILE).mcp
    except SettingError as err:
        return str(err)
    exports = None
    if settings.export_dir is not None:
        try:
            exports = ExportDir.of(settings.export_dir, settings.export_max_age, settings.export_max_bytes)
        except ExportRefused as err:
            return f"--export-dir: {err}"
    http = None
    if options.http is not None:
        try:
            host, port = transport.parse_address(options.http)
            if options.token is not None:
                print("cqlsh-ext mcp: warning: a token on the command line is visible to other users of this "
                      f"machine: prefer --token-file or {transport.TOKEN_ENV}", file=sys.stderr)
            token = transport.read_token(options.token, options.token_file)
            http = transport.HttpOptions(host, port, token, options.tls_cert, options.tls_key,
                                         options.tls_client_ca, options.private_network,
                                         body_seconds=options.http_body_timeout or BODY_SECONDS)
            oauth = _oauth(settings, http)
            if isinstance(oauth, str):
                return oauth
            http = replace(http, oauth=oauth)
            transport.check(http)
        except transport.TransportError as err:
            return str(err)
    elif any(v for v in (options.token, options.token_file, options.tls_cert, options.tls_key,
                         options.tls_client_ca, options.private_network, options.http_body_timeout,
                         *(getattr(options, key.name) for key in SETTINGS
                           if key.group == "mcp" and key.name.startswith("mcp_oauth_")))):
        return ("--token, --token-file, --tls-*, --http-body-timeout, --oauth-* and --private-network go "
                "with --http")
    audit = None
    if options.audit_log is not None:
        from cqlsh_ext.mcp_server.audit import AuditLog

        try:
            audit = AuditLog(options.audit_log)
        except OSError as err:
            return f"--audit-log {options.audit_log}: {err.strerror or err}"
    rate = None
    if rules.calls_per_minute is not None:
        from cqlsh_ext.mcp_server.ratelimit import RateLimit

        rate = RateLimit(rules.calls_per_minute)
    calls = Calls(options.time_limit, options.max_bytes, exports)
    return Setup(calls, Guard(rules, tuple(options.schema_file)), audit, rate, http)


def _oauth(settings: Any, http: Any) -> Any:
    """The OAuth options of the settings (cqlsh_ext.settings.McpSettings; None: OAuth off), or the
    one line that says what is wrong."""
    from cqlsh_ext.mcp_server import oauth

    try:
        # The --http address names the server unless it listens on every address.
        wildcard = http.host in ("0.0.0.0", "::")
        return oauth.options(settings, None if wildcard else http.url)
    except oauth.OAuthError as err:
        return str(err)


def _null_stdin() -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


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
