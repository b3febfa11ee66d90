"""Peel a stored blob down to what it holds: compression layers, a serialization stream, then text,
records or bytes.

The value engine (payload.engine) is how every reader decodes a value; this module is its walk and
its reading, and `unwrap`, one value alone, the reference the engine is checked against. Nothing
here raises for a stored value, nothing produces more than `cap` decompressed bytes over all layers
together, and a value that cannot be decoded comes back as its bytes with a one-line reason (kind
`unknown` or `failed`: payload.view). Each value is decoded within its budget
(payload.budget, made from `cap`); whatever a decoder raises beyond its own errors
(RecursionError, MemoryError, a library's own exception) becomes that value's reason too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import Container, Decoded, DecodeError
from cqlsh_ext.payload import budget
from cqlsh_ext.payload.names import STREAM_MAGICS
from cqlsh_ext.payload.view import (
    BINARY,
    FAILED,
    JSON_READING,
    NOT_DETECTED,
    PEELED,
    QUIET_REASONS,
    RECORD,
    TEXT,
    TOO_SHORT,
    UNKNOWN,
    BlobView,
    Layer,
)

if TYPE_CHECKING:
    from cqlsh_ext.payload.formats import StreamLayer
    from cqlsh_ext.payload.spec import Spec

#: Compression or serialization layers followed at the most (<codec> > <stream> > ...).
MAX_DEPTH = 4

#: The declared magics of the serialization streams that are a layer of the walk (a format's
#: DECLARES "stream"; payload.formats.StreamLayer reads them).
STREAM_STARTS = tuple(STREAM_MAGICS)
#: The label of a value (or a decoded layer) that is stored as plain text.
TEXT_LABEL = "text"
#: A stored value is read as text only from this length on, and only when it is valid UTF-8 (or
#: UTF-16 with a byte order mark) without control characters other than tab, CR and LF. Random
#: binary values pass about once in 15,000 at 10 bytes, once in 100,000 at 12 and once in 5
#: million at 16 (bench/text_rule.py); none of the 20,000-value sweeps of random or compressed
#: values reads as text (tests/payload/test_text_rule.py).
MIN_TEXT_LENGTH = 10
#: Below this many bytes, only ASCII text counts.
SHORT_TEXT = 32
#: Record formats (payload.formats) are looked for from this length on.
MIN_STRUCTURED_LENGTH = 4
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
#: Bytes no UTF-8 text starts with (continuation bytes, overlong and out-of-range leads): a value
#: starting so fails to decode at its first byte (a record format's map, say), told without trying.
_NOT_UTF8_LEADS = frozenset((*range(0x80, 0xC2), *range(0xF5, 0x100)))

# C1 control characters (U+0080-U+009F): text people store does not hold them.
_C1_RE = re.compile("[\x80-\x9f]")
# Control characters other than tab, newline and carriage return: text has few of them.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# C0 controls and DEL as bytes: bytes.translate finds them about 3x faster than str.isprintable.
_C0_BYTES = bytes(range(0x20)) + b"\x7f"


def failed(value: bytes, err: BaseException) -> BlobView:
    """The last-resort boundary of one value: anything a decoder raised, as the value's reason."""
    detail = str(err).splitlines()[0][:80] if str(err) else ""
    name = type(err).__name__
    reason = f"not decoded: {name}" + (f" ({detail})" if detail and name not in detail else "")
    # An error, so that the value is a format that failed, not one in no known format.
    return BlobView(value, FAILED, data=value, reason=reason, error=DecodeError(reason))


def _bounded(decode: Callable[..., BlobView], value: bytes, cap: int, *args: Any) -> BlobView:
    token = budget.enter(budget.Budget.for_cap(cap))
    try:
        return decode(value, *args)
    except Exception as err:  # the boundary: no stored value may end the process or the result
        return failed(value, err)
    finally:
        budget.leave(token)


def unwrap(value: bytes, mode: str, cap: int) -> BlobView:
    """Decode `value` for display. `mode` is 'auto' or a codec name (never 'none')."""
    return _bounded(unwrap_in_budget, value, cap, mode, cap)


