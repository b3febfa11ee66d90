"""LZ4 family: frame (+ skippable frames, concatenation), legacy frame, lz4-java LZ4Block stream,
raw blocks with a u32 LE / BE size prefix or none, and Hadoop Lz4Codec block streams.

The lz4 package is imported on the first decode, not at import time.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, ClassVar

from ._common import (
    FrameResult,
    HadoopStream,
    frame_sequence,
    join,
    skip_skippable,
    too_big,
    u32be,
    u32le,
    u64le,
    wrap,
)
from .base import Decoded, DecodeError, Format, Undecodable

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
    try:
        import lz4.block
        import lz4.frame
    except ImportError as e:
        raise DecodeError("lz4 not installed") from e
    _chunk = lz4.frame.decompress_chunk
    _ctx = lz4.frame.create_decompression_context()
    _block = lz4.block.decompress
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
        ll = token >> 4
        if ll == 15:
            while True:
                if pos >= n:
                    raise DecodeError("truncated stream")
                b = buf[pos]
                pos += 1
                ll += b
                if b != 255:
                    break
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
        ml = token & 15
        if ml == 15:
            while True:
                if pos >= n:
                    raise DecodeError("truncated stream")
                b = buf[pos]
                pos += 1
                ml += b
                if b != 255:
                    break
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


# ---------------------------------------------------------------------------------------------
# Frame format (+ legacy frames and skippable frames, in any sequence)


def _frame_header(data: bytes, pos: int) -> tuple[int, int, int | None, int | None, int]:
    """(FLG, BD, content size or None, dictionary ID or None, header length) of a frame at pos."""
    n = len(data)
    if n - pos < 7:
        raise DecodeError("truncated frame header")
    flg = data[pos + 4]
    bd = data[pos + 5]
    if flg >> 6 != 1:
        raise DecodeError(f"unsupported frame version {flg >> 6}")
    p = pos + 6
    csize = None
    if flg & 0x08:
        if n - p < 8:
            raise DecodeError("truncated frame header")
        csize = u64le(data, p)[0] or None  # LZ4F treats 0 as unknown
        p += 8
    dict_id = None
    if flg & 0x01:
        if n - p < 4:
            raise DecodeError("truncated frame header")
        dict_id = u32le(data, p)[0]
        p += 4
    if p >= n:  # the header checksum byte
        raise DecodeError("truncated frame header")
    return flg, bd, csize, dict_id, p + 1 - pos


def _legacy(data: bytes, pos: int, left: int) -> FrameResult:
    """A legacy frame at pos (no content size), its blocks decoded into at most `left` bytes."""
    block = _block or _load()
    parts: list[bytes] = []
    n = len(data)
    pos += 4
    max_block = _LEGACY_BLOCK + _LEGACY_BLOCK // 255 + 16
    while pos < n:
        if n - pos < 4:
            raise DecodeError("truncated block header")
        csize = u32le(data, pos)[0]
        if csize in (0x184D2204, 0x184C2102) or (csize & 0xFFFFFFF0) == 0x184D2A50:
            break  # the next frame starts here
        if csize > max_block:
            raise DecodeError(f"bad block size {csize}")
        pos += 4
        if n - pos < csize:
            raise DecodeError("truncated stream")
        buf = data[pos : pos + csize]
        pos += csize
        if left == 0:
            return join(parts), pos, None, True
        try:
            # no more than the block can expand to: a 10-byte block does not get 8 MiB
            out = block(buf, uncompressed_size=min(left, _LEGACY_BLOCK, csize * _RATIO + 16))
            cut = False
        except Exception:
            out, cut = _capped_block(buf, left)  # raises the real reason if it is corrupt
        parts.append(out)
        left -= len(out)
        if cut:
            return join(parts), pos, None, True
    return join(parts), pos, None, False


def _frames(data: bytes, cap: int) -> Decoded:
    """Any sequence of LZ4 frames, legacy frames and skippable frames."""
    return frame_sequence(data, cap, "LZ4", _frame_at, skippable_alone_is_empty=False)


def _frame_at(data: bytes, pos: int, left: int, src: Any) -> FrameResult | None:
    if data.startswith(FRAME_MAGIC, pos):
        return _frame(data, pos, left, src)
    if data.startswith(LEGACY_MAGIC, pos):
        return _legacy(data, pos, left)
    return None


def _frame(data: bytes, pos: int, left: int, src: Any) -> FrameResult:
    """One LZ4 frame at pos, with LZ4F's streaming decoder bounded by `left`."""
    if _chunk is None:
        _load()
    chunk = _chunk
    assert chunk is not None
    n = len(data)
    _flg, _bd, csize, dict_id, _hl = _frame_header(data, pos)
    if dict_id:
        raise Undecodable(f"LZ4 frame needs dictionary ID {dict_id}")
    if csize is not None and csize > (n - pos) * _RATIO + 64:
        raise DecodeError(too_big(csize))
    if left == 0:
        return b"", pos, 0, True
    max_len = min(left, csize if csize is not None else (n - pos) * _RATIO + 64)
    try:
        out, read, eof = chunk(_ctx, src, max_length=max_len)
    except Exception as e:
        _abandon()
        raise wrap(e) from None
    if not eof:
        _abandon()  # the context is mid-frame: replace it
        if len(out) == max_len == left and (csize is None or csize > max_len):
            return out, pos + read, csize, True  # stopped by the cap (output may sit in LZ4F's buffer)
        if csize is not None and len(out) == csize and pos + read < n:
            raise DecodeError("content size mismatch")
        raise DecodeError("truncated stream")
    return out, pos + read, csize, False


