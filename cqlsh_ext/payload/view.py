"""What a stored value is: the one typed view every reader reads, and the words for it.

The value engine (payload.engine) decodes a stored value once and hands out a BlobView: the
display, the JSON, CSV and Parquet spellings, the insight commands, payload queries, exports and
Spark read its fields. Nobody joins or splits label strings or parses the payload's JSON again:
the view spells its label and keeps its tree (a text's JSON is parsed at most once, on first use).

Every value is one of five kinds (docs/formats.md, "What a value is"):

    text      the payload reads as text (JSON text included: its label ends with `json`)
    record    a record format read into a tree (a binary serialization format, a stream's object)
    binary    a binary payload: bytes under a recognised layer, neither text nor a record
    unknown   no known format: shown as its hex, exactly as cqlsh prints it
    failed    a recognised format that failed to decode: hex, with the reason

and, beside its kind, a value may be cut: the per-value budget (the output cap) stopped a layer.
What a query cannot read (binary, unknown, failed) is "undecodable": one name on the screen, in
`IS UNDECODABLE` and in every count.

A value's label is its chain spelt with '>' (`<codec>>json`, `<codec>><format>`,
`<codec>><stream>>text`, `json` for plain stored JSON): the layers peeled (containers and
serialization streams, outer first), then how the payload reads (`json`, `text`, a record format,
`binary`). The display shows a short form of it (`short_label`): the layers it read, `[<codec>]`
for JSON text under a container, `[text]` for a value stored as text, `[<codec>><format>]` for a
record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.codecs.base import Container, Decoded, DecodeError
    from cqlsh_ext.payload.budget import Budget

TEXT, RECORD, BINARY, UNKNOWN, FAILED = "text", "record", "binary", "unknown", "failed"
#: The kinds, in the order reports list them.
KINDS = (TEXT, RECORD, BINARY, UNKNOWN, FAILED)
#: What a query cannot read: counted, listed (IS UNDECODABLE) and grouped as "undecodable".
UNDECODABLE_KINDS = frozenset({BINARY, UNKNOWN, FAILED})
UNDECODABLE = "undecodable"
#: How reports and help texts name each kind.
KIND_TITLES = {TEXT: "text", RECORD: "record", BINARY: "binary payload", UNKNOWN: "no known format",
               FAILED: "a format that failed"}
#: The label's separator, and the readings a payload's label ends with when it is no record.
SEPARATOR = ">"
JSON_READING, TEXT_READING, BINARY_READING = "json", TEXT, BINARY


#: How sure a decoded value's reading is (payload.confidence has the rule), weakest first.
CONFIDENT, LIKELY, GUESSED = "confident", "likely", "guessed"
CONFIDENCES = (GUESSED, LIKELY, CONFIDENT)

#: The note of a text shown as stored because its JSON is past the value's budget (the display's
#: `(...)` after it, JSON output's "note"), with BlobView.json_past_budget's reason.
JSON_PAST_BUDGET = "not read as JSON: {}, past the value's budget"

#: Auto mode found no known format: the value may still use one that only -d CODEC decodes.
NOT_DETECTED = "no compression detected"
TOO_SHORT = "too short to detect"
#: Reasons that only say "nothing recognised": the display then prints the hex exactly as cqlsh
#: does, with no note (INSPECT still gives the reason).
QUIET_REASONS = frozenset({NOT_DETECTED, TOO_SHORT})


def spell(chain: tuple[str, ...] | list[str]) -> str:
    """A chain of labels as one label (`<codec>>json`)."""
    return SEPARATOR.join(chain)


class Layer:
    """One step of a value's walk: a container decoded, a serialization stream entered, or the
    payload's reading (text, a record format)."""

    __slots__ = ("data_in", "declared_size", "decoded", "fmt", "input_size", "label", "output_size",
                 "reading", "truncated", "unverified")

    def __init__(self, label: str, input_size: int, output_size: int, truncated: bool = False,
                 declared_size: int | None = None, fmt: Container | None = None, data_in: bytes | None = None,
                 decoded: Decoded | None = None, reading: bool = False,
                 unverified: str | None = None) -> None:
        self.label = label
        self.input_size = input_size
        self.output_size = output_size
        self.truncated = truncated
        #: The size the layer's headers declare, read of a cut layer (the size it would have had);
        #: None where they declare none, and in a layer the native core peeled (engine.Peeled).
        self.declared_size = declared_size
        #: The format of a compression layer; None for a serialization stream's layer and readings.
        self.fmt = fmt
        #: Traced (INSPECT): the layer's input and its Decoded, whose headers INSPECT shows.
        self.data_in = data_in
        self.decoded = decoded
        #: A reading of the payload (text, a record format) rather than a layer peeled: part of
        #: the display's short label, not of the chain STATS counts.
        self.reading = reading
        #: Why its output cannot be vouched for (codecs.base.Decoded.unverified: read with a
        #: dictionary and no checksum); None when the decode itself vouches for it.
        self.unverified = unverified

    def __repr__(self) -> str:
        return (f"Layer({self.label!r}, {self.input_size}, {self.output_size}, truncated={self.truncated}, "
                f"declared_size={self.declared_size}, reading={self.reading})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layer):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)


#: A view's kind while the walk is still peeling layers (payload.unwrap): never handed to a reader.
PEELED = "peeled"
_UNREAD: Any = object()


class BlobView:
    """One stored value, decoded once: its kind, its layers and label, sizes, cut and reason, its
    text and its tree. Built by payload.unwrap's walk for the engine; readers only read it."""

    __slots__ = ("_json", "budget", "clean", "data", "error", "kind", "layers", "named", "object_class",
                 "payload_format",
                 "payload_size", "reason", "record", "stored", "stream", "stream_format", "text",
                 "tree_input_size", "truncated_layer", "unverified_layer")

    def __init__(self, stored: bytes, kind: str, data: bytes = b"", reason: str | None = None,
                 error: DecodeError | None = None) -> None:
        #: The value as stored (COPY keeps these bytes; JSON's raw and Parquet's stored columns).
        self.stored = stored
        #: One of KINDS (PEELED inside the walk only).
        self.kind = kind
        self.layers: list[Layer] = []
        #: TEXT: the text (`clean`: without control characters, so the display escapes nothing).
        self.text: str | None = None
        self.clean = False
        #: UNKNOWN, FAILED: the stored bytes. BINARY: the decoded bytes. RECORD: the bytes its
        #: record format read.
        self.data = data
        #: The bytes under the last layer peeled (containers and streams), as decoded: the stored
        #: size when nothing was peeled.
        self.payload_size = len(stored)
        #: UNKNOWN, FAILED: why the value is shown undecoded. Otherwise a note on an inner layer.
        self.reason = reason
        #: FAILED because a recognised format failed to decode: that error (its .format names it).
        self.error = error
        #: The first item of the serialization stream the payload is (StreamLayer.first), and the
        #: stream's format.
        self.stream: Any = None
        self.stream_format: str | None = None
        #: RECORD: the payload format's name and its tree (payload.formats.tree).
        self.payload_format: str | None = None
        self.record: Any = None
        #: BINARY: a serialization stream's object its reader could not read: its class (shown,
        #: never deserialized).
        self.object_class: str | None = None
        #: The first layer whose output the cap cut, if any (kept by add_layer).
        self.truncated_layer: Layer | None = None
        #: The first layer whose output its decode cannot vouch for (Layer.unverified: a dictionary
        #: and no checksum), if any (kept by add_layer): the reading is then at most "likely".
        self.unverified_layer: Layer | None = None
        #: RECORD: the size of the bytes the tree was read from when its format has at most one
        #: node per byte (PayloadFormat.nodes_within_input), so Budget.trusts can skip a count.
        self.tree_input_size: int | None = None
        self._json: Any = _UNREAD
        #: How many of the label's leading steps the user named (-d CODEC: 1; a DECODE setting:
        #: its codecs, and its reading when it names one): those are confident (payload.confidence).
        self.named = 0
        #: The budget the value was decoded under (its engine's: the output cap's), for what is
        #: read of it later (its JSON, parsed on first use); None: the one current then.
        self.budget: Budget | None = None

    # ------------------------------------------------------------------ what it is
    @property
    def stored_size(self) -> int:
        return len(self.stored)

    @property
    def cut(self) -> bool:
        """The per-value budget (the output cap) stopped a layer: what is shown is a part."""
        return self.truncated_layer is not None

    @property
    def undecodable(self) -> bool:
        """Nothing a query can read: binary, no known format, or a format that failed."""
        return self.kind in UNDECODABLE_KINDS

    @property
    def quiet(self) -> bool:
        """No reason worth showing: an unknown value is then its hex exactly as cqlsh prints it."""
        return self.reason is None or self.reason in QUIET_REASONS

    @property
    def codec(self) -> str | None:
        """The codec family of the outer container (its -d name), None when none was decoded."""
        for layer in self.layers:
            if layer.fmt is not None:
                return layer.fmt.codec
        return None

    @property
    def failed_format(self) -> Container | None:
        """FAILED: the recognised format that failed, when the registry knows it."""
        return None if self.error is None else getattr(self.error, "format", None)

    # ------------------------------------------------------------------ labels
    @property
    def chain(self) -> tuple[str, ...]:
        """The layers peeled, outer first: containers and serialization streams (what COMPRESSION
        STATS counts); () when the value is stored as it is."""
        return tuple(layer.label for layer in self.layers if not layer.reading)

    @property
    def reading(self) -> str | None:
        """How the payload under the chain reads: `json`, `text`, a record format's label, `binary`;
        None for a value undecoded (unknown, failed)."""
        kind = self.kind
        if kind == TEXT:
            return JSON_READING if self.tree is not None else TEXT_READING
        if kind == RECORD:
            readings = [layer.label for layer in self.layers if layer.reading]
            if readings:
                return readings[-1]
            # A serialization stream's object: the stream is its reading, a layer of the chain.
            return None if self.stream_format is not None else self.payload_format
        if kind == BINARY:
            return None if self.object_class is not None else BINARY_READING
        return None

    @property
    def label(self) -> str:
        """The value's label: the chain and the reading, `<codec>>json`; '' for a value undecoded."""
        reading = self.reading
        chain = self.chain
        return spell((*chain, reading)) if reading is not None else spell(chain)

    @property
    def short_label(self) -> str:
        """The display's form of the label: the layers it read (`<codec>` for JSON text under a
        container, `text` for a value stored as text, `<codec>><format>` for a record)."""
        return spell([layer.label for layer in self.layers])

    # ------------------------------------------------------------------ sizes
    @property
    def declared_size(self) -> int | None:
        """The payload size a container declares, where the cap cut it (else None)."""
        cut = self.truncated_layer
        return cut.declared_size if cut is not None else None

    @property
    def measured_size(self) -> int:
        """COMPRESSION STATS' size of the payload: the bytes under the chain, or, when the cap cut
        a value of one layer that declares its size, the declared size."""
        cut = self.truncated_layer
        if cut is not None and cut.declared_size and len(self.chain) == 1 and cut is self.layers[0]:
            return cut.declared_size
        return self.payload_size

    # ------------------------------------------------------------------ the payload
    @property
    def tree(self) -> Any:
        """RECORD: the record's tree. TEXT: its JSON object or array (parsed on first use, at most
        once, within the value's budget), None when the text is not one. Else None."""
        kind = self.kind
        if kind == RECORD:
            return self.record
        if kind != TEXT:
            return None
        found = self._json
        if found is _UNREAD:
            from cqlsh_ext.payload import budget
            from cqlsh_ext.payload.json_text import json_container

            # Parsed within the budget the value was decoded under, whoever reads it and when.
            token = None if self.budget is None else budget.enter(self.budget)
            try:
                found = self._json = json_container(self.text or "")
            finally:
                if token is not None:
                    budget.leave(token)
        return found

    @property
    def json_past_budget(self) -> str | None:
        """TEXT: why its text, which starts like a JSON object or array, is not read as one, when
        the value's budget is why (payload.json_text.past_budget, within the budget the value was
        decoded under: `nested deeper than 512 levels`); None otherwise (it is read, or is no
        JSON). Decided before any parse: no JSON is parsed to ask it."""
        if self.kind != TEXT:
            return None
        from cqlsh_ext.payload import budget
        from cqlsh_ext.payload.json_text import past_budget

        token = None if self.budget is None else budget.enter(self.budget)
        try:
            return past_budget(self.text or "")
        finally:
            if token is not None:
                budget.leave(token)

    def add_layer(self, layer: Layer) -> None:
        self.layers.append(layer)
        if layer.truncated and self.truncated_layer is None:
            self.truncated_layer = layer
        if layer.unverified is not None and self.unverified_layer is None:
            self.unverified_layer = layer

    def __reduce__(self) -> tuple[type[bytes], tuple[bytes]]:
        """A view crosses a process boundary (worker processes, Spark tasks) as its stored bytes,
        decoded again where it lands: pickling the view costs more than decoding it (its tree is
        many objects; measured in docs/performance.md)."""
        return bytes, (self.stored,)

    def __repr__(self) -> str:
        return (f"BlobView({self.kind}, {self.short_label or '-'}, stored={self.stored_size}, "
                f"cut={self.cut}, reason={self.reason!r})")


#: What a view's reading is, as it crosses whole (LandedView): every field but its engine's budget,
#: its layers (crossed without their formats' objects and INSPECT's traces; add_layer notes the
#: first cut and the first unverified layer again where it lands) and its JSON tree.
_CROSSED = tuple(name for name in BlobView.__slots__ if name not in (
    "_json", "budget", "layers", "error", "truncated_layer", "unverified_layer"))


class LandedView(BlobView):
    """A view that crosses a process boundary with its reading (its kind, layers' labels and sizes,
    text, record or JSON tree where read) rather than as its stored bytes: what a Spark task sends
    its driver of a blob an answer gives whole (`crossing`), so that the driver never decodes it
    again. Its layers' formats are found again by their labels where it lands."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        layers = [(layer.label, layer.input_size, layer.output_size, layer.truncated, layer.declared_size,
                   layer.fmt is not None, layer.reading, layer.unverified) for layer in self.layers]
        fields = {name: getattr(self, name) for name in _CROSSED}
        tree = self._json if self.kind == TEXT else _UNREAD
        return _landed, (fields, layers, None if tree is _UNREAD else (tree,))


def _landed(fields: dict[str, Any], layers: list[tuple[Any, ...]], tree: tuple[Any] | None) -> LandedView:
    from cqlsh_ext.codecs.registry import by_label

    view = LandedView(fields["stored"], fields["kind"])
    for name, value in fields.items():
        setattr(view, name, value)
    for label, size_in, size_out, truncated, declared, has_format, reading, unverified in layers:
        fmt = by_label(label) if has_format else None
        # (add_layer notes the first cut and the first unverified layer again)
        view.add_layer(Layer(label, size_in, size_out, truncated, declared, fmt, reading=reading,
                             unverified=unverified))
    if tree is not None:
        view._json = tree[0]
    return view


def crossing(value: Any) -> Any:
    """`value` as it should cross to another process: a view of a reading (not a failed one, whose
    error is the walk's) as a LandedView, which pickles whole; anything else as it is."""
    if not isinstance(value, BlobView) or isinstance(value, LandedView) or value.kind == FAILED:
        return value
    landed = LandedView(value.stored, value.kind)
    for name in _CROSSED:
        setattr(landed, name, getattr(value, name))
    if value.kind == RECORD:
        landed.record = value.record  # (a held view's record: the core's tree, made Python objects)
    for layer in value.layers:
        landed.add_layer(layer)
    if value.kind == TEXT:  # its JSON tree where read (an engine's held reading: the reading's tree)
        landed._json = value._json if type(value) is BlobView else value.tree
    return landed


__all__ = [
    "BINARY", "CONFIDENCES", "CONFIDENT", "FAILED", "GUESSED", "KINDS", "KIND_TITLES", "LIKELY", "PEELED",
    "RECORD", "TEXT", "UNDECODABLE",
    "UNDECODABLE_KINDS", "UNKNOWN", "BlobView", "LandedView", "Layer", "crossing", "spell",
]
