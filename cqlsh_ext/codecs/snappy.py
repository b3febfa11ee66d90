"""Snappy family: raw block, framing format, S2 (recognised only), xerial stream, Hadoop blocks.

cramjam is imported on the first decode, not at import time (shell start-up stays cheap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from ._common import HadoopStream, join, reason, too_big, u32be, wrap
from .base import Decoded, DecodeError, Format, Undecodable

#: Read without importing this module (codecs.base.read_declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"snappy": 10}}

# cramjam.snappy functions, bound on first use.
_raw: Callable[[Any], Any] | None = None
_framed: Callable[[Any], Any] | None = None


def _load() -> Callable[[Any], Any]:
    global _raw, _framed
    try:
        import cramjam
    except ImportError as e:  # a broken install must not escape decode() as ImportError
        raise DecodeError("cramjam not installed") from e
    _framed = cramjam.snappy.decompress
    _raw = cramjam.snappy.decompress_raw
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


def _encoder_like(data: bytes, pos: int) -> bool:
    """Do the tags look like a real encoder's (Google C++, Go, Rust snap, Java ports)? Within one
    64 KiB block they never emit two literals in a row, copies shorter than 4, or 5-byte copies."""
    n = len(data)
    prev_literal = False
    while pos < n:
        tag = data[pos]
        kind = tag & 3
        if kind == 0:
            if prev_literal:
                return False
            prev_literal = True
            ln = tag >> 2
            if ln < 60:
                pos += ln + 2
            else:
                k = ln - 59
                pos += int.from_bytes(data[pos + 1 : pos + 1 + k], "little") + 2 + k
        elif kind == 1:
            prev_literal = False
            pos += 2
        elif kind == 2:
            if tag < 12:  # length (tag >> 2) + 1 < 4
                return False
            prev_literal = False
            pos += 3
        else:
            return False
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
    except DecodeError:
        raise
    except Exception as e:
        raise wrap(e) from None
    return out[:left], True, size


class SnappyRaw(Format):
    """A bare snappy block (Snappy.compress, snappy.compress, Go snappy.Encode)."""

    codec = "snappy"
    container = "raw"
    primary = True
    grade = "C"
    tried_by = {"snappy": 40}
    trial_priority = 10

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


# ---------------------------------------------------------------------------------------------
# Framing format (https://github.com/google/snappy/blob/main/framing_format.txt)

_STREAM_ID = b"\xff\x06\x00\x00sNaPpY"
_CHUNK_NAMES = {0x00: "compressed", 0x01: "uncompressed", 0xFE: "padding", 0xFF: "stream identifier"}


def _chunks(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(offset, type, length) of each chunk, lazily; raises DecodeError on a truncated chunk."""
    n = len(data)
    pos = 0
    i = 0
    while pos < n:
        if n - pos < 4:
            raise DecodeError(f"truncated chunk header in chunk {i}")
        typ = data[pos]
        ln = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16
        if pos + 4 + ln > n:
            raise DecodeError(f"truncated stream in chunk {i}")
        yield pos, typ, ln
        pos += 4 + ln
        i += 1


#: Most uncompressed bytes one data chunk of the framing format may hold (framing_format.txt).
CHUNK_MAX = 65536


def _check_chunks(data: bytes) -> None:
    """Every compressed chunk's declared length within the format's 64 KiB and what its payload
    can expand to: read from the headers before cramjam sees the value, so no chunk makes the
    native decoder allocate what it declares (a 25-byte value may declare 4 GiB). Raises DecodeError."""
    n = len(data)
    pos = 10  # after the stream identifier (the magic matched)
    i = 1
    while n - pos >= 4:  # a cut or malformed stream is cramjam's to explain (see _locate)
        ln = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16
        if not data[pos] and ln >= 5 and pos + 4 + ln <= n:
            b = data[pos + 8]
            if b >= 0x80:  # 1-byte lengths (< 128) fit any chunk: no more to check
                try:
                    size = _varint(data, pos + 8)[0]
                except DecodeError:
                    return
                if size > CHUNK_MAX or size > _bound(ln - 4):
                    raise DecodeError(f"chunk {i} declares {size} bytes, more than a chunk can hold")
        pos += 4 + ln
        i += 1


