"""How a stored value is written back, one blob of one row at a time: the one choice every writer
makes (an edit, its UNDO, COMPRESSION REWRITE and RESUME, Spark's tasks).

- *At the cell's write time + 1* (TIMESTAMP): `UPDATE ... USING TIMESTAMP <writetime read + 1> AND
  TTL <seconds left> SET col = <new> WHERE <key>`, no condition, then the cell is read again.
  Cassandra keeps the write with the highest timestamp, so any write made after the read (plain or
  conditioned, by any client whose clock is not behind the cell's by more than the microsecond)
  wins over this one, and the read after the write says whether the new value holds: if not, the
  row changed since it was read and is left alone. Retrying such a write is harmless (the same
  timestamp, the same value), so a write whose outcome is unknown (a timeout) is read again and
  sent again while the row still holds what was read. The journal records the timestamp, and UNDO
  writes back only a cell that still holds the bytes at that write time.
- *On the condition that the row holds what was read* (CONDITION): `UPDATE ... SET col = <new>
  WHERE <key> IF col = <old>` (a lightweight transaction, at LOCAL_SERIAL on Amazon Keyspaces).
  Only writers that condition too are safe from it: a plain UPDATE made between the transaction's
  read and its commit can be lost (the Paxos ballot's timestamp wins; Cassandra's own caveat).
  Used where write timestamps cannot be: Amazon Keyspaces without client-side timestamps on the
  table, or a server that keeps no write time for a map's element or a UDT's field. No write time
  of ours is recorded: UNDO compares bytes and expiry.

Either way the cell keeps its moment of expiry (writing.ttl; a cell whose time ran out meanwhile
is left alone), and a cell without one is written with TTL 0, so a table's default_time_to_live
does not start to apply. Writes and the reads after them are at LOCAL_QUORUM, or the session's
level when it is stronger, so the read sees the write (writing.cell_writer).

Edge cases (docs/edit.md, "No lost write"):
- WRITETIME is per cell: a blob column's own, a map's element's, a UDT field's (Cassandra 5.0 reads
  them; older servers refuse WRITETIME of a non-frozen collection's element: conditions there).
- A write stamped in (writetime, writetime + 1] loses to the rewrite; one stamped at or before the
  cell's write time lost already, to the cell. So only a client whose clock is behind the cell
  writer's, within that microsecond, can lose a write to it; a tie is Cassandra's (the larger
  value wins).
- Amazon Keyspaces takes client timestamps from 2 days in the past to 5 minutes ahead: an older
  cell is written at now - 2 days + 10 minutes, so a write stamped between its write time and
  that (a clock 2 days behind) would lose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.writing.blob_target import BlobTarget, quote, selected_text

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext

TIMESTAMP = "timestamp"
CONDITION = "condition"
#: Amazon Keyspaces takes a client timestamp at most this far in the past (microseconds), and the
#: margin kept inside that window.
KEYSPACES_PAST_US = 2 * 86_400 * 1_000_000
WINDOW_MARGIN_US = 600 * 1_000_000


@dataclass(frozen=True)
class Mechanism:
    """How rows are written (TIMESTAMP or CONDITION), and, for a condition, why timestamps are
    not used (the caveat's reason)."""

    kind: str
    why: str = ""
    #: Amazon Keyspaces: client timestamps within 2 days of its clock, conditions at LOCAL_SERIAL,
    #: USING TTL only on tables with TTL.
    keyspaces: bool = False

    @property
    def window(self) -> bool:
        """Client timestamps must lie within Amazon Keyspaces' window (timestamped writes there)."""
        return self.keyspaces and self.timestamped

    @property
    def timestamped(self) -> bool:
        return self.kind == TIMESTAMP

    def promise(self, what: str = "the bytes read") -> str:
        """What the writes promise, said where they are asked for (the preview's last line); `what`
        the row must still hold."""
        if self.timestamped:
            return ("Each row is written at its cell's write time + 1 microsecond, its TTL kept, then read "
                    "again: a write anyone makes after the read wins, and that row is left alone.")
        return (f"Each row is written on the condition that it still holds {what} (its TTL kept). "
                "Caveat: a plain UPDATE another client makes between the read and the write can be lost; "
                f"no write is lost only if every writer conditions ({self.why}).")

    def to_json(self) -> dict[str, object]:
        return {"mechanism": self.kind, "why": self.why, "keyspaces": self.keyspaces}


def choose(ctx: ReadContext, keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str]) -> Mechanism:
    """The mechanism for this table and blob (see the module doc): timestamps where the server keeps
    the cell's write time and takes a client's, else the condition with its reason."""
    from cqlsh_ext.scanning.cost import pricing

    return choose_for(ctx.session, keyspace, table, blob, keys, pricing(ctx).keyspaces)


def choose_for(session: Any, keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str],
               keyspaces: bool) -> Mechanism:
    if keyspaces:
        enabled = keyspaces_client_timestamps(session, keyspace, table)
        if enabled is None:
            why = "Amazon Keyspaces: the table's client-side timestamps could not be read from " \
                "system_schema_mcs.tables"
            return Mechanism(CONDITION, why, keyspaces=True)
        if not enabled:
            why = (f"Amazon Keyspaces takes write timestamps only with client-side timestamps on the table: "
                   f"ALTER TABLE {keyspace}.{table} WITH custom_properties = {{'client_side_timestamps': "
                   "{'status': 'enabled'}}")
            return Mechanism(CONDITION, why, keyspaces=True)
        mechanism = Mechanism(TIMESTAMP, keyspaces=True)
    else:
        mechanism = Mechanism(TIMESTAMP)
    try:
        session.prepare(read_text(keyspace, table, blob, keys))
    except Exception:
        what = "a map's element" if blob.container == "map" else \
            "a UDT's field" if blob.container else "the column"
        return Mechanism(CONDITION, f"this server keeps no write time for {what} (Cassandra 5.0 does)",
                         mechanism.keyspaces)
    return mechanism


def keyspaces_client_timestamps(session: Any, keyspace: str, table: str) -> bool | None:
    """Whether Amazon Keyspaces has client-side timestamps on the table (system_schema_mcs.tables'
    custom_properties), None when that cannot be read."""
    try:
        row = session.execute("SELECT custom_properties FROM system_schema_mcs.tables WHERE keyspace_name = "
                              "%s AND table_name = %s", (keyspace, table), timeout=10).one()
    except Exception:
        return None
    if row is None:
        return None
    props = row["custom_properties"] if isinstance(row, Mapping) else row[0]
    setting = (props or {}).get("client_side_timestamps") or {}
    return str(setting.get("status", "")).lower() == "enabled"


def read_text(keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str]) -> str:
    """The cell read by key with its write time and TTL: what a timestamped write reads again."""
    cell = selected_text(blob)
    where = " AND ".join(f"{quote(k)} = ?" for k in keys)
    return (f"SELECT {cell}, WRITETIME({cell}), TTL({cell}) FROM {quote(keyspace)}.{quote(table)} "
            f"WHERE {where}")
