"""The value engine: the one road a stored value takes, in every reader.

A reader makes one engine per column (or per place inside a column: a map's values, a UDT field)
and hands it the values a page at a time. The engine decodes each value once, exactly as the
reference walk does alone (payload.unwrap.unwrap), and answers in the form the reader needs:

    views(values)            the typed view of each value (payload.view.BlobView): the display,
                             JSON, CSV, Parquet, INSPECT's first look, ADVISE, TRIAL, Spark's UDF
    trace(value)             a view whose layers keep their inputs and headers (INSPECT)
    read_page(values, ask)   the page API: for the paths a statement reads, columns of values,
                             what each path found or missed, each value's kind (payload queries,
                             exports, Spark's query tasks); no view is built on the common road
    measure(value)           what COMPRESSION STATS counts of a value: the chain peeled, sizes,
                             why not (payload.measures); measure_rows() a page's rows at once

`mode` is the shell's: 'auto' (detection) or one codec's name (-d CODEC); `spec`, when given, is
a column setting (DECODE, --decode: payload.spec) and decides instead. An engine remembers, per
first byte, the container that decoded the column's last such value (detection starts from the
first byte too) and tries it first (registry.decode_known): taken only when every format that
detection tries before it is ruled out cheaply, so the value decodes exactly as detection would
decode it; a first byte whose last value had no container goes straight to detection. The
budget is one per value (each decoder meters its own call), entered once a page.

Its invariant, which tests/payload/test_engine.py checks over the producers' corpora in mixed and
adversarial orders: every answer is what unwrap(value, mode, cap) gives, value by value. An
engine is not thread-safe: one per column per reader (like the codec modules' contexts).

The native core (payload.native, Rust; optional) runs under read_page() and measure_rows() in
auto mode with no column setting: one call per page, the values it hands back decoded here as
always, the answer the same Page and measures, value for value (tests/native/test_engine_pages.py
compares them with the Python engine's). What it does not give is made here, from the Python
engine, when a reader asks: a view (Ask.views), a tree (Page.trees), a failed value's reason.
Without the core, or with CQLSH_EXT_NATIVE=0, or in another mode, the Python engine runs alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Container, DecodeError
from cqlsh_ext.codecs.capabilities import HeaderSized
from cqlsh_ext.payload import budget, native
from cqlsh_ext.payload.formats.tree import Cut
from cqlsh_ext.payload.json_text import json_container
from cqlsh_ext.payload.measures import (
    COMPRESSED,
    FROM_HEADER,
    PEEK,
    STORED,
    Measure,
    MeasuredPlace,
    MeasureSpec,
    PageMeasures,
    summarize,
)
from cqlsh_ext.payload.paths import CUT, MISSING, Steps, keys_of, read_path
from cqlsh_ext.payload.unwrap import (
    STREAM_STARTS,
    _unwrap,
    as_text,
    contained,
    failed,
    read_payload,
    stored_text,
    uncontained,
    unwrap_spec,
    walk,
)
from cqlsh_ext.payload.view import BINARY, FAILED, RECORD, TEXT, UNKNOWN, BlobView

#: Record formats are looked for from this length on (unwrap.MIN_STRUCTURED_LENGTH).
_MIN_RECORD = 4


class Ask:
    """What read_page() reads of each value of a page (made once per statement and column)."""

    __slots__ = ("known", "needles", "paths", "text", "views")

    def __init__(self, paths: Sequence[Steps] = (), text: bool = False, views: bool = False,
                 needles: Sequence[Callable[[str], bool] | None] = ()) -> None:
        #: The paths a statement reads inside the payload (steps: keys and list indexes).
        self.paths = tuple(paths)
        #: Each value's text too (a TEXT value's text; LIKE on the bare column).
        self.text = text
        #: Each value's full view too (a statement that outputs the blob itself: decoded once).
        self.views = views
        #: Per path, a test of a JSON text that is True when a condition on that path certainly
        #: fails on it (no string the condition asks for is in the text): such a value is
        #: rejected without parsing its JSON, once some value of the column had the path (until
        #: then, a value read notes where the path stopped, for the closing line's hint).
        self.needles = tuple(needles) or (None,) * len(self.paths)
        #: The indexes of the paths some value had (kept from page to page).
        self.known: set[int] = set()


class Page:
    """read_page()'s answer: per value, its kind and whether the cap cut it; per path, a column of
    values (MISSING where a readable value lacks the path, None where the value cannot be read:
    undecodable, cut or rejected), whether any value had it and where the walks stopped furthest
    in; the texts and the views when asked."""

    __slots__ = ("columns", "cut", "found", "kinds", "missed", "rejected", "texts", "trees", "views")

    def __init__(self, n: int, paths: int) -> None:
        self.kinds: list[str] = []
        self.cut: list[bool] = []
        #: Values a needle test rejected: their paths were not read (they match no condition).
        self.rejected: list[bool] = [False] * n
        self.columns: list[list[Any]] = [[] for _ in range(paths)]
        self.found: list[bool] = [False] * paths
        #: Per path: (the step it stopped at, the key wanted there, the string keys seen there).
        self.missed: list[tuple[int, str | int, set[str]] | None] = [None] * paths
        self.texts: list[str | None] = []
        #: What each value's paths were read in: a record's tree, a text's JSON (None: a text that
        #: is no JSON object or array, or a value that cannot be read). On the native road, made
        #: on first reading of an item (Lazy).
        self.trees: Sequence[Any] = []
        #: Ask.views: each value's view (on the native road, made by the Python engine on first
        #: reading of an item: Lazy).
        self.views: Sequence[BlobView] = []


class ValueEngine:
    """Decodes the values of one column (or one place inside a column). See the module's text."""

    __slots__ = ("budget", "cap", "last", "mode", "native", "recent", "spec")

    def __init__(self, mode: str = "auto", cap: int = DEFAULT_CAP, spec: str | None = None) -> None:
        self.mode = mode
        self.cap = cap
        self.spec = spec
        self.budget = budget.Budget.for_cap(cap)
        #: The container that decoded the last value with each first byte, or _NOTHING when that
        #: value had none; `last`, the last container of all, for a first byte not seen yet (a
        #: signature-less container's first byte varies: a raw block may start with its length).
        self.recent: dict[int, Any] = {}
        self.last: Container | None = None
        #: Whether read_page() and measure_rows() run on the native core: decided at the first
        #: page (None until then); False runs the Python engine alone.
        self.native: bool | None = None

    # ------------------------------------------------------------------ views
    def views(self, values: Iterable[bytes]) -> list[BlobView]:
        """The view of each value, in order. Never raises."""
        token = budget.enter(self.budget)
        try:
            one = self._one()
            out: list[BlobView] = []
            append = out.append
            for value in values:
                try:
                    view = one(value)
                except Exception as err:  # the boundary of one value, as in unwrap
                    view = failed(value, err)
                view.budget = self.budget  # what is read of it later is read within it
                append(view)
            return out
        finally:
            budget.leave(token)

    def view(self, value: bytes) -> BlobView:
        """The view of one value, remembering as views() does."""
        return self.views((value,))[0]

    def trace(self, value: bytes) -> BlobView:
        """The view of one value with every container layer's input and Decoded kept (INSPECT
        shows their headers and verifies their checksums). Remembers nothing."""
        if self.spec is not None:
            view = unwrap_spec(value, self.spec, self.cap)
        else:
            peeled = walk(value, self.mode, self.cap, trace=True)
            token = budget.enter(self.budget)
            try:
                view = read_payload(value, peeled)
            except Exception as err:  # the boundary of one value
                view = failed(value, err)
            finally:
                budget.leave(token)
        view.budget = self.budget
        return view

    def _one(self) -> Callable[[bytes], BlobView]:
        if self.spec is not None:
            spec, cap = self.spec, self.cap
            return lambda value: unwrap_spec(value, spec, cap)
        if self.mode != "auto":
            mode, cap = self.mode, self.cap
            return lambda value: _unwrap(value, mode, cap)
        return self._auto

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

    # ------------------------------------------------------------------ the page API
    def on_core(self) -> bool:
        """Whether the native core answers this engine's pages (auto mode, no column setting, the
        core installed, on and configured)."""
        on = self.native
        if on is None:
            on = self.native = self.mode == "auto" and self.spec is None and native.available()
        return on

    def read_page(self, values: Sequence[bytes], ask: Ask) -> Page:
        """What a statement reads of a page of values (see Ask and Page). Never raises."""
        if values and self.on_core():
            page = self._read_page_native(values, ask)
            if page is not None:
                return page
        return self._read_page_python(values, ask)

    def _read_page_python(self, values: Sequence[bytes], ask: Ask) -> Page:
        page = Page(len(values), len(ask.paths))
        if ask.views:
            page.views = views = self.views(values)
            page.trees = []
            for view in views:
                _read_view(page, ask, view)
            return page
        page.trees = []
        token = budget.enter(self.budget)
        try:
            one = self._content if self.mode == "auto" and self.spec is None else self._content_of_view
            # One loop over the page with what it touches bound locally: this runs per value.
            kinds, cuts, texts = page.kinds, page.cut, page.texts
            trees: list[Any] = []
            page.trees = trees
            columns, rejected, paths, want_text = page.columns, page.rejected, ask.paths, ask.text
            # The needle tests of the paths some value had when the page began (a path a page finds
            # first rejects from the next page on: rejecting is a saving, never an answer).
            rejecters = [rejects for p, rejects in enumerate(ask.needles)
                         if rejects is not None and p in ask.known]
            one_rejecter = rejecters[0] if len(rejecters) == 1 else None
            for i, value in enumerate(values):
                try:
                    kind, cut, found = one(value)
                except Exception:  # the boundary of one value, as in unwrap: a format that failed
                    kind, cut, found = FAILED, False, None
                kinds.append(kind)
                cuts.append(cut)
                if want_text:
                    texts.append(found if kind == TEXT else None)
                if cut or (kind != TEXT and kind != RECORD):
                    trees.append(None)
                    for column in columns:
                        column.append(None)
                    continue
                if kind == TEXT:
                    if (one_rejecter(found) if one_rejecter is not None
                            else rejecters and any(rejects(found) for rejects in rejecters)):
                        rejected[i] = True  # a condition certainly fails: its JSON is not parsed
                        trees.append(None)
                        for column in columns:
                            column.append(None)
                        continue
                    tree = json_container(found) if paths else None
                    trees.append(tree)
                    if paths:
                        _read_paths(page, ask, tree, found)
                else:
                    trees.append(found)
                    if paths:
                        _read_paths(page, ask, found, None)
            return page
        finally:
            budget.leave(token)

    def _content_of_view(self, value: bytes) -> tuple[str, bool, Any]:
        view = self._one()(value)
        return _content_of(view)

    def _content(self, value: bytes) -> tuple[str, bool, Any]:
        """(kind, cut, the text or the record) of a value: the walk's and the reading's steps for
        the endings a page of a column mostly has, without building a view; the others through
        the view (every step below is the one the walk takes, in its order)."""
        cap = self.cap
        if len(value) < registry.MIN_AUTO_LENGTH:
            return _content_of(_unwrap(value, "auto", cap))
        found = self._found(value)
        if found is None:  # no container: stored text, a record, a stream or nothing
            if value.startswith(STREAM_STARTS):
                return _content_of(read_payload(value, uncontained(value, cap)))
            text = stored_text(value)
            if text is not None:
                return TEXT, False, text[0]
            return _record(value, UNKNOWN)
        if found is _FAILED:
            return _content_of(_unwrap(value, "auto", cap))
        fmt, decoded = found
        data = decoded.data
        if (decoded.truncated or data.startswith(STREAM_STARTS)
                or registry.detect(data, signatures_only=True) is not None):
            return _content_of(read_payload(value, contained(value, found, cap)))  # inner layers, a cut
        text = as_text(data)
        if text is not None:
            return TEXT, False, text[0]
        return _record(data, BINARY)

    # ------------------------------------------------------------------ COMPRESSION STATS
    def measure(self, value: bytes, from_headers: bool = False) -> Measure:
        """What COMPRESSION STATS counts of one value (payload.measures): (status, the chain
        spelt, the payload's size, whether it is exact, the reason). The containers are peeled and
        a contained payload is not read; a value with no container is read for its kind (stored
        text or a record: STORED; else UNKNOWN). The common case (one container, decoded whole,
        nothing recognisable inside) is answered without building a view. With `from_headers`, a
        value whose container declares a plausible size within the cap (HeaderSized,
        header_sized_from on) is only peeked at: its size is the declared one, its reason
        FROM_HEADER. Never raises."""
        token = budget.enter(self.budget)
        try:
            if self.mode != "auto" or self.spec is not None:
                return measure(self._one()(value))
            return self._measure(value, from_headers)
        except Exception as err:  # the boundary of one value
            return measure(failed(value, err))
        finally:
            budget.leave(token)

    def measure_many(self, values: Sequence[bytes], from_headers: bool = False) -> list[Measure]:
        """measure() of each value, the budget entered once."""
        token = budget.enter(self.budget)
        try:
            if self.mode != "auto" or self.spec is not None:
                one = self._one()
                return [_measured_safely(lambda v: measure(one(v)), value) for value in values]
            inner = self._measure
            return [_measured_safely(lambda v: inner(v, from_headers), value) for value in values]
        finally:
            budget.leave(token)

    def _measure(self, value: bytes, from_headers: bool) -> Measure:
        cap = self.cap
        if len(value) < registry.MIN_AUTO_LENGTH:
            return measure(_unwrap(value, "auto", cap))
        if from_headers:
            sized = _HEADER_SIZED.get(value[0])
            if sized is not None and len(value) >= sized[2] and sized[0].matches(value):
                fmt, header = sized[0], sized[1]
                size = header.declared_size(value)
                # Only when nothing recognisable is inside (a serialization stream, another
                # container): those take the full walk below, as they would without from_headers.
                head = header.peek(value, PEEK) if size is not None and size <= cap else None
                if (head is not None and not head.startswith(_STREAM_LEADS)
                        and not registry.signature_matches(head)):
                    return COMPRESSED, _label(fmt), size or 0, True, FROM_HEADER
        found = self._found(value)
        if found is None:  # no container: read for its kind (stored text, a record, or unknown)
            return measure(read_payload(value, uncontained(value, cap)))
        if found is _FAILED:
            return measure(walk(value, "auto", cap))
        fmt, decoded = found
        data = decoded.data
        if (decoded.truncated or data.startswith(_STREAM_LEADS)
                or (len(data) >= registry.MIN_AUTO_LENGTH and registry.detect(data, signatures_only=True))):
            return measure(contained(value, found, cap))
        return COMPRESSED, _label(fmt), len(data), True, None

    # ------------------------------------------------------------------ the native core's road
    def _read_page_native(self, values: Sequence[bytes], ask: Ask) -> Page | None:
        """read_page() on the native core: one call for the page, the values it hands back read
        here as _read_page_python reads them, then the page's hits and misses counted as that
        loop counts them (in order, rejected values left out). None when the core fails the call
        (it should not): the Python engine reads the page."""
        n, paths = len(values), ask.paths
        views = ask.views
        # The needle tests, as _read_page_python takes them (not with views: _read_view has none).
        rejecters = [] if views else [rejects for p, rejects in enumerate(ask.needles)
                                      if rejects is not None and p in ask.known]
        # LIKE on the bare column (Ask.text) renders each record's tree: the core's, then.
        try:
            core = native.decode_page(values, self.cap, paths, want_text=ask.text or bool(rejecters),
                                      want_tree=ask.text, missing=MISSING)
        except Exception:
            return None
        page = Page(n, len(paths))
        kinds: list[Any] = list(map(_NATIVE_KINDS.__getitem__, core.kinds))
        cuts = list(map(bool, core.cut))
        page.kinds, page.cut = kinds, cuts
        handed = core.handed_back
        rejected = page.rejected
        # The core's own columns stay as it answered them (its misses were counted on them).
        answered = [column.values for column in core.paths]
        columns = [list(column) for column in answered] if handed or rejecters else answered
        page.columns = columns
        texts = core.texts
        if rejecters:
            assert texts is not None
            for i, code in enumerate(core.kinds):
                text = texts[i]
                if code == native.TEXT and not cuts[i] and text is not None:
                    if any(rejects(text) for rejects in rejecters):
                        rejected[i] = True  # as _read_page_python: its paths are not read
                        for column in columns:
                            column[i] = None
        # Trees the Python engine made for the values handed back (the others' on demand).
        made: dict[int, Any] = {}
        if handed:
            token = budget.enter(self.budget)
            try:
                for i in handed:
                    try:
                        kind, cut, found = self._content(values[i])
                    except Exception:  # the boundary of one value, as in _read_page_python
                        kind, cut, found = FAILED, False, None
                    kinds[i], cuts[i] = kind, cut
                    if texts is not None:
                        texts[i] = found if kind == TEXT else None
                    if cut or (kind != TEXT and kind != RECORD):
                        made[i] = None
                        continue
                    if kind == TEXT and any(rejects(found) for rejects in rejecters):
                        rejected[i], made[i] = True, None
                        continue
                    tree = made[i] = _tree_of(kind, found, paths, views)
                    for p, steps in enumerate(paths):
                        columns[p][i] = _path_of(tree, found if kind == TEXT else None, steps)
            finally:
                budget.leave(token)
        page.texts = texts if ask.text and texts is not None else []
        trees = core.trees
        page.trees = Lazy(n, lambda i: made[i] if i in made else self._tree_at(page, values, i, ask, trees))
        if views:
            page.views = Lazy(n, lambda i: self.view(values[i]))
        if paths:
            self._count_paths(page, ask, core, answered, set(handed), values)
        return page

    def _tree_at(self, page: Page, values: Sequence[bytes], i: int, ask: Ask, trees: list[Any] | None) -> Any:
        """Page.trees[i] of a value the core answered, as _read_page_python would have kept it:
        the core's tree when it gave them (the same, tests/native), else made by the Python engine
        (only readers that ask pay for a tree)."""
        kind = page.kinds[i]
        if page.cut[i] or page.rejected[i] or (kind != TEXT and kind != RECORD):
            return None
        if not ask.paths and (ask.views or kind == TEXT):
            return None
        if trees is not None:
            return trees[i]
        token = budget.enter(self.budget)
        try:
            kind, _cut, found = self._content(values[i])
            return _tree_of(kind, found, ask.paths, ask.views)
        finally:
            budget.leave(token)

    def _count_paths(self, page: Page, ask: Ask, core: native.Page, answered: list[list[Any]],
                     handed: set[int], values: Sequence[bytes]) -> None:
        """Page.found and Page.missed as _read_page_python counts them: a path is found by the
        first readable value (not rejected) that has it; the misses are those of the readable
        values before it. The core's miss is that one when it counted the same values (no value
        handed back or rejected among them); else the misses are read again here, in order."""
        kinds, cuts, rejected, columns = page.kinds, page.cut, page.rejected, page.columns
        n = len(kinds)
        core_kinds, core_cut = core.kinds, core.cut
        for p, steps in enumerate(ask.paths):
            column, own = columns[p], answered[p]
            misses: list[int] = []
            first = n
            for i in range(n):
                kind = kinds[i]
                if cuts[i] or rejected[i] or (kind != TEXT and kind != RECORD):
                    continue
                value = column[i]
                if not steps or (value is not MISSING and value is not CUT):
                    first = i
                    break
                if value is MISSING:
                    misses.append(i)
            if first < n:
                page.found[p] = True
                ask.known.add(p)
            if not misses:
                continue
            # The values whose misses the core counted: those it answered, read, before its first hit.
            counted: list[int] = []
            for i in range(n):
                code = core_kinds[i]
                if i in handed or core_cut[i] or (code != native.TEXT and code != native.RECORD):
                    continue
                if own[i] is not MISSING:
                    break
                counted.append(i)
            miss = core.paths[p].miss
            if counted == misses and miss is not None:
                page.missed[p] = (miss[0], miss[1], set(miss[2]))
                continue
            token = budget.enter(self.budget)
            try:
                for i in misses:
                    kind, _cut, found = self._content(values[i])
                    tree = _tree_of(kind, found, ask.paths, False)
                    _value, depth, parent = read_path(tree, steps)
                    _note_miss(page.missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
            finally:
                budget.leave(token)


_FAILED: Any = object()
_NOTHING: Any = object()
_FORMATS: Any = None

#: The first bytes of the serialization streams the walk takes as a layer: measure() leaves a
#: value holding one to the walk, like one holding another container.
_STREAM_LEADS = tuple(magic[:1] for magic in STREAM_STARTS)
#: First byte -> (format, the same as HeaderSized, smallest stored size) for measure()'s
#: from_headers: the formats with the HeaderSized capability (codecs.capabilities), by the first
#: byte of their magic.
_HEADER_SIZED: dict[int, tuple[Container, HeaderSized, int]] = {
    fmt.magic[0]: (fmt, fmt, fmt.header_sized_from)
    for fmt in registry.all_containers() if isinstance(fmt, HeaderSized)}
#: Container label per format object (Container.label is a property; measure runs once per value).
_LABELS: dict[int, str] = {}


#: The view's kind of each of the core's kind codes (None: handed back, filled in here).
_NATIVE_KINDS: tuple[str | None, ...] = native.KINDS
_UNMADE: Any = object()


class Lazy(Sequence[Any]):
    """A column of a page whose items are made on first reading (the native road's trees and
    views): reads like the list the Python engine's road gives."""

    __slots__ = ("_items", "_make")

    def __init__(self, n: int, make: Callable[[int], Any]) -> None:
        self._items: list[Any] = [_UNMADE] * n
        self._make = make

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._items)))]
        item = self._items[i]
        if item is _UNMADE:
            at = i + len(self._items) if i < 0 else i
            item = self._items[i] = self._make(at)
        return item

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self._items)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, Lazy)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        made = sum(item is not _UNMADE for item in self._items)
        return f"Lazy({len(self._items)} items, {made} made)"


