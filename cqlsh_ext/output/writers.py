"""Result sets as JSON Lines (one object per row) or CSV (a header row per result set)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.output import formats
from cqlsh_ext.output.place import ValuePlace
from cqlsh_ext.output.values import ValueEncoder

if TYPE_CHECKING:
    from cqlsh_ext.shellapi import Out


class RowWriter(Protocol):
    def write_rows(self, rows: Iterable[Any]) -> None: ...

    def finish(self) -> None: ...


class JsonLinesWriter:
    def __init__(self, out: Out, names: list[str], types: list[Any], encoder: ValueEncoder,
                 places: list[ValuePlace | None]) -> None:
        self.out = out
        self.places = places
        # Keys are fixed per result: encode them once.
        self.keys = [json.dumps(name, ensure_ascii=False) for name in names]
        self.names = names
        self.types = types
        self.encoder = encoder

    def write_rows(self, rows: Iterable[Any]) -> None:
        encode = self.encoder.json
        for row in rows:
            fields = (f"{key}: {encode(row[name], cqltype, place)}"
                      for key, name, cqltype, place in zip(self.keys, self.names, self.types, self.places,
                                                           strict=True))
            self.out.write("{" + ", ".join(fields) + "}\n")

    def finish(self) -> None:
        self.out.flush()


class CsvWriter:
    def __init__(self, out: Out, names: list[str], types: list[Any], encoder: ValueEncoder,
                 places: list[ValuePlace | None]) -> None:
        self.out = out
        self.places = places
        # '\n' rather than csv's default '\r\n': output goes to terminals and pipes first.
        self.writer = csv.writer(out, lineterminator="\n")
        self.names = names
        self.types = types
        self.encoder = encoder
        self.writer.writerow(names)

    def write_rows(self, rows: Iterable[Any]) -> None:
        encode = self.encoder.csv
        columns = list(zip(self.names, self.types, self.places, strict=True))
        self.writer.writerows([encode(row[name], cqltype, place) for name, cqltype, place in columns]
                              for row in rows)

    def finish(self) -> None:
        self.out.flush()


def make_writer(fmt: str, out: Out, names: list[str], types: list[Any],
                encoder: ValueEncoder, places: list[ValuePlace | None] | None = None) -> RowWriter:
    """`places`: where each column's values sit (column settings apply by it); None: unknown."""
    writer: type[JsonLinesWriter | CsvWriter] = globals()[str(formats.get(fmt).writer)]
    return writer(out, names, types, encoder, places or [None] * len(names))
