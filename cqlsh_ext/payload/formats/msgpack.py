"""MessagePack (msgpack, msgpack-java, the Redis and Fluentd ecosystems).

No signature: detected only when the whole value unpacks exactly and its top level is a map or
an array (random bytes and text rarely do both). Library traps handled here: msgpack-java writes
integer map keys, which the Python library refuses unless `strict_map_key=False`; declared
lengths are bounded by the value's own size (max_*_len), so a header claiming 4 GB allocates
nothing.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import PayloadError, Tagged

_MAP_OR_ARRAY = frozenset(range(0x80, 0xA0)) | {0xDC, 0xDD, 0xDE, 0xDF}


def _maybe(data: bytes) -> bool:
    return len(data) >= 2 and data[0] in _MAP_OR_ARRAY


def _ext(code: int, data: bytes) -> Any:
    return Tagged(f"ext{code}", data)


def decode(data: bytes) -> Any:
    import msgpack

    n = len(data)
    try:
        # timestamp=3: the timestamp extension as an aware datetime in UTC.
        value = msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=_ext, use_list=True,
                                timestamp=3, max_bin_len=n, max_str_len=n, max_array_len=n,
                                max_map_len=n // 2, max_ext_len=n)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, UnicodeDecodeError,
            TypeError) as err:
        raise PayloadError(f"msgpack: {type(err).__name__}") from None
    if not isinstance(value, (dict, list)) or not value:
        raise PayloadError("msgpack: not a map or an array")
    return value


def plausible(value: Any, depth: int = 0) -> bool:
    """What real records look like, for detection without a signature: map keys are strings or
    integers, no extension types, and somewhere a string or a nested container (random bytes
    that happen to parse give short arrays of small numbers, or odd keys)."""
    found_rich = False

    def walk(node: Any, level: int) -> bool:
        nonlocal found_rich
        if level > 32:
            return False
        if isinstance(node, Tagged):
            return False
        if isinstance(node, dict):
            if level:
                found_rich = True
            for key, item in node.items():
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    return False
                if isinstance(key, str):
                    found_rich = True
                if not walk(item, level + 1):
                    return False
            return True
        if isinstance(node, list):
            if level:
                found_rich = True
            return all(walk(item, level + 1) for item in node)
        if isinstance(node, str):
            found_rich = True
        return True

    return walk(value, depth) and found_rich


def detect(data: bytes) -> Any:
    value = decode(data)
    if not plausible(value):
        raise PayloadError("msgpack: parses, but does not look like a record")
    return value


FORMAT = PayloadFormat("msgpack", True, _maybe, decode, detector=detect)
