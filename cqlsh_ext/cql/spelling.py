"""CQL text that cqlsh-ext writes itself, from typed parts: a name as CQL writes it (quoted when it
must be; a written one read back, `unquoted`, `schema_name`), and the SELECT of a table's columns
that every whole-table reading sends (a report of a table or of its column, Spark mode's scans).
Requests carry the parts; the text is made here, at the reading, once."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["columns_select", "schema_name", "spell", "unquoted"]


def spell(name: str) -> str:
    """A name as the schema spells it, written as CQL writes it (quoted when it must be)."""
    from cassandra.metadata import protect_name

    return str(protect_name(name))


def unquoted(name: str) -> str:
    """A "quoted name" as the schema spells it (its doubled quotes one); any other text as it is."""
    return name[1:-1].replace('""', '"') if _quoted(name) else name


def schema_name(name: str) -> str:
    """A name as a statement wrote it, as the schema spells it: "quoted" as is, else lower case."""
    return unquoted(name) if _quoted(name) else name.lower()


def _quoted(name: str) -> bool:
    return len(name) >= 2 and name[0] == name[-1] == '"'


def columns_select(keyspace: str, table: str, columns: Sequence[str]) -> str:
    """SELECT the columns FROM keyspace.table: whole rows of the table, so that it may be split
    into token ranges."""
    return f"SELECT {', '.join(map(spell, columns))} FROM {spell(keyspace)}.{spell(table)}"
