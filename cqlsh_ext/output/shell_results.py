"""What the shell prints, as a base of its class (cqlsh_ext.shell.ExtShell, before cqlsh's Shell):
cqlsh's result methods handed to the result pipeline (output.pipeline.ResultPipeline, the shell's
`results`), and its messages: every one wrapped at words on a terminal, the server's warnings as
lines of their own beside a machine format, cqlsh's build-version warning on stderr only where the
protocol or grammar may differ."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, say, screen_width

if TYPE_CHECKING:
    from cqlsh_ext.output.pipeline import ResultPipeline
    from cqlsh_ext.settings import Settings

__all__ = ["ShellResults"]


def _major_minor(release: str) -> tuple[str, ...]:
    return tuple(release.split("-", 1)[0].split(".")[:2])


class ShellResults:
    """cqlsh's printing methods, each handing over to the pipeline (the shell sets `results` when it
    is made); `super()` is cqlsh's Shell, the next base of the shell's class."""

    results: ResultPipeline
    settings: Settings
    connection_versions: dict[str, Any]
    session: Any

    def perform_simple_statement(self, statement: Any) -> Any:
        self.results.read_in_pages(statement)  # PAGING OFF: a SELECT read in pages all the same
        state = self.results.rows.reading_start()[0]  # a resumed SELECT's (--resume: output.row_limit)
        if state is None:
            return super().perform_simple_statement(statement)  # type: ignore[misc]  # cqlsh's Shell's
        from cqlsh_ext.upstream.seams import paging_from

        with paging_from(self.session, state):
            return super().perform_simple_statement(statement)  # type: ignore[misc]

    def print_result(self, result: Any, table_meta: Any) -> None:
        self.results.print_result(result, table_meta)

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = 0) -> None:
        self.results.print_static_result(result, table_meta, with_header, tty, row_count_offset)

    def myformat_value(self, val: Any, cqltype: Any = None, **kwargs: Any) -> Any:
        return self.results.format_value(val, cqltype, kwargs)

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None:
        self.results.print_formatted_result(formatted_names, formatted_values, with_header, tty)

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None:
        self.results.print_formatted_result_vertically(formatted_names, formatted_values, row_count_offset)

    def check_build_versions(self) -> None:
        # cqlsh warns on stdout whenever the server's release differs at all from the one it was
        # built against (5.0.0 vs 5.0.6 too). Only a different major.minor can change the
        # protocol or the grammar; the warning goes to stderr, so results stay clean.
        from cqlsh_ext.upstream.seams import import_cqlshmain

        built = import_cqlshmain(None).build_version
        if _major_minor(self.connection_versions["build"]) == _major_minor(built):
            return
        with contextlib.redirect_stdout(sys.stderr):
            super().check_build_versions()  # type: ignore[misc]  # cqlsh's Shell's

    def print_warnings(self, warnings: Any) -> None:
        if not self.settings.display.output_format.machine or not warnings:
            super().print_warnings(warnings)  # type: ignore[misc]  # cqlsh's Shell's
            return
        for warning in warnings:
            say(f"Warning: {warning}")

    def printerr(self, text: Any, *args: Any, **kwargs: Any) -> None:
        # Every message the shell writes wraps at words on a terminal (common.text.message), where
        # the terminal would break it inside a word; a pipe or a file gets its one line. A name the
        # server has not, or a word the grammar has not, gets the one meant (output.meant).
        said = self._meant(str(text))
        super().printerr(message(said, screen_width(sys.stderr)), *args, **kwargs)  # type: ignore[misc]

    def _meant(self, text: str) -> str:
        from cqlsh_ext.output.meant import schema_of, with_meant
        from cqlsh_ext.upstream.seams import grammar_words

        conn = getattr(self, "conn", None)
        if conn is None:
            return text
        keyspaces, tables = schema_of(getattr(conn, "metadata", None))
        return with_meant(text, tables, keyspaces, getattr(self, "current_keyspace", None), grammar_words)
