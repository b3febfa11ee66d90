"""The one path a query result takes to the screen, a file or a pipe.

Two kinds of result come here. A stock result (a CQL statement cqlsh runs): cqlsh prints it with
`print_result` (pages, `---MORE---`), which calls `print_static_result` per page, which formats
each cell (`myformat_value`) and lays the page out with `print_formatted_result` (table) or
`print_formatted_result_vertically` (EXPAND ON); the shell (cqlsh_ext.shell) sends each of those
calls here. A typed answer (a payload query's, reading.typed.TypedAnswer): render.terminal hands
its batches to `print_answer`, which walks them as cqlsh's print_result walks pages (seams.COPIED
pins the source it follows) without a driver result or cqlsh's loop. Both reach the same page
step (`print_page`) and layouts, and this class decides, in one place:

- the writer: JSON Lines or CSV (cqlsh_ext.output.writers) for the machine formats; otherwise
  cqlsh's own table and vertical layout, with blob cells decoded by cqlsh_ext.output.display
  (cells formatted by cqlsh_ext.output.table) when the result holds blobs;
- pauses: none in the interactive shell (its pager takes the whole command's output,
  cqlsh_ext.repl.pager), cqlsh's `---MORE---` pauses in its classic loop, none in scripts;
- the layout (cqlsh_ext.output.layout): in the interactive shell, tables fitted to the screen
  (wide cells cut or wrapped), vertical when even that cannot fit; in scripts and CAPTURE whole
  values, without one long cell padding a column.

With `-d none` (and no machine format) every call for a stock result reaches cqlsh's own method
unchanged, so the output is byte for byte stock. A stock result's pages come through
cqlsh_ext.output.paging (prefetch, empty pages skipped); an answer's empty batches are skipped alike.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.interrupt import CtrlC, answering
from cqlsh_ext.output.row_limit import RowLimit
from cqlsh_ext.settings import NONE, DisplaySettings
from cqlsh_ext.settings.output_formats import OutputFormat
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.output.display import BlobDisplay
    from cqlsh_ext.output.table import PageFormats
    from cqlsh_ext.settings.shell import Shell

#: A page's rows: each row's values in column order.
Rows = Sequence[Sequence[Any]]
#: A table's lines are written this many at a time (_print_table).
WRITE_LINES = 256


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
    #: The result's rows read so far: those printed and those of the page being printed (the
    #: closing line of a result whose pager was quit before its end says them).
    rows_read: int = 0
    #: The blob formatter of the page being formatted (myformat_value's shortcut).
    display: BlobDisplay | None = None
    #: Per column of the page: never cut to fit (layout.whole_columns: keys, uuids).
    whole: tuple[bool, ...] = ()
    #: What the result's pages share, made by its first page: (its columns' names, types and
    #: table) -> (the formatted names, whether it decodes, whole columns); its cell formats.
    shared: tuple[Any, tuple[list[Any], bool, tuple[bool, ...]]] | None = None
    formats: PageFormats | None = None


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
        #: What each result printed, and the run's --max-rows (the shell sets it).
        self.rows = RowLimit()

    @contextmanager
    def _printing(self, state: Printing) -> Iterator[Printing]:
        previous, self.now = self.now, state
        try:
            yield state
        finally:
            self.now = previous

    @property
    def display(self) -> DisplaySettings:
        """The shell's display settings, as they are now."""
        return self.shell.settings.display

    @property
    def float_precision(self) -> int:
        """cqlshrc's float_precision: how cqlsh prints a float column's value."""
        return int(self.shell.display_float_precision)

    # ------------------------------------------------------------------ whole results

    def read_in_pages(self, statement: Any) -> None:
        """Before cqlsh sends a statement (shell.perform_simple_statement): a SELECT sent with
        PAGING OFF, which asks the server for every row in one answer, is read in pages of
        paging.UNPAGED_READ_ROWS instead (print_result shows them as the one page cqlsh shows:
        the same bytes). One answer of a large result costs the server and the driver more than
        its pages (the driver copies the whole answer's bytes over as it reads them), and nothing
        of it is read before all of it is made. Not with `-d none` (stock cqlsh's requests) nor
        with TRACING ON (its trace is that of the one request)."""
        from cqlsh_ext.output.paging import UNPAGED_READ_ROWS

        if statement is None or getattr(statement, "fetch_size", 0) is not None:
            return  # (paging on: cqlsh's page size)
        if self.display.mode == NONE or self.shell.tracing_enabled:
            return
        if str(getattr(statement, "query_string", ""))[:6].lower() == "select":  # as cqlsh tells one
            statement.fetch_size = UNPAGED_READ_ROWS

    def print_result(self, result: Any, table_meta: Any) -> None:
        """A stock result, as cqlsh's print_result hands it over."""
        shell = self.shell
        result = self.rows.stock(result)  # in pages (paging.paged), counted, cut at --max-rows
        fmt = self.display.output_format
        if not shell.use_paging and self.display.mode != NONE and not fmt.machine:
            # PAGING OFF: one page, as cqlsh asked for it (read_in_pages asked for pages).
            names = list(result.column_names or [])
            if names and result.has_more_pages and self._decodes(result.column_types):
                # Its cells formatted a server page at a time as the pages come (a page's blobs
                # decoded while the server makes the next), laid out at once.
                pages = _Pages((list(rows) for rows in _result_pages(result, names)), one_table=True)
                with self._printing(Printing(in_result=True, capturing=shell.shunted_query_out is not None)):
                    self._print_pages(names, list(result.column_types), pages, table_meta, pause=False)
                return
            from cqlsh_ext.output.paging import one_page

            result = one_page(result)
        if fmt.machine:
            from cqlsh_ext.output.spellings import column_types

            shell.decoding_errors = []
            names = list(result.column_names or [])
            self._write_machine(names, column_types(result), table_meta, fmt, _result_pages(result, names))
            return
        if not self.interactive or shell.shunted_query_out is not None:
            # Scripts, the classic loop (---MORE--- pauses on a terminal), CAPTURE.
            with self._printing(Printing(in_result=True, capturing=shell.shunted_query_out is not None)):
                self.stock.print_result(shell, result, table_meta)
            return
        # The interactive shell: the whole result at once, through the pager when it is taller
        # than the screen (cqlsh_ext.repl.pager.paged_output wraps the command); without a pager
        # installed, cqlsh's own ---MORE--- pauses.
        with self._printing(Printing(in_result=True)), self._closing_if_pager_quit():
            if not self._pager_takes_it():
                self.stock.print_result(shell, result, table_meta)
            else:
                with seams.more_prompt_suppressed(shell):
                    self.stock.print_result(shell, result, table_meta)

    def _pager_takes_it(self) -> bool:
        """The interactive shell's pager takes this result (so no ---MORE--- pauses)."""
        return self.pager_found is not None and self.pager_found(self.display.pager)

    def answer_rows(self, answer: Any) -> Iterator[list[Any]]:
        """A typed answer's batches as lists of rows, counted and cut at --max-rows (row_limit)."""
        return self.rows.answer(answer)

    def print_answer(self, names: list[str], types: list[Any], batches: Iterator[Rows],
                     table_meta: Any) -> None:
        """A typed answer's batches (render.terminal: rows of values in column order, as they are
        read), printed as print_result prints a stock result: the machine formats' writers, or
        the pages of cqlsh's layouts with their header, `---MORE---` pauses and row count."""
        shell = self.shell
        fmt = self.display.output_format
        if fmt.machine:
            shell.decoding_errors = []
            self._write_machine(names, types, table_meta, fmt, batches)
            return
        capturing = shell.shunted_query_out is not None
        # cqlsh pauses on a terminal unless CAPTURE is on; the interactive shell's pager takes the
        # whole result instead when it has one.
        pause = bool(shell.tty) and not capturing and not (self.interactive and self._pager_takes_it())
        # Laid out in cqlsh's pages: the shell's page size (PAGING n), or one table with PAGING OFF.
        # An answer's batches are as the reading finds its rows (a scan's streams: a few rows each),
        # and a table a batch gave a header and widths every few rows (issue 96, 3).
        pages = _Pages(batches, one_table=True) if not shell.use_paging else \
            _Pages(_in_pages(batches, shell.page_size))
        with self._printing(Printing(in_result=True, capturing=capturing)):
            self._print_pages(names, types, pages, table_meta, pause)

    def _print_pages(self, names: list[str], types: list[Any], pages: _Pages, table_meta: Any,
                     pause: bool) -> None:
        """cqlsh's Shell.print_result (seams.COPIED pins its source) over an answer's pages (or
        a result's read in pages as one, `pages.one_table`)."""
        from cqlshlib.displaying import RED

        shell = self.shell
        shell.decoding_errors = []
        shell.writeresult("")
        tty = bool(shell.tty)
        num_rows, is_first = 0, True
        with self._closing_if_pager_quit():
            while True:
                # The first page is printed even when empty (its header).
                if pages.rows or is_first:
                    self.print_page(names, types, pages.rows, table_meta, is_first or tty, tty, num_rows,
                                    pages.later())
                    num_rows += len(pages.rows) + pages.later_rows
                # cqlsh asks only if result.has_more_pages: the next batch is taken before asking,
                # so no ---MORE--- follows the last page.
                if not pages.fetch():
                    if not tty:
                        shell.writeresult("")
                    break
                if pause:
                    try:
                        with answering():  # Ctrl-C stops here at once, even while a scan holds the next page
                            input("---MORE---")
                    except KeyboardInterrupt:
                        shell.writeresult("")  # what follows (a closing line) starts under the prompt
                        raise
                pages.turn()
                is_first = False
        shell.writeresult(f"({num_rows} rows)")
        errors = shell.decoding_errors
        for err in errors[:2]:
            shell.writeresult(err.message(), color=RED)
        if len(errors) > 2:
            shell.writeresult(f"{len(errors) - 2} more decoding errors suppressed.", color=RED)

    @contextmanager
    def _closing_if_pager_quit(self) -> Iterator[None]:
        """Around a result's pages in the interactive shell: when its pager is quit before the end
        (cqlsh_ext.repl.pager.PagedOutput, whose `quit` then holds), cqlsh's `(N rows)` never comes;
        a closing line says how many rows were read and that the rest were not (written after the
        pager, on the terminal, as a result's closing lines are)."""
        try:
            yield
        except Exception:
            if self.interactive and getattr(self.shell.query_out, "quit", False) is True:
                self.shell.writeresult(f"({self.now.rows_read:,} rows read when the pager was quit: the "
                                       "rest were not fetched)")
            raise

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

    def _write_machine(self, names: list[str], types: list[Any], table_meta: Any, fmt: OutputFormat,
                       pages: Iterable[Iterable[Sequence[Any]]]) -> None:
        from cqlsh_ext.output.writers import make_writer
        from cqlsh_ext.payload.places import ValuePlace

        if not names:
            return
        shell = self.shell
        # Places as the table display names them (output.table), so column settings apply alike.
        ks_name = table_meta.keyspace_name if table_meta else shell.current_keyspace
        table = table_meta.name if table_meta else None
        places: list[ValuePlace | None] = [ValuePlace(ks_name, table, name) for name in names]
        writer = make_writer(fmt, shell.query_out, names, types, self.display, places)
        for rows in pages:  # (a page is waited for outside _written_whole: Ctrl-C ends the wait at once)
            with self._written_whole() as ctrl_c:
                writer.write_values(self.rows.counted(rows, ctrl_c))
        writer.finish()

    @contextmanager
    def _written_whole(self) -> Iterator[CtrlC]:
        """Around rows being written out: a first Ctrl-C (or --timeout's) lets the page, or with a
        machine format the row (RowLimit.counted), being written end whole, then stops the statement
        as a press does (KeyboardInterrupt), so that --stats counts exactly the rows printed; a
        second press stops at once (a reader that holds the pipe full)."""
        with CtrlC() as ctrl_c:
            yield ctrl_c
        if ctrl_c.pressed:
            raise KeyboardInterrupt

    # ------------------------------------------------------------------ one page

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int) -> None:
        """A page of a stock result, as cqlsh's print_result hands it over."""
        display = self.display
        names = list(result.column_names or ())
        self.now.rows_read = row_count_offset + len(result.current_rows or ())
        if display.output_format.machine:
            from cqlsh_ext.output.spellings import column_types

            # Reached directly for the result of a conditional (IF ...) write: one page.
            return self._write_machine(names, column_types(result), table_meta, display.output_format,
                                       [_values(result.current_rows, names)])
        types = result.column_types
        # (a name said twice: its values are printed here, where each keeps its own; cqlsh prints
        # the last one under both)
        if not self._decodes(types) and (display.mode == NONE or len(set(names)) == len(names)):
            with self._written_whole(), self._page(names, types, table_meta, row_count_offset):
                self.stock.print_static_result(self.shell, result, table_meta, with_header, tty,
                                               row_count_offset)
                self.rows.shown(len(result.current_rows or ()))
            return
        if not names and not table_meta:
            return
        names = names or list(table_meta.columns.keys())
        self.print_page(names, types, _values(result.current_rows, names), table_meta, with_header, tty,
                        row_count_offset)

    def _decodes(self, types: Sequence[Any] | None) -> bool:
        """A page of these column types has blob cells to decode."""
        from cqlsh_ext.cql.types import from_driver  # standard library only

        return self.display.mode != NONE and any(from_driver(t).holds() for t in types or ())

    @contextmanager
    def _page(self, names: list[str], types: Sequence[Any] | None, table_meta: Any,
              row_count_offset: int) -> Iterator[Printing]:
        """What a page keeps while it prints: its result's, or its own outside one."""
        from cqlsh_ext.output.layout import whole_columns  # (no heavier than this module)

        page = self.now if self.now.in_result else Printing()
        with self._printing(page), self._rows_then_closing():
            page.row_offset = row_count_offset
            page.whole = self._shared(names, types, table_meta)[2] if page.in_result else \
                whole_columns(names, types, table_meta)
            yield page

    def _shared(self, names: list[str], types: Sequence[Any] | None,
                table_meta: Any) -> tuple[list[Any], bool, tuple[bool, ...]]:
        """The formatted column names, whether the page decodes blobs (_decodes) and the whole
        columns (layout.whole_columns) of a page of the result being printed: made once a result
        for its columns (its pages share them)."""
        from cqlsh_ext.output.layout import whole_columns

        key = (tuple(names), tuple(types or ()), id(table_meta))
        shared = self.now.shared
        if shared is None or shared[0] != key:
            shell = self.shell
            made = ([shell.myformat_colname(name, table_meta) for name in names], self._decodes(types),
                    whole_columns(names, types, table_meta))
            self.now.shared = shared = (key, made)
        return shared[1]

    def print_page(self, names: list[str], types: Sequence[Any] | None, rows: Rows, table_meta: Any,
                   with_header: bool, tty: bool, row_count_offset: int, later: Iterable[Rows] = ()) -> None:
        """One page, of a stock result with blobs or of an answer: what cqlsh's
        Shell.print_static_result does (seams.COPIED pins its source), its cells formatted by
        output.table (blob cells by this page's BlobDisplay) and laid out here. `later`: more
        rows of the same page, read in parts (PAGING OFF, _Pages.later), each part formatted
        once the part before is."""
        from cqlsh_ext.output import table

        shell = self.shell
        with self._page(names, types, table_meta, row_count_offset) as page:
            page.rows_read = row_count_offset + len(rows)
            if page.in_result:
                formatted_names, decodes, _whole = self._shared(names, types, table_meta)
            else:
                formatted_names = [shell.myformat_colname(name, table_meta) for name in names]
                decodes = self._decodes(types)
            if not rows:
                self.print_formatted_result(formatted_names, None, with_header=True, tty=tty)
                return
            ks_name = table_meta.keyspace_name if table_meta else shell.current_keyspace
            ks_meta = shell.conn.metadata.keyspaces.get(ks_name, None) if types else None
            page.display = self._blob_display(names) if decodes else None
            if page.formats is None or not page.in_result:
                page.formats = self._page_formats()
            try:
                table_name = table_meta.name if table_meta else None
                values = table.formatted_rows(names, types, rows, ks_name, table_name, ks_meta,
                                              page.formats, page.display)
                for part in later:
                    values += table.formatted_rows(names, types, part, ks_name, table_name, ks_meta,
                                                   page.formats, page.display)
                with self._written_whole():  # (a page's rows counted whole: its lines are not its rows)
                    if shell.expand_enabled:
                        self.print_formatted_result_vertically(formatted_names, values, row_count_offset)
                    else:
                        self.print_formatted_result(formatted_names, values, with_header, tty)
                    self.rows.shown(len(values))
            finally:
                page.display = None  # the next page of the result decides again

    def _blob_display(self, names: list[str]) -> BlobDisplay:
        from cqlsh_ext.output.display import BlobDisplay  # the codec layer loads with the first blob

        on_screen = self._for_a_terminal()
        room = 0
        # Cut mode: no cell is shown wider than a screen line, so none is formatted wider.
        if on_screen and names and self.display.cells != "wrap":
            room = shutil.get_terminal_size().columns - max(len(name) for name in names) - 5
        return BlobDisplay(self.display, on_screen, self.shell.expand_enabled, room)

    def _page_formats(self) -> PageFormats:
        """shell.myformat_value for a page's cells (output.table.PageFormats): cqlsh's
        Shell.myformat_value (seams.COPIED pins its source) with what it reads for every cell (the
        date and time formats, the codec, the colour, the precisions) read once a page.

        `cell`: a top-level blob cell of a page with a display goes to its formatter as format_value
        sends it (its colour map read once a page: `colormap`, which output.table hands a whole
        column of such cells); another blob, a DecodeError and a cell its formatting fails on go
        to shell.myformat_value itself (the errors it records); a decoded value's text
        (output.cells.DecodedText: a payload path's) to the display's escaping; the rest to
        cqlsh's format_value.
        `column`, a column without top-level blobs at a time: each cell straight
        to the formatter cqlsh's chain ends in (cqlshmain.format_value, format_by_type,
        formatting.format_value and get_formatter: seams.COPIED pins them), with the arguments the
        chain hands it, the column's formatter looked up once; a text of printable ASCII without a
        backslash and an integer are spelt here as format_value_text and format_integer_type spell
        them (seams.COPIED pins those and color_text). A null goes to `cell`; a blob, a DecodeError
        or a failed format gives the page back to `cell`, row by row (the errors recorded in cqlsh's
        order)."""
        shell = self.shell
        upstream = sys.modules[self.stock.__module__]
        from cqlshlib import formatting

        from cqlsh_ext.output.table import PageFormats

        formats = upstream.DateTimeFormat(timestamp_format=shell.display_timestamp_format,
                                          date_format=shell.display_date_format,
                                          nanotime_format=shell.display_nanotime_format,
                                          timezone=shell.display_timezone)
        encoding, color = shell.output_codec.name, shell.color
        double, single = shell.display_double_precision, shell.display_float_precision
        colormap = seams.value_colormap(color)  # (read once a page)
        # What format_by_type hands the value's formatter (its colour map, the null's spelling).
        chained = formatting.empty_colormap if color is False else formatting.default_colormap
        cell = _cell_formats(upstream.format_value, upstream.DecodeError, shell.myformat_value,
                             self._top_blob, formats, encoding, color, double, single, colormap, chained)
        column = _column_formats(cell, upstream.DecodeError, formats, encoding, double, single, chained)
        return PageFormats(cell, column, colormap)

    def _top_blob(self, val: Any, cqltype: Any) -> bool:
        """A top-level blob cell of a page with a display: it goes straight to its formatter, the
        call cqlsh's format_value chain would end in, without building a DateTimeFormat per cell."""
        return self.now.display is not None and type(val) is bytes and cqltype is not None and \
            cqltype.type_name == "blob"

    def format_value(self, val: Any, cqltype: Any, kwargs: dict[str, Any]) -> Any:
        if self._top_blob(val, cqltype):
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
        if not self._on_screen() and self.now.display is not None and self._for_a_terminal() \
                and display.max_field_width is None:
            # The classic loop on a terminal, a page with blobs: its blob cells are cut for the
            # screen, so the rows are fitted to it as the interactive shell fits them (no auto
            # vertical: cqlsh's loop); a table that cannot fit even cut is printed as in scripts,
            # and a page without blobs as cqlsh prints it.
            fitted = layout.fit_widths(formatted_names, formatted_values, shutil.get_terminal_size().columns,
                                       whole=self._whole(formatted_names))
            if fitted is not None:
                return self._print_table(formatted_names, formatted_values, fitted, with_header, tty,
                                         display.cells)
        if not self._on_screen():
            # Scripts, pipes, CAPTURE: whole values; one very long cell does not pad the others.
            bound = shutil.get_terminal_size().columns if _stdout_is_terminal() else layout.SCRIPT_CELL_BOUND
            widths = layout.script_widths(formatted_names, formatted_values, bound)
            return self._print_table(formatted_names, formatted_values, widths, with_header, tty,
                                     layout.WHOLE)
        screen = shutil.get_terminal_size().columns
        explicit = display.max_field_width
        if explicit is not None:  # --max-field-width: every cell cut there, no fitting to the screen
            rows = [[layout.cut(c, explicit, shell.color) if explicit else c for c in row]
                    for row in formatted_values]
            widths = layout.natural_widths(formatted_names, rows)
            if self._go_vertical(widths):
                shell.print_formatted_result_vertically(formatted_names, rows, self.now.row_offset)
                return
            return self._print_table(formatted_names, rows, widths, with_header, tty, layout.WHOLE)
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
        self._print_table(formatted_names, formatted_values, widths, with_header, tty,
                          display.cells if fitted else layout.WHOLE)

    def _print_table(self, names: list[Any], rows: list[Any], widths: Sequence[int], with_header: bool,
                     tty: bool, overflow: str) -> None:
        """layout.print_table's lines written WRITE_LINES at a time, each ended by a newline as
        shell.writeresult ends them: the same bytes, one write for many rows, and a page of
        long rows (PAGING OFF) never held as one text."""
        from cqlsh_ext.output import layout

        lines: list[str] = []
        write = self.shell.writeresult

        def add(line: str) -> None:
            lines.append(line)
            if len(lines) == WRITE_LINES:
                written()

        def written() -> None:
            lines.append("")  # the last line's newline, in the same join
            write("\n".join(lines), newline=False)
            lines.clear()

        layout.print_table(add, names, rows, widths, with_header, tty, self.shell.color, overflow)
        if lines:
            written()

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
                              shell.color, display.cells, self._whole(formatted_names))


