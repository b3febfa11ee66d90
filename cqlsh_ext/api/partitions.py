"""A statement's answer in parts, read anywhere (docs/api.md, "Partitions"), as ADBC's partitions
and Spark's input splits are: `db.partitions(statement, n)` gives `n` descriptors, each a slice of
the table's token ring with the statement, its parameters and the answer's Arrow kinds (read once
from the answer's leading sample, so every part has one schema); `cqlsh_ext.read_partition(part,
**connect_args)` (api.database's, beside connect) reads one on a connection of its own, in any
process or on any machine, as an answer of its own. Every row of the table is in exactly one
slice (token ranges (lo, hi] that cover the ring), so the parts' rows together are the answer's
rows, and their notes' counts add up to its notes'.

What cannot be split is refused, saying why: aggregates and GROUP BY (partial counts and sums do
not make the whole's avg or its groups' order: read the rows they read by parts and aggregate
the joined table), ORDER BY and DISTINCT, a LIMIT. A WHERE that names its partitions is one part
(the statement as written): its rows are those partitions' already.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.params import Params
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.query.grammar import Plan

__all__ = ["LABEL", "Partition", "partitions"]

LABEL = "partitions"
#: Token ranges each part is read in, at once (its streams: scanning.plan.STREAMS).
RANGES_PER_PART = 8


@dataclass(frozen=True)
class Partition:
    """One part of a statement's answer (db.partitions): picklable (plain values only), read by
    cqlsh_ext.read_partition. `index` of `count`; `ranges`, the token ranges (lo, hi] it reads
    (None: the statement as written, its WHERE naming its partitions); `kinds`, the answer's
    Arrow kinds, one a column (every part's schema is the same); `keyspace`, where a table named
    alone is."""

    statement: str
    params: Any
    index: int
    count: int
    ranges: tuple[tuple[int, int], ...] | None
    kinds: tuple[Kind | None, ...]
    keyspace: str | None


def _refusal(plan: Plan) -> str | None:
    """Why a plan's answer cannot be split into parts that join into it (None: it can)."""
    if plan.aggregates or plan.group_by:
        return ("aggregates and GROUP BY are counted over every row: read the rows they read by parts "
                "(SELECT the key and the paths) and aggregate the joined table (DuckDB, polars), or run "
                "it whole with db.query")
    if plan.order_by or plan.distinct:
        return "ORDER BY and DISTINCT sort every row read: read by parts, then sort the joined table"
    if plan.limit is not None:
        return "a LIMIT is of the whole answer: read by parts without it, or run it whole with db.query"
    return None


def partitions(db: Connected, statement: str, n: int, params: Params = None,
               kinds: tuple[Kind | None, ...] | None = None) -> list[Partition]:
    """See the module doc. Error (one line) for a statement that cannot be split, or that the
    reading refuses (a costly whole-table read without CONFIRM, as db.query refuses it). `kinds`:
    the answer's Arrow kinds where the caller fixed them already (Spark's source, from the
    statement its schema was read for): no sample is read again."""
    from cqlsh_ext.api.call import Call
    from cqlsh_ext.api.params import bind_statement
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner

    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise Error(f"{LABEL}: n takes a positive whole number of parts, not {n!r}")
    lexed, plan, target = db._plain_plan(statement, LABEL)
    why = _refusal(plan)
    if why is not None:
        raise Error(f"{LABEL}: {why}")
    bind_statement(db._prepared, lexed, plan.server_statement, plan, params)  # refused now, not in each part
    if kinds is None:
        # The answer's leading sample fixes its kinds once: read as a part is read (its plan
        # plain), over the whole table, then stopped.
        with db._answer(statement, params, Call(), plain=True) as sample:
            kinds = sample._kinds()
    spans: list[tuple[tuple[int, int], ...] | None]
    if plan.restricts_partitions:
        spans = [None]
    else:
        try:
            ring = ring_for(server_partitioner(db.session))
        except RingError:  # no numeric ring: one part, the statement as written
            spans = [None]
        else:
            spans = [_split(lo, hi, RANGES_PER_PART) for lo, hi in ring.split(n)]
    params = _plain(params)
    return [Partition(statement, params, i, len(spans), span, kinds, target.keyspace)
            for i, span in enumerate(spans)]


def _split(lo: int, hi: int, parts: int) -> tuple[tuple[int, int], ...]:
    """(lo, hi] in `parts` contiguous ranges (fewer for a narrow one)."""
    parts = max(1, min(parts, hi - lo))
    bounds = [lo + (hi - lo) * k // parts for k in range(parts)] + [hi]
    return tuple((bounds[k], bounds[k + 1]) for k in range(parts))


def _plain(params: Params) -> Any:
    """The parameters as a descriptor keeps them: a list or a dict (any sequence or mapping given)."""
    from collections.abc import Mapping

    if params is None:
        return None
    if isinstance(params, Mapping):
        return dict(params)
    return list(params)
