"""Every producer's output round-trips through detection and named decoding, under every cap."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    PAYLOADS,
    PRODUCERS,
    json_doc,
    lz4_be,
    snappy_hadoop,
    zstd_nosize,
)

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java
from cqlsh_ext.demo.samples import snappy_framed
from cqlsh_ext.demo.samples import xerial_stream as xerial


@pytest.mark.parametrize("payload_name", list(PAYLOADS))
@pytest.mark.parametrize("name,produce,label,codec,auto", PRODUCERS, ids=[p[0] for p in PRODUCERS])
def test_round_trip(
    name: str, produce: Callable[[bytes], bytes], label: str, codec: str, auto: bool, payload_name: str
) -> None:
    payload = PAYLOADS[payload_name]
    value = produce(payload)
    fmt, dec = registry.decode_named(codec, value, DEFAULT_CAP)
    assert fmt.label == label
    assert dec.data == payload and not dec.truncated
    if auto:
        found = registry.decode_auto(value, DEFAULT_CAP)
        assert found is not None, name
        assert found[0].label == label and found[1].data == payload
        assert registry.detect(value) is found[0]
    else:
        assert (
            registry.decode_auto(value, DEFAULT_CAP) is None or registry.decode_auto(value)[0].label != label
        )


@pytest.mark.parametrize("name,produce,label,codec,auto", PRODUCERS, ids=[p[0] for p in PRODUCERS])
def test_cap_truncates(
    name: str, produce: Callable[[bytes], bytes], label: str, codec: str, auto: bool
) -> None:
    payload = PAYLOADS["json200k"]
    value = produce(payload)
    for cap in (1000, 65_536 + 7, 150_000):
        fmt, dec = registry.decode_named(codec, value, cap)
        assert fmt.label == label
        assert dec.truncated, (name, cap)
        assert dec.data == payload[:cap], (name, cap)


@pytest.mark.parametrize("cap", [0, 1, 5])
def test_tiny_caps_keep_detection_honest(cap: int) -> None:
    """A trial stopped after a byte or two would prove nothing: signature-less formats are
    validated on at least TRIAL_MIN_CAP bytes, then clipped to the caller's cap."""
    payload = json_doc(100_000, 4)
    for name, produce, label, codec, auto in PRODUCERS:
        value = produce(payload)
        fmt, dec = registry.decode_named(codec, value, cap)
        assert fmt.label == label and dec.truncated and dec.data == payload[:cap], name
        found = registry.decode_auto(value, cap)
        if auto:
            assert found is not None and found[0].label == label, name
            assert found[1].truncated and found[1].data == payload[:cap], name
        else:
            assert found is None, name


def test_detect_signatures_only() -> None:
    assert registry.detect(gzip.compress(b"x" * 100), signatures_only=True).label == "gzip"
    assert registry.detect(snappy.compress(b"x" * 100), signatures_only=True) is None
    assert registry.detect(snappy.compress(b"x" * 100)).label == "snappy"


def test_declared_sizes() -> None:
    d = PAYLOADS["json4k"]
    for value, size in [
        (snappy.compress(d), len(d)),
        (lz4.frame.compress(d), len(d)),
        (lz4.block.compress(d), len(d)),
        (lz4_be(d), len(d)),
        (zstandard.ZstdCompressor().compress(d), len(d)),
        (gzip.compress(d), len(d)),
        (snappy_hadoop(d), len(d)),
        (xerial(d), len(d)),
        (lz4_java(d), len(d)),
    ]:
        found = registry.decode_auto(value)
        assert found is not None and found[1].declared_size == size, found and found[0]
    for value in (
        zstd_nosize(d),
        lz4.frame.compress(d, store_size=False),
        zlib.compress(d),
        snappy_framed(d),
    ):
        found = registry.decode_auto(value)
        assert found is not None and found[1].declared_size is None


def test_empty_payloads() -> None:
    for name, produce, label, codec, _auto in PRODUCERS:
        value = produce(b"")
        if label in ("deflate", "brotli") or not value:  # refused for signature-less streams;
            continue  # python-snappy's stream and Hadoop writers emit nothing at all for b""
        fmt, dec = registry.decode_named(codec, value)
        assert dec.data == b"", name
