"""A zstd frame's first byte read from its first block's headers and first literal, without
decoding (ZstdFrame.first_byte, codecs/zstd_first.py): on frames written by python zstandard
(libzstd) at every level, of every sort of content (JSON text, one repeated byte, random bytes,
skewed byte distributions that make FSE-coded and directly written Huffman weights, one and four
literal streams, raw and RLE blocks, several blocks), it is libzstd's own decode's first byte, or
None where the headers do not tell (a checksum carried, a dictionary named). Bytes flipped in the
headers and tables never make it raise. Each test runs twice: as ZstdFrame.first_byte answers (libzstd's
decode of the first block where the literals are Huffman-coded and it decodes them), and as the
tables alone tell it (codecs/zstd_first.py's reading, the native core's, which first_byte falls
back on where libzstd refuses a block)."""

from __future__ import annotations

import json
import random

import pytest
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.zstd import ZstdFrame
from cqlsh_ext.demo.records import documents

DOCS = list(documents(120, seed=2))
PARSED = [json.loads(d) for d in DOCS]


def _content(rng: random.Random) -> bytes:
    sort = rng.randrange(7)
    if sort == 0:
        return DOCS[rng.randrange(len(DOCS))].encode()
    if sort == 1:  # a JSON array of documents, up to several blocks
        return json.dumps([PARSED[j % len(PARSED)] for j in range(rng.randrange(1, 200))]).encode()
    if sort == 2:
        return bytes([rng.randrange(256)]) * rng.randrange(1, 3000)
    if sort == 3:
        return rng.randbytes(rng.randrange(1, 600))
    if sort == 4:  # skewed bytes: few symbols weigh much (directly written weights), many little
        rate = rng.choice([0.02, 0.3, 2.0])
        return bytes(rng.choices(range(256), weights=[2.0 ** (-rate * b) + 1e-9 for b in range(256)],
                                 k=rng.randrange(1, 6000)))
    if sort == 5:
        return bytes(rng.choices(b"ab{}", k=rng.randrange(1, 4000)))
    return bytes([rng.randrange(256)]) * rng.randrange(1, 80) + rng.randbytes(2000)


@pytest.fixture(params=["first_byte", "tables alone"])
def reading(request, monkeypatch) -> str:
    if request.param == "tables alone":  # libzstd's decode refused: the tables tell
        monkeypatch.setattr(ZstdFrame, "_first_decoded", lambda *_: None)
    return str(request.param)


def test_the_first_byte_is_libzstd_s_first_byte(reading: str) -> None:
    rng = random.Random(7)
    told = 0
    for _ in range(2000):
        content = _content(rng)
        # (the slow levels on small contents: the first block's table is what they change)
        levels = [-7, -1, 1, 3, 6, 9] + ([19, 22] if len(content) < 8000 else [])
        frame = zstandard.ZstdCompressor(level=rng.choice(levels)).compress(content)
        first = registry.ZSTD.first_byte(frame)
        assert first is None or first == zstandard.ZstdDecompressor().decompress(frame)[0], frame.hex()
        told += first is not None
    assert told == 2000  # every frame of these (no checksum, no dictionary) is told


def test_frames_it_does_not_tell(reading: str) -> None:
    content = DOCS[0].encode()
    with_checksum = zstandard.ZstdCompressor(write_checksum=True).compress(content)
    assert registry.ZSTD.first_byte(with_checksum) is None  # decoded instead: its checksum checked
    trained = zstandard.train_dictionary(4096, [d.encode() for d in DOCS])
    named = zstandard.ZstdCompressor(dict_data=trained).compress(content)
    assert registry.ZSTD.first_byte(named) is None
    assert registry.ZSTD.first_byte(content) is None  # no frame
    empty = zstandard.ZstdCompressor().compress(b"")
    assert registry.ZSTD.first_byte(empty) is None


def test_flipped_bytes_never_raise(reading: str) -> None:
    rng = random.Random(11)
    for _ in range(1000):
        frame = bytearray(zstandard.ZstdCompressor(level=rng.choice([1, 3, 9])).compress(_content(rng)))
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(4, min(len(frame), 40))  # the headers, the literals' section and table
            frame[at] ^= 1 << rng.randrange(8)
        first = registry.ZSTD.first_byte(bytes(frame))
        assert first is None or 0 <= first < 256