def _tree_of(kind: str, found: Any, paths: Sequence[Steps], views: bool) -> Any:
    """What _read_page_python keeps in Page.trees for a readable value (`found`: its text or record)."""
    if not paths and (views or kind == TEXT):
        return None
    return json_container(found) if kind == TEXT else found


def _path_of(tree: Any, text: str | None, steps: Steps) -> Any:
    """_read_paths' value of one path (the hits and misses are counted apart)."""
    if not steps:
        return text if tree is None and text is not None else tree
    return read_path(tree, steps)[0]


def _label(fmt: Container) -> str:
    label = _LABELS.get(id(fmt))
    if label is None:
        label = _LABELS[id(fmt)] = fmt.label
    return label


def measure(view: BlobView) -> Measure:
    """ValueEngine.measure()'s answer from a view (payload.measures' statuses): a format that
    failed, no known format, nothing peeled (the value reads as stored: text, a record, a
    serialization stream stored as is), or the containers peeled (their payload need not be read)."""
    stored = view.stored_size
    kind = view.kind
    if kind == FAILED or kind == UNKNOWN:
        return kind, "", stored, True, view.reason
    chain = view.chain
    if all(layer.fmt is None for layer in view.layers if not layer.reading):
        return STORED, ">".join(chain), stored, True, view.reason
    return COMPRESSED, ">".join(chain), view.measured_size, not view.cut, view.reason


