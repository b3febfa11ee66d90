"""The structure of a place's payloads: every path seen in the decoded trees, with what was found
there, kept in a tree of `Node`s that merges exactly (worker processes, Spark's tasks).

One `Structure` per place (a blob column, a map's value under one key, a UDT's blob field); its
`add(tree)` walks one value's tree (a JSON text's container, a record format's tree:
payload.formats.tree) and counts, per path:

- `present`: the values that have the path (once per value, however many list elements have it);
- `seen`: its occurrences (a list's elements each count), and the types seen there (string,
  integer, float, decimal, boolean, null, record, list, bytes, timestamp, symbol, cut);
- string lengths and list lengths (least, most, total), numbers' least and most;
- its scalar values (describe.sketch): each one's count while there are few, then how many
  distinct.

A list's elements are the path `<list>[]`; keys that look like data (numbers, dates, UUIDs,
ids with a run of digits, e-mail addresses, very long keys, keys that are not text) are not paths
of their own: they fold into one `*` entry of their map, which counts what their keys looked like
and how many distinct there were. A Tagged value (a format's semantic tag, a stream's object)
stands for its value, as it does for a query's path.

Bounds, as key completion's sample has them (payload_select/keys.py): a value's walk visits at
most MAX_VISITS nodes (a record format's back-references make a graph whose paths can far outnumber
its nodes) and goes MAX_DEPTH levels deep; a place tracks at most MAX_PATHS paths, and what falls
beyond is counted (`untracked`), not dropped silently. Below these bounds every figure is exact and
the same however the values were split and merged; once a bound is reached the report says so.
"""

from __future__ import annotations

import datetime
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from cqlsh_ext.describe.sketch import Values
from cqlsh_ext.payload.formats.tree import Cut, Symbol, Tagged
from cqlsh_ext.payload_select.keys import MAX_DEPTH, MAX_PREFIXES, MAX_VISITS

#: Paths a place tracks at the most (key completion keeps as many prefixes per column).
MAX_PATHS = MAX_PREFIXES
#: What a list's elements and a map's data keys are called in a path.
ITEMS, FOLDED = "[]", "*"

#: What keys that stand for data look like, tried in this order: (what they are called, pattern).
DATA_KEYS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("dates", re.compile(r"\d{4}-\d{2}(?:-\d{2})?(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
                         r"(?:Z|[+-]\d{2}:?\d{2})?|\d{4}/\d{2}/\d{2}|\d{2}:\d{2}(?::\d{2})?")),
    ("numbers", re.compile(r"[+-]?\d+(?:\.\d+)?")),
    ("UUIDs", re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")),
    ("hex ids", re.compile(r"(?=[a-fA-F]*\d)[0-9a-fA-F]{8,}")),
    ("ids", re.compile(r".*\d{4}.*", re.DOTALL)),
    ("addresses", re.compile(r"[^@\s]+@[^@\s]+", re.DOTALL)),
)
#: Keys longer than this are data, whatever they hold.
LONG_KEY = 64
NOT_TEXT = "keys that are not text"


def data_kind(key: Any) -> str | None:
    """What a map key that stands for data looks like (DATA_KEYS), or None for a field name."""
    if type(key) is not str:
        return NOT_TEXT
    if len(key) > LONG_KEY:
        return "long keys"
    if not any(c.isdigit() or c == "@" for c in key):
        return None  # no pattern matches a key without a digit or an @: most keys end here
    for kind, pattern in DATA_KEYS:
        if pattern.fullmatch(key):
            return kind
    return None


