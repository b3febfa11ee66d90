"""LZ4 frame format (+ skippable frames, concatenation) and the legacy frame."""

from __future__ import annotations

import threading
from typing import Any

from .._common import FrameResult, frame_sequence, join, reason, skip_skippable, too_big, u32le, u64le, wrap
from ..base import Compressor, Container, Decoded, DecodeError, Undecodable
from ..capabilities import Checksums, Compressors, Headers, HeaderSized, NotWritten, Writer
from ..checks import MAX_CHECKS, NOT_CHECKED, Check, compare, hex_
from . import _native
from ._native import _LEGACY_BLOCK, _RATIO, FRAME_MAGIC, LEGACY_MAGIC, _capped_block

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


#: Each thread's frame compressors, by level, begun anew for each value (a frame of its own).
_writing = threading.local()


def _compressor(level: int) -> Any:
    """The streaming compressor, which keeps the 4 MiB block size in the header (the one-shot call
    shrinks it to the value's size), and independent blocks are what lz4-java can read. Flushed
    as it compresses: the same frame, without the output buffer of a whole 4 MiB block that
    compress() otherwise makes for each value (more than compressing a small one costs)."""
    found: dict[int, Any] | None = getattr(_writing, "by_level", None)
    if found is None:
        found = _writing.by_level = {}
    frame = found.get(level)
    if frame is None:
        import lz4.frame

        frame = found[level] = lz4.frame.LZ4FrameCompressor(
            block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False, compression_level=level,
            auto_flush=True)
    return frame


def _legacy(data: bytes, pos: int, left: int) -> FrameResult:
    """A legacy frame at pos (no content size), its blocks decoded into at most `left` bytes."""
    block = _native._block or _native._load()
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
    if _native._chunk is None:
        _native._load()
    chunk = _native._chunk
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
        out, read, eof = chunk(_native._ctx, src, max_length=max_len)
    except Exception as e:
        _native._abandon()
        raise wrap(e) from None
    if not eof:
        _native._abandon()  # the context is mid-frame: replace it
        if len(out) == max_len == left and (csize is None or csize > max_len):
            return out, pos + read, csize, True  # stopped by the cap (output may sit in LZ4F's buffer)
        if csize is not None and len(out) == csize and pos + read < n:
            raise DecodeError("content size mismatch")
        raise DecodeError("truncated stream")
    return out, pos + read, csize, False


_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}