def unwrap_in_budget(value: bytes, mode: str, cap: int) -> BlobView:
    """unwrap() inside the per-value budget the caller already entered (the engine enters one a
    value and reads many ways); an exception is the caller's to turn into a failed view."""
    return read_payload(value, _walk(value, mode, cap))


def read_payload(value: bytes, view: BlobView) -> BlobView:
    """The walk's view of `value` (walk(), or the engine's way to the same view) finished: its
    payload read as text, a serialization stream's object, a record or bytes; a value in no known
    format that is stored text or a record read as such."""
    if view.kind == FAILED:
        return view
    if view.kind == UNKNOWN:
        if view.reason in QUIET_REASONS:  # nothing recognised: maybe text, maybe a record format
            found = stored_text(value)
            if found is not None:
                return _read_as_text(BlobView(value, PEELED, data=value), value, found)
            if len(value) >= MIN_STRUCTURED_LENGTH:
                candidate = BlobView(value, PEELED)
                structured = _structured(candidate, value)
                if structured is not None:
                    return structured
                if candidate.reason:
                    # The budget stopped a record format before it could tell the value is one:
                    # no known format, shown as hex saying why.
                    view.reason = candidate.reason
        return view
    content, name = view.stream, view.stream_format
    if content is None or name is None:
        return _text_or_binary(view, view.data)
    if content.text is not None:  # a string
        view.kind, view.text = TEXT, content.text
        return view
    from cqlsh_ext.payload.formats import PayloadError

    view.payload_format = name
    try:
        view.record = _stream_layer(name).read(view.data)
    except PayloadError as err:
        # Named by its class, with why it was not read (a stream cut by the output cap, say).
        view.kind = BINARY
        view.object_class = f"{content.kind} {content.class_name}" if content.class_name else content.kind
        view.reason = view.reason or f"{name} serialization: {err}"
        return view
    view.kind = RECORD
    return view


def unwrap_spec(value: bytes, spec_text: str, cap: int, trace: bool = False) -> BlobView:
    """Decode `value` as a column setting says (cqlsh_ext.payload.spec): the named codecs in
    order, then the named payload reading (or detection with `auto`). A value the setting does not
    fit stays raw, with a reason that names the setting. `trace`: each layer keeps its input and
    Decoded (INSPECT)."""
    return _bounded(_unwrap_spec, value, cap, spec_text, cap, trace)


def _unwrap_spec(value: bytes, spec_text: str, cap: int, trace: bool = False) -> BlobView:
    from cqlsh_ext.payload.spec import parse_spec

    spec = parse_spec(spec_text)
    view = BlobView(value, PEELED)
    data = value
    try:
        for fmt, data_in, decoded in named_layers(spec, value, cap):
            view.add_layer(_layer(fmt, data_in, decoded, trace))
            data = decoded.data
    except DecodeError as err:
        return BlobView(value, FAILED, data=value, reason=f"as {spec}: {err}", error=err)
    # the bytes under the codecs named and their size, as detection's _payload sets them (a rewrite
    # writes these bytes in its new chain)
    view.data, view.payload_size = data, len(data)
    view.named = len(view.layers)
    if spec.payload is None:
        return _text_or_binary(view, data)
    if spec.payload == "auto":
        return _text_or_binary(view, data) if view.layers else unwrap_in_budget(value, "auto", cap)
    if spec.payload == "hex":
        view.kind, view.data = BINARY, data
        return view
    if spec.payload == TEXT_LABEL or spec.payload == JSON_READING:
        found = as_text(data, cut=view.truncated_layer is not None)
        if found is None:
            return BlobView(value, FAILED, data=value, reason=f"as {spec}: not text")
        view.named += 1
        if spec.payload == TEXT_LABEL:
            return _read_as_text(view, data, found)
        # JSON: the view detection gives the same text (`[zstd] {...}`, `[text] {...}` stored as is)
        view = _text_or_binary(view, data) if view.layers else _read_as_text(view, data, found)
        if view.tree is None:
            return BlobView(value, FAILED, data=value, reason=f"as {spec}: not a JSON object or array")
        return view
    from cqlsh_ext.payload import formats

    try:
        tree = formats.decode_named(spec.payload, data, spec.argument)
    except formats.PayloadError as err:
        return BlobView(value, FAILED, data=value, reason=f"as {spec}: {err}")
    view.named += 1  # the reading is named too
    if isinstance(tree, str):  # a serialization stream holding one string: text, as auto mode shows it
        return _read_as_text(view, data, (tree, False), label=spec.payload)
    reader = formats.get(spec.payload)
    return _read_as_structured(view, data, reader.label(data) if reader else spec.payload, spec.payload, tree,
                               reader is not None and reader.nodes_within_input)


