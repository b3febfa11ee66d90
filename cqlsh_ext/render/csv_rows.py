"""A typed answer's rows as CSV, exactly as `--output-format csv` prints the same SELECT (output.writers'
CsvWriter, output.spellings' CsvSpelling: a header row, then each value's field; a path's or an
aggregate's value as render.path_values.machine_value spells it). COPY (SELECT ...) TO 'f.csv'
writes it."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from cqlsh_ext.output.writers import CsvWriter

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import AnswerColumn, ColumnValues
    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.settings import DisplaySettings
    from cqlsh_ext.upstream.protocol import Out


class CsvRows(CsvWriter):
    """One answer's rows as CSV on `out`, as the shell prints them (output.writers.CsvWriter: its
    header when made, '\\n' line ends), then `write_columns(columns)` of each batch."""

    def __init__(self, out: Out, columns: Sequence[AnswerColumn], settings: DisplaySettings,
                 places: Sequence[ValuePlace | None], delimiter: str = ",") -> None:
        from cqlsh_ext.payload.budget import Budget

        super().__init__(out, [c.name for c in columns], [c.cql_type for c in columns], settings,
                         list(places), delimiter)
        self.found = [c.cql_type is None for c in columns]
        self.budget = Budget.for_cap(settings.cap)

    def write_columns(self, columns: Sequence[ColumnValues]) -> int:
        """write() of a batch's columns (payload.columns.ColumnValues): each column spelt at once (a
        blob column the native core read, from its reading: payload.columns.csv_fields)."""
        from cassandra import cqltypes

        from cqlsh_ext.common.jsonenc import blob_text
        from cqlsh_ext.payload.columns import csv_fields
        from cqlsh_ext.payload.path_values import machine_value
        from cqlsh_ext.render.json_lines import is_blob_type

        encode, budget, raw = self.spelling.value, self.budget, bool(self.spelling.raw)
        spelt: list[list[str]] = []
        for column, cqltype, place, found in zip(columns, self.types, self.places, self.found, strict=True):
            if found:
                spelt.append([encode(machine_value(value, budget), cqltype, place)
                              for value in column.values()])
            elif cqltype is not None and is_blob_type(cqltype):
                spelt.append(csv_fields(column, partial(encode, cqltype=cqltypes.BytesType, place=place),
                                        blob_text, raw))
            else:
                spelt.append(csv_fields(column, partial(encode, cqltype=cqltype, place=place)))
        rows = list(zip(*spelt, strict=True))
        self.writer.writerows(rows)
        return len(rows)

