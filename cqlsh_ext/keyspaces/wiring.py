"""How the connection settings reach cqlsh's Shell (used by cqlsh_ext.shell.ext_shell.ExtShell.__init__).

`connecting()` wraps the stock `Shell.__init__` of every connection, Keyspaces or not: before it,
under the Keyspaces flags, it swaps in the SigV4 provider and our TLS settings; around it, it turns
a failed connection into one line (errors.connection_failures; SystemExit, exit code 1).
`consistency()` is the level the shell takes after it: LOCAL_QUORUM for --keyspaces, and
`copy_consistency()` the one a COPY FROM runs at. `prepare()`, `connection_args()` and
`env_region()` are what Spark mode's and the Python API's connection (reading.connecting) hand in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from cqlsh_ext.keyspaces.errors import ConnectionFailed, connection_failures, remember_secret

# With prepare(): what a front end's connection hands in (reading.connecting.KeyspacesSide).
from cqlsh_ext.keyspaces.options import connection_args as connection_args
from cqlsh_ext.keyspaces.options import env_region as env_region
from cqlsh_ext.settings import Settings


def _is_plain(provider: Any) -> bool:
    from cassandra.auth import PlainTextAuthProvider

    return isinstance(provider, PlainTextAuthProvider)


def prepare(setup: Settings, hostname: str, kwargs: dict[str, Any]) -> None:
    """Adjust Shell.__init__'s keyword arguments in place: the -p password never shown; the
    Keyspaces flags' SigV4 provider and TLS settings (nothing else changes without them)."""
    opts = setup.keyspaces
    provider = kwargs.get("auth_provider")
    if _is_plain(provider):
        remember_secret(getattr(provider, "password", None))
    use_sigv4 = opts.wants_sigv4 or (opts.keyspaces and provider is None)
    if use_sigv4:
        from cqlsh_ext.keyspaces.auth import make_provider

        kwargs["auth_provider"] = make_provider(opts.region, hostname, opts.profile, opts.role_arn)
    if opts.tls:
        from cqlsh_ext.keyspaces import tls

        settings = tls.TLSSettings(hostname, opts.certfile)
        tls.install(settings)
        kwargs["ssl"] = settings


@contextmanager
def connecting(setup: Settings, args: tuple[Any, ...], kwargs: dict[str, Any],
               keep: tuple[type[BaseException], ...] = (),
               keyspaces: Callable[[], Iterable[str]] = tuple) -> Iterator[None]:
    """Prepare Shell(hostname, port, **kwargs)'s kwargs in place, then report any failure of the
    `with` body (connecting) but `keep` as one line and exit 1; a keyspace that is not there with
    the one of `keyspaces()` (the server's, as far as the connection read them) meant."""
    hostname = str(args[0] if args else kwargs.get("hostname"))
    port = int(args[1] if len(args) > 1 else kwargs.get("port", 0))
    opts = setup.keyspaces
    try:
        with connection_failures(hostname, port, tls=opts.tls, keyspaces=opts.active, debug=setup.debug,
                                 keep=keep):
            if kwargs.get("use_conn") is None:  # SOURCE's sub-shells reuse the connection
                prepare(setup, hostname, kwargs)
            yield
    except ConnectionFailed as err:
        import sys

        from cqlsh_ext.common.text import message, screen_width

        said = _keyspace_meant(str(err), keyspaces)
        # Python writes it to standard error: wrapped at words there when it is a terminal.
        raise SystemExit(message(f"Connection error: {said}", screen_width(sys.stderr))) from None


def _keyspace_meant(said: str, keyspaces: Callable[[], Iterable[str]]) -> str:
    """`said` with the keyspace meant when it says -k's keyspace is not there and one is near."""
    import re

    from cqlsh_ext.common.text import nearest

    missing = re.search(r"could not use keyspace '([^']+)'", said)
    if missing is None:
        return said
    try:
        near = nearest(missing.group(1), keyspaces())
    except Exception:  # the half-made connection's metadata: a hint, never a second error
        near = None
    return said if near is None else f"{said[:missing.end()]} (did you mean {near}?){said[missing.end():]}"


def consistency(setup: Settings) -> int | None:
    """The level the shell starts at, set after the stock __init__: LOCAL_QUORUM for reads and
    writes (and COPY) under --keyspaces; None: cqlsh's own."""
    if setup.keyspaces.keyspaces:
        import cassandra

        return int(cassandra.ConsistencyLevel.LOCAL_QUORUM)
    return None


def copy_consistency(setup: Settings, direction: str, level: int) -> int | None:
    """The level a COPY in `direction` (FROM, TO) runs at instead of the shell's `level`, said on
    stdout: LOCAL_QUORUM for COPY FROM under --keyspaces (Keyspaces refuses writes at ONE and the
    like); None: the shell's own."""
    import cassandra

    local_quorum = cassandra.ConsistencyLevel.LOCAL_QUORUM
    if not (setup.keyspaces.keyspaces and direction.upper() == "FROM" and level != local_quorum):
        return None
    name = cassandra.ConsistencyLevel.value_to_name.get(level, str(level))
    print(f"COPY FROM writes at LOCAL_QUORUM on Amazon Keyspaces (consistency is {name}).")
    return int(local_quorum)
