"""A table's status on Amazon Keyspaces: creating a table there is asynchronous.

CREATE TABLE returns at once; the table takes writes only once system_schema_mcs.tables says its
`status` is ACTIVE (CREATING before that; Keyspaces' developer guide, "Check table creation
status"). Cassandra has no such table: there the driver waits for schema agreement itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

ACTIVE = "ACTIVE"
STATUS_QUERY = ("SELECT status FROM system_schema_mcs.tables "
                "WHERE keyspace_name = %s AND table_name = %s")
#: Polls start this far apart and back off to the longest; a table that is not ACTIVE within
#: WAIT_SECONDS is an error (Keyspaces creates one in seconds, a minute at worst).
FIRST_POLL, LONGEST_POLL = 0.25, 2.0
WAIT_SECONDS = 300.0


class NotActive(RuntimeError):
    """A table did not become ACTIVE; str() is the one-line reason."""


@dataclass
class ActiveWait:
    """What waiting for tables showed: the statuses seen per table, in order, and the time taken."""

    statuses: dict[str, list[str]] = field(default_factory=dict)
    polls: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"polls": self.polls, "seconds": round(self.seconds, 3), "statuses": self.statuses}


def wait_until_active(session: Any, keyspace: str, tables: Sequence[str], stopped: Callable[[], bool],
                      timeout: float = WAIT_SECONDS, wait: float | None = None) -> ActiveWait:
    """Poll system_schema_mcs.tables until every table in `tables` is ACTIVE. NotActive when one
    is not within `timeout` seconds or its status cannot be read; returns early when `stopped()`."""
    started = time.monotonic()
    seen = ActiveWait({name: [] for name in tables})
    waiting = list(tables)
    pause = FIRST_POLL
    while waiting and not stopped():
        for name in list(waiting):
            try:
                row = session.execute(STATUS_QUERY, (keyspace, name), timeout=wait).one()
            except Exception as err:
                raise NotActive(f"cannot read the status of {keyspace}.{name} from system_schema_mcs.tables: "
                                f"{type(err).__name__}: {err}") from None
            seen.polls += 1
            status = "(none)" if row is None else str(row["status"] if isinstance(row, dict) else row[0])
            if not seen.statuses[name] or seen.statuses[name][-1] != status:
                seen.statuses[name].append(status)
            if status == ACTIVE:
                waiting.remove(name)
        if not waiting:
            break
        if time.monotonic() - started > timeout:
            states = ", ".join(f"{name} {seen.statuses[name][-1]}" for name in waiting)
            raise NotActive(f"not ACTIVE after {timeout:g} s: {states}")
        time.sleep(pause)
        pause = min(LONGEST_POLL, pause * 2)
    seen.seconds = time.monotonic() - started
    return seen