def named_layers(spec: Spec, value: bytes, cap: int) -> Iterator[tuple[Container, bytes, Decoded]]:
    """The containers a setting names, peeled in its order as its reading peels them (each the
    container its label names, or the first of its codec's that decodes): (the container, its
    input, what it decoded), within `cap` over all; DecodeError from the first that fails."""
    data, left = value, cap
    for codec, variant in zip(spec.codecs, spec.variants or (None,) * len(spec.codecs), strict=True):
        named = registry.by_label(variant) if variant else None
        if named is not None:
            fmt, decoded = registry.decode_as(named, data, left)
        else:
            fmt, decoded = registry.decode_named(codec, data, left)
        yield fmt, data, decoded
        data, left = decoded.data, left - len(decoded.data)


def walk(value: bytes, mode: str, cap: int, trace: bool = False) -> BlobView:
    """The layers of `value`, without classifying the payload: the one decoding walk that display
    (unwrap) and the insight commands share, so a chain INSPECT reports is the label shown.

    Returns kind UNKNOWN or FAILED (with reason; error when a recognised format failed) or PEELED
    (data: the bytes under the last compression layer; stream: a serialization stream's first
    item). Never raises; at most `cap` decompressed bytes over all layers.
    """
    return _bounded(_walk, value, cap, mode, cap, trace)


def outer_layer(value: bytes, mode: str, cap: int,
                trace: bool = False) -> tuple[Container, Decoded] | BlobView:
    """walk()'s first step: the outer container and what it decoded to, or the finished view when
    there is no container (UNKNOWN, FAILED, or a serialization stream stored as is). Raises what a
    decoder raises other than DecodeError (walk() is the boundary)."""
    stored = len(value)
    if mode == "auto":
        if stored < registry.MIN_AUTO_LENGTH:
            return BlobView(value, UNKNOWN, data=value, reason=TOO_SHORT if stored else None)
        try:
            found = registry.decode_auto(value, cap)
        except DecodeError as err:
            return BlobView(value, FAILED, data=value, reason=str(err), error=err)
        return uncontained(value, cap, trace) if found is None else found
    try:
        return registry.decode_named(mode, value, cap)
    except DecodeError as err:
        # The registry's reasons name the format already: '<codec>: corrupt input'.
        return BlobView(value, FAILED, data=value, reason=str(err), error=err)


def uncontained(value: bytes, cap: int, trace: bool = False) -> BlobView:
    """The walk of a value auto-detection found no container around: a serialization stream
    stored as is, or UNKNOWN (NOT_DETECTED)."""
    if value.startswith(STREAM_STARTS):
        return _payload(BlobView(value, PEELED), value, cap, 0, trace)
    return BlobView(value, UNKNOWN, data=value, reason=NOT_DETECTED)


def _walk(value: bytes, mode: str, cap: int, trace: bool = False) -> BlobView:
    found = outer_layer(value, mode, cap, trace)
    if isinstance(found, BlobView):
        return found
    view = contained(value, found, cap, trace)
    if mode != "auto":
        view.named = 1  # -d CODEC named the outer layer
    return view


