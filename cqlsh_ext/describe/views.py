"""What DESCRIBE PAYLOAD reads of a decoded value, in the vocabulary every report uses (the one
engine's view, docs/formats.md): its kind, its label, whether the budget cut it, and its tree.

- kind: `text` (JSON text included), `record` (a record format's tree), `binary` (a binary
  payload), `unknown` (no known format), `failed` (a recognised format that failed to decode);
- label: the chain spelt with `>`, its payload's reading last: `<codec>>json`, `<codec>>text`,
  `<codec>><record format>`, `json` for JSON stored as is, `text`; a binary payload's is its codecs';
- cut: the output cap or the budget cut the value (its tree, if any, is partial);
- tree: a JSON text's container or a record format's tree (payload.formats.tree), else NO_TREE.

`read_view` is the one place that reads the engine's view (payload.unwrap.BlobView today): when
the typed view (payload/view.py) lands, it reads that instead and nothing else here changes.
A text column's value is read as text, never decoded (as COMPRESSION STATS reads it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.unwrap import (
    BINARY,
    RAW,
    STREAM_OBJECT,
    STRUCTURED,
    TEXT,
    TEXT_LABEL,
    BlobView,
    json_container,
    unwrap_spec,
)

TEXT_KIND, RECORD, BINARY_KIND, UNKNOWN, FAILED = "text", "record", "binary", "unknown", "failed"
#: The kinds in the order reports list them.
KINDS = (TEXT_KIND, RECORD, BINARY_KIND, UNKNOWN, FAILED)
JSON_LABEL = "json"
NO_TREE: Any = None
#: Why a value is cut when the engine names nothing else.
CUT_REASON = "cut at the output cap (--max-output-size)"


@dataclass(frozen=True, slots=True)
class Read:
    kind: str
    label: str
    cut: bool
    tree: Any = NO_TREE
    #: Why a value is failed, unknown-and-cut or cut: the engine's one-line reason.
    reason: str | None = None


class Engine(Protocol):
    """What decodes a place's values a page at a time: the value engine."""

    def views(self, values: Iterable[bytes]) -> list[BlobView]: ...


class SettingEngine:
    """A place with a DECODE column setting: each value as the setting says (unwrap_spec). The
    value engine has no mode for column settings yet (the one-engine issue makes them one); this
    is the one place DESCRIBE decodes without it."""

    def __init__(self, spec: str, cap: int) -> None:
        self.spec = spec
        self.cap = cap

    def views(self, values: Iterable[bytes]) -> list[BlobView]:
        return [unwrap_spec(value, self.spec, self.cap) for value in values]


def engine(mode: str, cap: int, spec: str | None) -> Engine:
    """The engine for one place: -d's mode and the output cap, or its column setting."""
    return SettingEngine(spec, cap) if spec else ValueEngine(mode, cap)


def read_page(place_engine: Engine, values: list[bytes], cap: int) -> list[Read]:
    """Each value of a page of one place, read (a JSON text's tree is parsed once, here, within
    the value's budget: json_container counts nodes against it)."""
    views = place_engine.views(values)
    token = budget.enter(budget.Budget.for_cap(cap))
    try:
        return [read_view(view) for view in views]
    finally:
        budget.leave(token)


def read_view(view: BlobView) -> Read:
    """The engine's view of one value as DESCRIBE counts it (the module doc)."""
    cut = view.truncated_layer is not None
    reason = (view.reason or CUT_REASON) if cut else view.reason
    chain = [layer.label for layer in view.layers if not layer.reading]
    kind = view.kind
    if kind == TEXT:
        tree = None if cut or view.text is None else json_container(view.text)
        return Read(TEXT_KIND, ">".join([*chain, TEXT_LABEL if tree is None else JSON_LABEL]), cut, tree,
                    reason if cut else None)
    if kind == STRUCTURED:
        return Read(RECORD, ">".join(layer.label for layer in view.layers), cut, view.tree, reason)
    if kind == BINARY:
        return Read(BINARY_KIND, ">".join(chain) or "bytes", cut, NO_TREE, reason if cut else None)
    if kind == STREAM_OBJECT:  # a serialization stream's object its reader could not read
        return Read(FAILED, ">".join(chain), cut, NO_TREE, reason)
    if kind == RAW and view.error is not None:  # a recognised format that failed
        fmt = view.error.format
        return Read(FAILED, fmt.label if fmt is not None else "", cut, NO_TREE, reason)
    if kind == RAW and not view.quiet:
        # Nothing recognised but the budget stopped a record format's check: unknown, and cut.
        return Read(UNKNOWN, "", True, NO_TREE, reason)
    return Read(UNKNOWN, "", cut, NO_TREE)


def read_text(text: str) -> Read:
    """A text column's value: text, its JSON container read (within the current budget)."""
    tree = json_container(text)
    return Read(TEXT_KIND, TEXT_LABEL if tree is None else JSON_LABEL, False, tree)
