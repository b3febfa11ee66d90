"""Truncated and corrupt values give a one-line reason naming the format."""

from __future__ import annotations

import bz2
import gzip
import lzma

import lz4.block
import lz4.frame
import pytest
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError, Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    json_doc,
    zstd_nosize,
)

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java
from cqlsh_ext.demo.samples import xerial_stream as xerial


def _corrupt(value: bytes, at: int) -> bytes:
    b = bytearray(value)
    b[at] ^= 0x55
    return bytes(b)


@pytest.mark.parametrize(
    "value,expected",
    [
        (gzip.compress(json_doc(5000))[:-30], "gzip: truncated stream"),
        (gzip.compress(json_doc(5000))[:-4] + b"\x00\x00\x00\x00", "gzip: length mismatch"),
        (_corrupt(gzip.compress(json_doc(5000)), -6), "gzip: checksum mismatch"),
        (zstandard.ZstdCompressor().compress(json_doc(5000))[:-20], "zstd: truncated stream"),
        (zstd_nosize(json_doc(5000))[:-20], "zstd: truncated stream"),
        (
            _corrupt(zstandard.ZstdCompressor(write_checksum=True).compress(json_doc(5000)), -2),
            "zstd: checksum mismatch",
        ),
        (lz4.frame.compress(json_doc(5000))[:-10], "lz4/frame: truncated stream"),
        (
            _corrupt(lz4.frame.compress(json_doc(5000), content_checksum=True), -2),
            "lz4/frame: content checksum mismatch",
        ),
        (bz2.compress(json_doc(5000))[:-10], "bzip2: truncated stream"),
        (lzma.compress(json_doc(5000))[:-10], "xz: truncated stream"),
        (xerial(json_doc(5000))[:-10], "snappy/xerial: truncated stream in block 0"),
        (lz4_java(json_doc(5000))[:-30], "lz4/LZ4Block: truncated block 0"),
        (b"\xff\x06\x00\x00sNaPpY\x00\x10\x00\x00abcd", "snappy/framed"),
    ],
)
def test_truncated_or_corrupt_reasons(value: bytes, expected: str) -> None:
    with pytest.raises(DecodeError) as info:
        registry.decode_auto(value)
    msg = str(info.value)
    assert msg.startswith(expected), msg
    assert "\n" not in msg and len(msg) < 160
    assert not isinstance(info.value, Undecodable)


def test_named_errors() -> None:
    with pytest.raises(ValueError):
        registry.decode_named("snapy", b"abc")
    with pytest.raises(ValueError):
        registry.containers_for("nope")
    with pytest.raises(DecodeError, match="^zstd: no zstd signature$"):
        registry.decode_named("zstd", b"definitely not zstd")
    with pytest.raises(DecodeError, match="^snappy: "):
        registry.decode_named("snappy", b"\xff\xff\xff\xff\x0f" + b"x" * 20)
    with pytest.raises(DecodeError, match="exceeds what the input can hold"):
        registry.decode_named("snappy", b"\xff\xff\xff\xff\x0f" + b"\x00abc")
    with pytest.raises(DecodeError):
        registry.decode_named("deflate", b"\x00" * 3)
    for codec in registry.CODEC_NAMES:
        with pytest.raises(DecodeError):
            registry.decode_named(codec, b"")


@pytest.mark.parametrize(
    "codec,module,bound,libraries,value,expected",
    [
        ("bzip2", "bzip2", ("_decompressor",), ("bz2",), bz2.compress(b"x" * 100),
         "bzip2: bz2 module not available"),
        ("xz", "xz", ("_lzma",), ("lzma",), lzma.compress(b"x" * 100), "xz: lzma module not available"),
        ("zstd", "zstd", ("_dctx",), ("zstandard",), zstandard.compress(b"x" * 100),
         "zstd: zstandard not installed"),
        ("lz4", "lz4._native", ("_block", "_chunk"), ("lz4.block", "lz4.frame"),
         lz4.frame.compress(b"x" * 100), "lz4/frame: lz4 not installed"),
        ("snappy", "snappy._raw", ("_raw", "_framed"), ("cramjam",), b"\x64\x00" + b"x" * 16,
         "snappy: cramjam not installed"),
        ("brotli", "brotli", ("_mod",), ("brotli",), b"\x0b\x02\x80hello", "brotli: brotli not installed"),
    ],
)
def test_a_codec_whose_library_is_missing_says_so_in_one_line(
        monkeypatch: pytest.MonkeyPatch, codec: str, module: str, bound: tuple[str, ...],
        libraries: tuple[str, ...], value: bytes, expected: str) -> None:
    import importlib
    import sys

    found = importlib.import_module(f"cqlsh_ext.codecs.{module}")
    for name in bound:
        monkeypatch.setattr(found, name, None)  # not bound yet: the next decode imports the library
    for name in libraries:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    with pytest.raises(DecodeError) as err:
        registry.decode_named(codec, value)
    assert str(err.value) == expected
