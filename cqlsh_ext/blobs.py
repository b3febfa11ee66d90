"""Where the blobs are in a result: top-level blob columns and blobs inside collections, tuples and UDTs.

The driver reports one CQL type class per column (`ResultSet.column_types`). A column "holds blobs"
when a blob appears anywhere in its type; `extractor` returns a function that yields the blob
values of one cell with two paths: the concrete one for INSPECT (`m['z']`, `l[0]`, `a.content`) and
the schema one that STATS groups by (`m[value]`, `l[]`, `a.content`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

Blob = tuple[str, str, bytes]  # (concrete path, schema path, value)
Extractor = Callable[[Any], Iterator[Blob]]


def _is_blob(cqltype: Any) -> bool:
    return getattr(cqltype, "typename", None) == "blob"


def holds_blob(cqltype: Any) -> bool:
    if _is_blob(cqltype):
        return True
    return any(holds_blob(sub) for sub in getattr(cqltype, "subtypes", ()) or ())


def _walk(cqltype: Any, value: Any, path: str, schema: str) -> Iterator[Blob]:
    if value is None:
        return
    if _is_blob(cqltype):
        yield path, schema, bytes(value)
        return
    name = getattr(cqltype, "typename", "")
    subs: list[Any] = list(getattr(cqltype, "subtypes", ()) or ())
    if name in ("list", "set") and subs:
        for i, item in enumerate(value):
            yield from _walk(subs[0], item, f"{path}[{i}]", f"{schema}[]")
    elif name == "map" and len(subs) == 2:
        for key, item in value.items():
            yield from _walk(subs[0], key, f"{path}[key {key!r}]", f"{schema}[key]")
            yield from _walk(subs[1], item, f"{path}[{key!r}]", f"{schema}[value]")
    elif getattr(cqltype, "fieldnames", None):  # a UDT: the driver gives a namedtuple-like value
        for field, sub in zip(cqltype.fieldnames, subs, strict=False):
            yield from _walk(sub, getattr(value, field, None), f"{path}.{field}", f"{schema}.{field}")
    elif subs:  # tuple, vector
        for i, (sub, item) in enumerate(zip(subs, value, strict=False)):
            yield from _walk(sub, item, f"{path}[{i}]", f"{schema}[{i}]")


def extractor(name: str, cqltype: Any) -> Extractor:
    """A function cell -> blob values of that cell."""
    return lambda cell: _walk(cqltype, cell, name, name)


def blob_columns(names: Sequence[str], types: Sequence[Any]) -> list[tuple[int, str, Any]]:
    """(index, name, type) of the columns whose type holds a blob."""
    return [(i, n, t) for i, (n, t) in enumerate(zip(names, types, strict=True)) if holds_blob(t)]


def is_plain_blob(cqltype: Any) -> bool:
    """A top-level blob column: STATS takes its cell directly (the fast path)."""
    return _is_blob(cqltype)
