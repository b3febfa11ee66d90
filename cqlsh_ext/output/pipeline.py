"""The one path a query result takes to the screen, a file or a pipe.

cqlsh prints a result with `print_result` (pages, `---MORE---`), which calls
`print_static_result` per page, which formats each cell (`myformat_value`) and lays the page out
with `print_formatted_result` (table) or `print_formatted_result_vertically` (EXPAND ON). The shell
(cqlsh_ext.shell) sends each of those calls here, and this class decides, in one place:

- the writer: JSON Lines or CSV (cqlsh_ext.output.writers) for the machine formats; otherwise
  cqlsh's own table and vertical layout (cqlsh's methods, called explicitly), with blob cells
  decoded by cqlsh_ext.output.display through cqlsh_ext.output.table when the result holds blobs;
- pauses: none in the interactive shell (its pager takes the whole command's output,
  cqlsh_ext.repl.pager), cqlsh's `---MORE---` pauses in its classic loop, none in scripts;
- the layout (cqlsh_ext.output.layout): in the interactive shell, tables fitted to the screen
  (wide cells cut or wrapped), vertical when even that cannot fit; in scripts and CAPTURE whole
  values, without one long cell padding a column.

With `-d none` (and no machine format) every call reaches cqlsh's own method unchanged, so the
output is byte for byte stock. Pages come through cqlsh_ext.output.paging (prefetch, empty pages skipped).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.output.paging import paged
from cqlsh_ext.settings import NONE
from cqlsh_ext.settings.output_formats import OutputFormat
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.upstream.protocol import Shell


@dataclass
class Printing:
    """What one result keeps while it prints: a fresh one per result (print_result), and per page
    printed outside a result (a conditional write's one page)."""

    #: Inside print_result: pages of one result keep one layout and number rows on.
    in_result: bool = False
    #: The result goes to a CAPTURE file (decided when it starts).
    capturing: bool = False
    #: Auto vertical was decided for this result.
    vertical: bool = False
    row_offset: int = 0
    #: The blob formatter of the page being formatted (myformat_value's shortcut).
    display: BlobDisplay | None = None
    #: Per column of the page: never cut to fit (layout.whole_columns: keys, uuids).
    whole: tuple[bool, ...] = ()


class ResultPipeline:
    def __init__(self, shell: Shell, interactive: bool,
                 pager_found: Callable[[str | None], bool] | None = None) -> None:
        self.shell = shell
        #: The prompt_toolkit shell (cqlsh_ext.repl): pager, no ---MORE---, auto vertical.
        self.interactive = interactive
        #: The interactive shell's pager seam (cqlsh_ext.repl.pager, handed in by the shell: the
        #: output layer sits below the REPL): whether the pager setting names a program found.
        self.pager_found = pager_found
        self.stock = seams.stock_shell_class()
        #: The result (or lone page) being printed.
        self.now = Printing()

    @contextmanager
    def _printing(self, state: Printing) -> Iterator[Printing]:
        previous, self.now = self.now, state
        try:
            yield state
        finally:
            self.now = previous

    # ------------------------------------------------------------------ whole results

    def print_result(self, result: Any, table_meta: Any) -> None:
        shell = self.shell
        result = paged(result)
        fmt = shell.settings.display.output_format
        if fmt.machine:
            shell.decoding_errors = []
            self._write_machine(result, table_meta, fmt, all_pages=True)
            return
        if not self.interactive or shell.shunted_query_out is not None:
            # Scripts, the classic loop (---MORE--- pauses on a terminal), CAPTURE.
            with self._printing(Printing(in_result=True, capturing=shell.shunted_query_out is not None)):
                self.stock.print_result(shell, result, table_meta)
            return
        # The interactive shell: the whole result at once, through the pager when it is taller
        # than the screen (cqlsh_ext.repl.pager.paged_output wraps the command); without a pager
        # installed, cqlsh's own ---MORE--- pauses.
        with self._printing(Printing(in_result=True)):
            if self.pager_found is None or not self.pager_found(shell.settings.display.pager):
                self.stock.print_result(shell, result, table_meta)
            else:
                with seams.more_prompt_suppressed(shell):
                    self.stock.print_result(shell, result, table_meta)

    @contextmanager
    def _rows_then_closing(self) -> Iterator[None]:
        """Around a page of an interactive result: tells the pager's output (cqlsh_ext.repl.pager.
        PagedOutput, when it is one) that rows are written, then that what follows the page closes
        the result unless another page comes (cqlsh's row count, a payload query's closing line):
        those lines are written after the pager, where they are seen."""
        out = self.shell.query_out if self.interactive and self.now.in_result else None
        rows, closing = getattr(out, "result_rows", None), getattr(out, "result_closing", None)
        if rows is None or closing is None:
            yield
            return
        rows()
        yield
        closing()

    def _write_machine(self, result: Any, table_meta: Any, fmt: OutputFormat, all_pages: bool) -> None:
        from cqlsh_ext.output.spellings import column_types
        from cqlsh_ext.output.writers import make_writer
        from cqlsh_ext.payload.places import ValuePlace

        shell = self.shell
        names = list(result.column_names or [])
        if not names:
            return
        # Places as the table display names them (output.table), so column settings apply alike.
        ks_name = table_meta.keyspace_name if table_meta else shell.current_keyspace
        table = table_meta.name if table_meta else None
        places: list[ValuePlace | None] = [ValuePlace(ks_name, table, name) for name in names]
        writer = make_writer(fmt, shell.query_out, names, column_types(result),
                             shell.settings.display, places)
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
        if display.output_format.machine:
            # Reached directly for the result of a conditional (IF ...) write: one page.
            return self._write_machine(result, table_meta, display.output_format, all_pages=False)
        page = self.now if self.now.in_result else Printing()
        with self._printing(page), self._rows_then_closing():
            page.row_offset = row_count_offset
            from cqlsh_ext.output.layout import whole_columns  # (no heavier than this module)

            page.whole = whole_columns(list(result.column_names or ()), getattr(result, "column_types", None),
                                       table_meta)
            from cqlsh_ext.cql.types import from_driver  # standard library only

            if display.mode == NONE or not any(from_driver(t).holds() for t in result.column_types or ()):
                self.stock.print_static_result(shell, result, table_meta, with_header, tty, row_count_offset)
                return
            from cqlsh_ext.output import table

            page.display = self._blob_display(result)
            try:
                table.print_static_result(shell, result, table_meta, with_header, tty, row_count_offset,
                                          page.display)
            finally:
                page.display = None  # the next page of the result decides again

    def _blob_display(self, result: Any) -> BlobDisplay:
        from cqlsh_ext.output.display import BlobDisplay  # the codec layer loads with the first blob

        shell = self.shell
        on_screen = self._for_a_terminal()
        room = 0
        # Cut mode: no cell is shown wider than a screen line, so none is formatted wider.
        if on_screen and result.column_names and shell.settings.display.cells != "wrap":
            room = shutil.get_terminal_size().columns - max(len(name) for name in result.column_names) - 5
        return BlobDisplay(shell.settings.display, on_screen, shell.expand_enabled, room)

    def format_value(self, val: Any, cqltype: Any, kwargs: dict[str, Any]) -> Any:
        # A top-level blob cell goes straight to its formatter: the call cqlsh's format_value
        # chain would end in, without building a DateTimeFormat per cell.
        if self.now.display is not None and type(val) is bytes and cqltype is not None and \
                cqltype.type_name == "blob":
            return cqltype.formatter(val, seams.value_colormap(self.shell.color))
        return self.stock.myformat_value(self.shell, val, cqltype, **kwargs)

    # ------------------------------------------------------------------ layout

    def _capturing(self) -> bool:
        # Inside print_result the ---MORE--- suppression sets cqlsh's capture state: use what it was.
        return self.now.capturing if self.now.in_result else self.shell.shunted_query_out is not None

    def _on_screen(self) -> bool:
        """This layout is for a person's screen: the interactive shell, not CAPTURE."""
        return self.interactive and not self._capturing()

    def _for_a_terminal(self) -> bool:
        """A person at a terminal reads this: the interactive shell, or the classic loop (cqlsh's
        tty mode) writing to a terminal; never scripts or CAPTURE. Blob cells are cut for it."""
        at_terminal = self.interactive or (bool(self.shell.tty) and _stdout_is_terminal())
        return at_terminal and not self._capturing()

    def screen_width(self) -> int:
        """The terminal's columns when output goes to a person's screen, else 0 (whole lines):
        the interactive shell, and -e, -f or the classic loop writing to a terminal; never CAPTURE
        or a pipe. Reports (INSPECT, COMPRESSION) are fitted to it."""
        if self._capturing() or not (self.interactive or _stdout_is_terminal()):
            return 0
        return shutil.get_terminal_size().columns

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None:
        from cqlsh_ext.output import layout

        shell = self.shell
        display = shell.settings.display
        if display.mode == NONE or not formatted_values:
            # cqlsh's layout byte for byte, on the interactive screen too: -d none is stock cqlsh
            # (a wide table wraps as it does there, never turned vertical).
            self.stock.print_formatted_result(shell, formatted_names, formatted_values, with_header, tty)
            return
        write = shell.writeresult
        if not self._on_screen() and self.now.display is not None and self._for_a_terminal() \
                and display.max_field_width is None:
            # The classic loop on a terminal, a page with blobs: its blob cells are cut for the
            # screen, so the rows are fitted to it as the interactive shell fits them (no auto
            # vertical: cqlsh's loop); a table that cannot fit even cut is printed as in scripts,
            # and a page without blobs as cqlsh prints it.
            fitted = layout.fit_widths(formatted_names, formatted_values, shutil.get_terminal_size().columns,
                                       whole=self._whole(formatted_names))
            if fitted is not None:
                return layout.print_table(write, formatted_names, formatted_values, fitted, with_header, tty,
                                          shell.color, display.cells)
        if not self._on_screen():
            # Scripts, pipes, CAPTURE: whole values; one very long cell does not pad the others.
            bound = shutil.get_terminal_size().columns if _stdout_is_terminal() else layout.SCRIPT_CELL_BOUND
            widths = layout.script_widths(formatted_names, formatted_values, bound)
            return layout.print_table(write, formatted_names, formatted_values, widths, with_header, tty,
                                      shell.color, layout.WHOLE)
        screen = shutil.get_terminal_size().columns
        explicit = display.max_field_width
        if explicit is not None:  # --max-field-width: every cell cut there, no fitting to the screen
            rows = [[layout.cut(c, explicit, shell.color) if explicit else c for c in row]
                    for row in formatted_values]
            widths = layout.natural_widths(formatted_names, rows)
            if self._go_vertical(widths):
                shell.print_formatted_result_vertically(formatted_names, rows, self.now.row_offset)
                return
            return layout.print_table(write, formatted_names, rows, widths, with_header, tty, shell.color,
                                      layout.WHOLE)
        # A cut short value (an id, a status) is worse than rows shown vertically: cut cells keep
        # them whole; wrapped cells lose nothing.
        keep_short = display.cells == layout.CUT
        whole = self._whole(formatted_names)
        fitted = None if self.now.vertical else layout.fit_widths(formatted_names, formatted_values, screen,
                                                                  keep_short, whole)
        if fitted is None and self._go_vertical(None):
            shell.print_formatted_result_vertically(formatted_names, formatted_values, self.now.row_offset)
            return
        if self.now.in_result:
            self.now.vertical = False
        if fitted is None and keep_short:  # auto vertical is off: a table, cut where it must be
            fitted = layout.fit_widths(formatted_names, formatted_values, screen, whole=whole)
        widths = fitted or layout.natural_widths(formatted_names, formatted_values)
        layout.print_table(write, formatted_names, formatted_values, widths, with_header, tty, shell.color,
                           display.cells if fitted else layout.WHOLE)

    def _whole(self, names: list[Any]) -> tuple[bool, ...]:
        """The page's columns never cut (Printing.whole), when they are the page's columns."""
        return self.now.whole if len(self.now.whole) == len(names) else ()

    def _go_vertical(self, widths: list[int] | None) -> bool:
        """Auto vertical: the table does not fit the screen (widths None: already decided that it
        does not). Decided once per result, so its pages keep one layout."""
        from cqlsh_ext.output.layout import table_width

        if self.now.vertical:
            return True
        vertical = self.shell.settings.display.auto_vertical and (
            widths is None or table_width(widths) > shutil.get_terminal_size().columns)
        if self.now.in_result:
            self.now.vertical = vertical
        return vertical

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None:
        from cqlsh_ext.output import layout

        shell = self.shell
        display = shell.settings.display
        fit = self._on_screen() and display.mode != NONE and display.max_field_width is None
        multi_line = any("\n" in value.strval for row in formatted_values for value in row)
        if not fit and not multi_line:
            self.stock.print_formatted_result_vertically(shell, formatted_names, formatted_values,
                                                         row_count_offset)
            return
        screen = shutil.get_terminal_size().columns if fit else None
        layout.print_vertical(shell.writeresult, formatted_names, formatted_values, row_count_offset, screen,
                              shell.color, display.cells)


def _stdout_is_terminal() -> bool:
    import sys

    return sys.stdout.isatty()
