"""Decompression bombs, lying headers and memory: every decode stops at the cap, allocates about
the cap (not what a header claims), and fails with a DecodeError rather than MemoryError.

Nothing here times the machine: a decode that stops at the cap is shown by what the code controls,
the bytes allocated (tracemalloc), the library calls made and the streams or frames it opened.
Timings are bench/'s (bench/hostile.py, bench/decode.py)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard

from cqlsh_ext.codecs import bzip2 as bzip2_module
from cqlsh_ext.codecs import deflate as deflate_module
from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DecodeError
from cqlsh_ext.codecs.lz4 import _native as lz4_module

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_values import lz4_frame_with_header, zstd_bomb  # noqa: E402  (the builders test_native_limits uses)

MiB = 1 << 20
CAP = 4 * MiB


def allocated_peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """(fn(), the most bytes Python held at once during the call beyond what it held before):
    the libraries return their output as Python bytes, so a decode that produced what a bomb
    expands to would show it here."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> Iterator[list[int]]:
    """Count the calls a codec module makes to the library function it bound as `name` (the
    real function still does the work)."""
    real = getattr(module, name)
    calls = [0]

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    yield calls
    monkeypatch.setattr(module, name, real)


def _assert_capped(found: tuple | None, cap: int, byte: bytes = b"\x00") -> None:
    assert found is not None
    fmt, dec = found
    assert dec.truncated and len(dec.data) == cap and dec.data == byte * cap


# ---------------------------------------------------------------------------------------------


def test_zstd_claiming_2_pow_40() -> None:
    # FHD 0xc0: 8-byte content size, window descriptor; one raw last block of 10 bytes.
    body = b"\x28\xb5\x2f\xfd\xc0\x00" + struct.pack("<Q", 1 << 40) + b"\x51\x00\x00" + b"0123456789"
    with pytest.raises(
        DecodeError, match="^zstd: declared size 1099511627776 exceeds what the input can hold$"
    ):
        registry.decode_auto(body)
    # single-segment variant (window = content size)
    body = b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 1 << 40) + b"\x51\x00\x00" + b"0123456789"
    with pytest.raises(DecodeError, match="exceeds what the input can hold"):
        registry.decode_auto(body)


def test_zstd_lying_small_content_size() -> None:
    real = zstandard.ZstdCompressor().compress(b"a" * 100_000)
    fhd = real[4]
    assert fhd >> 6 == 2  # 4-byte content size after the window descriptor
    p = 5 if fhd & 0x20 else 6
    lie = real[:p] + struct.pack("<I", 1000) + real[p + 4 :]
    with pytest.raises(DecodeError, match="^zstd: "):
        registry.decode_auto(lie)


def test_zstd_bomb_in_process() -> None:
    bomb = zstd_bomb(256 * MiB)
    for value in (bomb, zstd_bomb(64 * MiB, content_size=False)):
        found, peak = allocated_peak(lambda v=value: registry.decode_auto(v, CAP))
        _assert_capped(found, CAP)
        assert peak < 3 * CAP  # the cap and its pieces, not the 256 MiB the frame holds
    assert registry.decode_auto(bomb, CAP)[1].declared_size == 256 * MiB


