"""Crafted hostile values, one or more per codec container: headers, length prefixes and varints
that declare far more than the value holds, and real bombs made by the real compressors.

Shared by tests/codecs/test_native_limits.py (each value through every path that decodes, in a
child process under a memory limit), test_bombs.py (its builders) and bench/hostile.py (peak
memory and time per value).
Each entry: (name, value, mode) where mode is what the value is decoded as ("auto" or a codec).
"""

from __future__ import annotations

import bz2
import io
import lzma
import struct
import zlib
from collections.abc import Callable

MiB = 1 << 20

#: The issue's reproducer: a framed snappy stream whose one compressed chunk declares 2**32 - 1
#: bytes (cramjam's raw decoder allocated 4 GiB for it in INSPECT's checksum verification).
SNAPPY_FRAMED_4GIB = bytes.fromhex("ff060000734e61507059000b000000000000ffffffff0f0061")


def zstd_bomb(total: int, content_size: bool = True) -> bytes:
    """`total` zero bytes through zstandard, streamed (never held in memory)."""
    import zstandard

    out = io.BytesIO()
    cctx = zstandard.ZstdCompressor(level=1, write_content_size=content_size)
    with cctx.stream_writer(out, size=total if content_size else -1, closefd=False) as w:
        chunk = bytes(MiB)
        for _ in range(total // MiB):
            w.write(chunk)
    return out.getvalue()


def gzip_bomb(total: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(MiB)
    return b"".join([c.compress(chunk) for _ in range(total // MiB)] + [c.flush()])


def lz4_frame_with_header(flg: int, bd: int, fields: bytes, body: bytes) -> bytes:
    """An LZ4 frame with a chosen descriptor and a valid header checksum (found by trying: the
    lz4 package checks it but does not expose XXH32)."""
    import lz4.frame

    for hc in range(256):
        head = b"\x04\x22\x4d\x18" + bytes([flg, bd]) + fields + bytes([hc])
        try:
            lz4.frame.get_frame_info(head + body)
        except RuntimeError:
            continue
        return head + body
    raise AssertionError("no header checksum found")


def xz_with_dictionary(props: int) -> bytes:
    """A real xz stream whose LZMA2 dictionary size property is patched to `props` (36: 1 GiB,
    37: 1.5 GiB), block header CRC-32 recomputed: liblzma reserves the dictionary up front."""
    v = bytearray(lzma.compress(b"hello world" * 10, filters=[{"id": lzma.FILTER_LZMA2, "dict_size": MiB}]))
    size = (v[12] + 1) * 4
    assert v[14:16] == b"\x21\x01", "LZMA2 filter flags expected"
    v[16] = props
    v[12 + size - 4 : 12 + size] = struct.pack("<I", zlib.crc32(bytes(v[12 : 12 + size - 4])))
    return bytes(v)


def lzma_alone_claiming(size: int, dict_size: int = 1 << 30) -> bytes:
    """A .lzma header (dictionary 1 GiB, the most MEMLIMIT allows) declaring `size` bytes."""
    body = lzma.compress(b"x" * 100, format=lzma.FORMAT_ALONE)
    return body[:1] + struct.pack("<IQ", dict_size, size) + body[13:]


def specs() -> list[tuple[str, Callable[[], bytes], str]]:
    import lz4.block
    import lz4.frame
    import snappy

    def lz4_64m() -> bytes:
        return lz4.block.compress(bytes(64 * MiB), store_size=False)

    def legacy() -> bytes:
        block = lz4.block.compress(bytes(8 * MiB), store_size=False)
        return b"\x02\x21\x4c\x18" + (struct.pack("<I", len(block)) + block) * 8

    lz4_frame_body = struct.pack("<I", 0x80000000 | 5) + b"hello" + b"\x00\x00\x00\x00"
    raw_4g = b"\xff\xff\xff\xff\x0f" + b"\x00" * 100  # snappy raw: varint 2**32 - 1
    return [
        ("snappy framed: chunk declaring 4 GiB", lambda: SNAPPY_FRAMED_4GIB, "auto"),
        ("snappy framed: 16 MiB of zeros", lambda: _snappy_framed(bytes(16 * MiB)), "auto"),
        ("snappy raw: varint 2^32-1", lambda: raw_4g, "snappy"),
        ("snappy raw: 32 MiB bomb", lambda: snappy.compress(bytes(32 * MiB)), "auto"),
        (
            "snappy xerial: block declaring 4 GiB",
            lambda: b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(raw_4g)) + raw_4g,
            "auto",
        ),
        (
            "snappy hadoop: raw length 2^32-1",
            lambda: struct.pack(">II", 0xFFFFFFFF, len(raw_4g)) + raw_4g,
            "snappy",
        ),
        (
            "lz4 frame: content size 2^40",
            lambda: lz4_frame_with_header(0x68, 0x40, struct.pack("<Q", 1 << 40), lz4_frame_body),
            "auto",
        ),
        ("lz4 frame: 1 GiB in 16 frames", lambda: lz4.frame.compress(bytes(64 * MiB)) * 16, "auto"),
        ("lz4 block LE: prefix 2^32-1", lambda: struct.pack("<I", 0xFFFFFFFF) + lz4_64m()[:100], "lz4"),
        ("lz4 block LE: 64 MiB bomb", lambda: struct.pack("<I", 64 * MiB) + lz4_64m(), "auto"),
        ("lz4 block BE: 64 MiB bomb", lambda: struct.pack(">I", 64 * MiB) + lz4_64m(), "lz4"),
        ("lz4 block without size: 64 MiB bomb", lz4_64m, "lz4"),
        (
            "lz4 LZ4Block: block declaring 32 MiB from 10 bytes",
            lambda: b"LZ4Block" + struct.pack("<Biii", 0x2F, 10, 32 * MiB, 0) + b"\x1f" + bytes(9),
            "auto",
        ),
        ("lz4 legacy: 8 MiB block of zeros x 8", legacy, "auto"),
        (
            "lz4 hadoop: raw length 2^32-1",
            lambda: struct.pack(">II", 0xFFFFFFFF, 1000) + lz4_64m()[:1000],
            "lz4",
        ),
        (
            "zstd: frame claiming 1 TiB",
            lambda: b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 1 << 40) + b"\x51\x00\x00" + b"0123456789",
            "auto",
        ),
        ("zstd: window descriptor 2^41", lambda: b"\x28\xb5\x2f\xfd\x00\xf8" + b"\x01\x00\x00", "auto"),
        ("zstd: 1 GiB bomb", lambda: zstd_bomb(1024 * MiB), "auto"),
        ("zstd: 256 MiB bomb without content size", lambda: zstd_bomb(256 * MiB, content_size=False), "auto"),
        ("gzip: 1 GiB in 16 members", lambda: gzip_bomb(64 * MiB) * 16, "auto"),
        ("zlib: 64 MiB bomb", lambda: zlib.compress(bytes(64 * MiB), 9), "auto"),
        ("deflate: 64 MiB bomb", lambda: zlib.compress(bytes(64 * MiB), 9)[2:-4], "deflate"),
        ("bzip2: 1 GiB in 64 streams", lambda: bz2.compress(bytes(16 * MiB)) * 64, "auto"),
        ("xz: 64 MiB bomb", lambda: lzma.compress(bytes(64 * MiB), preset=0), "auto"),
        ("xz: dictionary 1.5 GiB", lambda: xz_with_dictionary(37), "auto"),
        ("xz: dictionary 768 MiB", lambda: xz_with_dictionary(35), "auto"),
        (".lzma: declaring 2^40 with a 1 GiB dictionary", lambda: lzma_alone_claiming(1 << 40), "xz"),
        ("brotli: 64 MiB bomb", _brotli_bomb, "brotli"),
    ]


def _brotli_bomb() -> bytes:
    import brotli

    return bytes(brotli.compress(bytes(64 * MiB), quality=1))


def names() -> list[str]:
    """The values' names, without building them."""
    return [name for name, _build, _mode in specs()]


def values() -> list[tuple[str, bytes, str]]:
    """(name, value, mode) of every crafted value (builds the bombs: about a second)."""
    return [(name, build(), mode) for name, build, mode in specs()]


def _snappy_framed(data: bytes) -> bytes:
    import snappy

    out = io.BytesIO()
    snappy.stream_compress(io.BytesIO(data), out)
    return out.getvalue()
