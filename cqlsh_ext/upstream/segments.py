"""The driver's reading of protocol v5 segments, linear in what its reactor has read.

cassandra-driver 3.30.1 reads a v5 connection's bytes into a buffer (its reactor goes on reading
while the socket has more), then `Connection.process_io_buffer` takes one segment (at most 128
KiB) off the front, copies everything behind it into a new buffer
(`_ConnectionIOBuffer.reset_io_buffer`), takes the next one, copies the rest again: quadratic in
what was read in one go. A large answer arrives faster than the loop takes it (`PAGING OFF` over
20,000 rows of 2.6 KB: reads of up to 40 MB, 0.5 to 7 GB copied a run, measured), and so may a
page of large values. Here the complete segments are taken one after the other where they lie,
each one's frames handed over as the driver hands them (`process_msg`) before the next segment is
taken, and the incomplete rest is copied once, at the end. Protocol v4 and earlier (no segments)
keep the driver's own code. `DRIVER_COPIED` pins the driver's source this follows (its module is
compiled; the source beside it is what it was compiled from).
"""

from __future__ import annotations

from typing import Any

#: The driver's functions this module re-implements: SHA-256 of their source in connection.py
#: (tests/test_seams.py checks them).
DRIVER_COPIED: dict[str, str] = {
    "Connection.process_io_buffer":
        "adaeb1eaae2bde694436edde32562dcd6a9f60b3a35a9ebe9aabf9f6d44b0131",
    "Connection._process_segment_buffer":
        "2443a0771359778aa4e7fc1478219eb5717df7737f1fec3720d321a32db8df51",
    "Connection._read_frame_header":
        "d7cbb0d371064ca4715d7e992f83f11161e9140a1a40263b05c59f959ab041f6",
    "_ConnectionIOBuffer.reset_io_buffer":
        "ec54ef82619a0b6a13a236a32bf7cbcd4179821fa7054159375bb1cba52a7f61",
    "_ConnectionIOBuffer.reset_cql_frame_buffer":
        "d70f9f1afa420560af3d02f7523ed06e7f7e2cb3adc5cb5913e3d9f623ff5396",
}


def install() -> None:
    """Replace Connection.process_io_buffer, once a process (before any connection reads)."""
    from cassandra import connection

    cls: Any = connection.Connection
    if hasattr(cls, "driver_process_io_buffer"):
        return
    cls.driver_process_io_buffer = cls.process_io_buffer  # the driver's own (protocol v4 and earlier)
    cls.process_io_buffer = _process_io_buffer(cls.process_io_buffer, connection)


def _process_io_buffer(driver_own: Any, connection: Any) -> Any:
    from cassandra.segment import CrcException

    @connection.defunct_on_error
    def take_segment(conn: Any, raw: Any, start: int, end: int) -> bool:
        """One complete segment at `start` of the read bytes (`raw`, `end` of them) moved to the
        frame buffer, as _process_segment_buffer moves the one at 0; False when it is not whole."""
        codec = conn._segment_codec
        if end - start < codec.header_length_with_crc:
            return False
        raw.seek(start)
        try:
            header = codec.decode_header(raw)
            if end - start < header.segment_length:
                return False
            segment = codec.decode(raw, header)
        except CrcException as exc:
            raise connection.CrcMismatchException(str(exc), conn.endpoint) from exc
        conn._io_buffer.cql_frame_buffer.write(segment.payload)
        return True

    def process_io_buffer(self: Any) -> None:
        if not self._is_checksumming_enabled:
            return driver_own(self)
        io_buffer = self._io_buffer
        raw = io_buffer.io_buffer
        end = raw.tell()
        start = 0
        try:
            while True:
                taken = take_segment(self, raw, start, end)
                io_buffer._segment_consumed = bool(taken)
                if not taken:  # not whole yet, or the connection failed on it (defunct)
                    return
                start = raw.tell()
                # The frames complete in the frame buffer, as the driver's loop takes them.
                while True:
                    if not self._current_frame:
                        pos = self._read_frame_header()
                    else:
                        pos = io_buffer.readable_cql_frame_bytes()
                    if not self._current_frame or pos < self._current_frame.end_pos:
                        break
                    frame = self._current_frame
                    frames = io_buffer.cql_frame_buffer
                    frames.seek(frame.body_offset)
                    msg = frames.read(frame.end_pos - frame.body_offset)
                    self.process_msg(frame, msg)
                    io_buffer.reset_cql_frame_buffer()
                    self._current_frame = None
                if self._io_buffer is not io_buffer or io_buffer.io_buffer is not raw:
                    return  # (a handler replaced the buffers: what it kept is theirs now)
        finally:
            if self._io_buffer is io_buffer and io_buffer.io_buffer is raw:
                if start:
                    raw.seek(start)  # the rest, from the first segment not taken, copied once
                    io_buffer.reset_io_buffer()
                else:  # nothing taken: the bytes stay where they are, the reactor writes after them
                    raw.seek(end)

    return process_io_buffer


def source_hash(qualified_name: str) -> str:
    """SHA-256 of a function's source in the installed driver's connection.py ("Class.method")."""
    import ast
    import hashlib
    from pathlib import Path

    import cassandra

    path = Path(cassandra.__file__).parent / "connection.py"
    text = path.read_text()
    owner, name = qualified_name.split(".")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return hashlib.sha256((ast.get_source_segment(text, item) or "").encode()).hexdigest()
    raise LookupError(f"{qualified_name} is not in {path}")
