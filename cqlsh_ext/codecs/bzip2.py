"""bzip2 streams (possibly concatenated), capped through BZ2Decompressor(max_length)."""

from __future__ import annotations

from typing import Any

from ._common import decode_streams, library
from .base import Compressor, Container, Decoded, DecodeError
from .capabilities import Checksums, Compressors, Headers, Writer
from .checks import Check, by_decoder

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"bzip2": 70}}

MAGIC = b"BZh"
_BLOCK_MAGIC = b"\x31\x41\x59\x26\x53\x59"  # pi: start of a compressed block
_EOS_MAGIC = b"\x17\x72\x45\x38\x50\x90"  # sqrt(pi): end of stream (empty stream)

_decompressor: Any = None


def _load() -> Any:
    global _decompressor
    _decompressor = library("bz2", "bz2 module not available").BZ2Decompressor
    return _decompressor


class Bzip2(Container, Headers, Checksums, Compressors, Writer):
    """bzip2 (bzip2 CLI, Python bz2, commons-compress BZip2CompressorOutputStream)."""

    codec = "bzip2"
    container = "bzip2"
    writes_bare = True
    reference = "bz2.compress (libbz2, level 9 as the bzip2 tool)"
    level_range = (1, 9)
    primary = True
    grade = "A"
    magic = MAGIC
    tried_by = {"bzip2": 10}
    signature_priority = 90

    def write(self, data: bytes, level: int | None) -> bytes:
        import bz2

        return bz2.compress(data, 9 if level is None else level)

    def compressors(self) -> list[Compressor]:
        import bz2

        return [Compressor(self.label, self.codec, bz2.compress, bz2.decompress, slow=True)]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        return by_decoder("block and stream CRC-32 (libbz2)")(data, decoded, cap, error)

    def matches(self, data: bytes) -> bool:
        return (
            len(data) >= 10
            and data.startswith(MAGIC)
            and 0x31 <= data[3] <= 0x39
            and (data.startswith(_BLOCK_MAGIC, 4) or data.startswith(_EOS_MAGIC, 4))
        )

    def decode(self, data: bytes, cap: int) -> Decoded:
        return decode_streams(data, cap, _decompressor or _load(), MAGIC)

    def headers(self, data: bytes) -> dict[str, object]:
        if len(data) < 4:
            raise DecodeError("truncated header")
        level = data[3] - 0x30
        return {
            "format": self.label,
            "block_size": f"{level}00k" if 1 <= level <= 9 else f"invalid ({data[3]:#x})",
            "block_size_bytes": level * 100_000 if 1 <= level <= 9 else None,
            "first_block": "empty stream" if data.startswith(_EOS_MAGIC, 4) else "compressed block",
        }


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
BZIP2 = Bzip2()

FORMATS: tuple[Container, ...] = (BZIP2,)
