"""The Parquet renderer: a typed answer's batches to a Parquet file, one row group at a time, from
the answer's columns.

A batch's columns (reading.typed.AnswerBatch: the path values as the reading gave them, the CQL
values, the blobs' stored bytes) are held until a row group is full (ROW_GROUP_SIZE rows, 65,536 by
default, or ROW_GROUP_BYTES of stored blobs), then split into the export's columns
(cqlsh_ext.render.parquet_columns: a blob column's values decoded a page at a time into payload,
label, kind, note and stored bytes), converted to their kinds (cqlsh_ext.render.arrow_types: a
column whose values are already what its kind takes goes to pyarrow as it is) and written: memory
holds one row group, whatever the table's size.

The kinds of inferred columns (paths, payloads, aggregates, CQL decimals) are settled from the first
row group (read from its first SETTLE_SAMPLE rows, widened by the rest of it). A later value that
does not fit its column's kind is never changed or dropped: the column's kind is merged with the
value's (an int64 column meeting 10**20 becomes decimal128(38, 0), a string column meeting 7
becomes JSON text, a struct meeting a new key gains a field), and the closing line counts those
values. When what was written no longer reads as the new kind (another Arrow type, strings that
are now JSON text), writing goes on in a new temporary file ("era"), and at the end every era's
row groups are converted to the final schema, one row group at a time, into the file that takes
the final name. A file whose types never changed is written once.

The final kinds are the lattice's join over every value (a value that fits changes nothing), so
Spark mode, which merges the kinds of all partitions first (cqlsh_ext.spark.export_job), writes
the same schema.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, Protocol

from cqlsh_ext.render.arrow_types import (
    Json,
    Kind,
    Misfit,
    arrow_type,
    as_they_are,
    compile_kind,
    kind_spec,
    merge,
    rewritten,
    settled,
    type_text,
    value_kind,
)
from cqlsh_ext.render.parquet_columns import (
    BLOB,
    HeldOutput,
    ParquetColumn,
    Splitter,
    columns,
    roles,
    stored_sizes,
)

#: Rows per row group (WITH ROW_GROUP_SIZE = n): what memory holds at once.
ROW_GROUP_SIZE = 65_536
#: A row group is also written once the stored bytes of the blobs it holds reach this: rows of
#: large blobs (each decoded up to the output cap) do not make a row group of gigabytes.
ROW_GROUP_BYTES = 32 << 20
#: The kinds are first read from this many rows; the rest of the first row group widens them
#: where it must (not counted: the schema is the first row group's), as later ones do (counted).
SETTLE_SAMPLE = 2_000
CODECS = ("zstd", "snappy", "gzip", "lz4", "brotli", "none")
DEFAULT_CODEC = "zstd"


class FileParts(Protocol):
    """Where the file is written (export.target.ExportFile): the temporary file that takes the final
    name, and more scratch files beside it (earlier eras)."""

    temp: Path

    def scratch(self) -> Path: ...


@dataclass
class Era:
    """Row groups written with one schema, in one temporary file."""

    path: Path
    kinds: list[Any]
    schema: Any


@dataclass
class Widened:
    """A column whose kind changed after the first row group: from what, to what, how many values
    did not fit the kinds it had."""

    first: str
    last: str
    values: int = 0


@dataclass
class Summary:
    rows: int = 0
    row_groups: int = 0
    widened: dict[str, Widened] = field(default_factory=dict)


class ParquetSink:
    def __init__(self, target: FileParts, names: Sequence[str], types: Sequence[Any], settings: Any,
                 places: Sequence[Any], codec: str = DEFAULT_CODEC, row_group_size: int = ROW_GROUP_SIZE,
                 metadata: dict[str, str] | None = None) -> None:
        self.target = target
        self.columns: list[ParquetColumn] = columns(names, types)
        self.splitter = Splitter(roles(types), settings, places, settings.cap)
        #: The columns holding stored blobs (what ROW_GROUP_BYTES counts).
        self.blob_columns = [i for i, role in enumerate(self.splitter.roles) if role == BLOB]
        self.codec = codec
        self.row_group_size = row_group_size
        self.metadata = metadata or {}
        self.kinds: list[Any] = [c.seed for c in self.columns]
        self.converters: list[Any] = []
        self.settled = False
        #: Writing the first row group: values that widen a kind are not counted.
        self.first_group = True
        #: The answer's columns held for the next row group, in chunks (lists, or columns the
        #: native core holds: a page's kept rows each), and how many rows they hold.
        self.held: list[list[Any]] = [[] for _ in names]
        self.held_rows = 0
        self.held_bytes = 0
        self.eras: list[Era] = []
        self.writer: Any = None
        self.summary = Summary()

    # ------------------------------------------------------------ rows in

    def write(self, batch: Any) -> None:
        """A batch of the answer (reading.typed.AnswerBatch, or a list of rows): its columns held,
        a row group written each time one is full (ROW_GROUP_SIZE rows, or ROW_GROUP_BYTES of
        stored blobs: the row group ends with the row that reaches it)."""
        columns = batch.columns() if hasattr(batch, "columns") else \
            [list(column) for column in zip(*batch, strict=True)]
        size = len(columns[0]) if columns else 0
        start = 0
        while start < size:
            end = min(size, start + self.row_group_size - self.held_rows)
            if self.blob_columns:
                # A blob the query decoded already comes as its view: its stored size counts.
                each = [stored_sizes(columns[i][start:end] if start or end < size else columns[i])
                        for i in self.blob_columns]
                total = sum(map(sum, each))
                if self.held_bytes + total < ROW_GROUP_BYTES:  # most chunks: no walk row by row
                    self.held_bytes += total
                else:
                    sizes = each[0] if len(each) == 1 else [sum(row) for row in zip(*each, strict=True)]
                    reached = next(k for k, held in enumerate(accumulate(sizes), start)
                                   if self.held_bytes + held >= ROW_GROUP_BYTES)
                    end = reached + 1
                    self.held_bytes += sum(sizes[:end - start])
            for held, column in zip(self.held, columns, strict=True):
                held.append(column[start:end] if start or end < size else column)
            self.held_rows += end - start
            start = end
            if self.held_rows >= self.row_group_size or self.held_bytes >= ROW_GROUP_BYTES:
                self._flush()

    def _flush(self) -> None:
        group, rows = self.held, self.held_rows
        self.held, self.held_rows, self.held_bytes = [[] for _ in group], 0, 0
        self._write_group(group, rows)

    def finish(self) -> Summary:
        """Write what is held, close the file (converting earlier eras when the schema changed)."""
        if self.held_rows:
            self._flush()
        if not self.settled:  # no rows: the file still has every column, inferred ones as text
            self._settle([[] for _ in self.columns])
            self._open_era()
        self.writer.close()
        self.writer = None
        if len(self.eras) > 1:
            self._convert_eras()
        return self.summary

    def abort(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # the file is discarded anyway (a full disk fails here too)
                pass
            self.writer = None

    # ------------------------------------------------------------ kinds

    def _settle(self, values: list[list[Any]]) -> None:
        for i, column in enumerate(self.columns):
            if column.inferred:
                kind = column.seed
                for value in values[i]:
                    kind = merge(kind, value_kind(value, column.seed))
                self.kinds[i] = settled(kind)
        self.converters = [self._converter(kind) for kind in self.kinds]
        self.settled = True

    def _converter(self, kind: Kind) -> Any:
        return compile_kind(kind, self.splitter.cql_json)

    def _widen(self, i: int, values: list[Any]) -> list[Any]:
        """ParquetColumn i met values its kind does not hold: merge their kinds in, count them."""
        column, old = self.columns[i], self.kinds[i]
        convert = self.converters[i]
        kind, misfits = old, 0
        for value in values:
            try:
                convert(value)
            except Misfit:
                misfits += 1
                kind = merge(kind, value_kind(value, column.seed))
        kind = settled(kind)
        try:
            out = [self._converter(kind)(v) for v in values]
        except Misfit:  # cannot happen by the lattice; should it, JSON text holds anything
            kind = Json()
            out = [self._converter(kind)(v) for v in values]
        self._widened(i, old, kind, misfits)
        return out

    def _widened(self, i: int, old: Kind, kind: Kind, misfits: int) -> None:
        """ParquetColumn i's kind is now `kind` (it was `old`): `misfits` values did not fit."""
        column = self.columns[i]
        if not self.first_group:
            widened = self.summary.widened.setdefault(column.name, Widened(type_text(old), type_text(kind)))
            widened.last = type_text(kind)
            widened.values += misfits
        self.kinds[i] = kind
        self.converters[i] = self._converter(kind)

    def _held_array(self, i: int, output: HeldOutput) -> Any:
        """ParquetColumn i's Arrow array laid out by the native core from the values it holds
        (each value's kind merged in where it does not fit the column's, as _widen does), or
        None where the core does not lay it out (the column is then written from Python values)."""
        source = output.source
        if output.part:  # a blob's label, kind, note or stored bytes: made with its payload
            return None if source.laid is None else source.laid[output.part]
        for _attempt in range(8):
            old = self.kinds[i]
            try:
                arrays, misfits = source.arrays(kind_spec(old), self.columns[i].name)
            except ValueError:  # a kind or a value the core does not lay out
                return None
            if arrays is not None:
                source.laid = arrays
                return arrays[0]
            kind = old
            for value in misfits:
                kind = merge(kind, value_kind(value, self.columns[i].seed))
            self._widened(i, old, settled(kind), len(misfits))
        return None

    # ------------------------------------------------------------ writing

    def _schema(self) -> Any:
        import pyarrow as pa

        metadata = {k.encode(): v.encode() for k, v in self.metadata.items()}
        fields = [pa.field(c.name, arrow_type(k)) for c, k in zip(self.columns, self.kinds, strict=True)]
        return pa.schema(fields, metadata=metadata or None)

    def _compression(self) -> str | None:
        return None if self.codec == "none" else self.codec

    def _open_era(self) -> None:
        import pyarrow.parquet as pq

        if self.writer is not None:
            self.writer.close()
        path = self.target.temp if not self.eras else self.target.scratch()
        schema = self._schema()
        self.eras.append(Era(path, list(self.kinds), schema))
        self.writer = pq.ParquetWriter(str(path), schema, compression=self._compression())

    def _write_group(self, group: list[list[Any]], rows: int) -> None:
        import pyarrow as pa

        values = self.splitter.split_chunks(group)
        if not self.settled:
            self._settle([[] if not self.columns[i].inferred
                          else column.source.sample(column.part, SETTLE_SAMPLE)
                          if isinstance(column, HeldOutput) else column[:SETTLE_SAMPLE]
                          for i, column in enumerate(values)])
        converted: list[Any] = []
        for i, column_values in enumerate(values):
            if isinstance(column_values, HeldOutput):
                laid = self._held_array(i, column_values)
                if laid is not None:
                    converted.append(laid)
                    continue
                column_values = column_values.source.values(column_values.part)
            if as_they_are(self.kinds[i], column_values):
                converted.append(column_values)
                continue
            convert = self.converters[i]
            try:
                converted.append([convert(v) for v in column_values])
            except Misfit:
                converted.append(self._widen(i, column_values))
        if self.writer is None or any(rewritten(old, new) for old, new in zip(self.eras[-1].kinds, self.kinds,
                                                                             strict=True)):
            self._open_era()
        else:
            self.eras[-1].kinds = list(self.kinds)  # what is written reads the same: the era goes on
        schema = self.eras[-1].schema
        arrays = [_array(pa, column, schema.field(i).type) for i, column in enumerate(converted)]
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=rows)
        self.summary.rows += rows
        self.summary.row_groups += 1
        self.first_group = False

    def _convert_eras(self) -> None:
        """Every era's row groups in the final schema, into a new file that replaces the first."""
        import pyarrow.parquet as pq

        final = self.target.scratch()
        schema = self._schema()
        converters = [self._converter(kind) for kind in self.kinds]
        with pq.ParquetWriter(str(final), schema, compression=self._compression()) as writer:
            for era in self.eras:
                source = pq.ParquetFile(str(era.path))
                for group in range(source.num_row_groups):
                    table = source.read_row_group(group)
                    converted = self._in_final_schema(table, era, schema, converters)
                    writer.write_table(converted, row_group_size=table.num_rows)
                source.close()
                if era.path != self.target.temp:
                    os.unlink(era.path)
        os.replace(final, self.target.temp)

    def _in_final_schema(self, table: Any, era: Era, schema: Any, converters: list[Any]) -> Any:
        """A row group written in `era`'s kinds, in the final kinds' schema."""
        import pyarrow as pa

        arrays = []
        for i, column in enumerate(table.columns):
            if rewritten(era.kinds[i], self.kinds[i]):
                values = [converters[i](v) for v in column.to_pylist()]
                column = pa.array(values, type=schema.field(i).type)
            elif column.type != schema.field(i).type:  # only nulls: an Arrow cast
                column = column.cast(schema.field(i).type)
            arrays.append(column)
        return pa.Table.from_arrays(arrays, schema=schema)


