"""The value engine: the one road a stored value takes, in every reader.

A reader makes one engine per column (or per place inside a column: a map's values, a UDT field)
and hands it the values a page at a time. The engine decodes each value once, exactly as the
reference walk does alone (payload.unwrap.unwrap), and answers in the form the reader needs:

    views(values)            the typed view of each value (payload.view.BlobView): the display,
                             JSON, CSV, Parquet, INSPECT's first look, ADVISE, TRIAL, Spark's UDF
    trace(value)             a view whose layers keep their inputs and headers (INSPECT)
    read_page(values, request)   the page API: for the paths a statement reads, columns of values,
                             what each path found or missed, each value's kind (payload queries,
                             exports, Spark's query tasks); no view is built on the common road
    measure(value)           what COMPRESSION STATS counts of a value: the chain peeled, sizes,
                             why not (payload.measures); measure_rows() a page's rows at once
    page_cells(values, ...)  the display's cells of a page: a clean text or a value in no known
                             format as it comes, else the view
    decoded_chains(values)   the chain each value of a page is stored under (COMPRESSION
                             REWRITE's values already in their target), or None

and query_program(program, engines), a payload query's plan (payload.program) answered a page in
one call.

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

The native core (payload.native, Rust; optional) runs under these page functions in auto mode
with no column setting: one call per page, the values it hands back decoded here as always, the
answer the same PageRead and measures, value for value (tests/native/test_engine_pages.py
compares them with the Python engine's): a reader calls them and never asks which engine runs.
What it does not give is made here, from the Python engine, when a reader asks: a view
(ReadRequest.views), a tree (PageRead.trees), a failed value's reason. Without the core, or with
CQLSH_EXT_NATIVE=0, or in another mode, the Python engine runs alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Container, DecodeError
from cqlsh_ext.codecs.capabilities import HeaderSized
from cqlsh_ext.payload import budget, native
from cqlsh_ext.payload.json_text import json_container, past_budget
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
from cqlsh_ext.payload.pages import PageRead, ReadRequest, json_cut, read_paths, read_view
from cqlsh_ext.payload.program import CompiledProgram, PageProgram
from cqlsh_ext.payload.sibling import Chosen, is_choice
from cqlsh_ext.payload.spec import parse_spec
from cqlsh_ext.payload.unwrap import (
    MIN_STRUCTURED_LENGTH,
    STREAM_STARTS,
    as_text,
    contained,
    failed,
    read_payload,
    stored_text,
    uncontained,
    unwrap_in_budget,
    unwrap_spec,
    walk,
)
from cqlsh_ext.payload.view import BINARY, FAILED, PEELED, RECORD, TEXT, UNKNOWN, BlobView, Layer

Shown = TypeVar("Shown")
Raw = TypeVar("Raw")

#: Payloads of values the core handed back peeled that an engine keeps at the most (then it
#: forgets those it kept: a value read after that is decoded again, as without the core). An
#: engine keeps its last page's alone.
PEELED_BYTES = 64 << 20


class Peeled(NamedTuple):
    """A value the native core handed back with its containers peeled (a record format only
    Python reads under them): the containers' labels (outer first), each one's output size, and
    the last one's output, the payload the Python engine reads instead of the stored bytes."""

    chain: tuple[str, ...]
    sizes: tuple[int, ...]
    payload: bytes