_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}


class Lz4Frame(Format):
    """LZ4 frame format (lz4.frame.compress, LZ4FrameOutputStream, lz4 CLI)."""

    codec = "lz4"
    container = "frame"
    grade = "A"
    magic = FRAME_MAGIC
    lead_bytes = FRAME_MAGIC[:1] + bytes(range(0x50, 0x60))  # may follow skippable frames

    def matches(self, data: bytes) -> bool:
        if data.startswith(FRAME_MAGIC):
            return True
        pos = skip_skippable(data)
        return 0 < pos and data.startswith(FRAME_MAGIC, pos)

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            # Fast path: one frame at offset 0 with a content size within the cap, no dictionary.
            if len(data) > 15 and data[4] & 0xC9 == 0x48 and data.startswith(FRAME_MAGIC):
                csize = u64le(data, 6)[0]
                if 0 < csize <= cap and csize <= len(data) * _RATIO + 64:
                    if _chunk is None:
                        _load()
                    assert _chunk is not None
                    try:
                        out, read, eof = _chunk(_ctx, data, max_length=csize)
                    except Exception:
                        _abandon()
                        raise
                    if eof and read == len(data):
                        return Decoded(out, False, csize)
                    if not eof:
                        _abandon()
            return _frames(data, cap)
        except DecodeError:
            raise
        except Exception as e:  # defensive: nothing but DecodeError leaves decode()
            raise wrap(e) from None

    def declared_size(self, data: bytes) -> int | None:
        try:
            flg, bd, csize, dict_id, hl = _frame_header(data, 0)
        except (DecodeError, IndexError):
            return None
        block_max = _BLOCK_SIZES.get((bd >> 4) & 7)
        if csize is None or dict_id is not None or block_max is None:
            return None
        # Walk the block sizes to the end mark: a cut or padded value, or a size that its blocks
        # cannot produce, is not trusted.
        n, p, bound = len(data), hl, 0
        while p + 4 <= n:
            word = u32le(data, p)[0]
            p += 4
            if word == 0:
                p += 4 if flg & 0x04 else 0
                return csize if p == n and csize <= bound else None
            size = word & 0x7FFFFFFF
            bound += size if word >> 31 else block_max
            p += size + (4 if flg & 0x10 else 0)
        return None

    def peek(self, data: bytes, n: int) -> bytes | None:
        try:
            import lz4.frame

            return bytes(lz4.frame.LZ4FrameDecompressor().decompress(data, max_length=n))
        except Exception:
            return None

    def headers(self, data: bytes) -> dict[str, object]:
        frames: list[dict[str, object]] = []
        pos = skip_skippable(data)
        if pos < 0 or not data.startswith(FRAME_MAGIC, pos):
            raise DecodeError("no LZ4 frame")
        flg, bd, csize, dict_id, hl = _frame_header(data, pos)
        p = pos + hl
        blocks: list[dict[str, object]] = []
        while p + 4 <= len(data) and len(blocks) < 256:
            word = u32le(data, p)[0]
            if word == 0:
                break
            size = word & 0x7FFFFFFF
            blocks.append({"offset": p, "compressed": not word >> 31, "size": size})
            p += 4 + size + (4 if flg & 0x10 else 0)
        frames.append(
            {
                "offset": pos,
                "FLG": f"0x{flg:02x}",
                "version": flg >> 6,
                "block_independence": bool(flg & 0x20),
                "block_checksum": bool(flg & 0x10),
                "content_size_flag": bool(flg & 0x08),
                "content_checksum": bool(flg & 0x04),
                "dict_id_flag": bool(flg & 0x01),
                "BD": f"0x{bd:02x}",
                "block_max_size": _BLOCK_SIZES.get((bd >> 4) & 7),
                "content_size": csize,
                "dict_id": dict_id,
                "header_checksum": f"0x{data[pos + hl - 1]:02x}",
                "blocks": blocks,
            }
        )
        return {"format": self.label, "frames": frames}


