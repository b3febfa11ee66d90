"""A payload query's typed answer (reading.typed.TypedAnswer) printed without a shell, in every
output format; a report (`print_report`: COMPRESSION STATS', DESCRIBE PAYLOAD's) as the shell prints it.

JSON Lines and CSV go through the shell's own writers (output.writers, with the shell's value
encoder and its conversion of path values, render.path_values.machine_value), so the lines are
those the shell prints. `table` and `vertical` are cqlsh's layouts (output.layout) with cells
formatted by cqlsh's formatter for the column's type, and path values and aggregates as the shell
shows them (render.terminal.presenter); blob columns show cqlsh's hex there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import TypedAnswer

Row = tuple[Any, ...]


def print_report(display: Any, asjson: bool, as_json: Callable[[], Any],
                 laid_out: Callable[[int], list[str]]) -> None:
    """A report as the shell prints it: one JSON document (the statement's JSON, or a JSON output
    format), else its lines laid out for a terminal's width (its natural width to a pipe or a file)."""
    from cqlsh_ext.common import jsonenc

    if asjson or display.output_format.reports_as_json:
        print(jsonenc.dumps(as_json()))
    else:
        import shutil

        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
        print("\n".join(laid_out(width)))
    sys.stdout.flush()


def print_answer(display: Any, answer: TypedAnswer, keyspace: str, table: str, float_precision: int) -> None:
    """`float_precision`: cqlshrc's, for the floats computed here."""
    from cqlsh_ext.payload.budget import Budget
    from cqlsh_ext.render.terminal import presenter

    fmt = display.output_format
    names, types = answer.names, answer.types
    present = presenter(types, [c.computed for c in answer.columns], fmt.machine, Budget.for_cap(display.cap),
                        float_precision)
    shown = [present(row) for batch in answer for row in batch]
    if fmt.machine:
        from cqlsh_ext.output.writers import make_writer
        from cqlsh_ext.payload.places import ValuePlace

        places: list[ValuePlace | None] = [ValuePlace(keyspace, table, name) for name in names]
        writer = make_writer(fmt, sys.stdout, names, types, display, places)
        writer.write_values(shown)  # (in column order: a name said twice keeps both values)
        writer.finish()
        return
    _print_layout(names, types, shown, bool(fmt.expand))


def _print_layout(names: list[str], types: list[Any], rows: list[Row], vertical: bool) -> None:
    from cassandra.cqltypes import UTF8Type
    from cqlshlib.displaying import FormattedValue
    from cqlshlib.formatting import empty_colormap, format_by_type

    from cqlsh_ext.output import layout

    cqltypes = [UTF8Type if t is None else t for t in types]

    def cell(value: Any, cqltype: Any) -> Any:
        return format_by_type(value, _cql_type(cqltype), "utf-8", colormap=empty_colormap)

    formatted_names = [FormattedValue(name) for name in names]
    cells = [[cell(v, t) for v, t in zip(row, cqltypes, strict=True)] for row in rows]

    def write(line: str) -> None:
        sys.stdout.write(line + "\n")

    if vertical:
        layout.print_vertical(write, formatted_names, cells, 0, None, False, layout.WHOLE)
    else:
        widths = layout.natural_widths(formatted_names, cells)
        layout.print_table(write, formatted_names, cells, widths, True, False, False, layout.WHOLE)
    write("")
    write(f"({len(rows)} rows)" if len(rows) != 1 else "(1 rows)")
    sys.stdout.flush()


def _cql_type(driver_type: Any) -> Any:
    """cqlsh's CqlType for a driver type (what cqlsh's formatter dispatches on)."""
    from cqlshlib.formatting import CqlType

    return CqlType(driver_type.cql_parameterized_type(), None)
