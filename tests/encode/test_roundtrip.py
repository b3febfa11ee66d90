"""encode() then decode gives back the input for every writable chain (a property test), the bytes are
the reference libraries' own, and every container or format without a writer is refused."""

from __future__ import annotations

import bz2
import json
import lzma
import struct
import zlib

import brotli
import cbor2
import lz4.block
import lz4.frame
import msgpack
import pytest
import snappy
import xxhash
import zstandard
from bson import decode as bson_decode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.capabilities import Writer
from cqlsh_ext.encode.chain import EncodeRefused, encode, same
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.unwrap import unwrap_spec
from cqlsh_ext.payload.view import RECORD, TEXT

CAP = 4 << 20
#: Containers written without a dictionary (dcz's round trip, with one: tests/dictionaries).
WRITABLE = [f.label for f in registry.all_containers() if isinstance(f, Writer) and not f.needs_dictionary]
UNWRITABLE = [f.label for f in registry.all_containers() if not isinstance(f, Writer)]
#: Record formats written from JSON alone (no schema or descriptor file).
#: (The built-ins: a plugin installed here, tests/plugins, holds only its own records.)
RECORD_FORMATS = [f.name for f in formats.all_formats()
                  if f.encode is not None and not f.encodes_text and f.name in formats.declarations()]
TEXT_FORMATS = [f.name for f in formats.all_formats()
                if f.encode is not None and f.encodes_text and f.name in formats.declarations()]

#: Each container read back with its producer's library (not with cqlsh-ext's decoders).
READ_BACK = {
    "snappy": snappy.decompress,
    "snappy/framed": lambda b: snappy.StreamDecompressor().decompress(b),
    "snappy/xerial": lambda b: b"".join(
        snappy.decompress(b[p + 4:p + 4 + int.from_bytes(b[p:p + 4], "big")])
        for p in _xerial_offsets(b)),
    "snappy/hadoop": lambda b: b"".join(snappy.decompress(block) for block in _hadoop_blocks(b)),
    "lz4/frame": lz4.frame.decompress,
    "lz4/hadoop": lambda b: b"".join(lz4.block.decompress(block, uncompressed_size=256 << 10)
                                     for block in _hadoop_blocks(b)),
    "lz4/LZ4Block": lambda b: b"".join(_lz4java_blocks(b)),
    "lz4/block": lz4.block.decompress,
    "lz4/block-be": lambda b: lz4.block.decompress(b[4:], uncompressed_size=int.from_bytes(b[:4], "big")),
    "lz4/block-nosize": lambda b: lz4.block.decompress(b, uncompressed_size=1 << 20),
    "zstd": lambda b: zstandard.ZstdDecompressor().decompress(b),
    "gzip": lambda b: zlib.decompress(b, 31),
    "zlib": zlib.decompress,
    "deflate": lambda b: zlib.decompress(b, -15),
    "bzip2": bz2.decompress,
    "xz": lzma.decompress,
    "xz/lzma": lambda b: lzma.decompress(b, format=lzma.FORMAT_ALONE),
    "brotli": brotli.decompress,
}
RECORD_READ_BACK = {"msgpack": msgpack.unpackb, "cbor": cbor2.loads, "bson": bson_decode}


def _hadoop_blocks(b: bytes) -> list[bytes]:
    """BlockCompressorStream: [u32 BE raw length] then [u32 BE length][block] ..."""
    out, pos = [], 4
    while pos < len(b):
        size = int.from_bytes(b[pos:pos + 4], "big")
        out.append(b[pos + 4:pos + 4 + size])
        pos += 4 + size
    return out


def _lz4java_blocks(b: bytes) -> list[bytes]:
    """LZ4BlockOutputStream: 'LZ4Block', token, compressed and raw lengths, XXH32, the block."""
    out, pos = [], 0
    while pos < len(b):
        assert b[pos:pos + 8] == b"LZ4Block"
        token, clen, dlen, check = struct.unpack_from("<Biii", b, pos + 8)
        body = b[pos + 21:pos + 21 + clen]
        if dlen:
            raw = body if token & 0xF0 == 0x10 else lz4.block.decompress(body, uncompressed_size=dlen)
            assert xxhash.xxh32_intdigest(raw, seed=0x9747B28C) & 0x0FFFFFFF == check
            out.append(raw)
        pos += 21 + clen
    return out


