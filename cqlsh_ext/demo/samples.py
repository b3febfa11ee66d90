"""One value per container format, made with the real Python producer libraries.

Where Python has no producer library for a container that Java producers write (xerial
`SnappyOutputStream`, lz4-java `LZ4Block`, Java serialization), the bytes are
laid out exactly as those producers write them around a block made by the real codec library.
The test suite compares these layouts with the real Java producers' output.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import zlib
from dataclasses import dataclass

import cramjam
import lz4.block
import lz4.frame
import snappy
import zstandard

from cqlsh_ext.codecs.lz4 import LZ4BLOCK_MAGIC

LZ4BLOCK_SEED = 0x9747B28C
XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


@dataclass(frozen=True)
class DemoSample:
    name: str
    producer: str
    data: bytes
    #: What the auto mode is expected to show: the label chain, 'raw' (plain hex) or 'raw: reason'.
    expect: str


def snappy_raw(payload: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(payload))


def snappy_framed(payload: bytes) -> bytes:
    """The snappy framing format, as python-snappy's stream_compress writes it."""
    out = io.BytesIO()
    snappy.stream_compress(io.BytesIO(payload), out)
    return out.getvalue()


def xerial_stream(payload: bytes, block: int = 32 * 1024) -> bytes:
    """SnappyOutputStream: 16-byte header, then [int32 BE length][raw snappy block] per 32 KiB."""
    out = [XERIAL_HEADER]
    for start in range(0, len(payload), block):
        chunk = snappy_raw(payload[start : start + block])
        out.append(struct.pack(">i", len(chunk)) + chunk)
    return b"".join(out)


def lz4_java_block(payload: bytes, block: int = 64 * 1024) -> bytes:
    """lz4-java LZ4BlockOutputStream: 21-byte headers with XXH32 checksums, ended by an empty block."""
    import xxhash

    level = max(block.bit_length() - 1 - 10, 0)
    out = []
    for start in range(0, len(payload), block):
        raw = payload[start : start + block]
        packed = lz4.block.compress(raw, store_size=False)
        token, body = (0x20, packed) if len(packed) < len(raw) else (0x10, raw)
        check = xxhash.xxh32_intdigest(raw, seed=LZ4BLOCK_SEED) & 0x0FFFFFFF
        out.append(LZ4BLOCK_MAGIC + struct.pack("<Biii", token | level, len(body), len(raw), check) + body)
    out.append(LZ4BLOCK_MAGIC + struct.pack("<Biii", 0x10 | level, 0, 0, 0))
    return b"".join(out)


def java_string(text: str) -> bytes:
    """ObjectOutputStream.writeObject(String): TC_STRING, or TC_LONGSTRING past 65535 bytes."""
    raw = text.replace("\x00", "\ufffd").encode("utf-8")  # no U+0000 or astral chars in demo text
    if len(raw) <= 0xFFFF:
        return b"\xac\xed\x00\x05\x74" + struct.pack(">H", len(raw)) + raw
    return b"\xac\xed\x00\x05\x7c" + struct.pack(">Q", len(raw)) + raw


#: The files `demo load --dictionaries DIR` writes the demo's dictionaries to (bin/demo names them).
DICTIONARY_FILES = ("demo.zstd-dict", "demo.zlib-dict")


def dictionaries(document: str) -> tuple[bytes, bytes]:
    """The demo's zstd dictionary (trained on pieces of the document: the same bytes on every load,
    libzstd's training being deterministic) and its zlib preset dictionary (the document's start)."""
    payload = document.encode("utf-8")
    pieces: list[bytes | bytearray | memoryview] = [payload[i : i + 512] for i in range(0, len(payload), 97)]
    return zstandard.train_dictionary(4096, pieces * 8).as_bytes(), payload[:256]


def samples(document: str) -> list[DemoSample]:
    payload = document.encode("utf-8")
    zstd_dict, zlib_dict = dictionaries(document)
    zdict = zstandard.ZstdCompressionDict(zstd_dict, dict_type=zstandard.DICT_TYPE_FULLDICT)
    deflate = zlib.compressobj(level=6, wbits=-15)
    preset = zlib.compressobj(zdict=zlib_dict)
    return [
        DemoSample("snappy raw", "snappy.compress / Snappy.compress", snappy_raw(payload), "snappy"),
        DemoSample(
            "snappy framed",
            "snappy.stream_compress",
            snappy_framed(payload),
            "snappy/framed",
        ),
        DemoSample("snappy xerial", "SnappyOutputStream layout", xerial_stream(payload), "snappy/xerial"),
        DemoSample(
            "snappy hadoop",
            "snappy.HadoopStreamCompressor",
            snappy.HadoopStreamCompressor().add_chunk(payload),
            "snappy/hadoop",
        ),
        DemoSample("lz4 frame", "lz4.frame.compress", lz4.frame.compress(payload), "lz4/frame"),
        DemoSample("lz4 size-prefixed LE", "lz4.block.compress", lz4.block.compress(payload), "lz4/block"),
        DemoSample(
            "lz4 size-prefixed BE",
            "driver-style lz4 block",
            struct.pack(">I", len(payload)) + lz4.block.compress(payload, store_size=False),
            "lz4/block-be",
        ),
        DemoSample("lz4 LZ4Block", "LZ4BlockOutputStream layout", lz4_java_block(payload), "lz4/LZ4Block"),
        DemoSample("zstd", "zstandard (content size)", zstandard.ZstdCompressor().compress(payload), "zstd"),
        DemoSample(
            "zstd no size",
            "zstandard (no content size)",
            zstandard.ZstdCompressor(write_content_size=False).compress(payload),
            "zstd",
        ),
        DemoSample(
            "zstd dictionary",
            "zstandard with a trained dictionary",
            zstandard.ZstdCompressor(dict_data=zdict).compress(payload),
            "raw: needs dictionary",
        ),
        DemoSample("gzip", "gzip.compress", gzip.compress(payload, mtime=0), "gzip"),
        DemoSample(
            "gzip java string",
            "GZIPOutputStream(ObjectOutputStream) layout",
            gzip.compress(java_string(document), mtime=0),
            "gzip>java",
        ),
        DemoSample("zlib", "zlib.compress", zlib.compress(payload), "zlib"),
        DemoSample(
            "zlib preset dictionary",
            "zlib with zdict",
            preset.compress(payload) + preset.flush(),
            "raw: preset dictionary",
        ),
        DemoSample("bzip2", "bz2.compress", bz2.compress(payload), "bzip2"),
        DemoSample("xz", "lzma.compress", lzma.compress(payload), "xz"),
        DemoSample(
            "raw deflate",
            "zlib wbits=-15 (only with -d deflate)",
            deflate.compress(payload) + deflate.flush(),
            "raw",
        ),
        DemoSample("plain json", "uncompressed bytes", payload, "text"),
        DemoSample(
            "truncated gzip",
            "gzip cut in half",
            gzip.compress(payload, mtime=0)[: len(payload) // 8],
            "raw: gzip",
        ),
    ]