class Lz4Legacy(Format):
    """LZ4 legacy frame (lz4 -l): 8 MiB blocks as [u32 LE size][block]."""

    codec = "lz4"
    container = "legacy"
    grade = "A"
    magic = LEGACY_MAGIC
    lead_bytes = LEGACY_MAGIC[:1] + bytes(range(0x50, 0x60))

    def matches(self, data: bytes) -> bool:
        if data.startswith(LEGACY_MAGIC):
            return True
        pos = skip_skippable(data)
        return 0 < pos and data.startswith(LEGACY_MAGIC, pos)

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            return _frames(data, cap)
        except DecodeError:
            raise
        except Exception as e:
            raise wrap(e) from None

    def headers(self, data: bytes) -> dict[str, object]:
        pos = skip_skippable(data)
        blocks: list[dict[str, object]] = []
        p = pos + 4
        while p + 4 <= len(data) and len(blocks) < 256:
            size = u32le(data, p)[0]
            if size in (0x184D2204, 0x184C2102):
                break
            blocks.append({"offset": p, "size": size})
            p += 4 + size
        return {"format": self.label, "block_max_size": _LEGACY_BLOCK, "blocks": blocks}


# ---------------------------------------------------------------------------------------------
# lz4-java LZ4BlockOutputStream: per block "LZ4Block" + token + i32 LE clen + i32 LE dlen
# + i32 LE XXH32 (seed 0x9747b28c, & 0x0fffffff); an empty block ends the stream.

_LZ4BLOCK_HDR = struct.Struct("<Biii")


class Lz4JavaBlock(Format):
    """lz4-java LZ4BlockOutputStream."""

    codec = "lz4"
    container = "LZ4Block"
    grade = "A"
    magic = LZ4BLOCK_MAGIC

    def decode(self, data: bytes, cap: int) -> Decoded:
        block = _block or _load()
        xxh = _xxh()
        n = len(data)
        pos = 0
        left = cap
        parts: list[bytes] = []
        declared = 0
        truncated = False
        index = 0
        trailing = 0
        while pos < n:
            if not data.startswith(LZ4BLOCK_MAGIC, pos):
                if index == 0:
                    raise DecodeError("bad magic")
                trailing = n - pos  # lz4-java stops at the end block and ignores what follows
                break
            if n - pos < 21:
                raise DecodeError(f"truncated header of block {index}")
            token, clen, dlen, check = _LZ4BLOCK_HDR.unpack_from(data, pos + 8)
            method = token & 0xF0
            if (
                method not in (0x10, 0x20)
                or dlen < 0
                or clen < 0
                or dlen > 1 << (10 + (token & 0x0F))
                or (dlen == 0) != (clen == 0)
                or (method == 0x10 and clen != dlen)
                or dlen > clen * _RATIO + 16  # more than the block can expand to
            ):
                raise DecodeError(f"corrupt header of block {index}")
            pos += 21
            if n - pos < clen:
                raise DecodeError(f"truncated block {index}")
            if dlen:
                if left == 0:
                    truncated = True
                    break
                buf = data[pos : pos + clen]
                if method == 0x10:
                    out = buf[:left]
                    cut = dlen > left
                elif dlen <= left:
                    try:
                        out = block(buf, uncompressed_size=dlen)
                    except Exception as e:
                        raise DecodeError(f"{wrap(e)} in block {index}") from None
                    if len(out) != dlen:
                        raise DecodeError(f"length mismatch in block {index}")
                    cut = False
                else:
                    out, cut = _capped_block(buf, left)
                if xxh is not None and not cut and (xxh(out, seed=_LZ4BLOCK_SEED) & 0x0FFFFFFF) != check:
                    raise DecodeError(f"checksum mismatch in block {index}")
                parts.append(out)
                left -= len(out)
                declared += dlen
                if cut:
                    truncated = True
                    break
            pos += clen
            index += 1
        hdrs: dict[str, object] = {"checksum": "verified" if xxh else "not verified"}
        if trailing:
            hdrs["trailing_bytes"] = trailing
        return Decoded(join(parts), truncated, declared, hdrs)

    def headers(self, data: bytes) -> dict[str, object]:
        blocks: list[dict[str, object]] = []
        pos = 0
        while data.startswith(LZ4BLOCK_MAGIC, pos) and pos + 21 <= len(data) and len(blocks) < 256:
            token, clen, dlen, check = _LZ4BLOCK_HDR.unpack_from(data, pos + 8)
            blocks.append(
                {
                    "offset": pos,
                    "method": {0x10: "raw", 0x20: "lz4"}.get(token & 0xF0, f"0x{token & 0xF0:02x}"),
                    "block_size": 1 << (10 + (token & 0x0F)),
                    "compressed_length": clen,
                    "decompressed_length": dlen,
                    "checksum": f"0x{check & 0xFFFFFFFF:08x}",
                }
            )
            pos += 21 + max(clen, 0)
        return {
            "format": self.label,
            "checksum": "XXH32 seed 0x9747b28c & 0x0fffffff, "
            + ("verified" if _xxh() else "not verified (xxhash not installed)"),
            "blocks": blocks,
        }


