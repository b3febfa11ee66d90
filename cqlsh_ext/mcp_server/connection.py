"""The shell, headless: cqlsh's main() builds and connects it exactly as for `cqlsh-ext` (cqlshrc
and its credentials file, --sigv4/--keyspaces, TLS, the environment; our settings), from the
class cli.py makes with `Headless` first among its bases. Its loop serves calls instead of reading
a terminal (`serve`, given by cli.py); each call reads through the one reading
(cqlsh_ext.reading) in a context made of the shell's session and settings (tools.Work.context),
and answers from the typed answer: nothing the shell prints is read back, and what it prints (a
warning of the driver's, say) goes to the server's log.

The narrowest seams, all on the Shell: `cmdloop` for the loop; the driver reconnects a lost server
by itself, every few seconds at most (shell.py shortens its policy when `serving` is set, as for
the interactive shell).
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
    (Headless.served): the reading context of its session, keyspace, levels and settings
    (reading.context.shell_context; the settings the shell's own object, so a call's `decode`
    applies), and the server's release as cqlsh read it at connect (`versions`)."""

    context: ReadContext
    versions: dict[str, Any] = field(default_factory=dict)


class Headless:
    """The first base of the shell's class in `cqlsh-ext mcp`."""

    #: Read by the shell (cqlsh_ext.shell.ExtShell): a lost server is retried every few seconds.
    serving = True
    #: The loop that serves calls on the shell (calls.Calls.serve), set by cli.py.
    serve: Callable[[Any], None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from cassandra.auth import PlainTextAuthProvider

        provider = kwargs.get("auth_provider")
        if isinstance(provider, PlainTextAuthProvider) and not provider.password:
            # cqlsh would ask at the terminal (getpass): a server's stdin is the protocol.
            raise SystemExit(f"cqlsh-ext mcp: user {provider.username!r} has no password: give it with -p, "
                             "or in the credentials file ([plain_text_auth] password = ...)")
        super().__init__(*args, **kwargs)
        # Messages without cqlsh's '<stdin>:1:' prefix: there is no script whose lines they name.
        self.show_line_nums = False

    def served(self) -> Served:
        """What every call reads of the connection, made once: the reading context of this shell
        (its session, keyspace, levels, settings) and the server's release. cqlsh-ext mcp refuses
        USE, CONSISTENCY and PAGING: none changes while it serves."""
        from typing import cast

        from cqlsh_ext.reading.context import shell_context

        return Served(shell_context(cast(Any, self)), dict(getattr(self, "connection_versions", None) or {}))

    def cmdloop(self, intro: Any = None) -> None:
        type(self).serve(self.served())
        self.statement_error = False  # cqlsh's main() exits 2 after a script whose statement failed
