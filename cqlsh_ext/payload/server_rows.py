"""A RESULT page's rows as the server sent them (the scan's driver handler keeps them whole:
scanning/pages_in.py), read without the driver building a tuple per row.

    page = ServerRows(body, count, types, protocol_version)
    page.cells([0, 2])     # columns 0 and 2, each a list of bytes or None (null), one a row
    page.column(2)         # column 2's values as the driver makes them (the core's laid_out, its
                           # row parser, or from_binary)
    page.column(2, [3, 9]) # ... of rows 3 and 9 alone (a reader's kept rows: column_of(), columns_of())
    page.make([3, 9])      # rows 3 and 9 made in one split of their cells alone (a reader's kept rows)
    len(page), page[5]     # a sequence of rows too: page[5] decodes row 5 alone, iterating
                           # decodes them all (the driver's way, on first use)

The rows section (native protocol v4/v5): per row, per column, an int32 length (-1 null; the driver
reads any negative length as null) and that many bytes; an empty value (length 0) is not null.
The cells are split by the native core (payload.native.split_page) when it is built, else by
`split_cells` here, the same reading in Python; both refuse a malformed page with one line
(ValueError), where the driver's own reading raised too. The values a reader shows are made by the
driver: with the core and the driver's Cython row parser (its `cassandra.obj_parser`, what makes
its own rows), by that parser, fed the wanted rows' and columns' cells as a rows section of their
own (payload.native.select_rows: the driver's rows, at its speed); else by each column type's
`from_binary`, the same values a cell at a time in Python. The ordinary columns of the simplest
types (int, bigint, counter, double, boolean, text, varchar, ascii) the core lays out itself, a
list a column straight from the cells (payload.native.cql_columns: `laid_out`), the driver's
parser's values without its tuple a row; a column with a cell the driver reads its own way (an
empty number, a width that is not the type's, text its codec refuses) is left to the driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from cqlsh_ext.payload import native
from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.page_rows import PageRows

__all__ = ["MalformedPage", "ServerRows", "column_of", "columns_of", "split_cells"]


class MalformedPage(ValueError):
    """A page whose rows section is not `count` rows of `columns` cells exactly (one line)."""


def split_cells(body: bytes, count: int, columns: int, wanted: Sequence[int]) -> list[list[bytes | None]]:
    """The wanted columns' cells of a rows section, read in Python (the core's rows.rs, the same
    answers and refusals)."""
    if any(c < 0 or c >= columns for c in wanted):
        bad = next(c for c in wanted if c < 0 or c >= columns)
        raise MalformedPage(f"a malformed page of rows: column {bad} asked of a page of {columns} columns")
    if count < 0 or (columns > 0 and count > len(body) // (4 * columns)) or (columns == 0 and body):
        raise MalformedPage(f"a malformed page of rows: {count} rows of {columns} columns do not fit "
                            f"in {len(body)} bytes")
    slots: list[list[int]] = [[] for _ in range(columns)]
    for k, c in enumerate(wanted):
        slots[c].append(k)
    out: list[list[bytes | None]] = [[] for _ in wanted]
    at, end, view = 0, len(body), memoryview(body)
    for row in range(count):
        for column, to in enumerate(slots):
            if at + 4 > end:
                raise MalformedPage(f"a malformed page of rows: the page ends inside row {row}, "
                                    f"column {column}'s length")
            length = int.from_bytes(view[at:at + 4], "big", signed=True)
            at += 4
            cell: bytes | None
            if length < 0:
                if length < -2:
                    raise MalformedPage(f"a malformed page of rows: row {row}, column {column}: "
                                        f"a length of {length}")
                cell = None
            else:
                if at + length > end:
                    raise MalformedPage(f"a malformed page of rows: row {row}, column {column}: "
                                        f"{length} bytes asked, {end - at} left")
                cell = bytes(view[at:at + length]) if to else None
                at += length
            for k in to:
                out[k].append(cell)
    if at != end:
        raise MalformedPage(f"a malformed page of rows: {end - at} bytes after the last of {count} rows")
    return out


def column_of(rows: Sequence[Sequence[Any]], i: int, kept: Sequence[int] | None = None) -> list[Any]:
    """Column i of a page's rows (of every row, or of the `kept` ones in their order): of the
    server's page (a ServerRows), that column's cells alone made by the driver; of an Arrow batch
    (an ArrowRows), that column alone; of rows, their items."""
    if isinstance(rows, (ServerRows, ArrowRows)):
        return rows.column(i, kept)
    if kept is None:
        return [row[i] for row in rows]
    return [rows[k][i] for k in kept]


def columns_of(rows: Sequence[Sequence[Any]], wanted: Sequence[int],
               kept: Sequence[int] | None = None) -> dict[int, list[Any]]:
    """column_of() of each of the `wanted` columns (distinct), by index: of the server's page, made
    in one pass of the driver's row parser over those cells (ServerRows.parsed)."""
    if isinstance(rows, ServerRows) and wanted and rows._rows is None:
        # The columns the core lays out from the cells (int, text, ...: no tuple a row) ...
        out = rows.laid_out(wanted, kept)
        rest = [i for i in wanted if i not in out]
        # ... a bare blob column's values are its cells: the core's split of the page, no row tuple ...
        blobs = [i for i in rest if rows.holds_blobs(i)] if native.available() else []
        if blobs:
            out.update(zip(blobs, rows.cells(blobs, kept), strict=True))
            rest = [i for i in rest if i not in out]
        parsed = rows.parsed(rest, kept) if rest else None
        if parsed is not None:
            # ... the others by the driver's parser, a column at a time (map over the rows: half
            # the CPU of zip(*rows) and list()).
            out.update((i, list(map(itemgetter(k), parsed))) for k, i in enumerate(rest))
        if len(out) == len(wanted):
            return out
        return {i: out[i] if i in out else column_of(rows, i, kept) for i in wanted}
    return {i: column_of(rows, i, kept) for i in wanted}


