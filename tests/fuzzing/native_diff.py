"""The native core against the Python engine, value by value: what payload/native.py's
decode_page answers for a page, next to what the Python engine (payload.unwrap.unwrap in auto
mode, and the engine's path reading: payload.paths) gives for each value alone.

For every value the core did not hand back, these must be equal, types included (`same`: dicts
key by key in order, `type(a) is type(b)` all the way down, floats by their repr so -0.0 and nan
count): the kind, the label (the chain and the payload's reading), the stored and decoded sizes,
whether the cap cut it, the text, the tree, and per path the value read (or MISSING), whether any
value had it and the deepest miss. A value whose Python view carries a reason the page API does
not give (a nested layer that failed, a record format stopped by the budget, a serialization
stream) must be handed back. A panic of the core (caught, and the value handed back) is a
difference too. Used by tests/native and by the `native` fuzz target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: The caps the differential runs use: the default, a small one, and a few that cut layers.
CAPS = (4 << 20, 64 << 10, 1000, 300, 40, 7)


@dataclass
class Counts:
    compared: int = 0
    handed_back: int = 0
    differences: list[str] = field(default_factory=list)

    def add(self, other: Counts) -> None:
        self.compared += other.compared
        self.handed_back += other.handed_back
        self.differences.extend(other.differences)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (dict order included)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(ka, kb) and same(va, vb)
                                        for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@dataclass
class Expected:
    kind: int
    label: str
    stored: int
    decoded: int
    cut: bool
    text: str | None
    tree: Any
    #: Reasons the page API does not carry: the core must hand such a value back.
    needs_view: str | None = None


def expected(value: bytes, cap: int) -> Expected:
    """What the page API answers for `value` alone, from the Python engine's view."""
    from cqlsh_ext.payload import budget
    from cqlsh_ext.payload import native as nat
    from cqlsh_ext.payload.json_text import json_container
    from cqlsh_ext.payload.unwrap import unwrap
    from cqlsh_ext.payload.view import BINARY, FAILED, QUIET_REASONS, RECORD, TEXT, UNKNOWN

    view = unwrap(value, "auto", cap)
    stored = len(value)
    containers = [layer for layer in view.layers if not layer.reading and layer.fmt is not None]
    readings = [layer.label for layer in view.layers if layer.reading]
    decoded = containers[-1].output_size if containers else stored
    cut = view.truncated_layer is not None
    chain = [layer.label for layer in containers]
    stream = view.stream_format is not None or any(
        layer.fmt is None and not layer.reading for layer in view.layers)
    # a reason on a decoded view (a nested layer that failed, a record stopped by the budget)
    needs_view = "a serialization stream" if stream else (
        view.reason if view.kind not in (UNKNOWN, FAILED) else None)
    if view.kind == TEXT:
        token = budget.enter(budget.Budget.for_cap(cap))
        try:
            tree = json_container(view.text or "")
        finally:
            budget.leave(token)
        label = ">".join([*chain, "json" if tree is not None else "text"])
        return Expected(nat.TEXT, label, stored, decoded, cut, view.text, tree, needs_view)
    if view.kind == RECORD:
        label = ">".join([*chain, readings[-1] if readings else "?"])
        return Expected(nat.RECORD, label, stored, decoded, cut, None, view.tree, needs_view)
    if view.kind == BINARY:
        label = ">".join([*chain, "binary"])
        return Expected(nat.BINARY, label, stored, decoded, cut, None, None, needs_view)
    if view.kind == FAILED:
        fmt = view.failed_format
        label = fmt.label if fmt is not None else ""
        return Expected(nat.FAILED, label, stored, stored, False, None, None,
                        needs_view or (None if fmt is not None else view.reason or "failed"))
    if view.kind == UNKNOWN:
        if view.reason is not None and view.reason not in QUIET_REASONS:
            needs_view = needs_view or view.reason
        return Expected(nat.UNKNOWN, "", stored, stored, False, None, None, needs_view)
    return Expected(nat.HANDED_BACK, "", stored, 0, cut, None, None, needs_view or f"kind {view.kind}")


def _read(tree: Any, steps: Sequence[str | int]) -> tuple[Any, int, Any]:
    """The engine's read of a path (payload.paths.read_path): (the value, MISSING or CUT; the
    step a miss stopped at; the node it stopped in)."""
    from cqlsh_ext.payload.paths import read_path

    return read_path(tree, tuple(steps))


