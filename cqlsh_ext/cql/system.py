"""The keyspaces of the server's own: Apache Cassandra's, DataStax Enterprise's and Amazon
Keyspaces'. DESCRIBE SCHEMA on Amazon Keyspaces leaves them out; nothing of cqlsh-ext writes to
them (cqlsh_ext.writing.blob_target)."""

from __future__ import annotations

SYSTEM_KEYSPACES = frozenset({
    "system", "system_schema", "system_auth", "system_distributed", "system_traces", "system_views",
    "system_virtual_schema",
    # Amazon Keyspaces
    "system_schema_mcs", "system_multiregion_info",
})


def is_system_keyspace(name: str) -> bool:
    """A keyspace of the server's own: one of SYSTEM_KEYSPACES, or any other named system_*
    (Amazon Keyspaces adds its own; a keyspace of a user's is not named so), in any case."""
    lowered = name.lower()
    return lowered in SYSTEM_KEYSPACES or lowered.startswith("system_")
