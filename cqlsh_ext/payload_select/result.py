"""A payload query's answer as a result the shell prints like any other: the column names and
types, and pages of rows pulled as cqlsh's printing asks for them (---MORE---, the pager, JSON
Lines and CSV work as for a plain SELECT).

Values found by a path are what the decoded record holds (a string, a number, a boolean, a
nested record, null). In cqlsh's table and EXPAND layouts they are text columns: a string as
itself, a number as its digits, a record as the display renders records. For JSON Lines and CSV
they keep their type: numbers stay numbers, records are embedded as JSON, null is null.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from cqlsh_ext.common.jsonenc import float_text
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.query.groups import UNDECODABLE_GROUP

Row = tuple[Any, ...]


#: How the group of undecodable values (GROUP BY: query.groups.UNDECODABLE_GROUP) is spelt: in
#: a table, and for JSON Lines, CSV and Parquet (an object no record's value can be mistaken for).
UNDECODABLE_CELL = "<undecodable>"
UNDECODABLE_VALUE = {"$undecodable": True}


def table_cell(value: Any, budget: Budget) -> Any:
    """A path's value as a text cell of cqlsh's table (None stays null)."""
    if value is None or isinstance(value, str):
        return value
    if value is UNDECODABLE_GROUP:
        return UNDECODABLE_CELL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, Decimal):
        return str(value)
    from cqlsh_ext.payload.formats.tree import render

    return render(value, budget=budget)


#: The scalars machine_value returns as they are (their subclasses too).
SCALARS = (str, bool, int, float, Decimal)


def machine_value(value: Any, budget: Budget) -> Any:
    """A path's value for JSON Lines and CSV: scalars as they are, records as JSON-able values."""
    if value is None or isinstance(value, SCALARS):
        return value
    if value is UNDECODABLE_GROUP:
        return dict(UNDECODABLE_VALUE)
    from cqlsh_ext.payload.formats.tree import jsonable

    return jsonable(value, budget)


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
