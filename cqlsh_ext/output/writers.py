"""Result sets as JSON Lines (one object per row) or CSV (a header row per result set).

Each machine format declared in cqlsh_ext.settings.output_formats has one writer class here,
registered under the format's name with `@row_writer(name)`; `make_writer` finds it by that name.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from cqlsh_ext.common import jsonenc
from cqlsh_ext.output.named_rows import rows_values
from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling
from cqlsh_ext.payload.places import ValuePlace
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.settings.output_formats import OutputFormat

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Out


class RowWriter(Protocol):
    """Writes the rows of one result set, page by page, then `finish()`: `write_values` takes rows
    as values in column order, `write_rows` mappings by column name (rows_values)."""

    def __init__(self, out: Out, names: list[str], types: list[Any], settings: DisplaySettings,
                 places: list[ValuePlace | None]) -> None: ...

    def write_values(self, rows: Iterable[Sequence[Any]]) -> None: ...

    def write_rows(self, rows: Iterable[Any]) -> None: ...

    def finish(self) -> None: ...


W = TypeVar("W", bound=RowWriter)

#: {output format name: its writer class}, filled by @row_writer.
WRITERS: dict[str, type[RowWriter]] = {}


def row_writer(name: str) -> Callable[[type[W]], type[W]]:
    """Register the decorated class as the writer of machine output format `name`."""

    def register(cls: type[W]) -> type[W]:
        WRITERS[name] = cls
        return cls

    return register


@row_writer("json")
class JsonLinesWriter:
    def __init__(self, out: Out, names: list[str], types: list[Any], settings: DisplaySettings,
                 places: list[ValuePlace | None]) -> None:
        self.out = out
        self.places = places
        # Keys are fixed per result: encode them once.
        self.keys = [jsonenc.string(name) for name in names]
        self.names = names
        self.types = types
        self.spelling = JsonSpelling(settings)

    def write_values(self, rows: Iterable[Sequence[Any]]) -> None:
        encode = self.spelling.value
        columns = list(zip(self.keys, self.types, self.places, strict=True))
        for row in self.spelling.chosen_rows(rows, self.names, self.places):
            fields = (f"{key}: {encode(value, cqltype, place)}"
                      for (key, cqltype, place), value in zip(columns, row, strict=True))
            self.out.write("{" + ", ".join(fields) + "}\n")

    def write_rows(self, rows: Iterable[Any]) -> None:
        self.write_values(rows_values(rows, self.names))

    def finish(self) -> None:
        self.out.flush()


@row_writer("csv")
class CsvWriter:
    """`delimiter`: another file format of CSV's kind (common.file_formats) spells fields so too."""

    def __init__(self, out: Out, names: list[str], types: list[Any], settings: DisplaySettings,
                 places: list[ValuePlace | None], delimiter: str = ",") -> None:
        self.out = out
        self.places = places
        # '\n' rather than csv's default '\r\n': output goes to terminals and pipes first.
        self.writer = csv.writer(out, lineterminator="\n", delimiter=delimiter)
        self.names = names
        self.types = types
        self.spelling = CsvSpelling(settings)
        self.writer.writerow(names)

    def write_values(self, rows: Iterable[Sequence[Any]]) -> None:
        encode = self.spelling.value
        columns = list(zip(self.types, self.places, strict=True))
        self.writer.writerows([encode(value, cqltype, place)
                               for (cqltype, place), value in zip(columns, row, strict=True)]
                              for row in self.spelling.chosen_rows(rows, self.names, self.places))

    def write_rows(self, rows: Iterable[Any]) -> None:
        self.write_values(rows_values(rows, self.names))

    def finish(self) -> None:
        self.out.flush()
        spelling = self.spelling
        if spelling.cuts:  # (json says it in the value's object, the table in its cell)
            from cqlsh_ext.common.text import say

            values = "1 value" if spelling.cuts == 1 else f"{spelling.cuts:,} values"
            say(f"csv: {values} cut at the output cap, its field holding what was kept (the first: "
                f"{spelling.first_cut}): --max-output-size SIZE keeps more")


def make_writer(fmt: OutputFormat, out: Out, names: list[str], types: list[Any],
                settings: DisplaySettings, places: list[ValuePlace | None] | None = None) -> RowWriter:
    """The writer of machine format `fmt`; `places`: where each column's values sit (column
    settings apply by it); None: unknown."""
    return WRITERS[fmt.name](out, names, types, settings, places or [None] * len(names))
