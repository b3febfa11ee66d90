"""The journal of a write to stored values (an edit, a COMPRESSION REWRITE, an UNDO): before a row
is written, its primary key, its stored bytes, the bytes written, the cell's TTL and write time are
appended to a file and flushed to disk (fsync); after the write, whether it holds. UNDO reads it
back; COMPRESSION REWRITE RESUME appends to it.

One JSON object a line. The first line names the format and its version, the table and the blob:

    {"journal": "cqlsh-ext write journal", "version": 2, "kind": "edit", "table": "ks.t",
     "keyspace": "ks", "name": "t", "column": "data", "access": null, "container": null,
     "text": false, "mechanism": "timestamp", ...}

(a rewrite adds its statement: "spec", "where", "ranges", "pace"); then per row

    {"row": n, "key": {column: hex of the driver's serialized value}, "old": hex, "new": hex,
     "ttl": seconds left when read or null, "expires": epoch seconds or null,
     "writetime": the cell's write time read (microseconds) or null, "at": the write's timestamp}

then `{"row": n, "applied": true|false}` (false: the row changed since it was read and was left
alone), and for a rewrite `{"range": i, "done": true}` once every row of its i-th token range is
written. Keys are kept serialized, so any CQL type goes back as it was. A version-1 journal (an edit
journal without the format line, before TTLs were kept) reads the same way.

Journals hold stored values: created readable by the user only (0600, O_EXCL, never through a
symlink) in a directory only the user can open (0700; a directory that others may write, or that is
not the user's, is refused, or made 0700 with a word when it is the user's own), by default a
`journal` directory beside the shell's history (cqlsh's CQL_HISTORY moves both).

Reading is bounded whatever the file holds (a journal is an argument, not trusted): a regular file
only, at most MAX_LINE_BYTES a line, MAX_LINES lines and MAX_TOTAL_BYTES in all, read a line at a
time (UNDO streams the rows: it never holds a journal in memory). A last line cut short (a kill or a
full disk during its write: each line is written whole and then fsync'd, so only the last can be) is
named and skipped, and every line before it counts.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.edit.document import EditRefused

JOURNAL_DIR = "journal"
FORMAT = "cqlsh-ext write journal"
VERSION = 2
#: Bounds of what a journal read here may hold.
MAX_LINE_BYTES = 80 << 20
MAX_LINES = 100_000_000
MAX_TOTAL_BYTES = 512 << 30


def journal_dir(history_file: str) -> str:
    """The `journal` directory beside the shell's history file."""
    return os.path.join(os.path.dirname(os.path.abspath(history_file)), JOURNAL_DIR)


class JournalError(EditRefused):
    """The journal cannot be written (a full disk, a directory others may write): nothing more is
    written to the table; str() is the one-line reason."""


@dataclass(frozen=True)
class BlobTarget:
    """The blob an edit writes: a column, or inside it a map of blobs' value (`access` its key) or a
    UDT's field (`access` its name); `holds_text` when its values are text."""

    column: str
    access: str | None = None
    container: str | None = None
    holds_text: bool = False

    def __str__(self) -> str:
        if self.container == "map":
            return f"{self.column}['{self.access}']"
        return f"{self.column}.{self.access}" if self.container == "udt" else self.column


