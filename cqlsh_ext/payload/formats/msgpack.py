"""MessagePack (msgpack, msgpack-java, the Redis and Fluentd ecosystems).

No signature: detected only when the whole value unpacks exactly and its top level is a map or
an array (random bytes and text rarely do both). Library traps handled here: msgpack-java writes
integer map keys, which the Python library refuses unless `strict_map_key=False`; declared
lengths are bounded by the value's own size (max_*_len), so a header claiming 4 GB allocates
nothing.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError, Tagged, pairs_kept, plausible_record

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 50, "listed": 10, "example": 1, "title": "MessagePack"}

_MAP_OR_ARRAY = frozenset(range(0x80, 0xA0)) | {0xDC, 0xDD, 0xDE, 0xDF}


#: Shorter values are never taken for MessagePack (nor another record format without a signature)
#: without being named.
MIN_LENGTH = 8


def _maybe(data: bytes) -> bool:
    return len(data) >= MIN_LENGTH and data[0] in _MAP_OR_ARRAY


def _ext(code: int, data: bytes) -> Any:
    return Tagged(f"ext{code}", data)


def count_within(data: bytes, limit: int) -> bool:
    """Whether `data` holds at most `limit` values (containers, keys, scalars), read from the
    headers without building anything. msgpack's unpacker builds a whole value in C and takes no
    node limit: a value of 4 MiB of one-byte maps would be four million dicts (300 MB). Values of
    at most `limit` bytes need no count (a value takes at least one byte)."""
    import msgpack

    unpacker = msgpack.Unpacker(raw=True, strict_map_key=False, max_buffer_size=len(data) + 1)
    unpacker.feed(data)
    pending = 1
    nodes = 0
    try:
        while pending:
            pending -= 1
            nodes += 1
            if nodes > limit:
                return False
            head = data[unpacker.tell()]
            if 0x90 <= head <= 0x9F or head in (0xDC, 0xDD):
                pending += unpacker.read_array_header()
            elif 0x80 <= head <= 0x8F or head in (0xDE, 0xDF):
                pending += 2 * unpacker.read_map_header()
            else:
                unpacker.skip()
    except (ValueError, IndexError, msgpack.OutOfData, msgpack.FormatError, msgpack.StackError):
        return True  # not well-formed: unpackb says why
    return True


def decode(data: bytes) -> Any:
    import msgpack

    n = len(data)
    limits = budget.current()
    if n > limits.nodes and not count_within(data, limits.nodes):
        raise OverBudget(f"msgpack: {limits.nodes_reason}")
    try:
        # timestamp=3: the timestamp extension as an aware datetime in UTC.
        # object_pairs_hook: 1, 1.0 and true are three keys of a map here, one key of a dict
        value = msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=_ext, use_list=True,
                                object_pairs_hook=pairs_kept, timestamp=3, max_bin_len=n, max_str_len=n,
                                max_array_len=n, max_map_len=n // 2, max_ext_len=n)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, UnicodeDecodeError,
            TypeError) as err:
        raise PayloadError(f"msgpack: {type(err).__name__}") from None
    if not isinstance(value, (dict, list)) or not value:
        raise PayloadError("msgpack: not a map or an array")
    return value


def detect(data: bytes) -> Any:
    value = decode(data)
    if not plausible_record(value):
        raise PayloadError("msgpack: parses, but does not look like a record")
    return value


def encode(record: Any) -> bytes:
    """The record as msgpack's packb writes it (floats as float64, str as str8/16/32)."""
    import msgpack

    try:
        return bytes(msgpack.packb(record))
    except (TypeError, ValueError, OverflowError) as err:
        raise PayloadError(f"msgpack cannot hold this value ({err})") from None


FORMAT = PayloadFormat("msgpack", True, _maybe, decode, detector=detect, nodes_within_input=True,
                       leads=bytes(sorted(_MAP_OR_ARRAY)),
                       encode=encode, writer="msgpack packb",
                       confidence="likely",
                       confidence_why="a whole record unpacked exactly, no signature, no checksum")
