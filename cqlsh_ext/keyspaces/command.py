"""What Amazon Keyspaces changes in cqlsh's DESCRIBE, for the shell (cqlsh_ext.shell.ext_shell.ExtShell's
do_describe; its do_copy reads COPY FROM's level from keyspaces.wiring): where the server has no
DESCRIBE of its own (a 3.x server: Keyspaces reports 3.11.2), DESCRIBE answered from the driver's
schema and printed by cqlsh's own printers. Where nothing of Keyspaces applies, cqlsh's own method
runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.keyspaces.describe import Hidden
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed


def major(release: str) -> int:
    """4 for '4.1.3', 3 for '3.11.2'; a release that does not start with a number counts as new."""
    head = release.split(".", 1)[0]
    return int(head) if head.isdigit() else 99


def server_describes(release: str) -> bool:
    """True for a server that answers DESCRIBE itself (4.0 and later): cqlsh's own DESCRIBE runs."""
    return major(release) >= 4


def describe(shell: Shell, parsed: Parsed, hidden: Hidden | None = None) -> None:
    """DESCRIBE read from the driver's schema, printed by cqlsh's printers (a one-line error for
    what it cannot describe); `hidden`: what a read-only policy hides, left out."""
    from cqlsh_ext.keyspaces.describe import KeyspacesDescribeError, describe_request, described

    try:
        kind, rows = described(shell.conn, shell.current_keyspace,
                               describe_request(parsed, shell.cql_unprotect_name), hidden)
    except KeyspacesDescribeError as err:
        shell.printerr(str(err))
        return
    printers = {"keyspaces": shell.describe_keyspaces, "list": shell.describe_list,
                "cluster": shell.describe_cluster}
    if kind in printers:
        printers[kind](rows)
    else:
        shell.describe_element([{"create_statement": text} for text in rows])
