"""How a load reads a file (docs/load.md, "What a load reads, bounded"): only a regular file (a FIFO,
a device, a socket, a directory, a file of the kernel's under /proc or /sys refused in one line:
read on, each could give rows without end or hang), read in bytes a line at a time within the
budget (twice the decoders' per-value budget, --max-output-size: a value at the budget spelt as
`0x...` hex, with room for the rest of its line), a longer line skipped a MiB at a time and its row
refused, never held; every byte read hashed (BLAKE2b), so that RESUME can tell the file is the one
the load read (`mark`: the bytes read so far and their digest). A Parquet file's pages are looked
at (their headers, Parquet's Thrift, read by thriftpy2) before a row group is read: one whose
page would decompress past the budget is refused, its rows named, never decompressed.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from cqlsh_ext.common.text import visible
from cqlsh_ext.common.units import human_size
from cqlsh_ext.cql.errors import QueryError

#: Beside two bytes a character of the value at the budget, what a line's other fields may take.
LINE_SLACK = 64 << 10
#: A line longer than the budget is skipped this many bytes at a time.
SKIP_CHUNK = 1 << 20
#: A Parquet page header is read in this many bytes first, at most PAGE_HEADER_MAX.
PAGE_HEADER_FIRST = 4 << 10
PAGE_HEADER_MAX = 16 << 20


class SourceError(QueryError):
    """The source cannot be read (a file missing, not a regular file, not JSON Lines, a column it
    lacks): one line. Before the first row it writes nothing; during a run it stops the load, the
    rows written counted (load.run)."""


def line_budget(cap: int) -> int:
    """Bytes a line (JSON Lines), a CSV record or a field holds at most: a value of `cap` bytes (the
    decoders' per-value budget) spelt `0x...`, and the rest of its line."""
    return 2 * cap + LINE_SLACK


def budget_words(budget: int) -> str:
    return f"{human_size(budget)}, twice the per-value budget (--max-output-size) and 64 KiB"


def shown(path: str) -> str:
    """A path as a message names it: on one line, its control characters escaped."""
    return visible(path, 200)


def _kernel_devices() -> frozenset[int]:
    """The devices of /proc and /sys: files there are the kernel's (sized 0, read without end)."""
    found = set()
    for root in ("/proc", "/sys"):
        try:
            found.add(os.stat(root).st_dev)
        except OSError:
            pass
    return frozenset(found)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str) -> IO[bytes]:
    """`path` opened to read its bytes: a regular file only (see the module doc), else SourceError.
    Opened without blocking (a FIFO with no writer would hold the shell), checked on the descriptor
    opened (no file swapped in between)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise SourceError(f"cannot read {shown(path)}: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(f"{shown(path)} is {_kind(st.st_mode)}: a load reads regular files only "
                              "(read on, a pipe or a device may never end)")
        if st.st_dev in _kernel_devices():
            raise SourceError(f"{shown(path)} is a file of the kernel's (/proc, /sys), not a file of rows: a "
                              "load reads regular files only")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=1 << 16)
    except BaseException:
        os.close(fd)
        raise


@dataclass(frozen=True)
class Line:
    """One line of a file: its number (from 1), its bytes (None: longer than the budget, skipped),
    how many bytes it had, whether it ends the file without a newline."""

    number: int
    data: bytes | None
    size: int
    last: bool = False


class SourceFile:
    """A file a load reads a line at a time (see the module doc), each byte hashed as it is read."""

    def __init__(self, path: str, budget: int, whole: bool = False) -> None:
        self.path = path
        self.budget = budget
        self._file = open_regular(path)
        self._digest = hashlib.blake2b(digest_size=16)
        self.offset = 0
        #: With `whole`: the file's size and digest as opened, read whole first (what RESUME checks the
        #: file by: its rows not read yet too).
        self.whole: tuple[int, str] | None = None
        if whole:
            try:
                self.whole = whole_digest(self._file.fileno())
            except SourceError as err:
                self._file.close()
                raise SourceError(f"{shown(path)}: {err}") from None

    def __enter__(self) -> SourceFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def _read(self, limit: int) -> bytes:
        try:
            data = self._file.readline(limit)
        except OSError as err:
            raise SourceError(f"cannot read {shown(self.path)} past byte {self.offset:,}: {err.strerror}") \
                from None
        self._digest.update(data)
        self.offset += len(data)
        return data

    def lines(self) -> Iterator[Line]:
        """The file's lines, a line longer than the budget skipped (its `data` None)."""
        budget = self.budget
        number = 0
        while True:
            data = self._read(budget + 1)
            if not data:
                return
            number += 1
            if len(data) > budget and not data.endswith(b"\n"):
                size = len(data)
                while not data.endswith(b"\n"):
                    data = self._read(SKIP_CHUNK)
                    if not data:
                        break
                    size += len(data)
                yield Line(number, None, size)
                continue
            yield Line(number, data, len(data), not data.endswith(b"\n"))

    def mark(self) -> tuple[int, str]:
        """The bytes read so far, and their digest (what RESUME checks the file by)."""
        return self.offset, self._digest.hexdigest()


