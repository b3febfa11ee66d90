"""Evaluate a Plan on pages of rows: each blob place the plan reads (a column, or a map value or UDT
field inside one) is decoded a page at a time by the value engine's page API (payload.engine:
read_page), which reads the plan's paths into columns; the payload conditions are then tested
with SQL's semantics (docs/queries.md) and the projected values taken from those columns."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import repeat
from typing import TYPE_CHECKING, Any

from cqlsh_ext.payload import numbers
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.formats.tree import Tagged, render
from cqlsh_ext.payload.numbers import is_number
from cqlsh_ext.payload.pages import PageRead, ReadRequest
from cqlsh_ext.payload.paths import CUT, MISSING, UNDECODABLE_GROUP
from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace, sibling_index
from cqlsh_ext.payload.program import (
    Given,
    PageProgram,
    ProgramAggregate,
    ProgramCondition,
    ProgramPlace,
    TextNeedles,
)
from cqlsh_ext.payload.server_rows import column_of as _column  # (as Evaluator._read_place names it)
from cqlsh_ext.payload.server_rows import columns_of
from cqlsh_ext.payload.sibling import Chosen, chosen
from cqlsh_ext.payload.view import RECORD, TEXT, UNDECODABLE_KINDS, UNKNOWN, BlobView
from cqlsh_ext.query.grammar import Column, Literal, Path, Plan, Predicate, QueryError, Ref

if TYPE_CHECKING:
    from cqlsh_ext.payload.program import CompiledProgram, PageProgramAnswer

#: Where a blob sits in a row: its column, and the map key or UDT field inside it (or None).
BlobPlace = tuple[str, "str | None"]


@dataclass
class RowResult:
    matched: bool
    values: tuple[Any, ...]
    undecodable: int = 0
    cut: int = 0
    #: With aggregates, when matched: the GROUP BY key and one input per aggregate (None for
    #: count(*), a missing path, or a value undecodable or cut), for aggregate.Groups.add.
    key: tuple[Any, ...] = ()
    inputs: tuple[Any, ...] = ()
    #: With ORDER BY, when matched: the sort keys (plain values), read with the row's page.
    order: tuple[Any, ...] = ()
    #: The views of the row's blob columns the statement decoded and the answer gives as they are
    #: (a bare column, `*`): the display, JSON, CSV and Parquet read them instead of decoding again.
    views: dict[str, BlobView] = field(default_factory=dict)


@dataclass
class PageAnswer:
    """What one page gives a plan's answer (Evaluator.answer_page): the rows that matched (index in
    the page, RowResult; with aggregates their key and inputs), the page's per-group partial
    results already summed (GROUP BY key, one Accumulator per aggregate), and the values
    undecodable and cut over the page."""

    found: list[tuple[int, RowResult]]
    partials: list[tuple[tuple[Any, ...], list[Any]]]
    undecodable: int
    cut: int
    #: The rows that matched (those in `found` and those summed in `partials`).
    matched: int


@dataclass
class PageColumns:
    """A page's answer as columns (Evaluator.answer_columns): the kept rows' indexes in the page,
    per projected item (path or column) the kept rows' values, the values undecodable and cut
    over the page."""

    kept: list[int]
    #: Lists, or columns the value engine holds (Evaluator.held: sequences of the same values).
    columns: list[Sequence[Any]]
    undecodable: int
    cut: int
    #: The blob columns `*` gives, by name, as the engine holds its reading of them (Given.held);
    #: the others `*` gives are the page's values.
    given: dict[str, Sequence[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Miss:
    """A path a decoded value did not have: it stopped at step `depth` (`key`), where the value held
    `keys` (a mapping's string keys; empty when it was no mapping)."""

    path: str
    depth: int
    key: str | int
    keys: tuple[str, ...]


def _needles(pred: Predicate) -> tuple[bool, tuple[str, ...]] | None:
    """For a condition on a path that only a string can meet: (any, strings) such that a JSON
    text holding none (any) or not all of the strings, and no backslash, cannot meet it: its
    strings appear in it verbatim when it has no escapes. None for other conditions."""
    if not isinstance(pred.ref, Path) or not pred.ref.steps:
        return None
    values = pred.values
    if pred.op in ("=", "CONTAINS") and len(values) == 1 and isinstance(values[0], str):
        return True, (values[0],)
    if pred.op == "IN" and values and all(isinstance(v, str) for v in values):
        return True, tuple(str(v) for v in values)
    if pred.op == "LIKE" and isinstance(values[0], str):
        parts = tuple(p for p in re.split("[%_]", values[0]) if p)
        return (False, parts) if parts else None
    return None


def cannot_hold(text: str, needles: tuple[bool, tuple[str, ...]]) -> bool:
    """Whether a JSON text certainly holds no string a condition with these needles asks for."""
    if "\\" in text:
        return False
    any_of, strings = needles
    if len(strings) == 1:  # the common condition (= 'x'); either way it is that string's absence
        return strings[0] not in text
    if any_of:
        return not any(s in text for s in strings)
    return not all(s in text for s in strings)


def _rejects(needles: tuple[bool, tuple[str, ...]]) -> Callable[[str], bool]:
    return lambda text: cannot_hold(text, needles)


def _field(container: Any, name: str) -> Any:
    if container is None:
        return MISSING
    if isinstance(container, Mapping):
        return container.get(name, MISSING)
    return getattr(container, name, MISSING)


def _same_kind(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return isinstance(a, str) and isinstance(b, str)


def _plain(value: Any) -> Any:
    while isinstance(value, Tagged):
        value = value.value
    return value


def compare(value: Any, op: str, literal: Literal) -> bool:
    """SQL: a missing or null value, a null literal, or a type mismatch matches nothing; numbers by
    the number rule (payload.numbers: a float against the literal's nearest double, NaN above all)."""
    value = _plain(value)
    if value is MISSING or value is None or literal is None:
        return False
    if is_number(value) and is_number(literal):
        return numbers.order(value, literal) in numbers.ACCEPTS[op]
    if not _same_kind(value, literal):
        return False
    if op == "=":
        return bool(value == literal)
    if op == "!=":
        return bool(value != literal)
    if op == "<":
        return bool(value < literal)
    if op == "<=":
        return bool(value <= literal)
    if op == ">":
        return bool(value > literal)
    return bool(value >= literal)


def _equals(literal: Literal) -> Callable[[Any], bool]:
    """Whether a value equals `literal` (compare's `=`), a number's test made once."""
    if is_number(literal):
        assert isinstance(literal, (int, Decimal))
        test = numbers.number_test("=", literal)
        return lambda value: test(_plain(value))
    return lambda value: compare(value, "=", literal)


def _in_list(literals: Sequence[Literal]) -> Callable[[Any], bool]:
    """Whether a value equals one of an IN list's literals (compare's `=`), the literals made sets
    once: a number by the number rule (numbers.NumberSet), a string or a bool as itself; a null
    literal equals nothing."""
    # A literal's numbers are ints and Decimals (the grammar reads no float), never a bool: the
    # number rule (payload.numbers.is_number) as the literals' type spells it.
    found = numbers.NumberSet(lit for lit in literals
                              if isinstance(lit, (int, Decimal)) and not isinstance(lit, bool))
    texts = frozenset(lit for lit in literals if isinstance(lit, str))
    truths = frozenset(lit for lit in literals if isinstance(lit, bool))

    def contains(value: Any) -> bool:
        value = _plain(value)
        if is_number(value):
            return value in found
        if isinstance(value, bool):
            return value in truths
        return isinstance(value, str) and value in texts

    return contains


def _holds(pred: Predicate, like: re.Pattern[str] | None) -> Callable[[Any], bool]:
    """Whether a value read at a condition's path meets it (SQL semantics: compare())."""
    op, values = pred.op, pred.values
    if op == "IS NULL":
        return lambda value: (value := _plain(value)) is MISSING or value is None
    if op == "IS NOT NULL":
        return lambda value: not ((value := _plain(value)) is MISSING or value is None)
    if op == "LIKE":
        assert like is not None
        fullmatch = like.fullmatch
        return lambda value: isinstance(value := _plain(value), str) and fullmatch(value) is not None
    if op == "IN":
        return _in_list(values)
    if op == "CONTAINS":
        equals = _equals(values[0])

        def contains(value: Any) -> bool:
            value = _plain(value)
            items = list(value.values()) if isinstance(value, Mapping) else value
            return isinstance(items, (list, tuple)) and any(equals(v) for v in items)
        return contains
    literal = values[0]
    if op == "=" and type(literal) is str:  # the common condition, told without compare()'s steps
        return lambda value: (isinstance(value, str) and value == literal) or (
            isinstance(value, Tagged) and compare(value, op, literal))
    if is_number(literal):  # the literal's nearest double made once, not per value
        assert isinstance(literal, (int, Decimal))
        test = numbers.number_test(op, literal)
        return lambda value: test(_plain(value))
    return lambda value: compare(value, op, literal)


def like_regex(pattern: str) -> re.Pattern[str]:
    parts = ["." if c == "_" else ".*" if c == "%" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


#: A blob place's state in one row: read ("ok"), nothing a query can read, or cut by the budget.
OK, UNDECODABLE, CUT_STATE = "ok", "undecodable", "cut"
#: The conditions said of a blob itself, not of a path inside it (grammar.Predicate).
OF_THE_BLOB = ("IS UNDECODABLE", "IS NOT UNDECODABLE")


class _PlaceRead:
    """What the plan reads at one blob place: the paths (their indexes in the engine's ReadRequest),
    whether a condition reads the bare column's text, and whether the answer gives the blob whole
    (`gives`: a bare column the statement names, or `*`)."""

    __slots__ = ("engine", "gives", "paths", "place", "request")

    def __init__(self, place: BlobPlace, engine: ValueEngine) -> None:
        self.place = place
        self.engine = engine
        self.paths: dict[str, int] = {}  # path text -> its index in request.paths
        self.request = ReadRequest()
        self.gives = False

    def with_views(self) -> _PlaceRead:
        """This place as the Python engine reads the rows the value engine left of a page it
        answered: a blob the answer gives comes as its view, made once (the engine's other rows
        come as it holds them: no value is read twice)."""
        if not self.gives or self.request.views:
            return self
        read = _PlaceRead(self.place, self.engine)
        read.paths, read.gives = self.paths, self.gives
        request = self.request
        read.request = ReadRequest(request.paths, text=request.text, views=True, needles=request.needles)
        return read


#: A row's value at a path when there is none to read: the blob is undecodable, cut or rejected.
_NONE: Any = type("NoValue", (), {"__repr__": lambda self: "NONE", "__bool__": lambda self: False})()


class _PlacePage:
    """One place's values of a page, read: per row, its state (OK, UNDECODABLE, CUT_STATE), where
    its value is in the engine's PageRead (`at`: the index; -1 when there is nothing to read, -2 for a
    null blob), and the kind of each undecodable one."""

    __slots__ = ("at", "blob_at", "kinds", "page", "paths", "states", "_values")

    def __init__(self, states: list[str], at: list[int], blob_at: list[int], page: PageRead,
                 paths: dict[str, int]) -> None:
        self.states = states
        self.at = at
        #: Per row, its blob's index in the page whether it can be read or not (-1: no blob).
        self.blob_at = blob_at
        self.page = page
        self.paths = paths
        #: Per row whose blob is undecodable, its kind (payload.view: unknown, failed, binary).
        self.kinds: dict[int, str] = {}
        self._values: dict[str, list[Any]] = {}

    def values(self, path: str) -> list[Any]:
        """Per row of the page, the value at `path`: the value, MISSING (also for a null blob),
        CUT, or _NONE where the blob cannot be read. Made once per page and path."""
        found = self._values.get(path)
        if found is None:
            column = self.page.columns[self.paths[path]]
            found = self._values[path] = [column[i] if i >= 0 else MISSING if i == -2 else _NONE
                                          for i in self.at]
        return found


def _reads_payloads(plan: Plan) -> bool:
    """Whether the plan reads inside a payload: a path, an aggregate, a payload condition, a
    group or an order by a path (a plan of columns alone reads none: the stored bytes, -d none)."""
    return bool(plan.predicates or plan.group_by
                or any(item.kind not in ("star", "column") for item in plan.items)
                or any(not isinstance(ref, Column) for ref, _ in plan.order_by))


class Evaluator:
    """Evaluates one plan on pages of rows: `evaluate_page(names, rows)`; `evaluate(row)` for one
    row, a mapping column -> the driver's value (bytes for a blob, a dict for a map, an object,
    namedtuple or dict for a UDT)."""

    def __init__(self, plan: Plan, decoding: Decoding, keyspace: str | None = None,
                 given: Given | None = None) -> None:
        if decoding.mode == "none" and _reads_payloads(plan):
            raise QueryError("decoding is off (-d none): a payload path cannot be read")
        self.plan = plan
        #: How the answer gives the blobs it returns whole (payload.program.Given): as the engine
        #: holds its reading (the native core's, `given.held`: the kept rows as columns, nothing
        #: decoded again), else as views (decoded with the page: the Python engine's; on the
        #: native core, the views of its reading; `given.full`: the Python engine's alone, a writer's).
        self.given = given if given is not None else Given()
        #: How the plan's blobs decode (-d's mode, the cap, the column settings, matched on each
        #: blob's place in `keyspace` (the plan's table's: the session's when the plan names none).
        self.decoding = decoding
        self.keyspace = keyspace if keyspace is not None else plan.keyspace
        # Keyed by the predicate itself (a frozen value), not its id(): an Evaluator may be sent
        # to another process (Spark tasks), where ids differ.
        self.likes = {p: like_regex(str(p.values[0])) for p in plan.predicates if p.op == "LIKE"}
        self.outputs: list[Ref | None] = [i.ref for i in plan.items if i.kind in ("path", "column")]
        self.agg_refs = [i.ref for i in plan.items if i.kind == "agg"]
        self.needles = {p: n for p in plan.predicates if (n := _needles(p)) is not None}
        self._paths_found: set[str] = set()
        self._missed: list[Miss] = []
        #: The undecodable values read since the last undecodable_kinds(), by kind.
        self._kinds: dict[str, int] = {}
        self._places: dict[BlobPlace, _PlaceRead] | None = None
        #: The plan as the value engine answers it in one call a page (PlanProgram), or False where
        #: it does not.
        self._core: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (Spark tasks): the engines, what they remember and the compiled program stay
        behind."""
        return {**self.__dict__, "_places": None, "_core": None}

    @property
    def views(self) -> bool:
        """A blob the answer gives whole comes as its view in the rows (not `given.held`)."""
        return not self.given.held

    @property
    def held(self) -> bool:
        """The answer's kept rows come as columns, what the engine read of them as it holds it
        (`given.held`: payload.program.Given)."""
        return self.given.held

    # ------------------------------------------------------------------ what is read where
    @property
    def places(self) -> dict[BlobPlace, _PlaceRead]:
        """The blob places the plan reads, each with its engine and the paths it reads (made on
        first use: the engines are per process)."""
        if self._places is None:
            self._places = self._make_places()
        return self._places

    def _make_places(self) -> dict[BlobPlace, _PlaceRead]:
        plan = self.plan
        engines = Engines(self.decoding)
        places: dict[BlobPlace, _PlaceRead] = {}

        def at(place: BlobPlace) -> _PlaceRead:
            read = places.get(place)
            if read is None:
                column, access = place
                where = ValuePlace(self.keyspace, plan.table, column, plan.setting_steps(column, access))
                read = places[place] = _PlaceRead(place, engines(where))
            return read

        refs: list[Ref | None] = [p.ref for p in plan.predicates if p.op not in OF_THE_BLOB]
        refs += [*plan.group_by, *self.agg_refs, *self.outputs, *(ref for ref, _ in plan.order_by)]
        # By text, each path once, in order (dicts: a chain of 20,000 conditions is read in linear time).
        paths: dict[BlobPlace, dict[str, Path]] = {}
        for ref in refs:
            if isinstance(ref, Path):
                paths.setdefault((ref.column, ref.access), {}).setdefault(ref.text, ref)
        # A path's needles are those of the first condition on it that has some.
        first_needles: dict[Ref, Any] = {}
        for pred in plan.predicates:
            if pred in self.needles:
                first_needles.setdefault(pred.ref, self.needles[pred])
        texts = {p.ref.name for p in plan.predicates if isinstance(p.ref, Column) and p.op == "LIKE"}
        # A blob the answer gives as it is, and whose paths the statement reads: read once, with
        # the page, for whoever writes it (the display, JSON, CSV, Parquet, MCP, the API): its views
        # go to the answer, or, held (`given`), the engine's reading of it (PlanProgram).
        gives = {ref.name for ref in self.outputs if isinstance(ref, Column)}
        if any(item.kind == "star" for item in plan.items):
            gives |= {column for column, access in paths if access is None}
        shown = set(gives) if self.views else set()
        # A bare blob whose chain a sibling column picks (payload.sibling) is read here, beside
        # its row, and its views go to the answer, whoever writes it (the display, JSON, CSV,
        # Parquet, the API): read later, apart from its row, it would have no sibling.
        for ref in self.outputs:
            if isinstance(ref, Column) and engines.sibling(
                    ValuePlace(self.keyspace, plan.table, ref.name)) is not None:
                shown.add(ref.name)
                paths.setdefault((ref.name, None), {})
        for place, by_text in paths.items():
            refs_here = list(by_text.values())
            read = at(place)
            read.paths = {ref.text: i for i, ref in enumerate(refs_here)}
            needles = []
            for ref in refs_here:
                found = first_needles.get(ref)
                needles.append(None if found is None else _rejects(found))
            bare = place[1] is None
            read.gives = place[0] in gives and bare
            read.request = ReadRequest([ref.steps for ref in refs_here], text=place[0] in texts and bare,
                           views=place[0] in shown and bare, needles=needles)
        for column in texts:  # LIKE on the bare column reads its text (and a record's tree)
            read = at((column, None))
            if not read.request.text:
                read.request = ReadRequest(read.request.paths, text=True, views=read.request.views,
                                           needles=read.request.needles)
        for pred in plan.predicates:  # IS [NOT] UNDECODABLE reads the blob's kind only
            if pred.op in OF_THE_BLOB:
                at(_place_of(pred.ref))
        return places

    # ------------------------------------------------------------------ a page
    def evaluate_page(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
                      core: bool = True) -> tuple[list[tuple[int, RowResult]], int, int]:
        """Whether each row of a page (rows as the columns `names` list them) matches every
        payload condition, and its projected values (plain and path items in order; None for
        missing, undecodable or cut): the matching rows' (index, result), and the values
        undecodable and cut over the page (once per blob per row)."""
        index = {name: i for i, name in enumerate(names)}
        read = {place: self._read_place(place_read, index, rows, core)
                for place, place_read in self.places.items()}
        undecodable = sum(p.states.count(UNDECODABLE) for p in read.values())
        cut = sum(p.states.count(CUT_STATE) for p in read.values())
        for place_page in read.values():
            for kind in place_page.kinds.values():
                self._kinds[kind] = self._kinds.get(kind, 0) + 1
        # Conditions in turn, each on the rows the ones before kept (SQL's AND, short-circuited).
        hits: list[int] = list(range(len(rows)))
        for pred in self.plan.predicates:
            if not hits:
                break
            hits = self._kept(pred, read, hits)
        found: list[tuple[int, RowResult]] = []
        if self.agg_refs:
            key = self._getters(self.plan.group_by, read, index, plain=True, group=True)
            inputs = self._getters(self.agg_refs, read, index, plain=True)
            for k in hits:
                row = rows[k]
                found.append((k, RowResult(True, (), 0, 0, tuple([get(k, row) for get in key]),
                                           tuple([get(k, row) for get in inputs]))))
        else:
            outputs = self._getters(self.outputs, read, index, plain=False)
            order = self._getters([ref for ref, _ in self.plan.order_by], read, index, plain=True)
            viewed = [(place[0], p) for place, p in read.items() if p.page.views]
            for k in hits:
                row = rows[k]
                views = {column: p.page.views[i] for column, p in viewed if (i := p.blob_at[k]) >= 0}
                found.append((k, RowResult(True, tuple([get(k, row) for get in outputs]),
                                           order=tuple([get(k, row) for get in order]), views=views)))
        self._note_paths(read)
        return found, undecodable, cut

    def evaluate_left(self, names: Sequence[str], rows: Sequence[Sequence[Any]]
                      ) -> tuple[list[tuple[int, RowResult]], int, int]:
        """evaluate_page() of the rows the value engine left of a page it answered (PlanProgram),
        by the Python engine: a blob the answer gives comes as its view (_PlaceRead.with_views),
        the one reading of such a value."""
        places = self.places
        self._places = {place: read.with_views() for place, read in places.items()}
        try:
            return self.evaluate_page(names, rows, core=False)
        finally:
            self._places = places

    @property
    def on_core(self) -> bool:
        """The value engine answers the plan in one call a page (PlanProgram: the native core): a
        scan may hand it the server's pages (scanning.pages_in), only the rows it keeps or leaves
        to the Python evaluator made by the driver."""
        return bool(self._program())

    def _program(self) -> Any:
        """The plan as the value engine answers it in one call a page (PlanProgram), or False where
        it does not, or where the answer gives the Python engine's whole views (Given.full)."""
        core = self._core
        if core is None:
            core = self._core = False if self.given.full else PlanProgram.of(self) or False
        return core

    def answer_page(self, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> PageAnswer:
        """A page's part of the answer (PageAnswer): in one call where the engine answers the plan
        so (PlanProgram: every place in plain auto mode on the native core, conditions and
        aggregates it evaluates), the rows it leaves read by evaluate_page(); else
        evaluate_page() alone.
        The same answer and counts either way (tests/native compares them page by page)."""
        core = self._program()
        if core and rows:
            answer: PageAnswer | None = core.answer(self, names, rows)
            if answer is not None:
                return answer
        found, undecodable, cut = self.evaluate_page(names, rows, core=not self.given.full)
        return PageAnswer(found, [], undecodable, cut, len(found))

    def answer_columns(self, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> PageColumns | None:
        """answer_page() as columns, for a plan that keeps rows and gives their projected values
        (no aggregates, no views asked for): from the engine's one call, its output columns as they are;
        on the Python road, evaluate_page()'s rows turned into columns. None where the answer is
        not made of columns (GROUP BY, the views of a blob the answer gives)."""
        if self.agg_refs or any(read.request.views for read in self.places.values()):
            return None
        if not self.places:  # nothing to decode (a plain SELECT's file): every row, its columns alone
            at = {name: i for i, name in enumerate(names)}
            made = columns_of(rows, sorted({at[ref.name] for ref in self.outputs
                                            if isinstance(ref, Column) and ref.name in at}))
            return PageColumns(list(range(len(rows))), [
                made[at[ref.name]] if isinstance(ref, Column) and ref.name in at else [None] * len(rows)
                for ref in self.outputs], 0, 0)
        core = self._program()
        if core and rows:
            found: PageColumns | None = core.columns(self, names, rows)
            if found is not None:
                return found
        kept, undecodable, cut = self.evaluate_page(names, rows, core=not self.given.full)
        width = len(self.outputs)
        values = (result.values for _k, result in kept)
        columns: list[Sequence[Any]] = [list(column) for column in zip(*values, strict=True)] \
            if kept else [[] for _ in range(width)]
        return PageColumns([k for k, _result in kept], columns, undecodable, cut)

    def evaluate(self, row: Mapping[str, Any]) -> RowResult:
        """evaluate_page() of one row given as a mapping; the counts are the row's."""
        names = list(row)
        found, undecodable, cut = self.evaluate_page(names, [[row[n] for n in names]])
        if found:
            result = found[0][1]
            result.undecodable, result.cut = undecodable, cut
            return result
        return RowResult(False, (), undecodable, cut)

    def _read_place(self, place_read: _PlaceRead, index: Mapping[str, int], rows: Sequence[Sequence[Any]],
                    core: bool = True) -> _PlacePage:
        column, access = place_read.place
        at_column = index.get(column)
        values = [MISSING] * len(rows) if at_column is None else _column(rows, at_column)
        if access is not None:
            values = [_field(v, access) for v in values]
        elif place_read.engine.choice is not None:  # the chain its row's sibling picks
            values = _with_siblings(place_read.engine, values, index, rows)
        if all(type(v) is bytes for v in values):  # the driver's blobs: the common page
            page = place_read.engine.read_page(values, place_read.request, core)
            blob_at = list(range(len(values)))
            others = 0
        else:
            blobs: list[Any] = []  # bytes, or Chosen (with the row's sibling value)
            blob_at, others = [], 0
            for value in values:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    blob_at.append(len(blobs))
                    blobs.append(bytes(value))
                elif isinstance(value, Chosen):  # a blob with its row's sibling value
                    blob_at.append(len(blobs))
                    blobs.append(value)
                elif isinstance(value, str):  # a text column's value: its UTF-8 bytes, read as stored text
                    blob_at.append(len(blobs))
                    blobs.append(value.encode("utf-8"))
                elif value is None or value is MISSING:  # null (or not there) reads as missing
                    blob_at.append(-2)
                else:  # a value of another type: undecodable
                    blob_at.append(-1)
                    others += 1
            page = place_read.engine.read_page(blobs, place_read.request, core)
        kinds, cuts, rejected = page.kinds, page.cut, page.rejected
        at, states = list(blob_at), [OK] * len(blob_at)
        readable = kinds.count(TEXT) + kinds.count(RECORD)
        found = _PlacePage(states, at, blob_at, page, place_read.paths)
        if readable == len(kinds) and not any(cuts) and not any(rejected):
            # Every blob can be read (the common page): only values of another type to mark.
            if others:
                for k, i in enumerate(blob_at):
                    if i == -1:
                        states[k], found.kinds[k] = UNDECODABLE, UNKNOWN
            return found
        for k, i in enumerate(blob_at):
            if i >= 0:
                if cuts[i]:  # a cut value counts as cut, whatever its kind
                    states[k], at[k] = CUT_STATE, -1
                elif kinds[i] in UNDECODABLE_KINDS:
                    states[k], at[k] = UNDECODABLE, -1
                    found.kinds[k] = kinds[i]
                elif rejected[i]:  # readable, but a condition certainly fails on it
                    at[k] = -1
            elif i == -1:  # not a blob at all: no known format
                states[k], found.kinds[k] = UNDECODABLE, UNKNOWN
        return found

    def _kept(self, pred: Predicate, read: Mapping[BlobPlace, _PlacePage], rows: list[int]) -> list[int]:
        """The rows among `rows` whose values meet a condition."""
        ref = pred.ref
        if pred.op in OF_THE_BLOB:  # of the blob itself: its state (a null blob is not undecodable)
            states = read[_place_of(ref)].states
            wanted = pred.op == "IS UNDECODABLE"
            return [k for k in rows if (states[k] == UNDECODABLE) == wanted]
        if isinstance(ref, Column):  # a bare blob column: LIKE on the decoded text
            place_page = read[(ref.name, None)]
            at, page = place_page.at, place_page.page
            fullmatch = self.likes[pred].fullmatch

            def text_of(i: int) -> str | None:
                text = page.texts[i]
                if text is None and page.kinds[i] == RECORD:
                    text = render(page.trees[i])
                return text

            return [k for k in rows if (i := at[k]) >= 0 and (text := text_of(i)) is not None
                    and fullmatch(text) is not None]
        values = read[(ref.column, ref.access)].values(ref.text)
        holds = _holds(pred, self.likes.get(pred))
        return [k for k in rows if (v := values[k]) is not _NONE and v is not CUT and holds(v)]

    def _getters(self, refs: Sequence[Ref | None], read: Mapping[BlobPlace, _PlacePage],
                 index: Mapping[str, int], plain: bool,
                 group: bool = False) -> list[Callable[[int, Sequence[Any]], Any]]:
        """One function of (row index, row) per ref: the projected value (None for a ref None,
        missing, undecodable or cut; a Tagged value kept unless `plain`). `group`: GROUP BY's
        keys, where an undecodable value's is UNDECODABLE_GROUP (a group of its own, not null's)."""
        getters: list[Callable[[int, Sequence[Any]], Any]] = []
        for ref in refs:
            if ref is None or (isinstance(ref, Column) and ref.name not in index):
                getters.append(lambda k, row: None)
            elif isinstance(ref, Column):
                place_page = read.get((ref.name, None))
                if place_page is not None and place_page.page.views and not plain:
                    getters.append(_view_or_item(place_page, index[ref.name]))
                else:
                    getters.append(_item(index[ref.name]))
            else:
                place_page = read[(ref.column, ref.access)]
                value = _path_value(place_page.values(ref.text), plain)
                # The common page has no undecodable value: its key is the path's value as is.
                undecodable = group and UNDECODABLE in place_page.states
                getters.append(_group_value(place_page.states, value) if undecodable else value)
        return getters

    # ------------------------------------------------------------------ paths seen
    def _note_paths(self, read: Mapping[BlobPlace, _PlacePage]) -> None:
        for place, place_page in read.items():
            page = place_page.page
            for text, p in self.places[place].paths.items():
                if page.found[p]:
                    self._paths_found.add(text)
                miss = page.missed[p]
                if miss is not None and text not in self._paths_found:
                    depth, key, keys = miss
                    self._missed.append(Miss(text, depth, key, tuple(keys)))

    def undecodable_kinds(self) -> dict[str, int]:
        """The undecodable values read since the last call, by kind (payload.view: unknown, failed,
        binary): the closing lines' breakdown."""
        kinds, self._kinds = self._kinds, {}
        return kinds

    def walked(self) -> tuple[set[str], list[Miss]]:
        """The paths read since the last walked() (by evaluate_page() and evaluate()):
        (the texts of those a value had, where the others stopped)."""
        walked = self._paths_found, self._missed
        self._paths_found, self._missed = set(), []
        return walked


class Unsupported(Exception):
    """A plan the value engine does not answer in one call a page: the Python evaluator does."""


class PlanProgram:
    """A plan as the value engine answers it a page at a time in one call (payload.program's
    PageProgram, compiled by payload.engine.query_program where every place's engine reads pages
    whole): its places, in the evaluator's order, with the paths each reads; the conditions with
    their literals; the projected and ORDER BY paths; the GROUP BY keys and aggregates.
    Unsupported where the engine does not answer the plan so: the Python evaluator reads it."""

    def __init__(self, evaluator: Evaluator) -> None:
        from cqlsh_ext.payload.engine import query_program

        plan = evaluator.plan
        places = list(evaluator.places.items())
        if not places:
            raise Unsupported("no blob place")
        self.places = [place for place, _read in places]
        self.reads = [read for _place, read in places]
        index = {place: i for i, place in enumerate(self.places)}
        for read in self.reads:
            if read.request.text or (read.request.views and read.place[1] is not None):
                raise Unsupported("LIKE on the bare column")
        self.paths = [tuple(tuple(steps) for steps in read.request.paths) for read in self.reads]

        def path_of(ref: Path) -> tuple[int, int]:
            place = index[(ref.column, ref.access)]
            return place, self.reads[place].paths[ref.text]

        conditions: list[ProgramCondition] = []
        for pred in plan.predicates:
            if pred.op in OF_THE_BLOB:
                conditions.append(ProgramCondition(pred.op, index[_place_of(pred.ref)]))
            elif isinstance(pred.ref, Path):
                place, path = path_of(pred.ref)
                conditions.append(ProgramCondition(pred.op, place, path, tuple(pred.values)))
            else:
                raise Unsupported("a condition on a column")
        outputs = tuple(path_of(ref) if isinstance(ref, Path) else None for ref in evaluator.outputs)
        if any(ref is not None and not isinstance(ref, Path) for ref, _ in plan.order_by):
            raise Unsupported("ORDER BY a column")
        order = tuple(path_of(ref) if isinstance(ref, Path) else None for ref, _ in plan.order_by)
        self.grouped = bool(evaluator.agg_refs)
        keys = tuple(path_of(ref) for ref in plan.group_by)
        specs = [(item.func or "count", item.ref) for item in plan.items if item.kind == "agg"]
        aggregates: list[ProgramAggregate] = []
        for func, ref in specs:
            if ref is not None and not isinstance(ref, Path):
                raise Unsupported("an aggregate of a column")
            aggregates.append(ProgramAggregate(func, ref is None, None if ref is None else path_of(ref)))
        self.funcs = [(func, ref is None) for func, ref in specs]
        #: Held columns: the paths' values held by the engine (Given.held).
        self.held = evaluator.held and not self.grouped
        #: The blobs the answer gives as they are and whose paths are read (a bare column, `*`), by
        #: column: their place, whose kept rows' contents the engine reads with the paths (trees
        #: built): given as it holds them, or as the views of its reading; never read again.
        self.given: dict[str, int] = {} if self.grouped else {
            read.place[0]: index[read.place] for read in self.reads if read.gives}
        self.contents: dict[int, int] = {  # output item -> place
            o: self.given[ref.name] for o, ref in enumerate(evaluator.outputs)
            if isinstance(ref, Column) and ref.name in self.given}
        #: The columns `*` gives whose contents the engine holds (not among the output items).
        self.star = [name for name in self.given
                     if any(item.kind == "star" for item in plan.items)] if self.held else []
        self.places_given = sorted(set(self.given.values()))
        #: Per place, the needles of the conditions on its paths: (path, the needles).
        needles: list[list[tuple[int, TextNeedles]]] = [[] for _ in self.places]
        for pred in plan.predicates:
            found = evaluator.needles.get(pred)
            if found is not None and isinstance(pred.ref, Path):
                place, path = path_of(pred.ref)
                needles[place].append((path, TextNeedles(found[0], tuple(found[1]))))
        program = PageProgram(
            places=tuple(ProgramPlace(paths, tuple(found))
                         for paths, found in zip(self.paths, needles, strict=True)),
            conditions=tuple(conditions), outputs=outputs, order=order, keys=keys,
            aggregates=tuple(aggregates), grouped=self.grouped, cap=self.reads[0].engine.cap,
            undecodable_group=UNDECODABLE_GROUP, contents=tuple(self.places_given),
            text_trees=evaluator.given.trees, text_gaps=evaluator.given.gaps)
        compiled = query_program(program, [read.engine for read in self.reads])
        if compiled is None:
            raise Unsupported("a place the engine does not read whole, or a literal it does not compare")
        self.compiled: CompiledProgram = compiled

    @classmethod
    def of(cls, evaluator: Evaluator) -> PlanProgram | None:
        try:
            return cls(evaluator)
        except Unsupported:
            return None

    def _query(self, evaluator: Evaluator, names: Sequence[str], rows: Sequence[Sequence[Any]],
               held: bool = False, make_kept: bool = True) -> PageProgramAnswer | None:
        """The engine's answer to the page (CompiledProgram.answer), its undecodable kinds and the
        paths it found or missed noted on the evaluator; None when the engine fails the call (it
        should not) or a sum overflows: Python reads the page. Of the server's page, the rows the
        engine leaves are made by the driver, and the kept ones unless `make_kept` is False
        (columns(): only their ordinary columns are made)."""
        at = {name: i for i, name in enumerate(names)}
        # Per place: a bare column's index in the page (the engine reads its cells from the page
        # itself), else its values (a map value or a UDT field, taken out of the page's column).
        sources: list[int | Sequence[Any]] = []
        for column, access in self.places:
            if access is None and column in at:
                sources.append(at[column])
            else:
                col = at.get(column)
                values = [None] * len(rows) if col is None else _column(rows, col)
                if access is not None:
                    values = [None if (v := _field(value, access)) is MISSING else v for value in values]
                sources.append(values)
        answer = self.compiled.answer(rows, sources, held=held, read_kept=make_kept)
        if answer is None:
            return None
        for kind, n in answer.kinds:
            evaluator._kinds[kind] = evaluator._kinds.get(kind, 0) + n
        for i, (read, seen) in enumerate(zip(self.reads, answer.paths, strict=True)):
            for text, p in read.paths.items():
                was_found, miss = seen[p]
                if was_found:
                    evaluator._paths_found.add(text)
                elif miss is not None and text not in evaluator._paths_found:
                    depth, keys = miss
                    evaluator._missed.append(Miss(text, depth, self.paths[i][p][depth], tuple(keys)))
        return answer

    def answer(self, evaluator: Evaluator, names: Sequence[str],
               rows: Sequence[Sequence[Any]]) -> PageAnswer | None:
        """The page's answer from the engine's one call, the rows it leaves read by the Python
        evaluator and merged in by the answer (payload.program.PageProgramAnswer.rows); None when
        the engine fails the call (it should not) or a sum overflows: Python reads the page."""
        from cqlsh_ext.query.groups import Accumulator

        # The kept rows' values are taken a column at a time, only the ordinary columns the
        # statement names made (of the server's page), a blob given from the engine's reading of
        # it; the kept rows themselves are made only for `*` (query.answer.Answer reads them).
        star = any(item.kind == "star" for item in evaluator.plan.items)
        answer = self._query(evaluator, names, rows, make_kept=star)
        if answer is None:
            return None
        at = {name: i for i, name in enumerate(names)}
        found: list[tuple[int, RowResult]] = []
        kept = answer.kept
        if not self.grouped and kept:
            given = self._given_values(answer)
            columns = self._kept_columns(evaluator, at, rows, kept, given, answer.outputs.__getitem__)
            views = [(name, given[place]) for name, place in self.given.items()]
            rows_values = zip(*columns, strict=True) if columns else repeat(())
            orders = zip(*answer.order, strict=True) if answer.order else repeat(())
            found = [(k, RowResult(True, values, order=by, views={
                name: view for name, column in views if isinstance(view := column[j], BlobView)}))
                for j, (k, values, by) in enumerate(zip(kept, rows_values, orders, strict=False))]
        partials: list[tuple[tuple[Any, ...], list[Any]]] = []
        for key, states in answer.groups:
            partials.append((key, [Accumulator(func, star, state.count, state.int_sum, state.frac_sum,
                                               state.floats, False, state.num_min, state.num_max,
                                               state.str_min, state.str_max, state.skipped)
                                   for (func, star), state in zip(self.funcs, states, strict=True)]))
        found, undecodable, cut, matched = answer.rows(
            found, lambda handed: evaluator.evaluate_left(names, handed))
        return PageAnswer(found, partials, undecodable, cut, matched)

    def _kept_columns(self, evaluator: Evaluator, at: Mapping[str, int], rows: Sequence[Sequence[Any]],
                      kept: list[int], given: Mapping[int, Sequence[Any]],
                      path: Callable[[int], Sequence[Any]]) -> list[Sequence[Any]]:
        """The kept rows' columns, one per projected item: a blob the answer gives, `given` by its
        place; a column's, of the page (of the server's page: one pass; every row kept, the rows'
        own column, no list of indexes for the engine to read); a path's, `path(item)`."""
        outputs = evaluator.outputs
        wanted = {at[ref.name] for o, ref in enumerate(outputs)
                  if o not in self.contents and isinstance(ref, Column) and ref.name in at}
        made = columns_of(rows, sorted(wanted), None if len(kept) == len(rows) else kept)
        columns: list[Sequence[Any]] = []
        for o, ref in enumerate(outputs):
            if o in self.contents:
                columns.append(given[self.contents[o]])
            elif isinstance(ref, Column):
                col = at.get(ref.name)
                columns.append([None] * len(kept) if col is None else made[col])
            else:
                columns.append(path(o))
        return columns

    def _given_values(self, answer: PageProgramAnswer) -> dict[int, list[Any]]:
        """Per place given whole, its kept rows' blobs as the readers of rows take them: the views
        of the engine's reading (payload.held_views; the values it leaves, the Python engine's
        views, made by the place's engine), None for a null blob."""
        from cqlsh_ext.payload.columns import column_of

        return {place: column_of(held, self.reads[place].engine).values()
                for place, held in zip(self.places_given, answer.contents, strict=True)}

    def columns(self, evaluator: Evaluator, names: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> PageColumns | None:
        """The page's kept rows as columns, one per projected item (evaluator.outputs), in the
        page's order: the engine's own output columns for the paths, the page's values for the
        columns, a blob given (and one `*` gives: PageColumns.given) as the engine holds its
        reading; the rows it leaves read by the Python evaluator and put in their places by the
        answer (payload.program.PageProgramAnswer.columns). None where the answer is not made of
        columns (GROUP BY, views asked for), or the engine fails the call."""
        if self.grouped or any(read.request.views for read in self.reads):
            return None
        held = self.held
        answer = self._query(evaluator, names, rows, held, make_kept=False)
        if answer is None:
            return None
        at = {name: i for i, name in enumerate(names)}
        kept = list(answer.kept)
        # a blob the answer gives, its rows read by the engine with the paths
        given = dict(zip(self.places_given, answer.contents, strict=True))

        def path(o: int) -> Sequence[Any]:
            """The path's values held by the engine, else the engine's column of the path."""
            values = answer.held[o] if held else None
            return list(answer.outputs[o]) if values is None else values

        columns = self._kept_columns(evaluator, at, rows, kept, given, path)
        star = self.star
        columns += [given[self.given[name]] for name in star]

        def python(handed: list[Sequence[Any]]) -> tuple[list[tuple[int, Sequence[Any]]], int, int]:
            more, u, c = evaluator.evaluate_left(names, handed)
            return [(j, (*result.values, *(result.views.get(name) or _item_of(handed[j], at, name)
                                           for name in star))) for j, result in more], u, c

        kept, columns, undecodable, cut = answer.columns(columns, python)
        width = len(evaluator.outputs)
        return PageColumns(kept, columns[:width], undecodable, cut,
                           dict(zip(star, columns[width:], strict=True)))


def _item_of(row: Sequence[Any], at: Mapping[str, int], name: str) -> Any:
    """A row's value of the column `name` (None: the row has no such column)."""
    col = at.get(name)
    return None if col is None else row[col]


def _with_siblings(engine: ValueEngine, values: Sequence[Any], index: Mapping[str, int],
                   rows: Sequence[Sequence[Any]]) -> list[Any]:
    """A `by` place's values with their rows' sibling values (payload.sibling.chosen), when the
    rows have that column; as they are otherwise (the engine notes the column to read)."""
    assert engine.choice is not None
    names = list(index)
    at = sibling_index(engine.choice.column, names)
    return list(values) if at is None else chosen(values, _column(rows, index[names[at]]))


def _place_of(ref: Ref) -> BlobPlace:
    """The blob place a condition on the blob itself names: a bare column, m['k'], u.field."""
    return (ref.name, None) if isinstance(ref, Column) else (ref.column, ref.access)


def _group_value(states: list[str], value: Callable[[int, Sequence[Any]], Any]
                 ) -> Callable[[int, Sequence[Any]], Any]:
    def get(k: int, row: Sequence[Any]) -> Any:
        return UNDECODABLE_GROUP if states[k] == UNDECODABLE else value(k, row)

    return get


def _item(at: int) -> Callable[[int, Sequence[Any]], Any]:
    return lambda k, row: row[at]


def _view_or_item(place_page: _PlacePage, at: int) -> Callable[[int, Sequence[Any]], Any]:
    """A blob column the answer gives: its view where the page decoded one, else the row's value."""
    views, indexes = place_page.page.views, place_page.blob_at

    def get(k: int, row: Sequence[Any]) -> Any:
        i = indexes[k]
        return views[i] if i >= 0 else row[at]

    return get


def _path_value(values: list[Any], plain: bool) -> Callable[[int, Sequence[Any]], Any]:
    def get(k: int, row: Sequence[Any]) -> Any:
        found = values[k]
        if found is MISSING or found is CUT or found is _NONE:
            return None
        return _plain(found) if plain else found

    return get


def view_tree(view: BlobView) -> Any:
    """What a path is read in, in a view: a record's tree, a text's JSON (or the text itself when it
    is none), MISSING for a value a query cannot read."""
    if view.cut or (view.kind != TEXT and view.kind != RECORD):
        return MISSING
    tree = view.tree
    return view.text if tree is None and view.kind == TEXT else tree


__all__ = ["MISSING", "Decoding", "Evaluator", "Miss", "PageAnswer", "RowResult", "compare", "like_regex",
           "view_tree"]
