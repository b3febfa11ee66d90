"""BSON (MongoDB drivers, org.mongodb:bson), decoded with pymongo's `bson` package.

PyPI's package named `bson` is an unrelated project; pymongo ships the real one. Detected when the
int32 length at the start equals the value's length, the value ends with 00 and the decoder
accepts all of it. Types JSON lacks are shown tagged: ObjectId, Decimal128, binary subtypes,
timestamps.
"""

from __future__ import annotations

import struct
from typing import Any

from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import PayloadError, Tagged

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 40, "listed": 30}


def _maybe(data: bytes) -> bool:
    return len(data) >= 5 and data[-1] == 0 and struct.unpack_from("<i", data)[0] == len(data)


def _plain(value: Any) -> Any:
    import bson

    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bson.ObjectId):
        return Tagged("ObjectId", str(value))
    if isinstance(value, bson.Decimal128):
        return Tagged("Decimal128", str(value))
    if isinstance(value, bson.Binary) and value.subtype != 0:
        return Tagged(f"Binary{value.subtype}", bytes(value))
    if isinstance(value, bson.Timestamp):
        return Tagged("Timestamp", [value.time, value.inc])
    # The parts of a reference, a pattern or code as a tree, never as the library's repr: text
    # is built from a record's parts only by the renderer, within the value's budget.
    if isinstance(value, bson.DBRef):  # as stored: $ref, $id, $db and any other fields
        return Tagged("DBRef", _plain(dict(value.as_doc())))
    if isinstance(value, bson.Regex):
        return Tagged("Regex", {"pattern": value.pattern, "flags": value.flags})
    if isinstance(value, bson.Code):
        code = str(value)  # Code is a str: the code's own text
        return Tagged("Code", code if value.scope is None else {"code": code, "scope": _plain(value.scope)})
    if isinstance(value, (bson.MinKey, bson.MaxKey)):
        return Tagged(type(value).__name__, None)
    return value


def decode(data: bytes) -> Any:
    if not _maybe(data):
        raise PayloadError("bson: the length at the start is not the value's length")
    import bson
    from bson.codec_options import CodecOptions

    try:
        # tz_aware: datetimes in UTC, never the machine's zone; no custom types, no DBRef lookups.
        value: dict[str, Any] = bson.decode(data, CodecOptions(tz_aware=True))
    except (bson.errors.InvalidBSON, ValueError, OverflowError, RecursionError) as err:
        raise PayloadError(f"bson: {str(err).splitlines()[0][:100] or type(err).__name__}") from None
    return _plain(value)


def encode(record: Any) -> bytes:
    """The record as pymongo's bson.encode writes it: a document (a JSON object) at the top."""
    import bson

    if not isinstance(record, dict):
        raise PayloadError("bson holds a document: the JSON must be an object")
    try:
        return bytes(bson.encode(record))
    except (TypeError, ValueError, OverflowError, bson.errors.InvalidDocument) as err:
        raise PayloadError(f"bson cannot hold this value ({err})") from None


FORMAT = PayloadFormat("bson", True, _maybe, decode, nodes_within_input=True, encode=encode,
                       writer="pymongo's bson.encode",
                       confidence="likely",
                       confidence_why="its length field is the value's length and the element walk "
                                      "ends exactly")