def measure_rows(page: Sequence[Sequence[Any]], places: Sequence[MeasuredPlace],
                 engines: Sequence[ValueEngine], spec: MeasureSpec) -> PageMeasures:
    """COMPRESSION STATS' answer for a page (payload.measures): every place's values measured by
    its engine (`engines[p]` for `places[p]`), summed per place and per row. One call to the native
    core when every engine runs on it; the Python road (summarize) otherwise. Never raises."""
    if page and engines and all(engine.on_core() for engine in engines):
        answer = native.measure_rows(page, places, spec, engines[0].cap, engines)
        if answer is not None:
            return answer
    return summarize(page, places, spec, lambda p, values: engines[p].measure_many(values, spec.from_headers))


def _measured_safely(how: Callable[[bytes], Measure], value: bytes) -> Measure:
    try:
        return how(value)
    except Exception as err:  # the boundary of one value
        return measure(failed(value, err))


def _load_formats() -> Any:
    """payload.formats, imported with the first value that may be a record (as unwrap does)."""
    global _FORMATS
    from cqlsh_ext.payload import formats

    _FORMATS = formats
    return formats


def _content_of(view: BlobView) -> tuple[str, bool, Any]:
    kind = view.kind
    if kind == TEXT:
        return TEXT, view.cut, view.text
    if kind == RECORD:
        return RECORD, view.cut, view.record
    return kind, view.cut, None


