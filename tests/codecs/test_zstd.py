"""zstd: concatenated and skippable frames, frames that need a dictionary."""

from __future__ import annotations

import json

import pytest
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    skippable,
    zstd_nosize,
)


def test_zstd_concatenated_and_skippable_frames() -> None:
    a, b = b"alpha " * 100, b"beta " * 100
    c = zstandard.ZstdCompressor()
    value = skippable(b"hdr", 0) + c.compress(a) + skippable(b"mid", 7) + zstd_nosize(b)
    fmt, dec = registry.decode_auto(value)
    assert fmt.label == "zstd" and dec.data == a + b and dec.declared_size is None
    fmt, dec = registry.decode_auto(value, len(a) + 5)
    assert dec.truncated and dec.data == (a + b)[: len(a) + 5]
    # skippable frames only: a valid, empty zstd stream
    assert registry.decode_named("zstd", skippable(b"1234") + skippable(b""))[1].data == b""


def test_zstd_dictionary_is_undecodable() -> None:
    samples = [json.dumps({"id": i, "name": f"user{i}", "pad": "y" * (i % 37)}).encode() for i in range(500)]
    zdict = zstandard.train_dictionary(2048, samples)
    value = zstandard.ZstdCompressor(dict_data=zdict).compress(samples[7])
    with pytest.raises(Undecodable, match=f"dictionary ID {zdict.dict_id()}") as info:
        registry.decode_auto(value)
    assert info.value.format is not None and info.value.format.label == "zstd"
    with pytest.raises(Undecodable):
        registry.decode_named("zstd", value)
