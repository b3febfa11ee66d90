"""A query's answer in a program: its columns, its rows as dicts (a decoded blob as its payload),
its notes, and the same answer as Arrow (the types COPY TO Parquet writes: render.parquet), pandas
or polars. Read once: a second reader gets cqlsh_ext.Error; `to_arrow()` holds the table it made,
so the Arrow forms may be asked for again."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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
    note and stored bytes, as the Parquet file's columns NAME:label, NAME:kind, ...)."""

    def __init__(self, typed: TypedAnswer, places: Sequence[Any], settings: DisplaySettings) -> None:
        self._typed = typed
        self._places = list(places)
        self._settings = settings
        self._read_by: str | None = None
        self._table: Any = None
        self.columns: list[AnswerField] = [AnswerField(c.name, c.role, c.type_text, c.source)
                                           for c in typed.columns]

    @property
    def notes(self) -> dict[str, Any]:
        """How the reading went (ReadNotes.to_json): rows read, matched, undecodable values by
        kind, cut values, whether the figures are exact, stopped (interrupted, cancelled, failed)."""
        notes = self._typed.notes
        return notes.to_json() if notes is not None else {}

    def _take(self, reader: str) -> None:
        if self._read_by is not None:
            raise Error(f"this answer was read already (by {self._read_by}): an answer is read once; "
                        "run the query again, or keep to_arrow()'s table")
        self._read_by = reader

    def _splitter(self) -> Any:
        from cqlsh_ext.render.parquet_columns import Splitter, roles

        return Splitter(roles(self._typed.types), self._settings, self._places, self._settings.cap)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.records()

    def records(self, details: bool = False) -> Iterator[dict[str, Any]]:
        """The rows as dicts (see the class doc); `details`: a blob's label, kind, note and stored
        bytes too, under the Parquet file's column names."""
        from cqlsh_ext.render.parquet_columns import BLOB, HeldOutput, columns

        self._take("iteration")
        splitter = self._splitter()
        names = [c.name for c in columns(self._typed.names, self._typed.types)]
        keep = list(range(len(names)))
        if not details:
            keep, i = [], 0
            for role in splitter.roles:
                keep.append(i)
                i += 5 if role == BLOB else 1
        return self._records(splitter, [names[i] for i in keep], keep, HeldOutput)

    def _records(self, splitter: Any, names: list[str], keep: list[int],
                 held: type) -> Iterator[dict[str, Any]]:
        try:
            for batch in self._typed:
                parts = splitter.split_chunks([[column] for column in batch.columns()])
                values = [parts[i].source.values(parts[i].part) if isinstance(parts[i], held) else parts[i]
                          for i in keep]
                for row in zip(*values, strict=True):
                    yield dict(zip(names, row, strict=True))
        finally:
            self._typed.close()

    def close(self) -> None:
        """End the reading early (its notes say how far it got)."""
        self._typed.close()

    # ------------------------------------------------------------ Arrow, pandas, polars

    def to_arrow(self) -> Any:
        """The whole answer as a pyarrow.Table, in the types COPY TO Parquet writes (a blob column
        as NAME, NAME:label, NAME:kind, NAME:note, NAME:stored). Ctrl-C ends the reading and keeps
        the rows read (notes: stopped). Held: asking again gives the same table."""
        if self._table is not None:
            return self._table
        need("pyarrow")
        from cqlsh_ext.common.interrupt import CtrlC
        from cqlsh_ext.render.parquet import ArrowTableSink

        self._take("to_arrow()")
        sink = ArrowTableSink(self._typed.names, self._typed.types, self._settings, self._places)
        notes = self._typed.notes
        try:
            with CtrlC() as keys:
                try:
                    for batch in self._typed:
                        sink.write(batch)
                        if keys.pressed:
                            break
                finally:
                    self._typed.close()
            if notes is not None and keys.pressed:
                notes.interrupted = True
            sink.finish()
        except BaseException:
            sink.abort()
            raise
        self._table = sink.table
        return self._table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream interface (DuckDB, polars, pyarrow read the answer through it)."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def to_pandas(self) -> Any:
        """The answer as a pandas.DataFrame (through to_arrow())."""
        need("pandas")
        return self.to_arrow().to_pandas()

    def to_polars(self) -> Any:
        """The answer as a polars.DataFrame (through to_arrow(), no copy per value)."""
        polars = need("polars")
        return polars.from_arrow(self.to_arrow())
