"""A typed answer as Arrow record batches: the base the Parquet file and the Python API's tables
and streams are written from.

The schema is fixed before the first batch leaves (reading.typed.TypedAnswer.fixed: the CQL types,
the types given, and the answer's leading sample for the kinds read from values; payload.columns
states the rule), each answer batch becomes one record batch of that schema
(payload.columns.arrow_arrays: laid out by the native core where it holds the values, else by
pyarrow), and a value that does not fit its column's kind is null there, or only the places inside
it that do not fit, with its note, counted in the answer's notes (`ReadNotes.misfits`). Nothing is
retyped: every batch has the schema the first had.

pyarrow is imported when a batch is made, never at import time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import add
from typing import TYPE_CHECKING, Any, TypeVar

from cqlsh_ext.payload.columns import BLOB, arrow_arrays, arrow_schema, as_pyarrow, stored_sizes
from cqlsh_ext.reading.typed import BATCH_BYTES

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import AnswerColumn, BlobReading
    from cqlsh_ext.reading.typed import AnswerBatch, TypedAnswer

Source = TypeVar("Source")


class ArrowBatches:
    """The answer's batches as pyarrow.RecordBatches of one schema (`schema`, known before the
    first batch is read: the kinds are fixed first). `reading`: how its blobs decode and whether
    their stored bytes are kept (WITH RAW, --raw-blobs)."""

    def __init__(self, answer: TypedAnswer, reading: BlobReading,
                 metadata: dict[str, str] | None = None) -> None:
        self.answer = answer
        self.reading = reading
        self.columns: list[AnswerColumn] = answer.fixed(reading)
        self.schema = arrow_schema(self.columns, metadata)
        self.roles = [c.role for c in self.columns]
        self.places = answer.places

    def convert(self, batch: AnswerBatch) -> Any:
        """One answer batch as a record batch of the schema."""
        import pyarrow as pa

        batch.read_blobs(self.reading, self.places, self.roles)
        chunks = batch.columns(len(self.columns))
        arrays: list[Any] = []
        notes = self.answer.notes
        for column, chunk, place in zip(self.columns, chunks, self.places, strict=True):
            fitted = arrow_arrays(column, [chunk], self.reading, place)
            arrays += [as_pyarrow(a) for a in fitted.arrays]
            if fitted.misfits and notes is not None:
                notes.misfits[column.name] = notes.misfits.get(column.name, 0) + fitted.misfits
        # The core lays a JSON-text place out as Arrow's JSON extension: the schema's type is its
        # storage, a string in a marked field (arrow_types.arrow_field; a cast of the type alone,
        # the buffers kept).
        arrays = [a if a.type == field.type else a.cast(field.type)
                  for a, field in zip(arrays, self.schema, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def stored_bytes(self, batch: AnswerBatch) -> list[int]:
        """The stored size of each row's blobs (a Parquet row group ends at a byte bound)."""
        sizes: list[int] | None = None
        for i, role in enumerate(self.roles):
            if role == BLOB:  # (summed in C: no Python step a row)
                column = stored_sizes(batch.column(i))
                sizes = column if sizes is None else list(map(add, sizes, column))
        return [0] * len(batch) if sizes is None else sizes

    def __iter__(self) -> Iterator[Any]:
        """Every batch of the answer, converted (an empty answer gives none: `schema` stands)."""
        try:
            for batch in self.answer:
                if len(batch):
                    yield self.convert(batch)
        finally:
            self.answer.close()


def coalesced(batches: Iterable[tuple[Source, Any]], rows: int,
              most_bytes: int = BATCH_BYTES) -> Iterator[tuple[list[Source], Any]]:
    """Record batches (each with what it was made of: a `Source`) gathered into record batches of
    at least `rows` rows where more come: a whole-table reading with a payload filter gives each
    token range's page's few matches as a batch of their own. One of `rows` or more passes as it
    is, and so does what holds `most_bytes` (a page of large values the reading gave in parts, to
    keep memory flat: reading.typed.BATCH_BYTES). A batch goes as soon as it holds enough, the last
    as soon as the batches end: nothing is held for longer than its rows take to be read. Yields
    each with its sources, in order."""
    held: list[Any] = []
    sources: list[Source] = []
    count = size = 0
    for source, batch in batches:
        held.append(batch)
        sources.append(source)
        count += batch.num_rows
        size += batch.nbytes
        if count >= rows or size >= most_bytes:
            yield sources, _joined(held)
            held, sources, count, size = [], [], 0, 0
    if held:
        yield sources, _joined(held)


def _joined(batches: list[Any]) -> Any:
    import pyarrow as pa

    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)