class ValueEngine:
    """Decodes the values of one column (or one place inside a column). See the module's text."""

    __slots__ = ("budget", "cap", "choice", "last", "mode", "native", "peeled", "peeled_bytes", "recent",
                 "spec")

    def __init__(self, mode: str = "auto", cap: int = DEFAULT_CAP, spec: str | None = None) -> None:
        self.mode = mode
        self.cap = cap
        self.spec = spec
        self.budget = budget.Budget.for_cap(cap)
        #: A setting that picks the chain per row by a sibling column (payload.sibling): values
        #: come with their row's sibling (Chosen); None for any other engine.
        self.choice = parse_spec(spec).choice if spec is not None and is_choice(spec) else None
        #: The container that decoded the last value with each first byte, or _NOTHING when that
        #: value had none; `last`, the last container of all, for a first byte not seen yet (a
        #: signature-less container's first byte varies: a raw block may start with its length).
        self.recent: dict[int, Any] = {}
        self.last: Container | None = None
        #: Whether read_page() and measure_rows() run on the native core: decided at the first
        #: page (None until then); False runs the Python engine alone.
        self.native: bool | None = None
        #: The values the core handed back with their containers peeled, by their stored bytes
        #: (take_peeled), and their payloads' bytes: read from the payload, never decoded again.
        self.peeled: dict[bytes, Peeled] = {}
        self.peeled_bytes = 0

    def take_peeled(self, values: Sequence[Any], peeled: Mapping[int, tuple[Any, Any, bytes]]) -> None:
        """The values of a page the core handed back with their containers peeled, by index
        (the core's answer's `peeled`: chain, sizes, payload): this engine reads each from its
        payload (its record format, detected as the walk detects it), never from its stored bytes.
        Those of the engine's earlier pages are forgotten."""
        self.forget_peeled()
        for i, (chain, sizes, payload) in peeled.items():
            self.keep_peeled(bytes(values[i]), chain, sizes, payload)

    def forget_peeled(self) -> None:
        """A new page: the payloads kept of the last one let go (an engine may live as long as
        the shell: it holds one page's at the most)."""
        if self.peeled:
            self.peeled = {}
            self.peeled_bytes = 0

    def keep_peeled(self, stored: bytes, chain: Sequence[str], sizes: Sequence[int], payload: bytes) -> None:
        """One value the core handed back peeled (take_peeled), by its stored bytes."""
        if self.peeled_bytes + len(payload) > PEELED_BYTES:
            self.peeled.clear()
            self.peeled_bytes = 0
        self.peeled[stored] = Peeled(tuple(chain), tuple(sizes), payload)
        self.peeled_bytes += len(payload)

    def _peeled_view(self, value: bytes, peeled: Peeled) -> BlobView:
        """The walk's view of a value the core peeled (as contained() and _payload() leave it),
        its payload read as the walk reads it (read_payload): its containers not decoded again."""
        view = BlobView(value, PEELED)
        size_in = len(value)
        for label, size in zip(peeled.chain, peeled.sizes, strict=True):
            view.add_layer(Layer(label, size_in, size, fmt=registry.by_label(label)))
            size_in = size
        view.data, view.payload_size = peeled.payload, len(peeled.payload)
        return read_payload(value, view)

    def _peeled_content(self, value: bytes, peeled: Peeled) -> tuple[str, bool, Any]:
        """content() of a value the core peeled: below one container, content()'s own steps on
        its output (the payload); else through the view."""
        return _below_container(peeled.payload, len(peeled.chain) != 1,
                                lambda: self._peeled_view(value, peeled))

    # ------------------------------------------------------------------ views
    def views(self, values: Iterable[bytes | Chosen]) -> list[BlobView]:
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
                    view = failed(value.stored if isinstance(value, Chosen) else value, err)
                view.budget = self.budget  # what is read of it later is read within it
                append(view)
            return out
        finally:
            budget.leave(token)

    def view(self, value: bytes | Chosen) -> BlobView:
        """The view of one value, remembering as views() does."""
        return self.views((value,))[0]

    def trace(self, value: bytes) -> BlobView:
        """The view of one value with every container layer's input and Decoded kept (INSPECT
        shows their headers and verifies their checksums). Remembers nothing."""
        if self.choice is not None:
            view = self._chosen(value, trace=True)
        elif self.spec is not None:
            view = unwrap_spec(value, self.spec, self.cap, trace=True)
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

    def _one(self) -> Callable[[Any], BlobView]:
        if self.choice is not None:
            return self._chosen
        if self.spec is not None:
            spec, cap = self.spec, self.cap
            return lambda value: unwrap_spec(value, spec, cap)
        if self.mode != "auto":
            mode, cap = self.mode, self.cap
            return lambda value: unwrap_in_budget(value, mode, cap)
        return self._auto

    def _chosen(self, value: Any, trace: bool = False) -> BlobView:
        """A value of a place whose chain its row's sibling picks (payload.sibling): read by that
        chain; the row's note when the sibling names none or was not handed over."""
        choice = self.choice
        assert choice is not None
        if not isinstance(value, Chosen):
            stored = bytes(value)
            return BlobView(stored, UNKNOWN, data=stored, reason=choice.unread)
        chain = choice.chain(value.by)
        if chain is None:
            return BlobView(value.stored, UNKNOWN, data=value.stored, reason=choice.no_chain(value.by))
        return unwrap_spec(value.stored, chain, self.cap, trace)

    def _auto(self, value: bytes) -> BlobView:
        cap = self.cap
        if self.peeled and type(value) is bytes and (peeled := self.peeled.get(value)) is not None:
            return self._peeled_view(value, peeled)
        if len(value) < registry.MIN_AUTO_LENGTH:
            return unwrap_in_budget(value, "auto", cap)
        found = self._outer(value)
        if found is None:
            return read_payload(value, uncontained(value, cap))
        if found is _FAILED:  # a recognised format that failed: detection's own account of it
            return unwrap_in_budget(value, "auto", cap)
        return read_payload(value, contained(value, found, cap))

    def _outer(self, value: bytes) -> Any:
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

    def read_page(self, values: Sequence[bytes], request: ReadRequest, core: bool = True) -> PageRead:
        """What a statement reads of a page of values (see ReadRequest and PageRead). Never raises.
        `core`: False reads on the Python engine alone (values the core handed back already)."""
        if values and core and self.on_core():
            page = native.read_page(self, values, request)
            if page is not None:
                return page
        return self._read_page_python(values, request)

    def page_cells(self, values: Sequence[bytes], text_limit: int, shown_text: Callable[[str, str], Shown],
                   no_format: Callable[[bytes], Raw]) -> list[Shown | Raw | BlobView]:
        """The display's cells of a page (output.display.BlobDisplay): in one call where the
        engine reads the page whole (the native core: a clean text the cap did not cut is
        `shown_text(containers, text)`, its first `text_limit` characters, a value in no known
        format `no_format(stored)`), every other value its view (a record's, a text's the core
        read: the view of its reading, payload.held_views; the values it leaves: the Python
        engine's); on the Python engine, every value's view. Never raises."""
        if values and self.on_core():
            from cqlsh_ext.payload.held_views import HeldView

            cells = native.page_cells(self, values, text_limit, shown_text, no_format, HeldView)
            if cells is not None:
                return cells
        return list(self.views(values))

    def decoded_chains(self, values: Sequence[bytes]) -> list[str | None] | None:
        """Per value, the chain of containers peeled to reach its text or its bytes, spelt as a
        view's chain is (payload.native.decoded_chains: None for a value it leaves to the
        caller), where the engine reads a page's chains in one call (the native core);
        None where it does not: the caller examines each value (COMPRESSION REWRITE)."""
        if not self.on_core():
            return None
        try:
            return native.decoded_chains(values, self.cap)
        except Exception:  # the core failed the call (it should not)
            return None

    def _read_page_python(self, values: Sequence[bytes], request: ReadRequest) -> PageRead:
        page = PageRead(len(values), len(request.paths))
        if request.views:
            page.views = views = self.views(values)
            page.trees = []
            for view in views:
                read_view(page, request, view)
            return page
        page.trees = []
        token = budget.enter(self.budget)
        try:
            one = self.content if self.mode == "auto" and self.spec is None else self._content_of_view
            # One loop over the page with what it touches bound locally: this runs per value.
            kinds, cuts, texts = page.kinds, page.cut, page.texts
            trees: list[Any] = []
            page.trees = trees
            columns, rejected, paths, want_text = page.columns, page.rejected, request.paths, request.text
            # The needle tests of the paths some value had when the page began (a path a page finds
            # first rejects from the next page on: rejecting is a saving, never an answer).
            rejecters = [rejects for p, rejects in enumerate(request.needles)
                         if rejects is not None and p in request.known]
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
                    # (no JSON read: a path in JSON past the value's budget is cut, json_cut)
                    if paths and (tree is not None or not any(paths)
                                  or not json_cut(page, past_budget(found))):
                        read_paths(page, request, tree, found)
                else:
                    trees.append(found)
                    if paths:
                        read_paths(page, request, found, None)
            return page
        finally:
            budget.leave(token)

    def _content_of_view(self, value: bytes) -> tuple[str, bool, Any]:
        view = self._one()(value)
        return _content_of(view)

    def content(self, value: bytes) -> tuple[str, bool, Any]:
        """(kind, cut, the text or the record) of a value: the walk's and the reading's steps for
        the endings a page of a column mostly has, without building a view; the others through
        the view (every step below is the one the walk takes, in its order)."""
        cap = self.cap
        if self.peeled and type(value) is bytes and (peeled := self.peeled.get(value)) is not None:
            return self._peeled_content(value, peeled)
        if len(value) < registry.MIN_AUTO_LENGTH:
            return _content_of(unwrap_in_budget(value, "auto", cap))
        found = self._outer(value)
        if found is None:  # no container: stored text, a record, a stream or nothing
            if value.startswith(STREAM_STARTS):
                return _content_of(read_payload(value, uncontained(value, cap)))
            text = stored_text(value)
            if text is not None:
                return TEXT, False, text[0]
            return _record(value, UNKNOWN)
        if found is _FAILED:
            return _content_of(unwrap_in_budget(value, "auto", cap))
        decoded = found[1]
        return _below_container(decoded.data, decoded.truncated,
                                lambda: read_payload(value, contained(value, found, cap)))

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
        return self.measure_many([value], from_headers)[0]

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
            return measure(unwrap_in_budget(value, "auto", cap))
        if from_headers:
            sized = _HEADER_SIZED.get(value[0])
            if sized is not None and sized[0].matches(value):
                fmt, header, smallest = sized
                # Only when nothing recognisable is inside (a serialization stream, another
                # container): those take the full walk below, as they would without from_headers.
                # A first byte none of them starts with settles it unseen, at any size; from
                # `smallest` on, a peek at the first bytes does.
                first = header.first_byte(value)
                unseen = first is not None and first not in _REMARKABLE
                if unseen or len(value) >= smallest:
                    size = header.declared_size(value)
                    fits = size is not None and size <= cap
                    if fits and unseen:
                        return COMPRESSED, _label(fmt), size or 0, True, FROM_HEADER
                    head = header.peek(value, PEEK) if fits and len(value) >= smallest else None
                    if (head is not None and not head.startswith(_STREAM_LEADS)
                            and not registry.signature_matches(head)):
                        return COMPRESSED, _label(fmt), size or 0, True, FROM_HEADER
        found = self._outer(value)
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