def digest_of(path: str, size: int) -> str | None:
    """The digest of the first `size` bytes of the file at `path` (as SourceFile.mark makes it), None
    when it holds fewer; SourceError when it cannot be read."""
    with open_regular(path) as f:
        digest = hashlib.blake2b(digest_size=16)
        left = size
        while left > 0:
            try:
                data = f.read(min(left, 1 << 20))
            except OSError as err:
                raise SourceError(f"cannot read {shown(path)}: {err.strerror}") from None
            if not data:
                return None
            digest.update(data)
            left -= len(data)
    return digest.hexdigest()


def whole_digest(fd: int) -> tuple[int, str]:
    """(size, digest) of an open file read whole (a Parquet file: its rows are reached through its
    footer, at its end), by position: the descriptor's offset is left as it is."""
    digest = hashlib.blake2b(digest_size=16)
    size = 0
    while True:
        try:
            data = os.pread(fd, 1 << 20, size)
        except OSError as err:
            raise SourceError(f"cannot read past byte {size:,}: {err.strerror}") from None
        if not data:
            break
        digest.update(data)
        size += len(data)
    return size, digest.hexdigest()


def line_error(err: Exception, line: str, at: int) -> str:
    """Why a JSON Lines line is not read, in a user's words (not the standard library's bare message):
    `at`, the character where its value began."""
    text = str(err)
    if "integer string conversion" in text:
        digits = _digits_at(line, at)
        import sys

        return (f"a number of {digits:,} digits, more than the {sys.get_int_max_str_digits():,} a number "
                "read here may have")
    if isinstance(err, RecursionError):
        return "nested too deep to read"
    return f"not a JSON object ({visible(text.replace(' at char ', ' at character '), 120)})"


def _digits_at(line: str, at: int) -> int:
    """The length of the longest run of digits in `line` from `at` (the number too long)."""
    best = run = 0
    for char in line[at:]:
        if char.isdigit():
            run += 1
            best = max(best, run)
        elif run:
            run = 0
    return best


# ---------------------------------------------------------------------------------------- Parquet

_PAGE_IDL = """
struct PageHeader {
  1: required i32 type
  2: required i32 uncompressed_page_size
  3: required i32 compressed_page_size
}
"""


def _page_header_module() -> Any:
    import thriftpy2

    return thriftpy2.load_fp(io.StringIO(_PAGE_IDL), module_name="cqlsh_ext_parquet_pages_thrift")


def _largest_page(fd: int, start: int, end: int) -> int:
    """The largest page of a column chunk (its bytes from `start` to `end`) once decompressed, read
    from the pages' headers (Parquet's Thrift, compact protocol)."""
    from thriftpy2.protocol.compact import TCompactProtocol
    from thriftpy2.thrift import TException

    header = _page_header_module().PageHeader
    largest = 0
    at = start
    while at < end:
        want = PAGE_HEADER_FIRST
        while True:
            buffer = io.BytesIO(os.pread(fd, want, at))
            page = header()
            try:
                page.read(TCompactProtocol(buffer))
                break
            except (TException, EOFError, ValueError, TypeError, struct.error) as err:
                if want >= PAGE_HEADER_MAX or len(buffer.getvalue()) < want:
                    why = visible(str(err), 80)
                    raise SourceError(f"a page header at byte {at:,} cannot be read ({why})") from None
                want *= 4
        if page.uncompressed_page_size is None or page.compressed_page_size is None:
            raise SourceError(f"a page header at byte {at:,} names no size")
        largest = max(largest, page.uncompressed_page_size)
        at += buffer.tell() + max(page.compressed_page_size, 0)
    return largest


def oversized_group(fd: int, metadata: Any, group: int, columns: Sequence[str], budget: int) -> str | None:
    """Why the `group`-th row group cannot be read within the budget (a page of one of `columns`, or
    of their export parts, `data:label`..., decompresses past it), None when it can. Only the
    column chunks larger than the budget once decompressed have their pages looked at."""
    chunks = metadata.row_group(group)
    for j in range(chunks.num_columns):
        chunk = chunks.column(j)
        name = chunk.path_in_schema.split(".", 1)[0]
        if name.split(":", 1)[0] not in columns or chunk.total_uncompressed_size <= budget:
            continue
        start = chunk.data_page_offset
        if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
            start = min(start, chunk.dictionary_page_offset)
        largest = _largest_page(fd, start, start + chunk.total_compressed_size)
        if largest > budget:
            return (f"its column {visible(name, 60)} holds a value of up to {human_size(largest)} once "
                    f"decompressed (a page of that size), past the per-value budget ({human_size(budget)}, "
                    "--max-output-size)")
    return None
