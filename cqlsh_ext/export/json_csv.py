"""JSON Lines and CSV files: the answer's batches spelt by the renderers of the shell's own output
formats (render.json_lines, render.csv_rows), so a file holds exactly what `--output-format json`
or `csv` prints for the same SELECT."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

from cqlsh_ext.export.errors import ExportError
from cqlsh_ext.export.target import ExportFile


class TextSink:
    def __init__(self, fmt: str, target: ExportFile, columns: Sequence[Any], settings: Any,
                 places: Sequence[Any]) -> None:
        self.rows = 0
        self.width = len(columns)
        if fmt == "json":
            from cqlsh_ext.render.json_lines import JsonRows

            # bytes: a batch is one UTF-8 buffer (JsonRows.column_bytes), or its lines encoded
            self.out: Any = target.output()
            self.json: Any = JsonRows(columns, settings, places)
            self.csv: Any = None
        else:
            # newline="": the CSV writer ends lines itself; utf-8 whatever the locale says; a lone
            # surrogate in a decoded string (which UTF-8 cannot write) as its escape, as the shell
            # prints it (cli._main).
            self.out = io.TextIOWrapper(target.output(), encoding="utf-8", newline="",
                                        errors="backslashreplace")
            from cqlsh_ext.render.csv_rows import CsvRows

            self.json, self.csv = None, CsvRows(self.out, columns, settings, places)

    def write(self, batch: Any) -> None:
        """A batch's columns (payload.columns.ColumnValues), spelt a column at a time."""
        columns = batch.columns(self.width)
        if self.json is not None:
            self.out.write(self.json.batch_bytes(columns))
        else:
            self.csv.write_columns(columns)
        self.rows += len(batch)

    def finish(self) -> None:
        self.out.flush()
        self.out.close()

    def abort(self) -> None:
        # A full disk fails the last flush too, as does a file past its cap: it is discarded anyway.
        with contextlib.suppress(OSError, ExportError):
            self.out.close()


def json_lines_sink(target: ExportFile, answer: Any, settings: Any, places: Sequence[Any],
                    export: Any) -> Any:
    """COPY (SELECT ...) TO 'file.jsonl''s writer (common.file_formats): as --output-format json
    prints, or the Parquet file's typed columns with SAMPLE_ROWS or SCHEMA (render.arrow_text)."""
    return _sink("json", target, answer, settings, places, export)


def csv_sink(target: ExportFile, answer: Any, settings: Any, places: Sequence[Any], export: Any) -> Any:
    """COPY (SELECT ...) TO 'file.csv''s writer: as json_lines_sink, as --output-format csv prints."""
    return _sink("csv", target, answer, settings, places, export)


def _sink(kind: str, target: ExportFile, answer: Any, settings: Any, places: Sequence[Any],
          export: Any) -> Any:
    if export.typed:
        from cqlsh_ext.output.spellings import blob_reading
        from cqlsh_ext.render.arrow_text import ArrowTextSink

        return ArrowTextSink(kind, target.output(), answer, blob_reading(settings))
    return TextSink(kind, target, answer.columns, settings, places)
