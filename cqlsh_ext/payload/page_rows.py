"""A page's rows as a sequence, made as they are asked for: the one Sequence protocol that the
server's page (payload.server_rows.ServerRows) and an Arrow batch (payload.arrow_rows.ArrowRows)
share over their own `row(i)` (one row made alone, then kept in `_made`) and `rows()` (every row,
made once)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, overload

__all__ = ["PageRows"]


class PageRows(Sequence[tuple[Any, ...]]):
    """The sequence of a page's rows; a subclass makes them (`row`, `rows`) and keeps the count
    (`row_count`) and the rows made one by one (`_made`)."""

    __slots__ = ()
    row_count: int
    _made: dict[int, tuple[Any, ...]]
    #: The page as the server sent it (a ServerRows: a payload.measures.RowsSection), not an Arrow
    #: batch: told by a class's attribute, not by isinstance of the protocol (a few microseconds
    #: a page, hundreds for the protocol's check on Python 3.11).
    as_sent: ClassVar[bool] = False

    def row(self, index: int) -> tuple[Any, ...]:
        raise NotImplementedError

    def _in_range(self, index: int) -> int:
        """A row's index as `row` takes it (negative: from the end), within the page's rows, else
        IndexError (what every subclass's `row` says)."""
        if index < 0:
            index += self.row_count
        if not 0 <= index < self.row_count:
            raise IndexError("a page's row out of range")
        return index

    def column(self, i: int, rows: Sequence[int] | None = None) -> list[Any]:
        """Column i's values as the driver gives them: of every row, or of `rows` only (in its order)."""
        raise NotImplementedError

    def rows(self) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.row_count

    def __bool__(self) -> bool:
        return self.row_count > 0

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | Sequence[tuple[Any, ...]]:
        if type(index) is int:
            made = self._made.get(index)  # a kept row, made already (the readers' usual ask)
            return made if made is not None else self.row(index)
        if isinstance(index, int):
            return self.row(index)
        return self.rows()[index]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        # A generator: iter() alone makes nothing (the driver's ResultSet calls it on every page
        # to learn that the page is iterable).
        yield from self.rows()
