"""Java serialization streams, as a reading a column setting can name (`gzip>java`).

Auto-detection does not go through here: a stream's 4-byte magic makes it a layer of the
decoding walk (payload.unwrap), which reads it with payload.formats.javastream. Naming it only adds a clear
reason when a column's values are not streams.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.payload import javaser
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import PayloadError

#: Read without importing this module (codecs.base.read_declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 80, "listed": 80}


def _maybe(data: bytes) -> bool:
    return data.startswith(javaser.MAGIC)


def decode(data: bytes) -> Any:
    if not _maybe(data):
        raise PayloadError("java: no serialization stream magic (0xaced0005)")
    from cqlsh_ext.payload.formats import javastream

    try:
        return javastream.read_tree(data)
    except javaser.JavaStreamError as err:
        raise PayloadError(f"java: {err}") from None


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
        return javaser.MAGIC + b"\x74" + len(out).to_bytes(2, "big") + bytes(out)
    return javaser.MAGIC + b"\x7c" + len(out).to_bytes(8, "big") + bytes(out)


FORMAT = PayloadFormat("java", False, _maybe, decode, encode=encode, encodes_text=True,
                       writer="the JDK's ObjectOutputStream.writeObject(String)",
                       unwritable="only a String is written (the text itself)")
