"""The first item of a Java serialization stream, read by its grammar, without deserializing
anything; the grammar's constants.

Producers such as Couchbase's compression examples store `GZIPOutputStream(ObjectOutputStream)`
around a single `writeObject(String)`; others write a HashMap, an ArrayList, a boxed number or
their own Serializable class. `read_first_content` names what the stream starts with (cheap: the
display and the insight commands call it per value, through FORMAT.stream.first); java.stream
reads the whole stream, loaded when an object other than a String is shown.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAGIC = b"\xac\xed\x00\x05"
TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT = 0x70, 0x71, 0x72, 0x73
TC_STRING, TC_ARRAY, TC_BLOCKDATA, TC_LONGSTRING = 0x74, 0x75, 0x77, 0x7C
TC_PROXYCLASSDESC, TC_ENUM, TC_BLOCKDATALONG = 0x7D, 0x7E, 0x7A


class JavaStreamError(ValueError):
    """Not a well-formed serialization stream; str() is a short reason."""


@dataclass(frozen=True)
class JavaContent:
    #: 'String', 'object', 'array', 'enum', 'null', 'block data', 'proxy'
    kind: str
    #: The string itself for kind 'String'.
    text: str | None = None
    #: Class name for objects, arrays and enums.
    class_name: str | None = None
    #: For Strings: True when the declared length runs past the available bytes (output cap).
    truncated: bool = False


def decode_modified_utf8(raw: bytes) -> str:
    """Java's modified UTF-8: U+0000 as C0 80 and supplementary characters as surrogate pairs."""
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        # Pair the surrogates up again; a lone one stays visible as U+FFFD rather than failing.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _class_name(data: bytes, pos: int) -> str:
    tag = data[pos]
    if tag == TC_CLASSDESC:
        (length,) = struct.unpack_from(">H", data, pos + 1)
        raw = data[pos + 3 : pos + 3 + length]
        if len(raw) != length:
            raise JavaStreamError("class descriptor cut short")
        return decode_modified_utf8(raw)
    if tag == TC_PROXYCLASSDESC:
        return "dynamic proxy"
    if tag == TC_REFERENCE:
        return "(back-reference)"
    raise JavaStreamError(f"unexpected type code 0x{tag:02x} where a class descriptor belongs")


def read_first_content(data: bytes) -> JavaContent:
    """Describe the first item of a serialization stream that starts with MAGIC."""
    if not data.startswith(MAGIC) or len(data) < 5:
        raise JavaStreamError("not a Java serialization stream")
    tag = data[4]
    try:
        if tag in (TC_STRING, TC_LONGSTRING):
            fmt, start = (">H", 7) if tag == TC_STRING else (">Q", 13)
            (length,) = struct.unpack_from(fmt, data, 5)
            raw = data[start : start + length]
            truncated = len(raw) < length
            if truncated:
                # Drop a partial multi-byte sequence left by the cut.
                raw = raw[: len(raw) - _partial_tail(raw)]
            return JavaContent("String", text=decode_modified_utf8(raw), truncated=truncated)
        if tag == TC_OBJECT:
            return JavaContent("object", class_name=_class_name(data, 5))
        if tag == TC_ARRAY:
            return JavaContent("array", class_name=_class_name(data, 5))
        if tag == TC_ENUM:
            return JavaContent("enum", class_name=_class_name(data, 5))
        if tag == TC_NULL:
            return JavaContent("null")
        if tag in (TC_BLOCKDATA, TC_BLOCKDATALONG):
            return JavaContent("block data")
    except (struct.error, IndexError):
        raise JavaStreamError("stream cut short") from None
    except UnicodeDecodeError:
        raise JavaStreamError("invalid modified UTF-8 in string") from None
    raise JavaStreamError(f"unknown type code 0x{tag:02x}")


def _partial_tail(raw: bytes) -> int:
    """Bytes at the end of `raw` that start an incomplete UTF-8 sequence."""
    for back in range(1, min(3, len(raw)) + 1):
        byte = raw[-back]
        if byte & 0xC0 == 0xC0:  # a lead byte: complete only if enough continuation bytes follow
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if back < need else 0
        if byte & 0x80 == 0:
            return 0
    return 0
