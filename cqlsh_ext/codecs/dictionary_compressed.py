"""RFC 9842 (Compression Dictionary Transport) values: a stream that names its dictionary by the
SHA-256 of the dictionary's bytes, the dictionary found in the store (codecs.dictionaries: the
`--dictionary` files, the dictionary table) by that hash.

- `dcz` (Dictionary-Compressed Zstandard): the 8 bytes 5e 2a 4d 18 20 00 00 00 (a zstd skippable
  frame of 32 bytes) holding the 32-byte hash, then a zstd frame made with the dictionary as raw
  content (RFC 8878 section 5). Read here with python-zstandard, written by encode('dcz:dict=HASH').
- `dcb` (Dictionary-Compressed Brotli): ff 44 43 42, the hash, then a Shared Brotli stream with the
  dictionary as a prefix. Recognised and its dictionary named; not decoded: the brotli package (1.2)
  takes no dictionary, and brotlicffi's `dictionary` argument calls a function libbrotli 1.x no
  longer has.

A zstd skippable frame of 32 bytes at the start of a value is read as dcz's header (its magic's
first byte is 0x5e, tried before a plain zstd frame); the zstd seekable format's seek table, the
same magic at the end of a value, is the zstd codec's.
"""

from __future__ import annotations

from . import dictionaries
from .base import Container, Decoded, DecodeError, Undecodable, Unwritable
from .capabilities import DictionaryWriter, Headers, NotWritten, Writer

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help, and what INSPECT shows of its headers.
DECLARES = {"names": {"dcz": 35, "dcb": 95}, "headers": "RFC 9842 dcz/dcb header (dictionary SHA-256)"}

#: The dcz header's fixed bytes: a zstd skippable frame (magic 0x184D2A5E) of 32 bytes.
DCZ_MAGIC = b"\x5e\x2a\x4d\x18\x20\x00\x00\x00"
#: The dcb header's fixed bytes.
DCB_MAGIC = b"\xff\x44\x43\x42"
HASH_SIZE = 32
#: How the store names a dictionary by its hash (a DictionaryWriter's dictionary_kind; the "ID" is
#: the 256-bit hash read as a big-endian integer: `dcz:dict=` takes its 64 hex digits).
SHA256 = dictionaries.SHA256


def _digest(data: bytes, magic: bytes) -> bytes:
    end = len(magic) + HASH_SIZE
    if len(data) < end:
        raise DecodeError("header cut short (no dictionary hash)")
    return data[len(magic):end]


def _named(digest: bytes) -> str:
    """INSPECT's line on the dictionary a value names: which one, from where, or that it is missing."""
    entry = dictionaries.by_sha256(digest)
    return entry.describe_by_hash() if entry else f"SHA-256 {digest.hex()}: not loaded (--dictionary FILE)"


def _missing(kind: str, digest: bytes) -> Undecodable:
    return Undecodable(f"{kind} value needs the dictionary with SHA-256 {digest.hex()} (not loaded)")


