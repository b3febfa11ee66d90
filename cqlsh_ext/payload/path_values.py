"""The values a payload path finds, or an aggregate computes, as each renderer spells them.

Values found by a path are what the decoded record holds (a string, a number, a boolean, a
nested record, null). In cqlsh's table and EXPAND layouts they are text columns: a string as
itself, a number as its digits, a record as the display renders records. For JSON Lines and CSV
they keep their type: numbers stay numbers, records are embedded as JSON, null is null.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from cqlsh_ext.common.jsonenc import float_text
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.paths import UNDECODABLE_GROUP

#: How the group of undecodable values (GROUP BY: payload.paths.UNDECODABLE_GROUP) is spelt: in
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
        from cqlsh_ext.payload.formats.tree import int_text

        return int_text(value)  # past 4,300 digits, hex (but a document's LongInt)
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