_FAILED: Any = object()
_NOTHING: Any = object()
_FORMATS: Any = None

#: The first bytes of the serialization streams the walk takes as a layer: measure() leaves a
#: value holding one to the walk, like one holding another container.
_STREAM_LEADS = tuple(magic[:1] for magic in STREAM_STARTS)
#: The bytes something recognisable may start with (a serialization stream, a format with a
#: signature: registry.signature_matches): a payload whose first byte is another holds neither.
_REMARKABLE = frozenset([*(magic[0] for magic in STREAM_STARTS),
                         *(b for b, row in enumerate(registry.dispatch_table()) if row)])
#: First byte -> (format, the same as HeaderSized, smallest stored size) for measure()'s
#: from_headers: the formats with the HeaderSized capability (codecs.capabilities), by the first
#: byte of their magic.
_HEADER_SIZED: dict[int, tuple[Container, HeaderSized, int]] = {
    fmt.magic[0]: (fmt, fmt, fmt.header_sized_from)
    for fmt in registry.all_containers() if isinstance(fmt, HeaderSized)}
#: Container label per format object (Container.label is a property; measure runs once per value).
_LABELS: dict[int, str] = {}


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


def query_program(program: PageProgram, engines: Sequence[ValueEngine]) -> CompiledProgram | None:
    """A payload query's program (payload.program) as the engine answers it a page at a time in
    one call: where every place's engine (`engines[p]` for `program.places[p]`) reads pages whole
    (the native core) and evaluates the program's conditions (its literals within the core's
    numbers). None otherwise: the caller's Python evaluator reads the pages (the same answer,
    tests/native compares them page by page)."""
    if not program.places or not engines or not all(engine.on_core() for engine in engines):
        return None
    return native.compile_program(program, engines)


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


def _below_container(data: bytes, viewed: bool, view: Callable[[], BlobView]) -> tuple[str, bool, Any]:
    """content() of a value below its container (`data`, its output): a text or a record read
    here; the view where more is to peel (inner layers, a stream), or where `viewed` (a cut, more
    than one container)."""
    if viewed or data.startswith(STREAM_STARTS) or registry.detect(data, signatures_only=True) is not None:
        return _content_of(view())
    text = as_text(data)
    if text is not None:
        return TEXT, False, text[0]
    return _record(data, BINARY)


def _record(data: bytes, otherwise: str) -> tuple[str, bool, Any]:
    """A payload that is not text: a record of an auto-detected format, or `otherwise`."""
    if len(data) < MIN_STRUCTURED_LENGTH:
        return otherwise, False, None
    formats = _FORMATS or _load_formats()
    try:
        found = formats.detect(data)
    except formats.OverBudget:
        return otherwise, False, None
    return (otherwise, False, None) if found is None else (RECORD, False, found[1])


__all__ = ["ValueEngine", "measure", "measure_rows", "query_program"]