def _xerial_offsets(b: bytes) -> list[int]:
    out, pos = [], 16
    while pos < len(b):
        out.append(pos)
        pos += 4 + int.from_bytes(b[pos:pos + 4], "big")
    return out


def test_every_writable_container_has_a_reader_here():
    assert sorted(WRITABLE) == sorted(READ_BACK)
    assert sorted(RECORD_FORMATS) == sorted(RECORD_READ_BACK)


TEXTS = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t"), min_size=1,
                max_size=300)
SCALARS = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
KEYS = st.text("abcdefghij_", min_size=1, max_size=8)
RECORDS = st.dictionaries(KEYS, st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                                             | st.dictionaries(KEYS, inner, max_size=4), max_leaves=20),
                          min_size=1, max_size=6)  # an empty record is shown as bytes, so refused
PROPERTY = settings(max_examples=15, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("label", WRITABLE)
@PROPERTY
@given(text=TEXTS)
def test_text_comes_back(label, text):
    value = encode(label, text, CAP).value
    assert READ_BACK[label](value) == text.encode()
    view = unwrap_spec(value, f"{label}>text", CAP)
    assert view.kind == TEXT and view.text == text


@pytest.mark.parametrize("label", WRITABLE)
@pytest.mark.parametrize("fmt", RECORD_FORMATS)
@PROPERTY
@given(record=RECORDS)
def test_records_come_back(label, fmt, record):
    value = encode(f"{label}>{fmt}", json.dumps(record), CAP).value
    assert same(RECORD_READ_BACK[fmt](READ_BACK[label](value)), record)
    view = unwrap_spec(value, f"{label}>{fmt}", CAP)
    assert view.kind == RECORD and same(view.tree, record)


@pytest.mark.parametrize("fmt", ["msgpack", "cbor"])
def test_nan_and_the_infinities_as_python_writes_them_are_the_formats_floats(fmt):
    """JSON text as Python's json writes NaN and the infinities (bare) is written as the record
    format's floats: read back by its own library, the same values (NaN is NaN)."""
    record = {"x": float("nan"), "l": [float("inf"), -float("inf"), 0.5]}
    value = encode(f"zstd>{fmt}", json.dumps(record), CAP).value
    back = RECORD_READ_BACK[fmt](READ_BACK["zstd"](value))
    assert back["x"] != back["x"] and back["l"] == [float("inf"), -float("inf"), 0.5]


@pytest.mark.parametrize("label", WRITABLE)
@PROPERTY
@given(data=st.binary(min_size=1, max_size=300))  # an empty value: the decoders refuse some
def test_given_bytes_come_back(label, data):
    assert READ_BACK[label](encode(label, data, CAP).value) == data


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
@PROPERTY
@given(text=TEXTS)
def test_java_strings_come_back(fmt, text):
    view = unwrap_spec(encode(f"gzip>{fmt}", text, CAP).value, f"gzip>{fmt}", CAP)
    assert view.kind == TEXT and view.text == text


def test_bytes_are_the_reference_libraries_at_default_and_named_levels():
    data = json.dumps({"k": list(range(200)), "s": "x" * 500}).encode()
    assert encode("snappy", data, CAP).value == snappy.compress(data)
    assert encode("zstd", data, CAP).value == zstandard.ZstdCompressor(level=3).compress(data)
    assert encode("zstd:19", data, CAP).value == zstandard.ZstdCompressor(level=19).compress(data)
    frame = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False)
    assert encode("lz4", data, CAP).value == frame.begin() + frame.compress(data) + frame.flush()
    assert encode("lz4/block:9", data, CAP).value == lz4.block.compress(data, mode="high_compression",
                                                                         compression=9)
    assert encode("zlib", data, CAP).value == zlib.compress(data, 6)
    assert encode("bzip2", data, CAP).value == bz2.compress(data, 9)
    assert encode("xz", data, CAP).value == lzma.compress(data, preset=6)
    assert encode("brotli:5", data, CAP).value == brotli.compress(data, quality=5)
    gz = encode("gzip", data, CAP).value
    assert gz[:10] == bytes.fromhex("1f8b08000000000000ff")  # mtime 0, OS 255: the JDK's header