def secure_directory(directory: str) -> str | None:
    """Make `directory` (0700) or check it: the user's own and writable by nobody else. Returns a
    word to say when it was fixed (a directory of the user's that others could write is made
    0700), None when it was fine; JournalError when it is not the user's or not a directory."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError as err:
        raise JournalError(f"the journal directory {directory} cannot be made: {err.strerror}") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise JournalError(f"the journal directory {directory} is not a directory (a link or a file): "
                           "refused (--journal-dir DIR)")
    if st.st_uid != os.geteuid():
        raise JournalError(f"the journal directory {directory} belongs to another user (uid {st.st_uid}): "
                           "refused, journals hold stored values (--journal-dir DIR)")
    loose = stat.S_IMODE(st.st_mode) & 0o077
    if not loose:
        return None
    try:
        os.chmod(directory, 0o700)
    except OSError as err:
        raise JournalError(f"the journal directory {directory} is open to others "
                           f"({stat.filemode(st.st_mode)}) and cannot be closed: {err.strerror}") from None
    return (f"the journal directory {directory} was open to others ({stat.filemode(st.st_mode)[1:]}): "
            "made 0700 (journals hold stored values)")


class Journal:
    """A journal being written: `path` is printed before the first row is. Every append is written
    whole and fsync'd before it returns; JournalError when the disk refuses (nothing half-said:
    the caller stops before writing the row)."""

    def __init__(self, directory: str, keyspace: str, table: str, blob: BlobTarget, kind: str = "edit",
                 mechanism: str = "", extra: Mapping[str, object] | None = None, prefix: str = "") -> None:
        #: A word to say about the directory (made 0700), or None.
        self.note = secure_directory(directory)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        base = os.path.join(directory, f"{prefix or kind}-{keyspace}.{table}-{stamp}")
        path, n = base + ".jsonl", 1
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                break
            except FileExistsError:
                n += 1
                path = f"{base}-{n}.jsonl"
            except OSError as err:
                raise JournalError(f"the journal cannot be created in {directory}: {err.strerror}") from None
        self.path = path
        self.fd: int | None = fd
        self._lock = threading.Lock()
        #: Why the journal takes no more (a write failed), or None.
        self.broken: str | None = None
        self.head = {"journal": FORMAT, "version": VERSION, "kind": kind, "table": f"{keyspace}.{table}",
                     "keyspace": keyspace, "name": table, "column": blob.column, "access": blob.access,
                     "container": blob.container, "text": blob.holds_text, "mechanism": mechanism,
                     **(extra or {})}
        self.rows = 0
        try:
            self.append([self.head])
        except JournalError:
            self.close()
            raise

    @classmethod
    def reopen(cls, path: str) -> Journal:
        """A journal of this user's to append to (COMPRESSION REWRITE RESUME): a last line cut
        short by a kill is cut off first (its row was never sent: each row's line is on disk
        before its write). `rows` continues the numbering."""
        read = read_journal(path)
        journal = cls.__new__(cls)
        journal.note = None
        journal.path = read.path
        journal.head = dict(read.head)
        journal.rows = read.next_row
        journal._lock = threading.Lock()
        journal.broken = None
        try:
            fd = os.open(read.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        except OSError as err:
            raise JournalError(f"{path}: cannot be appended to: {err.strerror}") from None
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            os.close(fd)
            raise JournalError(f"{path}: not a journal of yours readable by you only (0600): refused")
        if read.torn is not None:
            os.ftruncate(fd, read.torn.offset)
        journal.fd = fd
        return journal

    def before(self, row: int, key: Mapping[str, bytes], old: bytes, new: bytes, ttl: int | None = None,
               expires: int | None = None, writetime: int | None = None, at: int | None = None,
               sent: float | None = None) -> None:
        """On disk before the row is written (`sent`: when it is sent, epoch seconds: a paced
        rewrite's)."""
        entry = row_entry(row, key, old, new, ttl, expires, writetime, at)
        if sent is not None:
            entry["sent"] = round(sent, 4)
        self.append([entry])

    def after(self, row: int, applied: bool) -> None:
        self.append([{"row": row, "applied": applied}])

    def range_done(self, index: int) -> None:
        self.append([{"range": index, "done": True}])

    def append(self, entries: list[dict[str, Any]]) -> None:
        """The entries, each a line, written and fsync'd together; JournalError on failure."""
        data = "".join(json.dumps(entry) + "\n" for entry in entries).encode("utf-8")
        with self._lock:  # a rewrite's writes finish on several threads
            self._write(data)

    def _write(self, data: bytes) -> None:
        """One write of whole lines; on failure the file is cut back to where it was (no line is
        left half written but by a kill) and the journal takes no more."""
        fd = self.fd
        if fd is None or self.broken is not None:
            raise JournalError(self.broken or f"the journal {self.path} is closed")
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                done = os.write(fd, view)
                view = view[done:]
            os.fsync(fd)
        except OSError as err:
            what = "the disk is full" if err.errno in (errno.ENOSPC, errno.EDQUOT) else err.strerror
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass  # the last line stays cut short: UNDO names it and reads every line before
            self.broken = f"the journal {self.path} could not be written ({what})"
            raise JournalError(self.broken) from None

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass  # everything was fsync'd: nothing is lost with the descriptor
            self.fd = None


def row_entry(row: int, key: Mapping[str, bytes], old: bytes, new: bytes, ttl: int | None = None,
              expires: int | None = None, writetime: int | None = None, at: int | None = None
              ) -> dict[str, Any]:
    return {"row": row, "key": {k: v.hex() for k, v in key.items()}, "old": old.hex(), "new": new.hex(),
            "ttl": ttl, "expires": expires, "writetime": writetime, "at": at}


@dataclass
class JournalRow:
    key: dict[str, bytes]
    old: bytes
    new: bytes
    #: Whether the write held (None: the journal stops before it said).
    applied: bool | None = None
    ttl: int | None = None
    #: When the cell was to expire (epoch seconds), as read: UNDO's TTL counts down to it.
    expires: int | None = None
    writetime: int | None = None
    at: int | None = None
    #: The journal line it was read from (1-based), for messages.
    line: int = 0


@dataclass(frozen=True)
class Torn:
    """The last line, cut short: where it starts (bytes) and its number."""

    offset: int
    line: int


@dataclass
class JournalRead:
    path: str
    keyspace: str
    table: str
    blob: BlobTarget
    head: dict[str, Any]
    version: int
    #: Rows by number: each row's outcome (None: not said), counted in one pass.
    outcomes: dict[int, bool | None] = field(default_factory=dict)
    rows_seen: int = 0
    next_row: int = 0
    #: Token ranges (their indexes in the head's "ranges") a rewrite finished.
    ranges_done: set[int] = field(default_factory=set)
    torn: Torn | None = None

    @property
    def kind(self) -> str:
        return str(self.head.get("kind", "edit"))

    def rows(self) -> Iterator[JournalRow]:
        """The journal's rows in order, each with its outcome, read again from the file a line at a
        time (bounded as the first pass was)."""
        for number, entry in _entries(self.path, self.torn):
            if "key" in entry and number > 1:
                row = _row(entry, self.path, number)
                row.applied = self.outcomes.get(int(entry["row"]))
                yield row

    def torn_text(self) -> str:
        """What a reader says of a torn last line ('' when there is none)."""
        if self.torn is None:
            return ""
        return (f"line {self.torn.line:,} is cut short (its write stopped: a kill or a full disk); its row "
                "was not written, and every line before it is read")


def read_journal(path: str) -> JournalRead:
    """The journal at `path`, its rows counted in one bounded pass (their values are read again by
    `rows()`); EditRefused (one line) when it is missing, not a regular file, over a bound or not a
    journal."""
    path = os.path.expanduser(path)
    first: dict[str, Any] | None = None
    read: JournalRead | None = None
    last_row = -1
    for number, entry in _entries(path, None, count_torn=True):
        if isinstance(entry, Torn):
            assert read is not None
            read.torn = entry
            break
        if first is None:
            first = entry
            read = _head(entry, path)
            continue
        assert read is not None
        try:
            if "key" in entry:
                n = int(entry["row"])
                # Rows written a few at a time (UNDO, a rewrite) are journaled as their threads
                # come: numbers in any order, each once.
                if n < 0 or n in read.outcomes:
                    raise ValueError("a row number twice")
                last_row = max(last_row, n)
                read.outcomes[n] = None
                read.rows_seen += 1
                if not isinstance(entry["key"], dict):
                    raise TypeError("key")
            elif "applied" in entry:
                n = int(entry["row"])
                if n in read.outcomes:
                    read.outcomes[n] = bool(entry["applied"])
            elif "range" in entry:
                read.ranges_done.add(int(entry["range"]))
            else:
                raise ValueError("unknown entry")
        except (KeyError, TypeError, ValueError):
            raise EditRefused(f"{path}: line {number:,} is not a journal's line") from None
    if read is None:
        raise EditRefused(f"{path} is not a journal (it is empty)")
    read.next_row = last_row + 1
    return read


def _head(entry: dict[str, Any], path: str) -> JournalRead:
    version = entry.get("version", 1) if entry.get("journal") == FORMAT else 1
    if "journal" in entry and entry.get("journal") != FORMAT:
        raise EditRefused(f"{path} is not a cqlsh-ext journal")
    if not isinstance(version, int) or version > VERSION:
        raise EditRefused(f"{path} is a journal of version {version}: this cqlsh-ext reads versions 1 to "
                          f"{VERSION} (a newer release wrote it)")
    try:
        access, container = entry.get("access"), entry.get("container")
        blob = BlobTarget(str(entry["column"]), None if access is None else str(access),
                          None if container is None else str(container), bool(entry.get("text", False)))
        return JournalRead(path, str(entry["keyspace"]), str(entry["name"]), blob, entry, version)
    except (KeyError, TypeError):
        raise EditRefused(f"{path} is not a journal (its first line names no table and column)") from None


def _row(entry: dict[str, Any], path: str, number: int) -> JournalRow:
    try:
        key = {str(k): bytes.fromhex(v) for k, v in entry["key"].items()}

        def optional(name: str) -> int | None:
            value = entry.get(name)
            return None if value is None else int(value)

        return JournalRow(key, bytes.fromhex(entry["old"]), bytes.fromhex(entry["new"]), None,
                          optional("ttl"), optional("expires"), optional("writetime"), optional("at"), number)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise EditRefused(f"{path}: line {number:,} is not a journal's line") from None


def _entries(path: str, torn: Torn | None, count_torn: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each line; a Torn for a last line cut short when
    `count_torn`, and nothing from `torn` on otherwise. EditRefused past a bound or for a file that
    is not a regular one."""
    try:
        # O_NONBLOCK: a FIFO must not hold the shell while nobody writes to it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise EditRefused(f"cannot read {path}: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise EditRefused(f"{path} is not a regular file (a device, a pipe or a directory): not a "
                              "journal")
        if st.st_size > MAX_TOTAL_BYTES:
            raise EditRefused(f"{path} is {st.st_size:,} bytes, more than a journal read here may hold "
                              f"({MAX_TOTAL_BYTES:,})")
        size = st.st_size
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb", buffering=1 << 16)
    except BaseException:
        os.close(fd)
        raise
    with f:
        offset, number, total = 0, 0, 0
        while True:
            line = f.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            total += len(line)
            if number > MAX_LINES or total > MAX_TOTAL_BYTES:
                raise EditRefused(f"{path}: more than {MAX_LINES:,} lines or {MAX_TOTAL_BYTES:,} bytes, more "
                                  "than a journal read here may hold")
            if len(line) > MAX_LINE_BYTES:
                raise EditRefused(f"{path}: line {number:,} is longer than {MAX_LINE_BYTES >> 20} MiB, more "
                                  "than a journal's line holds")
            if torn is not None and offset >= torn.offset:
                return
            whole = line.endswith(b"\n")
            try:
                entry = json.loads(line) if whole else None
            except ValueError:
                entry = None
            if entry is None or not isinstance(entry, dict):
                if not whole or offset + len(line) >= size:
                    # The last line: cut short by a kill or a full disk.
                    if number == 1:
                        raise EditRefused(f"{path} is not a journal (its first line is cut short or not "
                                          "JSON)")
                    if count_torn:
                        yield number, Torn(offset, number)
                    return
                raise EditRefused(f"{path}: line {number:,} is not JSON (only the last line of a journal "
                                  "can be cut short: this one was changed)")
            yield number, entry
            offset += len(line)


def expiry(ttl: int | None, read_at: float) -> int | None:
    """When a cell read at `read_at` with `ttl` seconds left expires (epoch seconds)."""
    return None if ttl is None else int(read_at) + int(ttl)
