"""The cell writer: reads and writes one blob of a table's rows by key with the chosen mechanism
(writing.mechanism), and says what each write did (APPLIED, CHANGED: left alone, EXPIRED)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.writing.blob_target import BlobTarget, quote, selected_text, target_text
from cqlsh_ext.writing.mechanism import KEYSPACES_PAST_US, WINDOW_MARGIN_US, Mechanism, read_text
from cqlsh_ext.writing.ttl import ttl_to_send

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext

APPLIED = "applied"
CHANGED = "changed"
EXPIRED = "expired"
#: UNDO: the cell holds the bytes written, but written again since (another write time, or on a
#: condition another moment of expiry): a later write, left alone.
REWRITTEN = "rewritten"
#: UNDO: the cell holds already what UNDO writes back (the value from before the write undone: an
#: UNDO killed on its way put it back): nothing to write, done.
RESTORED = "restored"
CHANGED_SINCE = "changed since it was read: left alone"
EXPIRED_SINCE = "its TTL ran out since it was read: left alone"


@dataclass(frozen=True)
class Cell:
    """A cell as read: its value (None when null or the row is gone), write time and TTL left, and
    when the request was sent (epoch seconds: its TTL counts from then, writing.ttl)."""

    value: Any
    writetime: int | None
    ttl: int | None
    sent: float = 0.0


@dataclass
class Written:
    """One row's write: APPLIED, CHANGED or REWRITTEN (left alone) or EXPIRED; the timestamp written
    (TIMESTAMP);
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


def write_level(level: Any) -> Any:
    """LOCAL_QUORUM, or the session's `level` when stronger: the read after a write sees it."""
    from cassandra import ConsistencyLevel

    strong = {ConsistencyLevel.QUORUM, ConsistencyLevel.LOCAL_QUORUM, ConsistencyLevel.EACH_QUORUM,
              ConsistencyLevel.ALL}
    return level if level in strong else ConsistencyLevel.LOCAL_QUORUM


def retry_reason(err: BaseException) -> str | None:
    """A short name when a write's error is worth reading the row again and retrying for."""
    from cassandra import WriteTimeout

    from cqlsh_ext.scanning.scan import retry_reason as read_reason

    if isinstance(err, WriteTimeout):
        return "write timeout (Keyspaces: throttling)"
    return read_reason(err)


