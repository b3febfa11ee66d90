"""A typed answer (reading.typed.TypedAnswer) on the shell's output: its batches go straight to
the shell's result pipeline (cqlsh_ext.output.pipeline.ResultPipeline.print_answer: cqlsh's table
and EXPAND layouts with the fitted, decoded blob cells, ---MORE---, the pager, CAPTURE, JSON Lines
and CSV), the same page step and layouts a stock result takes, without a driver result or cqlsh's
print_result; then the closing line (render.closing).

A path's or an aggregate's value (no CQL type) is shown as render.path_values spells it: a text
cell in cqlsh's layouts (output.cells.DecodedText: escaped as the blob display escapes decoded
text, bidirectional controls included), its JSON value in JSON Lines and CSV.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.path_values import machine_value, table_cell

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import TypedAnswer
    from cqlsh_ext.upstream.protocol import Results

Row = tuple[Any, ...]


def print_answer(results: Results, answer: TypedAnswer, table_meta: Any) -> None:
    """The answer through the shell's result pipeline (`results`), then its closing line: on
    stderr in scripts, after the result in the interactive shell (whose pager holds the result
    until the command ends)."""
    from cassandra.cqltypes import UTF8Type

    from cqlsh_ext.render.closing import closing_line

    notes = answer.notes
    assert notes is not None
    display = results.display
    machine = display.output_format.machine
    present = presenter(answer.types, [c.computed for c in answer.columns], machine,
                        Budget.for_cap(display.cap), results.float_precision)
    shown = answer.types if machine else [UTF8Type if t is None else t for t in answer.types]
    try:
        results.print_answer(answer.names, shown, presented(results.answer_rows(answer), present), table_meta)
    except BaseException as stopped:  # the pager quit, the pipe closed, Ctrl-C: said, then raised
        notes.output_closed = True
        if isinstance(stopped, KeyboardInterrupt):
            notes.closed_by = "by Ctrl-C"
        raise
    finally:
        answer.close()
        if results.interactive:
            closing_line(notes, sys.stdout, results.screen_width())
        elif display.output_format.name == "json":  # a program's: JSON objects (output.stderr_lines)
            from cqlsh_ext.output.stderr_lines import write
            from cqlsh_ext.render.closing import closing_objects

            for said in closing_objects(notes):
                write(said)
        else:
            closing_line(notes, sys.stderr)


def presented(batches: Iterator[list[Row]], present: Callable[[Row], Row]) -> Iterator[list[Row]]:
    """The answer's batches with each row as `present` shows it, a batch as it is asked for."""
    for rows in batches:
        yield [present(row) for row in rows]


def presenter(types: Sequence[Any], computed: Sequence[bool], machine: bool, budget: Budget,
              float_precision: int) -> Callable[[Row], Row]:
    """How an answer row is shown. A path's or an aggregate's value (type None) as table_cell, or
    machine_value for JSON Lines and CSV, makes it; in cqlsh's layouts a float the shell computed
    (sum, avg: `computed`) is printed as cqlsh prints a float column, at cqlshrc's float_precision,
    while values read from payloads keep every digit they have. JSON Lines and CSV keep all digits."""
    from cqlsh_ext.output.cells import DecodedText
    from cqlsh_ext.upstream.seams import float_text as cqlsh_float

    paths = [i for i, t in enumerate(types) if t is None]
    rounded = set() if machine else {i for i in paths if computed[i]}
    convert = machine_value if machine else table_cell

    def present(row: Row) -> Row:
        out = list(row)
        for i in paths:
            value = out[i]
            if i in rounded and type(value) is float:
                out[i] = cqlsh_float(value, float_precision)
            elif machine:
                out[i] = convert(value, budget)
            else:
                shown = convert(value, budget)
                out[i] = DecodedText(shown) if type(shown) is str else shown
        return tuple(out)

    return present
