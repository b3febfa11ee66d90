"""The export package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): `export`, a SELECT's whole answer written as a
file, MCP's tool; the shell's COPY (SELECT ...) TO 'file', its statement, which claims its own among
CQL's COPY statements."""

from __future__ import annotations

from cqlsh_ext.common.file_formats import FILE_FORMATS, listed
from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import decode_argument
from cqlsh_ext.features.feature import READ, Argument, Feature, Reads, Service, Statement, Text, register

#: The formats MCP's tool writes (common.file_formats), the first its default.
_MCP = [f for f in FILE_FORMATS if f.mcp]

register(Feature(
    "export", "Export to a file",
    f"Writes one SELECT's whole answer as {listed(f.title for f in _MCP)} in the server's export directory; "
    "answers a resource_link, read by resources/read in chunks.",
    (Argument("statement", "string", "one SELECT (CQL, with payload paths)", required=True),
     Argument("format", None, listed([f"{_MCP[0].name} (default)", *(f.name for f in _MCP[1:])]),
              keywords={"enum": [f.name for f in _MCP]}, listed=False),
     decode_argument()),
    Reads("statement", "statement"), READ, output_schemas.EXPORT, Service("cqlsh_ext.export.run", "export"),
    details="The file is what the shell's COPY (SELECT ...) TO 'file' writes for the same statement; "
            "the server names it, never the client. It is kept for the server's mcp_export_max_age "
            "while the directory holds at most mcp_export_max_bytes (the oldest go first); a chunk is "
            "at most the server's answer cap as sent, its _meta saying offset, size, truncated and "
            "next. Refused on a table whose values the policy redacts.",
    # The shell's statement starts with CQL's COPY: it claims those whose table is a SELECT in
    # brackets (any other COPY goes on to the next claim, and to cqlsh's COPY as written).
    statement=Statement(
        ("COPY",), "COPY (SELECT id, data.status FROM shop.orders) TO 'orders.parquet';", json=False,
        usage="(SELECT ...) TO 'file' [WITH option = value [AND ...]]",
        describes="COPY (SELECT ...) TO 'file': one SELECT's whole answer written to the file it names, "
                  "blobs decoded as the shell shows them; the name's suffix gives the format "
                  f"({listed(f.title for f in FILE_FORMATS)}).",
        claims=Service("cqlsh_ext.export.command", "intercept"),
        topics=(("export", Text("cqlsh_ext.export.help", "EXPORT_HELP")),))))

