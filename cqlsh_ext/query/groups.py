"""Accumulators for count(*), count, min, max, sum and avg per GROUP BY key, whose partial results
merge exactly (worker processes, Spark executors later), and the bounded buffer DISTINCT and
ORDER BY sort in. Plain data: every state pickles.

Exactness: integers sum as Python ints; decimals and floats sum as one Fraction (each float is
an exact binary fraction), so a merge in any order gives the same bits. `sum` is an int when
every value was an int, a Decimal when no value was a float, else a float; `avg` is a float.

NaN and the infinities (payload.numbers' total order, PostgreSQL's): they are numbers; a sum or an
average with a NaN, or with both infinities, is NaN, with one infinity that infinity; `max` is NaN
when a NaN was read, `min` a NaN only when nothing else was. They are held beside the exact sum as
flags, which merge in any order."""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from cqlsh_ext.payload import numbers
from cqlsh_ext.payload.formats.tree import render_cut
from cqlsh_ext.payload.paths import UNDECODABLE_GROUP
from cqlsh_ext.payload.view import BlobView
from cqlsh_ext.query.grammar import Plan, QueryError

#: At most this many groups (GROUP BY keys) or buffered rows (DISTINCT, ORDER BY) are held.
MAX_GROUPS = 100_000
MAX_ROWS = 100_000


def is_number(value: Any) -> bool:
    """A number an aggregate takes: the number rule's (payload.numbers), but a Decimal that is not
    finite (no reader makes one)."""
    return numbers.is_number(value) and not (isinstance(value, Decimal) and not value.is_finite())


@dataclass
class Accumulator:
    """One aggregate's state. `func`: count (count(*) when `star`), min, max, sum, avg."""

    func: str
    star: bool = False
    count: int = 0
    int_sum: int = 0
    frac_sum: Fraction = Fraction(0)
    floats: bool = False
    decimals: bool = False
    num_min: Any = None
    num_max: Any = None
    str_min: str | None = None
    str_max: str | None = None
    skipped: int = 0  # not a number (sum, avg) or not comparable (min, max)
    #: The floats the exact sum cannot hold, read: a NaN, +Infinity, -Infinity.
    nan: bool = False
    pos_inf: bool = False
    neg_inf: bool = False

    def add(self, value: Any) -> None:
        if self.star:
            self.count += 1
            return
        if value is None:
            return
        if self.func == "count":
            self.count += 1
        elif is_number(value):
            self.count += 1
            if isinstance(value, int):
                self.int_sum += value
            elif isinstance(value, float) and (value != value or value in _INFINITIES):
                self.floats = True
                if value != value:
                    self.nan = True
                    value = numbers.NAN
                elif value > 0:
                    self.pos_inf = True
                else:
                    self.neg_inf = True
            else:
                self.frac_sum += Fraction(value)
                self.floats |= isinstance(value, float)
                self.decimals |= isinstance(value, Decimal)
            self.num_min = _pick(self.num_min, value, min)
            self.num_max = _pick(self.num_max, value, max)
        elif isinstance(value, str) and self.func in ("min", "max"):
            self.count += 1
            self.str_min = _pick(self.str_min, value, min)
            self.str_max = _pick(self.str_max, value, max)
        else:
            self.skipped += 1

    def merge(self, other: Accumulator) -> None:
        self.count += other.count
        self.int_sum += other.int_sum
        self.frac_sum += other.frac_sum
        self.floats |= other.floats
        self.decimals |= other.decimals
        self.skipped += other.skipped
        self.nan |= other.nan
        self.pos_inf |= other.pos_inf
        self.neg_inf |= other.neg_inf
        for attr, pick in _EXTREMES:
            setattr(self, attr, _pick(getattr(self, attr), getattr(other, attr), pick))

    def result(self) -> Any:
        if self.func == "count":
            return self.count
        if self.func in ("min", "max"):
            number = self.num_min if self.func == "min" else self.num_max
            return number if number is not None else (self.str_min if self.func == "min" else self.str_max)
        if self.count == 0 and self.str_min is None:
            return None
        if self.nan or self.pos_inf or self.neg_inf:  # what a float sum of them gives
            return numbers.NAN if self.nan or (self.pos_inf and self.neg_inf) else (
                math.inf if self.pos_inf else -math.inf)
        total = self.frac_sum + self.int_sum
        if self.func == "avg":
            return _float(total / self.count) if self.count else None
        if self.floats:
            return _float(total)
        if self.decimals:
            return Decimal(total.numerator) / Decimal(total.denominator)
        return self.int_sum


def _float(value: Fraction) -> float:
    """The float nearest `value`; past the largest float, an infinity (as a float sum gives)."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


_INFINITIES = (math.inf, -math.inf)
#: An accumulator's extremes, each with the function that picks between two.
_EXTREMES = (("num_min", min), ("num_max", max), ("str_min", min), ("str_max", max))


def _pick(mine: Any, theirs: Any, pick: Any) -> Any:
    """min or max of two values (None: none yet); equal numbers of different types (1, 1.0)
    resolve by type name, so the answer does not depend on the order values came in. NaN is
    above every number (payload.numbers): max's answer once read, min's only alone."""
    # The common cases first, as the rule below answers them: GROUP BY merges a page's partial
    # per group and aggregate, most of them holding no extreme, the rest two of one type.
    if theirs is None and not (type(mine) is float and mine != mine):
        return mine
    if type(mine) is type(theirs) and mine == mine and theirs == theirs:
        return pick(mine, theirs)  # equal values: the first, as the type-name order keeps them
    both = [v for v in (mine, theirs) if v is not None]
    if not both:
        return None
    nans = [v for v in both if isinstance(v, float) and v != v]
    if nans:
        rest = [v for v in both if not (isinstance(v, float) and v != v)]
        return numbers.NAN if pick is max or not rest else rest[0]
    best = pick(both)
    return sorted((v for v in both if v == best), key=lambda v: type(v).__name__)[0]


@dataclass(frozen=True)
class AggSpec:
    func: str
    star: bool = False


def specs(plan: Plan) -> tuple[AggSpec, ...]:
    """The accumulators a plan's aggregates need, in the order of its items."""
    return tuple(AggSpec(i.func or "count", i.ref is None) for i in plan.items if i.kind == "agg")


