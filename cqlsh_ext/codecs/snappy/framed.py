"""The snappy framing format (and S2's, recognised only)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from .._common import reason, u32le, wrap
from ..base import Compressor, Container, Decoded, DecodeError, Undecodable
from ..capabilities import Checksums, Compressors, Headers, NotWritten, Writer
from ..checks import MAX_CHECKS, NOT_CHECKED, Check, compare, crc32c, hex_
from ._raw import _bound, _framed_fn, _varint, declared_length, raw_capped

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


class SnappyFramed(Container, Headers, Checksums, Compressors, Writer):
    """Snappy framing format (SnappyFramedOutputStream, snappy.stream_compress, Go NewBufferedWriter)."""

    codec = "snappy"
    container = "framed"
    grade = "A"
    magic = _STREAM_ID
    tried_by = {"snappy": 10}
    reference = "python-snappy StreamCompressor (the framing format, as SnappyFramedOutputStream)"

    signature_priority = 50

    library = "cramjam"

    def write(self, data: bytes, level: int | None) -> bytes:
        import snappy

        return bytes(snappy.StreamCompressor().add_chunk(data))

    def compressors(self) -> list[Compressor]:
        import cramjam

        return [Compressor(self.label, self.codec, cramjam.snappy.compress, cramjam.snappy.decompress)]

    def verify(self, data: bytes, decoded: Decoded | None, cap: int, error: str | None) -> list[Check]:
        """The masked CRC-32C of each data chunk's uncompressed bytes."""
        checks: list[Check] = []
        pos, index, left = 0, 0, cap
        n = len(data)
        while pos + 4 <= n:
            typ = data[pos]
            ln = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16
            if typ in (0x00, 0x01) and ln >= 4:
                what = f"chunk {index} masked CRC-32C"
                stored = u32le(data, pos + 4)[0]
                body = data[pos + 8 : pos + 4 + ln]
                if typ == 0x00:
                    # raw_capped checks the declared length against what the chunk can hold
                    # and decodes at most the cap: a chunk claiming 4 GiB allocates nothing.
                    try:
                        size = declared_length(body)
                        if size > CHUNK_MAX:
                            raise DecodeError(f"declares {size} bytes, more than a chunk can hold")
                        out, cut, _size = raw_capped(body, max(left, 0) + 1)
                    except DecodeError as err:
                        why = f"does not decode: {err}"
                        checks.append(Check(what, NOT_CHECKED, hex_(stored), detail=why))
                        break
                else:
                    out = body
                left -= len(out)
                if left < 0:
                    checks.append(Check(what, NOT_CHECKED, hex_(stored), detail="output cap reached"))
                    break
                if len(checks) < MAX_CHECKS:
                    checks.append(compare(what, stored, snappy_mask(crc32c(out))))
            pos += 4 + ln
            index += 1
        return checks

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


class S2Framed(Container, Headers, NotWritten):
    """Go klauspost S2 stream: same layout as the framing format, not snappy-decodable."""

    codec = "snappy"
    container = "s2"
    unwritable = "no S2 writer library here"
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


def snappy_mask(crc: int) -> int:
    """The framing format's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8, mod 2**32."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

