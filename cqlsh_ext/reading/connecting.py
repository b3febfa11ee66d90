"""The connection a front end other than the shell makes (`cqlsh-ext spark`, `cqlsh_ext.connect`),
from the shell's arguments and cqlshrc as cqlsh reads them: our flags and settings, cqlsh's options,
the auth provider cqlshrc names, Amazon Keyspaces' SigV4 and TLS, the dictionaries loaded.

Amazon Keyspaces' side (its host and port, the SigV4 provider, the TLS context) belongs to the
keyspaces feature, above this layer: the front end hands it in (`KeyspacesSide`, which
`cqlsh_ext.keyspaces.wiring` is).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from cqlsh_ext.settings import (
    KeyspacesOptions,
    Settings,
    add_flags,
    load,
    load_dictionaries,
    region_from_host,
)

__all__ = ["Connection", "ConnectionRefused", "KeyspacesSide", "connection", "flags_parser"]


class ConnectionRefused(Exception):
    """The arguments or cqlshrc make no connection this front end can use (one line)."""


class KeyspacesSide(Protocol):
    """What the keyspaces feature does to a connection (`cqlsh_ext.keyspaces.wiring`)."""

    def connection_args(self, opts: KeyspacesOptions, cqlsh_args: list[str],
                        positional: list[str]) -> list[str]: ...

    def prepare(self, setup: Settings, hostname: str, kwargs: dict[str, Any]) -> None: ...

    def env_region(self) -> str | None: ...


@dataclass
class Connection:
    host: str
    port: int
    settings: Settings
    options: Any  # cqlsh's own options (read_options): credentials, ssl, execute, file, keyspace
    config_file: str
    auth_provider: Any = None
    #: TLS for the Python driver: ssl_context / ssl_options for Cluster().
    tls: dict[str, Any] = field(default_factory=dict)
    sigv4_region: str | None = None
    #: The TLS settings the context was made of (keyspaces.tls.TLSSettings: picklable), for a
    #: connection made again elsewhere (Spark's executors for COMPRESSION REWRITE's writes).
    tls_settings: Any = None

    @property
    def ssl(self) -> bool:
        return bool(self.tls)

    def cluster(self) -> Any:
        from cassandra.cluster import Cluster

        return Cluster([self.host], port=self.port, auth_provider=self.auth_provider,
                       connect_timeout=self.options.connect_timeout,
                       control_connection_timeout=self.options.connect_timeout, **self.tls)


C = TypeVar("C", bound=Connection)


def flags_parser(prog: str) -> argparse.ArgumentParser:
    """Our display and Keyspaces flags, as the shell's command line takes them (cqlsh_ext.cli)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, prog=prog)
    add_flags(parser, "display")
    add_flags(parser, "keyspaces")
    return parser


def connection(args: list[str], keyspaces: KeyspacesSide, kind: type[C], *, prog: str,
               plain_or_sigv4_only: str | None = None, flags: Mapping[str, object] | None = None) -> C:
    """The connection the shell would make with these arguments (a `kind`), the dictionaries they
    name loaded. `plain_or_sigv4_only`: the front end's name when it authenticates only with a
    user name and password or with SigV4 (Spark's connector), refusing cqlshrc's other providers.
    `flags`: settings' flags the front end read itself (by name: `cqlsh-ext spark`'s --read-only
    and --policy), applied over cqlshrc as the shell applies its own.
    Raises ConnectionRefused, SettingError or the keyspaces side's error, with one line; cqlsh's
    option parser exits (SystemExit) as it does in the shell."""
    from cqlsh_ext.upstream import seams

    ext, cqlsh_args = flags_parser(prog).parse_known_args(args)
    for name, value in (flags or {}).items():
        setattr(ext, name, value)
    finder = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    finder.add_argument("--cqlshrc")
    cqlshrc = finder.parse_known_args(cqlsh_args)[0].cqlshrc
    cqlshmain = seams.import_cqlshmain(cqlshrc)
    # An option neither parser takes (the shell's --read-only): cqlsh would read it as the host
    # name, and the host as the port ("'127.0.0.1' is not a valid port number").
    stray = next((word for word in cqlshmain.parser.parse_known_args(cqlsh_args)[1]
                  if word.startswith("-") and word != "-"), None)
    if stray is not None:
        from cqlsh_ext.common.text import visible

        typed = visible(stray.split("=", 1)[0], 60)
        raise ConnectionRefused(f"unknown option {typed}: {prog} --help lists them")
    with seams.cqlshrc_in_force(cqlshmain, cqlshrc) as config_file:
        ext.debug = "--debug" in cqlsh_args
        settings = load(ext, config_file)
        load_dictionaries(settings)  # before any reading (Spark: before each task carries them away)
        opts = settings.keyspaces
        if opts.active:
            cqlsh_args = opts.give_back + cqlsh_args
            positional = cqlshmain.parser.parse_known_args(cqlsh_args)[1]
            cqlsh_args = keyspaces.connection_args(opts, cqlsh_args, positional)
        options, host, port = cqlshmain.read_options(cqlsh_args)
    from cqlshlib import authproviderhandling

    provider = authproviderhandling.load_auth_provider(
        config_file=config_file, cred_file=options.credentials,
        username=options.username, password=options.password)
    conn = kind(host, port, settings, options, config_file, provider)
    kwargs: dict[str, Any] = {"auth_provider": provider, "ssl": options.ssl}
    if opts.active:
        keyspaces.prepare(settings, host, kwargs)
        if opts.wants_sigv4 or (opts.keyspaces and provider is None):
            conn.sigv4_region = getattr(kwargs["auth_provider"], "region_name", None) or opts.region \
                or region_from_host(host) or keyspaces.env_region()
            if not conn.sigv4_region:
                raise ConnectionRefused("SigV4 needs a region: --region REGION (or --keyspaces REGION)")
    conn.auth_provider = kwargs["auth_provider"]
    ssl = kwargs["ssl"]
    if hasattr(ssl, "context"):  # --keyspaces / --certfile: a verified context (keyspaces.tls)
        conn.tls = {"ssl_context": ssl.context(), "ssl_options": ssl.ssl_options()}
        conn.tls_settings = ssl
    elif ssl:
        from cqlshlib import sslhandling

        conn.tls = {"ssl_options": sslhandling.ssl_settings(host, config_file)}
    if plain_or_sigv4_only and conn.auth_provider is not None and conn.sigv4_region is None \
            and getattr(conn.auth_provider, "username", None) is None:
        raise ConnectionRefused(f"{plain_or_sigv4_only} authenticates with a user name and password "
                                "or with SigV4; cqlshrc's [auth_provider] names another provider")
    return conn
