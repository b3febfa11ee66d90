"""The journal of a write to stored values (an edit, a COMPRESSION REWRITE, an UNDO), as it is
written: before a row is written, its primary key, its stored bytes, the bytes written, the cell's
TTL, moment of expiry and write time, and the timestamp the write is made at are appended to a file
and flushed to disk (fsync); after the write, whether it holds. UNDO reads it back
(writing.journal_read); COMPRESSION REWRITE RESUME appends to it.

One JSON object a line, each sealed (writing.seal: its MAC chained to the line before, under the
user's key). The first line names the format and its version, the run, the table, the blob, the
mechanism and the request (writing.requests):

    {"journal": "cqlsh-ext write journal", "version": 3, "kind": "edit", "run": "<32 hex>",
     "part": null, "table": "ks.t", "keyspace": "ks", "name": "t", "column": "data",
     "access": null, "container": null, "text": false, "mechanism": "timestamp",
     "request": {"request": "edit", ...}, "mac": "<64 hex>"}

(a rewrite adds the token ranges it cut: "ranges", "partition_key"); then per row

    {"row": n, "key": {column: hex of the driver's serialized value}, "old": hex, "new": hex,
     "ttl": seconds left when read or null, "expires": epoch seconds (with their fraction) or
     null, "writetime": the cell's write time read (microseconds) or null, "at": the write's
     timestamp or null (a condition), "mac": ...}

then `{"row": n, "applied": true|false}` (false: the row changed since it was read and was left
alone), for a rewrite `{"range": i, "done": true}` once every row of its i-th token range is
written, and `{"closed": true}` when the run ends. Keys are kept serialized, so any CQL type goes
back as it was.

A load (COPY FROM, db.write) writes one such line per cell it writes: `"old"` null where the row
had no value there (a new row's cells: UNDO writes them null, and the row is gone), `"new"` null
for a null loaded, `"column"` naming the cell's column, `"new_expires"` when the value loaded
expires (its TTL), and `"source_row"` the position of its row in the file or data (RESUME goes on
after those written).

A journal's file is named `KIND-KS.TABLE-STAMP-ID.jsonl`, ID its run's short id, KS.TABLE cut short
(writing.journal_names: what a hint names it by, and why the cut); the run that writes it holds its
lock until it closes it (writing.journal_lock). Journals hold stored values: created readable by the
user only (0600, O_EXCL, never through a symlink) in a directory only the user can open (0700; a
directory that others may write, or that is not the user's, is refused, or made 0700 with a word
when it is the user's own), by default a `journal` directory beside the shell's history (cqlsh's
CQL_HISTORY moves both).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural
from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal_lock import JournalLock
from cqlsh_ext.writing.journal_names import (
    FORMAT,
    VERSION,
    name_base,
    sealed_journals,
    short_id,
    written_here,
)
from cqlsh_ext.writing.refused import WriteRefused
from cqlsh_ext.writing.seal import KeyMissing, Sealer, key_path, new_run, run_key, user_key

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.settings import Settings
    from cqlsh_ext.writing.journal_read import JournalRead
    from cqlsh_ext.writing.mechanism import Mechanism
    from cqlsh_ext.writing.requests import WriteRequest
    from cqlsh_ext.writing.write_context import WriteContext

JOURNAL_DIR = "journal"
#: What a run file says of the run that writes a journal, by its kind (writing.journal_lock).
RUN_NAMES = {"edit": "an edit", "rewrite": "COMPRESSION REWRITE", "undo": "an UNDO",
             "load": "a load (COPY FROM)"}


def journal_dir(history_file: str) -> str:
    """The `journal` directory beside the shell's history file."""
    return os.path.join(os.path.dirname(os.path.abspath(history_file)), JOURNAL_DIR)


def journal_directory(settings: Settings) -> str:
    """--journal-dir, or a `journal` directory beside the shell's history."""
    from cqlsh_ext.upstream import seams

    return settings.display.journal_dir or journal_dir(seams.import_cqlshmain(None).HISTORY)


def shell_write_context(read: ReadContext, settings: Settings) -> WriteContext:
    """The context a write of the shell's runs in: the shell's reading context (`read`), its
    journal directory (`settings`), its lines to standard output."""
    import sys

    from cqlsh_ext.writing.write_context import write_context

    return write_context(read, journal_directory(settings), sys.stdout)


class JournalError(WriteRefused):
    """The journal cannot be written (a full disk, a directory others may write): nothing more is
    written to the table; str() is the one-line reason."""


