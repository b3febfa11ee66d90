"""The payload_select package's declarations (found through the entry point group cqlsh_ext.features:
the registry imports this module, never its services): `query`, one SELECT with payload paths,
MCP's tool (the API's db.query is its own reading), whose statement claims the shell's SELECTs that
reach into payloads; `copy_paths`, the shell's alone, whose statement refuses a COPY naming payload paths."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import cursor_argument, decode_argument
from cqlsh_ext.features.feature import READ, Argument, Feature, Reads, Service, Statement, Text, register

#: `query`'s rows by default, and at most.
DEFAULT_ROWS, MAX_ROWS = 100, 10_000

_HELP = "cqlsh_ext.payload_select.help"
_COMMAND = "cqlsh_ext.payload_select.command"

register(Feature(
    "query", "Run a SELECT",
    "Runs one SELECT; rows as JSON, blob values decoded ({label, kind, payload}). Payload paths "
    "reach inside blobs: SELECT data.status, count(*) FROM ks.t WHERE data.total > 10 GROUP BY "
    "data.status ALLOW FILTERING. A cut answer carries a cursor for the rest.",
    (Argument("statement", "string", "one SELECT (CQL, with payload paths)", required=True),
     Argument("limit", "integer", f"rows at most (default {DEFAULT_ROWS})",
              keywords={"minimum": 1, "maximum": MAX_ROWS}),
     decode_argument(), cursor_argument()),
    Reads("statement", "statement"), READ, output_schemas.rows_schema(),
    Service("cqlsh_ext.reading.select", "read_select"),
    details="Payload paths select, filter, group, order and aggregate: SELECT data.status, "
            "data.items[0].sku FROM ks.t WHERE data.status = 'FAILED' ALLOW FILTERING. A blob no "
            "detection reads is its \"0x...\" hex, or {kind, payload, note} saying why; the group "
            "of undecodable values is {\"$undecodable\": true}. A statement that reads beyond the "
            "partitions its WHERE names needs ALLOW FILTERING; a full scan that costs (Amazon "
            "Keyspaces, or a table of 1 GB or more) is refused with its estimated cost until the "
            "statement ends with ALLOW FILTERING CONFIRM. Anything but a SELECT is refused. At most "
            f"`limit` rows (default {DEFAULT_ROWS}); the same statement with a cut answer's cursor "
            "answers the rows that follow, each once.",
    # The shell's statement is CQL's SELECT: it claims those that reach into payloads (any other is
    # cqlsh's, as written).
    statement=Statement(
        ("SELECT",), "SELECT data.status, count(*) FROM shop.orders GROUP BY data.status ALLOW FILTERING;",
        json=False,
        usage="path, ... FROM [keyspace.]table [WHERE conditions] [GROUP BY path] [ALLOW FILTERING]",
        claims=Service(_COMMAND, "intercept"), topics=(("queries", Text(_HELP, "QUERIES_HELP")),),
        see_also=(("select", Text(_HELP, "SELECT_SEE_ALSO")),))))
register(Feature(
    "copy_paths", "COPY with payload paths refused",
    "COPY ks.t (id, data.status) TO or FROM a file is refused in one line: COPY reads and writes the "
    "stored bytes (a SELECT with paths and --output-format csv writes the paths).",
    (Argument("statement", "string", "the COPY that names payload paths among its columns", required=True),),
    Reads("statement", "statement"), READ, {}, shell_only=True,
    statement=Statement(
        ("COPY",), "COPY shop.orders (id, data.status) TO 'orders.csv';", json=False,
        usage="[keyspace.]table (column, path, ...) TO | FROM 'file': refused",
        claims=Service(_COMMAND, "refuse_copy"),
        # An export's COPY (SELECT ...) and a load's COPY ... FROM are theirs first.
        after=("export", "write"))))

