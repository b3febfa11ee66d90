"""TLS for --keyspaces and --certfile: verified against the system trust store or a CA file.

cqlsh's own `[ssl]` handling needs a certfile and hands the driver options from which it builds a
context without the system trust store (and, with cqlsh's PROTOCOL_TLS, without verifying at all).
Here the driver gets a real `ssl.SSLContext` (PROTOCOL_TLS_CLIENT: certificate and host name
verified) through the connection seam (cqlsh_ext.upstream.seams, seam 6), for the shell's connection,
LOGIN's and COPY's worker processes alike.

`TLSSettings` is what cqlsh keeps as `Shell.ssl` (truthy) and hands to COPY's workers; unpickling
it in a spawned worker installs the same hook there.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.keyspaces.errors import KeyspacesError

_ACTIVE: TLSSettings | None = None


@dataclass(frozen=True)
class TLSSettings:
    #: Name the certificate must carry (the host the user gave, not a resolved address).
    server_hostname: str
    #: PEM file of CA certificates; None: the system trust store.
    certfile: str | None = None

    def context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.certfile:
            if not os.path.isfile(self.certfile):
                raise KeyspacesError(f"--certfile {self.certfile}: no such file")
            try:
                ctx.load_verify_locations(cafile=self.certfile)
            except (ssl.SSLError, ValueError) as err:
                raise KeyspacesError(f"--certfile {self.certfile}: not a PEM file of CA certificates "
                                     f"({err.__class__.__name__})") from None
        else:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
        return ctx

    def ssl_options(self) -> dict[str, Any]:
        return {"server_hostname": self.server_hostname}

    def cluster_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Cluster(...) arguments with our context, where cqlsh asked for TLS (ssl_options set)."""
        if kwargs.get("ssl_options") is None and kwargs.get("ssl_context") is None:
            return kwargs
        return {**kwargs, "ssl_context": self.context(), "ssl_options": self.ssl_options()}

    def __reduce__(self) -> tuple[Any, tuple[str, str | None]]:
        return (_restore, (self.server_hostname, self.certfile))


def _restore(server_hostname: str, certfile: str | None) -> TLSSettings:
    settings = TLSSettings(server_hostname, certfile)
    install(settings)
    return settings


def _ssl_settings(host: str, config_file: str, env: Any = os.environ) -> dict[str, Any]:
    assert _ACTIVE is not None
    return _ACTIVE.ssl_options()


def _cluster_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return _ACTIVE.cluster_kwargs(kwargs) if _ACTIVE is not None else kwargs


def install(settings: TLSSettings) -> None:
    """Make every connection cqlsh opens in this process use settings (idempotent)."""
    global _ACTIVE
    from cqlsh_ext.upstream import seams

    settings.context()  # fail now, with one line, on a bad --certfile
    first = _ACTIVE is None
    _ACTIVE = settings
    if first:
        seams.install_connection_hook(_cluster_kwargs, _ssl_settings)
