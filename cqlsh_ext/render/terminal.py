"""A typed answer (reading.typed.TypedAnswer) on the shell's output, as cqlsh prints any result: the
answer becomes a result that quacks like the driver's paged ResultSet (AnswerResult), and the
shell's one result pipeline (cqlsh_ext.output.pipeline: cqlsh's table and EXPAND layouts with the
fitted, decoded blob cells, ---MORE---, the pager, CAPTURE, JSON Lines and CSV) prints it; then
the closing line (render.closing).

A path's or an aggregate's value (no CQL type) is shown as render.path_values spells it: a text
cell in cqlsh's layouts, its JSON value in JSON Lines and CSV.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.render.path_values import machine_value, table_cell

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import TypedAnswer
    from cqlsh_ext.upstream.protocol import Shell

Row = tuple[Any, ...]


def print_answer(shell: Shell, answer: TypedAnswer, table_meta: Any) -> None:
    """The answer through the shell's result pipeline, then its closing line: on stderr in
    scripts, after the result in the interactive shell (whose pager holds the result until the
    command ends)."""
    from cassandra.cqltypes import UTF8Type

    from cqlsh_ext.render.closing import closing_line

    notes = answer.notes
    assert notes is not None
    machine = shell.settings.display.output_format.machine
    present = presenter(answer.types, [c.computed for c in answer.columns], machine,
                        Budget.for_cap(shell.settings.display.cap), shell.display_float_precision)
    shown = answer.types if machine else [UTF8Type if t is None else t for t in answer.types]
    try:
        shell.print_result(AnswerResult(answer.names, shown, answer.pages(), present), table_meta)
    except BaseException:  # the pager quit, the pipe closed, a second Ctrl-C: said, then raised
        notes.output_closed = True
        raise
    finally:
        answer.close()
        if shell.repl_mode:
            closing_line(notes, sys.stdout, shell.results.screen_width())
        else:
            closing_line(notes, sys.stderr)


def presenter(types: Sequence[Any], computed: Sequence[bool], machine: bool, budget: Budget,
              float_precision: int) -> Callable[[Row], Row]:
    """How an answer row is shown. A path's or an aggregate's value (type None) as table_cell, or
    machine_value for JSON Lines and CSV, makes it; in cqlsh's layouts a float the shell computed
    (sum, avg: `computed`) is printed as cqlsh prints a float column, at cqlshrc's float_precision,
    while values read from payloads keep every digit they have. JSON Lines and CSV keep all digits."""
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
            else:
                out[i] = convert(value, budget)
        return tuple(out)

    return present


class AnswerResult:
    """Quacks like the driver's paged ResultSet where cqlsh and cqlsh_ext.output read one:
    `column_names`, `column_types`, `current_rows` (dicts by column name), `has_more_pages`,
    `fetch_next_page()`. Pages come from `pages` as they are asked for; the last may be empty
    (cqlsh prints nothing for an empty page after the first)."""

    def __init__(self, names: Sequence[str], types: Sequence[Any], pages: Iterator[list[Row]],
                 present: Callable[[Row], Row]) -> None:
        self.column_names = list(names)
        self.column_types = list(types)
        self._pages = pages
        self._present = present
        self._done = False
        self.current_rows: list[dict[str, Any]] = []
        self.fetch_next_page()

    @property
    def has_more_pages(self) -> bool:
        return not self._done

    def fetch_next_page(self) -> None:
        rows = next(self._pages, None)
        if rows is None:
            self._done = True
            rows = []
        names = self.column_names
        self.current_rows = [dict(zip(names, self._present(row), strict=True)) for row in rows]
