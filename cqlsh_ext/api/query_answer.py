"""A query's answer in a program: its columns, its rows as dicts (a decoded blob as its payload),
its notes, and the same answer as Arrow (the types COPY TO Parquet writes: render.parquet), pandas
or polars. Read once: a second reader gets cqlsh_ext.Error; `to_arrow()` holds the table it made,
so the Arrow forms may be asked for again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import TypedAnswer
    from cqlsh_ext.settings import DisplaySettings

__all__ = ["AnswerField", "QueryAnswer"]

#: The extra that brings what to_arrow(), to_pandas() and to_polars() need.
EXTRA = "api"


@dataclass(frozen=True)
class AnswerField:
    """An answer column: its name, its role (cql, blob, path, aggregate), its type as text (CQL's,
    or what a path's values were), the path it reads (None: a column)."""

    name: str
    role: str
    type: str
    source: str | None = None


def need(module: str) -> Any:
    """An optional module, or Error naming the extra that brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        from cqlsh_ext.common.install import install_hint

        raise Error(f"{module} is not installed: {install_hint(EXTRA)}") from None


class QueryAnswer:
    """See the module doc. Iterating gives one dict a row, answer column name to value: a CQL
    value as the driver gives it, a path's value as parsed (dict, list, text, number), a blob as its
    decoded payload (None when it did not decode: `records(details=True)` adds its label, kind,
    note and stored bytes, as the Parquet file's columns NAME:label, NAME:kind, ...).

    As Arrow it is a stream: `schema` (fixed before the first row is given: the CQL types, and the
    kinds read from the answer's first rows), `to_reader()` (a pyarrow.RecordBatchReader, a batch
    per page), `__arrow_c_stream__` (DuckDB, polars and pyarrow read it so), `to_arrow()` (the
    stream collected, held)."""

    def __init__(self, typed: TypedAnswer, settings: DisplaySettings) -> None:
        self._typed = typed
        self._settings = settings
        self._read_by: str | None = None
        self._table: Any = None
        self._arrow: Any = None
        self.columns: list[AnswerField] = [AnswerField(c.name, c.role, c.type_text, c.source)
                                           for c in typed.columns]

    @property
    def notes(self) -> dict[str, Any]:
        """How the reading went (ReadNotes.to_json): rows read, matched, undecodable values by
        kind, cut values, whether the figures are exact, stopped (interrupted, cancelled, failed),
        values that did not fit their Arrow column (misfits, by column)."""
        notes = self._typed.notes
        return notes.to_json() if notes is not None else {}

    def _take(self, reader: str) -> None:
        if self._read_by is not None:
            raise Error(f"this answer was read already (by {self._read_by}): an answer is read once; "
                        "run the query again, or keep to_arrow()'s table")
        self._read_by = reader

    def _reading(self) -> Any:
        from cqlsh_ext.output.spellings import blob_reading

        return blob_reading(self._settings)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.records()

    def records(self, details: bool = False) -> Iterator[dict[str, Any]]:
        """The rows as dicts (see the class doc); `details`: a blob's label, kind, note, stored
        bytes and confidence too, under the Parquet file's column names."""
        self._take("iteration")
        return self._records(self._reading(), details)

    def _records(self, reading: Any, details: bool) -> Iterator[dict[str, Any]]:
        from cqlsh_ext.payload.columns import BLOB, CONFIDENCE, KIND, LABEL, NOTE, STORED, spelt_values

        typed = self._typed
        columns, places = typed.columns, typed.places
        names: list[str] = []
        for column in columns:
            names.append(column.name)
            if details and column.role == BLOB:
                names += [column.name + suffix for suffix in (LABEL, KIND, NOTE, STORED, CONFIDENCE)]
        try:
            for batch in typed:
                values: list[list[Any]] = []
                for column, chunk, place in zip(columns, batch.columns(len(columns)), places, strict=True):
                    if column.role == BLOB:
                        parts = reading.parts([chunk], place)
                        values += parts if details else parts[:1]
                    else:
                        values.append(spelt_values(column, chunk, reading))
                for row in zip(*values, strict=True):
                    yield dict(zip(names, row, strict=True))
        finally:
            typed.close()

    def close(self) -> None:
        """End the reading early (its notes say how far it got)."""
        self._typed.close()

    # ------------------------------------------------------------ Arrow, pandas, polars

    def _batches(self) -> Any:
        """The answer's Arrow batches (render.arrow_batches), made once."""
        if self._arrow is None:
            need("pyarrow")
            from cqlsh_ext.render.arrow_batches import ArrowBatches

            self._arrow = ArrowBatches(self._typed, self._reading())
        return self._arrow

    @property
    def schema(self) -> Any:
        """The answer's pyarrow.Schema, before any row is given (its first rows may be read ahead
        to fix the kinds read from values: payload.columns)."""
        if self._table is not None:
            return self._table.schema
        return self._batches().schema

    def to_reader(self) -> Any:
        """The answer as a pyarrow.RecordBatchReader: its schema first, then a batch per page as
        the reading gives them (memory holds a page, not the answer)."""
        import pyarrow as pa

        if self._table is not None:
            return self._table.to_reader()
        arrow = self._batches()
        self._take("to_reader()")
        return pa.RecordBatchReader.from_batches(arrow.schema, iter(arrow))

    def to_arrow(self) -> Any:
        """The whole answer as a pyarrow.Table, in the types COPY TO Parquet writes (a blob column
        as NAME, NAME:label, NAME:kind, NAME:note, NAME:stored, NAME:confidence; a path's value
        with NAME:note).
        Ctrl-C ends the reading and keeps the rows read (notes: stopped). Held: asking again
        gives the same table."""
        if self._table is not None:
            return self._table
        import pyarrow as pa

        from cqlsh_ext.common.interrupt import CtrlC

        arrow = self._batches()
        self._take("to_arrow()")
        notes = self._typed.notes
        batches: list[Any] = []
        with CtrlC() as keys:
            try:
                for batch in self._typed:
                    if len(batch):
                        batches.append(arrow.convert(batch))
                    if keys.pressed:
                        break
            finally:
                self._typed.close()
        if notes is not None and keys.pressed:
            notes.interrupted = True
        self._table = pa.Table.from_batches(batches, schema=arrow.schema)
        return self._table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream interface (DuckDB, polars, pyarrow read the answer through it): the
        stream of to_reader(), or the table to_arrow() made."""
        return self.to_reader().__arrow_c_stream__(requested_schema)

    def to_pandas(self) -> Any:
        """The answer as a pandas.DataFrame (through to_arrow())."""
        need("pandas")
        return self.to_arrow().to_pandas()

    def to_polars(self) -> Any:
        """The answer as a polars.DataFrame (through to_arrow(), no copy per value)."""
        polars = need("polars")
        return polars.from_arrow(self.to_arrow())
