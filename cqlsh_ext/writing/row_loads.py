"""A load's rows (COPY FROM, db.write: cqlsh_ext.load): the cells it writes read by key first, then
the rows written at their timestamps, a partition's rows together.

Read, a group of keys a request: `SELECT pk, <clustering>, c, WRITETIME(c), TTL(c), ... FROM ks.t
WHERE pk IN ? AND <clustering> IN ?` for a few partitions' keys (as many as keep the partitions
times the clustering keys asked for, which the server looks up, within READ_LOOKUPS); `WHERE p1 = ?
AND p2 = ? AND <clustering> IN ?` for one partition's of a partition key of several columns;
`WHERE pk IN ?` for a table without clustering columns and a partition key of one column; a key a
request otherwise.
The read's request time is stamped (a cell's TTL counts from it: writing.ttl), and a row that is
not there is told from one whose loaded cells are null (the row has others).

Written as UPDATE writes cells, at a timestamp (writing.mechanism's TIMESTAMP: a load never writes
on a condition): `UPDATE ks.t USING TIMESTAMP ? [AND TTL ?] SET c1 = ?, ... WHERE <key>`, at the
moment its read was sent, or its loaded cells' latest write time + 1 where that is later. So the
load wins over what it read, and any write made after the read (by a client whose clock is not
behind ours) wins over the load; a row is its cells (no row marker, as UPDATE writes), so UNDO
writing a new row's cells back to null leaves no row. The TTL given applies to every cell written;
without one the table's default_time_to_live does, as for any UPDATE. Rows of one partition go
in one unlogged batch (at most BATCH_ROWS and BATCH_BYTES): one request, atomic and isolated in
its partition, which the server takes without a batch warning (it warns for batches across
partitions only). Writes and reads are at LOCAL_QUORUM or the session's stronger level.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.writing.blob_target import quote
from cqlsh_ext.writing.cell_writer import WriteFailed, retry_reason, write_level

#: Keys a read asks for at most, and rows it makes the server look up at most (partitions times
#: clustering keys: `pk IN ? AND ck IN ?` asks for each partition's every clustering key given).
READ_KEYS = 100
READ_LOOKUPS = 400
#: Rows of one partition one batch holds at most (cqlsh's COPY FROM's MAXBATCHSIZE).
BATCH_ROWS = 20
#: Bytes of values one batch holds at most (well within the server's mutation size).
BATCH_BYTES = 1 << 20


@dataclass(frozen=True)
class OldRow:
    """A row's loaded cells as read before the load writes it: per loaded column its value (None:
    null), write time and TTL left; `sent`, when the read was sent (epoch seconds)."""

    values: tuple[Any, ...]
    writetimes: tuple[int | None, ...]
    ttls: tuple[int | None, ...]
    sent: float

    @property
    def latest(self) -> int | None:
        """The latest write time of its cells (None: all null)."""
        found = [w for w in self.writetimes if w is not None]
        return max(found) if found else None


class RowLoads:
    """Reads and writes the loaded columns of `keyspace.table`'s rows by key (see the module doc).
    `keys`: the primary key's columns (partition key first), `columns`: the columns written beside
    them, `ttl`: the TTL every cell is written with (None: the table's default)."""

    def __init__(self, session: Any, keyspace: str, table: str, partition_key: Sequence[str],
                 clustering: Sequence[str], columns: Sequence[str], consistency: Any,
                 ttl: int | None = None) -> None:
        self.session = session
        self.partition_key = list(partition_key)
        self.clustering = list(clustering)
        self.keys = [*partition_key, *clustering]
        self.columns = list(columns)
        self.consistency = write_level(consistency)
        self.ttl = ttl
        name = f"{quote(keyspace)}.{quote(table)}"
        cells = ", ".join(f"{c}, WRITETIME({c}), TTL({c})" for c in map(quote, self.columns))
        # A partition key of one column is read IN a list (a few partitions at once); one of several,
        # a partition at a time.
        one_column = len(self.partition_key) == 1
        pk = quote(self.partition_key[0])
        where = " AND ".join(f"{quote(p)} = ?" for p in self.partition_key)
        if self.clustering:
            # Rows by their clustering keys IN a list (a tuple's for several columns), in a few
            # partitions (pk IN ?) or in one (a partition key of several columns).
            ck = [quote(c) for c in self.clustering]
            inside = ck[0] if len(ck) == 1 else "(" + ", ".join(ck) + ")"
            if one_column:
                self._shape = "partitions"
                text = f"SELECT {pk}, {', '.join(ck)}, {cells} FROM {name} WHERE {pk} IN ? AND {inside} IN ?"
            else:
                self._shape = "partition"
                text = f"SELECT {', '.join(ck)}, {cells} FROM {name} WHERE {where} AND {inside} IN ?"
        elif one_column:
            self._shape = "keys"
            text = f"SELECT {pk}, {cells} FROM {name} WHERE {pk} IN ?"
        else:
            self._shape = "one"
            pks = ", ".join(quote(p) for p in self.partition_key)
            text = f"SELECT {pks}, {cells} FROM {name} WHERE {where}"
        self._read = session.prepare(text)
        self._read.consistency_level = self.consistency
        where = " AND ".join(f"{quote(k)} = ?" for k in self.keys)
        using = "USING TIMESTAMP ? AND TTL ?" if ttl is not None else "USING TIMESTAMP ?"
        sets = ", ".join(f"{quote(c)} = ?" for c in self.columns)
        self._write = session.prepare(f"UPDATE {name} {using} SET {sets} WHERE {where}")
        self._write.consistency_level = self.consistency
        meta = self._write.column_metadata
        offset = 2 if ttl is not None else 1
        #: The driver's types of the columns written and of the key's, in their orders.
        self.column_types = [c[3] for c in meta[offset:offset + len(self.columns)]]
        self.key_types = [c[3] for c in meta[offset + len(self.columns):]]
        self._protocol = int(session.cluster.protocol_version)

    # ------------------------------------------------------------------ values
    def serialized(self, key: Sequence[Any]) -> list[bytes]:
        """A key's values as the driver serializes them (what journals keep); ValueError or
        TypeError for a value its column's type does not take."""
        return [t.to_binary(v, self._protocol) for t, v in zip(self.key_types, key, strict=True)]

    def serialized_one(self, kind: Any, value: Any) -> bytes:
        """One key value as the driver serializes it (`kind`: one of key_types); the driver's error
        for a value its type does not take (struct.error: out of range)."""
        return bytes(kind.to_binary(value, self._protocol))

    def cell_bytes(self, index: int, value: Any) -> bytes | None:
        """The `index`-th loaded column's value as stored bytes (a journal's old and new)."""
        if value is None:
            return None
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        return bytes(self.column_types[index].to_binary(value, self._protocol))

    # ------------------------------------------------------------------ reads
    def read(self, keys: Sequence[Sequence[Any]], serialized: Sequence[tuple[bytes, ...]]
             ) -> list[OldRow | None]:
        """Each key's row as it is now (None: no row), the reads sent at once, a group of keys
        a request; WriteFailed when a read fails for good."""
        groups = self._groups(keys, serialized)
        pending = []
        for bind, members in groups:
            sent = time.time()
            pending.append((bind, members, sent, self.session.execute_async(self._read, bind)))
        found: dict[tuple[bytes, ...], OldRow] = {}
        for bind, members, sent, future in pending:
            rows, sent = self._rows(future, bind, sent)
            wanted = set(members)
            for row in rows:
                values = list(row.values()) if isinstance(row, Mapping) else list(row)
                key = self._key_of(values, bind)
                if key not in wanted:
                    continue
                cells = values[len(values) - 3 * len(self.columns):]
                found[key] = OldRow(tuple(cells[0::3]), tuple(cells[1::3]), tuple(cells[2::3]), sent)
        return [found.get(tuple(s)) for s in serialized]

    def _groups(self, keys: Sequence[Sequence[Any]], serialized: Sequence[tuple[bytes, ...]]
                ) -> list[tuple[list[Any], list[tuple[bytes, ...]]]]:
        """(the read's bound values, the keys it answers) for each read of `keys`."""
        groups: list[tuple[list[Any], list[tuple[bytes, ...]]]] = []
        npk = len(self.partition_key)
        if self._shape == "one":
            return [(list(key), [tuple(s)]) for key, s in zip(keys, serialized, strict=True)]
        if self._shape == "keys":
            for start in range(0, len(keys), READ_KEYS):
                part = keys[start:start + READ_KEYS]
                answered = [tuple(s) for s in serialized[start:start + READ_KEYS]]
                groups.append(([[k[0] for k in part]], answered))
            return groups
        by_partition: dict[tuple[bytes, ...], list[int]] = {}
        for i, s in enumerate(serialized):
            by_partition.setdefault(tuple(s[:npk]), []).append(i)
        if self._shape == "partitions":
            return self._partitions(keys, serialized, list(by_partition.values()))
        for members in by_partition.values():
            for start in range(0, len(members), READ_KEYS):
                chosen = members[start:start + READ_KEYS]
                first = keys[chosen[0]]
                inside = [keys[i][npk] if len(self.clustering) == 1 else tuple(keys[i][npk:]) for i in chosen]
                groups.append(([*first[:npk], inside], [tuple(serialized[i]) for i in chosen]))
        return groups

    def _partitions(self, keys: Sequence[Sequence[Any]], serialized: Sequence[tuple[bytes, ...]],
                    partitions: list[list[int]]) -> list[tuple[list[Any], list[tuple[bytes, ...]]]]:
        """Reads of a few partitions each (`partitions`: each one's keys, by index), as many as keep
        its keys within READ_KEYS and the rows the server looks up within READ_LOOKUPS."""
        groups: list[tuple[list[Any], list[tuple[bytes, ...]]]] = []
        chosen: list[int] = []
        pks: dict[bytes, Any] = {}
        cks: dict[tuple[bytes, ...], Any] = {}

        def flush() -> None:
            if chosen:
                answered = [tuple(serialized[i]) for i in chosen]
                groups.append(([list(pks.values()), list(cks.values())], answered))
            chosen.clear()
            pks.clear()
            cks.clear()

        for members in partitions:
            for start in range(0, len(members), READ_KEYS):
                part = members[start:start + READ_KEYS]
                more = {tuple(serialized[i][1:]) for i in part} - cks.keys()
                if chosen and (len(chosen) + len(part) > READ_KEYS or
                               (len(pks) + 1) * (len(cks) + len(more)) > READ_LOOKUPS):
                    flush()
                pks[serialized[part[0]][0]] = keys[part[0]][0]
                for i in part:
                    ck = tuple(serialized[i][1:])
                    if ck not in cks:
                        cks[ck] = keys[i][1] if len(self.clustering) == 1 else tuple(keys[i][1:])
                chosen.extend(part)
        flush()
        return groups

    def _key_of(self, values: list[Any], bind: list[Any]) -> tuple[bytes, ...]:
        """A row read's key, serialized: its partition key bound (one partition's read) or read."""
        npk = len(self.partition_key)
        if self._shape == "partition":
            key = [*bind[:npk], *values[:len(self.clustering)]]
        elif self._shape == "partitions":
            key = values[:npk + len(self.clustering)]
        else:
            key = values[:npk]
        return tuple(self.serialized(key))

    def _rows(self, future: Any, bind: list[Any], sent: float) -> tuple[list[Any], float]:
        """A read's rows, retried (sent again) on a timeout or an overloaded node."""
        from cqlsh_ext.common import retry

        attempts = 0
        while True:
            try:
                return list(future.result()), sent
            except Exception as err:
                if retry_reason(err) is None or retry.exhausted(attempts):
                    from cqlsh_ext.scanning.scan import error_text

                    raise WriteFailed(error_text(err)) from None
                attempts += 1
                time.sleep(retry.delay(attempts))
                sent = time.time()
                future = self.session.execute_async(self._read, bind)

    # ------------------------------------------------------------------ writes
    def timestamp(self, old: OldRow | None, sent: float) -> int:
        """The timestamp a row is written at: the moment its read was sent, or its loaded cells'
        latest write time + 1 where that is later (see the module doc)."""
        at = int(sent * 1_000_000)
        latest = None if old is None else old.latest
        return max(at, latest + 1) if latest is not None else at

    def statement(self, key: Sequence[Any], values: Sequence[Any], at: int) -> Any:
        """The bound UPDATE of one row."""
        from cassandra.query import BoundStatement

        bound = BoundStatement(self._write, consistency_level=self.consistency)
        ttl = [self.ttl] if self.ttl is not None else []
        bound.bind([at, *ttl, *values, *key])
        return bound

    def batch(self, statements: Sequence[Any]) -> Any:
        """One partition's rows' UPDATEs as one request: the statement alone, or an unlogged batch."""
        if len(statements) == 1:
            return statements[0]
        from cassandra.query import BatchStatement, BatchType

        batch = BatchStatement(batch_type=BatchType.UNLOGGED, consistency_level=self.consistency)
        for statement in statements:
            batch.add(statement)
        return batch

    def send(self, request: Any) -> Any:
        """The request sent: the driver's future."""
        return self.session.execute_async(request)
