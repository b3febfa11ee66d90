"""Java serialization streams: a layer of the decoding walk, and a reading a column setting can
name (`<codec>>java`).

Auto-detection does not go through FORMAT's decoder: the declared stream magic makes a stream a
layer of the decoding walk (payload.unwrap), the last one, which asks FORMAT.stream what the
stream holds (java.first: the first item, cheaply) and reads the whole of it with java.stream
(loaded on first use). Naming the reading only adds a clear reason when a column's values are
not streams.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.payload.formats import PayloadFormat, StreamLayer
from cqlsh_ext.payload.formats.java import first
from cqlsh_ext.payload.formats.tree import PayloadError

#: Read without importing this module (codecs.base.read_declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, the magic that makes it a layer of the walk (payload.unwrap; first.MAGIC), and how
#: prose names it.
DECLARES = {"detection": 80, "listed": 80, "stream": b"\xac\xed\x00\x05", "title": "Java"}

#: The stream's first type code, as INSPECT names it.
_TYPE_CODES = {
    0x74: "TC_STRING",
    0x7C: "TC_LONGSTRING",
    0x73: "TC_OBJECT",
    0x75: "TC_ARRAY",
    0x7E: "TC_ENUM",
    0x70: "TC_NULL",
    0x77: "TC_BLOCKDATA",
    0x7A: "TC_BLOCKDATALONG",
}


def _maybe(data: bytes) -> bool:
    return data.startswith(first.MAGIC)


def decode(data: bytes) -> Any:
    if not _maybe(data):
        raise PayloadError("java: no serialization stream magic (0xaced0005)")
    try:
        return _read(data)
    except PayloadError as err:
        raise PayloadError(f"java: {err}") from None


def _first(data: bytes) -> first.JavaContent:
    try:
        return first.read_first_content(data)
    except first.JavaStreamError as err:
        raise PayloadError(str(err)) from None


def _read(data: bytes) -> Any:
    from cqlsh_ext.payload.formats.java.stream import read_tree

    try:
        return read_tree(data)
    except first.JavaStreamError as err:
        raise PayloadError(str(err)) from None


def _headers(data: bytes) -> dict[str, object]:
    headers: dict[str, object] = {"magic": "0xaced", "version": 5}
    tag = data[4] if len(data) > 4 else None
    if tag is not None:
        headers["type_code"] = f"{_TYPE_CODES.get(tag, 'unknown')} (0x{tag:02x})"
        if tag == 0x74 and len(data) >= 7:
            headers["length"] = int.from_bytes(data[5:7], "big")
        elif tag == 0x7C and len(data) >= 13:
            headers["length"] = int.from_bytes(data[5:13], "big")
    try:
        content = first.read_first_content(data)
        if content.class_name:
            headers["class"] = content.class_name
    except first.JavaStreamError as err:
        headers["error"] = str(err)
    return headers


FORMAT = PayloadFormat("java", False, _maybe, decode, stream=StreamLayer("Java", _first, _read, _headers))
