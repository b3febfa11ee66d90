"""A plan's answer built from rows, in parts that merge: what the shell's scan, its worker
processes and Spark executors each fill with the rows they read, and what the one who started
them merges and prints.

    answer = Answer(plan, star_columns)            # one per reader (picklable, plain data)
    rows = answer.add(evaluator, row)              # answer rows this row gives now (streamed plans)
    total.merge(part)                              # exact, in any order
    header, rows = total.header(), total.final()   # aggregates, DISTINCT, ORDER BY: at the end

Three shapes: *streamed* (paths and payload conditions only: each matching row is an answer row
at once, LIMIT counts them), *grouped* (aggregates, GROUP BY: query.groups.Groups) and
*buffered* (DISTINCT, ORDER BY: query.groups.RowBuffer, sorted here at the end).
"""
from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.payload.pages import MISS_KEYS
from cqlsh_ext.payload.server_rows import columns_of
from cqlsh_ext.query.evaluate import Evaluator, Miss, RowResult
from cqlsh_ext.query.grammar import Plan

if TYPE_CHECKING:
    from cqlsh_ext.query.groups import Groups, RowBuffer

#: How alike (difflib's ratio) a key seen must be to the one a path wanted to be named as near it:
#: 'stauts' finds 'status' (0.83) and 'nmae' 'name' (0.75), not 'tags' (0.6).
NEAR = 0.7


@dataclass
class PathsSeen:
    """Whether any decoded value read had each path (a typo, `data.stauts`, is otherwise silent:
    null on every row), and for a path none had, the keys seen where its walks stopped furthest
    in: the closing line names the nearest."""

    found: set[str] = field(default_factory=set)
    #: Path text -> (the step it stopped at, the key wanted there, the keys seen there).
    missed: dict[str, tuple[int, str | int, set[str]]] = field(default_factory=dict)

    def add(self, found: Collection[str], missed: Sequence[Miss]) -> None:
        self.found.update(found)
        for miss in missed:
            if miss.path not in self.found:
                self._note(miss.path, miss.depth, miss.key, miss.keys)

    def _note(self, path: str, depth: int, key: str | int, keys: Sequence[str] | set[str]) -> None:
        known = self.missed.get(path)
        if known is None or depth > known[0]:
            self.missed[path] = (depth, key, set(list(keys)[:MISS_KEYS]))
        elif depth == known[0] and len(known[2]) < MISS_KEYS:
            known[2].update(list(keys)[:MISS_KEYS - len(known[2])])

    def merge(self, other: PathsSeen) -> None:
        self.found |= other.found
        for path, (depth, key, keys) in other.missed.items():
            self._note(path, depth, key, keys)

    def never_found(self, first: int | None = None) -> list[tuple[str, list[str], list[str]]]:
        """For every path no value had (the `first` of them), in the order first met: (the path, the
        keys seen where it stopped that are nearest to the key it wanted (difflib), best first; all
        keys seen there, sorted)."""
        out: list[tuple[str, list[str], list[str]]] = []
        for path, (_depth, key, keys) in self.missed.items():
            if first is not None and len(out) >= first:
                break
            if path in self.found:
                continue
            seen = sorted(keys)
            nearest = difflib.get_close_matches(key, seen, n=3, cutoff=NEAR) if isinstance(key, str) else []
            out.append((path, nearest, seen))
        return out

    def meant(self, path: str, nearest: Sequence[str]) -> list[str]:
        """The whole paths `path` (one no value had) may have meant: its steps up to where it stopped,
        then each of the `nearest` keys seen there (never_found's); the keys alone where its text
        is not simple steps."""
        from cqlsh_ext.query.grammar import spell_key

        _depth, key, _keys = self.missed[path]
        steps = path.split(".")
        if not isinstance(key, str) or key not in steps[1:]:
            return list(nearest)
        at = steps.index(key, 1)
        return [".".join([*steps[:at], spell_key(near)]) for near in nearest]

    def never_found_count(self) -> int:
        """How many paths no value had."""
        return sum(1 for path in self.missed if path not in self.found)


