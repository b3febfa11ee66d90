"""A plan's answer built from rows, in parts that merge: what the shell's scan, its worker
processes and Spark executors each fill with the rows they read, and what the one who started
them merges and prints.

    answer = Answer(plan, star_columns)            # one per reader (picklable, plain data)
    rows = answer.add(evaluator, row)              # answer rows this row gives now (streamed plans)
    total.merge(part)                              # exact, in any order
    header, rows = total.header(), total.final()   # aggregates, DISTINCT, ORDER BY: at the end

Three shapes: *streamed* (paths and payload conditions only: each matching row is an answer row
at once, LIMIT counts them), *grouped* (aggregates, GROUP BY: query.aggregate.Groups) and
*buffered* (DISTINCT, ORDER BY: query.aggregate.RowBuffer, sorted here at the end).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.query.evaluate import Evaluator, RowResult
from cqlsh_ext.query.grammar import Plan

if TYPE_CHECKING:
    from cqlsh_ext.query.aggregate import Groups, RowBuffer


@dataclass
class Counts:
    """What the readers saw: rows read, rows matched, values undecodable or cut by the budget
    (once per blob per row), aggregate inputs skipped (not a number)."""

    read: int = 0
    matched: int = 0
    undecodable: int = 0
    cut: int = 0

    def merge(self, other: Counts) -> None:
        self.read += other.read
        self.matched += other.matched
        self.undecodable += other.undecodable
        self.cut += other.cut


@dataclass
class Answer:
    plan: Plan
    #: The columns `*` stands for, in the server's order (empty when the plan has no `*`).
    star_columns: Sequence[str] = ()
    counts: Counts = field(default_factory=Counts)
    groups: Groups | None = None
    buffer: RowBuffer | None = None

    def __post_init__(self) -> None:
        plan = self.plan
        if plan.aggregates or plan.distinct or plan.order_by:
            # Loaded by the plans that group or sort (fractions, decimal's sums): a SELECT of paths
            # alone runs without them.
            from cqlsh_ext.query.aggregate import Groups, RowBuffer, specs
        if plan.aggregates:
            self.groups = Groups(specs(plan))
        elif plan.distinct or plan.order_by:
            self.buffer = RowBuffer(distinct=plan.distinct)

    def fresh(self) -> Answer:
        """An empty answer of the same plan (a worker's or an executor's part)."""
        return Answer(self.plan, self.star_columns)

    @property
    def streamed(self) -> bool:
        """Each matching row is an answer row as soon as it is read."""
        return self.groups is None and self.buffer is None

    def header(self) -> list[str]:
        names: list[str] = []
        for item in self.plan.items:
            names.extend(self.star_columns if item.kind == "star" else [item.name])
        return names

    def add(self, evaluator: Evaluator, row: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Read one row; the answer rows it gives now ([] unless streamed and matching)."""
        result = evaluator.evaluate(row)
        counts = self.counts
        counts.read += 1
        counts.undecodable += result.undecodable
        counts.cut += result.cut
        if not result.matched:
            return []
        counts.matched += 1
        if self.groups is not None:
            self.groups.add(result.key, result.inputs)
            return []
        out = self._row(row, result)
        if self.buffer is not None:
            self.buffer.add(out + evaluator.values(row, [ref for ref, _ in self.plan.order_by], {}))
            return []
        return [out]

    def add_page(self, evaluator: Evaluator, names: Sequence[str],
                 rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """add() of each row of a page (rows as the columns `names` list them), the evaluator
        decoding the page's blobs together: the same answer and counts."""
        found, undecodable, cut = evaluator.evaluate_page(names, rows)
        counts = self.counts
        counts.read += len(rows)
        counts.undecodable += undecodable
        counts.cut += cut
        counts.matched += len(found)
        if self.groups is not None:
            add = self.groups.add
            for _k, result in found:
                add(result.key, result.inputs)
            return []
        out = []
        order = [ref for ref, _ in self.plan.order_by]
        for k, result in found:
            row = dict(zip(names, rows[k], strict=True))
            answer_row = self._row(row, result)
            if self.buffer is not None:
                self.buffer.add(answer_row + evaluator.values(row, order, {}))
            else:
                out.append(answer_row)
        return out

    def _row(self, row: Mapping[str, Any], result: RowResult) -> tuple[Any, ...]:
        values = iter(result.values)
        out: list[Any] = []
        for item in self.plan.items:
            if item.kind == "star":
                out.extend(row.get(name) for name in self.star_columns)
            else:
                out.append(next(values))
        return tuple(out)

    def merge(self, other: Answer) -> None:
        self.counts.merge(other.counts)
        if self.groups is not None and other.groups is not None:
            self.groups.merge(other.groups)
        if self.buffer is not None and other.buffer is not None:
            self.buffer.merge(other.buffer)

    def skipped(self) -> int:
        """Aggregate inputs that were not numbers (sum, avg) or not comparable (min, max)."""
        return self.groups.skipped() if self.groups is not None else 0

    def final(self) -> list[tuple[Any, ...]]:
        """The answer rows of a grouped or buffered plan (LIMIT applied); [] when streamed."""
        limit = self.plan.limit
        if self.groups is not None:
            grouped = [p.text for p in self.plan.group_by]
            out = []
            for key, results in self.groups.results():
                agg = iter(results)
                out.append(tuple(next(agg) if item.kind == "agg" else key[grouped.index(item.name)]
                                 for item in self.plan.items))
            return out[:limit] if limit is not None else out
        if self.buffer is not None:
            width = len(self.header())
            order = [(width + i, desc) for i, (_, desc) in enumerate(self.plan.order_by)]
            return [row[:width] for row in self.buffer.sorted(order, limit)]
        return []
