"""Helpers shared by the format modules: their libraries bound on the first decode, short error
reasons, integer reads, skippable frames.

Pure Python and import-free (no codec library at import time), like base.py.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from importlib import import_module
from typing import Any, ClassVar

from .base import Container, Decoded, DecodeError
from .capabilities import Headers

u32le: Callable[[bytes, int], tuple[int]] = struct.Struct("<I").unpack_from
u32be: Callable[[bytes, int], tuple[int]] = struct.Struct(">I").unpack_from
u64le: Callable[[bytes, int], tuple[int]] = struct.Struct("<Q").unpack_from

#: Skippable frames, shared by two frame formats: magic 0x184D2A50..5F (LE), u32 LE size, payload.
SKIPPABLE_BYTES = b"\x2a\x4d\x18"

# Library messages -> short one-line reasons (first match wins; matched case-insensitively).
_REASONS: tuple[tuple[str, str], ...] = (
    ("contentchecksum", "content checksum mismatch"),
    ("blockchecksum", "block checksum mismatch"),
    ("headerchecksum", "header checksum mismatch"),
    ("bad checksum", "checksum mismatch"),
    ("incorrect data check", "checksum mismatch"),
    ("incorrect length check", "length mismatch (ISIZE)"),
    ("doesn't match checksum", "checksum mismatch"),
    ("checksum", "checksum mismatch"),
    ("ended before the end-of-stream", "truncated stream"),
    ("incomplete or truncated", "truncated stream"),
    ("frame incomplete", "truncated stream"),
    ("memory usage limit", "memory limit exceeded (dictionary too large)"),
    ("dictionary mismatch", "needs a dictionary"),
)
_PREFIXES = [
    "Error -3 while decompressing data: ",
    "Error -5 while decompressing data: ",
    "LZ4F_decompress failed with code: ",
    "LZ4F_getFrameInfo failed with code: ",
    "decompression error: ",
]


def library_prefixes(*prefixes: str) -> None:
    """Have reason() also strip these prefixes its library puts before its messages (a codec
    module names its own library's, at import: an error from it comes after)."""
    _PREFIXES.extend(p for p in prefixes if p not in _PREFIXES)


def library(name: str, missing: str) -> Any:
    """The codec library `name`, imported on a format's first decode (not at import time: shell
    start-up stays cheap); DecodeError(`missing`) where it is not installed or Python was built
    without it (a broken install must not escape decode() as ImportError)."""
    try:
        return import_module(name)
    except ImportError as e:
        raise DecodeError(missing) from e


def reason(exc: BaseException) -> str:
    """A short one-line reason for any library exception."""
    if isinstance(exc, DecodeError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "out of memory (declared size too large?)"
    if isinstance(exc, RecursionError):
        return "too deeply nested"
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    low = line.lower()
    for needle, short in _REASONS:
        if needle in low:
            return short
    for prefix in _PREFIXES:
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line[:120] or type(exc).__name__


def wrap(exc: BaseException) -> DecodeError:
    """The DecodeError to raise for a library exception (DecodeErrors pass through)."""
    if isinstance(exc, DecodeError):
        return exc
    return DecodeError(reason(exc))


def skip_skippable(data: bytes, pos: int = 0) -> int:
    """Offset of the first byte after the skippable frames at `pos`; -1 if one is truncated."""
    n = len(data)
    while n - pos >= 4 and 0x50 <= data[pos] <= 0x5F and data.startswith(SKIPPABLE_BYTES, pos + 1):
        if n - pos < 8:
            return -1
        pos += 8 + u32le(data, pos + 4)[0]
        if pos > n:
            return -1
    return pos


#: A frame decoder's answer for the frame at a position: (output, position after the frame,
#: content size its header declared or None, stopped by the cap).
FrameResult = tuple[bytes, int, "int | None", bool]


def frame_sequence(
    data: bytes,
    cap: int,
    kind: str,
    frame_at: Callable[[bytes, int, int, Any], FrameResult | None],
    skippable_alone_is_empty: bool,
) -> Decoded:
    """Frames one after another, as the frame formats write them (their concatenation is valid too).

    frame_at(data, pos, left, src) decodes the frame starting at pos into at most `left` bytes
    (src: data from pos on, without a copy), or returns None when no frame of this kind starts
    there. Skippable frames (magic 0x184D2A50-5F) are stepped over; once a frame is decoded,
    anything else is reported as trailing bytes. skippable_alone_is_empty: input made only of
    skippable frames decodes to nothing rather than being "no frame" (the formats differ here).
    """
    n = len(data)
    pos = 0
    left = cap
    parts: list[bytes] = []
    declared: int | None = 0
    truncated = False
    frames = 0
    view: memoryview | None = None
    while pos < n:
        if 0x50 <= data[pos] <= 0x5F and data.startswith(SKIPPABLE_BYTES, pos + 1):
            nxt = skip_skippable(data, pos)
            if nxt < 0:
                raise DecodeError("truncated skippable frame")
            pos = nxt
            frames += skippable_alone_is_empty
            continue
        src: Any = data
        if pos:
            if view is None:
                view = memoryview(data)
            src = view[pos:]
        frame = frame_at(data, pos, left, src)
        if frame is None:
            if not frames:
                raise DecodeError(f"no {kind} frame")
            return Decoded(join(parts), truncated, declared, {"trailing_bytes": n - pos})
        out, pos, size, truncated = frame
        parts.append(out)
        left -= len(out)
        frames += 1
        if declared is not None:
            declared = declared + size if size is not None else None
        if truncated:
            break
    if not frames:
        raise DecodeError(f"no {kind} frame (skippable frames only)" if n else f"no {kind} frame")
    return Decoded(join(parts), truncated, declared)


def too_big(declared: int) -> str:
    return f"declared size {declared} exceeds what the input can hold"


def join(parts: list[bytes]) -> bytes:
    """Concatenate decoded pieces without a copy in the common one-piece case (b"" for none)."""
    if len(parts) == 1:
        return parts[0]
    return b"".join(parts)


def hadoop_decode(
    data: bytes,
    cap: int,
    chunk: Callable[[bytes, int, int], tuple[bytes, bool]],
    max_ratio: int,
    trace: list[dict[str, object]] | None = None,
) -> Decoded | str:
    """Hadoop BlockCompressorStream: repeated [u32 BE raw length] then [u32 BE length][chunk]...

    until the chunks of a block have produced its raw length. `chunk(buf, expected, left)` decodes
    one chunk to at most `left` bytes (expected = raw bytes still owed by the block) and returns
    (output, truncated); it raises DecodeError. Returns a reason string when the value is not a
    well-formed stream: the container has no magic, so every length is checked exactly.
    `trace`, when given, receives one {raw_length, chunk_lengths} dict per block (INSPECT).
    """
    n = len(data)
    if n < 8:
        return "too short for a Hadoop block stream"
    pos = 0
    left = cap
    parts: list[bytes] = []
    declared = 0
    truncated = False
    while pos < n:
        if n - pos < 4:
            return "truncated block header"
        raw_len = u32be(data, pos)[0]
        pos += 4
        if raw_len > (n - pos) * max_ratio:
            return too_big(raw_len)
        declared += raw_len
        got = 0
        clens: list[int] = []
        if trace is not None:
            trace.append({"raw_length": raw_len, "chunk_lengths": clens})
        if raw_len == 0 and n - pos >= 4:
            # One Python library writes an empty chunk after a zero raw length (Hadoop stops reading
            # at a zero length): consume it when it is one.
            clen = u32be(data, pos)[0]
            if 0 < clen <= n - pos - 4:
                try:
                    out, _ = chunk(data[pos + 4 : pos + 4 + clen], 0, left)
                except DecodeError:
                    out = b"?"
                if not out:
                    clens.append(clen)
                    pos += 4 + clen
        while got < raw_len:
            if n - pos < 4:
                return "truncated chunk header"
            clen = u32be(data, pos)[0]
            pos += 4
            if clen == 0 or clen > n - pos:
                return "bad chunk length" if clen == 0 else "truncated chunk"
            clens.append(clen)
            if left == 0:
                truncated = True
                break
            try:
                out, cut = chunk(data[pos : pos + clen], raw_len - got, left)
            except DecodeError as e:
                return str(e)
            pos += clen
            parts.append(out)
            got += len(out)
            left -= len(out)
            if cut:
                truncated = True
                break
            if got > raw_len:
                return "chunk longer than its block"
        if truncated:
            break
    return Decoded(join(parts), truncated, declared)


def capped_step(dec: Any, src: Any, left: int) -> tuple[bytes, bool]:
    """Feed one stream to a standard library decompressor object with at most `left` output.

    Returns (output, stopped by the cap); a stream that ends early is a DecodeError.
    """
    out = dec.decompress(src, max_length=left)
    if dec.eof:
        return out, False
    if len(out) >= left:
        return out, True
    raise DecodeError("truncated stream")


def decode_streams(
    data: bytes, cap: int, new_decoder: Callable[[], Any], magic: bytes, padding: bytes = b""
) -> Decoded:
    """Concatenated streams, each through a fresh decompressor, `cap` bytes over all.

    `padding` bytes between streams are skipped (a format's stream padding); anything after the last
    stream that does not start with `magic` is reported as trailing_bytes.
    """
    parts: list[bytes] = []
    left, truncated, trailing = cap, False, 0
    rest: Any = data
    try:
        while True:
            if left <= 0:
                truncated = True
                break
            dec = new_decoder()
            out, truncated = capped_step(dec, rest, left)
            parts.append(out)
            left -= len(out)
            if truncated:
                break
            rest = dec.unused_data.lstrip(padding) if padding else dec.unused_data
            if not rest:
                break
            if not rest.startswith(magic):
                trailing = len(rest)
                break
    except Exception as e:
        raise wrap(e) from None
    return Decoded(join(parts), truncated, None, {"trailing_bytes": trailing} if trailing else {})


#: Hadoop's default io.compression.codec.<name>.buffersize.
HADOOP_BUFFER = 256 * 1024


def hadoop_blocks(data: bytes, max_input: int, compress: Callable[[bytes], bytes]) -> bytes:
    """What BlockCompressorStream writes for one write() of `data`: the length, then each piece of
    at most `max_input` bytes (the buffer less the codec's compression overhead) compressed behind
    its own length."""
    out = bytearray(len(data).to_bytes(4, "big"))
    for i in range(0, len(data), max_input):
        packed = compress(data[i:i + max_input])
        out += len(packed).to_bytes(4, "big") + packed
    return bytes(out)


class HadoopStream(Container, Headers):
    """Hadoop BlockCompressorStream: [u32 BE raw length]([u32 BE length][block])+.

    Subclasses name the codec, its block decoder (`chunk`, a staticmethod for hadoop_decode) and
    `max_ratio`, the most one block can expand, which bounds a plausible raw length.
    """

    container = "hadoop"
    grade = "C"
    max_ratio: ClassVar[int]

    @staticmethod
    def chunk(buf: bytes, expected: int, left: int) -> tuple[bytes, bool]:
        """One block's decoder: (output, truncated); each codec's stream supplies its own."""
        raise NotImplementedError

    def matches(self, data: bytes) -> bool:
        if len(data) < 9:
            return False
        raw_len, clen = u32be(data, 0)[0], u32be(data, 4)[0]
        return 0 < clen <= len(data) - 8 and raw_len <= self.raw_bound(len(data))

    def raw_bound(self, stored: int) -> int:
        """The largest raw length `stored` bytes of this stream can plausibly hold."""
        return stored * self.max_ratio

    def decode(self, data: bytes, cap: int) -> Decoded:
        res = hadoop_decode(data, cap, self.chunk, self.max_ratio)
        if isinstance(res, str):
            raise DecodeError(res)
        return res

    def ruled_out(self, data: bytes) -> bool:
        return not self.matches(data)

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        if not self.matches(data):
            return None
        res = hadoop_decode(data, cap, self.chunk, self.max_ratio)
        return None if isinstance(res, str) else res

    def headers(self, data: bytes) -> dict[str, object]:
        trace: list[dict[str, object]] = []
        hadoop_decode(data, 1 << 16, self.chunk, self.max_ratio, trace)
        return {"format": self.label, "blocks": trace}
