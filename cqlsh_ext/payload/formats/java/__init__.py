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

#: Read without importing this module (common.declarations): its place in detection and
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


def encode(text: str) -> bytes:
    """`text` as ObjectOutputStream.writeObject(String) writes it: TC_STRING with a u16 length of
    modified UTF-8 (NUL as C0 80, characters beyond the BMP as two surrogates), TC_LONGSTRING
    with a u64 length past 65535 bytes. Other objects are not written: the text is the String."""
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for i in range(0, len(units), 2):
        c = units[i] << 8 | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | c >> 6, 0x80 | c & 0x3F))
        else:
            out += bytes((0xE0 | c >> 12, 0x80 | c >> 6 & 0x3F, 0x80 | c & 0x3F))
    if len(out) <= 0xFFFF:
        return first.MAGIC + b"\x74" + len(out).to_bytes(2, "big") + bytes(out)
    return first.MAGIC + b"\x7c" + len(out).to_bytes(8, "big") + bytes(out)


FORMAT = PayloadFormat("java", False, _maybe, decode, stream=StreamLayer("Java", _first, _read, _headers),
                       encode=encode, encodes_text=True,
                       writer="the JDK's ObjectOutputStream.writeObject(String)",
                       unwritable="only a String is written (the text itself)",
                       confidence="confident",
                       confidence_why="the stream magic and its grammar read to the end")
