"""A typed answer's rows as JSON objects, one a line, exactly as `--output-format json` prints the
same SELECT (output.writers' JsonLinesWriter, output.spellings' JsonSpelling: a blob as its label,
kind and payload; a path's or an aggregate's value as render.path_values.machine_value spells it).
`cqlsh-ext mcp` answers its rows with it; COPY (SELECT ...) TO 'f.jsonl' writes it.

A row is spelt from its columns: the keys once per answer, each value by its column's spelling.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import partial
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.reading.typed import AnswerColumn
    from cqlsh_ext.settings import DisplaySettings

Row = Sequence[Any]


class JsonRows:
    """The spelling of one answer's rows (`columns`: its AnswerColumns; `places`: where each
    column's values sit, for the column settings)."""

    def __init__(self, columns: Sequence[AnswerColumn], settings: DisplaySettings,
                 places: Sequence[ValuePlace | None]) -> None:
        from cqlsh_ext.output.spellings import JsonSpelling
        from cqlsh_ext.payload.budget import Budget

        self.names = [c.name for c in columns]
        self.keys = [json.dumps(name, ensure_ascii=False) for name in self.names]
        self.types = [c.cql_type for c in columns]
        self.places = list(places)
        self.spelling = JsonSpelling(settings)
        #: Columns whose values a path found or an aggregate computed (no CQL type).
        self.found = [c.cql_type is None for c in columns]
        self.budget = Budget.for_cap(settings.cap)

    def line(self, row: Row) -> str:
        """One row's JSON object, as one line's text (no newline)."""
        from cqlsh_ext.render.path_values import machine_value

        encode, budget = self.spelling.value, self.budget
        fields = []
        for key, value, cqltype, place, found in zip(self.keys, row, self.types, self.places, self.found,
                                                     strict=True):
            if found:
                value = machine_value(value, budget)
            fields.append(f"{key}: {encode(value, cqltype, place)}")
        return "{" + ", ".join(fields) + "}"

    def values(self, row: Row) -> dict[str, Any]:
        """One row's JSON object as JSON values, what json.loads of line() gives, made from the
        values themselves (no text spelt and read back: JsonSpelling.tree)."""
        from cqlsh_ext.render.path_values import machine_value

        tree, budget = self.spelling.tree, self.budget
        out: dict[str, Any] = {}
        for name, value, cqltype, place, found in zip(self.names, row, self.types, self.places, self.found,
                                                      strict=True):
            if found:
                value = machine_value(value, budget)
            out[name] = tree(value, cqltype, place)
        return out

    def lines(self, rows: Iterable[Row]) -> list[str]:
        return [self.line(row) for row in rows]

    def _found(self, place: ValuePlace | None, value: Any) -> str:
        """A found value that is no scalar (a record's part, an undecodable group) as line() spells it."""
        from cqlsh_ext.render.path_values import machine_value

        return self.spelling.value(machine_value(value, self.budget), None, place)

    def column_bytes(self, columns: Sequence[Sequence[Any]]) -> bytes:
        """lines() of rows given as columns, as one UTF-8 buffer, each line ended by a newline (a
        file's batch): each column spelt at once (a blob column the native core read, HeldContents,
        from its reading: JsonSpelling.held_json; a path's column the core holds, HeldColumn, its
        scalars spelt there: JsonSpelling.held_found), the rows' pieces then laid side by side by
        the core (payload/native.py's json_lines: the payloads' texts written there, no str a row)."""
        from cqlsh_ext.payload.native import is_held_column, json_lines

        spelling = self.spelling
        # The batch's pieces in a row's order: a text every row has (a key) or a column's texts.
        layout: list[Any] = []
        for at, (column, key, cqltype, place, found) in enumerate(
                zip(columns, self.keys, self.types, self.places, self.found, strict=True)):
            layout.append(("{" if at == 0 else ", ") + key + ": ")
            if hasattr(column, "texts"):
                layout.append(spelling.held_json(column, place))
            elif found and is_held_column(column):
                # a path's values the core holds: its scalars spelt there (HeldFound)
                layout.append(spelling.held_found(column, partial(self._found, place)))
            elif found:
                layout.append(spelling.found_column(column, partial(self._found, place)))
            else:
                layout.append(spelling.column(column, cqltype, place))
        layout.append("}\n")
        rows = len(columns[0]) if columns else 0
        if rows == 0:
            return b""
        return json_lines(layout, rows)


def write_json_lines(out: IO[str], rows: JsonRows, batches: Iterable[Sequence[Row]]) -> int:
    """Every row of `batches` on `out`, one JSON object a line: how many."""
    written = 0
    for batch in batches:
        text = rows.lines(batch)
        if text:
            out.write("\n".join(text) + "\n")
        written += len(text)
    return written
