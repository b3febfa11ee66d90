"""Protocol Buffers without a schema, as `protoc --decode_raw` shows them: field numbers and wire
types, with a length-delimited field shown as a nested message when its bytes parse as one, as
text when they are UTF-8 text, else as bytes.

Protobuf has no signature and almost any byte string parses as some message, so it is decoded only
when named (-d or a column setting), never detected.
"""

from __future__ import annotations

import struct
from typing import Any

from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import MAX_DEPTH, MAX_ITEMS, PayloadError, read_varint


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    return read_varint(data, pos, "protobuf")


def _message(data: bytes, depth: int) -> dict[str, list[Any]]:
    if depth > MAX_DEPTH:
        raise PayloadError("protobuf: nested too deep")
    fields: dict[str, list[Any]] = {}
    pos = count = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise PayloadError("protobuf: field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            if pos + 8 > len(data):
                raise PayloadError("protobuf: truncated 64-bit field")
            value = struct.unpack_from("<Q", data, pos)[0]
            pos += 8
        elif wire == 5:
            if pos + 4 > len(data):
                raise PayloadError("protobuf: truncated 32-bit field")
            value = struct.unpack_from("<I", data, pos)[0]
            pos += 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):  # the declared length is checked before anything is read
                raise PayloadError("protobuf: length beyond the value")
            value = _length_delimited(data[pos:pos + size], depth)
            pos += size
        else:
            raise PayloadError(f"protobuf: wire type {wire} (groups are not read)")
        count += 1
        if count > MAX_ITEMS * 10:
            raise PayloadError("protobuf: too many fields")
        fields.setdefault(str(number), []).append(value)
    return fields


def _length_delimited(chunk: bytes, depth: int) -> Any:
    if chunk:
        try:
            return _message(chunk, depth + 1)
        except PayloadError:
            pass
        try:
            text = chunk.decode("utf-8")
            if text.isprintable():
                return text
        except UnicodeDecodeError:
            pass
    return chunk


def decode(data: bytes) -> Any:
    fields = _message(data, 0)
    # One value per field shows as the value, repeated ones as a list: what decode_raw prints.
    return {k: v[0] if len(v) == 1 else v for k, v in fields.items()}


FORMAT = PayloadFormat("protobuf", False, lambda data: True, decode)