def _record(data: bytes, otherwise: str) -> tuple[str, bool, Any]:
    """A payload that is not text: a record of an auto-detected format, or `otherwise`."""
    if len(data) < _MIN_RECORD:
        return otherwise, False, None
    formats = _FORMATS or _load_formats()
    try:
        found = formats.detect(data)
    except formats.OverBudget:
        return otherwise, False, None
    return (otherwise, False, None) if found is None else (RECORD, False, found[1])


def _read_view(page: Page, ask: Ask, view: BlobView) -> None:
    """One value's answer from its full view (Ask.views)."""
    kind = view.kind
    page.kinds.append(kind)
    page.cut.append(view.cut)
    trees = page.trees
    assert isinstance(trees, list)
    if ask.text:
        page.texts.append(view.text if kind == TEXT else None)
    if view.cut or (kind != TEXT and kind != RECORD):
        trees.append(None)
        for column in page.columns:
            column.append(None)
        return
    tree = view.tree if ask.paths else None  # a text's JSON is parsed here once, kept on the view
    trees.append(tree)
    _read_paths(page, ask, tree, view.text if kind == TEXT else None)


def _read_paths(page: Page, ask: Ask, tree: Any, text: str | None) -> None:
    """The paths of one readable value (`text`: a TEXT value's text, for a path of no steps: the
    payload itself, its JSON or else its text)."""
    found, missed, known, columns = page.found, page.missed, ask.known, page.columns
    for p, steps in enumerate(ask.paths):
        if not steps:
            columns[p].append(text if tree is None and text is not None else tree)
            if not found[p]:
                found[p] = True
                known.add(p)
            continue
        if len(steps) == 1 and type(tree) is dict and found[p]:
            # The common path (one key into a record's map, a key some value had): a plain get.
            value = tree.get(steps[0], MISSING)
            columns[p].append(CUT if type(value) is Cut else value)
            continue
        value, depth, parent = read_path(tree, steps)
        columns[p].append(value)
        if value is MISSING:
            if not found[p]:  # a hint is only for a path no value had
                _note_miss(missed, p, depth, steps[depth], keys_of(parent, MISS_KEYS))
        elif value is not CUT and not found[p]:
            found[p] = True
            known.add(p)