def _decoded_cell(val: str, colormap: Any) -> Any:
    """A decoded value's text (DecodedText, made only where the display is loaded): its cell."""
    from cqlsh_ext.output.display import decoded_text_cell

    return decoded_text_cell(val, colormap)


def _cell_formats(format_value: Any, decode_error: Any, whole: Callable[[Any, Any], Any],
                  top_blob: Callable[[Any, Any], bool], formats: Any, encoding: str, color: Any,
                  double: Any, single: Any, colormap: Any, chained: Any) -> Callable[[Any, Any], Any]:
    """_page_formats' `cell` (PageFormats.cell), over what the page read once: cqlsh's
    `format_value`, its DecodeError, shell.myformat_value (`whole`), the date and time `formats`,
    the codec, the colour, the precisions and the colour maps."""
    from cqlsh_ext.output.cells import DecodedText

    decoded = _decoded_cell

    def cell(val: Any, cqltype: Any) -> Any:
        if type(val) is DecodedText:
            return decoded(val, chained)
        if type(val) is bytes:
            if top_blob(val, cqltype):
                return cqltype.formatter(val, colormap)
            return whole(val, cqltype)
        if isinstance(val, decode_error):
            return whole(val, cqltype)
        precision = double if cqltype is not None and cqltype.type_name == "double" else single
        try:
            return format_value(val, cqltype=cqltype, encoding=encoding, addcolor=color,
                                date_time_format=formats, float_precision=precision)
        except Exception:
            return whole(val, cqltype)  # its FormatError, recorded where cqlsh records it

    return cell