_RSS_SCRIPT = textwrap.dedent(
    """
    import resource, sys

    def hwm_kib():
        # VmHWM: this process image's own peak RSS. ru_maxrss also counts what the parent
        # (pytest) had at spawn time: Linux keeps the maximum across fork and exec.
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return -1

    from cqlsh_ext.codecs import registry
    data = open(sys.argv[1], "rb").read()
    cap = int(sys.argv[2])
    registry.decode_auto(b"\\x28\\xb5\\x2f\\xfd\\x20\\x00\\x01\\x00\\x00", cap)  # load zstandard first
    before = hwm_kib()
    fmt, dec = registry.decode_auto(data, cap)
    assert dec.truncated and len(dec.data) == cap and dec.data.count(0) == cap
    print(fmt.label, before, hwm_kib(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


@pytest.mark.parametrize("content_size", [True, False], ids=["content-size", "no-content-size"])
def test_zstd_1gib_bomb_peak_rss(tmp_path: Path, content_size: bool) -> None:
    """1 GiB of zeros in ~33 KB: decoding with a 4 MiB cap stays far below 200 MB peak RSS."""
    bomb = zstd_bomb(1024 * MiB, content_size)
    assert len(bomb) < 100_000
    path = tmp_path / "bomb.zst"
    path.write_bytes(bomb)
    out = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(path), str(CAP)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    label, before, peak, maxrss = out.stdout.split()
    print(
        f"\nzstd 1 GiB bomb ({'with' if content_size else 'without'} content size): VmHWM "
        f"{int(before) // 1024} MB before the decode, {int(peak) // 1024} MB after; "
        f"ru_maxrss {int(maxrss) // 1024} MB (includes the parent's peak)"
    )
    assert label == "zstd"
    # ru_maxrss is in KiB on Linux and can only over-state the child's own peak
    assert int(peak if int(peak) > 0 else maxrss) < 200 * 1024
    assert int(peak) - int(before) < 32 * 1024 or int(peak) < 0


def test_lz4_frame_bomb_and_lying_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = lz4.frame.compress(bytes(64 * MiB))
    _assert_capped(registry.decode_auto(frame, CAP), CAP)
    # many frames: 1 GiB. The first frame fills the cap: one call into LZ4F, the other 15 frames
    # are never decoded, and what Python holds stays about the cap.
    bomb = frame * 16
    with counted(monkeypatch, lz4_module, "_chunk") as calls:
        found, peak = allocated_peak(lambda: registry.decode_auto(bomb, CAP))
    _assert_capped(found, CAP)
    assert calls == [1]
    assert peak < 3 * CAP
    # content size 2**40 with a valid header checksum
    body = struct.pack("<I", 0x80000000 | 5) + b"hello" + b"\x00\x00\x00\x00"
    lie = lz4_frame_with_header(0x68, 0x40, struct.pack("<Q", 1 << 40), body)
    with pytest.raises(DecodeError, match="^lz4/frame: declared size 1099511627776 exceeds"):
        registry.decode_auto(lie)
    # content size smaller and larger than the real content
    for claimed in (3, 6, 100):
        lie = lz4_frame_with_header(0x68, 0x40, struct.pack("<Q", claimed), body)
        with pytest.raises(DecodeError, match="^lz4/frame: "):
            registry.decode_auto(lie)
    # the honest one decodes
    ok = lz4_frame_with_header(0x68, 0x40, struct.pack("<Q", 5), body)
    assert registry.decode_auto(ok)[1].data == b"hello"


def test_lz4_block_bombs() -> None:
    big = 64 * MiB
    le = lz4.block.compress(bytes(big))
    found = registry.decode_auto(le, CAP)
    _assert_capped(found, CAP)
    assert found[1].declared_size == big
    be = struct.pack(">I", big) + lz4.block.compress(bytes(big), store_size=False)
    fmt, dec = registry.decode_named("lz4", be, CAP)
    assert fmt.label == "lz4/block-be" and dec.truncated and dec.data == bytes(CAP)
    raw = lz4.block.compress(bytes(big), store_size=False)
    fmt, dec = registry.decode_named("lz4", raw, CAP)
    assert fmt.label == "lz4/block-nosize" and dec.truncated and dec.data == bytes(CAP)
    # an LE header claiming far more than the input can hold
    with pytest.raises(DecodeError, match="exceeds what the input can hold"):
        registry.decode_named("lz4", struct.pack("<I", 0xFFFFFFFF) + le[4:100])


def test_lz4_capped_block_is_exact_for_real_data() -> None:
    """The hand-finished crossing sequence must match the real output at every cut."""
    doc = json.dumps([{"i": i, "name": f"n{i % 17}", "v": "xy" * (i % 9)} for i in range(3000)]).encode()
    le = lz4.block.compress(doc)
    for cap in (1, 2, 15, 16, 17, 100, 1000, 4095, 4096, 50_001, len(doc) - 1):
        dec = registry.decode_named("lz4", le, cap)[1]
        assert dec.truncated and dec.data == doc[:cap], cap
        dec = registry.decode_named("lz4", le[4:], cap)[1]
        assert dec.data == doc[:cap], cap


def test_snappy_bombs() -> None:
    big = 32 * MiB
    value = snappy.compress(bytes(big))
    found = registry.decode_auto(value, CAP)
    _assert_capped(found, CAP)
    assert found[1].declared_size == big
    # the 21:1 worst case does not fit in 4 MiB with less than ~200 KB: so a 5-byte varint of
    # 2**32 - 1 in a short value is rejected before any allocation
    with pytest.raises(DecodeError, match="declared size 4294967295 exceeds what the input can hold"):
        registry.decode_named("snappy", b"\xff\xff\xff\xff\x0f" + b"\x00" * 100)
    # 2**32 does not fit snappy's 32-bit length at all
    with pytest.raises(DecodeError, match="bad length header"):
        registry.decode_named("snappy", b"\x80\x80\x80\x80\x10" + b"\x00" * 100)
    assert registry.decode_auto(b"\x80\x80\x80\x80\x10" + b"\x00" * 100) is None


def test_snappy_capped_raw_is_exact_for_real_data() -> None:
    doc = json.dumps([{"i": i, "name": f"n{i % 17}"} for i in range(20_000)]).encode()
    value = snappy.compress(doc)
    for cap in (1, 60, 61, 64, 65, 1000, 65_536, 65_537, len(doc) - 1):
        dec = registry.decode_named("snappy", value, cap)[1]
        assert dec.truncated and dec.data == doc[:cap], cap


def test_snappy_framed_and_hadoop_bombs() -> None:
    import io

    out = io.BytesIO()
    snappy.stream_compress(io.BytesIO(bytes(16 * MiB)), out)
    _assert_capped(registry.decode_auto(out.getvalue(), CAP), CAP)
    _assert_capped(registry.decode_auto(snappy.HadoopStreamCompressor().add_chunk(bytes(16 * MiB)), CAP), CAP)


def test_gzip_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(MiB)
    member = b"".join([c.compress(chunk) for _ in range(64)] + [c.flush()])
    bomb = member * 16  # 1 GiB in 16 members
    # the first member fills the cap: one inflater, the other 15 members are never opened
    with counted(monkeypatch, deflate_module, "_decompressobj") as inflaters:
        found, peak = allocated_peak(lambda: registry.decode_auto(bomb, CAP))
    _assert_capped(found, CAP)
    assert inflaters == [1]
    assert peak < 3 * CAP
    assert found[1].declared_size == (64 * MiB) % (1 << 32)
    assert registry.GZIP.headers(gzip.compress(b"x"))["ISIZE"] == 1


def test_zlib_bomb() -> None:
    value = zlib.compress(bytes(64 * MiB), 9)
    _assert_capped(registry.decode_auto(value, CAP), CAP)


def test_bzip2_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = bz2.compress(bytes(16 * MiB))  # ~45 bytes
    bomb = stream * 64  # 1 GiB across 64 streams
    bzip2_module._load()
    # the first stream fills the cap: one decompressor, the other 63 streams are never opened
    with counted(monkeypatch, bzip2_module, "_decompressor") as decompressors:
        found, peak = allocated_peak(lambda: registry.decode_auto(bomb, CAP))
    _assert_capped(found, CAP)
    assert decompressors == [1]
    assert peak < 3 * CAP


def test_xz_bomb() -> None:
    value = lzma.compress(bytes(16 * MiB), preset=0)
    _assert_capped(registry.decode_auto(value, CAP), CAP)
    _assert_capped(
        registry.decode_named("xz", lzma.compress(bytes(16 * MiB), format=lzma.FORMAT_ALONE), CAP), CAP
    )


def test_brotli_bomb() -> None:
    brotli = pytest.importorskip("brotli")
    value = brotli.compress(bytes(64 * MiB), quality=1)
    fmt, dec = registry.decode_named("brotli", value, CAP)
    assert dec.truncated and dec.data == bytes(CAP)


def test_lz4_java_lying_header() -> None:
    # decompressed length larger than the block size the token allows
    value = b"LZ4Block" + struct.pack("<Biii", 0x26, 10, 1 << 20, 0) + b"x" * 10
    with pytest.raises(DecodeError, match="^lz4/LZ4Block: corrupt header of block 0$"):
        registry.decode_auto(value)


@pytest.mark.parametrize("cap", [1, 7, 4096])
def test_tiny_caps(cap: int) -> None:
    doc = json.dumps(list(range(5000))).encode()
    for codec, value in [
        ("snappy", snappy.compress(doc)),
        ("lz4", lz4.frame.compress(doc)),
        ("lz4", lz4.block.compress(doc)),
        ("zstd", zstandard.ZstdCompressor().compress(doc)),
        ("gzip", gzip.compress(doc)),
        ("zlib", zlib.compress(doc)),
        ("bzip2", bz2.compress(doc)),
        ("xz", lzma.compress(doc)),
    ]:
        fmt, dec = registry.decode_named(codec, value, cap)
        assert dec.truncated and dec.data == doc[:cap], (codec, fmt.label)