def compare(values: Sequence[bytes], cap: int, paths: Sequence[tuple[str | int, ...]] = (),
            want: bool = True) -> Counts:
    """One page through the core, each value against the Python engine: the counts, and a line
    per difference."""
    from cqlsh_ext.payload import native as nat
    from cqlsh_ext.payload.pages import MISS_KEYS, note_miss
    from cqlsh_ext.payload.paths import CUT, MISSING, keys_of

    panics = nat.module().panics()
    page = nat.decode_page(values, cap, paths, want_text=want, want_tree=want, missing=MISSING)
    counts = Counts()
    if nat.module().panics() != panics:  # a panic hands the value back: a bug all the same
        counts.differences.append(f"the core panicked on a value of this page (cap {cap}): "
                                  f"{[v[:32].hex() for v in values]}")
    handed = set(page.handed_back)
    names = [".".join(map(str, p)) for p in paths]
    # Per path, as the engine's Page records them over the values the core answered, in order:
    # whether one had it, and the deepest miss of those read before the first that had it.
    found = [False] * len(paths)
    missed: list[Any] = [None] * len(paths)
    for i, value in enumerate(values):
        exp = expected(value, cap)
        if i in handed:
            counts.handed_back += 1
            if page.kinds[i] != nat.HANDED_BACK:
                counts.differences.append(f"value {i}: handed back with kind {page.kinds[i]}")
            continue
        counts.compared += 1
        where = f"value {i} ({value[:24].hex()}{'...' if len(value) > 24 else ''}, {len(value)} B, cap {cap})"
        if exp.needs_view:
            counts.differences.append(f"{where}: answered, but its view has a reason: {exp.needs_view}")
            continue
        got_fields = (page.kinds[i], page.labels[i], page.stored[i], page.decoded[i], bool(page.cut[i]))
        exp_fields = (exp.kind, exp.label, exp.stored, exp.decoded, exp.cut)
        if got_fields != exp_fields:
            counts.differences.append(f"{where}: (kind, label, stored, decoded, cut) {got_fields} != "
                                      f"{exp_fields}")
            continue
        if want:
            assert page.texts is not None and page.trees is not None
            if not same(page.texts[i], exp.text):
                counts.differences.append(f"{where}: text {page.texts[i]!r:.200} != {exp.text!r:.200}")
            exp_tree = exp.tree if exp.kind in (nat.TEXT, nat.RECORD) else None
            if not same(page.trees[i], exp_tree):
                counts.differences.append(f"{where}: tree {page.trees[i]!r:.300} != {exp_tree!r:.300}")
        readable = exp.kind in (nat.TEXT, nat.RECORD) and not exp.cut
        # a query reads a text's JSON container, or the text itself; a record's tree
        tree = exp.tree if exp.kind == nat.RECORD or exp.tree is not None else exp.text
        for p, steps in enumerate(paths):
            want_value: Any = None
            if readable:
                if not steps:
                    want_value = tree
                    found[p] = True
                else:
                    want_value, depth, parent = _read(tree, steps)
                    if want_value is MISSING:
                        if not found[p]:
                            note_miss(missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
                    elif want_value is not CUT:
                        found[p] = True
            if not same(page.paths[p].values[i], want_value):
                counts.differences.append(f"{where}: path {names[p]}: {page.paths[p].values[i]!r:.200} != "
                                          f"{want_value!r:.200}")
    for p, name in enumerate(names):
        column = page.paths[p]
        if column.found != found[p]:
            counts.differences.append(f"path {name}: found {column.found} != {found[p]}")
        miss = column.miss
        got_miss = None if miss is None else (miss.depth, miss.key, set(miss.keys))
        if got_miss != missed[p]:
            counts.differences.append(f"path {name}: miss {got_miss!r:.300} != {missed[p]!r:.300}")
    return counts


def both(values: Sequence[bytes], cap: int, paths: Sequence[tuple[str | int, ...]] = ()) -> Counts:
    """compare() with the texts and trees asked for, and without (paths read without trees)."""
    total = compare(values, cap, paths)
    total.add(compare(values, cap, paths, want=False))
    return total


def check(values: Sequence[bytes], caps: Sequence[int] = CAPS,
          paths: Sequence[tuple[str | int, ...]] = ()) -> Counts:
    """compare() of the values as one page under each cap, with and without the texts and trees
    (the core reads the paths of a JSON text without building the rest when no tree is asked)."""
    total = Counts()
    for cap in caps:
        total.add(both(values, cap, paths))
    return total
