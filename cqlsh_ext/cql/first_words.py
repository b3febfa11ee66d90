"""CQL's own statements by their first word, as the server reads them: Apache Cassandra 5.0's
parser (src/antlr/Parser.g, the rule `cqlStatement`, the statements of the 5.0.6 jar). The one
declaration every door that sorts a statement by its first word reads: the Python API (db.query
reads, db.execute writes: api/call.py), the read-only rule (features/read_rule.py) and MCP's gate
(mcp_server/gate.py).

A batch is `BEGIN [UNLOGGED | COUNTER] BATCH ... APPLY BATCH`: BATCH and APPLY start no statement.
MOVE and PRUNE are no CQL of Cassandra's (its lexer has neither word; PRUNE MATERIALIZED VIEW is
ScyllaDB's): the server answers them with a syntax error, as it does any other word."""

from __future__ import annotations

__all__ = ["FIRST_WORDS", "READS", "SESSION", "WRITES"]

#: The statements that read: SELECT, DESCRIBE (DESC), LIST (roles, users, permissions).
READS = frozenset({"select", "describe", "desc", "list"})
#: The statements that write the database: its rows, its schema, its roles and permissions (ADD
#: IDENTITY: 5.0's mutual TLS identities).
WRITES = frozenset({"insert", "update", "delete", "begin", "truncate", "create", "alter", "drop", "grant",
                    "revoke", "add"})
#: The statement that changes the session: USE (the keyspace in use).
SESSION = frozenset({"use"})
#: Every first word of a statement of CQL's, lower case.
FIRST_WORDS = READS | WRITES | SESSION
