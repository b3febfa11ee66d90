"""The API's load (docs/api.md, "Writes"; docs/load.md): `db.write(table, data, encode=...)`, a front
end on the writing layer as the shell's COPY ... FROM is. It builds the typed request
(writing.requests.LoadRequest, its source "data": the rows handed over), hands it to the service
the `write` feature declares (load/declared.py: load.run.load) in a write context made of
the Database's reading context and the journal directory (api.writes' one way), and gives back the
figures with the lines the shell would print. `data` is an Arrow table or RecordBatchReader, a
pandas or a polars DataFrame, read a batch at a time. Nothing is written without confirm=True;
every row is journaled, and db.undo takes the result. A load stopped part-way goes on with
`resume=` its journal and the same data (rows the journal holds are not written again)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.query_answer import Progress
    from cqlsh_ext.api.writes import Journal
    from cqlsh_ext.load.load_job import LoadFigures
    from cqlsh_ext.writing.requests import LoadRequest
    from cqlsh_ext.writing.write_context import WriteContext

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


def write(db: Connected, table: str, data: Any, *, encode: Mapping[str, str] | None = None,
          ttl: int | None = None, pace: int | None = None, confirm: bool = False,
          resume: Journal | LoadResult | None = None, progress: Progress | None = None) -> LoadResult:
    """COPY table (columns) FROM data WITH ENCODE ... [PACE pace] [CONFIRM] (see Database.write)."""
    from cqlsh_ext.api.writes import _journal_path, _written, checked_call
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features import service_of
    from cqlsh_ext.load.encoded_values import refuse_strays
    from cqlsh_ext.load.load_job import LABEL
    from cqlsh_ext.load.source import SourceError, data_rows
    from cqlsh_ext.reading.resolve import find_table
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import LoadRequest, ResumeRequest

    checked_call("write", table=table, data=data, ttl=ttl, pace=pace, confirm=confirm,
                 encode=dict(encode) if isinstance(encode, Mapping) else encode,
                 resume=resume if resume is None else _journal_path(resume, LABEL))
    # What the declaration's "object" cannot say: each of its values a chain's text.
    if encode is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in encode.items()):
        raise Error(f"{LABEL}: encode takes a dict of column names to chains ({{'data': 'snappy>json'}}); "
                    "nothing was written")
    keyspace, name = db._table(table)
    keyspace = keyspace or db.keyspace
    if keyspace is None:
        raise Error(f"{LABEL}: no keyspace for {name}: name it ('ks.{name}') or connect with keyspace=; "
                    "nothing was written")
    try:
        names, _rows, _total = data_rows(data, (), frozenset())
    except SourceError as err:
        raise Error(f"{LABEL}: {err}; nothing was written") from None
    table_found = find_table(db.cluster, db.keyspace, keyspace, name, refresh=True)
    found = table_found.meta if table_found is not None else None
    if found is not None:  # (none: the load says the table is unknown)
        try:
            refuse_strays(names, found, keyspace)
        except QueryError as err:
            raise Error(f"{LABEL}: {err}; nothing was written") from None
    columns = tuple(n for n in names if found is None or n in found.columns)
    request = LoadRequest(keyspace, name, columns, None, "data", tuple((encode or {}).items()), ttl, True,
                          pace, confirm)

    def run(ctx: WriteContext) -> LoadFigures | None:
        if resume is not None:
            from cqlsh_ext.load.run import resume as go_on

            return go_on(ctx, ResumeRequest(_journal_path(resume, LABEL), confirm), data)
        loaded: LoadFigures = service_of("write")(ctx, request, data)
        return loaded

    figures, text, errors = _written(LABEL, run, db, (QueryError, WriteRefused), progress)
    if figures is None:
        raise Error(errors[-1] if errors else f"{LABEL}: nothing was left to write")
    return _result(request, figures, text)


def _result(request: LoadRequest, figures: LoadFigures, text: str) -> LoadResult:
    confirmed = figures.journal is not None
    common: dict[str, Any] = {
        "request": request, "confirmed": confirmed, "rows": figures.rows, "new": figures.new,
        "overwritten": figures.overwritten, "unchanged": figures.unchanged,
        "refused": dict(figures.refused), "refused_rows": list(figures.named),
        "chains": {k: dict(v) for k, v in figures.chains.items()}, "bytes_before": figures.bytes_before,
        "bytes_after": figures.bytes_after, "write_units": figures.units, "text": text}
    if not confirmed:
        return LoadResult(**common)
    return LoadResult(**common, written=figures.written, not_sent=figures.not_sent, journal=figures.journal,
                      stopped=figures.stop or None)
