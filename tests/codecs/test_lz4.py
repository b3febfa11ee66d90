"""LZ4: frames, legacy and skippable frames, lz4-java blocks, Hadoop streams, dictionaries, the
capped block walk."""

from __future__ import annotations

import random
import struct

import lz4.block
import lz4.frame
import pytest

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError, Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    json_doc,
    lz4_hadoop,
    lz4_legacy,
    skippable,
)

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java


def test_lz4_concatenated_and_skippable_frames() -> None:
    a, b = b"first frame " * 50, b"second frame " * 40
    value = skippable(b"x" * 10, 3) + lz4.frame.compress(a) + skippable(b"", 15) + lz4.frame.compress(b)
    fmt, dec = registry.decode_auto(value)
    assert fmt.label == "lz4/frame" and dec.data == a + b
    assert dec.declared_size == len(a) + len(b)
    # a legacy frame after a normal frame
    fmt, dec = registry.decode_auto(lz4.frame.compress(a) + lz4_legacy(b))
    assert dec.data == a + b
    # capped in the second frame
    fmt, dec = registry.decode_auto(value, len(a) + 10)
    assert dec.truncated and dec.data == (a + b)[: len(a) + 10]


def test_lz4_java_raw_blocks() -> None:
    r = random.Random(4).randbytes(150_000)  # incompressible: stored with method 0x10
    v = lz4_java(r)
    assert v[8] & 0xF0 == 0x10
    fmt, dec = registry.decode_auto(v)
    assert dec.data == r
    assert dec.headers["checksum"] in ("verified", "not verified")
    assert registry.decode_auto(v, 70_000)[1].data == r[:70_000]


def test_lz4_hadoop_multi_block() -> None:
    d = json_doc(700_000, 8)
    value = lz4_hadoop(d, block=256 << 10)
    fmt, dec = registry.decode_auto(value)
    assert fmt.label == "lz4/hadoop" and dec.data == d and dec.declared_size == len(d)


def test_lz4_frame_dictionary_is_undecodable() -> None:
    # FLG 0x61: version 01, block independence, dictID flag; BD 0x40; dictID; HC (not checked first)
    value = b"\x04\x22\x4d\x18\x61\x40" + struct.pack("<I", 4242) + b"\x00" + b"\x00\x00\x00\x00"
    with pytest.raises(Undecodable, match="dictionary ID 4242"):
        registry.decode_auto(value)


def test_lz4_context_survives_an_abandoned_frame() -> None:
    """liblz4's context reset keeps the remaining-content-size counter: a frame cut short (cap,
    truncation, error) must not make the next frame without content size fail."""
    big = lz4.frame.compress(b"x" * 100_000)  # has a content size
    with pytest.raises(DecodeError):
        registry.decode_auto(big[:30])
    registry.decode_auto(big, 10)  # stopped by the cap
    nosize = lz4.frame.compress(b"", content_checksum=True, block_checksum=True, store_size=False)
    assert registry.decode_named("lz4", nosize)[1].data == b""
    nosize = lz4.frame.compress(b"abc" * 10, content_checksum=True, store_size=False)
    assert registry.decode_auto(nosize)[1].data == b"abc" * 10


def test_lz4_offset_zero_is_rejected_by_the_capped_walk() -> None:
    # liblz4 accepts a match offset of 0 (it copies from the output cursor); real encoders never
    # write one. A Hadoop LZ4 value read as a BE-sized block starts with exactly that.
    value = lz4_hadoop(b'[{"id": 177113153, "name": "user66", "score": 0.1}]')
    assert registry.decode_auto(value, 7)[0].label == "lz4/hadoop"
    assert registry.decode_named("lz4", value, 7)[0].label == "lz4/hadoop"
