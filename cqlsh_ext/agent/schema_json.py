"""DESCRIBE under `--output-format json`: the schema as objects a program reads, one JSON line, rather
than cqlsh's CQL text (docs/agents.md). From the driver's schema metadata (refreshed first), as the
client-side DESCRIBE of a 3.x server reads it (keyspaces.describe):

    DESCRIBE KEYSPACES      {"describe": "keyspaces", "keyspaces": ["ks", ...]}
    DESCRIBE TABLES         {"describe": "tables", "tables": [{"keyspace": "ks", "table": "t"}, ...]}
    DESCRIBE KEYSPACE ks    {"describe": "keyspace", "keyspace": "ks", "replication": {...},
                             "durable_writes": true, "tables": [TABLE, ...], "types": [...], "cql": "..."}
    DESCRIBE TABLE ks.t     TABLE: {"describe": "table", "keyspace", "table", "columns": [{"name",
                             "type", "key", "holds"}], "partition_key", "clustering_key", "options",
                             "cql"}
    DESCRIBE CLUSTER        {"describe": "cluster", "cluster", "partitioner", "snitch"}
    anything else           {"describe": "types" | "schema" | ..., "cql": "..."} or its names listed

A column's `holds` is MCP describe_table's (mcp_server.table_columns): blob, blobs inside, text, null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.keyspaces.describe import Hidden
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.upstream.protocol import Parsed


def describe(conn: Any, keyspace: str | None, ctx: ReadContext, parsed: Parsed,
             unprotect: Callable[[str], str], hidden: Hidden | None = None) -> dict[str, Any]:
    """The DESCRIBE cqlsh parsed (on the connection `conn`, `keyspace` in use; `unprotect`: the
    shell's reading of a quoted name; `hidden`: what a read-only policy hides, left out), answered
    as one JSON object; raises keyspaces.describe.KeyspacesDescribeError, whose line the shell says."""
    from cqlsh_ext.keyspaces.describe import describe_request, described

    request = describe_request(parsed, unprotect)
    kind, rows = described(conn, keyspace, request, hidden)  # (refreshes the schema)
    return _answer(DriverSchema(conn.metadata, ctx, hidden), keyspace, request.words, request.names, kind,
                   rows)


class DriverSchema:
    """The driver's schema metadata, and the context describe_table's columns are read in."""

    def __init__(self, meta: Any, ctx: ReadContext, hidden: Hidden | None = None) -> None:
        self.meta = meta
        self.ctx = ctx
        self.hidden = hidden

    def keyspace(self, name: str | None) -> Any:
        return self.meta.keyspaces.get(name) if name is not None else None

    def table(self, keyspace: str, name: str) -> dict[str, Any] | None:
        """A table as an object: its columns (mcp_server.table_columns: name, CQL type, key, what it
        holds; no value read), its keys, its options, its CQL; None when there is none."""
        from cqlsh_ext.mcp_server.table_columns import columns
        from cqlsh_ext.reading.resolve import table_target

        target = table_target(self.meta, keyspace, name)
        if target is None:
            return None
        table = target.meta
        order = getattr(table, "clustering_order", None) or {}
        return {"describe": "table", "keyspace": keyspace, "table": table.name,
                "columns": columns(self.ctx, target, 0),
                "partition_key": list(target.partition_key),
                "clustering_key": [{"name": c, "order": str(order.get(c, "ASC")).upper()}
                                   for c in target.clustering_key],
                "options": {str(k): v for k, v in sorted(getattr(table, "options", {}).items())},
                "cql": str(table.export_as_string())}


def _answer(schema: DriverSchema, current: str | None, words: tuple[str, ...], names: Any, kind: str,
            rows: Any) -> dict[str, Any]:
    what = words[0] if words else ""
    if kind == "keyspaces":
        return {"describe": "keyspaces", "keyspaces": [row["name"] for row in rows]}
    if kind == "list":
        item = "table" if what in ("tables", "columnfamilies") else "name"
        return {"describe": what,
                what: [{"keyspace": row["keyspace_name"], item: row["name"]} for row in rows]}
    if kind == "cluster":
        return {"describe": "cluster", **rows[0]}
    keyspace = schema.keyspace(names.get("ksname") or current)
    if what == "keyspace" and keyspace is not None:
        return _keyspace_object(schema, keyspace)
    if what in ("table", "columnfamily") and keyspace is not None:
        table = schema.table(keyspace.name, names.get("cfname") or "")
        if table is not None:
            return table
    return {"describe": " ".join(words) or "name", "cql": "\n\n".join(str(row) for row in rows)}


def _keyspace_object(schema: DriverSchema, keyspace: Any) -> dict[str, Any]:
    """A keyspace: its replication, its tables (each DriverSchema.table) and types, its CQL."""
    from cqlsh_ext.keyspaces.describe import keyspace_cql

    hidden = schema.hidden
    tables = [schema.table(keyspace.name, name) for name in sorted(keyspace.tables)
              if hidden is None or not hidden(keyspace.name, name)]
    return {"describe": "keyspace", "keyspace": keyspace.name, "replication": _replication(keyspace),
            "durable_writes": bool(keyspace.durable_writes), "tables": [t for t in tables if t is not None],
            "types": sorted(keyspace.user_types), "cql": keyspace_cql(keyspace, hidden)}


def _replication(keyspace: Any) -> dict[str, str]:
    """The keyspace's replication map, as CREATE KEYSPACE writes it."""
    from ast import literal_eval

    strategy = keyspace.replication_strategy
    text = strategy.export_for_schema() if strategy is not None else "{}"
    try:
        found = literal_eval(text)
    except (ValueError, SyntaxError):
        return {"class": str(text)}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {"class": str(text)}