def _chunk_output(data: bytes, pos: int, typ: int, ln: int) -> int:
    """Uncompressed bytes a chunk declares (0 for non-data chunks)."""
    if typ == 0x00:
        if ln < 5:
            raise DecodeError("bad compressed chunk")
        return _varint(data, pos + 8)[0]
    if typ == 0x01:
        return max(ln - 4, 0)
    return 0


class SnappyFramed(Format):
    """Snappy framing format (SnappyFramedOutputStream, snappy.stream_compress, Go NewBufferedWriter)."""

    codec = "snappy"
    container = "framed"
    grade = "A"
    magic = _STREAM_ID
    tried_by = {"snappy": 10}
    signature_priority = 50

    def decode(self, data: bytes, cap: int) -> Decoded:
        framed = _framed_fn()
        _check_chunks(data)
        # Chunks hold at most 64 KiB each and expand at most 64/3, so small inputs cannot pass
        # the cap: hand them to cramjam (which verifies every masked CRC-32C) untouched.
        if len(data) * 22 <= cap:
            try:
                return Decoded(bytes(framed(data)))
            except Exception as e:
                raise self._locate(data, e) from None
        total = 0
        end = len(data)
        for pos, typ, ln in _chunks(data):
            if total >= cap:
                end = pos
                break
            total += _chunk_output(data, pos, typ, ln)
        try:
            out = bytes(framed(data[:end] if end < len(data) else data))
        except Exception as e:
            raise self._locate(data, e) from None
        truncated = end < len(data) or len(out) > cap
        return Decoded(out[:cap] if len(out) > cap else out, truncated)

    def _locate(self, data: bytes, exc: Exception) -> DecodeError:
        """Name the failing chunk: re-decode chunk by chunk, in order (error path only)."""
        framed = _framed_fn()
        try:
            for i, (pos, typ, ln) in enumerate(_chunks(data)):
                if i == 0 or typ == 0xFF:
                    if data[pos : pos + 10] != _STREAM_ID:
                        return DecodeError(f"bad stream identifier in chunk {i}")
                    continue
                if 0x02 <= typ <= 0x7F:
                    return DecodeError(f"reserved chunk type 0x{typ:02x} in chunk {i}")
                try:
                    framed(_STREAM_ID + data[pos : pos + 4 + ln])
                except Exception as e:
                    return DecodeError(f"{reason(e)} in chunk {i}")
        except DecodeError as e:
            return e
        return wrap(exc)

    def headers(self, data: bytes) -> dict[str, object]:
        chunks = []
        for pos, typ, ln in islice(_chunks(data), 256):
            entry: dict[str, object] = {
                "offset": pos,
                "type": f"0x{typ:02x}",
                "kind": _CHUNK_NAMES.get(typ, "skippable" if typ >= 0x80 else "reserved"),
                "length": ln,
            }
            if typ in (0x00, 0x01) and ln >= 4:
                entry["masked_crc32c"] = f"0x{int.from_bytes(data[pos + 4 : pos + 8], 'little'):08x}"
                entry["uncompressed_length"] = _chunk_output(data, pos, typ, ln)
            chunks.append(entry)
        return {"format": self.label, "chunks": chunks}


class S2Framed(Format):
    """Go klauspost S2 stream: same layout as the framing format, not snappy-decodable."""

    codec = "snappy"
    container = "s2"
    grade = "A"
    magic = b"\xff\x06\x00\x00S2sTwO"
    tried_by = {"snappy": 20}
    signature_priority = 60

    def decode(self, data: bytes, cap: int) -> Decoded:
        raise Undecodable("S2 stream (Go klauspost s2): cannot decode here")

    def headers(self, data: bytes) -> dict[str, object]:
        chunks = [
            {"offset": p, "type": f"0x{t:02x}", "length": ln} for p, t, ln in islice(_chunks(data), 256)
        ]
        return {"format": self.label, "note": "S2, cannot decode here", "chunks": chunks}


