"""`cqlsh-ext --catalog [PATTERN]`: what an assistant asks first, in one call: the keyspaces, their
tables and columns with their CQL types and keys, and for each blob column what a small sample
says it holds, as one JSON document on standard output (docs/agents.md):

    {"catalog": "compression_demo", "sample_rows": 20, "keyspaces": [{"keyspace": "compression_demo",
     "name": "compression_demo", "tables": [{"table": "blob_formats", "name": "compression_demo.blob_formats",
     "columns": [{"column": "data", "name": "data", "type": "blob", "key": null, "holds": "blob",
       "sample": {"values": 20, "undecodable": 0, "chain": ["zstd"], "format": "json",
                  "label": "zstd>json", "confidence": "confident", "share": 0.4,
                  "labels": [{"label": "zstd>json", "values": 8, "confidence": "confident"}, ...]}}]}]}]}

`name` is each one spelt ready to paste into a statement (quoted where CQL needs it). A column's
type, key and `holds` are MCP describe_table's (mcp_server.table_columns: its JSON text columns told
from the same sample, one request); a blob's values are read by the value engine, the one thing
that reads a stored value (payload.engine), its confidence payload.confidence's. PATTERN: a keyspace, or
keyspace.table, `*` and `?` as wildcards; without one, every keyspace outside the system's. Under
--read-only a table the policy refuses is listed without a sample, the refusal said instead; one it
denies (hides) is left out, as absent.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.keyspaces.describe import Hidden
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget

#: Rows read of each table for its sample (one request).
SAMPLE_ROWS = 20
_NAMED = {"type": "string"}
_NULLABLE = {"type": ["string", "null"]}
#: The document's JSON Schema (draft 2020-12), as --spec gives it.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "required": ["catalog", "sample_rows", "keyspaces"],
    "properties": {
        "catalog": _NAMED, "sample_rows": {"type": "integer"},
        "keyspaces": {"type": "array", "items": {
            "type": "object", "required": ["keyspace", "name", "tables"],
            "properties": {"keyspace": _NAMED, "name": _NAMED, "tables": {"type": "array", "items": {
                "type": "object", "required": ["table", "name", "columns"],
                "properties": {"table": _NAMED, "name": _NAMED, "sample": _NAMED, "columns": {
                    "type": "array", "items": {
                        "type": "object", "required": ["column", "name", "type", "key", "holds"],
                        "properties": {
                            "column": _NAMED, "name": _NAMED, "type": _NAMED,
                            "key": {"enum": ["partition", "clustering", None]}, "holds": _NULLABLE,
                            "sample": {"type": ["object", "string"], "properties": {
                                "values": {"type": "integer"}, "undecodable": {"type": "integer"},
                                "chain": {"type": ["array", "null"], "items": _NAMED},
                                "format": _NULLABLE, "label": _NULLABLE, "confidence": _NULLABLE,
                                "share": {"type": "number"}, "labels": {"type": "array"}}}}}}}}}}}}},
}


def catalog(ctx: ReadContext, pattern: str, refusal: Callable[[str, str], str | None],
            hidden: Hidden | None = None) -> dict[str, Any]:
    """The catalog of the keyspaces and tables `pattern` names ("": every one outside the system's);
    `refusal(keyspace, table)`: why a table's values may not be read (--read-only's policy), or None;
    `hidden`: what the policy hides (agent.read_only.ReadOnly.hidden_in): left out, as absent."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.cql.system import is_system_keyspace
    from cqlsh_ext.reading.resolve import table_target

    cluster = ctx.cluster
    try:
        cluster.refresh_schema_metadata(max_schema_agreement_wait=0)
    except Exception:  # noqa: BLE001 -- the schema the connection read is better than none
        pass
    meta = cluster.metadata
    keyspace_pattern, _, table_pattern = pattern.partition(".")
    keyspaces = []
    shown = hidden or (lambda keyspace, table: False)
    for name in sorted(meta.keyspaces):
        if not _matches(name, keyspace_pattern) or (not keyspace_pattern and is_system_keyspace(name)) \
                or shown(name, None):
            continue
        tables = []
        for table in sorted(meta.keyspaces[name].tables):
            if not _matches(table, table_pattern) or shown(name, table):
                continue
            target = table_target(meta, name, table)
            if target is not None:
                tables.append(_table(ctx, target, refusal(name, table)))
        keyspaces.append({"keyspace": name, "name": protect_name(name), "tables": tables})
    if pattern and not any(ks["tables"] for ks in keyspaces):
        _none_matched(pattern, meta, shown)
    return {"catalog": pattern or "*", "sample_rows": SAMPLE_ROWS, "keyspaces": keyspaces}


def _none_matched(pattern: str, meta: Any, hidden: Hidden) -> None:
    """A pattern that names no table: a warning on standard error, with the name it may have meant
    (common.text.nearest, as every misspelt name is told), never one `hidden`."""
    from cqlsh_ext.common.text import nearest
    from cqlsh_ext.output.stderr_lines import write

    keyspace, _, table = pattern.partition(".")
    names = [name for name in meta.keyspaces if not hidden(name, None)] \
        if not table or keyspace not in meta.keyspaces else \
        [f"{keyspace}.{name}" for name in meta.keyspaces[keyspace].tables if not hidden(keyspace, name)]
    meant = nearest(pattern if table else keyspace, names)
    said = f" (did you mean {meant}?)" if meant else ""
    write({"type": "warning", "kind": "not_found", "message": f"--catalog {pattern}: no table matches{said}",
           "nearest": [meant] if meant else []})


def _matches(name: str, pattern: str) -> bool:
    return not pattern or fnmatch.fnmatchcase(name, pattern)


def _table(ctx: ReadContext, target: TableTarget, refused: str | None) -> dict[str, Any]:
    from cassandra.metadata import protect_name

    from cqlsh_ext.mcp_server.table_columns import columns

    described = columns(ctx, target, 0 if refused else SAMPLE_ROWS, blob_samples=True)
    entry: dict[str, Any] = {"table": target.name,
                             "name": f"{protect_name(target.keyspace)}.{protect_name(target.name)}"}
    for column in described:
        column["column"] = column["name"]
        column["name"] = protect_name(column["name"])
    if refused:
        entry["sample"] = f"not read: {refused}"
    entry["columns"] = [{k: c[k] for k in ("column", "name", "type", "key", "holds", "sample") if k in c}
                        for c in described]
    return entry


def write(ctx: ReadContext, pattern: str, refusal: Callable[[str, str], str | None],
          hidden: Hidden | None = None) -> None:
    """The catalog on standard output, one JSON line."""
    import sys

    sys.stdout.write(json.dumps(catalog(ctx, pattern, refusal, hidden), ensure_ascii=False) + "\n")
    sys.stdout.flush()
