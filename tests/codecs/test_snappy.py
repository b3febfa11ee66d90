"""snappy: framing format variants and checksums, xerial streams, S2, short literals."""

from __future__ import annotations

import random

import pytest
import snappy

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError, Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    json_doc,
)

from cqlsh_ext.demo.samples import snappy_framed
from cqlsh_ext.demo.samples import xerial_stream as xerial


def test_snappy_framed_variants() -> None:
    d = json_doc(150_000, 5)
    v = snappy_framed(d)
    # padding (0xfe) and skippable (0x80) chunks, and a second stream identifier
    pad = b"\xfe\x03\x00\x00abc" + b"\x80\x02\x00\x00zz"
    stream_id = v[:10]
    fmt, dec = registry.decode_auto(v + pad + stream_id + v[10:])
    assert dec.data == d + d
    # uncompressible payloads produce uncompressed (0x01) chunks
    r = random.Random(9).randbytes(100_000)
    assert registry.decode_auto(snappy_framed(r))[1].data == r


def test_xerial_concatenated_streams() -> None:
    a, b = json_doc(40_000, 1), json_doc(10_000, 2)
    fmt, dec = registry.decode_auto(xerial(a) + xerial(b))
    assert fmt.label == "snappy/xerial" and dec.data == a + b


def test_s2_is_undecodable() -> None:
    value = b"\xff\x06\x00\x00S2sTwO" + b"\x01\x09\x00\x00" + b"\x00" * 4 + b"hello"
    with pytest.raises(Undecodable, match="S2 stream"):
        registry.decode_auto(value)
    assert registry.detect(value).label == "snappy/s2"
    with pytest.raises(Undecodable):
        registry.decode_named("snappy", value)


def test_snappy_framed_checksum_names_the_chunk() -> None:
    d = json_doc(300_000, 6)
    v = bytearray(snappy_framed(d))
    # corrupt the stored CRC of the third data chunk
    pos, i = 10, 0
    while True:
        ln = v[pos + 1] | v[pos + 2] << 8 | v[pos + 3] << 16
        i += 1
        if i == 3:
            v[pos + 4] ^= 0xFF
            break
        pos += 4 + ln
    with pytest.raises(DecodeError, match="^snappy/framed: checksum mismatch in chunk 3$"):
        registry.decode_auto(bytes(v))


def test_short_snappy_literals() -> None:
    """A value that is one short literal (nothing compressed) is auto-decoded only when it is text."""
    assert registry.decode_auto(snappy.compress(b"hello"))[1].data == b"hello"
    assert registry.decode_auto(snappy.compress("naïve\tçà".encode()))[1].data == "naïve\tçà".encode()
    uuid_like = bytes.fromhex("0614296e451a2605")  # found by the random trials: 06 14 = 6-byte literal
    assert registry.decode_auto(uuid_like) is None
    assert registry.decode_named("snappy", uuid_like)[1].data == uuid_like[2:]