# ---------------------------------------------------------------------------------------------
# Raw blocks


class _Lz4Sized(Format):
    """A raw block behind a u32 size prefix; the subclasses say the byte order."""

    codec = "lz4"
    grade = "C"
    #: Byte order of the prefix, and its name for INSPECT.
    little_endian: ClassVar[bool]
    prefix: ClassVar[str]

    def declared(self, data: bytes) -> int:
        return (u32le if self.little_endian else u32be)(data, 0)[0]

    def whole(self, data: bytes, size: int) -> bytes:
        """The block decoded whole (size <= cap); raises DecodeError on any mismatch."""
        return _sized_block(memoryview(data)[4:], size, size)

    def matches(self, data: bytes) -> bool:
        if len(data) < 5:
            return False
        size = self.declared(data)
        payload = len(data) - 4
        return size * 2 + 16 >= payload and size <= payload * _RATIO + 16

    def decode(self, data: bytes, cap: int) -> Decoded:
        if len(data) < 5:
            raise DecodeError("too short")
        size = self.declared(data)
        if size > (len(data) - 4) * _RATIO + 16:
            raise DecodeError(too_big(size))
        if size <= cap:
            return Decoded(self.whole(data, size), False, size)
        out, truncated = _capped_block(memoryview(data)[4:], cap)
        return Decoded(out, truncated, size)

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        n = len(data)
        if n < 5:
            return None
        size = self.declared(data)
        payload = n - 4
        # A block's first sequence must carry literals (token >= 0x10): nothing to copy yet. This
        # also rules out Hadoop streams (their 2nd length is 00 00 xx xx, which liblz4 would read
        # as a zero-literal sequence with offset 0).
        if size * 2 + 16 < payload or size > payload * _RATIO + 16 or (data[4] < 0x10 and size):
            return None
        try:
            if size <= cap:
                return Decoded(self.whole(data, size), False, size)
            out, truncated = _capped_block(memoryview(data)[4:], cap)
        except Exception:
            return None
        return Decoded(out, truncated, size)

    def headers(self, data: bytes) -> dict[str, object]:
        size = self.declared(data) if len(data) >= 4 else None
        return {"format": self.label, "declared_size": size, "size_prefix": self.prefix}


class Lz4SizedLE(_Lz4Sized):
    """Raw block with a u32 LE size prefix (lz4.block.compress default, Cassandra LZ4Compressor)."""

    container = "block"
    little_endian = True
    prefix = "u32 LE"

    def whole(self, data: bytes, size: int) -> bytes:
        block = _block or _load()
        try:
            return block(data)  # python-lz4 reads this prefix itself and checks the decoded length
        except Exception as e:
            raise wrap(e) from None


class Lz4SizedBE(_Lz4Sized):
    """Raw block with a u32 BE size prefix (Cassandra native protocol v4, python driver lz4)."""

    container = "block-be"
    little_endian = False
    prefix = "u32 BE"


class Lz4NoSize(Format):
    """A bare block with no size: nothing to validate against, so only on -d lz4."""

    codec = "lz4"
    container = "block-nosize"
    grade = "D"

    def matches(self, data: bytes) -> bool:
        return False

    def decode(self, data: bytes, cap: int) -> Decoded:
        if not data:
            raise DecodeError("empty value")
        block = _block or _load()
        try:
            return Decoded(block(data, uncompressed_size=min(cap, len(data) * _RATIO + 64)))
        except Exception:
            pass  # too big for the cap, or corrupt: the walk tells which
        out, truncated = _capped_block(data, cap)
        return Decoded(out, truncated)


def _hadoop_chunk(buf: bytes, expected: int, left: int) -> tuple[bytes, bool]:
    block = _block or _load()
    if expected <= left:
        try:
            return block(buf, uncompressed_size=expected), False
        except Exception as e:
            raise wrap(e) from None
    return _capped_block(buf, left)


class Lz4Hadoop(HadoopStream):
    """Hadoop Lz4Codec block stream (lz4 blocks)."""

    codec = "lz4"
    max_ratio = _RATIO
    chunk = staticmethod(_hadoop_chunk)