# ---------------------------------------------------------------------------------------------
# xerial snappy-java SnappyOutputStream: 16-byte header, then [int32 BE length][raw block]...

_XERIAL = b"\x82SNAPPY\x00"


class SnappyXerial(Format):
    """snappy-java SnappyOutputStream (also Kafka's snappy)."""

    codec = "snappy"
    container = "xerial"
    grade = "A"
    magic = _XERIAL
    tried_by = {"snappy": 30}
    signature_priority = 70

    def matches(self, data: bytes) -> bool:
        return len(data) >= 16 and data.startswith(_XERIAL)

    def decode(self, data: bytes, cap: int) -> Decoded:
        n = len(data)
        if n < 16:
            raise DecodeError("truncated header")
        pos = 16
        left = cap
        parts: list[bytes] = []
        declared = 0
        truncated = False
        block = 0
        while pos < n:
            if data.startswith(_XERIAL, pos):  # concatenated streams repeat the header
                pos += 16
                continue
            if n - pos < 4:
                raise DecodeError(f"truncated block header in block {block}")
            ln = u32be(data, pos)[0]
            pos += 4
            if ln > n - pos:
                raise DecodeError(f"truncated stream in block {block}")
            try:
                out, cut, size = raw_capped(data[pos : pos + ln], left)
            except DecodeError as e:
                raise DecodeError(f"{e} in block {block}") from None
            pos += ln
            declared += size
            parts.append(out)
            left -= len(out)
            block += 1
            if cut or (left == 0 and pos < n):
                truncated = True
                break
        return Decoded(join(parts), truncated, declared)

    def headers(self, data: bytes) -> dict[str, object]:
        if len(data) < 16:
            raise DecodeError("truncated header")
        blocks: list[dict[str, object]] = []
        pos = 16
        while pos + 4 <= len(data) and len(blocks) < 256:
            if data.startswith(_XERIAL, pos):
                pos += 16
                continue
            ln = u32be(data, pos)[0]
            entry: dict[str, object] = {"offset": pos, "length": ln}
            try:
                entry["uncompressed_length"] = _varint(data, pos + 4)[0]
            except DecodeError:
                pass
            blocks.append(entry)
            pos += 4 + ln
        return {
            "format": self.label,
            "version": u32be(data, 8)[0],
            "compatible_version": u32be(data, 12)[0],
            "blocks": blocks,
        }


# ---------------------------------------------------------------------------------------------
# Hadoop BlockCompressorStream with SnappyCodec: no magic, lengths checked exactly.


def _hadoop_chunk(buf: bytes, expected: int, left: int) -> tuple[bytes, bool]:
    size, _ = _varint(buf)
    if size > expected:
        raise DecodeError("chunk longer than its block")
    out, truncated, _ = raw_capped(buf, left)
    return out, truncated


class SnappyHadoop(HadoopStream):
    """Hadoop SnappyCodec block stream (raw snappy blocks)."""

    codec = "snappy"
    max_ratio = 22
    chunk = staticmethod(_hadoop_chunk)
    tried_by = {"snappy": 50}
    trial_priority = 30
    trial_zero_priority = 20

    def raw_bound(self, stored: int) -> int:
        return _bound(stored)  # snappy's own expansion limit, tighter than max_ratio


# One instance per format (formats are stateless), in the order all_formats() lists them.
SNAPPY_RAW = SnappyRaw()
SNAPPY_FRAMED = SnappyFramed()
S2_FRAMED = S2Framed()
SNAPPY_XERIAL = SnappyXerial()
SNAPPY_HADOOP = SnappyHadoop()

FORMATS: tuple[Format, ...] = (SNAPPY_FRAMED, S2_FRAMED, SNAPPY_XERIAL, SNAPPY_RAW, SNAPPY_HADOOP)
