"""Snappy streams of raw blocks: the xerial (snappy-java) stream and Hadoop SnappyCodec blocks."""

from __future__ import annotations

from .._common import HADOOP_BUFFER, HadoopStream, hadoop_blocks, join, u32be
from ..base import Container, Decoded, DecodeError
from ..capabilities import Headers, Writer
from ._raw import _bound, _varint, raw_capped

# ---------------------------------------------------------------------------------------------
# xerial snappy-java SnappyOutputStream: 16-byte header, then [int32 BE length][raw block]...

_XERIAL = b"\x82SNAPPY\x00"
#: SnappyOutputStream's default block size.
_XERIAL_BLOCK = 32 * 1024


class SnappyXerial(Container, Headers, Writer):
    """snappy-java SnappyOutputStream (also Kafka's snappy)."""

    codec = "snappy"
    container = "xerial"
    grade = "A"
    magic = _XERIAL
    tried_by = {"snappy": 30}
    reference = "snappy-java SnappyOutputStream's layout (32 KiB blocks), blocks by python-snappy"

    signature_priority = 70

    def write(self, data: bytes, level: int | None) -> bytes:
        import snappy

        header = _XERIAL + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")  # version 1, compatible 1
        blocks = (snappy.compress(data[i:i + _XERIAL_BLOCK]) for i in range(0, len(data), _XERIAL_BLOCK))
        return header + b"".join(len(b).to_bytes(4, "big") + bytes(b) for b in blocks)

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


class SnappyHadoop(HadoopStream, Writer):
    """Hadoop SnappyCodec block stream (raw snappy blocks)."""

    codec = "snappy"
    max_ratio = 22
    chunk = staticmethod(_hadoop_chunk)
    tried_by = {"snappy": 50}
    reference = "Hadoop SnappyCodec's BlockCompressorStream (256 KiB buffer), blocks by python-snappy"
    trial_priority = 30
    trial_zero_priority = 20

    def write(self, data: bytes, level: int | None) -> bytes:
        import snappy

        # SnappyCodec's compression overhead: buffer / 6 + 32.
        return hadoop_blocks(data, HADOOP_BUFFER - (HADOOP_BUFFER // 6 + 32),
                             lambda b: bytes(snappy.compress(b)))

    def raw_bound(self, stored: int) -> int:
        return _bound(stored)  # snappy's own expansion limit, tighter than max_ratio