_PARSER: list[Any] = []


def _row_parser() -> Any:
    """The driver's Cython row parser (cassandra.obj_parser.ListParser, with what it reads: the
    parsing module's ParseDesc, the bytesio reader, the deserializers), or None (a driver without
    its Cython extensions)."""
    if not _PARSER:
        try:
            from cassandra.bytesio import BytesIOReader
            from cassandra.deserializers import make_deserializers
            from cassandra.obj_parser import ListParser
            from cassandra.parsing import ParseDesc
            from cassandra.policies import ColDesc
        except ImportError:
            _PARSER.append(None)
        else:
            _PARSER.append((ListParser(), BytesIOReader, ParseDesc, ColDesc, make_deserializers))
    return _PARSER[0]


_LAID_OUT: list[dict[Any, str]] = []


def _laid_out_kinds() -> dict[Any, str]:
    """The driver's type classes whose columns the core lays out (payload.native.cql_columns),
    each to the CQL type it reads them as: exactly those classes (the driver finds its parser's
    deserializer by the class's own name)."""
    if not _LAID_OUT:
        from cassandra import cqltypes
        _LAID_OUT.append({cqltypes.Int32Type: "int", cqltypes.LongType: "bigint",
                          cqltypes.CounterColumnType: "bigint", cqltypes.DoubleType: "double",
                          cqltypes.BooleanType: "boolean", cqltypes.UTF8Type: "text",
                          cqltypes.VarcharType: "varchar", cqltypes.AsciiType: "ascii"})
    return _LAID_OUT[0]


