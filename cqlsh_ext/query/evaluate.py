"""Evaluate a Plan on one row: decode each blob the display's way, take the paths from the
decoded records, test the payload conditions with SQL's semantics (docs/queries.md)."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from cqlsh_ext.payload.formats.tree import Cut, Tagged, render
from cqlsh_ext.payload.unwrap import STRUCTURED, TEXT, json_container, unwrap, unwrap_spec
from cqlsh_ext.query.grammar import Column, Literal, Plan, Predicate, QueryError, Ref

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


@dataclass
class Decoded:
    """One blob, decoded: `state` is 'ok', 'undecodable' or 'cut'. `tree` the record (a JSON
    text's container, a record format's tree) or MISSING; `text` what LIKE on the bare column
    reads (the stored text, or a record format's rendering, made only when LIKE asks)."""

    state: str
    tree: Any = None
    stored_text: str | None = None

    @property
    def text(self) -> str | None:
        if self.stored_text is None and self.state == "ok" and self.tree is not MISSING:
            self.stored_text = render(self.tree)
        return self.stored_text


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
    if view.truncated_layer is not None:
        return Decoded("cut")
    if view.kind == TEXT and view.text is not None:
        tree = json_container(view.text)
        return Decoded("ok", view.text if tree is None else tree, view.text)
    if view.kind == STRUCTURED:
        return Decoded("ok", view.tree)
    return Decoded("undecodable")


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
        #: The paths walked in the decoded values of the row being evaluated: the texts of those a
        #: value had (null included), and where the others stopped (walked(); query.answer.PathsSeen).
        self._found: list[str] = []
        self._missed: list[Miss] = []

    def blob(self, row: Mapping[str, Any], column: str, access: str | None,
             cache: Cache) -> Decoded:
        key = (column, access)
        if key in cache:
            return cache[key]
        value = row.get(column)
        if access is not None:
            value = _field(value, access)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            absent = value is None or value is MISSING
            cache[key] = Decoded("ok", MISSING) if absent else Decoded("undecodable")
            return cache[key]
        cache[key] = decode(bytes(value), self.settings, self.settings.spec(column, access))
        return cache[key]

    def value(self, row: Mapping[str, Any], ref: Ref, cache: Cache) -> tuple[str, Any]:
        """('ok', the value or MISSING), ('undecodable', None) or ('cut', None)."""
        if isinstance(ref, Column):
            return "ok", row.get(ref.name, MISSING)
        decoded = self.blob(row, ref.column, ref.access, cache)
        if decoded.state != "ok":
            return decoded.state, None
        node = decoded.tree
        if node is MISSING:  # no value (a null column, an absent map key): nothing to walk
            return "ok", node
        try:
            for depth, key in enumerate(ref.steps):
                parent, node = node, step(node, key)
                if node is MISSING:
                    self._missed.append(Miss(ref.text, depth, key, _keys_of(parent)))
                    break
            else:
                self._found.append(ref.text)
            if isinstance(node, Cut):
                raise _CutHere
        except _CutHere:
            return "cut", None
        return "ok", node

    def test(self, row: Mapping[str, Any], pred: Predicate, cache: Cache,
             counts: list[int]) -> bool:
        if isinstance(pred.ref, Column):  # a bare blob column: LIKE on the decoded text
            decoded = self.blob(row, pred.ref.name, None, cache)
            if decoded.state != "ok" or decoded.text is None:
                self._count(decoded.state, counts)
                return False
            return self.likes[pred].fullmatch(decoded.text) is not None
        state, value = self.value(row, pred.ref, cache)
        if state != "ok":
            self._count(state, counts)
            return False
        value = _plain(value)
        null = value is MISSING or value is None
        if pred.op == "IS NULL":
            return null
        if pred.op == "IS NOT NULL":
            return not null
        if pred.op == "LIKE":
            return isinstance(value, str) and self.likes[pred].fullmatch(value) is not None
        if pred.op == "IN":
            return any(compare(value, "=", lit) for lit in pred.values)
        if pred.op == "CONTAINS":
            items = list(value.values()) if isinstance(value, Mapping) else value
            return isinstance(items, (list, tuple)) and any(compare(v, "=", pred.values[0]) for v in items)
        return compare(value, pred.op, pred.values[0])

    @staticmethod
    def _count(state: str, counts: list[int]) -> None:
        if state == "undecodable":
            counts[0] += 1
        elif state == "cut":
            counts[1] += 1

    def evaluate(self, row: Mapping[str, Any]) -> RowResult:
        """Whether `row` matches every payload condition, and its projected values (plain and
        path items in order; None for missing, undecodable or cut). A value that is undecodable or
        cut counts once per row."""
        cache: Cache = {}
        self._found, self._missed = [], []
        counts = [0, 0]
        matched = all(self.test(row, p, cache, counts) for p in self.plan.predicates)
        values: tuple[Any, ...] = ()
        key: tuple[Any, ...] = ()
        inputs: tuple[Any, ...] = ()
        if matched and self.agg_refs:
            key = self.values(row, self.plan.group_by, cache)
            inputs = self.values(row, self.agg_refs, cache)
        elif matched:
            values = self.values(row, self.outputs, cache, plain=False)
        states = [d.state for d in cache.values()]
        return RowResult(matched, values, states.count("undecodable"), states.count("cut"), key, inputs)

    def walked(self) -> tuple[list[str], list[Miss]]:
        """The paths walked since the last evaluate() began (its own and any values() after it):
        (the texts of those a value had, where the others stopped)."""
        return self._found, self._missed

    def values(self, row: Mapping[str, Any], refs: Sequence[Ref | None], cache: Cache,
               plain: bool = True) -> tuple[Any, ...]:
        """The value of each ref (None for a ref None, missing, undecodable or cut)."""
        out: list[Any] = []
        for ref in refs:
            if ref is None:
                out.append(None)
                continue
            state, value = self.value(row, ref, cache)
            value = None if state != "ok" or value is MISSING else value
            out.append(_plain(value) if plain else value)
        return tuple(out)
