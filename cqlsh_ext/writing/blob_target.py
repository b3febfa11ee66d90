"""What a write reaches: one blob of a table's rows (a column, a map of blobs' value, a UDT's
field), named by the columns of the rows it sits in, as CQL spells the cell; and the one refusal
every write makes first, a keyspace of the server's own (`refuse_system`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.writing.refused import WriteRefused


@dataclass(frozen=True)
class BlobTarget:
    """The blob a write reaches: a column, or inside it a map of blobs' value (`access` its key) or
    a UDT's field (`access` its name); `holds_text` when its values are text."""

    column: str
    access: str | None = None
    container: str | None = None
    holds_text: bool = False

    def __str__(self) -> str:
        if self.container == "map":
            return f"{self.column}['{self.access}']"
        return f"{self.column}.{self.access}" if self.container == "udt" else self.column

    def to_json(self) -> dict[str, object]:
        return {"column": self.column, "access": self.access, "container": self.container,
                "text": self.holds_text}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BlobTarget:
        """KeyError, TypeError or ValueError for what is no target."""
        access, container = data.get("access"), data.get("container")
        if container not in (None, "map", "udt") or (container is None) != (access is None):
            raise ValueError("container")
        if not isinstance(data["column"], str) or not isinstance(data.get("text", False), bool):
            raise TypeError("column")
        return cls(data["column"], None if access is None else str(access),
                   None if container is None else str(container), bool(data.get("text", False)))


def refuse_system(keyspace: str) -> None:
    """WriteRefused for a keyspace of the server's own (system, system_auth, system_schema, ...,
    Amazon Keyspaces' system_*): an edit, a rewrite, UNDO and RESUME never write there (a journal
    naming system_auth.roles would otherwise carry a password hash into a role)."""
    from cqlsh_ext.cql.system import is_system_keyspace

    if is_system_keyspace(keyspace):
        raise WriteRefused(f"{keyspace} is a system keyspace: cqlsh-ext never writes there")


def quote(name: str) -> str:
    from cqlsh_ext.query.grammar import quote as quote_name

    return quote_name(name)


def target_text(blob: BlobTarget) -> str:
    """The cell as CQL names it: `data`, `m[?]` (the key bound first), `u.payload`."""
    target = quote(blob.column)
    if blob.container == "map":
        return target + "[?]"
    if blob.container == "udt":
        return target + "." + quote(str(blob.access))
    return target


def selected_text(blob: BlobTarget) -> str:
    """The cell in a SELECT: `data`, `m['k']`, `u.payload` (a literal key: SELECT takes no marker there)."""
    if blob.container == "map":
        return quote(blob.column) + "['" + str(blob.access).replace("'", "''") + "']"
    return target_text(blob)


def key_columns(meta: Any, column: str) -> list[str]:
    """The columns that name the row a value of `column` sits in: the primary key, or the
    partition key alone for a static column (one value per partition)."""
    if getattr(meta.columns[column], "is_static", False):
        return [c.name for c in meta.partition_key]
    return [c.name for c in (*meta.partition_key, *meta.clustering_key)]


def key_text(key: Mapping[str, Any]) -> str:
    """A row's key as the lines name it: `p = 1, c = 'x'`."""
    return ", ".join(f"{name} = {value!r}" if isinstance(value, str) else f"{name} = {value}"
                     for name, value in key.items())


def inside(value: Any, blob: BlobTarget) -> Any:
    """The blob's value in the column's: a map of blobs' value by its key, a UDT's field."""
    if value is None or blob.container is None:
        return value
    if blob.container == "map":
        return value.get(blob.access)
    return getattr(value, str(blob.access), None)
