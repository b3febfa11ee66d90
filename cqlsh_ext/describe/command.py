"""The shell's side of DESCRIBE PAYLOAD: what completes it and what a mistyped DESCRIBE is told.

The statement is describe_payload's (describe/declared.py): the shell reads it from that declaration,
which tells it from cqlsh's own DESCRIBE (describe.parse.recognizes), before cqlsh's DESCRIBE
grammar would refuse `DESCRIBE PAYLOAD ks.t.c` ("Improper DESCRIBE command"). No `describe` command
is declared: it would replace the shell's do_describe, and with it stock DESCRIBE and the
client-side DESCRIBE of Amazon Keyspaces. Its completion is written from the declaration
(shell.completion): Tab offers PAYLOAD after DESCRIBE, then tables, then the table's
payload columns (`complete_column`, declared with the Statement). Nothing heavy is imported here:
the shell imports this module at start-up.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.common.text import nearest, unknown


def complete_column(ctxt: Any, shell: Any) -> list[str]:
    """Tab after `DESCRIBE PAYLOAD ks.table.`: the table's columns that hold payloads (blobs, or
    blobs inside collections and UDTs, and text), quoted as CQL needs."""
    from cqlsh_ext.cql.types import parse as parse_type
    from cqlsh_ext.cql.types import udts_of

    try:
        keyspace = ctxt.get_binding("ksname", None)
        keyspace = shell.cql_unprotect_name(keyspace) if keyspace else shell.current_keyspace
        table = shell.cql_unprotect_name(ctxt.get_binding("cfname"))
        ks = shell.conn.metadata.keyspaces[keyspace]
        meta = ks.tables.get(table) or ks.views.get(table)
        udts = udts_of(ks)
        names = [name for name, column in meta.columns.items()
                 if (t := parse_type(column.cql_type, udts)).holds() or t.is_text]
    except Exception:  # metadata mid-refresh, an unknown table: nothing to offer
        return []
    # Quoted as cqlsh's own completers quote names (cqlsh swallows a completer's exception).
    from cassandra.metadata import maybe_escape_name

    return [maybe_escape_name(name) for name in names]


#: The words that go after DESCRIBE: cqlsh's and PAYLOAD (a name goes there too).
DESCRIBE_WORDS = ("KEYSPACES", "KEYSPACE", "TABLES", "TABLE", "TYPES", "TYPE", "FUNCTIONS", "FUNCTION",
                  "AGGREGATES", "AGGREGATE", "INDEX", "MATERIALIZED", "SCHEMA", "FULL", "CLUSTER", "ONLY",
                  "PAYLOAD")


def mistyped(words: list[str]) -> str | None:
    """A DESCRIBE cqlsh cannot parse whose second word is near one of DESCRIBE_WORDS, none of
    them ('DESCRIBE PAYLOD ks.t.data'): that word, and the words. One near none may be a name:
    cqlsh's own answer."""
    if len(words) < 2 or not words[1][:1].isalpha() or nearest(words[1], DESCRIBE_WORDS) is None:
        return None
    return f"{words[0].upper()} {unknown('word', words[1], DESCRIBE_WORDS, 'a name')}"

