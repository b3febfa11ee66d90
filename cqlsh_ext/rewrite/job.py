"""What a COMPRESSION REWRITE does, made from its request (writing.requests.RewriteRequest: the
statement's, or a journal's sealed head's for RESUME): the table and blob resolved in a context,
the target chain checked, the reading's plan, the mechanism and the token ranges (`Job`: plain
data, Spark's tasks carry it); and what it makes of each row read (`Examiner`: counted, and
re-encoded by recode when it is to be rewritten).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.rewrite.report import RowTally
from cqlsh_ext.writing.ranges import NewValue, RangeWork

if TYPE_CHECKING:
    from cqlsh_ext.query.grammar import Schema, Where
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.rewrite.recode import RewriteTarget
    from cqlsh_ext.writing.cell_reads import CellRead
    from cqlsh_ext.writing.cell_writer import CellWriter
    from cqlsh_ext.writing.requests import RewriteRequest

LABEL = "COMPRESSION REWRITE"
#: Token ranges a rewrite is cut into (journaled as finished one by one): about one per this many
#: partitions, within these bounds.
RANGE_PARTITIONS = 10_000
MIN_RANGES, MAX_RANGES = 16, 4096
#: Why a null value is not rewritten.
NULL = "null: nothing to rewrite"


@dataclass(frozen=True)
class Job:
    """A rewrite: what it reads and writes (`work`, writing.ranges), the chain it writes (`target`)
    and what was asked (`request`, its journal's head)."""

    work: RangeWork
    target: RewriteTarget
    request: RewriteRequest

    @property
    def name(self) -> str:
        return self.work.name

    @property
    def pace(self) -> int | None:
        return self.request.pace

    def head(self) -> dict[str, object]:
        """What the journal's first line keeps besides the request: the token ranges cut (RESUME
        reads the same ones) and the partition key they are tokens of."""
        ranges = self.work.ranges
        return {"partition_key": list(self.work.partition_key),
                "ranges": [list(r) for r in ranges] if ranges is not None else None}


def table_meta(ctx: ReadContext, keyspace: str | None, table: str) -> Any:
    """The driver's metadata of [keyspace.]table (a table made a moment ago by another client is
    asked of the server), None when unknown."""
    from cqlsh_ext.reading.resolve import find_table

    found = find_table(ctx.cluster, ctx.keyspace, keyspace, table, refresh=True)
    return found.meta if found is not None else None


def table_schema(ctx: ReadContext, meta: Any) -> Schema:
    """The table as the payload-query parser reads it (edit.parse.fresh_schema)."""
    from cqlsh_ext.edit.parse import fresh_schema

    return fresh_schema(ctx.cluster, meta)


def job_for(ctx: ReadContext, request: RewriteRequest, where: Where | None,
            ranges: Sequence[Sequence[int]] | None | bool = True) -> Job:
    """The job `request` asks for (`where`: its WHERE as parsed; None: the whole table); `ranges`:
    True to cut the ring now, else the journal's. QueryError or WriteRefused for what is refused
    before anything is read."""
    from cqlsh_ext.query.grammar import Where, selection
    from cqlsh_ext.rewrite.recode import target_of
    from cqlsh_ext.writing.blob_target import key_columns, refuse_system
    from cqlsh_ext.writing.cell_reads import extra_columns, plan_for, sibling_columns, write_decoding
    from cqlsh_ext.writing.mechanism import choose

    refuse_system(request.keyspace)
    meta = table_meta(ctx, request.keyspace, request.table)
    if meta is None:
        raise QueryError(f"unknown table {request.keyspace}.{request.table}")
    blob = request.blob
    if blob.column not in meta.columns:
        raise QueryError(f"{request.keyspace}.{meta.name} has no column {blob.column}")
    if blob.container is not None and str(meta.columns[blob.column].cql_type).startswith("frozen<"):
        raise QueryError(f"{blob.column} is frozen: it is written whole, and {blob} is not rewritten here")
    decoding = write_decoding(ctx.settings)
    target = target_of(request.spec, decoding.cap)
    keys = key_columns(meta, blob.column)
    pk = [c.name for c in meta.partition_key]
    where = where or Where()
    names_partitions = bool(where.ordinary or where.predicates) and set(pk) <= where.restricted
    if where.predicates and not names_partitions and not request.allow_filtering:
        raise QueryError("the WHERE's payload conditions are evaluated here on every row read: add ALLOW "
                         "FILTERING")
    mechanism = choose(ctx, request.keyspace, meta.name, blob, keys)
    siblings = sibling_columns(decoding, request.keyspace, meta.name, blob)
    if siblings:  # the rewritten value would no longer be what its row's sibling names
        by = siblings[0]
        raise QueryError(f"{blob.column}'s chain is picked by {by} row by row (its DECODE ... BY setting): "
                         f"a rewrite would leave {by} naming the old chain; rewrite the rows of one {by} "
                         f"with DECODE ... AS and a WHERE on it, then update {by}")
    plan = plan_for(request.keyspace, meta, table_schema(ctx, meta), blob, keys, where,
                    request.allow_filtering or names_partitions or not where.ordinary, False, mechanism)
    select = selection(request.keyspace, meta.name, [*keys, blob.column], extra_columns(blob, mechanism))
    ordinary = " AND ".join(where.ordinary)
    also = (f"AND {ordinary} ALLOW FILTERING" if ordinary else "")
    cut: tuple[tuple[int, int], ...] | None
    if names_partitions:
        cut = None
    elif ranges is True:
        cut = _ring(ctx, request.keyspace, meta.name)
    elif ranges is None or ranges is False:
        cut = None
    else:
        cut = tuple((int(lo), int(hi)) for lo, hi in ranges)
    default_ttl = int((getattr(meta, "options", None) or {}).get("default_time_to_live", 0) or 0)
    static = len(keys) < len(meta.primary_key)
    work = RangeWork(request.keyspace, meta.name, tuple(pk), tuple(keys), blob, static, mechanism, plan,
                     decoding, default_ttl, select, also, cut, ctx.consistency, ctx.serial_consistency)
    return Job(work, target, request)


def _ring(ctx: ReadContext, keyspace: str, table: str) -> tuple[tuple[int, int], ...]:
    """The ring cut into token ranges, about RANGE_PARTITIONS partitions each (the server's estimate)."""
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.scan import table_size

    try:
        ring = ring_for(server_partitioner(ctx.session))
    except RingError as err:
        raise QueryError(f"{err}: a rewrite journals finished token ranges to resume from") from None
    size = table_size(ctx.session, keyspace, table, ring.span)
    parts = MIN_RANGES if size is None else size.partitions // RANGE_PARTITIONS
    return tuple(ring.split(max(MIN_RANGES, min(MAX_RANGES, parts))))


class Examiner:
    """Each row read: counted (RowTally) and, when its value is to be rewritten, re-encoded (the
    Changes of writing.ranges). `key_size`: a key's serialized size."""

    def __init__(self, job: Job, key_size: Callable[[Sequence[Any]], int]) -> None:
        from cqlsh_ext.payload.places import Engines, ValuePlace

        self.job = job
        self.key_size = key_size
        work = job.work
        blob = work.blob
        steps = ("value",) if blob.container == "map" else (str(blob.access),) if blob.container else ()
        self.engine = Engines(work.decoding)(ValuePlace(work.keyspace, work.table, blob.column, steps))
        self.counts = RowTally()

    def read(self, rows: int) -> None:
        self.counts.rows += rows

    def examine(self, cell: CellRead) -> NewValue | None:
        """The new value and the row's size before and after (key and value), or None (counted)."""
        from cqlsh_ext.rewrite.recode import recode

        work, counts = self.job.work, self.counts
        counts.found += 1
        if cell.stored is None:
            counts.refuse(NULL)
            return None
        raw = bytes(cell.stored)
        view = cell.view if cell.view is not None and work.blob.container is None else self.engine.view(raw)
        key = self.key_size([cell.key[k] for k in work.keys])
        before = self._read_one(raw, key)
        try:
            done = recode(raw, view, self.engine, self.job.target, work.decoding.cap)
        except Exception as err:  # the boundary of one value: a writer's or a reader's surprise
            done = f"not rewritten here ({type(err).__name__}: {str(err)[:80]})"
        if isinstance(done, str):
            self._left(done, raw, before)
            return None
        from cqlsh_ext.scanning.capacity import ROW_QUOTA, wcu

        after = key + len(done.value)
        counts.change += 1
        counts.after += len(done.value)
        counts.wcu_after += wcu(after)
        counts.rewrite_wcu += wcu(after)
        counts.over_after += after > ROW_QUOTA
        counts.unreadable_after += not done.readable
        return NewValue(done.value, before, after)

    @property
    def settles(self) -> bool:
        """settle() decides from the values alone: a bare blob column whose engine reads a page's
        chains in one call (ValueEngine.decoded_chains)."""
        return self.job.work.blob.container is None and self.engine.on_core()

    def settle(self, stored: Sequence[bytes | None]) -> list[bool] | None:
        """Which of a page's values (a bare blob column's cells) are left as they are, decided
        without their rows: null, or read by the engine in one call as text, bytes or a record
        under the target's chain exactly, with its dictionary (what recode() answers ALREADY for:
        the others are examined). Only the values whose outer container may be the target's are
        read here (codecs.registry.may_come_first): the others are examined, so read once, by the
        Python engine (recode() needs their layers and payload, which the engine's chains do not
        give). None where the engine does not read this column's chains so
        (ValueEngine.decoded_chains): every row is examined."""
        from cqlsh_ext.codecs import registry
        from cqlsh_ext.payload.view import spell
        from cqlsh_ext.rewrite.recode import dictionary_of

        if not self.settles:
            return None
        target = self.job.target
        first = registry.by_label(target.labels[0]) if target.labels else None
        maybe = [value is not None and registry.may_come_first(first, value) for value in stored]
        picked = [value for value, may in zip(stored, maybe, strict=True) if may and value is not None]
        found = self.engine.decoded_chains(picked) if picked else []
        if found is None:
            return None
        chains = iter(found)
        chain = spell(target.labels)
        outer = [first] if first is not None else []
        dictionary = target.dictionaries[0] if target.dictionaries else None

        def named(value: bytes) -> bool:
            try:
                return dictionary_of(outer, value) == dictionary
            except Exception:  # examined, where recode() says why
                return False

        return [value is None or (may and next(chains) == chain and named(value))
                for value, may in zip(stored, maybe, strict=True)]

    def leave(self, stored: Sequence[bytes | None], key_sizes: Sequence[int]) -> None:
        """Rows settle() left as they are (nulls and values already in the target), counted as
        examine() counts them one by one (`key_sizes`: their keys' serialized sizes)."""
        from cqlsh_ext.scanning.capacity import ROW_QUOTA, rcu, wcu

        nulls = values = size = units = reads = over = 0
        for value, key in zip(stored, key_sizes, strict=True):
            if value is None:
                nulls += 1
                continue
            values += 1
            size += len(value)
            before = key + len(value)
            units += wcu(before)
            reads += rcu(before)
            over += before > ROW_QUOTA
        counts = self.counts
        counts.found += len(stored)
        if nulls:
            counts.refused[NULL] = counts.refused.get(NULL, 0) + nulls
        counts.already += values
        counts.before += size
        counts.after += size
        counts.wcu_before += units
        counts.wcu_after += units
        counts.rcu += reads
        counts.over_before += over
        counts.over_after += over

    def _read_one(self, raw: bytes, key: int) -> int:
        """A value read counted (bytes, units, reads); the row's size before."""
        from cqlsh_ext.scanning.capacity import ROW_QUOTA, rcu, wcu

        counts = self.counts
        before = key + len(raw)
        counts.before += len(raw)
        counts.wcu_before += wcu(before)
        counts.rcu += rcu(before)
        counts.over_before += before > ROW_QUOTA
        return before

    def _left(self, why: str, raw: bytes, before: int) -> None:
        """A value left as it is counted: already in the target, or refused (`why`)."""
        from cqlsh_ext.rewrite.recode import ALREADY
        from cqlsh_ext.scanning.capacity import ROW_QUOTA, wcu

        counts = self.counts
        if why == ALREADY:
            counts.already += 1
        else:
            counts.refuse(why)
        counts.after += len(raw)
        counts.wcu_after += wcu(before)
        counts.over_after += before > ROW_QUOTA


def examiner_of(job: Job) -> Callable[[CellWriter], Examiner]:
    """What writing.ranges.RangeRewriter takes: the job's Examiner, keys sized by the cell writer."""
    def make(writer: CellWriter) -> Examiner:
        return Examiner(job, lambda key: sum(len(b) for b in writer.serialized(key)))

    return make