class Lz4Frame(Container, Headers, Checksums, HeaderSized, Compressors, Writer):
    """LZ4 frame format (lz4.frame.compress, LZ4FrameOutputStream, lz4 CLI)."""

    codec = "lz4"
    container = "frame"
    writes_bare = True
    reference = ("python-lz4's frame compressor with lz4-java LZ4FrameOutputStream's defaults (4 MiB "
                 "independent blocks, no content size or checksum): lz4-java's bytes")
    level_range = (0, 16)
    grade = "A"
    magic = FRAME_MAGIC
    lead_bytes = FRAME_MAGIC[:1] + bytes(range(0x50, 0x60))  # may follow skippable frames
    tried_by = {"lz4": 10}
    signature_priority = 20
    header_sized_from = 256 << 10  # peeking decodes a whole block: only values of several gain

    library = "lz4"

    def write(self, data: bytes, level: int | None) -> bytes:
        frame = _compressor(level or 0)
        try:
            return bytes(frame.begin() + frame.compress(data) + frame.flush())
        except BaseException:
            frame.reset()  # (begun and never flushed: the next value begins a frame of its own)
            raise

    def compressors(self) -> list[Compressor]:
        import lz4.frame

        return [Compressor(self.label, self.codec, lz4.frame.compress, lz4.frame.decompress)]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """Header checksum, block checksums (XXH32 of the stored block), content XXH32; blocks decoded
        one by one."""
        import lz4.block
        import xxhash

        checks: list[Check] = []
        pos = skip_skippable(data)
        left = cap
        frame = 0
        while 0 <= pos < len(data) and data.startswith(b"\x04\x22\x4d\x18", pos) and len(checks) < MAX_CHECKS:
            prefix = f"frame {frame}: " if frame else ""
            flg, bd = data[pos + 4], data[pos + 5]
            hl = 7 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
            checks.append(
                compare(
                    f"{prefix}header checksum (XXH32 >> 8)",
                    data[pos + hl - 1],
                    (xxhash.xxh32_intdigest(data[pos + 4 : pos + hl - 1]) >> 8) & 0xFF,
                    2,
                )
            )
            max_block = _BLOCK_SIZES.get((bd >> 4) & 7, 4 << 20)
            p = pos + hl
            content = xxhash.xxh32()
            window = b""
            block = 0
            capped = False
            broken: str | None = None
            while True:
                word = u32le(data, p)[0]
                p += 4
                if word == 0:
                    break
                size = word & 0x7FFFFFFF
                raw = data[p : p + size]
                if len(raw) < size:
                    raise DecodeError(f"block {block} cut short")
                p += size
                if flg & 0x10:
                    if len(checks) < MAX_CHECKS:
                        checks.append(
                            compare(
                                f"{prefix}block {block} checksum (XXH32)",
                                u32le(data, p)[0],
                                xxhash.xxh32_intdigest(raw),
                            )
                        )
                    p += 4
                if not capped and not broken:
                    try:
                        if word >> 31:
                            out = raw
                        elif flg & 0x20:  # independent blocks
                            # at most one block's maximum (<= 4 MiB), whatever the data claims
                            out = lz4.block.decompress(raw, uncompressed_size=max_block)
                        else:  # linked blocks: the previous 64 KiB are the dictionary
                            out = lz4.block.decompress(raw, uncompressed_size=max_block, dict=window)
                            window = (window + out)[-(64 << 10) :]
                    except Exception as err:  # LZ4BlockError on a corrupt block: its checksum still shows
                        broken = f"block {block} does not decode: {reason(err)}"
                    else:
                        content.update(out)
                        left -= len(out)
                        capped = left < 0
                block += 1
            if flg & 0x04:
                what = f"{prefix}content checksum (XXH32)"
                if capped or broken:
                    checks.append(Check(what, NOT_CHECKED, hex_(u32le(data, p)[0]),
                                        detail=broken or "output cap reached"))
                else:
                    checks.append(compare(what, u32le(data, p)[0], content.intdigest()))
                p += 4
            elif not flg & 0x10:
                checks.append(Check(f"{prefix}content checksum", NOT_CHECKED,
                                    detail="not set by the producer"))
            pos = skip_skippable(data, p)
            frame += 1
        return checks

    def matches(self, data: bytes) -> bool:
        return data.startswith(FRAME_MAGIC) or (  # or after skippable frames
            0 < (pos := skip_skippable(data)) and data.startswith(FRAME_MAGIC, pos))

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            # Fast path: one frame at offset 0 with a content size within the cap, no dictionary.
            if len(data) > 15 and data[4] & 0xC9 == 0x48 and data.startswith(FRAME_MAGIC):
                csize = u64le(data, 6)[0]
                if 0 < csize <= cap and csize <= len(data) * _RATIO + 64:
                    if _native._chunk is None:
                        _native._load()
                    assert _native._chunk is not None
                    try:
                        out, read, eof = _native._chunk(_native._ctx, data, max_length=csize)
                    except Exception:
                        _native._abandon()
                        raise
                    if eof and read == len(data):
                        return Decoded(out, False, csize)
                    if not eof:
                        _native._abandon()
            return _frames(data, cap)
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


class Lz4Legacy(Container, Headers, NotWritten):
    """LZ4 legacy frame (lz4 -l): 8 MiB blocks as [u32 LE size][block]."""

    codec = "lz4"
    container = "legacy"
    unwritable = "the legacy frame is not written here (lz4 -l)"
    grade = "A"
    magic = LEGACY_MAGIC
    lead_bytes = LEGACY_MAGIC[:1] + bytes(range(0x50, 0x60))
    tried_by = {"lz4": 20}
    signature_priority = 30

    def matches(self, data: bytes) -> bool:
        return data.startswith(LEGACY_MAGIC) or (  # or after skippable frames
            0 < (pos := skip_skippable(data)) and data.startswith(LEGACY_MAGIC, pos))

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            return _frames(data, cap)
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

