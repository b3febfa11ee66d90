"""gzip, zlib and raw deflate: multi-member gzip, preset dictionaries, what -d deflate covers."""

from __future__ import annotations

import gzip
import zlib

import pytest

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError, Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    json_doc,
    raw_deflate,
)


def test_gzip_multi_member() -> None:
    a, b = b"member one\n" * 30, b"member two\n" * 20
    fmt, dec = registry.decode_auto(gzip.compress(a) + gzip.compress(b))
    assert dec.data == a + b and dec.declared_size == len(a) + len(b)
    # zero padding after the last member is ignored; other trailing bytes are reported
    assert registry.decode_auto(gzip.compress(a) + bytes(512))[1].data == a
    dec = registry.decode_auto(gzip.compress(a) + b"garbage")[1]
    assert dec.data == a and dec.headers["trailing_bytes"] == 7


def test_zlib_fdict_is_undecodable() -> None:
    zd = b"common words that the dictionary holds: user name email score " * 4
    c = zlib.compressobj(zdict=zd)
    value = c.compress(b"user name email score user name " * 5) + c.flush()
    assert value[1] & 0x20
    with pytest.raises(Undecodable, match="preset dictionary"):
        registry.decode_auto(value)
    with pytest.raises(Undecodable):
        registry.decode_named("zlib", value)
    # a text value that happens to look like an FDICT header is not zlib
    assert registry.decode_auto(b"H,ello world, how are you") is None


def test_deflate_names_raw_deflate_only() -> None:
    # gzip and zlib are codec names of their own, as their labels are: named `deflate`, such a
    # value is not raw deflate, and the reason says which name reads it.
    d = json_doc(3000)
    assert registry.decode_named("deflate", raw_deflate(d))[0].label == "deflate"
    for value, name in ((gzip.compress(d), "gzip"), (zlib.compress(d), "zlib")):
        why = rf"^deflate: .*; the value is a {name} stream \(name it {name}\)$"
        with pytest.raises(DecodeError, match=why):
            registry.decode_named("deflate", value)
        assert registry.decode_named(name, value)[0].label == name
