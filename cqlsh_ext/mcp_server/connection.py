"""The shell, headless: cqlsh's main() builds and connects it exactly as for `cqlsh-ext` (cqlshrc
and its credentials file, --sigv4/--keyspaces, TLS, the environment; our settings), from the
class cli.py makes with a `Headless` as its loop (the shell's declared hook for a loop of our own:
cqlsh_ext.shell.ext_shell.ServingLoop, the class's `server`). Its loop serves calls instead of reading a
terminal (`Headless.serve`, handed the calls' loop by cli.py); each call reads through the one
reading (cqlsh_ext.reading) in a context made of the shell's session and settings (tools.Work.context),
and answers from the typed answer: nothing the shell prints is read back, and what it prints (a
warning of the driver's, say) goes to the server's log.

The driver reconnects a lost server by itself, every few seconds at most (the shell shortens its
policy when it has a `server`, as for the interactive shell).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext


@dataclass(frozen=True)
class Served:
    """What every call reads of the connection, made once by the headless shell that serves them
    (Headless.serve): the reading context of its session, keyspace, levels and settings
    (reading.context.shell_context; the settings the shell's own object, so a call's `decode`
    applies), and the server's release as cqlsh read it at connect (`versions`)."""

    context: ReadContext
    versions: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Headless:
    """The shell's loop in `cqlsh-ext mcp` (its `server`: cqlsh_ext.shell.ext_shell.ServingLoop)."""

    #: The loop that serves calls on what the connection serves (calls.Calls.serve), given by cli.py.
    serve_calls: Callable[[Served], None]

    def admit(self, connecting: dict[str, Any]) -> None:
        """No user without a password (`connecting`: cqlsh's keyword arguments to the Shell): cqlsh
        would ask at the terminal (getpass), and a server's stdin is the protocol."""
        from cassandra.auth import PlainTextAuthProvider

        provider = connecting.get("auth_provider")
        if isinstance(provider, PlainTextAuthProvider) and not provider.password:
            raise SystemExit(f"cqlsh-ext mcp: user {provider.username!r} has no password: give it with -p, "
                             "or in the credentials file ([plain_text_auth] password = ...)")

    def serve(self, context: ReadContext, versions: dict[str, Any]) -> None:
        """Every call, on what the connection serves, made once: the reading context of the shell
        (its session, keyspace, levels, settings) and the server's release. cqlsh-ext mcp refuses
        USE, CONSISTENCY and PAGING: none changes while it serves."""
        self.serve_calls(Served(context, versions))