class Node:
    """What was found at one path (see the module doc). `last` is the serial number of the last
    value that had the path, so that `present` counts a value once."""

    __slots__ = ("children", "folded", "high", "items", "key_kinds", "keys", "last", "list_max",
                 "list_min", "list_total", "lists", "low", "pending", "present", "seen", "str_max",
                 "str_min", "str_total", "strings", "types", "values")

    def __init__(self) -> None:
        self.present = 0
        self.seen = 0
        self.last = 0
        self.types: dict[str, int] = {}
        self.children: dict[str, Node] = {}
        self.items: Node | None = None
        self.folded: Node | None = None
        #: On a folded node: what its keys looked like, and the keys themselves.
        self.key_kinds: dict[str, int] = {}
        self.keys: Values | None = None
        #: String lengths and list lengths: how many, least, most, total.
        self.strings = self.str_min = self.str_max = self.str_total = 0
        self.lists = self.list_min = self.list_max = self.list_total = 0
        #: Numbers' least and most (integers, floats and decimals compare exactly with each other).
        self.low: Any = None
        self.high: Any = None
        #: Its scalar values (None before the first).
        self.values: Values | None = None
        #: Leaves met since the last flush (Structure.add), counted by flush().
        self.pending: list[Any] = []

    def flush(self) -> None:
        """Count the leaves met since the last flush: types, string lengths, numbers' range, values;
        a page's leaves of one path at once, with builtins."""
        leaves, self.pending = self.pending, []
        if not leaves:
            return
        self.seen += len(leaves)
        found = Counter(map(type, leaves))
        types = self.types
        kept = True  # every leaf is a value kept (_KEPT)
        for kind, n in found.items():
            name = _leaf_name(kind)
            types[name] = types.get(name, 0) + n
            if name not in _KEPT:
                kept = False
        if str in found:
            strings = leaves if len(found) == 1 else [v for v in leaves if type(v) is str]
            lengths = list(map(len, strings))
            least, most = min(lengths), max(lengths)
            if self.strings:
                self.str_min, self.str_max = min(self.str_min, least), max(self.str_max, most)
            else:
                self.str_min, self.str_max = least, most
            self.strings += len(lengths)
            self.str_total += sum(lengths)
        if int in found or float in found or Decimal in found:
            # NaN and the infinities are no bounds (a decimal's signalling NaN cannot even compare).
            numbers = [v for v in leaves if type(v) is int
                       or (type(v) is float and -math.inf < v < math.inf)
                       or (type(v) is Decimal and v.is_finite())]
            if numbers:
                low, high = min(numbers), max(numbers)
                # -0.0 and 0.0 are equal: one spelling, whichever came first.
                low = low + 0.0 if type(low) is float else low
                high = high + 0.0 if type(high) is float else high
                self.low = low if self.low is None else min(self.low, low)
                self.high = high if self.high is None else max(self.high, high)
        values = leaves if kept else [v for v in leaves if _leaf_name(type(v)) in _KEPT]
        if values:
            if self.values is None:
                self.values = Values()
            self.values.add_many(values)

    def merge(self, other: Node, structure: Structure) -> None:
        self.present += other.present
        self.seen += other.seen
        for name, n in other.types.items():
            self.types[name] = self.types.get(name, 0) + n
        for kind, n in other.key_kinds.items():
            self.key_kinds[kind] = self.key_kinds.get(kind, 0) + n
        self.keys = _merged(self.keys, other.keys)
        self.values = _merged(self.values, other.values)
        if other.strings:
            self.str_min = min(self.str_min, other.str_min) if self.strings else other.str_min
            self.str_max = max(self.str_max, other.str_max)
            self.str_total += other.str_total
            self.strings += other.strings
        if other.lists:
            self.list_min = min(self.list_min, other.list_min) if self.lists else other.list_min
            self.list_max = max(self.list_max, other.list_max)
            self.list_total += other.list_total
            self.lists += other.lists
        if other.low is not None:
            self.low = other.low if self.low is None else min(self.low, other.low)
            self.high = other.high if self.high is None else max(self.high, other.high)
        for name, theirs in other.children.items():
            mine = self.children.get(name)
            if mine is None:
                mine = structure.new_node()
                if mine is None:
                    structure.untracked += theirs.subtree_seen()
                    continue
                self.children[name] = mine
            mine.merge(theirs, structure)
        for attr in ("items", "folded"):
            theirs = getattr(other, attr)
            if theirs is None:
                continue
            mine = getattr(self, attr)
            if mine is None:
                mine = structure.new_node()
                if mine is None:
                    structure.untracked += theirs.subtree_seen()
                    continue
                setattr(self, attr, mine)
            mine.merge(theirs, structure)

    def subtree_seen(self) -> int:
        return self.seen + sum(child.subtree_seen() for child in self.below())

    def below(self) -> Iterator[Node]:
        yield from self.children.values()
        if self.items is not None:
            yield self.items
        if self.folded is not None:
            yield self.folded

    def steps(self) -> list[tuple[str, Node]]:
        """(step, node) below this one, in the order reports list them: named keys by how many
        values have them (then by name: the same order however the table was read), then the
        folded data keys, then a list's elements."""
        named = sorted(self.children.items(), key=lambda kv: (-kv[1].present, kv[0]))
        if self.folded is not None:
            named.append((FOLDED, self.folded))
        if self.items is not None:
            named.append((ITEMS, self.items))
        return named


def _merged(mine: Values | None, theirs: Values | None) -> Values | None:
    if theirs is None:
        return mine
    if mine is None:
        mine = Values()
    mine.merge(theirs)
    return mine


