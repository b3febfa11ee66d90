"""The raw snappy block (and the cramjam binding, varints and capped block decoding the other
containers share).

cramjam is imported on the first decode, not at import time (shell start-up stays cheap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._common import library, library_prefixes, too_big, wrap
from ..base import Compressor, Container, Decoded, DecodeError
from ..capabilities import Compressors, Headers, TableCompressor, Writer

library_prefixes("snappy: ")  # the library's messages start so; reason() strips it

# cramjam.snappy functions, bound on first use.
_raw: Callable[[Any], Any] | None = None
_framed: Callable[[Any], Any] | None = None


def _load() -> Callable[[Any], Any]:
    global _raw, _framed
    snappy = library("cramjam", "cramjam not installed").snappy
    _framed = snappy.decompress
    _raw = snappy.decompress_raw
    return _raw


def _framed_fn() -> Callable[[Any], Any]:
    if _framed is None:
        _load()
    assert _framed is not None
    return _framed


_WHITESPACE = {9: None, 10: None, 13: None}


#: Most output one input byte can yield: a 3-byte copy-2 tag emits 64 bytes.
def _bound(payload: int) -> int:
    return (payload * 64 + 2) // 3


def _varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    """Snappy's preamble: little-endian base-128 uncompressed length, at most 5 bytes, < 2**32."""
    result = 0
    shift = 0
    end = min(len(data), pos + 5)
    while pos < end:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            if result >= 1 << 32:
                break
            return result, pos
        shift += 7
    raise DecodeError("bad length header")


#: Values up to this size get the tag walk below before being called snappy: random short blobs
#: (UUIDs, hashes) otherwise decode as snappy about 1 in 300,000.
_SHORT = 512


def _tag_step(tag: int) -> int:
    """How far a tag and what it carries move a walk over a block: a literal's length + 2 (its
    tag and bytes), 2 or 3 for a copy; -k for a long literal whose length is in k more bytes; 0
    for what real encoders never write (a copy of 5 bytes, a 2-byte-offset copy shorter than 4)."""
    kind = tag & 3
    if kind == 0:
        ln = tag >> 2
        return ln + 2 if ln < 60 else 59 - ln
    if kind == 1:
        return 2
    return 3 if kind == 2 and tag >= 12 else 0


_TAG_STEPS = tuple(_tag_step(tag) for tag in range(256))


def _encoder_like(data: bytes, pos: int) -> bool:
    """Do the tags look like a real encoder's (Google C++, Go, Rust snap, Java ports)? Within one
    64 KiB block they never emit two literals in a row, copies shorter than 4, or 5-byte copies."""
    n = len(data)
    steps = _TAG_STEPS
    prev_literal = False
    while pos < n:
        tag = data[pos]
        step = steps[tag]
        if tag & 3:  # a copy
            if not step:
                return False
            prev_literal = False
            pos += step
            continue
        if prev_literal:
            return False
        prev_literal = True
        if step > 0:
            pos += step
        else:
            pos += int.from_bytes(data[pos + 1 : pos + 1 - step], "little") + 2 - step
    return pos == n


def declared_length(block: bytes) -> int:
    """The uncompressed length a raw block's preamble declares. Raises DecodeError."""
    return _varint(block)[0]


