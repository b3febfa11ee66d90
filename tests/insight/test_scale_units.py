"""Units of the table-scale insight: header-declared sizes, merging worker results. No server: the
sizes are checked against what the real codec libraries wrote. (The token ring and the interval
arithmetic: tests/scanning/test_ring_estimate.py.)"""

from __future__ import annotations

import gzip
import json
import pickle
import random

import lz4.frame
import pytest
import zstandard
from cassandra.cqltypes import BytesType

from cqlsh_ext.codecs import registry
from cqlsh_ext.demo.records import documents
from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.measures import FROM_HEADER


def _payloads() -> list[bytes]:
    small = [d.encode() for d in documents(40, seed=4)]
    noisy = json.dumps({"blob": random.Random(9).randbytes(400_000).hex()}).encode()  # > 256 KiB stored
    return [*small, json.dumps([json.loads(d) for d in small] * 40).encode(), noisy]


@pytest.mark.parametrize(
    "fmt,compress",
    [
        (registry.ZSTD, lambda b: zstandard.ZstdCompressor(level=3).compress(b)),
        (registry.LZ4_FRAME, lambda b: lz4.frame.compress(b)),
        (registry.GZIP, lambda b: gzip.compress(b, 6)),
    ],
    ids=["zstd", "lz4-frame", "gzip"],
)
def test_declared_size_is_the_real_size(fmt, compress):
    for payload in _payloads():
        stored = compress(payload)
        assert fmt.declared_size(stored) == len(payload)
        measured = ValueEngine(cap=64 << 20).measure(stored, True)
        # gzip is sized from its header at any size; zstd and LZ4 frames (where peeking costs a
        # block's decode) from 256 KiB stored, and a zstd frame at any size where its first literal
        # is a byte nothing recognisable starts with ('{'; '[' may start a skippable frame)
        by_header = (fmt is registry.GZIP or len(stored) >= 256 << 10
                     or (fmt is registry.ZSTD and payload.startswith(b"{")))
        assert measured == ("compressed", fmt.label, len(payload), True, FROM_HEADER if by_header else None)
        # the full decode agrees
        assert ValueEngine(cap=64 << 20).measure(stored)[2] == len(payload)
        # cut values are not trusted: they are decoded (and found truncated) instead
        assert fmt.declared_size(stored[: len(stored) // 2]) is None


@pytest.mark.parametrize("level", [1, 3, 19])
def test_a_zstd_frame_holding_another_container_is_read_not_sized_unseen(level):
    """The from-header sizing of a small zstd frame rests on its first byte: a frame holding gzip
    (0x1f), zstd, or a JSON array ('[' may start a skippable zstd frame) is decoded, and labelled
    with every layer the producers' libraries peel."""
    doc = next(documents(1, seed=8)).encode()
    zc = zstandard.ZstdCompressor(level=level)
    for inner, label, peel in [
        (gzip.compress(doc, mtime=0), f"{registry.ZSTD.label}>{registry.GZIP.label}", gzip.decompress),
        (zc.compress(doc), f"{registry.ZSTD.label}>{registry.ZSTD.label}", zstandard.decompress),
        (b"[" + doc + b"]", registry.ZSTD.label, bytes),
    ]:
        stored = zc.compress(inner)
        size = len(peel(zstandard.decompress(stored)))
        assert ValueEngine(cap=64 << 20).measure(stored, True) == ("compressed", label, size, True, None)
    stored = zc.compress(doc)  # the same document alone: sized from the header, unseen
    assert ValueEngine(cap=64 << 20).measure(stored, True) == (
        "compressed", registry.ZSTD.label, len(zstandard.decompress(stored)), True, FROM_HEADER)


def test_declared_sizes_not_trusted_when_implausible():
    payload = _payloads()[0]
    # incompressible bytes make a raw block, whose output size is exact: a larger claim is a lie
    z = bytearray(zstandard.ZstdCompressor().compress(random.Random(1).randbytes(3000)))
    assert z[4] >> 6 == 1  # a 2-byte content size field (size - 256) right after the header byte
    assert registry.ZSTD.declared_size(bytes(z)) == 3000
    z[5:7] = (4000 - 256).to_bytes(2, "little")
    assert registry.ZSTD.declared_size(bytes(z)) is None
    big = bytearray(gzip.compress(payload))
    big[-4:] = (10**9).to_bytes(4, "little")  # ISIZE far beyond 1032:1
    assert registry.GZIP.declared_size(bytes(big)) is None
    padded = lz4.frame.compress(payload) + b"\0\0\0\0"
    assert registry.LZ4_FRAME.declared_size(padded) is None
    no_size = lz4.frame.compress(payload, store_size=False)
    assert registry.LZ4_FRAME.declared_size(no_size) is None


def test_merged_worker_stats_equal_one_scan():
    rng = random.Random(2)
    values = []
    for d in _payloads() * 3:
        choice = rng.random()
        values.append(gzip.compress(d) if choice < 0.3 else zstandard.ZstdCompressor().compress(d)
                      if choice < 0.6 else d)
    rows = [(v,) for v in values] + [(None,)]

    def scanned(part) -> Stats:
        s = Stats("q", from_headers=True)
        s.set_columns(["data"], [BytesType])
        s.add_rows(part)
        return s

    whole = scanned(rows)
    merged = Stats("q", from_headers=True)
    for k in range(3):
        merged.merge(pickle.loads(pickle.dumps(scanned(rows[k::3]))))  # as a worker sends it
    a, b = whole.to_json(), merged.to_json()
    for doc in (a, b):
        doc.pop("elapsed_s"), doc.pop("rows_per_s")
    assert a == b
