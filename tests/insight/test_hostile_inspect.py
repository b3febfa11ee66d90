"""INSPECT's per-value boundary: checksum verification and the report of one value never raise;
what a library or a reader raises becomes that value's one-line reason (no server needed)."""

from __future__ import annotations

import io
import random
import struct
import zlib

import lz4.frame
import snappy

from cqlsh_ext.codecs import registry
from cqlsh_ext.insight import checksums
from cqlsh_ext.insight.inspect import inspect_value

DOC = b'{"id": 17, "name": "hello world", "tags": ["a", "b", "c"], "n": [1, 2, 3, 4, 5, 6]}' * 50


def _mutants(seed: bytes, n: int, rng: random.Random) -> list[bytes]:
    out = []
    for _ in range(n):
        b = bytearray(seed)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        out.append(bytes(b))
    return out


def test_mutated_lz4_frames_never_escape_checksum_verification() -> None:
    # Independent blocks with block and content checksums: lz4.block raises LZ4BlockError on a
    # corrupt block, which escaped verify() for about half of such values before.
    seed = lz4.frame.compress(DOC, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                              block_checksum=True, content_checksum=True)
    rng = random.Random(20)
    undecodable = 0
    for value in _mutants(seed, 600, rng):
        checks = checksums.verify(registry.LZ4_FRAME, value, None, 1 << 20, "corrupt")
        details = [c.detail or "" for c in checks]
        assert all("\n" not in d for d in details)
        undecodable += any("does not decode" in d for d in details)
        report = inspect_value(value, {"file": "v"}, "auto", 1 << 20)
        assert report.reason is None or "could not be inspected" not in report.reason
        assert "\n" not in (report.reason or "")
        report.render()
    assert undecodable > 50  # the path that raised before is exercised


def test_a_corrupt_lz4_block_keeps_its_stored_checksums() -> None:
    value = bytearray(lz4.frame.compress(DOC, block_linked=False, block_checksum=True, content_checksum=True))
    value[20:28] = b"\xff" * 8  # inside the first block's data
    checks = checksums.verify(registry.LZ4_FRAME, bytes(value), None, 1 << 20, "corrupt")
    by_what = {c.what: c for c in checks}
    assert by_what["header checksum (XXH32 >> 8)"].status == checksums.OK
    assert by_what["block 0 checksum (XXH32)"].status == checksums.MISMATCH
    content = by_what["content checksum (XXH32)"]
    assert content.status == checksums.NOT_CHECKED
    assert content.detail is not None and content.detail.startswith("block 0 does not decode: ")


def test_cramjam_errors_in_a_framed_snappy_chunk_are_the_chunks_reason() -> None:
    out = io.BytesIO()
    snappy.stream_compress(io.BytesIO(DOC), out)
    value = bytearray(out.getvalue())
    value[-20:] = b"\xfe" * 20  # copy tags pointing before the start: cramjam's DecompressionError
    (check,) = checksums.verify(registry.SNAPPY_FRAMED, bytes(value), None, 1 << 20, "corrupt")
    assert check.what == "chunk 1 masked CRC-32C" and check.status == checksums.NOT_CHECKED
    assert check.detail is not None and check.detail.startswith("does not decode: ")


def test_a_framed_snappy_chunk_declaring_4_gib_is_not_decoded_to_verify_it() -> None:
    value = bytes.fromhex("ff060000734e61507059000b000000000000ffffffff0f0061")
    (check,) = checksums.verify(registry.SNAPPY_FRAMED, value, None, 4 << 20, "corrupt")
    assert check.status == checksums.NOT_CHECKED
    assert check.detail == "does not decode: declares 4294967295 bytes, more than a chunk can hold"


def test_lz4block_lengths_are_checked_before_lz4_allocates() -> None:
    # 32 MiB declared from 10 bytes, within a cap of 64 MiB: not handed to lz4.block
    value = b"LZ4Block" + struct.pack("<Biii", 0x2F, 10, 32 << 20, 0) + b"\x1f" + bytes(9)
    (check,) = checksums.verify(registry.LZ4_JAVA, value, None, 64 << 20, "corrupt")
    assert check.status == checksums.NOT_CHECKED and check.detail == "corrupt block header"


def test_a_reader_that_recurses_costs_the_payload_line_not_the_report() -> None:
    # A self-referencing pickled list and JSON nested 100,000 deep inside zlib (the first
    # hostile-value reproducers): the layers still show; the payload line says why, whatever the
    # reader raised.
    deep = zlib.compress(b"[" * 100_000 + b"]" * 100_000)
    for value, chain in ((bytes.fromhex("80045d946800612e"), ()), (deep, ("zlib",))):
        report = inspect_value(value, {"file": "v"}, "auto", 1 << 20)
        lines = report.render()
        assert report.chain == chain and not (report.reason or "").startswith("could not be inspected")
        payload = [line for line in lines if line.strip().startswith("payload:")]
        assert len(payload) == 1 and "Traceback" not in payload[0]


def test_names_read_from_a_value_cannot_add_report_lines() -> None:
    # A Java stream whose class name is a JSON text with newlines (the display-table finding of
    # tests/fuzzing/test_regressions.py): the class header and the payload line printed it as it
    # was, so the stored value wrote lines of its own into the report.
    name = '{\n  "id": 42,\n  "checksums": "ok"\n}'
    stream = (b"\xac\xed\x00\x05\x73\x72" + struct.pack(">H", len(name)) + name.encode() + b"\x00" * 8
              + b"\x02\x00\x00\x78\x70")
    lines = inspect_value(stream, {"file": "v"}, "auto", 1 << 20).render()
    assert not [line for line in lines if line.lstrip().startswith(('"', "}"))], lines
    assert any('class {\\n  "id": 42,' in line for line in lines), lines
    assert any(line.startswith('  payload: Java object {\\n  "id": 42,') for line in lines), lines
