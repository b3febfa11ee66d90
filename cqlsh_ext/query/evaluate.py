"""Evaluate a Plan on one row: decode each blob the display's way, take the paths from the
decoded records, test the payload conditions with SQL's semantics (docs/queries.md)."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

from cqlsh_ext.payload.engine import CUT, ValueEngine
from cqlsh_ext.payload.formats.tree import Cut, Tagged, render
from cqlsh_ext.payload.unwrap import STRUCTURED, TEXT, BlobView, json_container, unwrap, unwrap_spec
from cqlsh_ext.query.aggregate import UNDECODABLE_GROUP
from cqlsh_ext.query.grammar import Column, Literal, Path, Plan, Predicate, QueryError, Ref

#: A path that is not there: distinct from a record's own null (None), though both are SQL null.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()

#: (column, the map key or UDT field inside it or None) -> the DECODE column setting, or None.
Cache = dict[tuple[str, "str | None"], "Decoded"]
SpecLookup = Callable[[str, "str | None"], "str | None"]


def no_settings(column: str, inner: str | None) -> str | None:
    """No column settings (a module function, so that Settings can be sent to another process)."""
    return None


@dataclass(frozen=True)
class Settings:
    """What the display decodes with: -d's mode ('auto' or a codec name; 'none' refuses paths),
    the output cap, and the column settings."""

    mode: str = "auto"
    cap: int = 1 << 20
    spec: SpecLookup = field(default=no_settings)


#: A text's tree before it is read: the JSON container, or the text itself.
_UNREAD: Any = type("Unread", (), {"__repr__": lambda self: "UNREAD"})()


class Decoded:
    """One blob, decoded: `state` is 'ok', 'undecodable' or 'cut'. `tree` the record (a JSON
    text's container, a record format's tree) or MISSING; `text` what LIKE on the bare column
    reads (the stored text, or a record format's rendering, made only when LIKE asks). A text's
    JSON is read on the first use of `tree` (a condition the text cannot meet needs none)."""

    __slots__ = ("_tree", "state", "stored_text")

    def __init__(self, state: str, tree: Any = None, stored_text: str | None = None) -> None:
        self.state = state
        self._tree = tree
        self.stored_text = stored_text

    @classmethod
    def of_text(cls, text: str) -> Decoded:
        """A value that reads as text: its JSON object or array when it is one, else the text."""
        return cls("ok", _UNREAD, text)

    @property
    def tree(self) -> Any:
        if self._tree is _UNREAD:
            text = self.stored_text
            assert text is not None
            found = json_container(text)
            self._tree = text if found is None else found
        return self._tree

    @property
    def unread(self) -> bool:
        """A text whose JSON is not read yet."""
        return self._tree is _UNREAD

    @property
    def text(self) -> str | None:
        if self.stored_text is None and self.state == "ok" and self.tree is not MISSING:
            self.stored_text = render(self.tree)
        return self.stored_text

    def __repr__(self) -> str:
        return f"Decoded({self.state!r}, {self.tree!r}, {self.stored_text!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decoded):
            return NotImplemented
        return (self.state, self.tree, self.stored_text) == (other.state, other.tree, other.stored_text)

    __hash__ = None  # type: ignore[assignment]


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


@dataclass(frozen=True)
class Miss:
    """A path a decoded value did not have: it stopped at step `depth` (`key`), where the value held
    `keys` (a mapping's string keys; empty when it was no mapping)."""

    path: str
    depth: int
    key: str | int
    keys: tuple[str, ...]


def decode(value: bytes, settings: Settings, spec: str | None) -> Decoded:
    view = unwrap_spec(value, spec, settings.cap) if spec else unwrap(value, settings.mode, settings.cap)
    return decoded_view(view)


def decoded_view(view: BlobView) -> Decoded:
    """What a query reads of a blob's view."""
    if view.truncated_layer is not None:
        return Decoded("cut")
    if view.kind == TEXT and view.text is not None:
        return Decoded.of_text(view.text)
    if view.kind == STRUCTURED:
        return Decoded("ok", view.tree)
    return Decoded("undecodable")


def decoded_contents(kind: str, found: Any) -> Decoded:
    """What a query reads of a blob from the engine's contents() (the same as decoded_view)."""
    if kind == TEXT:
        return Decoded.of_text(found)
    if kind == STRUCTURED:
        return Decoded("ok", found)
    return _CUT if kind == CUT else _UNDECODABLE


#: The conditions on a blob itself (grammar.Predicate).
OF_THE_BLOB = ("IS UNDECODABLE", "IS NOT UNDECODABLE")


#: What a cut or undecodable blob reads as: nothing in them changes (Decoded.text keeps None).
_CUT = Decoded("cut")
_UNDECODABLE = Decoded("undecodable")


def _absent_or_not_blob(value: Any) -> Decoded:
    """A blob place holding no bytes: null (or not there) reads as missing; anything else (a
    value of another type) as undecodable."""
    return Decoded("ok", MISSING) if value is None or value is MISSING else Decoded("undecodable")


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


def _field(container: Any, name: str) -> Any:
    if container is None:
        return MISSING
    if isinstance(container, Mapping):
        return container.get(name, MISSING)
    if isinstance(container, tuple) and hasattr(container, "_fields"):
        return getattr(container, name, MISSING)
    return getattr(container, name, MISSING)


def step(node: Any, key: str | int) -> Any:
    """`node`'s child at `key` (a dict key as written, a list index), MISSING when absent. A
    Tagged value stands for its value; a Cut raises _CutHere."""
    while isinstance(node, Tagged):
        node = node.value
    if isinstance(node, Cut):
        raise _CutHere
    if isinstance(node, Mapping):
        return node.get(key, MISSING)
    if isinstance(key, int) and isinstance(node, (list, tuple)):
        return node[key] if -len(node) <= key < len(node) else MISSING
    return MISSING


class _CutHere(Exception):
    pass


#: Keys kept of a mapping where a path stopped: enough to find the nearest, bounded for a huge one.
MISS_KEYS = 200


def _keys_of(node: Any) -> tuple[str, ...]:
    while isinstance(node, Tagged):
        node = node.value
    if not isinstance(node, Mapping):
        return ()
    keys: list[str] = []
    for key in node:
        if isinstance(key, str):
            keys.append(key)
            if len(keys) >= MISS_KEYS:
                break
    return tuple(keys)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _same_kind(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if _number(a) and _number(b):
        return not (isinstance(a, float) and a != a) and not (isinstance(b, float) and b != b)
    return isinstance(a, str) and isinstance(b, str)


def _plain(value: Any) -> Any:
    while isinstance(value, Tagged):
        value = value.value
    return value


def compare(value: Any, op: str, literal: Literal) -> bool:
    """SQL: a missing or null value, a null literal, or a type mismatch matches nothing."""
    value = _plain(value)
    if value is MISSING or value is None or literal is None or not _same_kind(value, literal):
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


def _nothing(row: Sequence[Any], blob: Decoded) -> None:
    return None


def _item(row: Sequence[Any], blob: Decoded, at: int) -> Any:
    return row[at]


def _or_none(read: tuple[str, Any]) -> Any:
    """A read's value (read(), value()): None when it is missing, undecodable or cut."""
    state, value = read
    return None if state != "ok" or value is MISSING else value


def _read_or_none(row: Sequence[Any], blob: Decoded, read: Callable[[Decoded], tuple[str, Any]]) -> Any:
    return _or_none(read(blob))


def _group_key(read: tuple[str, Any]) -> Any:
    """A read's value as a GROUP BY key: an undecodable value's group is UNDECODABLE_GROUP, not
    null's."""
    return UNDECODABLE_GROUP if read[0] == "undecodable" else _plain(_or_none(read))


def _is_undecodable(decoded: Decoded) -> bool:
    return decoded.state == "undecodable"


def _is_not_undecodable(decoded: Decoded) -> bool:
    return decoded.state != "undecodable"


def _all_of(tests: list[Callable[[Decoded], bool]]) -> Callable[[Decoded], bool]:
    """Whether a decoded blob meets every test, as one function (a page calls it per value)."""
    if not tests:
        return lambda blob: True
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda blob: first(blob) and second(blob)
    return lambda blob: all(test(blob) for test in tests)


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
        return lambda value: any(compare(value, "=", lit) for lit in values)
    if op == "CONTAINS":
        def contains(value: Any) -> bool:
            value = _plain(value)
            items = list(value.values()) if isinstance(value, Mapping) else value
            return isinstance(items, (list, tuple)) and any(compare(v, "=", values[0]) for v in items)
        return contains
    literal = values[0]
    if op == "=" and type(literal) is str:  # the common condition, told without compare()'s steps
        return lambda value: (isinstance(value, str) and value == literal) or (
            isinstance(value, Tagged) and compare(value, op, literal))
    return lambda value: compare(value, op, literal)


def like_regex(pattern: str) -> re.Pattern[str]:
    parts = ["." if c == "_" else ".*" if c == "%" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


class Evaluator:
    """Evaluates one plan on rows: `evaluate(row)` with `row` a mapping column -> the driver's
    value (bytes for a blob, a dict for a map, an object, namedtuple or dict for a UDT)."""

    def __init__(self, plan: Plan, settings: Settings) -> None:
        if settings.mode == "none":
            raise QueryError("decoding is off (-d none): a payload path cannot be read")
        self.plan = plan
        self.settings = settings
        # Keyed by the predicate itself (a frozen value), not its id(): an Evaluator may be sent
        # to another process (Spark tasks), where ids differ.
        self.likes = {p: like_regex(str(p.values[0])) for p in plan.predicates if p.op == "LIKE"}
        self.outputs: list[Ref | None] = [i.ref for i in plan.items if i.kind in ("path", "column")]
        self.agg_refs = [i.ref for i in plan.items if i.kind == "agg"]
        #: The paths walked in the decoded values read since the last walked():
        #: the texts of those a value had (null included), and where the others stopped (walked();
        #: query.answer.PathsSeen). `_known`: the paths some value had, ever.
        self._found: set[str] = set()
        self._missed: list[Miss] = []
        self._known: set[str] = set()
        self.needles = {p: n for p in plan.predicates if (n := _needles(p)) is not None}
        #: One engine per blob place read (column, map key or UDT field) without a column setting.
        self.engines: dict[tuple[str, str | None], ValueEngine] = {}
        self.page_column = self._page_column()
        self._blob_tests: dict[Predicate, Callable[[Decoded], bool]] | None = None

    def _page_column(self) -> str | None:
        """The blob column every payload reference of the plan reads, when there is one and a
        row always reads it (a condition, or a path among what a matching row gives): a page is
        then decoded column-wise (evaluate_page), unless the column has a setting. None: row by
        row."""
        plan = self.plan
        refs: list[Ref | None] = [p.ref for p in plan.predicates]
        refs += [*plan.group_by, *(ref for ref, _ in plan.order_by), *self.agg_refs, *self.outputs]
        paths = [r for r in refs if isinstance(r, Path)]
        bare = {p.ref.name for p in plan.predicates if isinstance(p.ref, Column)}
        columns = {r.column for r in paths} | bare
        if len(columns) != 1 or any(r.access is not None for r in paths):
            return None
        if any(isinstance(r, Column) for r in self.agg_refs):
            return None  # an aggregate of a plain column reads the row
        (column,) = columns
        if bare - {column}:
            return None
        read = [*plan.group_by, *self.agg_refs] if plan.aggregates else list(self.outputs)
        if not plan.predicates and not any(isinstance(r, Path) for r in read):
            return None
        return column

    def _engine(self, key: tuple[str, str | None]) -> ValueEngine:
        engine = self.engines.get(key)
        if engine is None:
            engine = self.engines[key] = ValueEngine(self.settings.mode, self.settings.cap)
        return engine

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (Spark tasks): the engines' remembered containers stay behind."""
        return {**self.__dict__, "engines": {}, "_blob_tests": None}

    def blob(self, row: Mapping[str, Any], column: str, access: str | None,
             cache: Cache) -> Decoded:
        key = (column, access)
        if key in cache:
            return cache[key]
        value = row.get(column)
        if access is not None:
            value = _field(value, access)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            cache[key] = _absent_or_not_blob(value)
            return cache[key]
        spec = self.settings.spec(column, access)
        if spec:
            cache[key] = decode(bytes(value), self.settings, spec)
        else:
            cache[key] = decoded_contents(*self._engine(key).contents((bytes(value),))[0])
        return cache[key]

    def decode_page(self, column: str, values: Sequence[Any]) -> list[Decoded]:
        """blob() of a page of one column's values (no column setting): the engine decodes
        them together."""
        engine = self._engine((column, None))
        if all(type(v) is bytes for v in values):  # the driver's blobs: the common page
            return [decoded_contents(kind, found) for kind, found in engine.contents(values)]
        blobs = [bytes(v) for v in values if isinstance(v, (bytes, bytearray, memoryview))]
        contents = iter(engine.contents(blobs))
        return [decoded_contents(*next(contents)) if isinstance(v, (bytes, bytearray, memoryview))
                else _absent_or_not_blob(v) for v in values]

    def read(self, decoded: Decoded, ref: Path) -> tuple[str, Any]:
        """The value at `ref` in a decoded blob: ('ok', the value or MISSING), ('undecodable',
        None) or ('cut', None). Notes whether the value had the path (walked())."""
        if decoded.state != "ok":
            return decoded.state, None
        node = decoded.tree
        if node is MISSING:  # no value (a null column, an absent map key): nothing to walk
            return "ok", node
        text = ref.text
        try:
            for depth, key in enumerate(ref.steps):
                parent = node
                # A record's map (a plain dict) the common step; everything else as step() says.
                node = node.get(key, MISSING) if type(node) is dict else step(node, key)
                if node is MISSING:
                    if text not in self._found:  # PathsSeen drops a miss of a path found
                        self._missed.append(Miss(text, depth, key, _keys_of(parent)))
                    break
            else:
                self._found.add(text)
                self._known.add(text)
            if isinstance(node, Cut):
                raise _CutHere
        except _CutHere:
            return "cut", None
        return "ok", node

    def reader(self, ref: Path) -> Callable[[Decoded], tuple[str, Any]]:
        """read(decoded, ref) as one function of the decoded blob: a page reads every value. A
        path of one key into a record's map, the common path, is read without read()'s walk."""
        read = self.read
        if len(ref.steps) != 1 or not isinstance(ref.steps[0], str):
            return lambda decoded: read(decoded, ref)
        key, text, known = ref.steps[0], ref.text, self._known

        def read_key(decoded: Decoded) -> tuple[str, Any]:
            tree = decoded.tree if decoded.state == "ok" else None
            if type(tree) is not dict:  # not ok, no value, or a record that is no map: read()
                return read(decoded, ref)
            node = tree.get(key, MISSING)
            if node is MISSING:
                if text not in self._found:
                    self._missed.append(Miss(text, 0, key, _keys_of(tree)))
                return "ok", MISSING
            self._found.add(text)
            known.add(text)
            return ("cut", None) if isinstance(node, Cut) else ("ok", node)

        return read_key

    def _reader(self, refs: Sequence[Ref | None]) -> Callable[[Decoded], tuple[Any, ...]]:
        """The plain values at `refs` (paths of the page column; None for any other ref) of a
        decoded blob, as one function of the blob (a page calls it per value)."""
        if not any(isinstance(ref, Path) for ref in refs):  # count(*) and the like
            nothing = (None,) * len(refs)
            return lambda blob: nothing
        reads = [self.reader(ref) if isinstance(ref, Path) else None for ref in refs]
        if len(reads) == 1:
            (read,) = reads
            assert read is not None
            return lambda blob: (_plain(_or_none(read(blob))),)
        return lambda blob: tuple(None if read is None else _plain(_or_none(read(blob))) for read in reads)

    def _group_reader(self, refs: Sequence[Path]) -> Callable[[Decoded], tuple[Any, ...]]:
        """The GROUP BY key of a decoded blob (paths of the page column), as one function of the
        blob: _group_key of each path's read."""
        if not refs:
            return lambda blob: ()
        reads = [self.reader(ref) for ref in refs]
        return lambda blob: tuple(_group_key(read(blob)) for read in reads)

    def _getters(self, names: Sequence[str]) -> list[Callable[[Sequence[Any], Decoded], Any]]:
        """values(row, self.outputs, {page column: its decoded blob}, plain=False) as one function
        per output of (the row as `names` lists it, the decoded blob): evaluate_page's rows."""
        getters: list[Callable[[Sequence[Any], Decoded], Any]] = []
        for ref in self.outputs:
            if ref is None or (isinstance(ref, Column) and ref.name not in names):  # missing
                getters.append(_nothing)
            elif isinstance(ref, Column):
                getters.append(partial(_item, at=list(names).index(ref.name)))
            else:
                getters.append(partial(_read_or_none, read=self.reader(ref)))
        return getters

    def value(self, row: Mapping[str, Any], ref: Ref, cache: Cache) -> tuple[str, Any]:
        """('ok', the value or MISSING), ('undecodable', None) or ('cut', None)."""
        if isinstance(ref, Column):
            return "ok", row.get(ref.name, MISSING)
        return self.read(self.blob(row, ref.column, ref.access, cache), ref)

    def test(self, row: Mapping[str, Any], pred: Predicate, cache: Cache) -> bool:
        if isinstance(pred.ref, Column):  # a bare blob column: LIKE on the decoded text, or its state
            return self.tester(pred)(self.blob(row, pred.ref.name, None, cache))
        return self.test_blob(self.blob(row, pred.ref.column, pred.ref.access, cache), pred)

    def tester(self, pred: Predicate) -> Callable[[Decoded], bool]:
        """The condition as one function of the decoded blob it reads."""
        if pred.op in OF_THE_BLOB:  # of the blob itself, whatever it holds (null: not undecodable)
            return _is_undecodable if pred.op == "IS UNDECODABLE" else _is_not_undecodable
        if isinstance(pred.ref, Column):
            return partial(self.test_text, pred=pred)
        return self.blob_tests[pred]

    def test_text(self, decoded: Decoded, pred: Predicate) -> bool:
        """LIKE on a bare blob column's decoded text."""
        if decoded.state != "ok" or decoded.text is None:
            return False
        return self.likes[pred].fullmatch(decoded.text) is not None

    def test_blob(self, decoded: Decoded, pred: Predicate) -> bool:
        """A condition on a path (pred.ref) of the decoded blob it reads."""
        return self.blob_tests[pred](decoded)

    @property
    def blob_tests(self) -> dict[Predicate, Callable[[Decoded], bool]]:
        """test_blob() of each condition on a path, as one function each, made once: a page
        tests every value, and a frozen Predicate hashes its whole tree at each lookup."""
        if self._blob_tests is None:
            self._blob_tests = {p: self.tester(p) if p.op in OF_THE_BLOB else self._blob_test(p)
                                for p in self.plan.predicates if isinstance(p.ref, Path)}
        return self._blob_tests

    def _blob_test(self, pred: Predicate) -> Callable[[Decoded], bool]:
        ref = pred.ref
        assert isinstance(ref, Path)
        needles = self.needles.get(pred)
        text, known, read = ref.text, self._known, self.reader(ref)
        holds = _holds(pred, self.likes.get(pred))

        def test(decoded: Decoded) -> bool:
            if decoded.state != "ok":
                return False
            # No string it asks for is in the text: the JSON need not be read. Only for a path
            # some value had: a value read notes a path it lacks, and a path no value had is
            # reported.
            if (needles is not None and decoded._tree is _UNREAD and text in known
                    and cannot_hold(decoded.stored_text or "", needles)):
                return False
            state, value = read(decoded)
            return state == "ok" and holds(value)

        return test

    def evaluate(self, row: Mapping[str, Any]) -> RowResult:
        """Whether `row` matches every payload condition, and its projected values (plain and
        path items in order; None for missing, undecodable or cut). A value that is undecodable or
        cut counts once per row."""
        cache: Cache = {}
        matched = all(self.test(row, p, cache) for p in self.plan.predicates)
        values: tuple[Any, ...] = ()
        key: tuple[Any, ...] = ()
        inputs: tuple[Any, ...] = ()
        if matched and self.agg_refs:
            key = tuple(_group_key(self.value(row, ref, cache)) for ref in self.plan.group_by)
            inputs = self.values(row, self.agg_refs, cache)
        elif matched:
            values = self.values(row, self.outputs, cache, plain=False)
        states = [d.state for d in cache.values()]
        return RowResult(matched, values, states.count("undecodable"), states.count("cut"), key, inputs)

    def walked(self) -> tuple[set[str], list[Miss]]:
        """The paths walked since the last walked() (by evaluate(), evaluate_page() and
        values()): (the texts of those a value had, where the others stopped)."""
        walked = self._found, self._missed
        self._found, self._missed = set(), []
        return walked

    def evaluate_page(self, names: Sequence[str],
                      rows: Sequence[Sequence[Any]]) -> tuple[list[tuple[int, RowResult]], int, int]:
        """evaluate() of each row of a page (rows as the columns `names` list them): the
        matching rows' (index, result), and the values undecodable and cut over the page. When
        the plan reads one blob column (page_column), its values are decoded column-wise first
        and every row reads them: the same answers and counts."""
        column = self.page_column
        if column is not None and self.settings.spec(column, None) is not None:
            column = self.page_column = None  # a column setting: its values decoded one by one
        found: list[tuple[int, RowResult]] = []
        if column is None or column not in names:
            undecodable = cut = 0
            for k, row in enumerate(rows):
                result = self.evaluate(dict(zip(names, row, strict=True)))
                undecodable += result.undecodable
                cut += result.cut
                if result.matched:
                    found.append((k, result))
            return found, undecodable, cut
        at = list(names).index(column)
        decoded = self.decode_page(column, [row[at] for row in rows])
        blob_tests = self.blob_tests
        matching = _all_of([self.tester(p) if isinstance(p.ref, Column) else blob_tests[p]
                            for p in self.plan.predicates])
        hits = [k for k, blob in enumerate(decoded) if matching(blob)]
        if self.agg_refs:
            key, inputs = self._group_reader(self.plan.group_by), self._reader(self.agg_refs)
            found = [(k, RowResult(True, (), 0, 0, key(decoded[k]), inputs(decoded[k]))) for k in hits]
        else:
            getters = self._getters(names)
            found = [(k, RowResult(True, tuple([get(rows[k], decoded[k]) for get in getters]))) for k in hits]
        states = [blob.state for blob in decoded]
        return found, states.count("undecodable"), states.count("cut")

    def values(self, row: Mapping[str, Any], refs: Sequence[Ref | None], cache: Cache,
               plain: bool = True) -> tuple[Any, ...]:
        """The value of each ref (None for a ref None, missing, undecodable or cut)."""
        out: list[Any] = []
        for ref in refs:
            if ref is None:
                out.append(None)
                continue
            value = _or_none(self.value(row, ref, cache))
            out.append(_plain(value) if plain else value)
        return tuple(out)