def test_each_value_is_written_as_a_new_compressor_writes_it_whatever_came_before():
    # The zstd and LZ4 frame writers keep their compressors between values (a load writes
    # thousands): nothing of one value may reach the next (a frame of several 4 MiB blocks, another
    # level in between, a value that failed), against a new compressor of the reference library.
    small = json.dumps({"order": 1, "items": ["a"] * 20}).encode()
    large = bytes(range(256)) * (5 << 12) + small * 1000
    for data in (small, large, small, b"", small):
        frame = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False)
        assert encode("lz4", data, CAP * 4).value == frame.begin() + frame.compress(data) + frame.flush()
        for level in (3, 19, 3):
            assert encode(f"zstd:{level}", data, CAP * 4).value == \
                zstandard.ZstdCompressor(level=level).compress(data)
    with pytest.raises(EncodeRefused, match="output cap"):
        encode("lz4", large, 1 << 10)  # written, then refused by the display's cap
    frame = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False)
    assert encode("lz4", small, CAP).value == frame.begin() + frame.compress(small) + frame.flush()


NAN = float("nan")


@pytest.mark.parametrize(("shown", "want", "equal"), [
    ({"a": [1, 2.5, "x", None, True]}, {"a": [1, 2.5, "x", None, True]}, True),
    ({"b": 1, "a": 2}, {"a": 2, "b": 1}, True),  # (keys compared as sets)
    ((1,), [1], True),  # (a record read back may hold tuples)
    ({"n": 2**80}, {"n": 2**80}, True),
    ([NAN, float("inf")], [float("nan"), float("inf")], True),
    ([-0.0], [0.0], True),
    ([1], [1.0], False), ([1.0], [1], False), ([True], [1], False), ([1], [True], False),
    ({"a": 1}, {"a": True}, False), ({1: "x"}, {"1": "x"}, False),
    ({"n": 2**80}, {"n": float(2**80)}, False), ([b"0x00"], ["0x00"], False), ([None], [NAN], False),
    ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}, False),
])
def test_records_are_the_same_only_with_the_same_types(shown, want, equal):
    # The check a load's every record is read back by (encode.chain.same): equal values of other
    # types (1 and 1.0 and True, a key 1 and "1") are not the same record.
    assert same(shown, want) is equal


@pytest.mark.parametrize("label", UNWRITABLE)
def test_containers_without_a_writer_are_refused(label):
    with pytest.raises(EncodeRefused, match=label):
        encode(label, "text", CAP)


@pytest.mark.parametrize("chain, source, reason", [
    ("pickle", "{}", "pickle: not written"),
    ("smile", "{}", "no Smile writer"),
    ("protobuf", "{}", "written with its descriptor only"),
    ("avro", "{}", "written with its schema only"),
    ("bson", "[1]", "bson holds a document"),
    ("msgpack", "nan", "not JSON"),  # (Python's json writes NaN, and reads no other spelling)
    ("msgpack", '{"a": 1, "a": 2}', '"a" given twice'),
    ("cbor", '{"a": 1e400}', "beyond a double"),
    ("msgpack", str(2**64), "msgpack cannot hold this value"),
    ("zstd:23", "{}", "zstd levels are"),
    ("snappy:1", "{}", "snappy has no levels"),
    ("cbor", "12", "not verified"),  # a bare number: the display reads only maps and arrays as CBOR
    ("hex", "text", "a hex reading takes bytes"),
])
def test_chains_that_cannot_be_written_faithfully_are_refused(chain, source, reason):
    with pytest.raises(EncodeRefused, match=reason):
        encode(chain, source, CAP)


def test_a_value_past_the_display_cap_is_refused():
    with pytest.raises(EncodeRefused, match="output cap"):
        encode("zstd", "x" * 5000, 1024)
