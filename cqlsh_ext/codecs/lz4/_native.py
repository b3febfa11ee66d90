"""The lz4 library, bound on the first decode (not at import time), and capped decoding of one raw
block: what the frame and block containers share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._common import library, library_prefixes, wrap
from ..base import DecodeError

library_prefixes("lz4: ")  # the library's messages start so; reason() strips it

FRAME_MAGIC = b"\x04\x22\x4d\x18"
LEGACY_MAGIC = b"\x02\x21\x4c\x18"
LZ4BLOCK_MAGIC = b"LZ4Block"
_LEGACY_BLOCK = 8 << 20
#: Worst-case LZ4 expansion: a 4-byte sequence can emit ~255 bytes per extra length byte.
_RATIO = 255
#: lz4-java's XXHash32 seed; the stored checksum keeps the low 28 bits.
_LZ4BLOCK_SEED = 0x9747B28C

_block: Callable[..., bytes] | None = None  # lz4.block.decompress
_chunk: Callable[..., tuple[bytes, int, bool]] | None = None  # lz4.frame.decompress_chunk
_ctx: Any = None  # one reused LZ4F decompression context (single-threaded shell)
_xxh32: Callable[..., int] | None = None
_xxh32_known = False


def _abandon() -> None:
    """Drop the LZ4F context after a frame stopped mid-way (error, cap or truncation).

    Trap: LZ4F_resetDecompressionContext (lz4.frame.reset_decompression_context) does not clear
    the remaining-content-size counter, so a later frame *without* a content size but with a
    content checksum then fails with ERROR_frameSize_wrong. A new context costs ~1 us.
    """
    global _ctx
    if _chunk is not None:
        import lz4.frame

        _ctx = lz4.frame.create_decompression_context()


def _load() -> Callable[..., bytes]:
    global _block, _chunk, _ctx
    block, frame = library("lz4.block", "lz4 not installed"), library("lz4.frame", "lz4 not installed")
    _chunk = frame.decompress_chunk
    _ctx = frame.create_decompression_context()
    _block = block.decompress
    return _block


def _xxh() -> Callable[..., int] | None:
    """xxhash.xxh32_intdigest when the optional `xxhash` package is installed (not a dependency)."""
    global _xxh32, _xxh32_known
    if not _xxh32_known:
        _xxh32_known = True
        try:
            import xxhash

            _xxh32 = xxhash.xxh32_intdigest
        except ImportError:
            _xxh32 = None
    return _xxh32


# ---------------------------------------------------------------------------------------------
# Capped decoding of one raw block. python-lz4 cannot stop a block half-way, so when the output
# would pass the cap, walk the sequences in Python, decode whole sequences natively and finish
# the crossing sequence by hand: memory stays ~cap even when a header claims gigabytes.

# A literal-only last sequence (5 zero literals) appended to a cut prefix: LZ4's decoder wants
# the block to end with literals and >= 12 bytes after the last match start.
_TAIL = b"\x50\x00\x00\x00\x00\x00"


def _length(buf: bytes | memoryview, pos: int, length: int) -> tuple[int, int]:
    """A sequence's literal or match length from its token's 4 bits (15: bytes of 255 follow, up
    to one that is not), and the position after it."""
    more = length == 15
    while more:
        if pos >= len(buf):
            raise DecodeError("truncated stream")
        more = buf[pos] == 255
        length += buf[pos]
        pos += 1
    return length, pos


def _capped_block(buf: bytes | memoryview, limit: int) -> tuple[bytes, bool]:
    """Decode at most `limit` bytes of a raw block: (output, truncated). Raises DecodeError."""
    block = _block or _load()
    n = len(buf)
    pos = 0
    out = 0  # output length after the last whole sequence
    seq_end = 0  # input offset after the last whole sequence
    offset = 0
    while True:
        if pos >= n:
            raise DecodeError("truncated stream")
        token = buf[pos]
        pos += 1
        ll, pos = _length(buf, pos, token >> 4)
        lit = pos
        pos += ll
        if pos > n:
            raise DecodeError("truncated stream")
        if pos == n:  # last sequence: the whole block fits
            if out + ll <= limit:
                try:
                    whole: bytes = block(buf, uncompressed_size=out + ll)
                except Exception as e:
                    raise wrap(e) from None
                if len(whole) != out + ll:
                    raise DecodeError("corrupt data")
                return whole, False
            break
        if n - pos < 2:
            raise DecodeError("truncated stream")
        offset = buf[pos] | buf[pos + 1] << 8
        pos += 2
        ml, pos = _length(buf, pos, token & 15)
        ml += 4
        if offset == 0 or offset > out + ll:  # liblz4 accepts offset 0: reject it here
            raise DecodeError("corrupt data (bad match offset)")
        if out + ll + ml >= limit:
            break
        out += ll + ml
        seq_end = pos
    # Native decode of the whole sequences, then the crossing sequence by hand.
    if seq_end:
        try:
            head = block(bytes(buf[:seq_end]) + _TAIL, uncompressed_size=out + 64)
        except Exception as e:
            raise wrap(e) from None
        if len(head) != out + 5:
            raise DecodeError("corrupt data")
        res = bytearray(head[:out])
    else:
        res = bytearray()
    res += buf[lit : lit + min(ll, limit - out)]
    need = limit - len(res)
    if need > 0:
        if offset == 0 or offset > len(res):
            raise DecodeError("corrupt data (bad match offset)")
        # An overlapping copy repeats the last `offset` bytes: built at once, not a byte at a
        # time (offset 1 over a 4 MiB cap would be 4 million steps).
        pattern = bytes(res[len(res) - offset :])
        res += (pattern * (need // offset + 1))[:need]
    return bytes(res[:limit]), True


def _sized_block(buf: Any, size: int, left: int) -> bytes:
    """A block whose exact output size is known and <= left."""
    block = _block or _load()
    try:
        out = block(buf, uncompressed_size=size)
    except Exception as e:
        raise wrap(e) from None
    if len(out) != size:
        raise DecodeError(f"decoded {len(out)} bytes, header says {size}")
    return out
