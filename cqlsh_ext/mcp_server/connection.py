"""The shell, headless: cqlsh's main() builds and connects it exactly as for `cqlsh-ext` (cqlshrc
and its credentials file, --sigv4/--keyspaces, TLS, the environment; our settings), from the
class cli.py makes with `Headless` first among its bases. Its loop serves calls instead of reading
a terminal (`serve`, given by cli.py); each call's statement runs through the shell's own
`handle_statement`, as `-e` runs it, its output captured (capture.py).

The narrowest seams, all on the Shell: `handle_statement(tokens, text)` for one statement (cqlsh's
onecmd does the same per statement), `printerr` for its errors, `cmdloop` for the loop; the driver
reconnects a lost server by itself, every few seconds at most (shell.py shortens its policy when
`serving` is set, as for the interactive shell).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from cqlsh_ext.mcp_server.capture import Capture, capturing, current
from cqlsh_ext.output import OutputClosed

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.gate import AllowedStatement
    from cqlsh_ext.upstream.protocol import Shell


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

    def cmdloop(self, intro: Any = None) -> None:
        type(self).serve(self)
        self.statement_error = False  # cqlsh's main() exits 2 after a script whose statement failed

    def printerr(self, text: Any, color: Any = None, newline: bool = True, shownum: Any = None) -> None:
        capture = current()
        if capture is None:
            # cqlsh's Shell, after this mixin in the class's bases (untyped: seen as Any).
            cast(Any, super()).printerr(text, color, newline, shownum)
            return
        self.statement_error = True
        capture.error(str(text))


def known(shell: Shell, keyspace: str | None, table: str) -> None:
    """The driver learns of a schema change a moment after it happens, by an event: a table the
    statement names that the driver's schema does not know yet (made since the server started) is
    looked up once more. Whatever is still missing then, the statement says so."""
    from cqlsh_ext.reading.resolve import find_table

    find_table(shell.conn, shell.current_keyspace, keyspace, table, refresh=True)


def run(shell: Shell, read: AllowedStatement, capture: Capture) -> None:
    """Run the statement `read` as the shell runs a statement of `-e`, its output into `capture`."""
    with capturing(capture):
        try:
            shell.handle_statement(read.tokens, read.source)
        except OutputClosed:
            pass  # the capture ended it (a cap, a stop): it says which
        except Exception as err:  # what cqlsh's onecmd says of a statement that raised
            shell.printerr(str(err))
