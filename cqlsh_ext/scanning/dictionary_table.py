"""Dictionaries kept in a table (`--dictionary-table ks.table`, cqlshrc's `dictionary_table`): its
blob values read once the shell is connected, each into the process's store (codecs.dictionaries)
as a file would be: a zstd dictionary by its magic and ID, anything else a zlib preset dictionary.
The table's layout is the team's: any primary key, any blob columns (`CREATE TABLE
shop.dictionaries (name text PRIMARY KEY, data blob)`). At most dictionaries.MAX_COUNT rows are
read; a value that cannot be a dictionary, or a table that cannot be read, is one line on stderr
and the shell goes on."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.codecs import dictionaries


def load(session: Any, name: str) -> int:
    """The dictionaries of table `name` (keyspace.table) added to the store: how many."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.codecs._common import reason
    from cqlsh_ext.common.text import say  # a notice, not a statement's error: no exit status

    keyspace, _, table = name.partition(".")
    query = f"SELECT * FROM {protect_name(keyspace)}.{protect_name(table)} LIMIT {dictionaries.MAX_COUNT}"
    try:
        rows = list(session.execute(query))
    except Exception as err:  # any driver error: the one line, not a traceback
        say(f"dictionary table {name}: cannot be read ({reason(err).splitlines()[0]})")
        return 0
    added = 0
    for row in rows:
        # cqlsh's session gives ordered dicts; a driver's default, named tuples
        values = dict(row) if isinstance(row, dict) else row._asdict() if hasattr(row, "_asdict") else {}
        key = next(iter(values.values()), None)
        for column, value in values.items():
            if not isinstance(value, (bytes, bytearray)):
                continue
            source = f"table {name}, {column} of {key!r}"
            try:
                dictionaries.add(dictionaries.from_bytes(bytes(value), source))
            except dictionaries.DictionaryError as err:
                say(f"dictionary {err}")
                continue
            added += 1
    return added
