"""An Arrow record batch's rows (a Spark task's, as the Cassandra connector hands them), read as the
readers read the server's page (payload.server_rows.ServerRows): a blob column's cells are read
whole by the native core from the batch's buffers (payload.native hands it the column's array,
`binary(i)`), and only the columns a reader asks for are made Python values.

    page = ArrowRows(batch, converters)  # converters[i]: None, or a value's driver form
    page.binary(2)     # column 2's pyarrow array when it is binary (what the core reads whole)
    page.column(2)     # column 2's values as the driver gives them (Arrow's to_pylist, converted)
    page.column(2, [3, 9])  # ... of rows 3 and 9 alone
    len(page), page[5] # a sequence of rows too: page[5] makes row 5 alone

A page is at most a batch: `ArrowRows.pages(batch, converters, size)` slices a batch (Arrow's
slices share the buffers: the core reads a slice at its offset).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cqlsh_ext.payload.page_rows import PageRows

__all__ = ["ArrowRows"]

#: A column's conversion of Arrow's Python value to the driver's (None: the same value).
Converter = Callable[[Any], Any] | None


class ArrowRows(PageRows):
    """One Arrow record batch's rows, its columns' converters to the driver's values."""

    __slots__ = ("batch", "converters", "row_count", "_arrays", "_binary", "_columns", "_made", "_rows")

    def __init__(self, batch: Any, converters: Sequence[Converter]) -> None:
        import pyarrow

        self.batch = batch
        self.converters = list(converters)
        self.row_count: int = batch.num_rows
        self._arrays = batch.columns
        #: Whether each column is binary (a blob column the core reads whole).
        self._binary = [pyarrow.types.is_binary(f.type) or pyarrow.types.is_large_binary(f.type)
                        for f in batch.schema]
        #: Each column's values, made once when a reader first asks; the rows made one by one.
        self._columns: dict[int, list[Any]] = {}
        self._made: dict[int, tuple[Any, ...]] = {}
        self._rows: list[tuple[Any, ...]] | None = None

    @classmethod
    def pages(cls, batch: Any, converters: Sequence[Converter], size: int) -> Iterator[ArrowRows]:
        """The batch `size` rows at a time (slices: no buffer copied)."""
        for start in range(0, batch.num_rows, size):
            yield cls(batch.slice(start, size) if start or size < batch.num_rows else batch, converters)

    @property
    def columns(self) -> int:
        return int(self.batch.num_columns)

    def binary(self, i: int) -> Any | None:
        """Column i's pyarrow array when it is binary or large_binary (a blob column, its cells
        read whole by the core), else None."""
        return self._arrays[i] if self._binary[i] else None

    def column(self, i: int, rows: Sequence[int] | None = None) -> list[Any]:
        """Column i's values as the driver gives them: of every row, or of `rows` only (in its
        order)."""
        values = self._columns.get(i)
        if values is None:
            if rows is not None and self._binary[i]:  # the kept rows' blobs alone (as dear a value)
                return [self._value(i, row) for row in rows]
            values = self._columns[i] = self._converted(self._arrays[i].to_pylist(), i)
        return values if rows is None else [values[row] for row in rows]

    def _converted(self, values: list[Any], i: int) -> list[Any]:
        convert = self.converters[i]
        return values if convert is None else [convert(v) for v in values]

    def _value(self, i: int, row: int) -> Any:
        value = self._arrays[i][row].as_py()
        convert = self.converters[i]
        return value if convert is None else convert(value)

    def rows(self) -> list[tuple[Any, ...]]:
        """Every row, as tuples of the driver's values (made once, then kept)."""
        if self._rows is None:
            columns = [self.column(i) for i in range(self.columns)]
            self._rows = list(zip(*columns, strict=True)) if columns else [() for _ in range(self.row_count)]
        return self._rows

    def row(self, index: int) -> tuple[Any, ...]:
        """Row `index` alone (made once): the other columns made whole, a blob column's cell
        alone (a reader that keeps a few rows: the page's other blobs are never made)."""
        if self._rows is not None:
            return self._rows[index]
        index = self._in_range(index)
        row = self._made.get(index)
        if row is None:
            made = self._columns
            row = self._made[index] = tuple(made[i][index] if i in made else self._value(i, index)
                                            if self._binary[i] else self.column(i)[index]
                                            for i in range(len(self._arrays)))
        return row
