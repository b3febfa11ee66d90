"""The load package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): `write`, documents loaded into a table, a write
feature whose shell statement is COPY ... FROM (its Statement claims the loads among CQL's COPY
statements) and whose API method is db.write."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import CONFIRM
from cqlsh_ext.features.feature import (
    WRITE,
    Argument,
    Feature,
    Method,
    Reads,
    Service,
    Statement,
    Text,
    Writes,
    register,
)

_HELP = "cqlsh_ext.load.help"

register(Feature(
    "write", "Load documents into a table",
    "COPY ks.t (pk, ck, data) FROM 'file.jsonl' or db.write('ks.t', frame): rows loaded, each blob value "
    "encoded as its producers encode it (its ENCODE chain, its export's label, its column's DECODE).",
    (Argument("table", "string", "keyspace.table (or a table of the connection's keyspace)", required=True),
     Argument("data", None, "the rows: an Arrow table or RecordBatchReader, a pandas or a polars DataFrame; "
              "the shell's COPY ... FROM reads a JSON Lines, Parquet or CSV file", required=True),
     Argument("encode", "object", "each blob column's chain: {'data': 'snappy>json'}"),
     Argument("ttl", "integer", "seconds every cell written lives (default: the table's)",
              keywords={"minimum": 0}),
     Argument("pace", "integer", "write capacity units a second at most", keywords={"minimum": 1}),
     CONFIRM,
     Argument("resume", "string", "the journal of a load stopped part-way: its rows already written are "
              "not written again")),
    Reads("nothing"), WRITE, output_schemas.LOAD_RESULT, Service("cqlsh_ext.load.run", "load_call"),
    details="A preview (rows new, overwritten, already as loaded, refused by reason; the chains written; "
            "bytes before and after; write units) unless confirmed; each value encoded and decoded back "
            "by the display's reading and compared first (a row whose value does not come back equal is "
            "refused, nothing of it written); then each row journaled (what it held) and written at its "
            "timestamp, a partition's rows a request, at the pace asked. undo puts the old values back "
            "and leaves no row that was new.",
    writes=Writes("table", "table"),
    method=Method("write", label="COPY FROM", result=Service("cqlsh_ext.api.loads", "LoadResult"), doc="""\
COPY table (columns) FROM data (docs/load.md): `data`'s rows (an Arrow table or
RecordBatchReader, a pandas or a polars DataFrame, read a batch at a time) loaded into
`table` (`ks.table`, or a table of the connection's keyspace), the columns its names name;
each blob value written in its `encode` chain ({"data": "snappy>json"}), else in its own
label where the data holds an export's six columns (db.query(...).to_arrow()'s), else in
its column's DECODE setting; each encoded, decoded back and compared before anything is
sent (a row whose value does not come back equal is refused). `ttl`: seconds every cell
lives; `pace`: write units a second. A preview unless confirm=True; then each row is
journaled (what it held) and written, and the result names the journal db.undo takes.
`resume`: a stopped load's journal (or result), with the same data: its rows already
written are not written again."""),
    # The shell's statement starts with CQL's COPY: it claims the loads (a file of documents, ENCODE,
    # PACE, CONFIRM, COPY RESUME); any other COPY ... FROM is cqlsh's, as written.
    statement=Statement(
        ("COPY",), "COPY ks.t (pk, ck, data) FROM 'file.csv' WITH ENCODE data = 'snappy>json';", json=False,
        usage="[keyspace.]table [(column, ...)] FROM 'file' [WITH ENCODE column = 'chain' [AND ...] "
              "[AND TTL = seconds]] [PACE n] [CONFIRM]  |  COPY RESUME 'journal'|LAST [CONFIRM]",
        claims=Service("cqlsh_ext.load.command", "intercept"), topics=(("load", Text(_HELP, "LOAD_HELP")),),
        see_also=(("copy", Text(_HELP, "LOAD_SEE_ALSO")),), after=("export",))))
