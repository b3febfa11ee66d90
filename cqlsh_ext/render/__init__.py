"""The renderers: each takes a typed answer (cqlsh_ext.reading.typed) and gives it its form, one a
module. `terminal` prints it through the shell's result pipeline (cqlsh's layouts, the decoded
cells, the pager), `closing` says its notes in a line, `json_lines` and `csv_rows` write files,
`arrow_batches` makes Arrow record batches of its columns (the Python API's tables and streams),
`parquet` writes them with pyarrow's Parquet writer; `text_report` lays a report out for a
person. Every renderer reads the answer's columns (payload.columns): none asks which engine read
a value. `cqlsh-ext mcp` renders the same answers as its tool results (mcp_server/answers.py).

A new front end takes an answer and writes a renderer (docs/architecture.md, "A new front end").
"""
