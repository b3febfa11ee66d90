"""JSON Lines and CSV files: the answer's batches spelt by the renderers of the shell's own output
formats (render.json_lines, render.csv_rows), so a file holds exactly what `--output-format json`
or `csv` prints for the same SELECT."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cqlsh_ext.export.target import ExportFile
from cqlsh_ext.render.arrow_text import TextFile


class TextSink(TextFile):
    def __init__(self, fmt: str, target: ExportFile, columns: Sequence[Any], settings: Any,
                 places: Sequence[Any]) -> None:
        super().__init__(fmt, target.output())
        self.width = len(columns)
        if fmt == "json":
            from cqlsh_ext.render.json_lines import JsonRows

            self.json: Any = JsonRows(columns, settings, places)
        else:
            from cqlsh_ext.render.csv_rows import CsvRows

            self.csv = CsvRows(self.out, columns, settings, places)

    def write(self, batch: Any) -> None:
        """A batch's columns (payload.columns.ColumnValues), spelt a column at a time: a JSON batch
        one UTF-8 buffer (JsonRows.batch_bytes)."""
        columns = batch.columns(self.width)
        if self.fmt == "json":
            self.out.write(self.json.batch_bytes(columns))
        else:
            self.csv.write_columns(columns)
        self.rows += len(batch)


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
