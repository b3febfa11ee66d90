"""DEFLATE family: gzip (multi-member), zlib (FDICT recognised), raw deflate (on request only).

Each is a codec name of its own, as values are labelled: `deflate` is raw deflate only, and a gzip
or zlib value named `deflate` shows its hex with a reason that names its codec.

Uses zlib.decompressobj(...).decompress(b, cap): it caps output (gzip.decompress does not) and
costs ~0.6 us to build, less than cramjam's wrappers for small values.
"""

from __future__ import annotations

import struct
import zlib  # stdlib, already loaded by the interpreter: importing it costs nothing
from collections.abc import Callable
from functools import partial

from . import dictionaries
from ._common import capped_step, join, u32be, u32le, wrap
from .base import Compressor, Container, Decoded, DecodeError, Undecodable
from .capabilities import (
    Checksums,
    Compressors,
    DictionaryWriter,
    Headers,
    HeaderSized,
    TableCompressor,
    Writer,
)
from .checks import MAX_CHECKS, MISMATCH, NOT_CHECKED, OK, Check, compare, u16le

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"gzip": 40, "zlib": 50, "deflate": 60}, "example": {"gzip": 2},
            "headers": "gzip FLG/MTIME/OS/ISIZE"}

GZIP_MAGIC = b"\x1f\x8b\x08"
_GZIP_FLAGS = ("FTEXT", "FHCRC", "FEXTRA", "FNAME", "FCOMMENT")
_OS = {0: "FAT", 3: "Unix", 7: "Macintosh", 10: "NTFS", 11: "Windows", 255: "unknown"}
_decompressobj = zlib.decompressobj


#: GZIPOutputStream's header since JDK 16: no flags, mtime 0, XFL 0, OS 255 (unknown).
_JDK_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _deflated(data: bytes, level: int, wbits: int = -15) -> bytes:
    """Deflate (raw; `wbits` 31: with gzip's header and trailer, as zlib writes them)."""
    obj = zlib.compressobj(level, zlib.DEFLATED, wbits)
    return obj.compress(data) + obj.flush()


