"""zstd frames (with or without content size, concatenated, with skippable frames).

One ZstdDecompressor is created on the first decode and reused for the life of the process:
building a context costs ~8 us, more than decoding a 4 KB value. The shell is single-threaded. A
frame that names a dictionary is read with one context per dictionary of the store
(codecs.dictionaries), made on first use; without the dictionary it is Undecodable, naming the ID.

Trap: `ZstdDecompressor.decompress(b, max_output_size=cap)` ignores the cap when the frame records
its content size (a 16-byte frame claiming 2**40 bytes raises MemoryError). So the content size is
read here first, and frames that could pass the cap are read through `stream_reader(...).read(cap)`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from . import dictionaries, zstd_first
from ._common import (
    FrameResult,
    frame_sequence,
    join,
    library,
    library_prefixes,
    skip_skippable,
    too_big,
    u32le,
    u64le,
    wrap,
)
from .base import UNVERIFIED_DICTIONARY, Compressor, Container, Decoded, DecodeError, Undecodable
from .capabilities import (
    Checksums,
    Compressors,
    Dictionaries,
    DictionaryWriter,
    Headers,
    HeaderSized,
    TableCompressor,
    Writer,
)
from .checks import MAX_CHECKS, NOT_CHECKED, Check, compare, hex_

library_prefixes("zstd decompressor error: ")  # the library's messages start so; reason() strips it

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"zstd": 30}, "example": {"zstd": 1}, "trial": {"zstd": 1},
            "headers": "zstd frame header"}

MAGIC = b"\x28\xb5\x2f\xfd"
_BLOCK_MAX = 128 << 10

#: One decompression context a process, reused (a new one costs ~8 us a value); forgotten after a
#: frame libzstd refused, whose state would otherwise change the next failing value's reason: a
#: value's answer depends on the value only.
_dctx: Any = None
#: Contexts for the store's dictionaries, by dictionary ID (and its raw ones, _raw_dctx below, by
#: SHA-256), for the store's generation; forgotten with _dctx.
_dict_dctx: dict[int, Any] = {}
_dict_generation = [-1]


def _forget() -> None:
    global _dctx
    _dctx = None
    _dict_dctx.clear()
    _raw_dctx.clear()


#: Each thread's compressors, by level: building one costs more than compressing a value of a few
#: KB (a load writes thousands); compress() starts each value afresh, so a value's bytes are those a
#: new compressor writes.
_writing = threading.local()


def _compressor(level: int) -> Any:
    found: dict[int, Any] | None = getattr(_writing, "by_level", None)
    if found is None:
        found = _writing.by_level = {}
    cctx = found.get(level)
    if cctx is None:
        import zstandard

        cctx = found[level] = zstandard.ZstdCompressor(level=level)
    return cctx


def _dictionary_dctx(dict_id: int) -> Any:
    """The context reading frames that name this dictionary: Undecodable, naming the ID, when the
    store does not hold it."""
    if _dict_generation[0] != dictionaries.generation():
        _dict_dctx.clear()
        _dict_generation[0] = dictionaries.generation()
    dctx = _dict_dctx.get(dict_id)
    if dctx is not None:
        return dctx
    entry = dictionaries.zstd(dict_id)
    if entry is None:
        raise Undecodable(f"zstd frame needs dictionary ID {dict_id}")  # not in the store
    import zstandard

    dctx = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
        entry.data, dict_type=zstandard.DICT_TYPE_FULLDICT))
    _dict_dctx[dict_id] = dctx
    return dctx


def _load() -> Any:
    global _dctx
    _dctx = library("zstandard", "zstandard not installed").ZstdDecompressor()
    return _dctx


class _Header:
    __slots__ = ("fhd", "length", "window", "dict_id", "content_size", "checksum", "single_segment")

    def __init__(self, data: bytes, pos: int) -> None:
        n = len(data)
        if n - pos < 6:
            raise DecodeError("truncated frame header")
        fhd = data[pos + 4]
        if fhd & 0x08:
            raise DecodeError("reserved bit set in frame header")
        fcs_flag = fhd >> 6
        single = bool(fhd & 0x20)
        p = pos + 5
        window = 0
        if not single:
            wd = data[p]
            exp = (wd >> 3) + 10
            window = (1 << exp) + ((1 << exp) >> 3) * (wd & 7)
            p += 1
        did_size = (0, 1, 2, 4)[fhd & 3]
        fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
        if n - p < did_size + fcs_size:
            raise DecodeError("truncated frame header")
        self.dict_id = int.from_bytes(data[p : p + did_size], "little") if did_size else 0
        p += did_size
        fcs: int | None = None
        if fcs_size:
            fcs = int.from_bytes(data[p : p + fcs_size], "little") + (256 if fcs_size == 2 else 0)
            p += fcs_size
        self.fhd = fhd
        self.length = p - pos
        self.window = fcs if single else window
        self.content_size = fcs
        self.checksum = bool(fhd & 0x04)
        self.single_segment = single


def _walk(data: bytes, p: int, hdr: _Header) -> tuple[int, int, int]:
    """Follow block headers: (frame end, most output the blocks can produce, block count).

    The bound is exact for raw/RLE blocks and 128 KiB (or the window) per compressed block, so a
    lying content size is caught without decoding, and a bomb's size is known up front.
    """
    n = len(data)
    block_max = min(hdr.window or _BLOCK_MAX, _BLOCK_MAX)
    bound = 0
    count = 0
    while True:
        if n - p < 3:
            raise DecodeError("truncated stream")
        h = data[p] | data[p + 1] << 8 | data[p + 2] << 16
        btype = (h >> 1) & 3
        size = h >> 3
        count += 1
        if btype == 0:
            p += 3 + size
            bound += size
        elif btype == 1:
            p += 4
            bound += size
        elif btype == 2:
            p += 3 + size
            bound += block_max
        else:
            raise DecodeError("reserved block type")
        if p > n:
            raise DecodeError("truncated stream")
        if h & 1:
            break
    if hdr.checksum:
        p += 4
        if p > n:
            raise DecodeError("truncated stream")
    return p, bound, count


def _single_frame_bound(data: bytes, p: int, wd: int) -> int:
    """Most output of a frame at offset 0 without content size or dictionary, whose blocks start
    at p, if it ends exactly at the end of `data`; otherwise a huge number (take the slow path)."""
    exp = (wd >> 3) + 10
    block_max = min((1 << exp) + ((1 << exp) >> 3) * (wd & 7), _BLOCK_MAX)
    n = len(data)
    bound = 0
    while p + 3 <= n:
        h = data[p] | data[p + 1] << 8 | data[p + 2] << 16
        btype = h & 6
        if btype == 2:  # RLE
            p += 4
            bound += h >> 3
        else:
            p += 3 + (h >> 3)
            bound += h >> 3 if btype == 0 else block_max
        if h & 1:
            if data[4] & 4:
                p += 4
            return bound if p == n else 1 << 62
    return 1 << 62


def _whole(dctx: Any, src: Any) -> tuple[bytes, int]:
    """Decode one frame whose output is known to fit: (output, bytes consumed)."""
    obj = dctx.decompressobj()
    out = obj.decompress(src)
    if not obj.eof:
        raise DecodeError("truncated stream")
    return out, len(src) - len(obj.unused_data)


#: What a frame that names no dictionary and that libzstd refuses says when it decodes (past
#: its structure) only with a dictionary and none of the store's raw dictionaries reads it.
NEEDS_DICTIONARY = "zstd frame needs a dictionary (none named in the frame)"
#: The zero-filled raw dictionary that tells such a frame from a corrupt one (made on first use).
_probe_dctx: list[Any] = []
#: Contexts for the store's raw dictionaries, by SHA-256, for the store's generation.
_raw_dctx: dict[bytes, Any] = {}
_raw_generation = [-1]


def raw_dictionary_dctx(entry: dictionaries.Dictionary) -> Any:
    """The context reading frames made with `entry`'s bytes as a raw-content dictionary (a frame
    naming no dictionary, an RFC 9842 dcz value)."""
    if _raw_generation[0] != dictionaries.generation():
        _raw_dctx.clear()
        _raw_generation[0] = dictionaries.generation()
    dctx = _raw_dctx.get(entry.sha256)
    if dctx is None:
        import zstandard

        dctx = _raw_dctx[entry.sha256] = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
            entry.data, dict_type=zstandard.DICT_TYPE_RAWCONTENT))
    return dctx


def _needs_dictionary(frame: Any, cap: int, refused: Exception) -> bool:
    """Whether a frame libzstd `refused` without a dictionary reads with a raw dictionary of
    zeros as large as any the store may hold: its matches then all land (in zeros), so what it
    lacked was its dictionary's content; a corrupt frame fails all the same. A frame refused for
    its checksum alone was read whole without a dictionary: corrupt. (Read with zeros, a checksum
    cannot match: that fault alone then also means a dictionary.)"""
    import zstandard

    if _CHECKSUM_FAULT in str(refused):
        return False

    if not _probe_dctx:
        _probe_dctx.append(zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
            bytes(dictionaries.MAX_BYTES), dict_type=zstandard.DICT_TYPE_RAWCONTENT)))
    try:
        with _probe_dctx[0].stream_reader(frame) as reader:
            reader.read(max(cap, 1))
    except zstandard.ZstdError as err:
        return _CHECKSUM_FAULT in str(err)
    return True


#: libzstd's words for a content checksum that does not match ("Restored data doesn't match checksum").
_CHECKSUM_FAULT = "checksum"


def _frames(data: bytes, cap: int, named: dictionaries.Dictionary | None = None) -> Decoded:
    """The frames of `data`; with `named`, each read with that raw dictionary (a dcz value's).
    A frame read with one of the store's raw dictionaries says which in the Decoded's headers; a
    frame read with any dictionary and no checksum makes the output unverified."""
    used: list[dictionaries.Dictionary] = []
    unchecked: list[int] = []

    def frame_at(data: bytes, pos: int, left: int, src: Any) -> FrameResult | None:
        return _frame_at(data, pos, left, src, named, used, unchecked)

    decoded = frame_sequence(data, cap, "zstd", frame_at, skippable_alone_is_empty=True)
    if used and named is None:
        _say_raw(decoded, used[0])
    if unchecked:
        decoded.unverified = UNVERIFIED_DICTIONARY
    return decoded


def _say_raw(decoded: Decoded, entry: dictionaries.Dictionary) -> None:
    """INSPECT's header line on a value read with one of the store's raw dictionaries."""
    decoded.headers["dictionary"] = (f"{entry.describe_by_hash()}: a raw dictionary, tried as the frame "
                                     "names none")


def _refused_value(data: bytes, cap: int, refused: Exception) -> Decoded:
    """A value of one frame naming no dictionary that libzstd refused: read with the first of the
    store's raw dictionaries that reads it whole; else Undecodable(NEEDS_DICTIONARY) when only a
    dictionary is wanting (_needs_dictionary), or libzstd's own reason."""
    def attempt(entry: dictionaries.Dictionary) -> Decoded:
        decoded = _frames(data, cap, entry)
        _say_raw(decoded, entry)
        return decoded

    if _CHECKSUM_FAULT in str(refused):
        raise wrap(refused)  # read whole without a dictionary, but not what was written: corrupt
    found = _one_raw_reading(attempt, bool(data[4] & 0x04))
    if found is not None:
        return found
    if _needs_dictionary(data, cap, refused):
        raise Undecodable(NEEDS_DICTIONARY)
    raise wrap(refused)


_T = TypeVar("_T")


def _one_raw_reading(attempt: Callable[[dictionaries.Dictionary], _T], checksum: bool) -> _T | None:
    """The reading of a frame that names no dictionary with the store's raw dictionary that reads
    it: the first whose output matches the frame's checksum; without a checksum the only one that
    reads it at all (a raw dictionary of the right size reads any such frame into something, so
    two that do cannot be told apart: Undecodable, naming them). None when none reads it."""
    readings: list[tuple[dictionaries.Dictionary, _T]] = []
    for entry in dictionaries.raw():
        try:
            reading = attempt(entry)
        except Exception:
            _forget()
            continue
        if checksum:
            return reading
        readings.append((entry, reading))
    if len(readings) > 1:
        sources = ", ".join(entry.source for entry, _ in readings[:3])
        raise Undecodable(f"zstd frame names no dictionary and has no checksum; {len(readings)} loaded raw "
                          f"dictionaries read it ({sources}): which is its own cannot be told")
    return readings[0][1] if readings else None


def read_with_raw_dictionary(data: bytes, cap: int, entry: dictionaries.Dictionary) -> Decoded:
    """The zstd frames of `data` read with `entry` as their raw-content dictionary (an RFC 9842
    dcz value's body); DecodeError."""
    try:
        return _frames(data, cap, entry)
    except Exception as e:
        _forget()
        raise wrap(e) from None


def _frame_at(data: bytes, pos: int, left: int, src: Any, named: dictionaries.Dictionary | None,
              used: list[dictionaries.Dictionary], unchecked: list[int]) -> FrameResult | None:
    """One zstd frame at pos: read with the dictionary it names, or `named`'s raw one; one that
    names none and that libzstd refuses is read again with each raw dictionary of the store. A
    frame read with a dictionary and no checksum has its offset added to `unchecked`."""
    if not data.startswith(MAGIC, pos):
        return None
    hdr = _Header(data, pos)
    if (hdr.dict_id or named is not None) and not hdr.checksum:
        unchecked.append(pos)
    if hdr.dict_id:
        return _frame_with(_dictionary_dctx(hdr.dict_id), data, pos, left, src, hdr)
    if named is not None:
        return _frame_with(raw_dictionary_dctx(named), data, pos, left, src, hdr)
    try:
        return _frame_with(_dctx or _load(), data, pos, left, src, hdr)
    except DecodeError:
        raise  # the frame's own structure: no dictionary changes it
    except Exception as refused:
        _forget()
        if _CHECKSUM_FAULT in str(refused):
            raise wrap(refused) from None  # read whole without a dictionary: corrupt

        def attempt(entry: dictionaries.Dictionary) -> tuple[FrameResult, dictionaries.Dictionary]:
            return _frame_with(raw_dictionary_dctx(entry), data, pos, left, src, hdr), entry

        found = _one_raw_reading(attempt, hdr.checksum)
        if found is not None:
            used.append(found[1])
            if not hdr.checksum:
                unchecked.append(pos)
            return found[0]
        end = _walk(data, pos + hdr.length, hdr)[0]
        if _needs_dictionary(memoryview(src)[: end - pos], left, refused):
            raise Undecodable(NEEDS_DICTIONARY) from None
        raise wrap(refused) from None


def _frame_with(dctx: Any, data: bytes, pos: int, left: int, src: Any, hdr: _Header) -> FrameResult:
    """One zstd frame at pos, decoded with `dctx` whole when its output provably fits under `left`."""
    fcs = hdr.content_size
    if left == 0:
        return b"", pos, 0, True
    if fcs is not None and fcs <= left:
        # libzstd enforces the declared size, so the output cannot exceed it
        out, used = _whole(dctx, src)
        return out, pos + used, fcs, False
    end, bound, _ = _walk(data, pos + hdr.length, hdr)
    if fcs is not None and fcs > bound:
        raise DecodeError(too_big(fcs))
    if bound <= left:
        out, _used = _whole(dctx, src)
        return out, end, fcs, False
    reader = dctx.stream_reader(memoryview(src)[: end - pos])
    pieces = []
    got = 0
    while got < left:
        piece = reader.read(left - got)
        if not piece:
            break
        pieces.append(piece)
        got += len(piece)
    out = join(pieces)
    if got >= left and reader.read(1):
        return out, end, fcs, True
    if fcs is not None and got != fcs:
        raise DecodeError("content size mismatch")
    return out, end, fcs, False


class ZstdFrame(Container, Headers, Checksums, HeaderSized, Compressors, Dictionaries, TableCompressor,
                Writer, DictionaryWriter):
    """zstd frame (zstd-jni Zstd.compress, Python zstandard, Go klauspost, zstd CLI)."""

    codec = "zstd"
    container = "frame"
    primary = True
    grade = "A"
    magic = MAGIC
    lead_bytes = MAGIC[:1] + bytes(range(0x50, 0x60))  # may follow skippable frames
    tried_by = {"zstd": 10}
    signature_priority = 10
    header_sized_from = 256 << 10  # peeking decodes a whole block: only values of several gain


    advise_priority = 30
    library = "zstandard"
    levels = (-1, 1, 3, 9, 19)

    writes_bare = True
    reference = "zstandard ZstdCompressor(level=3).compress (content size, no checksum; as zstd-jni)"
    level_range = (-131072, 22)  # libzstd's

    dictionary_level = 3

    def write(self, data: bytes, level: int | None) -> bytes:
        return bytes(_compressor(3 if level is None else level).compress(data))

    def train_dictionary(
        self, samples: list[bytes], size: int, level: int
    ) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
        import zstandard

        d = _trained(samples, size)
        cctx = zstandard.ZstdCompressor(level=level, dict_data=d)
        dctx = zstandard.ZstdDecompressor(dict_data=d)
        return cctx.compress, dctx.decompress

    def trained_dictionary(self, samples: list[bytes], size: int) -> bytes:
        return bytes(_trained(samples, size).as_bytes())

    dictionary_kind = dictionaries.ZSTD

    def dictionary_named(self, data: bytes) -> int | None:
        try:
            return (_Header(data, 0).dict_id or None) if data.startswith(MAGIC) else None
        except DecodeError:
            return None

    def write_with_dictionary(self, data: bytes, level: int | None, dictionary: bytes) -> bytes:
        import zstandard

        d = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_FULLDICT)
        cctx = zstandard.ZstdCompressor(level=3 if level is None else level, dict_data=d)
        return bytes(cctx.compress(data))

    cassandra_class = "ZstdCompressor"

    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        import zstandard

        compress: Callable[[bytes], bytes] = zstandard.ZstdCompressor(
            level=int(options.get("compression_level", 3))).compress
        return compress

    def compressors(self) -> list[Compressor]:
        import zstandard

        dctx = zstandard.ZstdDecompressor()  # reused contexts: what a real application does
        return [
            Compressor(f"{self.label} {level}", self.codec, zstandard.ZstdCompressor(level=level).compress,
                       dctx.decompress, slow=level >= 19)
            for level in self.levels
        ]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """The low 32 bits of XXH64 of each frame's content (checksum flag set): the frame is decoded
        with the flag cleared, so libzstd does not check it."""
        import xxhash

        checks: list[Check] = []
        frames = cast(list[dict[str, Any]], ZSTD.headers(data)["frames"])
        left = cap
        for i, frame in enumerate(frames):
            if len(checks) >= MAX_CHECKS or "FHD" not in frame:
                continue  # skippable frames and trailing bytes carry no checksum
            what = (
                f"frame {i}: content checksum (XXH64, low 32 bits)"
                if len(frames) > 1
                else "content checksum (XXH64, low 32 bits)"
            )
            if not frame["checksum_flag"]:
                checks.append(Check(what, NOT_CHECKED, detail="checksum flag not set by the producer"))
                continue
            if "error" in frame:
                checks.append(Check(what, NOT_CHECKED, detail=str(frame["error"])))
                continue
            if frame.get("dict_id") and dictionaries.zstd(int(frame["dict_id"])) is None:
                checks.append(Check(what, NOT_CHECKED, detail="needs the dictionary"))
                continue
            start, end = int(frame["offset"]), int(frame["offset"]) + int(frame["compressed_size"])
            stored = u32le(data, end - 4)[0]
            # The same frame with the checksum flag cleared and the checksum dropped: decodes without
            # libzstd verifying it, so a mismatch is shown instead of an error.
            body = bytearray(data[start : end - 4])
            body[4] &= ~0x04
            try:
                out = ZSTD.decode(bytes(body), left)
            except DecodeError as err:
                checks.append(Check(what, NOT_CHECKED, hex_(stored), detail=str(err)))
                continue
            if out.truncated:
                checks.append(Check(what, NOT_CHECKED, hex_(stored), detail="output cap reached"))
                break
            left -= len(out.data)
            checks.append(compare(what, stored, xxhash.xxh64_intdigest(out.data) & 0xFFFFFFFF))
        return checks

    def matches(self, data: bytes) -> bool:
        if data.startswith(MAGIC):
            return True
        pos = skip_skippable(data)
        # skippable frames followed by a zstd frame, or by nothing at all (a valid empty stream)
        return 0 < pos and (pos == len(data) or data.startswith(MAGIC, pos))

    def decode(self, data: bytes, cap: int) -> Decoded:
        try:
            # Fast path: one frame at offset 0, no dictionary field, declared size within the
            # cap (libzstd enforces it). Anything else takes the general loop.
            fhd = data[4] if len(data) > 14 else 0x08  # short: let the general path explain
            if not fhd & 0x0B and data.startswith(MAGIC):
                fcs_flag = fhd >> 6
                p = 5 if fhd & 0x20 else 6
                fcs: int | None
                if fcs_flag == 0:
                    fcs = data[p] if fhd & 0x20 else None
                elif fcs_flag == 1:
                    fcs = (data[p] | data[p + 1] << 8) + 256
                elif fcs_flag == 2:
                    fcs = u32le(data, p)[0]
                else:
                    fcs = u64le(data, p)[0]
                if fcs is None:
                    # No declared size: safe when the block headers bound the output under the cap.
                    fits = _single_frame_bound(data, 6, data[5]) <= cap
                else:
                    fits = fcs <= cap
                if fits:
                    obj = (_dctx or _load()).decompressobj()
                    try:
                        out = obj.decompress(data)
                    except Exception as refused:
                        _forget()
                        return _refused_value(data, cap, refused)
                    if obj.eof and not obj.unused_data:
                        return Decoded(out, False, fcs)
            return _frames(data, cap)
        except DecodeError:
            _forget()
            raise
        except Exception as e:
            _forget()
            raise wrap(e) from None

    def declared_size(self, data: bytes) -> int | None:
        try:
            hdr = _Header(data, 0)
            if hdr.dict_id or hdr.content_size is None:
                return None
            end, bound, _blocks = _walk(data, hdr.length, hdr)
        except (DecodeError, IndexError):
            return None
        return hdr.content_size if end == len(data) and hdr.content_size <= bound else None

    def first_byte(self, data: bytes) -> int | None:
        """The content's first byte from the first block's header and first literal (a raw block's
        first byte, an RLE block's, a compressed block's first literal: codecs.zstd_first); None
        for a frame naming a dictionary, one whose first block does not tell, and one carrying a
        content checksum (its decode checks it: such a frame is decoded, not sized unseen)."""
        try:
            if not data.startswith(MAGIC):
                return None
            hdr = _Header(data, 0)
            p = hdr.length
            if hdr.dict_id or hdr.checksum or len(data) - p < 4:
                return None
            h = data[p] | data[p + 1] << 8 | data[p + 2] << 16
            kind, size = (h >> 1) & 3, h >> 3
            if kind == 2:
                block = data[p + 3:p + 3 + size]
                if len(block) != size:
                    return None
                if block and block[0] & 3 == 2:
                    # Huffman-coded literals: libzstd decodes the first block faster than Python
                    # reads their table (6 us against 500 for a small JSON frame), and its first
                    # byte is the first literal wherever it decodes it (tests/codecs/
                    # test_zstd_first.py); where it does not, the tables' reading (the native
                    # core's) tells, so both engines say the same of a damaged frame
                    head = self._first_decoded(data, hdr, bool(h & 1))
                    if head:
                        return head[0]
                return zstd_first.first_literal(block)
            return data[p + 3] if kind < 2 and size else None
        except (DecodeError, IndexError):
            return None

    def _first_decoded(self, data: bytes, hdr: _Header, last: bool) -> bytes | None:
        """libzstd's first decoded byte (None: it refused): the whole frame in one call where its
        first block is its last and its declared size fits a block (the cheapest call), else the
        first block through a stream (peek)."""
        if last and hdr.content_size is not None and hdr.content_size <= _BLOCK_MAX:
            try:
                return bytes((_dctx or _load()).decompress(data)[:1])
            except Exception:
                return None
        return self.peek(data, 1)

    def peek(self, data: bytes, n: int) -> bytes | None:
        try:
            dict_id = _Header(data, 0).dict_id if data.startswith(MAGIC) else 0
            dctx = _dictionary_dctx(dict_id) if dict_id else _dctx or _load()
        except DecodeError:
            return None
        try:
            with dctx.stream_reader(data) as reader:  # decodes the first block only
                return bytes(reader.read(n))
        except Exception:
            _forget()
            return None

    def headers(self, data: bytes) -> dict[str, object]:
        frames: list[dict[str, object]] = []
        pos = 0
        n = len(data)
        while pos < n and len(frames) < 64:
            if data.startswith(MAGIC, pos):
                hdr = _Header(data, pos)
                fhd = hdr.fhd
                entry: dict[str, object] = {
                    "offset": pos,
                    "FHD": f"0x{fhd:02x}",
                    "content_size_field_bytes": (1 if hdr.single_segment else 0, 2, 4, 8)[fhd >> 6],
                    "single_segment": hdr.single_segment,
                    "checksum_flag": hdr.checksum,
                    "dict_id_field_bytes": (0, 1, 2, 4)[fhd & 3],
                    "window_size": hdr.window,
                    "dict_id": hdr.dict_id or None,
                    "content_size": hdr.content_size,
                }
                if hdr.dict_id:
                    entry["dictionary"] = _dictionary_named(hdr.dict_id)
                try:
                    end, bound, count = _walk(data, pos + hdr.length, hdr)
                except DecodeError as e:
                    entry["error"] = str(e)
                    frames.append(entry)
                    break
                entry["blocks"] = count
                entry["compressed_size"] = end - pos
                entry["max_output"] = bound
                frames.append(entry)
                pos = end
            elif 0x50 <= data[pos] <= 0x5F and data.startswith(b"\x2a\x4d\x18", pos + 1):
                nxt = skip_skippable(data, pos)
                end = nxt if nxt > 0 else n
                skip: dict[str, object] = {"offset": pos, "skippable": True, "size": end - pos}
                if data[pos] == 0x5E and data.startswith(_SEEKABLE_MAGIC, end - 4):
                    skip["seek_table"] = True  # the seekable format's: it records the frames' sizes
                frames.append(skip)
                if nxt < 0:
                    break
                pos = nxt
            else:
                frames.append({"offset": pos, "trailing_bytes": n - pos})
                break
        return {"format": self.label, "frames": frames}


#: The seekable format's footer ends its seek table, a skippable frame of magic 0x184D2A5E.
_SEEKABLE_MAGIC = b"\xb1\xea\x92\x8f"


def _trained(samples: list[bytes], size: int) -> Any:
    """python-zstandard's trainer (ZDICT's, deterministic for the same samples); ValueError."""
    import zstandard

    try:
        return zstandard.train_dictionary(size, list[Any](samples))
    except zstandard.ZstdError as err:
        raise ValueError(str(err)) from None


def _dictionary_named(dict_id: int) -> str:
    """INSPECT's line on the dictionary a frame names: which one, from where, or that it is missing."""
    entry = dictionaries.zstd(dict_id)
    return entry.describe() if entry else f"ID {dict_id}: not loaded (--dictionary FILE)"


# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
ZSTD = ZstdFrame()

FORMATS: tuple[Container, ...] = (ZSTD,)
