"""Peel one stored value down to its payload: the chain of layers, sizes, and why a value stays raw.

The walk follows cqlsh_ext.payload.unwrap (same detection, depth limit and cumulative cap, so a
chain here is the label the display shows) but keeps bytes instead of text: STATS needs only sizes
and must be cheap per value, ADVISE needs the payload bytes, INSPECT needs every layer's input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Decoded, DecodeError, Format
from cqlsh_ext.payload import javaser
from cqlsh_ext.payload.unwrap import MAX_DEPTH, NOT_DETECTED

COMPRESSED, PLAIN, UNDECODABLE = "compressed", "not compressed", "not decodable"
JAVA = "java"


@dataclass(slots=True)
class Step:
    """One decoded layer (INSPECT): the format (None for Java serialization) and its input/output."""

    fmt: Format | None
    label: str
    data_in: bytes
    decoded: Decoded


@dataclass(slots=True)
class Peeled:
    stored: int
    status: str
    #: Layer labels joined by '>' ('snappy', 'gzip>java'); '' when nothing was recognised.
    chain: str
    #: The bytes under the last compression layer (a Java stream stays serialized); the stored bytes
    #: when nothing was decoded.
    payload: bytes
    #: Payload size; when the cap cut the output, the size the container declares (if it does).
    size: int
    #: False when the cap cut the output: `size` is then a declared or a lower bound.
    exact: bool = True
    reason: str | None = None
    #: The recognised format whose decode failed (status UNDECODABLE), for its header fields.
    failed: Format | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def codec(self) -> str:
        """Codec family of the outer layer ('snappy', 'gzip'), or the status for raw values."""
        if self.status != COMPRESSED:
            return self.status
        return self.chain.split(">", 1)[0].split("/", 1)[0]

    @property
    def ratio(self) -> float:
        return self.size / self.stored if self.stored else 1.0


def effective_mode(mode: str) -> str:
    """The shell's DECOMPRESS mode for measuring: 'none' (display off) still measures with auto."""
    return "auto" if mode in ("none", "off") else mode


#: Format label per format object: Format.label is a property, and quick() runs once per value.
_LABELS: dict[int, str] = {}


def quick(value: bytes, mode: str = "auto", cap: int = DEFAULT_CAP) -> tuple[str, str, int, bool, str | None]:
    """(status, chain, size, exact, reason) of peel(), for COMPRESSION STATS' per-value hot path.

    The common case (one layer, decoded whole, nothing recognisable inside) is answered here without
    building a Peeled; everything else is peel()'s, so both always agree.
    """
    if mode == "auto" and len(value) >= registry.MIN_AUTO_LENGTH:
        try:
            found = registry.decode_auto(value, cap)
        except DecodeError as err:
            return UNDECODABLE, "", len(value), True, str(err)
        if found is None:
            if not value.startswith(javaser.MAGIC):
                return PLAIN, "", len(value), True, NOT_DETECTED
        else:
            fmt, decoded = found
            data = decoded.data
            if (
                not decoded.truncated
                and data[:1] != b"\xac"
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


def peel(value: bytes, mode: str = "auto", cap: int = DEFAULT_CAP, trace: bool = False) -> Peeled:
    """Decode `value` as the display would and measure it. Never raises for bad data."""
    stored = len(value)
    if mode == "auto":
        if stored < registry.MIN_AUTO_LENGTH:
            return Peeled(stored, PLAIN, "", value, stored, reason="too short to detect" if stored else None)
        try:
            found = registry.decode_auto(value, cap)
        except DecodeError as err:
            return Peeled(stored, UNDECODABLE, "", value, stored, reason=str(err), failed=err.format)
        if found is None:
            if value.startswith(javaser.MAGIC) and _java_ok(value):
                return Peeled(stored, PLAIN, JAVA, value, stored)
            return Peeled(stored, PLAIN, "", value, stored, reason=NOT_DETECTED)
    else:
        try:
            found = registry.decode_named(mode, value, cap)
        except DecodeError as err:
            text = str(err)
            return Peeled(
                stored,
                UNDECODABLE,
                "",
                value,
                stored,
                reason=text if mode in text else f"{mode}: {text}",
                failed=err.format,
            )
    fmt, decoded = found
    labels = [fmt.label]
    steps = [Step(fmt, fmt.label, value, decoded)] if trace else []
    data = decoded.data
    budget = cap - len(data)
    cut: Decoded | None = decoded if decoded.truncated else None
    reason = None
    depth = 1
    while depth < MAX_DEPTH:
        if data.startswith(javaser.MAGIC):
            if _java_ok(data):
                labels.append(JAVA)
            else:
                reason = "java serialization: not a well-formed stream"
            break
        if len(data) < registry.MIN_AUTO_LENGTH:
            break
        # Inside a payload only signature formats count (as in unwrap): a trial decode of text as
        # a signature-less format could invent a layer.
        inner = registry.detect(data, signatures_only=True)
        if inner is None or inner.grade not in ("A", "B"):
            break
        if budget <= 0:
            reason = f"inner {inner.label} layer not decoded: output cap reached"
            break
        try:
            dec = inner.decode(data, budget)
        except DecodeError as err:
            reason = f"inner {inner.label}: {err}"
            break
        labels.append(inner.label)
        if trace:
            steps.append(Step(inner, inner.label, data, dec))
        if dec.truncated and cut is None:
            cut = dec
        data, budget, depth = dec.data, budget - len(dec.data), depth + 1
    size, exact = len(data), True
    if cut is not None:
        exact = False
        if cut is decoded and len(labels) == 1 and decoded.declared_size:
            size = decoded.declared_size  # the outer container says how big the whole payload is
    return Peeled(stored, COMPRESSED, ">".join(labels), data, size, exact, reason, steps=steps)


def _java_ok(data: bytes) -> bool:
    try:
        javaser.read_first_content(data)
    except javaser.JavaStreamError:
        return False
    return True
