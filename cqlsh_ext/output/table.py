"""A page's cells for cqlsh's table and vertical layouts, blobs decoded by their place.

cqlsh builds one CqlType per column and binds each node (the column, and the items, keys, values
and fields inside it) to a formatter taken from its formatter registry by type name.
`formatted_rows` does what cqlsh's print_static_result does to a page (cqlsh_ext.upstream.seams
pins the source it follows) and, for a page with a blob somewhere, gives every blob node of every
column its own formatter, which knows the value's place (cqlsh_ext.payload.places). The result
pipeline (output.pipeline) formats stock pages with blobs and every page of a typed answer with it.
cqlsh's global registry is never changed, so COPY TO, which formats in worker processes through
that registry, keeps the stored bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from cassandra.cqltypes import cql_typename
from cqlshlib.formatting import CqlType

from cqlsh_ext.cql.types import from_cqlsh
from cqlsh_ext.payload.places import ValuePlace
from cqlsh_ext.payload.view import BlobView

#: A display's cells of a page's blobs at once: (their place, the blobs, cqlsh's colormap) -> cells.
PageCells = Callable[[ValuePlace, list[bytes], Any], Iterable[Any]]


class PlacedFormatter:
    """The blob formatter of one CqlType node: cqlsh calls it as it calls its own formatters."""

    __slots__ = ("cells", "display", "place")

    def __init__(self, display: Callable[..., Any], place: ValuePlace) -> None:
        self.display = display
        self.place = place
        #: The display's formatting of a page's blobs at once (display.BlobDisplay.cells), if it has one.
        self.cells: PageCells | None = getattr(display, "cells", None)

    def __call__(self, val: bytes, colormap: Any, quote: bool = False, **_: Any) -> Any:
        return self.display(val, colormap, quote, place=self.place)

    def takes_column(self, values: Sequence[Any]) -> bool:
        """`column` can format these values: bytes, views the reading made (a payload query's
        answer: payload.view.BlobView) and nulls, and a display that formats a page's blobs at once
        (display.BlobDisplay.cells). Not a DecodeError: that is formatted cell by cell, in cqlsh's
        order."""
        return self.cells is not None and all(
            type(value) is bytes or value is None or isinstance(value, BlobView) for value in values)

    def column(self, values: Sequence[Any], cqltype: Any, formats: PageFormats) -> list[Any]:
        """The cells of a top-level blob column's values of a page (takes_column) at once, as
        calling this formatter on each gives them, a null as `formats.cell` spells it."""
        colormap = formats.colormap
        if self.cells is None:  # takes_column says no: cell by cell
            return [formats.cell(value, cqltype) if value is None else self(value, colormap)
                    for value in values]
        made = iter(self.cells(self.place, [value for value in values if type(value) is bytes], colormap))
        return [next(made) if type(value) is bytes else formats.cell(value, cqltype) if value is None
                else self(value, colormap) for value in values]


def bind_blob_formatters(cqltype: CqlType, place: ValuePlace, display: Callable[..., Any],
                         ksmeta: Any) -> None:
    """Give every blob node under `cqltype` (a cqlshlib CqlType) a formatter that knows its place."""
    for steps, node in from_cqlsh(cqltype, ksmeta).nodes():
        node.source.formatter = PlacedFormatter(display, place.child(*steps))


def prepare_page(column_names: list[str], cql_types: list[Any], rows: Sequence[Sequence[Any]],
                 display: Callable[..., Any]) -> None:
    """The page pre-pass: each blob column's values of the page handed to the display together
    (display.BlobDisplay.prepare), with the page's rows (a column whose chain a sibling column
    picks reads it there), before cqlsh formats them cell by cell."""
    prepare = getattr(display, "prepare", None)
    if prepare is None:
        return
    for i, cqltype in enumerate(cql_types[:len(column_names)]):
        formatter = cqltype.formatter
        if isinstance(formatter, PlacedFormatter):
            prepare(formatter.place, [row[i] for row in rows], column_names, rows)


class PageFormats(NamedTuple):
    """How a page's cells are formatted as the shell's myformat_value formats them (the result
    pipeline's, cqlshrc's formats read once a page): `cell(value, cqltype)` one cell;
    `column(values, cqltype)` a column's cells at once, or None when one of them is a cell whose
    formatting may record an error (a DecodeError, a failed format) or reaches a blob: those are
    formatted cell by cell, in cqlsh's order, so the errors are recorded in it; `colormap`, what
    `cell` hands a top-level blob's formatter."""

    cell: Callable[[Any, Any], Any]
    column: Callable[[Sequence[Any], Any], list[Any] | None]
    colormap: Any


def formatted_rows(column_names: list[str], column_types: Sequence[Any] | None,
                   rows: Sequence[Sequence[Any]], keyspace: str | None, table: str | None, ks_meta: Any,
                   formats: PageFormats, display: Callable[..., Any] | None) -> list[list[Any]]:
    """A page's cells as cqlsh's Shell.print_static_result formats them (seams.COPIED pins its
    source): one CqlType per column (none without `column_types`), then each cell formatted as the
    shell's myformat_value formats it. `rows`: each row's values in column order. With `display`,
    every blob node of a column is bound to it by its place in `keyspace`.`table`
    (bind_blob_formatters) and the page's blobs are handed to it first (prepare_page). The cells
    are formatted a column at a time (`formats.column`; a top-level blob column's by its
    formatter, PlacedFormatter.column), unless a column has a cell that must be formatted in
    cqlsh's order: then row by row, as cqlsh does."""
    cql_types = [CqlType(cql_typename(t), ks_meta) for t in column_types or ()]
    if display is not None and cql_types:
        for name, cqltype in zip(column_names, cql_types, strict=False):
            bind_blob_formatters(cqltype, ValuePlace(keyspace, table, name), display, ks_meta)
        prepare_page(column_names, cql_types, rows, display)
    if rows and cql_types and set(map(len, rows)) == {len(cql_types)}:
        columns = by_column(list(zip(*rows, strict=True)), cql_types, formats)
        if columns is not None:
            return list(map(list, zip(*columns, strict=True)))
    cell = formats.cell
    return [list(map(cell, row, cql_types)) for row in rows]


def by_column(columns: list[tuple[Any, ...]], cql_types: list[Any],
              formats: PageFormats) -> list[list[Any]] | None:
    """Each column's cells at once, or None when one column must be formatted cell by cell. The
    top-level blob columns last: their display's page (prepare_page) is taken only when every
    other column could be formatted so (else the page goes cell by cell and takes it there)."""
    cells: list[list[Any]] = [[] for _column in columns]
    blob_columns = []
    for i, (values, cqltype) in enumerate(zip(columns, cql_types, strict=True)):
        formatter = cqltype.formatter
        if isinstance(formatter, PlacedFormatter):
            if not formatter.takes_column(values):
                return None
            blob_columns.append(i)
            continue
        made = formats.column(values, cqltype)
        if made is None:
            return None
        cells[i] = made
    for i in blob_columns:
        cells[i] = cql_types[i].formatter.column(columns[i], cql_types[i], formats)
    return cells
