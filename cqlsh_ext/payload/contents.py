"""A page of one place's values decoded for writing them out, as columns: per value its kind, label,
text (a TEXT value's), tree (a text's JSON object or array; a record's tree) and whether the cap
cut it, in one call of the native core for the page (decode_page, as the engine's read_page calls
it). An export writes a blob's payload, label and kind from these columns (render.parquet_columns)
instead of making each value's view; a value the core hands back, or one whose view has more to say
(undecodable but for no known format, cut), is `viewed`: its view is made (the Python engine, the
reference), and the caller reads that instead."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.view import RECORD, TEXT, UNKNOWN, BlobView


@dataclass
class PageContents:
    """decode_page()'s columns of a page (`viewed[i]` is the view of a value to be read as a
    view: made by the Python engine; None for a value the columns answer)."""

    kinds: list[str]
    labels: list[str]
    texts: list[str | None]
    trees: list[Any]
    viewed: list[BlobView | None]


def page_contents(engine: ValueEngine, values: Sequence[bytes]) -> PageContents | None:
    """The page's contents on the native core (None when the engine is not on it, or the core
    fails the call: the caller makes views)."""
    if not values or not engine.on_core():
        return None
    from cqlsh_ext.payload import native
    from cqlsh_ext.payload.paths import MISSING

    try:
        core = native.decode_page(values, engine.cap, [], want_text=True, want_tree=True, missing=MISSING)
    except Exception:
        return None
    kinds: list[str] = [native.KINDS[code] or UNKNOWN for code in core.kinds]
    texts: list[str | None] = list(core.texts) if core.texts is not None else [None] * len(values)
    trees: list[Any] = list(core.trees) if core.trees is not None else [None] * len(values)
    viewed: list[BlobView | None] = [None] * len(values)
    again = set(core.handed_back)
    again.update(i for i, cut in enumerate(core.cut) if cut)
    again.update(i for i, kind in enumerate(kinds) if kind != TEXT and kind != RECORD and kind != UNKNOWN)
    for i in sorted(again):
        viewed[i] = engine.view(values[i])
    return PageContents(kinds, list(core.labels), texts, trees, viewed)
