"""CBOR (cbor2, Jackson's jackson-dataformat-cbor, COSE/IoT).

Detected by the self-describe tag (D9 D9 F7) and, without it, only when the whole value decodes
exactly with a map or an array at the top. Library traps handled here: cbor2 builds shared
(possibly cyclic) objects from tags 28/29 and compiles regular expressions for tag 35; those and
the other semantic tags with side effects are decoded as plain tagged values instead. Nesting is
capped (max_depth) and indefinite-length items are accepted only within the value's own bytes.
"""

from __future__ import annotations

import io
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError, Tagged, decimal_text, plausible_record

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 60, "listed": 20, "binary_kind": ("CBOR (self-described)", b"\xd9\xd9\xf7")}

SELF_DESCRIBE = b"\xd9\xd9\xf7"
#: Tags whose built-in decoding shares objects (28, 29: cycles), compiles or parses text (35
#: regex, 36 MIME, 32 URI, 37 UUID is harmless but kept plain for symmetry), reads sets and
#: ipaddresses, or computes with decimal and fractions (5 bigfloat and 30 rational: rounded to 28
#: digits, or past 4,300 digits not writable at all): shown as tagged values.
_PLAIN_TAGS = (5, 28, 29, 30, 32, 35, 36, 37, 258, 260, 261)
# Major types 4 (array) and 5 (map), definite and indefinite length.
_MAP_OR_ARRAY = frozenset(range(0x80, 0xC0))


def _maybe(data: bytes) -> bool:
    return data.startswith(SELF_DESCRIBE) or (len(data) >= 8 and data[0] in _MAP_OR_ARRAY)


#: Tagged values made so far (by the two hooks below): cbor2 decodes a tag's item as it decodes
#: map keys, into frozendicts and tuples, which decode() thaws; a value without one needs no thaw.
_TAGGED = [0]


def _plain(tag: int) -> Any:
    def plain(value: Any, immutable: bool) -> Tagged:
        _TAGGED[0] += 1
        return Tagged(f"tag{tag}", value)

    return plain


def _decimal_fraction(value: Any, immutable: bool) -> Any:
    """Tag 4, [exponent, mantissa]: the number exactly, as text (cbor2 builds a decimal.Decimal,
    in time quadratic in the mantissa's digits, and rounds it to 28 of them)."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(type(v) is int for v in value):
        return decimal_text(value[1], value[0])
    return Tagged("tag4", value)


_SEMANTIC = {t: _plain(t) for t in _PLAIN_TAGS} | {4: _decimal_fraction}


def _unknown_tag(tag: Any, immutable: bool) -> Any:
    # cbor2 6 calls tag hooks with (tag, immutable), semantic decoders with (value, immutable).
    _TAGGED[0] += 1
    return Tagged(f"tag{tag.tag}", tag.value)


def count_within(data: bytes, limit: int) -> bool:
    """Whether `data` holds at most `limit` CBOR items, read from the item heads without building
    anything (cbor2 builds a whole value in C with no node limit). Malformed input answers True:
    cbor2 then says why."""
    pos, end, nodes = 0, len(data), 0
    pending = [1]  # items left per open container; -1: indefinite, until a break (0xff)
    while pending and pos < end:
        head = data[pos]
        pos += 1
        if head == 0xFF:
            if pending[-1] == -1:
                pending.pop()
            continue
        major, info = head >> 5, head & 0x1F
        if major != 6:  # a tag is one node with its item (string references, shared values)
            nodes += 1
            if nodes > limit:
                return False
        if info < 24:
            arg = info
        elif info <= 27:
            size = 1 << (info - 24)
            arg = int.from_bytes(data[pos:pos + size], "big")
            pos += size
        elif info == 31:
            arg = -1
        else:
            return True
        if pending[-1] > 0:
            pending[-1] -= 1
            if pending[-1] == 0:
                pending.pop()
        if major in (2, 3):
            if arg >= 0:
                pos += arg
            else:
                pending.append(-1)  # chunks until a break
        elif major == 4:
            if arg != 0:
                pending.append(arg)
        elif major == 5:
            if arg != 0:
                pending.append(2 * arg if arg > 0 else -1)
        elif major == 6:
            pending.append(1)  # the tagged item
    return True


def decode(data: bytes) -> Any:
    import cbor2

    body = data[len(SELF_DESCRIBE):] if data.startswith(SELF_DESCRIBE) else data
    limits = budget.current()
    if len(body) > limits.nodes and not count_within(body, limits.nodes):
        raise OverBudget(f"cbor: {limits.nodes_reason}")
    tagged = _TAGGED[0]
    try:
        stream = io.BytesIO(body)
        decoder = cbor2.CBORDecoder(stream, tag_hook=_unknown_tag, max_depth=limits.depth,
                                    semantic_decoders=_SEMANTIC)
        value = decoder.decode()
        if stream.tell() != len(body):
            raise PayloadError("cbor: bytes after the value")
    except PayloadError:
        raise
    except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError, MemoryError) as err:
        raise PayloadError(f"cbor: {type(err).__name__}") from None
    if not data.startswith(SELF_DESCRIBE) and not isinstance(value, (dict, list)):
        raise PayloadError("cbor: not a map or an array")
    # Only a tag's item holds frozendicts and tuples outside map keys (which stay as they are):
    # with no tag met, the thaw would copy the value unchanged.
    return value if _TAGGED[0] == tagged else _thaw(value)


def _thaw(value: Any) -> Any:
    """cbor2 returns frozendicts and tuples for keys and tags' items; plain containers render the
    same. Map keys stay as they are (a key must stay hashable)."""
    if isinstance(value, dict) or type(value).__name__ == "frozendict":
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    if isinstance(value, Tagged):
        return Tagged(value.tag, _thaw(value.value))
    return value


def detect(data: bytes) -> Any:
    value = decode(data)
    if not data.startswith(SELF_DESCRIBE):
        if not plausible_record(value):
            raise PayloadError("cbor: parses, but does not look like a record")
    return value


def encode(record: Any) -> bytes:
    """The record as cbor2's dumps writes it (floats as float64, big integers as bignum tags)."""
    import cbor2

    try:
        return bytes(cbor2.dumps(record))
    except (TypeError, ValueError, OverflowError, cbor2.CBOREncodeError) as err:
        raise PayloadError(f"cbor cannot hold this value ({err})") from None


FORMAT = PayloadFormat("cbor", True, _maybe, decode, detector=detect, encode=encode, writer="cbor2 dumps",
                       leads=bytes(sorted(_MAP_OR_ARRAY | {SELF_DESCRIBE[0]})),
                       confidence="likely",
                       confidence_why="a whole item parsed exactly, no checksum")
