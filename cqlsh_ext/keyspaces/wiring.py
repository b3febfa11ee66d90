"""How the Keyspaces settings reach cqlsh's Shell (used by cqlsh_ext.shell.ExtShell.__init__).

`connecting()` wraps the stock `Shell.__init__`: before it, it swaps in the SigV4 provider and our
TLS settings; around it, it turns a failed connection into one line (SystemExit, exit code 1).
`configure()` runs after it: LOCAL_QUORUM for --keyspaces.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cqlsh_ext.keyspaces.errors import KeyspacesError, explain, redact, remember_secret
from cqlsh_ext.settings import Settings

if TYPE_CHECKING:
    from cqlsh_ext.cqlsh.protocol import Parsed, Shell


def _is_plain(provider: Any) -> bool:
    from cassandra.auth import PlainTextAuthProvider

    return isinstance(provider, PlainTextAuthProvider)


def prepare(setup: Settings, hostname: str, kwargs: dict[str, Any]) -> None:
    """Adjust Shell.__init__'s keyword arguments in place."""
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
def connecting(setup: Settings, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[None]:
    """Prepare Shell(hostname, port, **kwargs)'s kwargs in place, then report any failure of the
    `with` body (connecting) as one line and exit 1."""
    hostname = str(args[0] if args else kwargs.get("hostname"))
    port = int(args[1] if len(args) > 1 else kwargs.get("port", 0))
    try:
        if kwargs.get("use_conn") is None:  # SOURCE's sub-shells reuse the connection
            prepare(setup, hostname, kwargs)
        yield
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:
        if setup.debug:
            sys.stderr.write(redact("".join(traceback.format_exception(err))))
        message = str(err) if isinstance(err, KeyspacesError) else \
            explain(err, hostname, port, tls=setup.keyspaces.tls)
        raise SystemExit(redact(f"Connection error: {message}")) from None


def configure(setup: Settings, shell: Shell) -> None:
    """After the stock __init__: Keyspaces' consistency for reads and writes (and COPY)."""
    if setup.keyspaces.keyspaces:
        import cassandra

        shell.consistency_level = cassandra.ConsistencyLevel.LOCAL_QUORUM


@contextmanager
def copy_consistency(shell: Shell, parsed: Parsed) -> Iterator[None]:
    """COPY FROM at LOCAL_QUORUM under --keyspaces: Keyspaces refuses writes at ONE and the like."""
    import cassandra

    local_quorum = cassandra.ConsistencyLevel.LOCAL_QUORUM
    direction = (parsed.get_binding("dir", "") or "").upper()
    keyspaces = shell.settings.keyspaces.keyspaces
    if not (keyspaces and direction == "FROM" and shell.consistency_level != local_quorum):
        yield
        return
    saved = shell.consistency_level
    name = cassandra.ConsistencyLevel.value_to_name.get(saved, str(saved))
    print(f"COPY FROM writes at LOCAL_QUORUM on Amazon Keyspaces (consistency is {name}).")
    shell.consistency_level = local_quorum
    try:
        yield
    finally:
        shell.consistency_level = saved