def _uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _prefix(data: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Walk tags from `pos` until `limit` output bytes are covered: (input cut, output length).

    Used only when the declared length exceeds the cap, so that a bounded prefix (re-headed with
    its own length) can be handed to the native decoder: memory stays ~cap, not ~declared.
    """
    n = len(data)
    out = 0
    while pos < n and out < limit:
        tag = data[pos]
        kind = tag & 3
        if kind == 0:
            ln = tag >> 2
            if ln < 60:
                pos += 1
            else:
                k = ln - 59
                ln = int.from_bytes(data[pos + 1 : pos + 1 + k], "little")
                pos += 1 + k
            ln += 1
            pos += ln
            out += ln
        elif kind == 1:
            out += ((tag >> 2) & 7) + 4
            pos += 2
        elif kind == 2:
            out += (tag >> 2) + 1
            pos += 3
        else:
            out += (tag >> 2) + 1
            pos += 5
    if pos > n:
        raise DecodeError("truncated stream")
    return pos, out


def raw_capped(buf: bytes, left: int) -> tuple[bytes, bool, int]:
    """Decode one raw snappy block to at most `left` bytes: (output, truncated, declared length)."""
    size, p = _varint(buf)
    if size > _bound(len(buf) - p):
        raise DecodeError(too_big(size))
    raw = _raw or _load()
    try:
        if size <= left:
            return bytes(raw(buf)), False, size
        cut, out_len = _prefix(buf, p, left)
        out = bytes(raw(_uvarint_bytes(out_len) + buf[p:cut]))
    except Exception as e:
        raise wrap(e) from None
    return out[:left], True, size


class SnappyRaw(Container, Headers, Compressors, TableCompressor, Writer):
    """A bare snappy block (Snappy.compress, snappy.compress, Go snappy.Encode)."""

    codec = "snappy"
    container = "raw"
    primary = True
    grade = "C"
    tried_by = {"snappy": 40}
    writes_bare = True
    reference = "python-snappy snappy.compress (the block Snappy.compress writes)"

    # The hot path, tried first: a page of snappy JSON. Never with a zero first byte, which
    # declares an empty block.
    trial_priority = 10

    advise_priority = 10
    cassandra_class = "SnappyCompressor"

    def table_compressor(self, options: dict[str, str]) -> Callable[[bytes], bytes]:
        import cramjam

        compress: Callable[[bytes], bytes] = cramjam.snappy.compress_raw
        return compress
    library = "cramjam"

    def write(self, data: bytes, level: int | None) -> bytes:
        import snappy

        return bytes(snappy.compress(data))

    def compressors(self) -> list[Compressor]:
        import cramjam

        snappy = cramjam.snappy
        return [Compressor(self.label, self.codec, snappy.compress_raw, snappy.decompress_raw)]

    def matches(self, data: bytes) -> bool:
        try:
            size, p = _varint(data)
        except DecodeError:
            return False
        payload = len(data) - p
        return payload > 0 and payload <= size * 2 + 16 and size <= _bound(payload)

    def decode(self, data: bytes, cap: int) -> Decoded:
        if not data:
            raise DecodeError("empty value")
        out, truncated, size = raw_capped(data, cap)
        return Decoded(out, truncated, size)

    def ruled_out(self, data: bytes) -> bool:
        # trial()'s first test: the preamble and the sizes a real encoder can write.
        try:
            size, p = _varint(data)
        except DecodeError:
            return True
        payload = len(data) - p
        return size * 2 + 16 < payload or size > (payload * 64 + 2) // 3 or payload == 0

    def trial(self, data: bytes, cap: int) -> Decoded | None:
        # Hot path (a page of snappy JSON): inline short varints, no exception on a miss.
        try:
            b0 = data[0]
            if b0 < 0x80:
                size = b0
                p = 1
            elif data[1] < 0x80:  # 128 B .. 16 KiB
                size = (b0 & 0x7F) | data[1] << 7
                p = 2
            else:
                size, p = _varint(data)
            payload = len(data) - p
            # Real encoders never shrink output below half the encoded size nor exceed 64/3.
            if size * 2 + 16 < payload or size > (payload * 64 + 2) // 3 or payload == 0:
                return None
            if payload == size + 1 and data[p] == (size - 1) << 2 and size <= 60:
                # The whole value is one short literal: nothing was compressed. 1 in 65536 short
                # random blobs (UUIDs, hashes) look like this, so only accept text.
                out = data[p + 1 :]
                if not out.decode("utf-8").translate(_WHITESPACE).isprintable():
                    return None
                return Decoded(out, False, size) if size <= cap else Decoded(out[:cap], True, size)
            if payload <= _SHORT and not _encoder_like(data, p):
                return None
            raw = _raw or _load()
            if size <= cap:
                return Decoded(bytes(raw(data)), False, size)
            out, truncated, size = raw_capped(data, cap)
            return Decoded(out, truncated, size)
        except Exception:  # IndexError on a short value, DecodeError, cramjam's errors
            return None

    def headers(self, data: bytes) -> dict[str, object]:
        size, p = _varint(data)
        return {
            "format": self.label,
            "declared_length": size,
            "length_header_bytes": p,
            "compressed_length": len(data),
            "ratio": round(size / len(data), 3) if data else None,
        }
