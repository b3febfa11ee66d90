"""Query results: the pipeline every result takes, cqlsh's layouts with decoded blobs, JSON Lines and CSV.

- values.py: one CQL value -> JSON text or CSV text, typed by the driver's column types;
- writers.py: a result set -> JSON Lines or CSV rows;
- pipeline.py: the one path a result takes (writer, pager, blob cells, auto vertical);
- table.py: cqlsh's table/vertical layout with blob cells bound to their place (place.py);
- command.py: the OUTPUT command.

`table` and `vertical` are cqlsh's own layouts (vertical is EXPAND ON).
"""


class OutputClosed(BaseException):  # noqa: N818  (not an error: the reader is gone)
    """Our output's reader went away (`cqlsh-ext -e ... | head`). cqlsh reports any Exception a
    statement raises as an error line, so this is a BaseException; the entry point ends quietly
    on it, as cat does."""
