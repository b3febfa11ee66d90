"""The one path a query result takes to the screen, a file or a pipe.

cqlsh prints a result with `print_result` (pages, `---MORE---`), which calls
`print_static_result` per page, which formats each cell (`myformat_value`) and lays the page out
with `print_formatted_result` (table) or `print_formatted_result_vertically` (EXPAND ON). The shell
(cqlsh_ext.shell) sends each of those calls here, and this class decides, in one place:

- the writer: JSON Lines or CSV (cqlsh_ext.output.writers) for the machine formats; otherwise
  cqlsh's own table and vertical layout (cqlsh's methods, called explicitly), with blob cells
  decoded by cqlsh_ext.display through cqlsh_ext.output.table when the result holds blobs;
- the sink: the pager in the interactive shell when the result is taller than the screen
  (cqlsh_ext.repl.pager), cqlsh's `---MORE---` pauses in its classic loop, straight through in
  scripts and under CAPTURE;
- auto-vertical output in the interactive shell when a table is wider than the screen.

With `-d none` (and no machine format) every call reaches cqlsh's own method unchanged, so the
output is byte for byte stock. Pages come through cqlsh_ext.paging (prefetch, empty pages skipped).
"""

from __future__ import annotations

import shutil
from typing import Any

from cqlsh_ext import seams
from cqlsh_ext.paging import paged
from cqlsh_ext.settings import MACHINE_FORMATS, NONE


