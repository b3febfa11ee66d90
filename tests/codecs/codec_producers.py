"""Producers for the codec tests: real libraries where Python has one, byte-exact builders per
the specifications otherwise (the Java producers live in tests/java and are tested there)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import struct
import zlib
from collections.abc import Callable

import lz4.block
import lz4.frame
import snappy
import zstandard

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java
from cqlsh_ext.demo.samples import snappy_framed
from cqlsh_ext.demo.samples import xerial_stream as xerial


def json_doc(size: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    out = []
    total = 0
    while total < size:
        rec = json.dumps(
            {"id": rng.randint(0, 10**9), "name": f"user{rng.randint(0, 9999)}", "score": rng.random()}
        )
        out.append(rec)
        total += len(rec) + 1
    return ("[" + ",".join(out) + "]").encode()[:size]


def snappy_hadoop(d: bytes) -> bytes:
    return snappy.HadoopStreamCompressor().add_chunk(d)


def lz4_hadoop(d: bytes, block: int = 256 << 10) -> bytes:
    """Hadoop Lz4Codec BlockCompressorStream: [u32 BE raw][u32 BE len][raw LZ4 block]."""
    out = []
    for i in range(0, max(len(d), 1), block):
        piece = d[i : i + block]
        c = lz4.block.compress(piece, store_size=False)
        out.append(struct.pack(">II", len(piece), len(c)) + c)
    return b"".join(out)


def lz4_be(d: bytes) -> bytes:
    """Cassandra protocol v4 / python driver style: u32 BE length + raw block."""
    return struct.pack(">I", len(d)) + lz4.block.compress(d, store_size=False)


def lz4_legacy(d: bytes, block: int = 8 << 20) -> bytes:
    out = [b"\x02\x21\x4c\x18"]
    for i in range(0, len(d), block):
        c = lz4.block.compress(d[i : i + block], store_size=False)
        out.append(struct.pack("<I", len(c)) + c)
    return b"".join(out)


def skippable(payload: bytes = b"meta", nibble: int = 0) -> bytes:
    return struct.pack("<II", 0x184D2A50 | nibble, len(payload)) + payload


def raw_deflate(d: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(d) + c.flush()


def zstd_nosize(d: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_content_size=False).compress(d)


def lzma_alone(d: bytes) -> bytes:
    return lzma.compress(d, format=lzma.FORMAT_ALONE)


# (name, producer, expected label, -d codec, detected automatically)


PRODUCERS: list[tuple[str, Callable[[bytes], bytes], str, str, bool]] = [
    ("snappy.compress", snappy.compress, "snappy", "snappy", True),
    ("snappy.stream_compress", snappy_framed, "snappy/framed", "snappy", True),
    ("snappy hadoop", snappy_hadoop, "snappy/hadoop", "snappy", True),
    ("snappy xerial", xerial, "snappy/xerial", "snappy", True),
    ("lz4.frame.compress", lz4.frame.compress, "lz4/frame", "lz4", True),
    ("lz4.frame no size", lambda d: lz4.frame.compress(d, store_size=False), "lz4/frame", "lz4", True),
    (
        "lz4.frame checksums",
        lambda d: lz4.frame.compress(d, content_checksum=True, block_checksum=True),
        "lz4/frame",
        "lz4",
        True,
    ),
    ("lz4 legacy", lz4_legacy, "lz4/legacy", "lz4", True),
    ("lz4 LZ4Block", lz4_java, "lz4/LZ4Block", "lz4", True),
    ("lz4.block.compress", lz4.block.compress, "lz4/block", "lz4", True),
    ("lz4 BE prefix", lz4_be, "lz4/block-be", "lz4", True),
    ("lz4 hadoop", lz4_hadoop, "lz4/hadoop", "lz4", True),
    ("lz4 no size", lambda d: lz4.block.compress(d, store_size=False), "lz4/block-nosize", "lz4", False),
    ("zstandard", zstandard.ZstdCompressor().compress, "zstd", "zstd", True),
    ("zstandard no size", zstd_nosize, "zstd", "zstd", True),
    ("zstandard checksum", zstandard.ZstdCompressor(write_checksum=True).compress, "zstd", "zstd", True),
    ("gzip", gzip.compress, "gzip", "gzip", True),
    ("zlib", zlib.compress, "zlib", "zlib", True),
    ("zlib level 1", lambda d: zlib.compress(d, 1), "zlib", "zlib", True),
    ("raw deflate", raw_deflate, "deflate", "deflate", False),
    ("bz2", bz2.compress, "bzip2", "bzip2", True),
    ("lzma xz", lzma.compress, "xz", "xz", True),
    ("lzma alone", lzma_alone, "xz/lzma", "xz", True),
]


if brotli is not None:
    PRODUCERS.append(("brotli", brotli.compress, "brotli", "brotli", False))


PAYLOADS = {
    "json4k": json_doc(4096, 1),
    "json200k": json_doc(200_000, 2),
    "random": random.Random(3).randbytes(5000),
    "text": b"The quick brown fox jumps over the lazy dog. " * 3,
}


def printable(b: bytes) -> bool:
    try:
        return b.decode().translate({9: None, 10: None, 13: None}).isprintable()
    except UnicodeDecodeError:
        return False
