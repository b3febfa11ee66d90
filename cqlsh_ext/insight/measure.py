"""Peel one stored value down to its payload: the chain of layers, sizes, and why a value stays raw.

The walk is cqlsh_ext.payload.unwrap.walk, the display's own (same detection, depth limit and
cumulative cap, so a chain here is the label the display shows) and its types (Layer): Peeled is
a measurement of a walk, and keeps bytes instead of text: STATS needs only sizes and must be
cheap per value, ADVISE needs the payload bytes, INSPECT needs every layer's input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Container
from cqlsh_ext.codecs.capabilities import HeaderSized
from cqlsh_ext.payload.unwrap import RAW, STREAM_STARTS, BlobView, Layer, failed, outer_layer, walk

COMPRESSED, PLAIN, UNDECODABLE = "compressed", "not compressed", "not decodable"
#: quick()'s reason for a compressed value sized from its header (not decompressed).
FROM_HEADER = "size from header"
#: The first bytes of the serialization streams the walk takes as a layer: quick() leaves a value
#: holding one to peel(), like one holding another container.
_STREAM_LEADS = tuple(magic[:1] for magic in STREAM_STARTS)


@dataclass(slots=True)
class Peeled:
    stored: int
    status: str
    #: Layer labels joined by '>', outer first (Layer.label); '' when nothing was recognised.
    chain: str
    #: The bytes under the last compression layer (a serialization stream stays serialized); the
    #: stored bytes when nothing was decoded.
    payload: bytes
    #: Payload size; when the cap cut the output, the size the container declares (if it does).
    size: int
    #: False when the cap cut the output: `size` is then a declared or a lower bound.
    exact: bool = True
    reason: str | None = None
    #: The recognised format whose decode failed (status UNDECODABLE), for its header fields.
    failed: Container | None = None
    #: With trace: the compression layers, each with its input and Decoded (INSPECT's headers).
    steps: list[Layer] = field(default_factory=list)
    #: The format of the serialization stream that ends the chain (the payload is that stream).
    stream: str | None = None

    @property
    def codec(self) -> str:
        """Codec family of the outer layer (its -d name), or the status for raw values."""
        if self.status != COMPRESSED:
            return self.status
        return self.chain.split(">", 1)[0].split("/", 1)[0]

    @property
    def ratio(self) -> float:
        return self.size / self.stored if self.stored else 1.0


def effective_mode(mode: str) -> str:
    """The shell's DECOMPRESS mode for measuring: 'none' (display off) still measures with auto."""
    return "auto" if mode in ("none", "off") else mode


#: First byte -> (format, smallest stored size) for quick(from_headers=True): the formats with
#: the HeaderSized capability (codecs.capabilities), by the first byte of their magic.
_HEADER_SIZED = {fmt.magic[:1]: (fmt, fmt.header_sized_from) for fmt in registry.all_containers()
                 if isinstance(fmt, HeaderSized)}

#: Decompressed bytes looked at behind a declared size: enough for every signature detect() knows.
_PEEK = 64

#: Container label per format object: Container.label is a property, and quick() runs once per value.
_LABELS: dict[int, str] = {}


def quick(value: bytes, mode: str = "auto", cap: int = DEFAULT_CAP,
          from_headers: bool = False) -> tuple[str, str, int, bool, str | None]:
    """(status, chain, size, exact, reason) of peel(), for COMPRESSION STATS' per-value hot path.

    The common case (one layer, decoded whole, nothing recognisable inside) is answered here without
    building a Peeled; everything else is peel()'s, so both always agree. With `from_headers`, a
    value whose container declares a plausible size within the cap (a format declaring
    HeaderSized.header_sized_from, from that stored size on) is not decompressed, only peeked at: its
    size is the declared one, its chain the outer container, and its reason FROM_HEADER, so the
    report can say how many values were measured that way. Never raises: whatever a decoder
    raises counts the value as undecodable.
    """
    try:
        return _quick(value, mode, cap, from_headers)
    except Exception as err:  # the per-value boundary, as in walk()
        return UNDECODABLE, "", len(value), True, failed(value, err).reason