def contained(value: bytes, found: tuple[Container, Decoded], cap: int, trace: bool = False) -> BlobView:
    """The walk of a value whose outer container is found (outer_layer's answer): the layers
    nested inside it, down to the payload."""
    fmt, decoded = found
    view = BlobView(value, PEELED)
    view.add_layer(_layer(fmt, value, decoded, trace))
    return _payload(view, decoded.data, cap - len(decoded.data), 1, trace)


def _layer(fmt: Container, data_in: bytes, decoded: Decoded, trace: bool) -> Layer:
    return Layer(
        fmt.label,
        len(data_in),
        len(decoded.data),
        decoded.truncated,
        decoded.declared_size,
        fmt,
        data_in if trace else None,
        decoded if trace else None,
        unverified=decoded.unverified,
    )


def _payload(view: BlobView, data: bytes, budget: int, depth: int, trace: bool) -> BlobView:
    """Follow nested layers while the depth limit and budget allow; a serialization stream ends the
    walk."""
    while depth < MAX_DEPTH:
        if data.startswith(STREAM_STARTS):
            _stream(view, data)
            break
        # Inside a payload only signature formats count: a trial decode of text as a
        # signature-less format could invent a layer.
        fmt = registry.detect(data, signatures_only=True)
        if fmt is None:
            break
        if budget <= 0:
            view.reason = f"inner {fmt.label} layer not decoded: output cap reached"
            break
        try:
            decoded = fmt.decode(data, budget)
        except DecodeError as err:
            view.reason = f"inner {fmt.label}: {err}"
            break
        view.add_layer(_layer(fmt, data, decoded, trace))
        data, budget, depth = decoded.data, budget - len(decoded.data), depth + 1
    if not view.layers:  # a serialization stream that is not well-formed, stored as is
        view.kind = FAILED
    view.data = data
    view.payload_size = len(data)
    return view


def _format_of_stream(data: bytes) -> str | None:
    """The format whose serialization stream `data` starts with (a declared magic), else None."""
    return next((name for magic, name in STREAM_MAGICS.items() if data.startswith(magic)), None)


def _stream_layer(name: str) -> StreamLayer:
    """The declared format's StreamLayer (the format modules load on the first stream)."""
    from cqlsh_ext.payload import formats

    fmt = formats.get(name)
    if fmt is None or fmt.stream is None:
        raise ImportError(f"payload format {name!r} declares a stream magic but no FORMAT.stream")
    return fmt.stream


def _stream(view: BlobView, data: bytes) -> None:
    from cqlsh_ext.payload.formats import PayloadError

    name = _format_of_stream(data)
    assert name is not None  # data starts with one of STREAM_STARTS
    try:
        view.stream = _stream_layer(name).first(data)
    except PayloadError as err:
        view.reason = f"{name} serialization: {err}"
        return
    view.stream_format = name
    view.add_layer(Layer(name, len(data), len(data), view.stream.truncated))


def _text_or_binary(view: BlobView, data: bytes) -> BlobView:
    found = as_text(data, cut=view.truncated_layer is not None)
    if found is not None:
        view.kind, (view.text, view.clean) = TEXT, found
        return view
    if view.truncated_layer is None and len(data) >= MIN_STRUCTURED_LENGTH:
        structured = _structured(view, data)
        if structured is not None:
            return structured
    view.kind, view.data = BINARY, data
    return view


def _structured(view: BlobView, data: bytes) -> BlobView | None:
    """`view` with a record-format layer when `data` is one (text was tried first: it wins); a
    candidate the budget stopped leaves its reason on `view`."""
    from cqlsh_ext.payload import formats  # the format libraries load on the first candidate

    try:
        found = formats.detect(data)
    except formats.OverBudget as err:
        view.reason = view.reason or str(err)
        return None
    if found is None:
        return None
    fmt, tree = found
    return _read_as_structured(view, data, fmt.label(data), fmt.name, tree, fmt.nodes_within_input)