def _column_formats(cell: Callable[[Any, Any], Any], decode_error: Any, formats: Any, encoding: str,
                    double: Any, single: Any,
                    chained: Any) -> Callable[[Sequence[Any], Any], list[Any] | None]:
    """_page_formats' `column` (PageFormats.column): a column's cells formatted as cqlsh's chain
    formats them, a null by `cell`; None for a column `cell` must format row by row."""
    from cqlshlib import formatting
    from cqlshlib.displaying import FormattedValue

    from cqlsh_ext.output.cells import DecodedText

    decoded = _decoded_cell
    by_type, default, empty = formatting._formatters, formatting.format_value_default, formatting.EMPTY
    nullval = formatting.default_null_placeholder
    text, integer, formatted = formatting.format_value_text, formatting.format_integer_type, \
        FormattedValue
    text_on, int_on, reset = chained["text"], chained["int"], chained["reset"]

    def column(values: Sequence[Any], cqltype: Any) -> list[Any] | None:
        precision = double if cqltype is not None and cqltype.type_name == "double" else single
        if precision is None:
            precision = formatting.default_float_precision  # format_by_type's default
        typed = cqltype.formatter if cqltype else None
        out: list[Any] = []
        for val in values:
            kind = type(val)
            if val is None:
                out.append(cell(val, cqltype))  # the null, as format_by_type spells it
                continue
            elif kind is bytes or isinstance(val, decode_error):
                return None
            try:
                if kind is DecodedText:
                    out.append(decoded(val, chained))
                    continue
                leaf = typed or by_type.get(kind.__name__.lower(), default)
                if leaf is text and kind is str and val.isascii() and val.isprintable() \
                        and "\\" not in val:
                    # format_value_text's answer for printable ASCII without a backslash (nothing
                    # escaped or turned red; its wcswidth is the length)
                    done = formatted(val, text_on + val + reset, len(val))
                elif leaf is integer and kind is int:
                    spelt = str(val)  # format_integer_type's, no thousands separator in the chain
                    done = formatted(spelt, int_on + spelt + reset)
                elif val == empty:
                    done = default("", encoding=encoding, colormap=chained, date_time_format=formats,
                                   float_precision=precision, nullval=nullval, decimal_sep=None,
                                   thousands_sep=None, boolean_styles=None)
                else:
                    done = leaf(
                        val, cqltype=cqltype, encoding=encoding, colormap=chained,
                        date_time_format=formats, float_precision=precision, nullval=nullval,
                        decimal_sep=None, thousands_sep=None, boolean_styles=None)
            except Exception:
                return None  # its FormatError is recorded in cqlsh's order, by `cell`
            out.append(done)
        return out

    return column