@dataclass
class Groups:
    """Per GROUP BY key (a tuple of path values, None for missing), one Accumulator per aggregate."""

    specs: tuple[AggSpec, ...]
    max_groups: int = MAX_GROUPS
    groups: dict[tuple[Any, ...], list[Accumulator]] = field(default_factory=dict)

    def _group(self, key: tuple[Any, ...]) -> list[Accumulator]:
        try:
            accs = self.groups.get(key)
        except TypeError:  # a record (a dict or a list) in the key: grouped by its text
            key = tuple(map(_keyed, key))
            accs = self.groups.get(key)
        if accs is None and any(isinstance(v, float) and v != v for v in key):
            key = tuple(map(numbers.canonical, key))  # every NaN one key: the NaN group
            accs = self.groups.get(key)
        if accs is None:
            if len(self.groups) >= self.max_groups:
                raise QueryError(f"more than {self.max_groups} groups: narrow the WHERE or the GROUP BY")
            accs = self.groups[key] = [Accumulator(s.func, s.star) for s in self.specs]
        return accs

    def add(self, key: tuple[Any, ...], values: Sequence[Any]) -> None:
        """`values`: one per aggregate, in order (anything for count(*))."""
        for acc, value in zip(self._group(key), values, strict=True):
            acc.add(value)

    def merge(self, other: Groups) -> None:
        for key, accs in other.groups.items():
            self.merge_group(key, accs)

    def merge_group(self, key: tuple[Any, ...], accs: Sequence[Accumulator]) -> None:
        """One group's partial results (a page's, summed by the native core; another part's)."""
        for mine, theirs in zip(self._group(key), accs, strict=True):
            mine.merge(theirs)

    def skipped(self) -> int:
        return sum(acc.skipped for accs in self.groups.values() for acc in accs)

    def results(self) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
        """(key, results) per group, keys sorted (sort_key) so the answer does not depend on
        the order rows came in. With no GROUP BY and no row, one group () of empty results."""
        if not self.groups and not self.specs:
            return []
        groups = self.groups or {(): [Accumulator(s.func, s.star) for s in self.specs]}
        keys = sorted(groups, key=lambda k: tuple(v.marker if isinstance(v, _Record) else sort_key(v)
                                                  for v in k))
        return [(tuple(v.value if isinstance(v, _Record) else v for v in k),
                 tuple(acc.result() for acc in groups[k])) for k in keys]


def _keyed(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return _Record(value)
    return value


class _Record:
    """A record (a dict or a list, not hashable) in a GROUP BY key: equal to another by its text
    within the value's budget (sort_key)."""

    __slots__ = ("marker", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.marker = sort_key(value)

    def __hash__(self) -> int:
        return hash(self.marker)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Record) and self.marker == other.marker



_RANK = {bool: 1, str: 3}


def sort_key(value: Any) -> tuple[Any, ...]:
    """A total order over the values a path gives: null first, then booleans, numbers, strings,
    then anything else by its text; the undecodable values' group last."""
    if value is None:
        return (0, 0)
    if value is UNDECODABLE_GROUP:
        return (6,)
    if isinstance(value, bool):
        return (1, value)
    if is_number(value):
        return (2, *numbers.sort_rank(value))
    if isinstance(value, str):
        return (3, value)
    if isinstance(value, BlobView):  # a blob the query decoded already: ordered by its bytes
        value = value.stored
    # A record's text within the value's budget: repr() of a record of shared parts (back-
    # references in its format) would write every path of it. One the budget cuts is equal to no
    # other value (DISTINCT keeps it, GROUP BY gives it its own group: a random tag, unique across
    # worker processes) and sorts after the records that fit.
    text, cut = render_cut(value)
    if cut is None:
        return (4, text)
    return (5, text, random.getrandbits(64))


@dataclass
class RowBuffer:
    """The rows DISTINCT and ORDER BY hold before answering: at most `max_rows`."""

    max_rows: int = MAX_ROWS
    distinct: bool = False
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    seen: set[tuple[Any, ...]] = field(default_factory=set)

    def add(self, row: tuple[Any, ...]) -> None:
        if self.distinct:
            marker = tuple(sort_key(v) for v in row)
            if marker in self.seen:
                return
            self.seen.add(marker)
        if len(self.rows) >= self.max_rows:
            raise QueryError(f"more than {self.max_rows} rows to sort or deduplicate here: "
                             "narrow the WHERE or add a LIMIT without ORDER BY")
        self.rows.append(row)

    def merge(self, other: RowBuffer) -> None:
        for row in other.rows:
            self.add(row)

    def sorted(self, order: Iterable[tuple[int, bool]], limit: int | None = None) -> list[tuple[Any, ...]]:
        """The rows by `order` ((column index, descending) pairs), then by every value so the
        result does not depend on arrival order."""
        rows = sorted(self.rows, key=lambda r: tuple(sort_key(v) for v in r))
        for index, desc in reversed(list(order)):
            rows.sort(key=_column_key(index), reverse=desc)
        return rows[:limit] if limit is not None else rows


def _column_key(index: int) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return sort_key(row[index])
    return key
