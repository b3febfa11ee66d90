"""What describe_table says of a table's columns: type, key, and the payloads they hold: blobs
(cql.types: a blob column, or blobs inside a collection, tuple or UDT), and text columns outside
the primary key that hold JSON, told from a few rows (scanning.scan.one_page: one request) by the
value engine, the one thing that reads a stored value (payload.engine)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell

BLOB, BLOBS_INSIDE, JSON_TEXT, TEXT = "blob", "blobs inside", "JSON text", "text"


def columns(shell: Shell, keyspace: str, table: str, sample_rows: int) -> list[dict[str, Any]]:
    """Each column of keyspace.table: name, type, key, holds. Raises LookupError for no such table."""
    from cqlsh_ext.cql.types import parse, udts_of

    ks = shell.conn.metadata.keyspaces.get(keyspace)
    meta = ks.tables.get(table) if ks is not None else None
    if meta is None:
        raise LookupError(f"no table {keyspace}.{table} in the schema")
    udts = udts_of(ks)
    keys = {c.name: "partition" for c in meta.partition_key}
    keys.update({c.name: "clustering" for c in meta.clustering_key})
    described: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for name, column in meta.columns.items():
        cqltype = parse(column.cql_type, udts)
        entry: dict[str, Any] = {"name": name, "type": column.cql_type, "key": keys.get(name)}
        if cqltype.is_blob:
            entry["holds"] = BLOB
        elif cqltype.holds():
            entry["holds"] = BLOBS_INSIDE
        elif cqltype.is_text and name not in keys:
            entry["holds"] = TEXT
            texts.append(entry)
        else:
            entry["holds"] = None
        described.append(entry)
    if texts:
        _json_text(shell, keyspace, table, texts, sample_rows)
    return described


def _json_text(shell: Shell, keyspace: str, table: str, texts: list[dict[str, Any]],
               sample_rows: int) -> None:
    """Mark the text columns whose values read hold JSON ("JSON text"), with the counts."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.scanning.scan import error_text, one_page

    query = (f"SELECT {', '.join(protect_name(e['name']) for e in texts)} FROM "
             f"{protect_name(keyspace)}.{protect_name(table)} LIMIT {sample_rows}")
    try:
        rows = one_page(shell.session, query, sample_rows, shell.session.default_timeout,
                        shell.consistency_level)
    except Exception as err:
        for entry in texts:
            entry["sample"] = f"not read: {error_text(err)}"
        return
    for entry in texts:
        values = [row[entry["name"]].encode() for row in rows if row[entry["name"]]]
        engine = ValueEngine(cap=shell.settings.display.cap)
        json_values = sum(1 for view in engine.views(values) if view.label == "json")
        entry["sample"] = {"values_read": len(values), "json": json_values}
        if values and json_values == len(values):
            entry["holds"] = JSON_TEXT