def _quick(value: bytes, mode: str, cap: int, from_headers: bool) -> tuple[str, str, int, bool, str | None]:
    if from_headers and mode == "auto":
        sized = _HEADER_SIZED.get(value[:1])
        if sized is not None and len(value) >= sized[1] and sized[0].matches(value):
            sized_fmt = sized[0]
            size = sized_fmt.declared_size(value)
            # Only when nothing recognisable is inside (a serialization stream, another container):
            # those take the full walk below, as they would without from_headers.
            head = sized_fmt.peek(value, _PEEK) if size is not None and size <= cap else None
            if (head is not None and not head.startswith(_STREAM_LEADS)
                    and not registry.signature_matches(head)):
                label = _LABELS.get(id(sized_fmt))
                if label is None:
                    label = _LABELS[id(sized_fmt)] = sized_fmt.label
                return COMPRESSED, label, size or 0, True, FROM_HEADER
    if mode == "auto" and len(value) >= registry.MIN_AUTO_LENGTH:
        # walk()'s own first step; the common case (one layer, decoded whole, nothing recognisable
        # inside) is answered here without building a Peeled, everything else is peel()'s.
        found = outer_layer(value, mode, cap)
        if isinstance(found, BlobView):
            if found.kind == RAW:
                status = UNDECODABLE if found.error is not None else PLAIN
                return status, "", len(value), True, found.reason
        else:
            fmt, decoded = found
            data = decoded.data
            if (
                not decoded.truncated
                and not data.startswith(_STREAM_LEADS)
                and (
                    len(data) < registry.MIN_AUTO_LENGTH
                    or registry.detect(data, signatures_only=True) is None
                )
            ):
                label = _LABELS.get(id(fmt))
                if label is None:
                    label = _LABELS[id(fmt)] = fmt.label
                return COMPRESSED, label, len(data), True, None
    p = peel(value, mode, cap)
    return p.status, p.chain, p.size, p.exact, p.reason


#: Header-sized formats by the int of their magic's first byte (quick_page's lookup).
_HEADER_SIZED_BY_LEAD = {magic[0]: sized for magic, sized in _HEADER_SIZED.items()}


def quick_page(values: list[bytes], mode: str = "auto", cap: int = DEFAULT_CAP, from_headers: bool = False,
               recent: dict[int, Container] | None = None) -> list[tuple[str, str, int, bool, str | None]]:
    """quick() of each value of a page of one column, the same answers: the common case (one
    container, decoded whole, nothing recognisable inside) with the container that decoded the
    last value with the same first byte tried first (registry.decode_known, as the value engine
    does: payload.engine), everything else through quick(). `recent` carries what is remembered
    from page to page."""
    if mode != "auto":
        return [quick(v, mode, cap, from_headers) for v in values]
    recent = {} if recent is None else recent
    known, auto, detect = registry.decode_known, registry.decode_auto, registry.detect
    minimum = registry.MIN_AUTO_LENGTH
    out: list[tuple[str, str, int, bool, str | None]] = []
    append = out.append
    for value in values:
        if len(value) < minimum or (from_headers and value[0] in _HEADER_SIZED_BY_LEAD):
            append(quick(value, mode, cap, from_headers))
            continue
        try:
            fmt = recent.get(value[0])
            found = None if fmt is None else known(fmt, value, cap)
            if found is None:
                found = auto(value, cap)
                if found is None:
                    append(quick(value, mode, cap, from_headers))
                    continue
                recent[value[0]] = found[0]
            fmt, decoded = found
            data = decoded.data
            if (decoded.truncated or data.startswith(_STREAM_LEADS)
                    or (len(data) >= minimum and detect(data, signatures_only=True) is not None)):
                append(quick(value, mode, cap, from_headers))
                continue
        except Exception:  # a failure is quick()'s (and peel()'s) to account for
            append(quick(value, mode, cap, from_headers))
            continue
        label = _LABELS.get(id(fmt))
        if label is None:
            label = _LABELS[id(fmt)] = fmt.label
        append((COMPRESSED, label, len(data), True, None))
    return out


def peel(value: bytes, mode: str = "auto", cap: int = DEFAULT_CAP, trace: bool = False) -> Peeled:
    """Decode `value` as the display does (payload.unwrap.walk) and measure it. Never raises."""
    view = walk(value, mode, cap, trace)
    stored = len(value)
    if view.kind == RAW:
        if view.error is not None:
            failed = getattr(view.error, "format", None)
            return Peeled(stored, UNDECODABLE, "", value, stored, reason=view.reason, failed=failed)
        return Peeled(stored, PLAIN, "", value, stored, reason=view.reason)
    layers = view.layers
    chain = ">".join(layer.label for layer in layers)
    if all(layer.fmt is None for layer in layers):  # a serialization stream stored uncompressed
        return Peeled(stored, PLAIN, chain, value, stored, reason=view.reason, stream=view.stream_format)
    steps = [layer for layer in layers if layer.fmt is not None] if trace else []
    data = view.data
    size, exact = len(data), view.truncated_layer is None
    cut = view.truncated_layer
    if cut is not None and cut is layers[0] and len(layers) == 1 and cut.declared_size:
        size = cut.declared_size  # the outer container says how big the whole payload is
    return Peeled(stored, COMPRESSED, chain, data, size, exact, view.reason, steps=steps,
                  stream=view.stream_format)
