"""A table's schema as the payload-query parser needs it, from the driver's metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.types import udts_of
from cqlsh_ext.query.grammar import Schema

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell


def table_meta(shell: Shell, keyspace: str | None, table: str) -> Any:
    """The driver's TableMetadata (or a materialized view's), None when unknown."""
    if not keyspace:
        return None
    ks = shell.conn.metadata.keyspaces.get(keyspace)
    if ks is None:
        return None
    return ks.tables.get(table) or ks.views.get(table)


def schema_of(shell: Shell, keyspace: str, meta: Any) -> Schema:
    udts = udts_of(shell.conn.metadata.keyspaces[keyspace])
    columns = {name: column.cql_type for name, column in meta.columns.items()}
    return Schema(columns, [c.name for c in meta.partition_key], udts)


def spec_place(schema: Schema, column: str, access: str | None) -> tuple[str, ...]:
    """The steps below `column` where its blob sits, as column settings name them: a map's
    values are `value`, a UDT's field is its name."""
    if access is None:
        return ()
    cqltype = schema.type_of(column)
    return ("value",) if cqltype is not None and cqltype.kind == "map" else (access,)