def _read_as_text(view: BlobView, data: bytes, found: tuple[str, bool], label: str = TEXT_LABEL) -> BlobView:
    """`view` ending in a [text] reading of `data` (stored as text, or named so; `label` names
    another reading that gave text, such as a serialization stream's string)."""
    view.add_layer(Layer(label, len(data), len(data), reading=True))
    view.kind, (view.text, view.clean) = TEXT, found
    return view


def _read_as_structured(view: BlobView, data: bytes, label: str, name: str, tree: Any,
                        nodes_within_input: bool = False) -> BlobView:
    """`view` ending in a record-format reading of `data` (payload.formats)."""
    view.add_layer(Layer(label, len(data), len(data), reading=True))
    view.kind, view.payload_format, view.record, view.data = RECORD, name, tree, data
    view.tree_input_size = len(data) if nodes_within_input else None
    return view


def stored_text(value: bytes) -> tuple[str, bool] | None:
    """(text, clean) when a value that matched no format is stored as text (MIN_TEXT_LENGTH; a
    shorter one only when it is a JSON object or array that parses: `{}`, `["é"]`)."""
    if len(value) < MIN_TEXT_LENGTH:
        return _short_json_value(value)
    if value.startswith(_UTF16_BOMS):
        try:
            text = value.decode("utf-16")
        except UnicodeDecodeError:
            return None
        # Most UTF-16 text people store is mostly ASCII; random bytes behind a BOM decode to
        # scattered CJK and other letters instead.
        ascii_share = sum(ch < "\x80" for ch in text) / max(len(text), 1)
        return (text, False) if ascii_share >= 0.5 and not _CONTROL_RE.search(text) else None
    if value[0] in _NOT_UTF8_LEADS:
        return None
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(value.translate(None, _C0_BYTES)) != len(value) and _CONTROL_RE.search(text):
        return None
    if not value.isascii():
        if _C1_RE.search(text):
            return None  # C1 controls: not something people write
        # Short random values pass as UTF-8 mostly through stray multi-byte sequences
        # (bench/text_rule.py): below SHORT_TEXT bytes only ASCII text counts, and a JSON object
        # or array (`{"a": "xéy"}`: no random bytes are that).
        if len(value) < SHORT_TEXT and not _short_json(text):
            return None
    return text, b"\xc2" not in value and "\t" not in text and "\n" not in text and "\r" not in text


def _short_json_value(value: bytes) -> tuple[str, bool] | None:
    """(text, clean) for a value shorter than MIN_TEXT_LENGTH that is a JSON object or array (no
    random value of a few bytes parses as one and starts with { or [ by chance often enough to
    matter: it must parse whole)."""
    if value.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not _short_json(text) or _CONTROL_RE.search(text):
        return None
    return text, b"\xc2" not in value and "\t" not in text and "\n" not in text and "\r" not in text


def _short_json(text: str) -> bool:
    """Whether a short text is a JSON object or array (json_text.json_container reads it)."""
    from cqlsh_ext.payload.json_text import json_container

    return text.lstrip()[:1] in ("{", "[") and json_container(text) is not None


def as_text(data: bytes, cut: bool = False) -> tuple[str, bool] | None:
    """(text, clean) when UTF-8 `data` reads as text (few control characters), else None.

    clean: no C0/C1 control characters at all, so cqlsh's escaping would change nothing
    but backslashes.
    """
    if data and data[0] in _NOT_UTF8_LEADS and not (cut and len(data) <= 3):
        return None  # the decode below would fail at the first byte
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        # Output stopped at the cap may end inside a character: drop that partial character only.
        if not (cut and err.start >= len(data) - 3):
            return None
        data = data[: err.start]
        text = data.decode("utf-8")
    if len(data.translate(None, _C0_BYTES)) == len(data):
        # C1 controls (U+0080-U+009F) and NBSP, which cqlsh escapes, all encode as C2 xx.
        return text, b"\xc2" not in data
    # At most 1 % control characters; counted until that is passed (a 4 MiB bomb of zeros would
    # otherwise build a list of four million matches).
    allowed = len(text) // 100
    for count, _ in enumerate(_CONTROL_RE.finditer(text), 1):
        if count > allowed:
            return None
    return text, False
