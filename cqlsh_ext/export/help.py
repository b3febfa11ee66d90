"""HELP EXPORT: COPY (SELECT ...) TO 'file' in a screenful (the whole story: docs/export.md). The
formats, their suffixes and FORMAT's names are common.file_formats'."""

from cqlsh_ext.common.file_formats import FILE_FORMATS
from cqlsh_ext.common.text import fill

_SUFFIXES = ", ".join(" / ".join(f.suffixes) + (f" ({f.note})" if f.note else "") for f in FILE_FORMATS)
_FORMATS = " | ".join(f"'{f.name}'" for f in FILE_FORMATS)

EXPORT_HELP = f"""
        COPY (SELECT ...) TO 'file' [WITH option = value [AND ...]] [cqlsh-ext]

{fill("Writes the answer of a SELECT to a file, blobs decoded as the display decodes them: any SELECT "
      "HELP QUERIES describes (paths, payload conditions with ALLOW FILTERING, aggregates, GROUP BY, "
      "whole tables with the same question and CONFIRM), and plain SELECTs of columns. The file's "
      f"name gives the format: {_SUFFIXES}.")}

{fill(f"Options: FORMAT = {_FORMATS}; OVERWRITE = true (an existing file is never replaced without "
      "it); RAW = true | false (the stored bytes too, for this statement); COMPRESSION = 'zstd' "
      "(default) | 'snappy' | 'gzip' | 'lz4' | 'brotli' | 'none' and ROW_GROUP_SIZE = 65536 "
      "(Parquet's); SAMPLE_ROWS = 5000 and SCHEMA = 'data.total=decimal128(20,2), data.n=int64' "
      "(the types).")}

          Parquet (pyarrow, the parquet extra: without it the statement
          says how to add it) keeps types: CQL types as Arrow types, a
          path's values typed from the first 5,000 rows, a decoded blob as
          a struct beside NAME:label, NAME:note and NAME:stored (its bytes).

          COPY table TO 'file.csv' (cqlsh's own COPY) still exports the
          stored bytes. Ctrl-C closes the file with the rows read so far;
          twice, or an error, leaves no file. Examples:

          COPY (SELECT * FROM ks.orders WHERE data.status = 'FAILED'
                ALLOW FILTERING) TO 'failed.parquet';
          COPY (SELECT data.status, count(*) FROM ks.orders GROUP BY
                data.status ALLOW FILTERING) TO 'by_status.csv';
        """
