"""What DESCRIBE PAYLOAD reads of a decoded value: the one engine's view (payload/view.py) in the
words every report uses, and nothing else.

- kind: `text` (JSON text included), `record` (a record format's tree), `binary` (a binary
  payload), `unknown` (no known format), `failed` (a recognised format that failed to decode);
- label: the view's label, the chain spelt with `>` and the payload's reading last
  (`<codec>>json`, `<codec>><record format>`, `json` for JSON stored as is, `text`); '' for a
  value undecoded;
- cut: the view's cut, the output cap (the value's budget) stopped a layer: its text or tree is
  partial;
- tree: the view's tree (a JSON text's container, parsed at most once and kept on the view, or a
  record format's tree), else NO_TREE.

`read_view` is the one place that reads the engine's views here. A text column's value is read as
text, never decoded (as COMPRESSION STATS reads it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.confidence import view_confidence
from cqlsh_ext.payload.json_text import json_container
from cqlsh_ext.payload.view import FAILED, JSON_READING, KINDS, RECORD, TEXT, TEXT_READING, BlobView

__all__ = ["KINDS", "NO_TREE", "ViewRead", "read_all", "read_text", "read_view"]

#: The value has no tree (it is no JSON object or array, no record).
NO_TREE: Any = None
#: Why a value is cut when the view names nothing else.
CUT_REASON = "cut at the output cap (--max-output-size)"


@dataclass(frozen=True, slots=True)
class ViewRead:
    kind: str
    label: str
    cut: bool
    tree: Any = NO_TREE
    #: Why a value failed or was cut: the view's one-line reason.
    reason: str | None = None
    #: How sure its reading is (payload.confidence); None for a text column's value or one undecoded.
    confidence: str | None = None


def read_all(views: Sequence[BlobView], cap: int) -> list[ViewRead]:
    """The engine's views of a page's values (payload.described's), each read (read_view). A
    JSON text's tree is parsed here (by the view, once) within the value's budget:
    json_container counts nodes against it."""
    token = budget.enter(budget.Budget.for_cap(cap))
    try:
        return [read_view(view) for view in views]
    finally:
        budget.leave(token)


def read_view(view: BlobView) -> ViewRead:
    """The engine's view of one value as DESCRIBE counts it (the module doc)."""
    cut = view.cut
    reason = (view.reason or CUT_REASON) if cut else view.reason if view.kind == FAILED else None
    tree = view.tree if view.kind in (TEXT, RECORD) else None
    return ViewRead(view.kind, view.label, cut, NO_TREE if tree is None else tree, reason,
                    view_confidence(view))


def read_text(text: str) -> ViewRead:
    """A text column's value: text, its JSON container read (within the current budget)."""
    tree = json_container(text)
    return ViewRead(TEXT, TEXT_READING if tree is None else JSON_READING, False, tree)
