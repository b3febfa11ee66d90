"""The Parquet renderer: a typed answer's Arrow batches (render.arrow_batches) written by
`pyarrow.parquet.ParquetWriter`, one row group at a time.

The schema is the answer's, fixed before the first batch (its kinds never change, so the file is
written once, front to back). Batches are held until a row group is full (ROW_GROUP_SIZE rows,
65,536 by default, or ROW_GROUP_BYTES of stored blobs: a row group of large blobs does not hold
gigabytes), then written: memory holds one row group, whatever the table's size. The values that
did not fit their column's kind (null there, with a note) are counted for the closing line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from cqlsh_ext.render.arrow_batches import ArrowBatches

if TYPE_CHECKING:
    from cqlsh_ext.payload.columns import BlobReading
    from cqlsh_ext.reading.typed import AnswerBatch, TypedAnswer

#: Rows per row group (WITH ROW_GROUP_SIZE = n): what memory holds at once.
ROW_GROUP_SIZE = 65_536
#: A row group is also written once the stored bytes of the blobs it holds reach this: rows of
#: large blobs (each decoded up to the output cap) do not make a row group of gigabytes.
ROW_GROUP_BYTES = 32 << 20
CODECS = ("zstd", "snappy", "gzip", "lz4", "brotli", "none")
DEFAULT_CODEC = "zstd"


class FileParts(Protocol):
    """Where the file is written (export.target.ExportFile): the temporary file that takes the final
    name, written through its descriptor (a file object: what it counts, the writer cannot pass)."""

    def output(self) -> BinaryIO: ...


@dataclass
class Summary:
    rows: int = 0
    row_groups: int = 0
    #: Values that did not fit their column's kind, by column.
    misfits: dict[str, int] = field(default_factory=dict)


class ParquetSink:
    def __init__(self, target: FileParts, answer: TypedAnswer, reading: BlobReading,
                 codec: str = DEFAULT_CODEC, row_group_size: int = ROW_GROUP_SIZE,
                 metadata: dict[str, str] | None = None) -> None:
        import pyarrow.parquet as pq

        self.codec = codec
        self.row_group_size = row_group_size
        self.arrow = ArrowBatches(answer, reading, metadata)
        self.summary = Summary()
        self.held: list[Any] = []
        self.held_rows = 0
        self.held_bytes = 0
        self.writer: Any = pq.ParquetWriter(target.output(), self.arrow.schema,
                                            compression=None if codec == "none" else codec)

    @property
    def schema(self) -> Any:
        return self.arrow.schema

    def write(self, batch: AnswerBatch) -> None:
        """A batch of the answer: converted, held, a row group written each time one is full
        (ROW_GROUP_SIZE rows, or ROW_GROUP_BYTES of stored blobs: the row group ends with the row
        that reaches it)."""
        size = len(batch)
        if not size:
            return
        converted = self.arrow.convert(batch)
        sizes = self.arrow.stored_bytes(batch)
        start = 0
        while start < size:
            end = min(size, start + self.row_group_size - self.held_rows)
            total = sum(sizes[start:end])
            if self.held_bytes + total >= ROW_GROUP_BYTES:
                reached, held = start, self.held_bytes
                while reached < end:
                    held += sizes[reached]
                    reached += 1
                    if held >= ROW_GROUP_BYTES:
                        break
                end = reached
                total = sum(sizes[start:end])
            self.held.append(converted.slice(start, end - start))
            self.held_rows += end - start
            self.held_bytes += total
            start = end
            if self.held_rows >= self.row_group_size or self.held_bytes >= ROW_GROUP_BYTES:
                self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self.held_rows:
            return
        table = pa.Table.from_batches(self.held, schema=self.arrow.schema)
        self.writer.write_table(table, row_group_size=self.held_rows)
        self.summary.rows += self.held_rows
        self.summary.row_groups += 1
        self.held, self.held_rows, self.held_bytes = [], 0, 0

    def finish(self) -> Summary:
        """Write what is held and close the file."""
        self._flush()
        self.writer.close()
        self.writer = None
        notes = self.arrow.answer.notes
        if notes is not None:
            self.summary.misfits = dict(notes.misfits)
        return self.summary

    def details(self, summary: Summary) -> str:
        """The closing line's word on the file: its codec and row groups."""
        groups = summary.row_groups
        return f"{self.codec}, {groups:,} row group{'s' if groups != 1 else ''}"

    def abort(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # the file is discarded anyway (a full disk fails here too)
                pass
            self.writer = None


def file_sink(target: FileParts, answer: TypedAnswer, settings: Any, places: Any, export: Any) -> ParquetSink:
    """COPY (SELECT ...) TO 'file.parquet''s writer (common.file_formats): the statement's codec and
    row group size (export.parse.ExportStatement), the SELECT in the file's metadata."""
    from cqlsh_ext.output.spellings import blob_reading

    return ParquetSink(target, answer, blob_reading(settings), export.codec or DEFAULT_CODEC,
                       export.row_group_size or ROW_GROUP_SIZE, {"cqlsh_ext.select": export.select})
