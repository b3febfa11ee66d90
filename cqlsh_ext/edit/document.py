"""One document edited: paths set or removed in a tree, and JSON text written back as it was spelt.

JSON text is read with its numbers kept as written (payload.json_text.StoredFloat: `1.50` stays
`1.50`, `1e3` stays `1e3`) and its keys in order, then written with the separators and
indentation the stored text used. The caller checks that the untouched document writes back to
the stored text byte for byte (`json_spacing`): a text this writer would spell differently is
refused, never rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload.json_text import StoredFloat, StoredInt, unique_pairs
from cqlsh_ext.writing.refused import WriteRefused

Step = str | int
#: What a DELETE of a path leaves: the op's value that says "remove it".
REMOVE: Any = object()


class EditRefused(WriteRefused):
    """A row this edit does not rewrite; str() is the one-line reason."""


@dataclass(frozen=True)
class Op:
    """One assignment (`value`) or removal (`value is REMOVE`) of the path `steps` below the column;
    `text` is the path as written."""

    steps: tuple[Step, ...]
    value: Any
    text: str


def read_json(text: str) -> Any:
    """The JSON text's tree with numbers as written (payload.json_text.StoredFloat, StoredInt);
    EditRefused when it is not JSON this module writes back (NaN, a key twice, nested deeper than
    the interpreter goes)."""
    try:
        return json.loads(text, parse_float=StoredFloat, parse_int=StoredInt, parse_constant=_no_constant,
                          object_pairs_hook=unique_pairs)  # a key twice: one would be lost
    except RecursionError:
        raise EditRefused("its JSON is nested too deeply to rewrite here") from None
    except ValueError as err:
        raise EditRefused(f"its JSON text is not rewritten here ({str(err).splitlines()[0]})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass(frozen=True)
class Spacing:
    """How a stored JSON text is laid out: its separators and its indentation (None: one line)."""

    item: str
    key: str
    indent: str | None
    ascii_only: bool


def json_spacing(text: str, tree: Any) -> Spacing:
    """The layout that writes `tree` back as `text` exactly; EditRefused when none of those this
    writer knows does (the text would change where nothing was edited)."""
    ascii_only = "\\u" in text
    indent = None
    found = re.search(r"[\[{]\n([ \t]+)", text)
    if found is not None:
        indent = found.group(1)
    candidates = [Spacing(",", ":", None, ascii_only), Spacing(", ", ": ", None, ascii_only)]
    if indent is not None:
        candidates = [Spacing(",", ": ", indent, ascii_only), Spacing(",", ":", indent, ascii_only)]
    for spacing in candidates:
        if write_json(tree, spacing) == text:
            return spacing
    raise EditRefused("its JSON text is laid out in a way this shell does not write back "
                      "(spaces, escapes or indentation would change)")


def write_json(tree: Any, spacing: Spacing) -> str:
    """`tree` as JSON text laid out as `spacing` says, numbers as they were spelt."""
    parts: list[str] = []
    try:
        _write(tree, spacing, 0, parts)
    except RecursionError:
        raise EditRefused("its JSON is nested too deeply to rewrite here") from None
    return "".join(parts)


def _write(value: Any, spacing: Spacing, depth: int, out: list[str]) -> None:
    if isinstance(value, StoredFloat | StoredInt):
        out.append(value.spelling)
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(_separator(i, spacing, depth + 1))
            out.append(json.dumps(key, ensure_ascii=spacing.ascii_only) + spacing.key)
            _write(item, spacing, depth + 1, out)
        out.append(_closing(spacing, depth) + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(value):
            out.append(_separator(i, spacing, depth + 1))
            _write(item, spacing, depth + 1, out)
        out.append(_closing(spacing, depth) + "]")
    else:
        out.append(json.dumps(value, ensure_ascii=spacing.ascii_only, allow_nan=False))


def _separator(i: int, spacing: Spacing, depth: int) -> str:
    lead = (spacing.item.rstrip() if spacing.indent is not None else spacing.item) if i else ""
    return lead + ("\n" + spacing.indent * depth if spacing.indent is not None else "")


def _closing(spacing: Spacing, depth: int) -> str:
    return "\n" + spacing.indent * depth if spacing.indent is not None else ""


def brief(value: Any, width: int = 60) -> str:
    """A short JSON spelling of a value for the preview's `path: old -> new` lines."""
    if value is REMOVE:
        return "(none)"
    try:
        text = write_json(value, Spacing(", ", ": ", None, False))
    except (TypeError, ValueError):  # a record's leaves JSON lacks (bytes, times, tags)
        from cqlsh_ext.payload.formats.tree import render

        text = render(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def value_json(value: Any) -> str | None:
    """An op's value as the JSON text a request keeps (numbers as typed), None for a removal."""
    return None if value is REMOVE else write_json(value, Spacing(",", ":", None, False))


def apply(tree: Any, ops: Sequence[Op]) -> list[tuple[str, Any, Any]]:
    """Each op applied to `tree` in place: (path, old, new) per change made (old or new is REMOVE
    where there was or is nothing); EditRefused when a path cannot be set or removed here."""
    changes: list[tuple[str, Any, Any]] = []
    for op in ops:
        parent: Any = tree
        for depth, step in enumerate(op.steps[:-1]):
            parent = _child(parent, step, op.text, depth)
        last = op.steps[-1]
        if isinstance(parent, dict):
            if not isinstance(last, str):
                raise EditRefused(f"{op.text}: an index into an object")
            old = parent.get(last, REMOVE)
            if op.value is REMOVE:
                if last in parent:
                    del parent[last]
            else:
                parent[last] = op.value
        elif isinstance(parent, list):
            if not isinstance(last, int):
                raise EditRefused(f"{op.text}: a key into a list")
            if last >= len(parent):
                raise EditRefused(f"{op.text}: the list has {_items(len(parent))}")
            old = parent[last]
            if op.value is REMOVE:
                del parent[last]
            else:
                parent[last] = op.value
        else:
            raise EditRefused(f"{op.text}: its parent is {_kind(parent)}, not an object or a list")
        if not _unchanged(old, op.value):
            changes.append((op.text, old, op.value))
    return changes


def _unchanged(old: Any, new: Any) -> bool:
    from cqlsh_ext.encode.chain import same

    if old is REMOVE or new is REMOVE:
        return old is new
    return same(old, new)


def _child(parent: Any, step: Step, path: str, depth: int) -> Any:
    if isinstance(parent, dict) and isinstance(step, str):
        if step not in parent:
            raise EditRefused(f"{path}: no key {step!r} on the way")
        return parent[step]
    if isinstance(parent, list) and isinstance(step, int):
        if step >= len(parent):
            raise EditRefused(f"{path}: a list of {_items(len(parent))} on the way")
        return parent[step]
    raise EditRefused(f"{path}: step {depth + 1} goes into {_kind(parent)}")


def _items(n: int) -> str:
    from cqlsh_ext.common.text import plural

    return plural(n, "item")


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"
