"""The shell's side of what Amazon Keyspaces changes in cqlsh's own commands, as a base of the
shell's class (cqlsh_ext.shell.ExtShell, before cqlsh's Shell, the `super()` of these methods):
DESCRIBE answered from the driver's schema where the server has no DESCRIBE of its own (a 3.x
server: Keyspaces reports 3.11.2), printed by cqlsh's own printers; COPY FROM's writes at
LOCAL_QUORUM. Where nothing of Keyspaces applies, cqlsh's own method runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cqlsh_ext.upstream.seams import stock_shell_class

if TYPE_CHECKING:
    from cqlsh_ext.settings import Settings
    from cqlsh_ext.upstream.protocol import Parsed


def major(release: str) -> int:
    """4 for '4.1.3', 3 for '3.11.2'; a release that does not start with a number counts as new."""
    head = release.split(".", 1)[0]
    return int(head) if head.isdigit() else 99


class KeyspacesCommands:
    """DESCRIBE and COPY as the shell runs them (see the module doc)."""

    settings: Settings
    connection_versions: dict[str, Any]
    conn: Any
    current_keyspace: str | None
    consistency_level: int

    def do_describe(self, parsed: Parsed) -> None:
        if major(self.connection_versions["build"]) >= 4:  # the server's own DESCRIBE
            return super().do_describe(parsed)  # type: ignore[misc]  # cqlsh's Shell's
        from cqlsh_ext.keyspaces.describe import KeyspacesDescribeError, describe_request, described

        shell: Any = self  # cqlsh's Shell: its printers and unquoting
        try:
            kind, rows = described(self.conn, self.current_keyspace,
                                   describe_request(parsed, shell.cql_unprotect_name))
        except KeyspacesDescribeError as err:
            shell.printerr(str(err))
            return None
        printers = {"keyspaces": shell.describe_keyspaces, "list": shell.describe_list,
                    "cluster": shell.describe_cluster}
        if kind in printers:
            printers[kind](rows)
        else:
            shell.describe_element([{"create_statement": text} for text in rows])
        return None

    def do_copy(self, parsed: Parsed) -> None:
        from cqlsh_ext.keyspaces import wiring

        level = wiring.copy_consistency(self.settings, parsed.get_binding("dir", "") or "",
                                        self.consistency_level) if self.settings.keyspaces.active else None
        if level is None:
            return super().do_copy(parsed)  # type: ignore[misc]  # cqlsh's Shell's
        saved, self.consistency_level = self.consistency_level, level
        try:
            return super().do_copy(parsed)  # type: ignore[misc]
        finally:
            self.consistency_level = saved

    do_describe.__doc__ = stock_shell_class().do_describe.__doc__
    do_desc = do_describe
    do_copy.__doc__ = stock_shell_class().do_copy.__doc__
