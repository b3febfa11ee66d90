"""The keyspaces of the server's own: Apache Cassandra's, DataStax Enterprise's and Amazon
Keyspaces'. One rule for every part that asks: nothing of cqlsh-ext writes to them
(cqlsh_ext.writing.blob_target), DESCRIBE SCHEMA on Amazon Keyspaces and the agent's catalog leave
them out, and `cqlsh-ext mcp` reads only the tables of theirs its policy names
(mcp_server/policy.py, resources.py).

Names are as the server spells them in system_schema.keyspaces: its own are in lower case, and a
keyspace created quoted ("System_auth") is another keyspace, an application's. A name read from a
statement is compared after CQL's folding (an unquoted name in lower case)."""

from __future__ import annotations

__all__ = ["CASSANDRA_SYSTEM_KEYSPACES", "SYSTEM_KEYSPACES", "is_system_keyspace"]

#: The system keyspaces of Apache Cassandra 5 (and of its next release: system_cluster_metadata).
CASSANDRA_SYSTEM_KEYSPACES = ("system", "system_schema", "system_auth", "system_distributed", "system_traces",
                              "system_views", "system_virtual_schema", "system_cluster_metadata")
#: Every system keyspace known by name: Cassandra's, Amazon Keyspaces' and DataStax Enterprise's.
SYSTEM_KEYSPACES = frozenset({
    *CASSANDRA_SYSTEM_KEYSPACES,
    # Amazon Keyspaces
    "system_schema_mcs", "system_multiregion_info",
    # DataStax Enterprise
    "dse_security", "dse_system", "dse_perf", "dse_insights", "dse_insights_local", "dse_leases",
    "solr_admin",
})


def is_system_keyspace(name: str) -> bool:
    """Whether `name` (as the schema spells it) is a keyspace of the server's own: one of
    SYSTEM_KEYSPACES, or any other named system_* or dse_* (a keyspace a later release adds is one
    too)."""
    return name in SYSTEM_KEYSPACES or name.startswith(("system_", "dse_"))
