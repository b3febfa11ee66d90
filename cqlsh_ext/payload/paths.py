"""A path inside a decoded payload (`data.customer.name`, `data.items[0]`): read from a record's
tree or a JSON text's, the same way for the engine's page API and every reader of paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cqlsh_ext.payload.formats.tree import Cut, Tagged

#: The steps of a path below its column: keys (str) and list indexes (int).
Steps = tuple["str | int", ...]


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:  # one object per process, also after pickling (Spark tasks)
        return self.name


#: A path that is not there: distinct from a record's own null (None), though both are SQL null.
MISSING: Any = _Sentinel("MISSING")
#: A path that reaches where the budget cut the record: nothing can be said of its value.
CUT: Any = _Sentinel("CUT")


class _UndecodableGroup:
    """The GROUP BY key of a value no reading can read (query.evaluate): a group of its own, apart
    from null's (a path a record lacks, a null column), sorted last. One object in every process:
    it is pickled by name (worker processes, Spark tasks)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDECODABLE_GROUP"

    def __reduce__(self) -> str:
        return "UNDECODABLE_GROUP"


UNDECODABLE_GROUP: Any = _UndecodableGroup()


def step(node: Any, key: str | int) -> Any:
    """`node`'s child at `key` (a dict key as written, a list index), MISSING when absent, CUT
    where the record was cut. A Tagged value stands for its value."""
    while isinstance(node, Tagged):
        node = node.value
    if isinstance(node, Cut):
        return CUT
    if isinstance(node, Mapping):
        return node.get(key, MISSING)
    if isinstance(key, int) and isinstance(node, (list, tuple)):
        return node[key] if -len(node) <= key < len(node) else MISSING
    return MISSING


def read_path(tree: Any, steps: Steps) -> tuple[Any, int, Any]:
    """(the value at `steps` in `tree`, or MISSING, or CUT; the step a MISSING stopped at (-1
    otherwise); the node it stopped in, whose keys a hint may name)."""
    node = tree
    for depth, key in enumerate(steps):
        parent = node
        # A record's map (a plain dict) is the common step; everything else as step() says.
        node = node.get(key, MISSING) if type(node) is dict else step(node, key)
        if node is MISSING:
            return MISSING, depth, parent
        if node is CUT:
            return CUT, -1, None
    if isinstance(node, Cut):
        return CUT, -1, None
    return node, -1, None


def keys_of(node: Any, limit: int) -> tuple[str, ...]:
    """A mapping's string keys, at most `limit` (a hint names the nearest; a huge map is bounded)."""
    while isinstance(node, Tagged):
        node = node.value
    if not isinstance(node, Mapping):
        return ()
    keys: list[str] = []
    for key in node:
        if isinstance(key, str):
            keys.append(key)
            if len(keys) >= limit:
                break
    return tuple(keys)


__all__ = ["CUT", "MISSING", "UNDECODABLE_GROUP", "Steps", "keys_of", "read_path", "step"]