class Dcz(Container, Headers, Writer, DictionaryWriter):
    """RFC 9842 Dictionary-Compressed Zstandard (HTTP's `Content-Encoding: dcz`)."""

    codec = "dcz"
    container = "dcz"
    primary = True
    grade = "A"
    magic = DCZ_MAGIC
    tried_by = {"dcz": 10}
    signature_priority = 5  # before a plain zstd frame, which may also start with a skippable one

    writes_bare = True
    needs_dictionary = True
    reference = ("RFC 9842's layout: the header with the dictionary's SHA-256, then zstandard "
                 "ZstdCompressor(level=3) with the dictionary as raw content")
    level_range = (-131072, 22)  # libzstd's

    dictionary_kind = SHA256

    def matches(self, data: bytes) -> bool:
        # The header whole is enough: a bare header (no frame after it) is a dcz value that
        # failed, never zstd's empty stream of one skippable frame.
        return len(data) >= len(DCZ_MAGIC) + HASH_SIZE and data.startswith(DCZ_MAGIC)

    def decode(self, data: bytes, cap: int) -> Decoded:
        from .zstd import MAGIC, read_with_raw_dictionary

        digest = _digest(data, DCZ_MAGIC)
        body = data[len(DCZ_MAGIC) + HASH_SIZE:]
        if not body:
            raise DecodeError("a bare header: no zstd frame after the dictionary's SHA-256")
        if not body.startswith(MAGIC):
            raise DecodeError("no zstd frame after the dcz header")
        entry = dictionaries.by_sha256(digest)
        if entry is None:
            raise _missing("dcz", digest)
        return read_with_raw_dictionary(body, cap, entry)

    def headers(self, data: bytes) -> dict[str, object]:
        from .zstd import ZSTD

        digest = _digest(data, DCZ_MAGIC)
        start = len(DCZ_MAGIC) + HASH_SIZE
        frames = ZSTD.headers(data[start:])["frames"]
        for frame in frames if isinstance(frames, list) else ():
            if isinstance(frame, dict) and isinstance(frame.get("offset"), int):
                frame["offset"] += start  # offsets in the value, as INSPECT shows every other
        return {"format": self.label, "header": DCZ_MAGIC.hex(" "), "dictionary_sha256": digest.hex(),
                "dictionary": _named(digest), "frames": frames}

    def write(self, data: bytes, level: int | None) -> bytes:
        loaded = dictionaries.raw()
        hint = (f" (loaded: {', '.join(e.sha256.hex()[:16] + '… from ' + e.source for e in loaded[:3])})"
                if loaded else " (none is loaded: --dictionary FILE)")
        raise Unwritable(f"dcz is written with a dictionary of the store: dcz:dict=<its SHA-256, 64 hex "
                         f"digits>{hint}")

    def write_with_dictionary(self, data: bytes, level: int | None, dictionary: bytes) -> bytes:
        import hashlib

        import zstandard

        raw = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        cctx = zstandard.ZstdCompressor(level=3 if level is None else level, dict_data=raw,
                                        write_dict_id=False)
        return DCZ_MAGIC + hashlib.sha256(dictionary).digest() + bytes(cctx.compress(data))

    def dictionary_named(self, data: bytes) -> int | None:
        if not self.matches(data):
            return None
        return int.from_bytes(data[len(DCZ_MAGIC):len(DCZ_MAGIC) + HASH_SIZE], "big")


class Dcb(Container, Headers, NotWritten):
    """RFC 9842 Dictionary-Compressed Brotli (`Content-Encoding: dcb`): named, not decoded here."""

    codec = "dcb"
    container = "dcb"
    primary = True
    grade = "A"
    magic = DCB_MAGIC
    tried_by = {"dcb": 10}
    signature_priority = 65

    unwritable = "no Python Brotli binding here writes with a dictionary"

    def matches(self, data: bytes) -> bool:
        return len(data) > len(DCB_MAGIC) + HASH_SIZE and data.startswith(DCB_MAGIC)

    def decode(self, data: bytes, cap: int) -> Decoded:
        digest = _digest(data, DCB_MAGIC)
        entry = dictionaries.by_sha256(digest)
        where = f"its dictionary is loaded from {entry.source}" if entry else f"SHA-256 {digest.hex()}"
        raise Undecodable(f"dcb (Brotli with a dictionary) cannot be decoded here: no Python Brotli "
                          f"binding takes a dictionary ({where})")

    def headers(self, data: bytes) -> dict[str, object]:
        digest = _digest(data, DCB_MAGIC)
        return {"format": self.label, "header": DCB_MAGIC.hex(" "), "dictionary_sha256": digest.hex(),
                "dictionary": _named(digest), "brotli_stream_bytes": len(data) - len(DCB_MAGIC) - HASH_SIZE}


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
FORMATS: tuple[Container, ...] = (Dcz(), Dcb())
