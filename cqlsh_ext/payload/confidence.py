"""How sure a reading is: every decoded value's confidence, one of three words.

    confident   a checksum verified, or a complete structure consumed exactly after a signature
                (a magic number, a header the format's writers always write); or a step the user
                named (-d CODEC, DECODE ... AS, a plugin named in a chain): the user's word, held
                by the decode succeeding
    likely      a structure that parsed with nothing left over but no signature and no checksum
                (a raw snappy block whose declared length is what it decodes to, a whole
                MessagePack or BSON record, JSON stored as it is)
    guessed     a trial that passed weak tests (a stored value read as text by the text rule, a
                plugin's detection, which this shell cannot judge)

A value's confidence is its weakest step's: each step of its label (the containers peeled, a
serialization stream, the reading) has one (docs/formats.md, "How sure", lists every format's);
the steps the user named are confident. Told from the label, the kind and how many leading steps
were named, and one thing more: a layer read with a dictionary and no checksum (a dcz value, a zstd
frame naming a dictionary or read with a raw one; `BlobView.unverified_layer`) is at most likely,
named or not, since a wrong dictionary of the right size reads such a frame into garbage that
nothing tells from the payload. The native core's rows (always auto, never named, and never read
with a dictionary: the core hands those back) get theirs from `confidence_of(label, kind)` through
the same function as the Python engine's views. Values that did not decode (kinds unknown and
failed) have none.
"""

from __future__ import annotations

import functools

from cqlsh_ext.payload.view import BINARY, CONFIDENT, GUESSED, LIKELY, RECORD, SEPARATOR, TEXT, BlobView
from cqlsh_ext.payload.view import CONFIDENCES as LEVELS

_RANK = {level: at for at, level in enumerate(LEVELS)}
#: The readings that are no format: JSON text (a whole document parsed exactly), text and bytes.
JSON_STEP, TEXT_STEP, BINARY_STEP = "json", "text", "binary"
_DECODED = frozenset((TEXT, RECORD, BINARY))


def weakest(levels: list[str]) -> str:
    """The least sure of `levels` (CONFIDENT when there are none)."""
    return min(levels, key=_RANK.__getitem__, default=CONFIDENT)


def container_confidence(label: str) -> tuple[str, str] | None:
    """(confidence, why) of a compression container by its display label; None when no container
    has that label. A container declares its own (Container.confidence); else its grade decides:
    a signature (grade A) means a structure walked to its end after a magic, most with checksums;
    grade B's signature is short, so only a checksum the decode checks (zlib's Adler-32) makes it
    confident; grade C is a trial whose declared sizes matched; grade D is only ever named."""
    from cqlsh_ext.codecs import registry

    fmt = registry.by_label(label)
    if fmt is None:
        return None
    declared: tuple[str, str] | None = fmt.confidence
    if declared is not None:
        return declared
    if fmt.grade == "A":
        return CONFIDENT, f"{label}: signature and a whole structure"
    if fmt.grade == "B":
        from cqlsh_ext.codecs.capabilities import Checksums

        if isinstance(fmt, Checksums):
            return CONFIDENT, f"{label}: header check and a checksum"
        return LIKELY, f"{label}: a short signature and a whole structure"
    if fmt.grade == "C":
        return LIKELY, f"{label}: no signature; the declared sizes matched, nothing left over"
    return GUESSED, f"{label}: no signature, a permissive trial"


def format_confidence(step: str) -> tuple[str, str] | None:
    """(confidence, why) of a payload format's reading or stream by its label step ('msgpack',
    'pickle/4', 'thrift/binary', 'java'); None when no format is named so."""
    from cqlsh_ext.payload import formats

    name = step.partition("/")[0]
    fmt = formats.get(name)
    if fmt is None:
        return None
    return fmt.confidence, f"{step}: {fmt.confidence_why}"


@functools.lru_cache(maxsize=1024)
def explained(label: str, kind: str, named: int = 0) -> tuple[str, str] | None:
    """(confidence, why) of a value by its label, its kind and how many of its label's leading
    steps the user named; None for a value that did not decode. `why` names the weakest step."""
    if kind not in _DECODED or not label:
        return None
    steps = label.split(SEPARATOR)
    found: list[tuple[str, str]] = []
    for at, step in enumerate(steps):
        if at < named:
            found.append((CONFIDENT, f"{step}: named"))
            continue
        if step == BINARY_STEP:
            continue  # bytes under the layers: nothing read, nothing claimed
        if step == JSON_STEP:
            found.append((CONFIDENT, "json: the text a layer decoded to, a whole document") if at else
                         (LIKELY, "json: stored text that parses as a whole document, no signature"))
            continue
        if step == TEXT_STEP:
            found.append((CONFIDENT, "text: the bytes a layer decoded to, valid UTF-8") if at else
                         (GUESSED, "text: stored bytes that pass the text rule"))
            continue
        one = container_confidence(step) or format_confidence(step)
        found.append(one if one is not None else (GUESSED, f"{step}: not a format known here"))
    if not found:
        return CONFIDENT, "named"
    least = weakest([level for level, _ in found])
    return least, next(why for level, why in found if level == least)


def confidence_of(label: str | None, kind: str | None, named: int = 0) -> str | None:
    """The confidence of a value by its label and kind (a native core's row: auto, nothing named)."""
    if label is None or kind is None:
        return None
    found = explained(label, kind, named)
    return None if found is None else found[0]


def view_confidence(view: BlobView) -> str | None:
    """The confidence of a decoded value's view; None for one that did not decode."""
    if view.unverified_layer is None:
        return confidence_of(view.label, view.kind, view.named)
    found = view_explained(view)
    return None if found is None else found[0]


def view_explained(view: BlobView) -> tuple[str, str] | None:
    """(confidence, why) of a view (INSPECT): its label's, and at most likely when a layer was read
    with a dictionary and no checksum."""
    return _at_most_likely(explained(view.label, view.kind, view.named) if view.label else None, view)


def containers_explained(view: BlobView) -> tuple[str, str] | None:
    """(confidence, why) of a view's compression containers alone, outer first up to a
    serialization stream or the payload's reading (the layers COMPRESSION REWRITE replaces, the
    payload under them carried as it is); None when it has none."""
    steps: list[str] = []
    for layer in view.layers:
        if layer.reading or layer.fmt is None:
            break
        steps.append(layer.label)
    if not steps:
        return None
    return _at_most_likely(explained(SEPARATOR.join(steps), BINARY, min(view.named, len(steps))), view)


def _at_most_likely(found: tuple[str, str] | None, view: BlobView) -> tuple[str, str] | None:
    """`found`, likely at most when one of the view's layers was read with a dictionary and no
    checksum (BlobView.unverified_layer), saying so."""
    layer = view.unverified_layer
    if found is None or layer is None or found[0] != CONFIDENT:
        return found
    return LIKELY, f"{layer.label}: {layer.unverified}"


__all__ = ["CONFIDENT", "GUESSED", "LEVELS", "LIKELY", "confidence_of", "container_confidence",
           "containers_explained", "explained", "format_confidence", "view_confidence", "view_explained",
           "weakest"]
