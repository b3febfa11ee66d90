"""A table holding a secret and its materialized view: what the read-only doors' policy tests
(the shell's and MCP's) ask each door to keep on the server."""

from __future__ import annotations

from typing import Any

#: A value the policy's refusal must keep on the server, in a table and in its materialized view.
SALARY = "salary-9f3b-never-shown"


def staff_and_its_view(cassandra: Any, prefix: str, *more: str) -> str:
    """A new keyspace (named from `prefix`) with `staff` (one row, its salary SALARY) and
    `staff_by_team`, a materialized view of it; then the `more` statements run in it."""
    keyspace: str = cassandra.create_keyspace(prefix)
    session = cassandra.session(keyspace)
    try:
        session.execute("CREATE TABLE staff (id int PRIMARY KEY, team text, salary text)")
        session.execute(f"INSERT INTO staff (id, team, salary) VALUES (1, 'ops', '{SALARY}')")
        session.execute("CREATE MATERIALIZED VIEW staff_by_team AS SELECT * FROM staff "
                        "WHERE team IS NOT NULL AND id IS NOT NULL PRIMARY KEY (team, id)")
        for statement in more:
            session.execute(statement)
    finally:
        session.shutdown()
    return keyspace