class ServerRows(PageRows):
    """One page's rows section, its row count, its columns' driver types (cqltypes classes) and
    the protocol version the values are read at. The section is `message[start:]`: the pages-in
    handler hands over the whole RESULT message (the driver's BytesIO shares its bytes) and where
    the rows start, and the core reads them there, uncopied; `body` is the section itself,
    copied out once when asked."""

    __slots__ = ("message", "start", "row_count", "types", "protocol_version", "_body", "_rows", "_cells",
                 "_made")
    as_sent = True

    def __init__(self, body: bytes, count: int, types: Sequence[Any], protocol_version: int,
                 start: int = 0) -> None:
        self.message = body
        self.start = start
        self._body: bytes | None = body if start == 0 else None
        self.row_count = count
        self.types = list(types)
        self.protocol_version = protocol_version
        self._rows: list[tuple[Any, ...]] | None = None
        #: Every column's cells (split once, for rows taken one by one) and the rows so made.
        self._cells: list[list[bytes | None]] | None = None
        self._made: dict[int, tuple[Any, ...]] = {}

    @property
    def columns(self) -> int:
        return len(self.types)

    @property
    def body(self) -> bytes:
        """The rows section's bytes (copied out of the message once, where it holds more)."""
        if self._body is None:
            self._body = self.message[self.start:]
        return self._body

    @property
    def size(self) -> int:
        """The rows section's length in bytes (no copy)."""
        return len(self.message) - self.start

    def holds_blobs(self, i: int) -> bool:
        """Whether column `i` is a bare blob column: its cells are the stored values themselves,
        which the core reads from the page (a blob inside a collection, or a text column, is not)."""
        return getattr(self.types[i], "typename", None) == "blob"

    def _within(self, rows: Sequence[int] | None) -> None:
        """MalformedPage (one line) for a row asked past the page."""
        # (min and max first, in C: a page's thousands of kept rows are not walked in Python)
        if rows and not 0 <= min(rows) <= max(rows) < self.row_count:
            bad = next((row for row in rows if not 0 <= row < self.row_count), None)
            if bad is not None:
                raise MalformedPage(f"a malformed page of rows: row {bad} asked of a page of "
                                    f"{self.row_count} rows")

    def cells(self, wanted: Sequence[int], rows: Sequence[int] | None = None) -> list[list[bytes | None]]:
        """Each wanted column's cells (bytes or None), by the core where it is built: of every
        row, or of `rows` only (in its order)."""
        self._within(rows)
        if native.available():
            try:
                return native.split_page(self.message, self.row_count, self.columns, wanted, rows,
                                         start=self.start)
            except ValueError as err:
                raise MalformedPage(str(err)) from None
        cells = split_cells(self.body, self.row_count, self.columns, wanted)
        return cells if rows is None else [[column[row] for row in rows] for column in cells]

    def parsed(self, wanted: Sequence[int],
               rows: Sequence[int] | None = None) -> list[tuple[Any, ...]] | None:
        """The wanted columns of every row, or of `rows` only (each in its order), as tuples the
        driver's own Cython row parser makes of their cells (the core hands them over as a rows
        section: select_rows): the driver's rows at its speed. None without the core or the
        driver's Cython (the caller makes them by from_binary)."""
        parser = _row_parser()
        if parser is None or not native.available():
            return None
        list_parser, reader, parse_desc, col_desc, deserializers = parser
        self._within(rows)
        try:
            section = native.select_rows(self.message, self.row_count, self.columns, wanted, rows,
                                         start=self.start)
        except ValueError as err:
            raise MalformedPage(str(err)) from None
        types = [self.types[i] for i in wanted]
        names = [str(i) for i in wanted]
        desc = parse_desc(names, types, None, [col_desc(None, None, name) for name in names],
                          deserializers(types), self.protocol_version)
        made: list[tuple[Any, ...]] = list_parser.parse_rows(reader(section), desc)
        return made

    def laid_out(self, wanted: Sequence[int], rows: Sequence[int] | None = None) -> dict[int, list[Any]]:
        """Of the wanted columns (distinct), those the core lays out from the cells
        (payload.native.cql_columns: int, bigint, counter, double, boolean, text, varchar,
        ascii), by index: the driver's parser's values without a tuple a row, of every row or of
        `rows` only (in its order). The others (their type, a cell the driver reads its own way,
        no core) are not in the answer."""
        if not native.available():
            return {}
        kinds = _laid_out_kinds()
        read = [(i, kinds[t]) for i, t in ((i, self.types[i]) for i in wanted) if t in kinds]
        if not read:
            return {}
        self._within(rows)
        try:
            made = native.cql_columns(self.message, self.row_count, self.columns, [i for i, _ in read],
                                      [kind for _, kind in read], rows, start=self.start)
        except ValueError as err:
            raise MalformedPage(str(err)) from None
        return {i: values for (i, _), values in zip(read, made, strict=True) if values is not None}

    def make(self, indexes: Sequence[int]) -> None:
        """Rows `indexes` made as the driver's tuple_factory makes them, in one call (the rows a
        reader keeps: row() then gives them as made): parsed() over those rows' cells where the
        core and the driver's Cython run, else from_binary over their cells."""
        if self._rows is not None:
            return
        made = self._made
        wanted = sorted(set(indexes).difference(made) if made else set(indexes))
        if not wanted:
            return
        parsed = self.parsed(range(self.columns), wanted)
        if parsed is not None:
            made.update(zip(wanted, parsed, strict=True))
            return
        version = self.protocol_version
        columns = [[t.from_binary(cell, version) for cell in cells]
                   for t, cells in zip(self.types, self.cells(range(self.columns), wanted), strict=True)]
        tuples = zip(*columns, strict=True) if columns else (() for _ in wanted)
        made.update(zip(wanted, tuples, strict=True))

    def column(self, i: int, rows: Sequence[int] | None = None) -> list[Any]:
        """Column i's values as the driver makes them (laid_out(), parsed(), else its type's from_binary): of
        every row, or of `rows` only (in its order: a reader's kept rows), that column's cells alone."""
        if self._rows is not None:
            return [row[i] for row in self._rows] if rows is None else [self._rows[k][i] for k in rows]
        laid = self.laid_out([i], rows)
        if laid:
            return laid[i]
        parsed = self.parsed([i], rows)
        if parsed is not None:
            return [row[0] for row in parsed]
        decode, version = self.types[i].from_binary, self.protocol_version
        return [decode(cell, version) for cell in self.cells([i], rows)[0]]

    def rows(self) -> list[tuple[Any, ...]]:
        """Every row as the driver's tuple_factory makes it (decoded once, then kept): parsed(),
        else from_binary over every column's cells."""
        if self._rows is None:
            parsed = self.parsed(range(self.columns))
            if parsed is not None:
                self._rows = parsed
                return parsed
            version = self.protocol_version
            decoded = [[t.from_binary(cell, version) for cell in cells]
                       for t, cells in zip(self.types, self.cells(range(self.columns)), strict=True)]
            self._rows = list(zip(*decoded, strict=True)) if decoded else [() for _ in range(self.row_count)]
        return self._rows

    def row(self, index: int) -> tuple[Any, ...]:
        """Row `index` alone as the driver's tuple_factory makes it (a reader that keeps a few
        rows of the page: the others are never decoded)."""
        if self._rows is not None:
            return self._rows[index]
        index = self._in_range(index)
        made = self._made.get(index)
        if made is None:
            if self._cells is None:  # rows asked one by one: the page's cells split once
                self._cells = self.cells(range(self.columns))
            version = self.protocol_version
            made = self._made[index] = tuple(t.from_binary(cells[index], version)
                                             for t, cells in zip(self.types, self._cells, strict=True))
        return made
