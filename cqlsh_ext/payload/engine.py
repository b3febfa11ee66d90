"""The value engine: a page of one column's values decoded together, each exactly as unwrap()
decodes it alone.

unwrap() decodes one value through several layers of calls and enters that value's budget on
the way. Scans, the display and Spark's tasks hand a column's values a page at a time instead, and
an engine per column does, per value, only what the value needs:

- the budget is still one per value (a Budget is immutable: each decoder meters what it spends
  itself), entered once for the page; the last-resort boundary is still per value (unwrap.failed);
- the engine remembers the containers that decoded the column's recent values (by their first
  byte, where detection starts too) and tries them first (registry.decode_known): a remembered
  container is taken only when every format that detection tries before it is ruled out cheaply
  (by its signature, or its declared sizes), and
  it then decodes the value exactly as detection would, checksums and all; otherwise the value
  goes through full detection (registry.decode_auto), and what decodes it is remembered;
- the rest of the walk and the reading of the payload (text, a record, bytes) are unwrap's own
  functions (unwrap.contained, uncontained, read_payload).

The invariant, which tests/payload/test_engine.py checks over the producers' corpora in mixed
and adversarial orders: for every value, views() gives what unwrap(value, mode, cap) gives, label
and text, kind, tree, bytes and reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Container, DecodeError
from cqlsh_ext.payload import budget
from cqlsh_ext.payload.unwrap import (
    BINARY,
    RAW,
    STREAM_STARTS,
    STRUCTURED,
    TEXT,
    BlobView,
    _unwrap,
    as_text,
    contained,
    failed,
    read_payload,
    stored_text,
    uncontained,
)

#: contents(): a value whose output the cap cut (whatever its payload).
CUT = "cut"
#: Record formats are looked for from this length on (unwrap.MIN_STRUCTURED_LENGTH).
_MIN_STRUCTURED = 4


class ValueEngine:
    """Decodes the values of one column (or one place inside a column) as the display's -d mode
    and output cap say. Not thread-safe: one per column per reader (like the codec modules)."""

    __slots__ = ("budget", "cap", "last", "mode", "recent")

    def __init__(self, mode: str = "auto", cap: int = DEFAULT_CAP) -> None:
        self.mode = mode
        self.cap = cap
        self.budget = budget.Budget.for_cap(cap)
        #: The container that decoded the last value with each first byte (detection starts from
        #: the first byte too: a mixed column's containers rarely share one), and the last one of
        #: all, for a first byte not seen yet (a signature-less container's first byte varies: a
        #: raw block may start with its length).
        self.recent: dict[int, Any] = {}  # a Container, or _NOTHING
        self.last: Container | None = None

    def views(self, values: Iterable[bytes]) -> list[BlobView]:
        """unwrap(value, mode, cap) of each value, in order. Never raises."""
        token = budget.enter(self.budget)
        try:
            one = self._auto if self.mode == "auto" else self._named
            out: list[BlobView] = []
            append = out.append
            for value in values:
                try:
                    append(one(value))
                except Exception as err:  # the boundary of one value, as in unwrap
                    append(failed(value, err))
            return out
        finally:
            budget.leave(token)

    def contents(self, values: Iterable[bytes]) -> list[tuple[str, Any]]:
        """What a query reads of unwrap(value, mode, cap), for each value: (CUT, None) when
        the output cap cut a layer, (TEXT, the text), (STRUCTURED, the tree), else (the view's
        kind, None). The common endings are read without building the view."""
        token = budget.enter(self.budget)
        try:
            one = self._contents if self.mode == "auto" else self._contents_of_view
            out: list[tuple[str, Any]] = []
            append = out.append
            for value in values:
                try:
                    append(one(value))
                except Exception as err:  # the boundary of one value, as in unwrap
                    append(_contents_of(failed(value, err)))
            return out
        finally:
            budget.leave(token)

    def _contents_of_view(self, value: bytes) -> tuple[str, Any]:
        return _contents_of(self._named(value) if self.mode != "auto" else self._auto(value))

    def _contents(self, value: bytes) -> tuple[str, Any]:
        # unwrap's walk and reading, for the endings a page of a column mostly has; the others
        # through the view (every step below is the one the walk takes, in its order).
        cap = self.cap
        if len(value) < registry.MIN_AUTO_LENGTH:
            return self._contents_of_view(value)
        found = self._found(value)
        if found is None:  # no container: stored text, a record, a stream or nothing
            if value.startswith(STREAM_STARTS):
                return self._contents_of_view(value)
            text = stored_text(value)
            if text is not None:
                return TEXT, text[0]
            return _record(value, RAW)
        if found is _FAILED:
            return self._contents_of_view(value)
        fmt, decoded = found
        if decoded.truncated:
            return CUT, None
        data = decoded.data
        if data.startswith(STREAM_STARTS) or registry.detect(data, signatures_only=True) is not None:
            return _contents_of(read_payload(value, contained(value, found, cap)))  # inner layers
        text = as_text(data)
        if text is not None:
            return TEXT, text[0]
        return _record(data, BINARY)

    def _found(self, value: bytes) -> Any:
        """The outer container and what it decoded to (decode_auto's answer, a remembered
        container first), None when there is none, _FAILED when a recognised one failed."""
        lead = value[0]
        fmt = self.recent.get(lead, self.last)
        # _NOTHING: detection found no container in the last value with this first byte (stored
        # text, a record): trying a remembered container first would only repeat its trial.
        found = None if fmt is None or fmt is _NOTHING else registry.decode_known(fmt, value, self.cap)
        if found is None:
            try:
                found = registry.decode_auto(value, self.cap)
            except DecodeError:
                return _FAILED
            if found is None:
                self.recent[lead] = _NOTHING
                return None
        self.recent[lead] = self.last = found[0]
        return found

    def view(self, value: bytes) -> BlobView:
        """unwrap(value, mode, cap) of one value, remembering as views() does."""
        return self.views((value,))[0]

    def _named(self, value: bytes) -> BlobView:
        return _unwrap(value, self.mode, self.cap)

    def _auto(self, value: bytes) -> BlobView:
        cap = self.cap
        if len(value) < registry.MIN_AUTO_LENGTH:
            return _unwrap(value, "auto", cap)
        found = self._found(value)
        if found is None:
            return read_payload(value, uncontained(value, cap))
        if found is _FAILED:  # a recognised format that failed: detection's own account of it
            return _unwrap(value, "auto", cap)
        return read_payload(value, contained(value, found, cap))


_FAILED: Any = object()
_NOTHING: Any = object()
_FORMATS: Any = None


def _load_formats() -> Any:
    """payload.formats, imported with the first value that may be a record (as unwrap does)."""
    global _FORMATS
    from cqlsh_ext.payload import formats

    _FORMATS = formats
    return formats


def _contents_of(view: BlobView) -> tuple[str, Any]:
    if view.truncated_layer is not None:
        return CUT, None
    if view.kind == TEXT and view.text is not None:
        return TEXT, view.text
    if view.kind == STRUCTURED:
        return STRUCTURED, view.tree
    return view.kind, None


def _record(data: bytes, otherwise: str) -> tuple[str, Any]:
    """A payload that is not text: a record of an auto-detected format, or `otherwise`."""
    if len(data) < _MIN_STRUCTURED:
        return otherwise, None
    formats = _FORMATS or _load_formats()
    try:
        found = formats.detect(data)
    except formats.OverBudget:
        return otherwise, None
    return (otherwise, None) if found is None else (STRUCTURED, found[1])
