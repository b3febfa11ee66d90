"""The renderers: each takes a typed answer (cqlsh_ext.reading.typed) and gives it its form, one a
module. `terminal` prints it through the shell's result pipeline (cqlsh's layouts, the decoded
cells, the pager), `closing` says its notes in a line, `json_lines` and `csv_rows` write files,
`parquet` (with `parquet_columns` and `arrow_types`) writes Parquet from its columns,
`path_values` spells a path's value for each of them; `text_report` lays a report out for a
person. `cqlsh-ext mcp` renders the same answers as its tool results (mcp_server/answers.py).

A new front end takes an answer and writes a renderer (docs/architecture.md, "A new front end").
"""
