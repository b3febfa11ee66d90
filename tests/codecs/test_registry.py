"""The registry API, its import cost, and the header fields every format reports."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import zlib
from collections.abc import Callable

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import Container, DecodeError
from cqlsh_ext.codecs.capabilities import Headers

try:
    import brotli
except ImportError:  # optional dependency
    brotli = None

from codec_producers import (
    PRODUCERS,
    json_doc,
    snappy_hadoop,
)

from cqlsh_ext.demo.samples import lz4_java_block as lz4_java
from cqlsh_ext.demo.samples import snappy_framed
from cqlsh_ext.demo.samples import xerial_stream as xerial


def test_registry_api_shape() -> None:
    assert registry.CODEC_NAMES == (
        "snappy",
        "lz4",
        "zstd",
        "dcz",
        "gzip",
        "zlib",
        "deflate",
        "bzip2",
        "xz",
        "brotli",
        "dcb",
    )
    assert 5 <= registry.MIN_AUTO_LENGTH <= 8
    formats = registry.all_containers()
    assert all(isinstance(f, Container) for f in formats)
    assert {f.grade for f in formats} == {"A", "B", "C", "D"}
    for codec in registry.CODEC_NAMES:
        assert registry.containers_for(codec)
    assert [f.label for f in registry.containers_for("zstd")] == ["zstd"]
    assert "lz4/block-nosize" in [f.label for f in registry.containers_for("lz4")]
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
    fmt = next(f for f in registry.containers_for(codec) if f.label == label)
    if isinstance(fmt, Headers):  # the others show none (test_declarations pins which have them)
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


def test_may_come_first_never_rules_out_the_container_detection_takes() -> None:
    # COMPRESSION REWRITE hands its settle only the values whose outer container may be its
    # target's (rewrite.job.Examiner.settle): a value ruled out there is examined, read by the
    # Python engine; one wrongly ruled out would be rewritten though already in the target.
    import random

    from tests.native import corpora

    rng = random.Random(3)
    values = corpora.produced() + corpora.seeds() + corpora.orders(300) + corpora.demo()
    values += corpora.edges(values[:200], rng, 4) + [corpora.mutate(v, rng) for v in values[:400]]
    read = 0
    for value in values:
        try:
            found = registry.decode_auto(value)
        except DecodeError:
            continue  # it does not decode: never left as it is
        read += 1
        first = found[0] if found is not None else None
        assert registry.may_come_first(first, value), (first, value[:16])
    assert read > 1000
    gz, zs = registry.by_label("gzip"), registry.by_label("zstd")
    zstd_value = zstandard.ZstdCompressor().compress(b'{"a": 1}' * 10)
    assert registry.may_come_first(zs, zstd_value)
    assert not registry.may_come_first(gz, zstd_value) and not registry.may_come_first(None, zstd_value)
    assert registry.may_come_first(None, b"abc") and not registry.may_come_first(zs, b"abc")
