"""Table and vertical output of results that hold blobs, on cqlsh's own layout.

cqlsh builds one CqlType per column and binds each node (the column, and the items, keys, values
and fields inside it) to a formatter taken from its formatter registry by type name. For results
with a blob somewhere, `print_static_result` does what cqlsh's does (cqlsh_ext.upstream.seams pins the copy)
and then gives every blob node of every column its own formatter, which knows the value's place
(cqlsh_ext.output.place). cqlsh's global registry is never changed, so COPY TO, which formats in
worker processes through that registry, keeps the stored bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cassandra.cqltypes import cql_typename
from cqlshlib.formatting import CqlType

from cqlsh_ext.cql.types import from_cqlsh
from cqlsh_ext.payload.places import ValuePlace

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell


class PlacedFormatter:
    """The blob formatter of one CqlType node: cqlsh calls it as it calls its own formatters."""

    __slots__ = ("display", "place")

    def __init__(self, display: Callable[..., Any], place: ValuePlace) -> None:
        self.display = display
        self.place = place

    def __call__(self, val: bytes, colormap: Any, quote: bool = False, **_: Any) -> Any:
        return self.display(val, colormap, quote, place=self.place)


def bind_blob_formatters(cqltype: CqlType, place: ValuePlace, display: Callable[..., Any],
                         ksmeta: Any) -> None:
    """Give every blob node under `cqltype` (a cqlshlib CqlType) a formatter that knows its place."""
    for steps, node in from_cqlsh(cqltype, ksmeta).nodes():
        node.source.formatter = PlacedFormatter(display, place.child(*steps))


def prepare_page(column_names: list[str], cql_types: list[Any], rows: list[Any],
                 display: Callable[..., Any]) -> None:
    """The page pre-pass: each blob column's values of the page handed to the display together
    (display.BlobDisplay.prepare), before cqlsh formats them cell by cell."""
    prepare = getattr(display, "prepare", None)
    if prepare is None:
        return
    for name, cqltype in zip(column_names, cql_types, strict=False):
        formatter = cqltype.formatter
        if isinstance(formatter, PlacedFormatter):
            prepare(formatter.place, [row[name] for row in rows])


def print_static_result(shell: Shell, result: Any, table_meta: Any, with_header: bool, tty: bool,
                        row_count_offset: int, display: Callable[..., Any]) -> None:
    """cqlsh's Shell.print_static_result, with blob nodes bound to `display` by place.

    A copy of cqlsh 6.2's method (seams.COPIED pins its source); the additions are the
    bind_blob_formatters loop and the page pre-pass (prepare_page) before formatted_values.
    """
    if not result.column_names and not table_meta:
        return

    column_names = result.column_names or list(table_meta.columns.keys())
    formatted_names = [shell.myformat_colname(name, table_meta) for name in column_names]
    if not result.current_rows:
        shell.print_formatted_result(formatted_names, None, with_header=True, tty=tty)
        return

    cql_types = []
    if result.column_types:
        ks_name = table_meta.keyspace_name if table_meta else shell.current_keyspace
        ks_meta = shell.conn.metadata.keyspaces.get(ks_name, None)
        cql_types = [CqlType(cql_typename(t), ks_meta) for t in result.column_types]
        table = table_meta.name if table_meta else None
        for name, cqltype in zip(column_names, cql_types, strict=False):
            bind_blob_formatters(cqltype, ValuePlace(ks_name, table, name), display, ks_meta)
        prepare_page(column_names, cql_types, result.current_rows, display)

    formatted_values = [list(map(shell.myformat_value, [row[c] for c in column_names], cql_types))
                        for row in result.current_rows]

    if shell.expand_enabled:
        shell.print_formatted_result_vertically(formatted_names, formatted_values, row_count_offset)
    else:
        shell.print_formatted_result(formatted_names, formatted_values, with_header, tty)