def secure_directory(directory: str) -> str | None:
    """Make `directory` (0700) or check it: the user's own and writable by nobody else. Returns a
    word to say when it was fixed (a directory of the user's that others could write is made
    0700), None when it was fine; JournalError when it is not the user's or not a directory."""
    from cqlsh_ext.common.private_dir import NotPrivate, owner_only_directory

    try:
        return owner_only_directory(directory, "the journal directory", "journals hold stored values",
                                    "--journal-dir DIR", close_open=True).note
    except NotPrivate as err:
        raise JournalError(str(err)) from None


def writing_key(directory: str) -> bytes:
    """The user's journal key, for a journal written in `directory`: made the first time one is
    written; a key gone missing after journals there were sealed with it is never replaced
    silently (JournalError: where it was, how to make one on purpose, what that does to them)."""
    try:
        return user_key(create=False)
    except KeyMissing:
        sealed = sealed_journals(directory)
        if sealed:
            raise JournalError(
                f"the journal key {key_path()} is missing, and {plural(sealed, 'journal')} in {directory} "
                f"{'was' if sealed == 1 else 'were'} sealed with it: put it back, or make a new one on "
                "purpose with `cqlsh-ext journal new-key` (the journals the old key sealed then no "
                "longer verify: UNDO and RESUME refuse them)") from None
        return user_key(create=True)


def journal_head(kind: str, keyspace: str, table: str, blob: BlobTarget, mechanism: str,
                 request: WriteRequest | None, run: str, part: int | None = None,
                 extra: Mapping[str, object] | None = None) -> dict[str, Any]:
    """A journal's first line (see the module doc)."""
    return {"journal": FORMAT, "version": VERSION, "kind": kind, "run": run, "part": part,
            "table": f"{keyspace}.{table}", "keyspace": keyspace, "name": table, "column": blob.column,
            "access": blob.access, "container": blob.container, "text": blob.holds_text,
            "mechanism": mechanism, "request": None if request is None else request.to_json(),
            **(extra or {})}


@dataclass(frozen=True)
class PartHead:
    """A Spark task's journal part, begun by the driver: its head line sealed under the user's key,
    the key of the run's own that seals its other lines (writing.seal.run_key), and the chain's
    state after the head (picklable: the task carries it)."""

    line: bytes
    chain: str
    mac: bytes
    key: bytes
    prefix: str

    def __repr__(self) -> str:  # never the key, in a log or a traceback
        return f"PartHead({self.prefix})"


def part_heads(head: Mapping[str, Any], parts: int, directory: str) -> list[PartHead]:
    """The heads of a Spark run's `parts` journal parts (`head`: journal_head's, with the run's id),
    sealed here with the user's key (writing_key: the journal directory's)."""
    key = writing_key(directory)
    derived = run_key(key, str(head["run"]))
    out = []
    for number in range(parts):
        chain = f"{head['run']}.part-{number:04d}"
        sealer = Sealer(key, chain)
        line = sealer.line({**head, "part": number})
        out.append(PartHead(line, chain, sealer.previous, derived, f"part-{number:04d}"))
    return out