class CellWriter:
    """Reads and writes one blob of a table's rows by key, with its Mechanism (writing.mechanism).
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
        name = f"{quote(keyspace)}.{quote(table)}"
        where = " AND ".join(f"{quote(k)} = ?" for k in keys)
        target = target_text(blob)
        self._read = session.prepare(read_text(keyspace, table, blob, keys)) if mechanism.timestamped \
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
    def of(cls, ctx: ReadContext, keyspace: str, meta: Any, blob: BlobTarget, keys: Sequence[str],
           mechanism: Mechanism | None = None) -> CellWriter:
        from cqlsh_ext.writing.mechanism import choose

        chosen = mechanism or choose(ctx, keyspace, meta.name, blob, keys)
        default_ttl = int((getattr(meta, "options", None) or {}).get("default_time_to_live", 0) or 0)
        return cls(ctx.session, keyspace, meta.name, blob, keys, chosen, ctx.consistency,
                   ctx.serial_consistency, default_ttl)

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
        sent = time.time()
        row = self.session.execute(bound).one()
        if row is None:
            return Cell(None, None, None, sent)
        values = list(row.values()) if isinstance(row, Mapping) else list(row)
        if self.mechanism.timestamped:
            return Cell(values[0], values[1], values[2], sent)
        return Cell(values[0], None, values[1], sent)

    # ------------------------------------------------------------------ writes
    def write(self, key: Sequence[Any], expected: Any, new: Any, writetime: int | None,
              expires: float | None, at: int | None) -> Written:
        """`new` into the row of `key` where it holds `expected` (its cell written at `writetime`),
        at the timestamp `at` (TIMESTAMP: `timestamp(writetime)`, computed once by the caller, who
        journals it) or on the condition (CONDITION: `at` None), to expire at `expires` (epoch
        seconds) or never: APPLIED, CHANGED or EXPIRED; WriteFailed when the server fails it for
        good."""
        ttl = ttl_to_send(expires)
        if ttl is not None and ttl <= 0:
            return Written(EXPIRED)
        if self.mechanism.timestamped and at is None:
            return Written(CHANGED)  # a cell with no write time holds nothing: nothing to rewrite
        written = Written(CHANGED, at)
        attempts = 0
        while True:
            try:
                applied = self._send(key, expected, new, at, ttl)
            except Exception as err:
                attempts = _retried(err, attempts, written)
                applied = None  # unknown: the row says
            if applied is False:
                return written
            try:
                cell = self.read(key, serial=not self.mechanism.timestamped and applied is None)
            except Exception as err:
                attempts = _retried(err, attempts, written)
                continue
            # A cell written null holds no write time to compare: null is what was written.
            if same(cell.value, new) and (at is None or new is None or cell.writetime == at):
                written.outcome = APPLIED
                return written
            if applied is None and same(cell.value, expected) and (at is None or cell.writetime == writetime):
                ttl = ttl_to_send(expires)
                if ttl is not None and ttl <= 0:
                    return Written(EXPIRED, at, written.retried)
                continue  # not applied yet: sent again (the same value, the same timestamp)
            return written

    def timestamp(self, writetime: int | None) -> int | None:
        """The timestamp a cell written at `writetime` is rewritten at (writing.mechanism)."""
        if writetime is None or not self.mechanism.timestamped:
            return None
        at = int(writetime) + 1
        if self.mechanism.window:
            at = max(at, int(time.time() * 1_000_000) - KEYSPACES_PAST_US + WINDOW_MARGIN_US)
        return at

    def statement(self, key: Sequence[Any], new: Any, at: int | None, ttl: int | None,
                  expected: Any = None) -> Any:
        """The bound UPDATE that writes `new` into the row of `key`, at the timestamp `at`
        (TIMESTAMP) or where it holds `expected` (CONDITION), expiring in `ttl` seconds (None:
        never)."""
        from cassandra.query import BoundStatement

        with_ttl = ttl is not None or self.ttl_zero
        bound = BoundStatement(self._writes[with_ttl], consistency_level=self.consistency,
                               serial_consistency_level=self.serial)
        ttl_value = [ttl or 0] if with_ttl else []
        if self.mechanism.timestamped:
            bound.bind([at, *ttl_value, *self.element, new, *key])
        else:
            bound.bind([*ttl_value, *self.element, new, *key, *self.element, expected])
        return bound

    def _send(self, key: Sequence[Any], expected: Any, new: Any, at: int | None, ttl: int | None) -> bool:
        bound = self.statement(key, new, at, ttl, expected)
        if self.mechanism.timestamped:
            self.session.execute(bound)
            return True
        row = self.session.execute(bound).one()
        # The shell's sessions make rows dicts: the driver's was_applied cannot read those.
        return bool(row["[applied]"] if isinstance(row, Mapping) else row[0])


def _retried(err: Exception, attempts: int, written: Written) -> int:
    """After a failed send or read of a write: the attempts made once it has slept for the next
    (its reason kept in `written`); WriteFailed when `err` is not retried or the retries are spent."""
    from cqlsh_ext.common import retry

    reason = retry_reason(err)
    if reason is None or retry.exhausted(attempts):
        from cqlsh_ext.scanning.scan import error_text

        raise WriteFailed(error_text(err)) from None
    written.retried.append(reason)
    time.sleep(retry.delay(attempts + 1))
    return attempts + 1


def same(stored: Any, wanted: Any) -> bool:
    """Whether a cell holds `wanted` (bytes and text compared as the column holds them)."""
    if stored is None or wanted is None:
        return stored is None and wanted is None
    return raw(stored) == raw(wanted)


def raw(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)
