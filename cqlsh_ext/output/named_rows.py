"""cqlsh's rows, a mapping by column name each (the driver's ordered_dict_factory, which cqlsh's
session uses), read as values in column order; and the shell's row factory, whose rows keep each
value where a statement names a column twice (SELECT a AS x, b AS x: one key for two values)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any


def rows_values(rows: Iterable[Any], names: list[str]) -> Iterable[list[Any]]:
    """Rows as mappings by column name (a driver result's, cqlsh's row factory) as values in
    column order; where a name is said twice, each value its own (RowInOrder)."""
    if len(set(names)) == len(names):
        return ([row[name] for name in names] for row in rows)
    return (list(row.in_order) if isinstance(row, RowInOrder) else [row[name] for name in names]
            for row in rows)


class RowInOrder(OrderedDict[str, Any]):
    """A row of a result that names a column twice (SELECT a AS x, b AS x): cqlsh's row, one value
    a name (the last: what stock cqlsh shows under both), with every value in column order beside
    it (`in_order`)."""

    in_order: tuple[Any, ...]


def shell_row_factory(names: list[str], rows: list[tuple[Any, ...]]) -> list[Any]:
    """The shell's session's row factory: cqlsh's own (the driver's ordered_dict_factory), whose
    rows keep each value in column order when a name is said twice (RowInOrder)."""
    from cassandra.query import ordered_dict_factory

    if len(set(names)) == len(names):
        by_name: list[Any] = ordered_dict_factory(names, rows)
        return by_name
    made = []
    for values in rows:
        row = RowInOrder(zip(names, values, strict=True))
        row.in_order = tuple(values)
        made.append(row)
    return made

