"""The one way a stored value is written back: an edit, its UNDO and COMPRESSION REWRITE all write
through a CellWriter, one blob of one row at a time, with one of two mechanisms.

- *At the cell's write time + 1* (TIMESTAMP): `UPDATE ... USING TIMESTAMP <writetime read + 1> AND
  TTL <seconds left> SET col = <new> WHERE <key>`, no condition, then the cell is read again.
  Cassandra keeps the write with the highest timestamp, so any write made after the read (plain or
  conditioned, by any client whose clock is not behind the cell's by more than the microsecond)
  wins over this one, and the read after the write says whether the new value holds: if not, the
  row changed since it was read and is left alone. Retrying such a write is harmless (the same
  timestamp, the same value), so a write whose outcome is unknown (a timeout) is read again and
  sent again while the row still holds what was read.
- *On the condition that the row holds what was read* (CONDITION): `UPDATE ... SET col = <new>
  WHERE <key> IF col = <old>` (a lightweight transaction, at LOCAL_SERIAL on Amazon Keyspaces).
  Only writers that condition too are safe from it: a plain UPDATE made between the transaction's
  read and its commit can be lost (the Paxos ballot's timestamp wins; Cassandra's own caveat).
  Used where write timestamps cannot be: Amazon Keyspaces without client-side timestamps on the
  table, or a server that keeps no write time for a map's element or a UDT's field.

Either way the cell keeps its TTL: the seconds it had left when read, less the whole seconds since
(a cell whose time ran out meanwhile is left alone), and a cell without one is written with TTL 0,
so a table's default_time_to_live does not start to apply. Writes and the reads after them are at
LOCAL_QUORUM, or the session's level when it is stronger, so the read sees the write.

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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.edit.journal import BlobTarget

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell

TIMESTAMP = "timestamp"
CONDITION = "condition"
#: Amazon Keyspaces takes a client timestamp at most this far in the past (microseconds), and the
#: margin kept inside that window.
KEYSPACES_PAST_US = 2 * 86_400 * 1_000_000
WINDOW_MARGIN_US = 600 * 1_000_000

APPLIED = "applied"
CHANGED = "changed"
EXPIRED = "expired"
CHANGED_SINCE = "changed since it was read: left alone"
EXPIRED_SINCE = "its TTL ran out since it was read: left alone"


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


def choose(shell: Shell, keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str]) -> Mechanism:
    """The mechanism for this table and blob (see the module doc): timestamps where the server keeps
    the cell's write time and takes a client's, else the condition with its reason."""
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.scanning.cost import pricing

    return choose_for(shell.session, keyspace, table, blob, keys, pricing(shell_context(shell)).keyspaces)


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
        session.prepare(_read_text(keyspace, table, blob, keys))
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


def _quote(name: str) -> str:
    from cqlsh_ext.query.grammar import quote

    return quote(name)


def target_text(blob: BlobTarget) -> str:
    """The cell as CQL names it: `data`, `m[?]` (the key bound first), `u.payload`."""
    target = _quote(blob.column)
    if blob.container == "map":
        return target + "[?]"
    if blob.container == "udt":
        return target + "." + _quote(str(blob.access))
    return target


def selected_text(blob: BlobTarget) -> str:
    """The cell in a SELECT: `data`, `m['k']`, `u.payload` (a literal key: SELECT takes no marker there)."""
    if blob.container == "map":
        return _quote(blob.column) + "['" + str(blob.access).replace("'", "''") + "']"
    return target_text(blob)


def _read_text(keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str]) -> str:
    cell = selected_text(blob)
    where = " AND ".join(f"{_quote(k)} = ?" for k in keys)
    return (f"SELECT {cell}, WRITETIME({cell}), TTL({cell}) FROM {_quote(keyspace)}.{_quote(table)} "
            f"WHERE {where}")


@dataclass(frozen=True)
class Cell:
    """A cell as read: its value (None when null or the row is gone), write time and TTL left."""

    value: Any
    writetime: int | None
    ttl: int | None


@dataclass
class Written:
    """One row's write: APPLIED, CHANGED (left alone) or EXPIRED; the timestamp written (TIMESTAMP);
    the errors retried on the way, by name (the pace slows down on them)."""

    outcome: str
    at: int | None = None
    retried: list[str] = field(default_factory=list)

    @property
    def applied(self) -> bool:
        return self.outcome == APPLIED


class WriteFailed(Exception):
    """A write that failed for good (the server's error, or retries used up): its outcome is the
    server's to tell; str() is the error's one line."""


def write_level(shell_level: Any) -> Any:
    """LOCAL_QUORUM, or the session's level when stronger: the read after a write sees it."""
    from cassandra import ConsistencyLevel

    strong = {ConsistencyLevel.QUORUM, ConsistencyLevel.LOCAL_QUORUM, ConsistencyLevel.EACH_QUORUM,
              ConsistencyLevel.ALL}
    return shell_level if shell_level in strong else ConsistencyLevel.LOCAL_QUORUM


def retry_reason(err: BaseException) -> str | None:
    """A short name when a write's error is worth reading the row again and retrying for."""
    from cassandra import WriteTimeout

    from cqlsh_ext.scanning.scan import retry_reason as read_reason

    if isinstance(err, WriteTimeout):
        return "write timeout (Keyspaces: throttling)"
    return read_reason(err)


class CellWriter:
    """Reads and writes one blob of a table's rows by key, with its Mechanism (see the module doc).
    Thread-safe: COMPRESSION REWRITE writes from several threads at once."""

    def __init__(self, session: Any, keyspace: str, table: str, blob: BlobTarget, keys: Sequence[str],
                 mechanism: Mechanism, consistency: Any, serial: Any, default_ttl: int = 0) -> None:
        from cassandra import ConsistencyLevel

        self.session = session
        self.blob = blob
        self.keys = list(keys)
        self.mechanism = mechanism
        self.consistency = write_level(consistency)
        self.serial = ConsistencyLevel.LOCAL_SERIAL if mechanism.keyspaces or serial is None else serial
        #: A cell without TTL is written with TTL 0 only where it matters (the table has a default
        #: TTL) or costs nothing (Apache Cassandra): Amazon Keyspaces takes USING TTL only on tables
        #: with TTL enabled.
        self.ttl_zero = default_ttl > 0 or not mechanism.keyspaces
        self.element: tuple[Any, ...] = (blob.access,) if blob.container == "map" else ()
        name = f"{_quote(keyspace)}.{_quote(table)}"
        where = " AND ".join(f"{_quote(k)} = ?" for k in keys)
        target = target_text(blob)
        self._read = session.prepare(_read_text(keyspace, table, blob, keys)) if mechanism.timestamped \
            else session.prepare(f"SELECT {selected_text(blob)}, TTL({selected_text(blob)}) FROM {name} "
                                 f"WHERE {where}")
        self._writes: dict[bool, Any] = {}
        for with_ttl in (True, False):
            if mechanism.timestamped:
                using = "USING TIMESTAMP ? AND TTL ?" if with_ttl else "USING TIMESTAMP ?"
                text = f"UPDATE {name} {using} SET {target} = ? WHERE {where}"
            else:
                using = "USING TTL ? " if with_ttl else ""
                text = f"UPDATE {name} {using}SET {target} = ? WHERE {where} IF {target} = ?"
            self._writes[with_ttl] = session.prepare(text)
        #: The driver's types of the key's bind markers, in key order.
        self.key_types = [c[3] for c in self._read.column_metadata]

    @classmethod
    def of(cls, shell: Shell, keyspace: str, meta: Any, blob: BlobTarget, keys: Sequence[str],
           mechanism: Mechanism | None = None) -> CellWriter:
        chosen = mechanism or choose(shell, keyspace, meta.name, blob, keys)
        default_ttl = int(getattr(meta, "options", {}).get("default_time_to_live", 0) or 0)
        return cls(shell.session, keyspace, meta.name, blob, keys, chosen, shell.consistency_level,
                   shell.serial_consistency_level, default_ttl)

    # ------------------------------------------------------------------ keys
    @property
    def protocol(self) -> int:
        return int(self.session.cluster.protocol_version)

    def serialized(self, key: Sequence[Any]) -> list[bytes]:
        return [t.to_binary(v, self.protocol) for t, v in zip(self.key_types, key, strict=True)]

    def values(self, serialized: Sequence[bytes]) -> list[Any]:
        return [t.from_binary(b, self.protocol) for t, b in zip(self.key_types, serialized, strict=True)]

    # ------------------------------------------------------------------ reads
    def read(self, key: Sequence[Any], serial: bool = False) -> Cell:
        """The cell now (at SERIAL after a conditioned write whose outcome is unknown: it completes
        a transaction in progress)."""
        from cassandra.query import BoundStatement

        bound = BoundStatement(self._read, consistency_level=self.serial if serial else self.consistency)
        bound.bind(list(key))
        row = self.session.execute(bound).one()
        if row is None:
            return Cell(None, None, None)
        values = list(row.values()) if isinstance(row, Mapping) else list(row)
        if self.mechanism.timestamped:
            return Cell(values[0], values[1], values[2])
        return Cell(values[0], None, values[1])

    # ------------------------------------------------------------------ writes
    def write(self, key: Sequence[Any], expected: Any, new: Any, writetime: int | None,
              expires: int | None) -> Written:
        """`new` into the row of `key` where it holds `expected` (its cell written at `writetime`,
        expiring at `expires`, epoch seconds, or never): APPLIED, CHANGED or EXPIRED; WriteFailed
        when the server fails it for good."""
        from cqlsh_ext.common import retry

        ttl = ttl_left(expires)
        if ttl is not None and ttl <= 0:
            return Written(EXPIRED)
        at = self.timestamp(writetime) if self.mechanism.timestamped else None
        if self.mechanism.timestamped and at is None:
            return Written(CHANGED)  # a cell with no write time holds nothing: nothing to rewrite
        written = Written(CHANGED, at)
        attempts = 0
        while True:
            try:
                applied = self._send(key, expected, new, at, ttl)
            except Exception as err:
                reason = retry_reason(err)
                if reason is None or retry.exhausted(attempts):
                    from cqlsh_ext.scanning.scan import error_text

                    raise WriteFailed(error_text(err)) from None
                attempts += 1
                written.retried.append(reason)
                time.sleep(retry.delay(attempts))
                applied = None  # unknown: the row says
            if applied is False:
                return written
            try:
                cell = self.read(key, serial=not self.mechanism.timestamped and applied is None)
            except Exception as err:
                reason = retry_reason(err)
                if reason is None or retry.exhausted(attempts):
                    from cqlsh_ext.scanning.scan import error_text

                    raise WriteFailed(error_text(err)) from None
                attempts += 1
                written.retried.append(reason)
                time.sleep(retry.delay(attempts))
                continue
            if same(cell.value, new) and (at is None or cell.writetime == at):
                written.outcome = APPLIED
                return written
            if applied is None and same(cell.value, expected) and (at is None or cell.writetime == writetime):
                ttl = ttl_left(expires)
                if ttl is not None and ttl <= 0:
                    return Written(EXPIRED, at, written.retried)
                continue  # not applied yet: sent again (the same value, the same timestamp)
            return written

    def timestamp(self, writetime: int | None) -> int | None:
        """The timestamp a cell written at `writetime` is rewritten at (see the module doc)."""
        if writetime is None:
            return None
        at = int(writetime) + 1
        if self.mechanism.window:
            at = max(at, int(time.time() * 1_000_000) - KEYSPACES_PAST_US + WINDOW_MARGIN_US)
        return at

    def _send(self, key: Sequence[Any], expected: Any, new: Any, at: int | None, ttl: int | None) -> bool:
        from cassandra.query import BoundStatement

        with_ttl = ttl is not None or self.ttl_zero
        prepared = self._writes[with_ttl]
        bound = BoundStatement(prepared, consistency_level=self.consistency,
                               serial_consistency_level=self.serial)
        ttl_value = [ttl or 0] if with_ttl else []
        if self.mechanism.timestamped:
            bound.bind([at, *ttl_value, *self.element, new, *key])
            self.session.execute(bound)
            return True
        bound.bind([*ttl_value, *self.element, new, *key, *self.element, expected])
        row = self.session.execute(bound).one()
        # The shell's sessions make rows dicts: the driver's was_applied cannot read those.
        return bool(row["[applied]"] if isinstance(row, Mapping) else row[0])


def ttl_left(expires: int | None) -> int | None:
    """Seconds from now until `expires` (epoch seconds), None for a cell that never expires."""
    return None if expires is None else int(expires) - int(time.time())


def same(stored: Any, wanted: Any) -> bool:
    """Whether a cell holds `wanted` (bytes and text compared as the column holds them)."""
    if stored is None or wanted is None:
        return stored is None and wanted is None
    return raw(stored) == raw(wanted)


def raw(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)