class Gzip(Container, Headers, Checksums, HeaderSized, Compressors, Writer):
    """gzip (GZIPOutputStream, Python gzip, Go compress/gzip); members may be concatenated."""

    codec = "gzip"
    container = "gzip"
    writes_bare = True
    reference = "the JDK's GZIPOutputStream (level 6, mtime 0, OS 255), deflate by zlib"
    level_range = (0, 9)
    primary = True
    grade = "A"
    magic = GZIP_MAGIC
    trailer_fields = ("CRC32", "ISIZE", "ratio")
    tried_by = {"gzip": 10}
    signature_priority = 80
    header_sized_from = 0  # ISIZE is read from the trailer; peeking decodes only the first bytes

    advise_priority = 40
    levels = (1, 6, 9)

    def level_shown(self, data: bytes) -> int | None:
        """XFL: zlib's gzip writer sets 2 at level 9 and 4 at level 1; 0 (the JDK's, every other
        level) says nothing."""
        return {2: 9, 4: 1}.get(data[8]) if len(data) > 9 else None

    def write(self, data: bytes, level: int | None) -> bytes:
        body = _deflated(data, 6 if level is None else level)
        return _JDK_GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)

    def compressors(self) -> list[Compressor]:
        return [Compressor(f"{self.label} {level}", self.codec, partial(_deflated, level=level, wbits=31),
                           partial(zlib.decompress, wbits=31)) for level in self.levels]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """CRC-32 and ISIZE per member, the header CRC-16 when FHCRC is set (raw inflate: no check)."""
        checks: list[Check] = []
        pos, member, left = 0, 0, cap
        n = len(data)
        while pos < n and len(checks) < MAX_CHECKS:
            if not data.startswith(b"\x1f\x8b\x08", pos):
                break  # trailing bytes (zero padding or garbage) are not a member
            flg = data[pos + 3]
            p = pos + 10
            if flg & 0x04:
                p += 2 + u16le(data, p)[0]
            for bit in (0x08, 0x10):
                if flg & bit:
                    end = data.index(b"\x00", p)
                    p = end + 1
            name = f"member {member}: "
            if flg & 0x02:
                checks.append(
                    compare(f"{name}header CRC-16", u16le(data, p)[0], zlib.crc32(data[pos:p]) & 0xFFFF, 4)
                )
                p += 2
            obj = zlib.decompressobj(-15)
            out = obj.decompress(memoryview(data)[p:], max(left, 1))
            if not obj.eof:
                why = "output cap reached" if len(out) >= left else "stream cut short"
                checks.append(Check(f"{name}CRC-32", NOT_CHECKED, detail=why))
                break
            trailer = obj.unused_data
            if len(trailer) < 8:
                checks.append(Check(f"{name}CRC-32", NOT_CHECKED, detail="trailer cut short"))
                break
            checks.append(compare(f"{name}CRC-32", u32le(trailer, 0)[0], zlib.crc32(out)))
            checks.append(
                Check(
                    f"{name}ISIZE",
                    OK if u32le(trailer, 4)[0] == len(out) & 0xFFFFFFFF else MISMATCH,
                    str(u32le(trailer, 4)[0]),
                    str(len(out)),
                )
            )
            left -= len(out)
            pos = n - len(trailer) + 8
            member += 1
        if member <= 1:  # one member (the usual case): no prefix
            for check in checks:
                check.what = check.what.removeprefix("member 0: ")
        return checks

    def matches(self, data: bytes) -> bool:
        return len(data) >= 18 and data.startswith(GZIP_MAGIC) and not data[3] & 0xE0

    def declared_size(self, data: bytes) -> int | None:
        # ISIZE is the last member's size mod 2**32: trusted only where deflate could have made
        # the stored bytes from it (at most 5 bytes per 16 KiB stored block of expansion, at most
        # 1032:1 compression). A value of several members is understated: such values are rare
        # in columns, and a corrupt one is not detected here (see the docstring in base.Container).
        n = len(data)
        if n < 18 or data[3] & 0xE0:
            return None
        isize = u32le(data, n - 4)[0]
        body = n - 18
        if isize + 5 * (isize // 16384 + 1) < body or isize > 1032 * body:
            return None
        return isize

    def peek(self, data: bytes, n: int) -> bytes | None:
        try:
            return _decompressobj(31).decompress(data, n)
        except Exception:
            return None

    def decode(self, data: bytes, cap: int) -> Decoded:
        n = len(data)
        if n < 18:
            raise DecodeError("truncated stream")
        try:
            obj = _decompressobj(31)
            if cap <= 0:
                return Decoded(b"", True, u32le(data, n - 4)[0])
            out, cut = capped_step(obj, data, cap)
            rest = obj.unused_data
            if cut or not rest:  # the common case: one member
                return Decoded(out, cut, u32le(data, n - 4)[0])
            # More members (or trailing bytes): ISIZE is per member, so sum them.
            parts = [out]
            left = cap - len(out)
            declared = u32le(data, n - len(rest) - 4)[0]
            truncated = False
            while rest:
                if not rest.startswith(GZIP_MAGIC):
                    if rest.count(0) == len(rest):  # zero padding (tape/block devices)
                        break
                    return Decoded(join(parts), False, declared, {"trailing_bytes": len(rest)})
                if left == 0:
                    truncated = True
                    break
                obj = _decompressobj(31)
                out, truncated = capped_step(obj, rest, left)
                parts.append(out)
                left -= len(out)
                if truncated:
                    break
                nxt = obj.unused_data
                declared += u32le(rest, len(rest) - len(nxt) - 4)[0]
                rest = nxt
            return Decoded(join(parts), truncated, declared)
        except Exception as e:
            raise wrap(e) from None

    def headers(self, data: bytes) -> dict[str, object]:
        if len(data) < 10:
            raise DecodeError("truncated header")
        flg = data[3]
        h: dict[str, object] = {
            "format": self.label,
            "FLG": f"0x{flg:02x}",
            "flags": [name for i, name in enumerate(_GZIP_FLAGS) if flg & (1 << i)],
            "MTIME": u32le(data, 4)[0],
            "XFL": data[8],
            "OS": _OS.get(data[9], str(data[9])),
        }
        p = 10
        if flg & 0x04 and p + 2 <= len(data):
            xlen = data[p] | data[p + 1] << 8
            h["FEXTRA_length"] = xlen
            p += 2 + xlen
        for flag, key in ((0x08, "FNAME"), (0x10, "FCOMMENT")):
            if flg & flag:
                end = data.find(b"\x00", p)
                if end < 0:
                    break
                h[key] = data[p:end].decode("latin-1")
                p = end + 1
        if len(data) >= 18:
            h["CRC32"] = f"0x{u32le(data, len(data) - 8)[0]:08x}"
            h["ISIZE"] = u32le(data, len(data) - 4)[0]
            h["ratio"] = round(u32le(data, len(data) - 4)[0] / len(data), 3)
        return h


def _zlib_header_ok(data: bytes) -> bool:
    if len(data) < 2:
        return False
    cmf, flg = data[0], data[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf << 8 | flg) % 31 == 0


class Zlib(Container, Headers, Checksums, Compressors, TableCompressor, Writer, DictionaryWriter):
    """zlib (DeflaterOutputStream, zlib.compress): 2-byte header, deflate, Adler-32."""

    codec = "zlib"
    container = "zlib"
    writes_bare = True
    reference = "zlib.compress (level 6: the JDK's DeflaterOutputStream)"
    level_range = (0, 9)
    primary = True
    grade = "B"
    magic = b"\x78"
    tried_by = {"zlib": 10}
    signature_priority = 110
    # CM 8 with CINFO 0..7: 0x08, 0x18, ... 0x78 (0x78 is what every real producer writes)
    lead_bytes = bytes(range(0x08, 0x80, 0x10))
    trailer_fields = ("adler32",)
    cassandra_class = "DeflateCompressor"

    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        return zlib.compress

    def level_shown(self, data: bytes) -> int | None:
        """FLEVEL, the header's two top bits: 0 for levels 0 and 1, 1 for 2 to 5, 2 for 6 (the
        default: None), 3 for 7 to 9; the strongest level of each is taken."""
        return {0: 1, 1: 5, 3: 9}.get(data[1] >> 6) if len(data) > 2 else None

    def write(self, data: bytes, level: int | None) -> bytes:
        return zlib.compress(data, 6 if level is None else level)

    dictionary_kind = dictionaries.ZLIB

    def dictionary_named(self, data: bytes) -> int | None:
        return u32be(data, 2)[0] if len(data) >= 6 and data[1] & 0x20 else None

    def write_with_dictionary(self, data: bytes, level: int | None, dictionary: bytes) -> bytes:
        obj = zlib.compressobj(6 if level is None else level, zdict=dictionary)
        return obj.compress(data) + obj.flush()

    def compressors(self) -> list[Compressor]:
        return [Compressor(self.label, self.codec, zlib.compress, zlib.decompress)]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """Adler-32 (raw inflate: no check)."""
        start, obj = 2, zlib.decompressobj(-15)
        if data[1] & 0x20:
            entry = dictionaries.preset(u32be(data, 2)[0]) if len(data) >= 6 else None
            if entry is None:
                return [Check("Adler-32", NOT_CHECKED, detail="needs the preset dictionary")]
            start, obj = 6, zlib.decompressobj(-15, zdict=entry.data)
        out = obj.decompress(memoryview(data)[start:], max(cap, 1))
        if not obj.eof:
            return [
                Check(
                    "Adler-32",
                    NOT_CHECKED,
                    detail="output cap reached" if len(out) >= cap else "stream cut short",
                )
            ]
        if len(obj.unused_data) < 4:
            return [Check("Adler-32", NOT_CHECKED, detail="trailer cut short")]
        return [compare("Adler-32", u32be(obj.unused_data, 0)[0], zlib.adler32(out))]

    def matches(self, data: bytes) -> bool:
        return _zlib_header_ok(data)

    def decode(self, data: bytes, cap: int) -> Decoded:
        if not _zlib_header_ok(data):
            raise DecodeError("bad zlib header")
        zdict = None
        if data[1] & 0x20:
            entry = dictionaries.preset(u32be(data, 2)[0]) if len(data) >= 6 else None
            if entry is None:
                raise self._fdict(data, cap)
            zdict = entry.data
        try:
            obj = _decompressobj(15) if zdict is None else _decompressobj(15, zdict=zdict)
            out, cut = capped_step(obj, data, cap) if cap > 0 else (b"", True)
        except Exception as e:
            raise wrap(e) from None
        rest = obj.unused_data
        return Decoded(out, cut, None, {"trailing_bytes": len(rest)} if rest else {})

    def _fdict(self, data: bytes, cap: int) -> DecodeError:
        """FDICT needs the preset dictionary. Say Undecodable only if the stream is well formed:
        decoding it against a dummy all-zero dictionary still checks every deflate block."""
        if len(data) < 6:
            return DecodeError("zlib stream needs a preset dictionary; its ID is cut short")
        dict_id = u32be(data, 2)[0]
        try:
            obj = zlib.decompressobj(-15, zdict=bytes(1 << ((data[0] >> 4) + 8)))
            out = obj.decompress(memoryview(data)[6:], max(cap, 1))
            # exactly the 4-byte Adler-32 after the end of the deflate stream (random bytes get
            # an early end of stream about 1 in 10^5: the exact position makes that ~10^-8)
            ok = (obj.eof and len(obj.unused_data) == 4) or len(out) >= cap
        except Exception as e:
            return wrap(e)
        if not ok:
            return DecodeError("truncated stream")
        return Undecodable(f"zlib stream needs a preset dictionary (DICTID 0x{dict_id:08x})")

    def headers(self, data: bytes) -> dict[str, object]:
        if len(data) < 2:
            raise DecodeError("truncated header")
        cmf, flg = data[0], data[1]
        h: dict[str, object] = {
            "format": self.label,
            "CMF": f"0x{cmf:02x}",
            "FLG": f"0x{flg:02x}",
            "window_size": 1 << ((cmf >> 4) + 8),
            "FLEVEL": ("fastest", "fast", "default", "maximum")[flg >> 6],
            "FDICT": bool(flg & 0x20),
        }
        if flg & 0x20 and len(data) >= 6:
            dictid = u32be(data, 2)[0]
            h["DICTID"] = f"0x{dictid:08x}"
            entry = dictionaries.preset(dictid)
            h["dictionary"] = entry.describe() if entry else "not loaded (--dictionary FILE)"
        if len(data) >= 6:
            h["adler32"] = f"0x{u32be(data, len(data) - 4)[0]:08x}"
        return h


class RawDeflate(Container, Compressors, Writer):
    """Headerless deflate (Deflater(nowrap=true), zlib wbits=-15): only on -d deflate."""

    codec = "deflate"
    container = "raw"
    writes_bare = True
    reference = "zlib raw deflate (level 6: the JDK's Deflater with nowrap)"
    level_range = (0, 9)
    primary = True
    grade = "D"
    tried_by = {"deflate": 30}

    def write(self, data: bytes, level: int | None) -> bytes:
        return _deflated(data, 6 if level is None else level)

    def compressors(self) -> list[Compressor]:
        return [Compressor(self.label, self.codec, partial(_deflated, level=6),
                           partial(zlib.decompress, wbits=-15))]

    def matches(self, data: bytes) -> bool:
        return False

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            return self._inflate(data, cap)
        except DecodeError as err:
            # A wrapped stream is no raw deflate: say which codec names it.
            wrapped = next((f for f in (GZIP, ZLIB) if f.matches(data)), None)
            if wrapped is None:
                raise
            named = f"the value is a {wrapped.label} stream (name it {wrapped.codec})"
            raise DecodeError(f"{err}; {named}") from None

    def _inflate(self, data: bytes, cap: int) -> Decoded:
        if not data:
            raise DecodeError("empty value")
        try:
            obj = _decompressobj(-15)
            out, cut = capped_step(obj, data, cap) if cap > 0 else (b"", True)
        except Exception as e:
            raise wrap(e) from None
        # "No exception" proves little for raw deflate: insist on a clean, exact, non-empty stream.
        if not cut:
            if obj.unused_data:
                raise DecodeError(f"{len(obj.unused_data)} trailing bytes after the deflate stream")
            if not out:
                raise DecodeError("empty output")
        return Decoded(out, cut)


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
GZIP = Gzip()
ZLIB = Zlib()

FORMATS: tuple[Container, ...] = (GZIP, ZLIB, RawDeflate())
