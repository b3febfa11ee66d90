"""The driver's v5 segments read in one pass (cqlsh_ext.upstream.segments) against the driver's own
reading: the same messages, in the same order, whatever sizes the bytes arrive in (where the
driver's own reading does not lose them). No server: a
stream made by the driver's own segment encoder (small frames packed into self-contained segments
as a server packs them, a large frame over many segments; LZ4 and uncompressed), fed to two
connections in the same random pieces as a reactor feeds one."""

from __future__ import annotations

import io
import random
import struct
from typing import Any

import pytest
from cassandra import connection
from cassandra.segment import Segment

from cqlsh_ext.upstream import segments

segments.install()
OURS = connection.Connection.process_io_buffer
DRIVER_OWN = connection.Connection.driver_process_io_buffer


def frame(stream: int, body: bytes) -> bytes:
    """A protocol v5 frame: version, flags, stream, opcode (RESULT), body length, body."""
    return struct.pack(">BBhBi", 5, 0, stream, 0x08, len(body)) + body


def encoded(codec: Any, frames: list[bytes], rng: random.Random) -> bytes:
    """`frames` as a server sends them: small ones packed into self-contained segments, one too
    large for a segment split over several (the driver's encoder)."""
    out = io.BytesIO()
    packed = b""
    for one in frames:
        if len(one) > Segment.MAX_PAYLOAD_LENGTH:
            if packed:
                codec._encode_segment(out, packed, True)
                packed = b""
            codec.encode(out, one)
        elif len(packed) + len(one) > Segment.MAX_PAYLOAD_LENGTH or rng.random() < 0.3:
            if packed:
                codec._encode_segment(out, packed, True)
            packed = one
        else:
            packed += one
    if packed:
        codec._encode_segment(out, packed, True)
    return out.getvalue()


class Reader:
    """A v5 connection with checksumming on, as far as process_io_buffer reads it; the messages
    it hands over recorded."""

    def __init__(self, codec: Any, process: Any) -> None:
        conn = connection.Connection.__new__(connection.Connection)
        conn._io_buffer = connection._ConnectionIOBuffer(conn)
        conn._io_buffer.set_checksumming_buffer()
        conn._is_checksumming_enabled = True
        conn._segment_codec = codec
        conn._current_frame = None
        conn.endpoint = "test"
        self.messages: list[tuple[int, bytes]] = []
        self.failures: list[str] = []
        conn.process_msg = lambda header, body: self.messages.append((header.stream, body))
        conn.defunct = lambda exc: self.failures.append(type(exc).__name__)
        self.conn = conn
        self.process = process

    def feed(self, data: bytes) -> None:
        self.conn._iobuf.write(data)
        if self.conn._iobuf.tell():
            self.process(self.conn)


def codecs() -> list[Any]:
    found = [connection.segment_codec_no_compression]
    if connection.segment_codec_lz4 is not None:
        found.append(connection.segment_codec_lz4)
    return found


@pytest.mark.parametrize("codec", codecs(), ids=lambda c: "lz4" if c.compression else "plain")
@pytest.mark.parametrize("seed", range(6))
def test_the_same_messages_as_the_driver_in_any_pieces(codec: Any, seed: int) -> None:
    rng = random.Random(seed)
    bodies = [rng.randbytes(rng.choice([0, 3, 40, 900, 5000, 70_000])) for _ in range(60)]
    bodies[rng.randrange(60)] = rng.randbytes(700_000) + b"x" * 300_000  # over several segments
    frames = [frame(i, body) for i, body in enumerate(bodies)]
    stream = encoded(codec, frames, rng)
    readers = [Reader(codec, OURS), Reader(codec, DRIVER_OWN)]
    pos = 0
    while pos < len(stream):
        size = rng.choice([1, 5, 7, 100, 4096, 65_536, 200_000, 3_000_000])
        for reader in readers:
            reader.feed(stream[pos:pos + size])
        pos += size
    ours, theirs = readers
    assert ours.messages == list(enumerate(bodies)) and not ours.failures
    # The driver's own reading loses a segment header that arrives in pieces shorter than the
    # header (below): where it read this stream without failing, it read the same.
    if not theirs.failures:
        assert theirs.messages == ours.messages


def test_a_segment_header_in_two_reads_is_kept() -> None:
    # The driver's own reading drops the first bytes of a header shorter than its length and CRC
    # (6 bytes) when they arrive alone, and later fails the connection on a CRC mismatch.
    codec = connection.segment_codec_no_compression
    stream = encoded(codec, [frame(1, b"a" * 100), frame(2, b"b" * 100)], random.Random(1))
    for split in range(1, 12):
        reader = Reader(codec, OURS)
        reader.feed(stream[:split])
        reader.feed(stream[split:])
        assert reader.messages == [(1, b"a" * 100), (2, b"b" * 100)] and not reader.failures, split


def test_a_corrupt_segment_fails_the_connection_as_the_driver_does() -> None:
    codec = connection.segment_codec_no_compression
    stream = bytearray(encoded(codec, [frame(1, b"a" * 100), frame(2, b"b" * 100)], random.Random(1)))
    stream[20] ^= 0xFF  # inside the first segment's payload: its CRC32 no longer matches
    readers = [Reader(codec, OURS), Reader(codec, DRIVER_OWN)]
    for reader in readers:
        reader.feed(bytes(stream))
    assert readers[0].failures == readers[1].failures == ["CrcMismatchException"]
    assert readers[0].messages == readers[1].messages == []


@pytest.mark.parametrize("name", sorted(segments.DRIVER_COPIED))
def test_the_driver_source_this_follows_is_unchanged(name: str) -> None:
    # Fails on a driver upgrade that changed what upstream.segments re-implements: re-read `name`
    # in the driver's connection.py, carry the change over, then update segments.DRIVER_COPIED.
    assert segments.source_hash(name) == segments.DRIVER_COPIED[name], f"re-read {name} and our copy of it"