@dataclass
class Counts:
    """What the readers saw: rows read, rows matched, values undecodable or cut by the budget
    (once per blob per row), aggregate inputs skipped (not a number), the paths values had."""

    read: int = 0
    matched: int = 0
    undecodable: int = 0
    cut: int = 0
    paths: PathsSeen = field(default_factory=PathsSeen)
    #: The undecodable values by kind (payload.view: unknown, failed, binary), for the breakdown.
    kinds: dict[str, int] = field(default_factory=dict)

    def add_page(self, evaluator: Evaluator, rows: int, matched: int, undecodable: int, cut: int) -> None:
        """A page read (its rows, those matched, its values undecodable and cut) and what the
        evaluator saw of it: the paths (ORDER BY's included) and the undecodable kinds."""
        self.read += rows
        self.matched += matched
        self.undecodable += undecodable
        self.cut += cut
        self.paths.add(*evaluator.walked())
        self.add_kinds(evaluator.undecodable_kinds())

    def add_kinds(self, kinds: Mapping[str, int]) -> None:
        for kind, n in kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + n

    def merge(self, other: Counts) -> None:
        self.read += other.read
        self.matched += other.matched
        self.undecodable += other.undecodable
        self.cut += other.cut
        self.paths.merge(other.paths)
        self.add_kinds(other.kinds)


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
            from cqlsh_ext.query.groups import Groups, RowBuffer, specs
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

    def computed(self) -> list[bool]:
        """Per header() column: whether its numbers are computed here (sum, avg) rather than read
        from a payload or a column as they are (count is a count, min and max a value read)."""
        out: list[bool] = []
        for item in self.plan.items:
            if item.kind == "star":
                out.extend(False for _ in self.star_columns)
            else:
                out.append(item.kind == "agg" and item.func in ("sum", "avg"))
        return out

    def add(self, evaluator: Evaluator, row: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Read one row (a page of one); the answer rows it gives now ([] unless streamed and matching)."""
        names = list(row)
        return self.add_page(evaluator, names, [[row[name] for name in names]])

    def add_page(self, evaluator: Evaluator, names: Sequence[str],
                 rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """Read a page's rows (as the columns `names` list them); the answer rows they give now.
        The evaluator answers the page (Evaluator.answer_page: the rows kept, or the page's group
        partials)."""
        page = evaluator.answer_page(names, rows)
        found = page.found
        self.counts.add_page(evaluator, len(rows), page.matched, page.undecodable, page.cut)
        out = []
        if self.groups is not None:
            add = self.groups.add
            for key, accs in page.partials:
                self.groups.merge_group(key, accs)
            for _k, result in found:
                add(result.key, result.inputs)
        elif not any(item.kind == "star" for item in self.plan.items):
            # (what _row_at gives without a `*`: the row itself is not read)
            if self.buffer is None:
                out = [result.values for _k, result in found]
            else:
                for _k, result in found:
                    self.buffer.add(result.values + result.order)
        else:
            at = {name: i for i, name in enumerate(names)}
            for k, result in found:
                answer_row = self._row_at(rows[k], at, result)
                if self.buffer is not None:
                    self.buffer.add(answer_row + result.order)
                else:
                    out.append(answer_row)
        return out

    def add_page_columns(self, evaluator: Evaluator, names: Sequence[str],
                         rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]] | None:
        """add_page() of a streamed answer, its answer rows given as columns (one per header()
        column: the kept rows' values; a list, or a column the native core holds: Evaluator.held),
        the same counts; None for an answer that groups or sorts,
        or a page the evaluator does not answer in columns (the caller then calls add_page)."""
        if not self.streamed:
            return None
        page = evaluator.answer_columns(names, rows)
        if page is None:
            return None
        self.counts.add_page(evaluator, len(rows), len(page.kept), page.undecodable, page.cut)
        at = {name: i for i, name in enumerate(names)}
        projected = iter(page.columns)
        out: list[Sequence[Any]] = []
        given = page.given
        wanted = sorted({at[name] for name in self.star_columns if name in at and name not in given})
        has_star = any(item.kind == "star" for item in self.plan.items)
        star = columns_of(rows, wanted, page.kept) if has_star else {}
        for item in self.plan.items:
            if item.kind == "star":  # the columns `*` stands for, as the server returned them (a blob
                for name in self.star_columns:  # read with its paths: as the engine read it)
                    col = at.get(name)
                    out.append(given[name] if name in given else [None] * len(page.kept) if col is None
                               else star[col])
            else:
                out.append(next(projected))
        return out

    def _row_at(self, row: Sequence[Any], at: Mapping[str, int], result: RowResult) -> tuple[Any, ...]:
        """The answer row of a kept row (`at`: each column's index in it)."""
        values = iter(result.values)
        out: list[Any] = []
        for item in self.plan.items:
            if item.kind == "star":  # a blob the statement decoded already is given as its view
                views = result.views
                out.extend(views[name] if name in views else (row[at[name]] if name in at else None)
                           for name in self.star_columns)
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
                if len(key) != len(grouped):  # Groups' one row for no row read: none under GROUP BY
                    continue
                agg = iter(results)
                out.append(tuple(next(agg) if item.kind == "agg" else key[grouped.index(item.name)]
                                 for item in self.plan.items))
            return out[:limit] if limit is not None else out
        if self.buffer is not None:
            width = len(self.header())
            order = [(width + i, desc) for i, (_, desc) in enumerate(self.plan.order_by)]
            return [row[:width] for row in self.buffer.sorted(order, limit)]
        return []