class Journal:
    """A journal being written: `path` is printed before the first row is. Every append is sealed,
    written whole and fsync'd before it returns; JournalError when the disk refuses (nothing
    half-said: the caller stops before writing the row). The run holds the journal's lock
    (writing.journal_lock) until close()."""

    def __init__(self, directory: str, head: Mapping[str, Any], prefix: str = "",
                 part: PartHead | None = None) -> None:
        #: A word to say about the directory (made 0700), or None.
        self.note = secure_directory(directory)
        self.head = dict(head)
        if part is None:
            self._sealer = Sealer(writing_key(directory), str(head["run"]))
            first = self._sealer.line(self.head)
        else:
            self._sealer = Sealer(part.key, part.chain, 1, part.mac)
            first = part.line
        base = os.path.join(directory, name_base(prefix or str(head["kind"]), str(head["keyspace"]),
                                                 str(head["name"])))
        ident = short_id(str(head["run"]))
        path, n = f"{base}-{ident}.jsonl", 1
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                break
            except FileExistsError:
                n += 1
                path = f"{base}-{n}-{ident}.jsonl"
            except OSError as err:
                raise JournalError(f"the journal cannot be created in {directory}: {err.strerror}") from None
        self.path = path
        written_here(path)  # UNDO LAST, RESUME LAST: this session's own first
        self.fd: int | None = fd
        what = RUN_NAMES.get(str(head["kind"]), str(head["kind"]))
        #: The journal's lock, this run's until close() (writing.journal_lock).
        self.run_lock: JournalLock | None = JournalLock.hold(fd, path, what if part is None else
                                                             f"a Spark task of {what}")
        self._lock = threading.Lock()
        #: Why the journal takes no more (a write failed), or None.
        self.broken: str | None = None
        self.rows = 0
        try:
            with self._lock:
                self._write(first)
        except JournalError:
            self.close()
            raise

    @classmethod
    def reopen(cls, read: JournalRead, lock: JournalLock) -> Journal:
        """A journal of this user's, read and verified (writing.journal_read) under `lock`, taken
        before it was read and now the run's (released by close()), to append to (COMPRESSION
        REWRITE RESUME): a last line cut short by a kill is cut off first (its row was never
        sent: each row's line is on disk before its write). `rows` continues the numbering, the
        seal the chain."""
        journal = cls.__new__(cls)
        journal.note = None
        journal.run_lock = lock
        journal.path = read.path
        journal.head = dict(read.head)
        journal.rows = read.next_row
        journal._lock = threading.Lock()
        journal.broken = None
        assert read.chain is not None, "a sealed journal's"
        chain = read.chain
        journal._sealer = Sealer(user_key(create=False), chain.chain, chain.number, chain.previous)
        try:
            fd = os.open(read.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        except OSError as err:
            raise JournalError(f"{read.path}: cannot be appended to: {err.strerror}") from None
        st = os.fstat(fd)
        mine = st.st_uid == os.geteuid() and not stat.S_IMODE(st.st_mode) & 0o077
        if (st.st_dev, st.st_ino) != read.identity or not mine:
            os.close(fd)
            raise JournalError(f"{read.path}: not the journal of yours read a moment ago, readable by you "
                               "only (0600): refused")
        if read.torn is not None:
            os.ftruncate(fd, read.torn.offset)
        journal.fd = fd
        return journal

    def before(self, row: int, key: Mapping[str, bytes], old: bytes | None, new: bytes | None,
               ttl: int | None = None, expires: float | None = None, writetime: int | None = None,
               at: int | None = None, sent: float | None = None,
               extra: Mapping[str, object] | None = None) -> None:
        """On disk before the row is written (`sent`: when it is sent, epoch seconds: a paced
        rewrite's; `extra`: a load's cell's fields, "column" and "new_expires")."""
        entry = row_entry(row, key, old, new, ttl, expires, writetime, at)
        if sent is not None:
            entry["sent"] = round(sent, 4)
        if extra:
            entry.update(extra)
        self.append([entry])

    def after(self, row: int, applied: bool) -> None:
        self.append([{"row": row, "applied": applied}])

    def range_done(self, index: int) -> None:
        self.append([{"range": index, "done": True}])

    def append(self, entries: list[dict[str, Any]]) -> None:
        """The entries, each a sealed line, written and fsync'd together; JournalError on failure."""
        with self._lock:  # a rewrite's writes finish on several threads: the chain is one order
            self._append(entries)

    def _append(self, entries: list[dict[str, Any]]) -> None:
        if self.fd is None or self.broken is not None:
            raise JournalError(self.broken or f"the journal {self.path} is closed")
        self._write(b"".join(self._sealer.line(entry) for entry in entries))

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
        """The closing line (the run ended: a reader then knows no line was cut from the end), and
        the file closed."""
        with self._lock:  # a write left in flight by a second Ctrl-C appends nothing after it
            if self.fd is None:
                return
            if self.broken is None:
                try:
                    self._append([{"closed": True}])
                except JournalError:
                    pass  # said by the write that failed, if any: the journal reads as killed
            if self.run_lock is not None:  # the run file removed first: no run named without its lock
                self.run_lock.release()
                self.run_lock = None
            try:
                os.close(self.fd)
            except OSError:
                pass  # everything was fsync'd: nothing is lost with the descriptor
            self.fd = None


def row_entry(row: int, key: Mapping[str, bytes], old: bytes | None, new: bytes | None,
              ttl: int | None = None, expires: float | None = None, writetime: int | None = None,
              at: int | None = None) -> dict[str, Any]:
    """A row's line (see the module doc); `old` or `new` None: the cell was or is written null (a
    load's cell where the row had none, or a null loaded)."""
    return {"row": row, "key": {k: v.hex() for k, v in key.items()},
            "old": None if old is None else old.hex(), "new": None if new is None else new.hex(), "ttl": ttl,
            "expires": None if expires is None else round(expires, 6), "writetime": writetime, "at": at}


def open_journal(ctx: WriteContext, kind: str, keyspace: str, table: str, blob: BlobTarget,
                 mechanism: Mechanism, request: WriteRequest | None,
                 extra: Mapping[str, object] | None = None, label: str = "edit") -> Journal:
    """A new journal in the context's journal directory, its path said (and a word, after `label`,
    when the directory had to be closed to others); JournalError."""
    from cqlsh_ext.common.text import say

    head = journal_head(kind, keyspace, table, blob, mechanism.kind, request, new_run(), None, extra)
    journal = Journal(ctx.journal_dir, head)
    if journal.note:
        ctx.say(f"{label}: {journal.note}")
    say(f"Journal: {journal.path}", ctx.out)  # wrapped at words, the path at a '/'
    return journal