class _Tables:
    """An era's row groups held in memory (ArrowTableSink): the Parquet writer's two calls."""

    def __init__(self) -> None:
        self.tables: list[Any] = []

    def write_table(self, table: Any, row_group_size: int | None = None) -> None:
        self.tables.append(table)

    def close(self) -> None:
        pass


class ArrowTableSink(ParquetSink):
    """The same columns, kinds and widening as the Parquet file's, held as one pyarrow.Table in
    memory instead of written (the Python API's `Answer.to_arrow()`): `finish()`, then `table`."""

    def __init__(self, names: Sequence[str], types: Sequence[Any], settings: Any, places: Sequence[Any],
                 row_group_size: int = ROW_GROUP_SIZE) -> None:
        super().__init__(None, names, types, settings, places,  # type: ignore[arg-type]
                         "none", row_group_size)
        self._held_eras: list[_Tables] = []
        self.table: Any = None

    def _open_era(self) -> None:
        schema = self._schema()
        self.eras.append(Era(Path(), list(self.kinds), schema))
        self.writer = _Tables()
        self._held_eras.append(self.writer)

    def finish(self) -> Summary:
        import pyarrow as pa

        if self.held_rows:
            self._flush()
        if not self.settled:
            self._settle([[] for _ in self.columns])
            self._open_era()
        self.writer = None
        schema = self._schema()
        converters = [self._converter(kind) for kind in self.kinds]
        tables = [table if table.schema == schema else self._in_final_schema(table, era, schema, converters)
                  for era, held in zip(self.eras, self._held_eras, strict=True) for table in held.tables]
        self.table = pa.concat_tables(tables) if tables else schema.empty_table()
        return self.summary

    def abort(self) -> None:
        self.writer = None
        self._held_eras.clear()


def _array(pa: Any, column: Any, arrow: Any) -> Any:
    """A column of converted values, or an array the native core laid out, as an Arrow array of
    the column's type."""
    if isinstance(column, list):
        # An int, bigint, double, boolean or text column (the keys most often) is laid out by the
        # native core where it runs: pyarrow.array(list) would walk it slower and first ask
        # whether the list is a pandas object, which imports pandas (below). Else pyarrow's.
        from cqlsh_ext.payload.native import cql_array

        laid = cql_array(column, str(arrow))
        if laid is None:
            return pa.array(column, type=arrow)
        column = laid
    # Through the C data interface, no copy. (pyarrow.array(column) would take it too, but first
    # asks whether it is a pandas object, which imports pandas: a third of a second of CPU.)
    array = pa.Array._import_from_c_capsule(*column.__arrow_c_array__())
    if array.type != arrow:  # (the core lays out the kind's own type: should not happen)
        raise TypeError(f"the core laid out {array.type} for a column of {arrow}")
    return array
