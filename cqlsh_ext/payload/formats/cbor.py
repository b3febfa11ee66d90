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
from cqlsh_ext.payload.formats.tree import PayloadError, Tagged

SELF_DESCRIBE = b"\xd9\xd9\xf7"
#: Tags whose built-in decoding shares objects (28, 29: cycles), compiles or parses text (35
#: regex, 36 MIME, 32 URI, 37 UUID is harmless but kept plain for symmetry), or reads sets and
#: ipaddresses: shown as tagged values.
_PLAIN_TAGS = (28, 29, 32, 35, 36, 37, 258, 260, 261)
# Major types 4 (array) and 5 (map), definite and indefinite length.
_MAP_OR_ARRAY = frozenset(range(0x80, 0xC0))


def _maybe(data: bytes) -> bool:
    return data.startswith(SELF_DESCRIBE) or (len(data) >= 8 and data[0] in _MAP_OR_ARRAY)


def _plain(tag: int) -> Any:
    return lambda value, immutable: Tagged(f"tag{tag}", value)


_SEMANTIC = {t: _plain(t) for t in _PLAIN_TAGS}


def _unknown_tag(tag: Any, immutable: bool) -> Any:
    # cbor2 6 calls tag hooks with (tag, immutable), semantic decoders with (value, immutable).
    return Tagged(f"tag{tag.tag}", tag.value)


def decode(data: bytes) -> Any:
    import cbor2

    body = data[len(SELF_DESCRIBE):] if data.startswith(SELF_DESCRIBE) else data
    try:
        stream = io.BytesIO(body)
        decoder = cbor2.CBORDecoder(stream, tag_hook=_unknown_tag, max_depth=budget.current().depth,
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
    return _thaw(value)


def _thaw(value: Any) -> Any:
    """cbor2 returns frozendicts and tuples for keys; plain containers render the same."""
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
        from cqlsh_ext.payload.formats.msgpack import plausible

        if not plausible(value):
            raise PayloadError("cbor: parses, but does not look like a record")
    return value


FORMAT = PayloadFormat("cbor", True, _maybe, decode, detector=detect)
