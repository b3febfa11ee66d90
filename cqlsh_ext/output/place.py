"""Where a value sits in a result: keyspace, table, column and, inside collections, tuples and
UDTs, the path to it. Per-column settings match on it; reports name values by it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ValuePlace:
    keyspace: str | None
    table: str | None
    column: str
    #: Steps below the column: "item" (list, set, vector), "key" / "value" (map), a tuple's
    #: position ("0", "1", ...) or a UDT field's name.
    path: tuple[str, ...] = ()

    def child(self, *steps: str) -> ValuePlace:
        """The place `steps` below this one."""
        return ValuePlace(self.keyspace, self.table, self.column, (*self.path, *steps))

    def __str__(self) -> str:
        """keyspace.table.column[.step...]; parts that are not known are left out."""
        head = ".".join(part for part in (self.keyspace, self.table) if part)
        name = f"{head}.{self.column}" if head else self.column
        return ".".join((name, *self.path))
