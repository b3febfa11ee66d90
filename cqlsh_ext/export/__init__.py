"""COPY (SELECT ...) TO 'file': a query's answer written to Parquet, JSON Lines or CSV (docs/export.md).

`command` is the shell's entry and `parse` reads the statement (refusals; light, imported at
start-up); `run` reads the answer with the payload query's machinery (cqlsh_ext.payload_select)
and hands it to its format's writer (common.file_formats: `json_csv`, the shell's own JSON Lines
and CSV writers, or render.parquet's row groups), writing through `target` (a temporary file
renamed on success). pyarrow is imported only when a Parquet file is written.
"""