_NAMES: dict[type, str] = {str: "string", int: "integer", float: "float", Decimal: "decimal", bool: "boolean",
                           type(None): "null", bytes: "bytes", bytearray: "bytes"}
#: Types that are no Mapping, told without isinstance's slower check.
#: What the walk puts on a node's pending list without looking further: leaves.
_LEAVES = frozenset({str, int, float, Decimal, bool, type(None), bytes})
#: The leaves whose values a path keeps (counts, distinct); others (a cut, a symbol, an object no
#: reader makes) are counted by type only.
_KEPT = frozenset({"string", "integer", "float", "decimal", "boolean", "null", "bytes", "timestamp"})


def _leaf_name(kind: type) -> str:
    """How reports name a leaf's type: its kind of value, else its class's name."""
    name = _NAMES.get(kind)
    if name is None:
        name = next((n for t, n in _OTHER_BASES if issubclass(kind, t)), kind.__name__)
    return name
_NAMES.update({Cut: "cut", Symbol: "symbol"})
#: Types told by isinstance (subclasses: a datetime is a date).
_OTHER_BASES: tuple[tuple[type, str], ...] = (
    (datetime.date, "timestamp"), (datetime.time, "timestamp"), (memoryview, "bytes"))


class Structure:
    """The paths of one place's payloads (see the module doc)."""

    def __init__(self) -> None:
        #: Values walked (each had a tree).
        self.values = 0
        self.root = Node()
        #: Nodes made, the root included: at most MAX_PATHS.
        self.paths = 1
        #: Occurrences met where no path could be made any more (MAX_PATHS).
        self.untracked = 0
        #: Values whose walk stopped at MAX_VISITS nodes, or did not go below MAX_DEPTH levels.
        self.unfinished = 0
        self.too_deep = 0
        #: Nodes with leaves not counted yet (flush()).
        self._dirty: list[Node] = []
        #: What the walk of the value being added met: a Cut, MAX_DEPTH (add()).
        self._cut = self._deep = False

    @classmethod
    def from_partial(cls, partial: Any) -> Structure:
        """A page's structure as the value engine walked it in one call (payload.described's
        DescribedValues.structure: the same walk as add(), its nodes' counts, lengths and
        sketches): merged into a place's like any other part."""
        made = cls()
        made.values, made.untracked = partial.values, partial.untracked
        made.unfinished, made.too_deep = partial.unfinished, partial.too_deep

        def node_of(part: Any) -> Node:
            node = Node()
            node.present, node.seen = part.present, part.seen
            node.types, node.key_kinds = dict(part.types), dict(part.key_kinds)
            node.keys, node.values = Values.from_partial(part.keys), Values.from_partial(part.values)
            texts, lists = part.strings, part.lists
            node.strings, node.str_min, node.str_max = texts.count, texts.least, texts.most
            node.str_total = texts.total
            node.lists, node.list_min, node.list_max = lists.count, lists.least, lists.most
            node.list_total = lists.total
            node.low, node.high = part.low, part.high
            node.children = {key: node_of(child) for key, child in part.children}
            node.items = None if part.items is None else node_of(part.items)
            node.folded = None if part.folded is None else node_of(part.folded)
            made.paths += len(node.children) + (part.items is not None) + (part.folded is not None)
            return node

        made.root = node_of(partial.root)
        return made

    def new_node(self) -> Node | None:
        """A node for a new path, or None when MAX_PATHS are tracked."""
        if self.paths >= MAX_PATHS:
            return None
        self.paths += 1
        return Node()

    def add(self, tree: Any) -> bool:
        """Walk one value's tree; True when the tree holds a Cut (the decoder's budget stopped it).

        The walk only sorts what it meets: a record or a list is counted and walked into, a leaf
        (a string, a number, ...) is put on its node's `pending` list, and flush() counts a node's
        leaves together with builtins (types, lengths, ranges, values) at the end of a page. The
        walk is module functions (_walk, _walk_list) whose state is in their arguments, which
        Python reads fastest (this runs for every node of every value): the visits left go down
        and come back as the return value; the rare flags (a Cut met, MAX_DEPTH reached) are
        noted on the structure."""
        self.values += 1
        self._cut = self._deep = False
        if _walk(self, self.root, tree, 0, self.values, MAX_VISITS) < 0:
            self.unfinished += 1
        if self._deep:
            self.too_deep += 1
        return self._cut

    def flush(self) -> None:
        """Count the leaves the walks put on their nodes since the last flush (see add())."""
        for node in self._dirty:
            node.flush()
        self._dirty = []

    def _child(self, node: Node, key: Any) -> Node | None:
        """A map key's node, first met in this value: a new path, or the map's folded `*` for a key
        that is data (then its kind and the key are noted on the folded node)."""
        kind = data_kind(key)
        if kind is None:
            child = self.new_node()
            if child is not None:
                node.children[key] = child
            return child
        folded = node.folded
        if folded is None:
            folded = node.folded = self.new_node()
            if folded is None:
                return None
        folded.key_kinds[kind] = folded.key_kinds.get(kind, 0) + 1
        if folded.keys is None:
            folded.keys = Values()
        folded.keys.add(key if isinstance(key, (str, int, float, bytes)) else str(key))
        return folded

    def merge(self, other: Structure) -> None:
        """Add `other`'s counts."""
        self.flush()
        other.flush()
        self.values += other.values
        self.untracked += other.untracked
        self.unfinished += other.unfinished
        self.too_deep += other.too_deep
        self.root.merge(other.root, self)

    def walk(self, name: str) -> Iterator[tuple[str, int, str, Node]]:
        """(path, depth, step, node) of every path, the place itself (`name`) first, depth first in
        report order (Node.steps). Paths are written as queries write them (`data.customer.name`,
        `data."order-id"`), a list's elements as `[]` and a map's data keys as `*`."""
        from cqlsh_ext.query.grammar import spell_key

        self.flush()

        def below(path: str, depth: int, node: Node) -> Iterator[tuple[str, int, str, Node]]:
            for step, child in node.steps():
                if child is node.items:
                    text = f"{path}[]"
                elif child is node.folded:
                    text = f"{path}.*"
                else:
                    text = f"{path}.{spell_key(step)}"
                yield text, depth + 1, step, child
                yield from below(text, depth + 1, child)

        yield name, 0, name, self.root
        yield from below(name, 0, self.root)


