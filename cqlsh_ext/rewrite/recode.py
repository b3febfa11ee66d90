"""One stored value re-encoded for COMPRESSION REWRITE: its payload (the bytes under its compression
layers: JSON text byte for byte, a MessagePack or CBOR record as it was, a serialization stream's
bytes) written again in the target chain by encode()'s writers, and verified by decoding the new
value and comparing the payload byte for byte before anything is sent (encode.chain). A value
that does not decode, in no known format, cut by the output cap, already in the target chain (and
dictionary: zstd and gzip frames do not record their level), holding bytes besides its frames
(which a rewrite would drop) or whose reading is not verified (edit.rewrite.unverified_reading: a
frame read with a dictionary and no checksum, a container without a signature, neither proved by
writing the payload again in its own chain) is not rewritten, and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.errors import QueryError

if TYPE_CHECKING:
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import BlobView

#: REWRITE's own word for the payload stored as it is, uncompressed (no encode() chain says it).
NONE = "none"


@dataclass(frozen=True)
class RewriteTarget:
    """The chain asked for (SPEC): its encode() chain, and per step the container label it writes
    and the dictionary it names; `labels` is () for NONE."""

    text: str
    chain: str
    labels: tuple[str, ...]
    dictionaries: tuple[int | None, ...]

    @property
    def shown(self) -> str:
        """The chain as a value's label says it (no level: frames do not record it), with its
        dictionary: what 'already in the target' means."""
        if not self.labels:
            return "stored uncompressed"
        dictionary = self.dictionaries[0] if self.dictionaries else None
        if dictionary is None:
            return ">".join(self.labels)
        from cqlsh_ext.codecs import dictionaries

        return ">".join(self.labels) + f" with dictionary {dictionaries.spelled(self.labels[0], dictionary)}"


def target_of(text: str, cap: int) -> RewriteTarget:
    """The SPEC of a rewrite, checked by writing a probe with it (a level out of range, a
    dictionary the store lacks, a container this shell only reads: said now, before anything is
    read). QueryError."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import CODEC_NAMES
    from cqlsh_ext.codecs.capabilities import Writer
    from cqlsh_ext.common.text import unknown
    from cqlsh_ext.encode.chain import EncodeRefused, encode
    from cqlsh_ext.payload.spec import SpecError, parse_spec

    spec_text = text.strip()
    if spec_text.lower() == NONE:
        return RewriteTarget(NONE, "", (), ())
    try:
        spec = parse_spec(spec_text)
    except SpecError as err:  # a word that is no step: said among the compressions written here
        written = tuple(codec for codec in CODEC_NAMES if isinstance(registry.written_by(codec), Writer))
        said = unknown("compression", err.word, (*written, NONE)) if err.word else str(err)
        raise QueryError(f"AS '{spec_text}': {said}") from None
    if spec.payload is not None or not spec.codecs:
        raise QueryError(f"AS '{spec_text}': a rewrite names compression layers only ('zstd', 'zstd:3', "
                         "'zstd:dict=ID', 'gzip:6', ...) or 'none': the payload is kept as it is")
    labels = []
    for i, codec in enumerate(spec.codecs):
        variant = spec.variants[i] if spec.variants else None
        fmt = registry.by_label(variant) if variant else registry.written_by(codec)
        if fmt is None:
            raise QueryError(f"AS '{spec_text}': {codec} has no container this shell writes")
        labels.append(fmt.label)
    try:
        encode(str(spec), _PROBE, 1 << 20)
    except EncodeRefused as err:
        raise QueryError(f"AS '{spec_text}': {err}") from None
    dicts = tuple(spec.dictionaries) if spec.dictionaries else (None,) * len(labels)
    return RewriteTarget(spec_text, str(spec), tuple(labels), dicts)


_PROBE = b'{"probe": "COMPRESSION REWRITE checks that its target chain is written here"}' * 4


@dataclass(frozen=True)
class Recoded:
    """The new stored bytes and the payload's size."""

    value: bytes
    payload_size: int
    #: The value engine reads the new value as it read the old one (False: a chain auto mode
    #: cannot tell from noise, which needs a DECODE setting to be shown).
    readable: bool = True


#: What `recode` answers for a value already in the target chain.
ALREADY = "already"


def recode(stored: bytes, view: BlobView, engine: ValueEngine, target: RewriteTarget,
           cap: int) -> Recoded | str:
    """`stored` (read by `engine` as `view`) in the target chain; ALREADY, or why it is not rewritten."""
    from cqlsh_ext.encode.chain import EncodeRefused, encode
    from cqlsh_ext.payload.view import FAILED, UNKNOWN

    cut = view.truncated_layer
    if cut is not None:
        return f"cut at the output cap ({cut.label}): raise --max-output-size to rewrite it"
    if view.kind == FAILED:
        return f"it does not decode ({view.reason})" if view.reason else "it does not decode"
    layers = _compression_layers(view)
    if not layers and view.kind == UNKNOWN:
        return "no known format (nothing says what it holds: a DECODE setting names its chain)"
    if tuple(fmt.label for fmt in layers) == target.labels and dictionary_of(layers, stored) == \
            (target.dictionaries[0] if target.dictionaries else None):
        return ALREADY
    if layers:
        from cqlsh_ext.writing.beside import beside

        extra = beside(view, stored, cap)
        if extra.refused:
            return extra.refused
        if extra.what:
            return f"it holds {extra.what}: a rewrite would drop them"
    payload = _payload(view, stored, layers, cap)
    if isinstance(payload, str):
        return payload
    if layers:  # only a payload the reading vouches for is written again (no bytes beside: refused above)
        from cqlsh_ext.edit.rewrite import unverified_reading

        unverified = unverified_reading(view, stored, payload, cap)
        if unverified is not None:
            return unverified
    try:
        encoded = encode(target.chain, payload, cap) if target.labels else None
    except EncodeRefused as err:
        return f"not written as {target.text}: {err}"
    value = encoded.value if encoded is not None else payload
    after = engine.view(value)
    readable = after.kind not in (UNKNOWN, FAILED) and not after.cut
    if readable and _compression_layers(after) and after.data != payload:
        return "the new value reads back as another payload here: not written"
    return Recoded(value, len(payload), readable)


def _compression_layers(view: BlobView) -> list[Any]:
    """The value's compression containers, outer first, up to a serialization stream or the payload."""
    out = []
    for layer in view.layers:
        if layer.reading or layer.fmt is None:
            break
        out.append(layer.fmt)
    return out


def dictionary_of(layers: Sequence[Any], stored: bytes) -> int | None:
    """The dictionary the outer container names (zstd's ID, zlib's DICTID), None for none."""
    from cqlsh_ext.codecs.capabilities import writes_dictionaries

    if not layers or not writes_dictionaries(layers[0]):
        return None
    found = layers[0].dictionary_named(stored)
    return None if found is None else int(found)


def _payload(view: BlobView, stored: bytes, layers: list[Any], cap: int) -> bytes | str:
    """The bytes under the compression layers: the view's payload, or, when a serialization stream
    follows them (whose reading the view went on into), the layers decoded again one by one."""
    if not layers:
        return stored
    if all(layer.fmt is not None or layer.reading for layer in view.layers):
        return view.data
    data = stored
    for fmt in layers:
        try:
            decoded = fmt.decode(data, cap)
        except Exception as err:  # it decoded for the view: only a memory limit could differ
            return f"it does not decode ({fmt.label}: {err})"
        if decoded.truncated:
            return f"cut at the output cap ({fmt.label}): raise --max-output-size to rewrite it"
        data = decoded.data
    return data