class _Pages:
    """An answer's batches as cqlsh's print_result walks a paged result: `rows` (the page now,
    past empty batches, as output.paging.skip_empty_pages skips a result's); `fetch()` takes the
    next page ahead (the batches do not say which is the last before they end) and says whether
    there is one, as a result's has_more_pages does; `turn()` makes it the page now.
    `one_table`: every batch is part of the first page (PAGING OFF): `later()` gives the batches
    after the first, each read when asked for, and `later_rows` counts their rows."""

    def __init__(self, batches: Iterator[Rows], one_table: bool = False) -> None:
        self._batches = batches
        self._ahead: Rows | None = None
        self.rows: Rows = self._next() or []
        self.one_table = one_table
        self.later_rows = 0

    def later(self) -> Iterator[Rows]:
        if not self.one_table:
            return
        for rows in self._batches:
            self.later_rows += len(rows)
            yield rows

    def _next(self) -> Rows | None:
        for rows in self._batches:
            if rows:
                return rows
        return None

    def fetch(self) -> bool:
        if self._ahead is None:
            self._ahead = self._next()
        return self._ahead is not None

    def turn(self) -> None:
        if self.fetch():
            self.rows, self._ahead = self._ahead or [], None


def _in_pages(batches: Iterator[Rows], size: int) -> Iterator[Rows]:
    """`batches` of any sizes as pages of `size` rows (the last one fewer), each given once it is
    full or the batches end."""
    page: list[Sequence[Any]] = []
    for rows in batches:
        page.extend(rows)
        while len(page) >= size:
            yield page[:size]
            page = page[size:]
    if page:
        yield page


def _values(rows: Iterable[Any], names: list[str]) -> list[list[Any]]:
    from cqlsh_ext.output.named_rows import rows_values

    return list(rows_values(rows, names))


def _result_pages(result: Any, names: list[str]) -> Iterator[Iterable[list[Any]]]:
    """A stock result's pages (rows of values in column order, made as they are written), fetched
    as they are asked for."""
    from cqlsh_ext.output.named_rows import rows_values

    while True:
        yield rows_values(result.current_rows, names)
        if not result.has_more_pages:
            return
        result.fetch_next_page()


def _stdout_is_terminal() -> bool:
    import sys

    return sys.stdout.isatty()
