"""A statement's table, looked up once: the one place that reads a table from the driver's schema
metadata. Every reader (payload queries, exports, DESCRIBE PAYLOAD, the COMPRESSION reports,
edits, Spark's jobs, `cqlsh-ext mcp`) gets a TableTarget from here: the keyspace and table as the
schema spells them, the driver's metadata, the schema the query parser reads (query.grammar's
Schema), the key columns and the payload columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.query.grammar import Schema

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.cql.types import CqlType
    from cqlsh_ext.payload.places import ValuePlace

__all__ = ["TableTarget", "find_table", "statement_table", "table_target"]


@dataclass(frozen=True)
class TableTarget:
    """A table (or a materialized view) found in the schema."""

    keyspace: str
    name: str
    #: The driver's TableMetadata (or MaterializedViewMetadata).
    meta: Any
    #: What the query parser reads: each column's CQL type text, the partition key, the UDTs.
    schema: Schema
    partition_key: tuple[str, ...]
    clustering_key: tuple[str, ...]
    #: A materialized view, not a table.
    view: bool = False

    @property
    def qualified(self) -> str:
        return f"{self.keyspace}.{self.name}"

    @property
    def columns(self) -> list[str]:
        """The columns as the server's `SELECT *` gives them (what `*` stands for): the key
        columns, then the static ones, then the others, each by name (the driver's metadata has
        the static and the other columns by name together)."""
        keys = [*self.partition_key, *self.clustering_key]
        rest = [name for name in self.meta.columns if name not in keys]
        static = [name for name in rest if getattr(self.meta.columns[name], "is_static", False)]
        return [*keys, *static, *(name for name in rest if name not in static)]

    def type_of(self, column: str) -> CqlType | None:
        return self.schema.type_of(column)

    def payload_columns(self) -> list[str]:
        """The columns a table named alone is measured by: those that hold a blob, and the text
        columns outside the primary key (cql.types.table_payload_columns)."""
        from cqlsh_ext.cql.types import table_payload_columns

        return table_payload_columns(self.meta, self.schema.udts)

    def place(self, column: str) -> ValuePlace:
        """Where a column's values sit (column settings match on it)."""
        from cqlsh_ext.payload.places import ValuePlace

        return ValuePlace(self.keyspace, self.name, column)


def table_target(metadata: Any, keyspace: str | None, table: str) -> TableTarget | None:
    """keyspace.table in the driver's schema metadata (`cluster.metadata`), None when unknown."""
    from cqlsh_ext.cql.types import udts_of

    if not keyspace:
        return None
    ks = metadata.keyspaces.get(keyspace)
    if ks is None:
        return None
    meta = ks.tables.get(table)
    view = meta is None
    if view:
        meta = ks.views.get(table)
    if meta is None:
        return None
    partition = tuple(c.name for c in meta.partition_key)
    clustering = tuple(c.name for c in meta.clustering_key)
    columns = {name: column.cql_type for name, column in meta.columns.items()}
    return TableTarget(keyspace, meta.name, meta, Schema(columns, list(partition), udts_of(ks)), partition,
                       clustering, view)


def find_table(cluster: Any, current: str | None, keyspace: str | None, table: str,
               refresh: bool = False) -> TableTarget | None:
    """[keyspace.]table (a table alone is in the `current` keyspace) in the cluster's schema.
    `refresh`: a table the driver does not know yet (made a moment ago: the driver learns of it by
    an event) is looked up once more from the server."""
    keyspace = keyspace or current
    found = table_target(cluster.metadata, keyspace, table)
    if found is not None or not refresh or not keyspace:
        return found
    try:
        if cluster.metadata.keyspaces.get(keyspace) is None:
            cluster.refresh_schema_metadata()
        else:
            cluster.refresh_table_metadata(keyspace, table)
    except Exception:  # noqa: BLE001 - no such table, the server away: the caller says it
        return None
    return table_target(cluster.metadata, keyspace, table)


def statement_table(cluster: Any, current: str | None, statement: Lexed | str,
                    refresh: bool = False) -> tuple[tuple[str | None, str] | None, TableTarget | None]:
    """The table a SELECT ... FROM names (query.recognize.table_of: (keyspace or None, table), or
    None for no such statement) and its TableTarget (None when unknown)."""
    from cqlsh_ext.query.recognize import table_of

    named = table_of(statement)
    if named is None:
        return None, None
    return named, find_table(cluster, current, named[0], named[1], refresh)
