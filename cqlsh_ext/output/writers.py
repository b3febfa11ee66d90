"""Result sets as JSON Lines (one object per row) or CSV (a header row per result set)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import Any, Protocol, TextIO

from cqlsh_ext.output.values import ValueEncoder


class RowWriter(Protocol):
    def write_rows(self, rows: Iterable[Any]) -> None: ...

    def finish(self) -> None: ...


class JsonLinesWriter:
    def __init__(self, out: TextIO, names: list[str], types: list[Any], encoder: ValueEncoder) -> None:
        self.out = out
        # Keys are fixed per result: encode them once.
        self.keys = [json.dumps(name, ensure_ascii=False) for name in names]
        self.names = names
        self.types = types
        self.encoder = encoder

    def write_rows(self, rows: Iterable[Any]) -> None:
        encode = self.encoder.json
        for row in rows:
            fields = (f"{key}: {encode(row[name], cqltype)}"
                      for key, name, cqltype in zip(self.keys, self.names, self.types, strict=True))
            self.out.write("{" + ", ".join(fields) + "}\n")

    def finish(self) -> None:
        self.out.flush()


class CsvWriter:
    def __init__(self, out: TextIO, names: list[str], types: list[Any], encoder: ValueEncoder) -> None:
        self.out = out
        # '\n' rather than csv's default '\r\n': output goes to terminals and pipes first.
        self.writer = csv.writer(out, lineterminator="\n")
        self.names = names
        self.types = types
        self.encoder = encoder
        self.writer.writerow(names)

    def write_rows(self, rows: Iterable[Any]) -> None:
        encode = self.encoder.csv
        pairs = list(zip(self.names, self.types, strict=True))
        self.writer.writerows([encode(row[name], cqltype) for name, cqltype in pairs] for row in rows)

    def finish(self) -> None:
        self.out.flush()


WRITERS: dict[str, type[JsonLinesWriter] | type[CsvWriter]] = {"json": JsonLinesWriter, "csv": CsvWriter}


def make_writer(fmt: str, out: TextIO, names: list[str], types: list[Any],
                encoder: ValueEncoder) -> RowWriter:
    return WRITERS[fmt](out, names, types, encoder)
