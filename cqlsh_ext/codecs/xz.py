"""xz streams (concatenated, with stream padding) and the legacy .lzma ("LZMA alone") format."""

from __future__ import annotations

from typing import Any

from ._common import capped_step, decode_streams, library, u32le, u64le, wrap
from .base import Compressor, Container, Decoded, DecodeError
from .capabilities import Checksums, Compressors, Headers, NeedsWorker, Writer
from .checks import NOT_CHECKED, Check, by_decoder

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"xz": 80}}

MAGIC = b"\xfd7zXZ\x00"
_CHECKS = {0: "none", 1: "CRC32", 4: "CRC64", 10: "SHA-256"}
#: liblzma reserves the whole dictionary up front: refuse headers asking for more than this.
MEMLIMIT = 1 << 30

_lzma: Any = None


def _load() -> Any:
    global _lzma
    _lzma = library("lzma", "lzma module not available")
    return _lzma


class Xz(Container, Headers, Checksums, Compressors, Writer, NeedsWorker):
    """xz (xz CLI, Python lzma, XZ for Java XZOutputStream)."""

    needs_worker = "liblzma reserves the dictionary the stream names (up to MEMLIMIT)"

    codec = "xz"
    container = "xz"
    writes_bare = True
    reference = "lzma.compress (liblzma, preset 6 and CRC-64 as the xz tool)"
    level_range = (0, 9)
    primary = True
    grade = "A"
    magic = MAGIC
    tried_by = {"xz": 10}
    signature_priority = 100

    def write(self, data: bytes, level: int | None) -> bytes:
        import lzma

        return lzma.compress(data, preset=6 if level is None else level)

    def compressors(self) -> list[Compressor]:
        import lzma

        return [Compressor(self.label, self.codec, lzma.compress, lzma.decompress, slow=True)]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """The stream's check of each block, as liblzma verifies it."""
        kind = {0: None, 1: "CRC-32", 4: "CRC-64", 10: "SHA-256"}.get(data[7] & 0x0F, "unknown check")
        if kind is None:
            return [Check("check", NOT_CHECKED, detail="the stream stores no check (check type None)")]
        return by_decoder(f"{kind} of each block (liblzma)")(data, decoded, cap, error)

    def matches(self, data: bytes) -> bool:
        return len(data) >= 12 and data.startswith(MAGIC) and data[6] == 0 and data[7] & 0xF0 == 0

    def decode(self, data: bytes, cap: int) -> Decoded:
        lzma = _lzma or _load()
        # Stream padding (zero bytes) may stand between concatenated xz streams.
        return decode_streams(
            data, cap, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=MEMLIMIT), MAGIC, b"\x00"
        )

    def headers(self, data: bytes) -> dict[str, object]:
        if len(data) < 12:
            raise DecodeError("truncated header")
        check = data[7] & 0x0F
        return {
            "format": self.label,
            "stream_flags": f"0x{data[6]:02x}{data[7]:02x}",
            "check": _CHECKS.get(check, f"reserved ({check})"),
        }


def _alone_header(data: bytes) -> tuple[int, int, int | None] | None:
    """(properties byte, dictionary size, uncompressed size or None) of a plausible .lzma header."""
    if len(data) < 14:
        return None
    props = data[0]
    if props >= 225:
        return None
    dict_size = u32le(data, 1)[0]
    # Encoders write 2**n or 2**n + 2**(n-1): anything else is almost surely not .lzma.
    if dict_size < 4096 or dict_size > MEMLIMIT:
        return None
    top = dict_size.bit_length() - 1
    if dict_size not in (1 << top, (1 << top) | (1 << (top - 1))):
        return None
    size = u64le(data, 5)[0]
    return props, dict_size, None if size == 0xFFFFFFFFFFFFFFFF else size


class LzmaAlone(Container, Headers, Writer, NeedsWorker):
    """Legacy .lzma (lzma_alone: XZ for Java LZMAOutputStream, 7-Zip SDK, lzma CLI).

    No magic, but a 13-byte header whose dictionary size field is tightly constrained; a trial
    decode confirms it.
    """

    needs_worker = "liblzma reserves the dictionary the stream names (up to MEMLIMIT)"

    codec = "xz"
    container = "lzma"
    reference = "lzma.compress(format=FORMAT_ALONE) (liblzma's lzma_alone, preset 6)"
    level_range = (0, 9)
    grade = "C"
    tried_by = {"xz": 20}
    trial_priority = 60  # last; never with a zero first byte (the properties byte is never 0)

    def write(self, data: bytes, level: int | None) -> bytes:
        import lzma

        return lzma.compress(data, format=lzma.FORMAT_ALONE, preset=6 if level is None else level)

    def matches(self, data: bytes) -> bool:
        hdr = _alone_header(data)
        # The known size (if any) must be reachable: LZMA tops out near 7000:1.
        return hdr is not None and (hdr[2] is None or hdr[2] <= len(data) * 8000)

    def decode(self, data: bytes, cap: int) -> Decoded:
        hdr = _alone_header(data)
        if hdr is None:
            raise DecodeError("bad .lzma header")
        lzma = _lzma or _load()
        if cap <= 0:
            return Decoded(b"", True, hdr[2])
        try:
            dec = lzma.LZMADecompressor(lzma.FORMAT_ALONE, memlimit=MEMLIMIT)
            out, truncated = capped_step(dec, data, cap)
        except Exception as e:
            raise wrap(e) from None
        if not truncated and dec.unused_data:
            raise DecodeError(f"{len(dec.unused_data)} trailing bytes")
        return Decoded(out, truncated, hdr[2])

    def ruled_out(self, data: bytes) -> bool:
        return not self.matches(data)

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        return None if self.ruled_out(data) else super().trial(data, cap)

    def headers(self, data: bytes) -> dict[str, object]:
        hdr = _alone_header(data)
        if hdr is None:
            raise DecodeError("bad .lzma header")
        props, dict_size, size = hdr
        return {
            "format": self.label,
            "lc": props % 9,
            "lp": (props // 9) % 5,
            "pb": props // 45,
            "dict_size": dict_size,
            "uncompressed_size": size,
        }


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
XZ = Xz()

FORMATS: tuple[Container, ...] = (XZ, LzmaAlone())