#: Keys kept of a mapping where a path stopped: enough to find the nearest, bounded for a huge one.
MISS_KEYS = 200


def _note_miss(missed: list[Any], p: int, depth: int, key: str | int, keys: tuple[str, ...]) -> None:
    known = missed[p]
    if known is None or depth > known[0]:
        missed[p] = (depth, key, set(keys[:MISS_KEYS]))
    elif depth == known[0] and len(known[2]) < MISS_KEYS:
        known[2].update(keys[:MISS_KEYS - len(known[2])])




class Engines:
    """One engine per place of a result (a column, a list's items, a map's values, a UDT field:
    output.place.ValuePlace), made on first use; a place's column setting (DECODE, --decode), if
    any, is its engine's mode. What every reader of a result decodes with: the display, the JSON
    and CSV writers, the export."""

    __slots__ = ("_by_place", "cap", "mode", "specs")

    def __init__(self, mode: str, cap: int, columns: dict[str, str]) -> None:
        from cqlsh_ext.payload.spec import ColumnSpecs

        self.mode = mode
        self.cap = cap
        self.specs = ColumnSpecs(columns)
        self._by_place: dict[object, ValueEngine] = {}

    def __call__(self, place: object) -> ValueEngine:
        engine = self._by_place.get(place)
        if engine is None:
            engine = self._by_place[place] = ValueEngine(self.mode, self.cap, self.specs(place))
        return engine

__all__ = ["Ask", "Engines", "Lazy", "Page", "ValueEngine", "measure", "measure_rows"]
