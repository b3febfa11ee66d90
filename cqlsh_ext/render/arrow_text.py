"""A typed answer's Arrow batches (render.arrow_batches) as JSON Lines or CSV: the rows the
Parquet file holds, column for column (a blob column's six, a path's value and its `:note`, a CQL
decimal's `:exact`), each value as its Arrow type holds it. COPY (SELECT ...) TO 'f.jsonl' or
'f.csv' WITH SCHEMA (or SAMPLE_ROWS) writes it (docs/export.md, "Types given"): the same types,
nulls and notes as the same statement's Parquet file and the Python API's tables.

Each value is spelt by its column's Arrow type, as the shell's JSON spells values: numbers as
numbers (a decimal digit for digit, a float's shortest text, NaN and the infinities by name),
times ISO 8601 in UTC, bytes 0x-hex, a uuid its text, a JSON-text place its JSON itself, a struct
an object, a map an object of its keys' texts; CSV writes a scalar's text and a struct's or a
list's JSON text.

`TextFile` is the file both this and the untyped export (export.json_csv) write into.
pyarrow is imported when a batch is written, never at import time.
"""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, BinaryIO

from cqlsh_ext.common import jsonenc
from cqlsh_ext.payload.arrow_types import is_json_text
from cqlsh_ext.render.arrow_batches import ArrowBatches
from cqlsh_ext.render.parquet import Summary

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.reading.typed import AnswerBatch, TypedAnswer

#: Spells one value of a column (its Arrow type's spelling).
Spell = Callable[[Any], str]


def spelling(field: Any) -> Spell:
    """The JSON text of a value of a pyarrow.Field, as Table.to_pylist gives it."""
    import pyarrow as pa

    t = pa.types
    arrow = field.type
    if is_json_text(field):
        return lambda value: "null" if value is None else str(value)  # JSON text: itself
    if isinstance(arrow, pa.BaseExtensionType):  # a uuid: its text
        return lambda value: "null" if value is None else jsonenc.string(str(value))
    if t.is_struct(arrow):
        fields = [(arrow.field(i).name, spelling(arrow.field(i))) for i in range(arrow.num_fields)]
        keys = [jsonenc.string(name) for name, _ in fields]

        def struct(value: Any) -> str:
            if value is None:
                return "null"
            return "{" + ", ".join(f"{key}: {spell(value.get(name))}"
                                   for key, (name, spell) in zip(keys, fields, strict=True)) + "}"
        return struct
    if t.is_map(arrow):
        key_of, item_of = _key_text(arrow.key_field), spelling(arrow.item_field)

        def mapping(value: Any) -> str:
            if value is None:
                return "null"
            return "{" + ", ".join(f"{jsonenc.string(key_of(k))}: {item_of(v)}" for k, v in value) + "}"
        return mapping
    if t.is_list(arrow) or t.is_fixed_size_list(arrow) or t.is_large_list(arrow):
        item = spelling(arrow.value_field)
        return lambda value: "null" if value is None else "[" + ", ".join(item(v) for v in value) + "]"
    if t.is_float32(arrow):  # its own shortest text (0.1), not its double's (0.10000000149011612)
        return lambda value: "null" if value is None else jsonenc.float_text(value, single=True)
    return _scalar_json


def _key_text(field: Any) -> Callable[[Any], str]:
    """A map key as an object's key: a string as it is, another value its JSON text."""
    spell = spelling(field)
    return lambda key: key if isinstance(key, str) else spell(key)


def _scalar_json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return jsonenc.float_text(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return jsonenc.string(value)
    return jsonenc.string(_scalar_text(value))


def _scalar_text(value: Any) -> str:
    """A scalar as plain text (CSV's field; JSON's string of a time or bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return jsonenc.blob_text(value)
    if isinstance(value, datetime.datetime):
        return jsonenc.time_text(value, millis=True)
    if isinstance(value, float):
        return jsonenc.float_name(value) or repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "isoformat"):  # a date, a time of day
        return str(value.isoformat())
    return str(value)


def csv_spelling(field: Any) -> Spell:
    """A CSV field of a value of a pyarrow.Field: a scalar's text, a JSON-text place its JSON,
    a struct, list or map its JSON text; null the empty field."""
    import pyarrow as pa

    t = pa.types
    arrow = field.type
    if t.is_struct(arrow) or t.is_map(arrow) or t.is_list(arrow) or t.is_fixed_size_list(arrow) \
            or t.is_large_list(arrow):
        spell = spelling(field)
        return lambda value: "" if value is None else spell(value)
    if t.is_float32(arrow):  # as spelling()'s
        return lambda value: "" if value is None else jsonenc.float_name(value) or jsonenc.float32_text(value)
    return lambda value: "" if value is None else _scalar_text(value)


class TextFile:
    """A JSON Lines (`fmt` "json": bytes to `out`) or CSV file, a batch at a time (ParquetSink's
    interface: write, finish, abort). CSV's text is utf-8 whatever the locale says, a lone surrogate
    (which UTF-8 cannot write) its escape, as the shell prints it (cli._main)."""

    def __init__(self, fmt: str, out: BinaryIO) -> None:
        self.fmt = fmt
        self.rows = 0
        # (newline="": the CSV writer ends lines itself)
        self.out: Any = out if fmt == "json" else io.TextIOWrapper(out, encoding="utf-8", newline="",
                                                                   errors="backslashreplace")

    def finish(self) -> Summary | None:
        """Write what is held and close the file."""
        self.out.flush()
        self.out.close()
        return None

    def abort(self) -> None:
        try:
            self.out.close()
        except Exception:  # the file is discarded anyway (a full disk fails the last flush too)
            pass


class ArrowTextSink(TextFile):
    """A typed answer written as JSON Lines or CSV into `out` (the file's bytes): the Parquet
    file's columns and values. The values that did not fit their column's type are counted for
    the closing line."""

    def __init__(self, fmt: str, out: BinaryIO, answer: TypedAnswer, reading: BlobReading) -> None:
        super().__init__(fmt, out)
        self.arrow = ArrowBatches(answer, reading)
        self.summary = Summary()
        self.names = list(self.arrow.schema.names)
        if fmt == "json":
            self.keys = [jsonenc.string(name) + ": " for name in self.names]
            self.spell = [spelling(field) for field in self.arrow.schema]
        else:
            self.writer = csv.writer(self.out, lineterminator="\n")
            self.spell = [csv_spelling(field) for field in self.arrow.schema]
            self.writer.writerow(self.names)

    @property
    def schema(self) -> Any:
        return self.arrow.schema

    def write(self, batch: AnswerBatch) -> None:
        if not len(batch):
            return
        converted = self.arrow.convert(batch)
        columns = [column.to_pylist() for column in converted.columns]
        rows = list(zip(*columns, strict=True))
        if self.fmt == "json":
            keyed = list(zip(self.keys, self.spell, strict=True))
            lines = ["{" + ", ".join(key + spell(v) for (key, spell), v in zip(keyed, row, strict=True))
                     + "}\n" for row in rows]
            self.out.write("".join(lines).encode())
        else:
            self.writer.writerows([spell(value) for spell, value in zip(self.spell, row, strict=True)]
                                  for row in rows)
        self.rows += len(rows)

    def finish(self) -> Summary:
        super().finish()
        self.summary.rows = self.rows
        notes = self.arrow.answer.notes
        if notes is not None:
            self.summary.misfits = dict(notes.misfits)
        return self.summary