def _walk(structure: Structure, node: Node, value: Any, depth: int, serial: int, visits: int) -> int:
    """One node of value number `serial`'s walk (Structure.add) and all below it: the visits left
    after it (below 0: the walk stops there)."""
    visits -= 1
    if visits < 0:
        return visits
    if node.last != serial:
        node.last = serial
        node.present += 1
    kind = type(value)
    while kind is Tagged:
        value = value.value
        kind = type(value)
    if kind in _LEAVES or not (kind is dict or kind is list or kind is tuple or isinstance(value, Mapping)):
        if kind is Cut:
            structure._cut = True
        if not node.pending:
            structure._dirty.append(node)
        node.pending.append(value)
        return visits
    node.seen += 1
    if kind is list or kind is tuple:
        return _walk_list(structure, node, value, depth, serial, visits)
    types = node.types
    types["record"] = types.get("record", 0) + 1
    if depth >= MAX_DEPTH:
        structure._deep = True
        return visits
    depth += 1
    children = node.children
    for k, child in value.items():
        target = children.get(k) if type(k) is str else None
        if target is None:
            target = structure._child(node, k)
            if target is None:  # past MAX_PATHS: counted, and a visit all the same
                structure.untracked += 1
                visits -= 1
                if visits < 0:
                    return visits
                continue
        visits = _walk(structure, target, child, depth, serial, visits)
        if visits < 0:
            return visits
    return visits


def _walk_list(structure: Structure, node: Node, value: list[Any] | tuple[Any, ...], depth: int, serial: int,
               visits: int) -> int:
    """_walk's step for a list (counted on `node` already): its length, then its elements."""
    node.types["list"] = node.types.get("list", 0) + 1
    n = len(value)
    if node.lists:
        if n < node.list_min:
            node.list_min = n
        elif n > node.list_max:
            node.list_max = n
    else:
        node.list_min = node.list_max = n
    node.lists += 1
    node.list_total += n
    if not n:
        return visits
    if depth >= MAX_DEPTH:
        structure._deep = True
        return visits
    items = node.items
    if items is None:
        items = node.items = structure.new_node()
        if items is None:
            structure.untracked += n
            return visits
    if n <= visits and _LEAVES.issuperset(map(type, value)):
        # A list of leaves (tags, numbers): its elements in one step.
        if items.last != serial:
            items.last = serial
            items.present += 1
        if not items.pending:
            structure._dirty.append(items)
        items.pending.extend(value)
        return visits - n
    depth += 1
    for child in value:
        visits = _walk(structure, items, child, depth, serial, visits)
        if visits < 0:
            return visits
    return visits