class ResultPipeline:
    def __init__(self, shell: Any, interactive: bool) -> None:
        self.shell = shell
        #: The prompt_toolkit shell (cqlsh_ext.repl): pager, no ---MORE---, auto vertical.
        self.interactive = interactive
        self.stock = seams.stock_shell_class()
        #: Inside print_result: pages of one result keep one layout and number rows on.
        self.in_result = False
        self.vertical_now = False
        self.row_offset = 0
        #: The blob formatter of the page being formatted (myformat_value's shortcut).
        self.display: Any = None

    # ------------------------------------------------------------------ whole results

    def print_result(self, result: Any, table_meta: Any) -> None:
        shell = self.shell
        result = paged(result)
        fmt = shell.settings.display.output_format
        if fmt in MACHINE_FORMATS:
            shell.decoding_errors = []
            self._write_machine(result, fmt, all_pages=True)
            return
        if not self.interactive or shell.shunted_query_out is not None:
            # Scripts, the classic loop (---MORE--- pauses on a terminal), CAPTURE.
            return self.stock.print_result(shell, result, table_meta)
        from cqlsh_ext.repl.pager import NoPager, PagedOutput, PagerClosed, pager_command

        command = pager_command(shell.settings.display.pager)
        out = PagedOutput(shell.query_out, command if isinstance(command, str) else None,
                          max(shutil.get_terminal_size().lines - 2, 1))
        shell.query_out = out
        self.in_result = True
        try:
            if command is NoPager.NOT_FOUND:  # no pager installed: cqlsh's ---MORE--- pauses
                self.stock.print_result(shell, result, table_meta)
            else:
                with seams.more_prompt_suppressed(shell):
                    self.stock.print_result(shell, result, table_meta)
        except PagerClosed:
            pass
        finally:
            self.in_result, self.vertical_now, self.row_offset = False, False, 0
            shell.query_out = out.out
            out.finish()

    def _write_machine(self, result: Any, fmt: str, all_pages: bool) -> None:
        from cqlsh_ext.output.values import ValueEncoder, column_types
        from cqlsh_ext.output.writers import make_writer

        shell = self.shell
        names = list(result.column_names or [])
        if not names:
            return
        writer = make_writer(fmt, shell.query_out, names, column_types(result),
                             ValueEncoder(shell.settings.display))
        while True:
            writer.write_rows(result.current_rows)
            if not (all_pages and result.has_more_pages):
                break
            result.fetch_next_page()
        writer.finish()

    # ------------------------------------------------------------------ one page

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int) -> None:
        shell = self.shell
        display = shell.settings.display
        if display.output_format in MACHINE_FORMATS:
            # Reached directly for the result of a conditional (IF ...) write: one page.
            return self._write_machine(result, display.output_format, all_pages=False)
        self.row_offset = row_count_offset
        try:
            from cqlsh_ext.output.table import holds_blob

            if display.mode == NONE or not any(holds_blob(t) for t in result.column_types or ()):
                return self.stock.print_static_result(shell, result, table_meta, with_header, tty,
                                                      row_count_offset)
            from cqlsh_ext.output import table

            self.display = self._blob_display(result)
            try:
                table.print_static_result(shell, result, table_meta, with_header, tty, row_count_offset,
                                          self.display)
            finally:
                self.display = None
        finally:
            if not self.in_result:
                self.row_offset = 0

    def _blob_display(self, result: Any) -> Any:
        from cqlsh_ext.display import BlobDisplay  # the codec layer loads with the first blob

        shell = self.shell
        # The interactive shell's results (pager path) are for a screen; otherwise a terminal on
        # stdout, and not CAPTURE, decides (as cqlsh decides about colours).
        on_screen = (self.in_result and self.interactive) or (
            bool(shell.tty) and shell.shunted_query_out is None and _stdout_is_terminal())
        room = 0
        if on_screen and result.column_names:
            room = shutil.get_terminal_size().columns - max(len(name) for name in result.column_names) - 5
        return BlobDisplay(shell.settings.display, on_screen, shell.expand_enabled, room)

    def format_value(self, val: Any, cqltype: Any, kwargs: dict[str, Any]) -> Any:
        # A top-level blob cell goes straight to its formatter: the call cqlsh's format_value
        # chain would end in, without building a DateTimeFormat per cell.
        if self.display is not None and type(val) is bytes and cqltype is not None and \
                cqltype.type_name == "blob":
            return cqltype.formatter(val, seams.value_colormap(self.shell.color))
        return self.stock.myformat_value(self.shell, val, cqltype, **kwargs)

    # ------------------------------------------------------------------ layout

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None:
        shell = self.shell
        if self.interactive and formatted_values and not shell.expand_enabled:
            vertical = self.vertical_now or (
                shell.settings.display.auto_vertical
                and table_width(formatted_names, formatted_values) > shutil.get_terminal_size().columns)
            if self.in_result:
                self.vertical_now = vertical
            if vertical:
                return shell.print_formatted_result_vertically(formatted_names, formatted_values,
                                                               self.row_offset)
        return self.stock.print_formatted_result(shell, formatted_names, formatted_values, with_header, tty)

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None:
        shell = self.shell
        if not any("\n" in value.strval for row in formatted_values for value in row):
            return self.stock.print_formatted_result_vertically(shell, formatted_names, formatted_values,
                                                                row_count_offset)
        # Multi-line values (indented JSON under EXPAND ON): continuation lines align under the value.
        max_col_width = max(n.displaywidth for n in formatted_names)
        max_val_width = max(v.displaywidth for row in formatted_values for v in row)
        indent = "\n" + " " * (max_col_width + 4)
        for i, row in enumerate(formatted_values):
            shell.writeresult(f"@ Row {row_count_offset + i + 1}")
            shell.writeresult(f"-{'-' * max_col_width}-+-{'-' * max_val_width}-")
            for name, value in zip(formatted_names, row, strict=True):
                column = name.ljust(max_col_width, color=shell.color)
                shown = value.ljust(value.displaywidth, color=shell.color).replace("\n", indent)
                shell.writeresult(" " + " | ".join([column, shown]))
            shell.writeresult("")


def _stdout_is_terminal() -> bool:
    import sys

    return sys.stdout.isatty()


def table_width(formatted_names: list[Any], formatted_values: list[Any]) -> int:
    """Columns cqlsh's table layout needs: ' a | b | c'."""
    widths = [n.displaywidth for n in formatted_names]
    for row in formatted_values:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], value.displaywidth)
    return 1 + sum(widths) + 3 * (len(widths) - 1)
