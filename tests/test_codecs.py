"""Codec layer: round trips with the real producer libraries, the registry API, headers, error
reasons, property tests and the false-positive rate of auto-detection.

Bombs, lying headers and memory caps are in test_codecs_bombs.py.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import random
import struct
import zlib
from collections.abc import Callable

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, Decoded, DecodeError, Format, Undecodable

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java
from cqlsh_ext.demo.samples import snappy_framed
from cqlsh_ext.demo.samples import xerial_stream as xerial

# ---------------------------------------------------------------------------------------------
# Producers. Real libraries where Python has one; byte-exact builders per the specs otherwise
# (the Java producers live in tests/java and are tested there).


def json_doc(size: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    out = []
    total = 0
    while total < size:
        rec = json.dumps(
            {"id": rng.randint(0, 10**9), "name": f"user{rng.randint(0, 9999)}", "score": rng.random()}
        )
        out.append(rec)
        total += len(rec) + 1
    return ("[" + ",".join(out) + "]").encode()[:size]


def snappy_hadoop(d: bytes) -> bytes:
    return snappy.HadoopStreamCompressor().add_chunk(d)


def lz4_hadoop(d: bytes, block: int = 256 << 10) -> bytes:
    """Hadoop Lz4Codec BlockCompressorStream: [u32 BE raw][u32 BE len][raw LZ4 block]."""
    out = []
    for i in range(0, max(len(d), 1), block):
        piece = d[i : i + block]
        c = lz4.block.compress(piece, store_size=False)
        out.append(struct.pack(">II", len(piece), len(c)) + c)
    return b"".join(out)


def lz4_be(d: bytes) -> bytes:
    """Cassandra protocol v4 / python driver style: u32 BE length + raw block."""
    return struct.pack(">I", len(d)) + lz4.block.compress(d, store_size=False)


def lz4_legacy(d: bytes, block: int = 8 << 20) -> bytes:
    out = [b"\x02\x21\x4c\x18"]
    for i in range(0, len(d), block):
        c = lz4.block.compress(d[i : i + block], store_size=False)
        out.append(struct.pack("<I", len(c)) + c)
    return b"".join(out)


def skippable(payload: bytes = b"meta", nibble: int = 0) -> bytes:
    return struct.pack("<II", 0x184D2A50 | nibble, len(payload)) + payload


def raw_deflate(d: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(d) + c.flush()


def zstd_nosize(d: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_content_size=False).compress(d)


def lzma_alone(d: bytes) -> bytes:
    return lzma.compress(d, format=lzma.FORMAT_ALONE)


# (name, producer, expected label, -d codec, detected automatically)
PRODUCERS: list[tuple[str, Callable[[bytes], bytes], str, str, bool]] = [
    ("snappy.compress", snappy.compress, "snappy", "snappy", True),
    ("snappy.stream_compress", snappy_framed, "snappy/framed", "snappy", True),
    ("snappy hadoop", snappy_hadoop, "snappy/hadoop", "snappy", True),
    ("snappy xerial", xerial, "snappy/xerial", "snappy", True),
    ("lz4.frame.compress", lz4.frame.compress, "lz4/frame", "lz4", True),
    ("lz4.frame no size", lambda d: lz4.frame.compress(d, store_size=False), "lz4/frame", "lz4", True),
    (
        "lz4.frame checksums",
        lambda d: lz4.frame.compress(d, content_checksum=True, block_checksum=True),
        "lz4/frame",
        "lz4",
        True,
    ),
    ("lz4 legacy", lz4_legacy, "lz4/legacy", "lz4", True),
    ("lz4 LZ4Block", lz4_java, "lz4/LZ4Block", "lz4", True),
    ("lz4.block.compress", lz4.block.compress, "lz4/block", "lz4", True),
    ("lz4 BE prefix", lz4_be, "lz4/block-be", "lz4", True),
    ("lz4 hadoop", lz4_hadoop, "lz4/hadoop", "lz4", True),
    ("lz4 no size", lambda d: lz4.block.compress(d, store_size=False), "lz4/block-nosize", "lz4", False),
    ("zstandard", zstandard.ZstdCompressor().compress, "zstd", "zstd", True),
    ("zstandard no size", zstd_nosize, "zstd", "zstd", True),
    ("zstandard checksum", zstandard.ZstdCompressor(write_checksum=True).compress, "zstd", "zstd", True),
    ("gzip", gzip.compress, "gzip", "gzip", True),
    ("zlib", zlib.compress, "zlib", "zlib", True),
    ("zlib level 1", lambda d: zlib.compress(d, 1), "zlib", "zlib", True),
    ("raw deflate", raw_deflate, "deflate", "deflate", False),
    ("bz2", bz2.compress, "bzip2", "bzip2", True),
    ("lzma xz", lzma.compress, "xz", "xz", True),
    ("lzma alone", lzma_alone, "xz/lzma", "xz", True),
]
if brotli is not None:
    PRODUCERS.append(("brotli", brotli.compress, "brotli", "brotli", False))

PAYLOADS = {
    "json4k": json_doc(4096, 1),
    "json200k": json_doc(200_000, 2),
    "random": random.Random(3).randbytes(5000),
    "text": b"The quick brown fox jumps over the lazy dog. " * 3,
}


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


# ---------------------------------------------------------------------------------------------
# Containers: concatenation, skippable frames, variants


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


def test_gzip_multi_member() -> None:
    a, b = b"member one\n" * 30, b"member two\n" * 20
    fmt, dec = registry.decode_auto(gzip.compress(a) + gzip.compress(b))
    assert dec.data == a + b and dec.declared_size == len(a) + len(b)
    # zero padding after the last member is ignored; other trailing bytes are reported
    assert registry.decode_auto(gzip.compress(a) + bytes(512))[1].data == a
    dec = registry.decode_auto(gzip.compress(a) + b"garbage")[1]
    assert dec.data == a and dec.headers["trailing_bytes"] == 7


def test_bzip2_and_xz_multi_stream() -> None:
    a, b = b"one " * 100, b"two " * 100
    assert registry.decode_auto(bz2.compress(a) + bz2.compress(b))[1].data == a + b
    assert registry.decode_auto(lzma.compress(a) + lzma.compress(b))[1].data == a + b


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


# ---------------------------------------------------------------------------------------------
# Recognised but undecodable


def test_s2_is_undecodable() -> None:
    value = b"\xff\x06\x00\x00S2sTwO" + b"\x01\x09\x00\x00" + b"\x00" * 4 + b"hello"
    with pytest.raises(Undecodable, match="S2 stream"):
        registry.decode_auto(value)
    assert registry.detect(value).label == "snappy/s2"
    with pytest.raises(Undecodable):
        registry.decode_named("snappy", value)


def test_zstd_dictionary_is_undecodable() -> None:
    samples = [json.dumps({"id": i, "name": f"user{i}", "pad": "y" * (i % 37)}).encode() for i in range(500)]
    zdict = zstandard.train_dictionary(2048, samples)
    value = zstandard.ZstdCompressor(dict_data=zdict).compress(samples[7])
    with pytest.raises(Undecodable, match=f"dictionary ID {zdict.dict_id()}") as info:
        registry.decode_auto(value)
    assert info.value.format is not None and info.value.format.label == "zstd"
    with pytest.raises(Undecodable):
        registry.decode_named("zstd", value)


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


def test_lz4_frame_dictionary_is_undecodable() -> None:
    # FLG 0x61: version 01, block independence, dictID flag; BD 0x40; dictID; HC (not checked first)
    value = b"\x04\x22\x4d\x18\x61\x40" + struct.pack("<I", 4242) + b"\x00" + b"\x00\x00\x00\x00"
    with pytest.raises(Undecodable, match="dictionary ID 4242"):
        registry.decode_auto(value)


# ---------------------------------------------------------------------------------------------
# Truncated and corrupt values: a DecodeError with a short reason, labelled in auto mode


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


def test_named_errors() -> None:
    with pytest.raises(ValueError):
        registry.decode_named("snapy", b"abc")
    with pytest.raises(ValueError):
        registry.formats_for("nope")
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


def test_brotli_named_only() -> None:
    if brotli is None:
        pytest.skip("brotli not installed")
    d = json_doc(20_000)
    v = brotli.compress(d)
    assert registry.decode_auto(v) is None or registry.decode_auto(v)[0].label != "brotli"
    assert registry.decode_named("brotli", v)[1].data == d
    fmt, dec = registry.decode_named("brotli", v, 1000)
    assert dec.truncated and dec.data == d[:1000]
    with pytest.raises(DecodeError, match="^brotli: truncated stream"):
        registry.decode_named("brotli", v[: len(v) // 2])


def test_deflate_name_covers_zlib_and_gzip() -> None:
    d = json_doc(3000)
    assert registry.decode_named("deflate", zlib.compress(d))[0].label == "zlib"
    assert registry.decode_named("deflate", gzip.compress(d))[0].label == "gzip"
    assert registry.decode_named("deflate", raw_deflate(d))[0].label == "deflate"


# ---------------------------------------------------------------------------------------------
# The registry API the shell consumes


def test_registry_api_shape() -> None:
    assert registry.CODEC_NAMES == (
        "snappy",
        "lz4",
        "zstd",
        "gzip",
        "zlib",
        "deflate",
        "bzip2",
        "xz",
        "brotli",
    )
    assert 5 <= registry.MIN_AUTO_LENGTH <= 8
    formats = registry.all_formats()
    assert all(isinstance(f, Format) for f in formats)
    assert {f.grade for f in formats} == {"A", "B", "C", "D"}
    for codec in registry.CODEC_NAMES:
        assert registry.formats_for(codec)
    assert [f.label for f in registry.formats_for("zstd")] == ["zstd"]
    assert "lz4/block-nosize" in [f.label for f in registry.formats_for("lz4")]
    assert registry.decode_auto(b"") is None and registry.detect(b"") is None
    assert registry.decode_auto(snappy.compress(b"abc")) is None  # 5 bytes: below MIN_AUTO_LENGTH


def test_short_values_never_auto_decoded() -> None:
    short = zlib.compress(b"")[: registry.MIN_AUTO_LENGTH - 1]
    assert registry.decode_auto(short) is None
    assert registry.decode_auto(b"\x00" * (registry.MIN_AUTO_LENGTH - 1)) is None


def test_importing_registry_loads_no_codec_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import cqlsh_ext.codecs.registry as r; "
        "libs = ('cramjam', 'lz4', 'zstandard', 'brotli', 'snappy', 'bz2', 'lzma'); "
        "bad = [m for m in libs if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("name,produce,label,codec,auto", PRODUCERS, ids=[p[0] for p in PRODUCERS])
def test_headers(name: str, produce: Callable[[bytes], bytes], label: str, codec: str, auto: bool) -> None:
    value = produce(json_doc(100_000, 3))
    fmt = next(f for f in registry.formats_for(codec) if f.label == label)
    h = fmt.headers(value)
    assert h["format"] == label
    json.dumps(h)  # plain JSON-able values only


def test_header_fields() -> None:
    d = json_doc(100_000, 3)
    z = registry.ZSTD.headers(zstandard.ZstdCompressor(write_checksum=True).compress(d))["frames"][0]
    assert z["content_size"] == len(d) and z["checksum_flag"] and z["dict_id"] is None and z["window_size"]
    f = registry.LZ4_FRAME.headers(lz4.frame.compress(d, block_size=lz4.frame.BLOCKSIZE_MAX256KB))["frames"][
        0
    ]
    assert f["content_size"] == len(d) and f["block_max_size"] == 256 << 10 and f["content_size_flag"]
    g = registry.GZIP.headers(gzip.compress(d, mtime=1234))
    assert g["ISIZE"] == len(d) and g["MTIME"] == 1234 and g["OS"]
    gz = io.BytesIO()
    with gzip.GzipFile("name.json", "wb", fileobj=gz, mtime=0) as fh:
        fh.write(d)
    assert registry.GZIP.headers(gz.getvalue())["FNAME"] == "name.json"
    x = registry.SNAPPY_XERIAL.headers(xerial(d))
    assert x["version"] == 1 and x["compatible_version"] == 1 and len(x["blocks"]) == 4
    s = registry.SNAPPY_FRAMED.headers(snappy_framed(d))
    assert s["chunks"][0]["kind"] == "stream identifier" and s["chunks"][1]["masked_crc32c"].startswith("0x")
    j = registry.LZ4_JAVA.headers(lz4_java(d))
    assert j["blocks"][0]["block_size"] == 64 << 10 and j["blocks"][-1]["decompressed_length"] == 0
    assert "verified" in j["checksum"]
    zl = registry.ZLIB.headers(zlib.compress(d, 9))
    assert zl["window_size"] == 32768 and zl["FLEVEL"] == "maximum" and zl["FDICT"] is False
    assert registry.BZIP2.headers(bz2.compress(d, 3))["block_size"] == "300k"
    assert registry.XZ.headers(lzma.compress(d, check=lzma.CHECK_SHA256))["check"] == "SHA-256"
    assert registry.SNAPPY_RAW.headers(snappy.compress(d))["declared_length"] == len(d)
    assert registry.SNAPPY_HADOOP.headers(snappy_hadoop(d))["blocks"][0]["raw_length"] == len(d)


# ---------------------------------------------------------------------------------------------
# Property tests: arbitrary input only ever raises DecodeError and never passes the cap


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(result: tuple[Format, Decoded] | None, cap: int) -> None:
    if result is not None:
        fmt, dec = result
        assert isinstance(dec.data, bytes) and len(dec.data) <= cap


@FAST
@given(st.binary(max_size=600), st.integers(min_value=1, max_value=5000))
def test_arbitrary_bytes_auto(data: bytes, cap: int) -> None:
    try:
        _check(registry.decode_auto(data, cap), cap)
    except DecodeError:
        pass


@FAST
@given(
    st.sampled_from(registry.CODEC_NAMES), st.binary(max_size=600), st.integers(min_value=1, max_value=5000)
)
def test_arbitrary_bytes_named(codec: str, data: bytes, cap: int) -> None:
    try:
        _check(registry.decode_named(codec, data, cap), cap)
    except DecodeError:
        pass


# Valid streams with damage: magic intact, so the libraries' own error paths are exercised.
_SEEDS = [p[1](json_doc(3000, 11)) for p in PRODUCERS]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=len(_SEEDS) - 1),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=4),
    st.integers(min_value=0),
    st.integers(min_value=1, max_value=10_000),
)
def test_damaged_streams(i: int, flips: list[tuple[int, int]], cut: int, cap: int) -> None:
    b = bytearray(_SEEDS[i])
    for pos, val in flips:
        b[pos % len(b)] = val
    value = bytes(b[: len(b) - cut % (len(b) // 2 + 1)])
    codec = PRODUCERS[i][3]
    for call in (lambda: registry.decode_auto(value, cap), lambda: registry.decode_named(codec, value, cap)):
        try:
            _check(call(), cap)
        except DecodeError as e:
            assert str(e) and "\n" not in str(e)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=3000), st.sampled_from(PRODUCERS))
def test_every_codec_round_trips(payload: bytes, producer: tuple) -> None:
    name, produce, label, codec, auto = producer
    value = produce(payload)
    if not payload and (label in ("deflate", "brotli") or not value):
        return
    fmt, dec = registry.decode_named(codec, value)
    assert dec.data == payload
    if label == "lz4/block-be" and value[:4] == value[3::-1]:
        assert fmt.label in ("lz4/block", label)  # a palindromic size reads the same LE and BE
    else:
        assert fmt.label == label
    if auto and len(value) >= registry.MIN_AUTO_LENGTH and payload:
        found = registry.decode_auto(value)
        if label == "snappy" and len(value) == len(payload) + 2 and not _printable(payload):
            # by design: a short uncompressed binary literal is indistinguishable from a random blob
            assert found is None or found[0].label != "snappy"
            return
        assert found is not None and found[1].data == payload and found[0].label == label


def _printable(b: bytes) -> bool:
    try:
        return b.decode().translate({9: None, 10: None, 13: None}).isprintable()
    except UnicodeDecodeError:
        return False


def test_short_snappy_literals() -> None:
    """A value that is one short literal (nothing compressed) is auto-decoded only when it is text."""
    assert registry.decode_auto(snappy.compress(b"hello"))[1].data == b"hello"
    assert registry.decode_auto(snappy.compress("naïve\tçà".encode()))[1].data == "naïve\tçà".encode()
    uuid_like = bytes.fromhex("0614296e451a2605")  # found by the random trials: 06 14 = 6-byte literal
    assert registry.decode_auto(uuid_like) is None
    assert registry.decode_named("snappy", uuid_like)[1].data == uuid_like[2:]


# ---------------------------------------------------------------------------------------------
# False positives: uncompressed values must come back as None


_WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had "
    "by word but not what all were we when your can said there use an each which she do how their if "
    "will up other about out many then them these so some her would make like him into time has look "
    "two more write go see number no way could people my than first water been call who oil its now"
).split()


def _texty(rng: random.Random) -> bytes:
    kind = rng.randrange(8)
    if kind == 0:  # prose
        s = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 400))).capitalize() + "."
    elif kind == 1:  # JSON object
        s = json.dumps(
            {
                rng.choice(_WORDS): rng.choice(
                    [rng.random(), rng.randint(-9, 10**9), rng.choice(_WORDS), None, True, [1, 2, 3]]
                )
                for _ in range(rng.randint(1, 40))
            }
        )
    elif kind == 2:  # JSON array of records
        s = json.dumps(
            [{"id": rng.randint(0, 10**6), "tag": rng.choice(_WORDS)} for _ in range(rng.randint(1, 60))]
        )
    elif kind == 3:  # UUIDs, hex
        s = "-".join(f"{rng.getrandbits(32):08x}" for _ in range(rng.randint(2, 30)))
    elif kind == 4:  # base64
        import base64

        s = base64.b64encode(rng.randbytes(rng.randint(6, 2000))).decode()
    elif kind == 5:  # CSV / numbers
        s = "\n".join(
            ",".join(str(rng.randint(0, 99999)) for _ in range(5)) for _ in range(rng.randint(1, 80))
        )
    elif kind == 6:  # XML-ish / HTML
        s = "".join(f"<{w}>{rng.choice(_WORDS)}</{w}>" for w in rng.choices(_WORDS, k=rng.randint(1, 100)))
    else:  # non-ASCII UTF-8 text
        s = " ".join(
            rng.choice(["héllo", "naïve", "日本語", "Ελληνικά", "данные", "emoji 😀", "x"])
            for _ in range(rng.randint(2, 300))
        )
    data = s.encode()
    return data if len(data) >= 8 else data + b" padding"


def test_false_positives() -> None:
    rng = random.Random(20240601)
    hits: dict[str, list[bytes]] = {"random": [], "text": []}
    raised: dict[str, list[str]] = {"random": [], "text": []}
    for kind, make in (
        ("random", lambda: rng.randbytes(rng.randint(8, 4096))),
        ("text", lambda: _texty(rng)),
    ):
        for _ in range(20_000):
            value = make()
            try:
                if registry.decode_auto(value) is not None:
                    hits[kind].append(value)
            except DecodeError as e:
                raised[kind].append(str(e))
    print(
        f"\nfalse positives: random {len(hits['random'])}/20000 decoded, {len(raised['random'])} raised; "
        f"text {len(hits['text'])}/20000 decoded, {len(raised['text'])} raised"
    )
    assert not hits["random"] and not hits["text"]
    assert not raised["text"]
    assert len(raised["random"]) <= 2, raised["random"]  # a 3-byte gzip magic may occur by chance


def test_short_random_values_by_length() -> None:
    """Why MIN_AUTO_LENGTH is what it is: trial decodes of short random values."""
    rng = random.Random(7)
    saved = registry.MIN_AUTO_LENGTH
    counts = {}
    try:
        registry.MIN_AUTO_LENGTH = 1
        for n in range(1, 9):
            hits = 0
            for _ in range(20_000):
                try:
                    hits += registry.decode_auto(rng.randbytes(n)) is not None
                except DecodeError:
                    pass
            counts[n] = hits
    finally:
        registry.MIN_AUTO_LENGTH = saved
    print("\nrandom values decoded, by length (of 20000):", counts)
    assert all(counts[n] == 0 for n in range(registry.MIN_AUTO_LENGTH, 9))


# ---------------------------------------------------------------------------------------------
# Regressions found by fuzzing


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


def test_short_headers_explain_themselves() -> None:
    for codec, value in [
        ("gzip", b"\x1f\x8b\x08\x00"),
        ("bzip2", b"BZh9"),
        ("xz", b"\xfd7zXZ\x00\x00"),
        ("zstd", b"\x28\xb5\x2f\xfd"),
        ("lz4", b"\x04\x22\x4d\x18\x68\x40"),
    ]:
        with pytest.raises(DecodeError, match="truncated"):
            registry.decode_named(codec, value)
