"""A value's view made from the engine's held reading of it: what the native core read of a blob
column's value (its kind, label, text, and its tree or record on demand) as the BlobView every
reader of views reads (the display, the JSON and CSV spellings, MCP's JSON values), so a value
the core decoded is read as it decoded it and never decoded again in Python.

Made by payload.columns for a blob column the core read (a page held by it, or a payload query's
blobs given whole): `ColumnValues.values()` gives these views, the values the core leaves to the
Python engine as that engine's views. Nothing here decodes: the text is the core's, a JSON text's
tree and a record's tree are the core's, converted to Python objects when first asked for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cqlsh_ext.payload.view import (
    JSON_READING,
    NOT_DETECTED,
    RECORD,
    SEPARATOR,
    TEXT,
    TEXT_READING,
    TOO_SHORT,
    UNKNOWN,
    BlobView,
    Layer,
)

#: What makes a text not `clean` (BlobView.clean, as payload.unwrap's as_text and stored_text
#: decide it): a C0 control character or DEL, or a character UTF-8 writes with a lead byte C2
#: (U+0080-U+00BF: the C1 controls and NBSP among them).
_NOT_CLEAN = re.compile("[\x00-\x1f\x7f-\xbf]")
_UNREAD: Any = object()
#: What a view of a value the reading read whole has nothing of: no error, no stream, no class
#: its stream could not read, no layer cut or unverified, no count of its record's input, no
#: budget of its own (BlobView's fields).
_NOTHING_TO_SAY = ("error", "stream", "stream_format", "object_class", "truncated_layer", "unverified_layer",
                   "tree_input_size", "budget")


class HeldView(BlobView):
    """One value as the engine's held reading gives it (the module doc): its kind (text, record,
    or no known format), its label as the walk spells it, its text; its tree (a record's, a JSON
    text's) from `payload(row)` on first use, the reading's. Never cut, never failed, no reason but
    a quiet one: the values the reading leaves to the Python engine are that engine's views.
    `json`: the reading read a text's JSON (its label says whether it is a JSON object or array);
    False (the display's page, which reads texts alone): a text's JSON is read here, on first use,
    from its text, as BlobView reads it."""

    __slots__ = ("_json_read", "_label", "_payload", "_row")

    def __init__(self, stored: bytes, kind: str, label: str | None, text: str | None, decoded: int,
                 payload: Callable[[int], Any], row: int, json: bool = True) -> None:
        self.stored = stored
        self.kind = kind
        self.text = text
        self.clean = text is not None and _NOT_CLEAN.search(text) is None
        self.data = b""
        self.payload_size = decoded or len(stored)
        # no known format: the quiet reason the walk gives (the display shows the hex as cqlsh does)
        self.reason = None if kind != UNKNOWN else quiet_reason(stored)
        for name in _NOTHING_TO_SAY:
            setattr(self, name, None)
        self.payload_format = label.rpartition(SEPARATOR)[2] if kind == RECORD and label else None
        self._json = _UNREAD
        self.named = 0
        self._label = label or ""
        self._payload = payload
        self._row = row
        self._json_read = json

    # ------------------------------------------------------------------ labels, from the reading's
    @property
    def label(self) -> str:
        if self.kind == TEXT and not self._json_read:  # its reading is the JSON's, read here
            return SEPARATOR.join((*self.chain, JSON_READING if self.tree is not None else TEXT_READING))
        return self._label

    @property
    def short_label(self) -> str:
        """The display's form (BlobView.short_label): a text's containers ('text' when stored as
        text), a record's whole label."""
        if self.kind == TEXT:
            return self._label.rpartition(SEPARATOR)[0] or TEXT_READING
        return self._label

    @property
    def reading(self) -> str | None:
        label = self.label
        return label.rpartition(SEPARATOR)[2] if label else None

    @property
    def chain(self) -> tuple[str, ...]:
        head = self._label.rpartition(SEPARATOR)[0]
        return tuple(head.split(SEPARATOR)) if head else ()

    @property
    def layers(self) -> list[Layer]:  # type: ignore[override]
        """The label's steps as layers (sizes and formats are not the reading's to give)."""
        layers = [Layer(step, 0, 0) for step in self.chain]
        if self.kind == RECORD or (self.kind == TEXT and not layers):
            layers.append(Layer(self.reading or TEXT_READING, 0, 0, reading=True))
        return layers

    # ------------------------------------------------------------------ the payload, on demand
    @property
    def record(self) -> Any:
        return self.tree if self.kind == RECORD else None

    @property
    def tree(self) -> Any:
        """A record's tree; a JSON text's object or array (None for other text): the reading's,
        made into Python objects once (a text read without its JSON: parsed here, once)."""
        kind = self.kind
        if kind != TEXT and kind != RECORD:
            return None
        found = self._json
        if found is _UNREAD:
            if kind == TEXT and self._json_read and self._label.rpartition(SEPARATOR)[2] != JSON_READING:
                found = None
            else:
                found = self._payload(self._row)
                if kind == TEXT and not isinstance(found, (dict, list)):
                    # a text read without its JSON tree (a file of text's reading, the display's)
                    from cqlsh_ext.payload.json_text import json_container

                    found = json_container(self.text or "")
            self._json = found
        return found


def quiet_reason(stored: bytes) -> str:
    """Why a value in no known format shows no payload, as the walk says it: too short to detect
    (auto mode's rule, by its size), else no compression detected."""
    from cqlsh_ext.codecs.registry import MIN_AUTO_LENGTH

    return TOO_SHORT if len(stored) < MIN_AUTO_LENGTH else NOT_DETECTED


__all__ = ["HeldView", "quiet_reason"]
