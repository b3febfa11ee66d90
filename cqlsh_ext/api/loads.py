"""The API's load's result (docs/api.md, "Writes"; docs/load.md): `db.write(table, data, encode=...)`,
made from the `write` feature's declaration (load/declared.py) as every write method is
(api.writes.declared_write), its service load.run.load_call answering the fields `LoadResult` holds.
`data` is an Arrow table or RecordBatchReader, a pandas or a polars DataFrame, read a batch at a
time. Nothing is written without confirm=True; every row is journaled, and db.undo takes the
result. A load stopped part-way goes on with `resume=` its journal and the same data (rows the
journal holds are not written again)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    from cqlsh_ext.writing.requests import LoadRequest

__all__ = ["LoadResult"]


@dataclass(frozen=True)
class LoadResult:
    """A load's preview (`confirmed` False: nothing written) or run: the rows of the data
    (`rows`), those new, overwritten, already as loaded (not written) and refused (by reason:
    `refused`; the first named, "key: reason": `refused_rows`); the chain each blob value is
    written in, by column (`chains`); the loaded columns' stored bytes before (of the rows
    overwritten) and after; write units in Amazon Keyspaces' terms. After confirm=True: the rows
    `written`, those not sent when it stopped (`not_sent`), the `journal` (db.undo takes it, or
    the result) and why it stopped (`stopped`, None). `text`: what the shell prints."""

    request: LoadRequest
    confirmed: bool
    rows: int
    new: int
    overwritten: int
    unchanged: int
    refused: dict[str, int]
    refused_rows: list[str]
    chains: dict[str, dict[str, int]]
    bytes_before: int
    bytes_after: int
    write_units: int
    written: int | None = None
    not_sent: int | None = None
    journal: str | None = None
    stopped: str | None = None
    text: str = field(default="", repr=False)

    def __fspath__(self) -> str:
        """Its journal (db.undo and db.write's resume= take the result for it)."""
        if self.journal is None:
            raise Error("COPY FROM: a preview wrote nothing and has no journal; nothing was written")
        return self.journal

    def to_dict(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.repr}
        doc["request"] = self.request.to_json()
        return doc
