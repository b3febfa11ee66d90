"""A journal read back (UNDO, COMPRESSION REWRITE RESUME): only a journal whose lines verify under
the user's key (writing.seal), a regular file reached by its own name (not through a link) that
nobody but its owner can write, the user's own (a Spark part too), in a directory nobody else can
rename it in (the user's or root's, writable by others only with the sticky bit). Anything else is
refused in one line naming why. Journals written before the seal (versions 1 and 2) are read only
when the request says UNSEALED; a journal whose lines carry MACs is sealed whatever its first line
says of its version (a sealed journal relabelled version 2 is refused as changed).

Reading is bounded whatever the file holds: at most MAX_LINE_BYTES a line, MAX_LINES lines and
MAX_TOTAL_BYTES in all, read a line at a time (UNDO streams the rows: it never holds a journal in
memory), the seal checked again on the second pass that reads the rows, which stops where the
first pass stopped (a line appended since is not read). A last line cut short (a kill or a full
disk during its write: each line is written whole and then fsync'd, so only the last can be) is
named and skipped, and every line before it counts.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal_names import FORMAT, VERSION, journal_path
from cqlsh_ext.writing.refused import WriteRefused
from cqlsh_ext.writing.requests import EditRequest, RewriteRequest, WriteRequest, request_from_json
from cqlsh_ext.writing.seal import Verifier, body_of, run_key, user_key

#: Bounds of what a journal read here may hold.
MAX_LINE_BYTES = 80 << 20
MAX_LINES = 100_000_000
MAX_TOTAL_BYTES = 512 << 30
#: Journal parts of a Spark run read at most from one directory.
MAX_PARTS = 100_000
#: The word that reads a journal written before journals were sealed.
UNSEALED = "UNSEALED"
_RUN = re.compile(r"^[0-9a-f]{32}$")


class Unsealed(WriteRefused):
    """A journal written before journals were sealed (version 1 or 2), read without UNSEALED. The
    refusal says the risk and names no statement to run: whoever could write the file chose its
    old values (docs/edit.md, "The journal's seal")."""

    def __init__(self, path: str, version: int) -> None:
        super().__init__(f"{path} is a journal of version {version}, written before journals were sealed: "
                         "nothing shows who wrote it or that it was not changed since, and an UNDO would "
                         "write its old values as they are (whoever could write the file chose them): "
                         "refused (HELP EDIT says how to read one you know to be yours)")
        self.path = path
        self.version = version


@dataclass
class JournalRow:
    key: dict[str, bytes]
    #: The cell's bytes before and after (None: null, a load's cell of a new row or a null loaded).
    old: bytes | None
    new: bytes | None
    #: Whether the write held (None: the journal stops before it said).
    applied: bool | None = None
    ttl: int | None = None
    #: When the cell was to expire (epoch seconds, with their fraction), as read: UNDO's TTL counts
    #: down to it.
    expires: float | None = None
    writetime: int | None = None
    #: The timestamp the row was written at (None: written on a condition).
    at: int | None = None
    #: The journal line it was read from (1-based), for messages.
    line: int = 0
    #: The cell's column where it is not the journal's (a load writes several), else None.
    column: str | None = None
    #: When the value written was to expire, where it differs from `expires` (a load's TTL); None:
    #: `expires` is the value written's too (an edit, a rewrite keep the cell's).
    new_expires: float | None = None
    #: Whether the value written expires at `new_expires` (a load's line says), else at `expires`.
    own_expiry: bool = False
    #: A load's: the position of the line's row in the file or data it loaded.
    source: int | None = None
    #: The row's number in the journal (its outcome's line names it).
    number: int = -1
    #: A load's window's first line: the bytes of the file read by then and their digest (RESUME
    #: checks the file by them).
    source_read: tuple[int, str] | None = None
    #: With it, the file's size and digest as the load opened it (RESUME takes only that file).
    source_whole: tuple[int, str] | None = None
    #: Its outcome says it was not written and is to be loaded again (not sent when the load stopped,
    #: or looked up by RESUME and found never applied).
    again: bool = False

    @property
    def written_expires(self) -> float | None:
        """When the value the line wrote was to expire."""
        return self.new_expires if self.own_expiry else self.expires

    def cell(self) -> tuple[tuple[str, bytes], ...]:
        """The cell the line writes, as a key: its row's key and its column."""
        return (*sorted(self.key.items()), ("", (self.column or "").encode("utf-8")))


@dataclass(frozen=True)
class Torn:
    """The last line, cut short: where it starts (bytes), its number, and what its first bytes
    show it was (TORN_* : a row's line, its outcome, a range's end, the closing line, or not
    known)."""

    offset: int
    line: int
    what: str = ""


TORN_ROW = "row"
TORN_OUTCOME = "outcome"
TORN_RANGE = "range"
TORN_CLOSING = "closing"
_TORN_WORDS = {TORN_ROW: "its row was not written (a row's line is on disk before its write)",
               TORN_OUTCOME: "it said the outcome of a row written: UNDO and RESUME look at that row's cell",
               TORN_RANGE: "it said a token range was finished: RESUME reads that range again",
               TORN_CLOSING: "it was the closing line: the run had ended"}


def torn_what(start: bytes) -> str:
    """What a line cut short was, from its first bytes (a row's line holds its key after its
    number; an outcome, `"applied"`)."""
    if start.startswith(b'{"closed"'):
        return TORN_CLOSING
    if start.startswith(b'{"range"'):
        return TORN_RANGE
    if start.startswith(b'{"row"'):
        head = start[:64]
        if b'"key"' in head:
            return TORN_ROW
        if b'"applied"' in head:
            return TORN_OUTCOME
    return ""


@dataclass(frozen=True)
class Chain:
    """Where a sealed journal's chain stands after its last whole line (RESUME appends from there)."""

    chain: str
    number: int
    previous: bytes

    def __repr__(self) -> str:
        return f"Chain({self.chain}, {self.number})"


@dataclass
class JournalRead:
    path: str
    keyspace: str
    table: str
    blob: BlobTarget
    head: dict[str, Any]
    version: int
    #: What was asked (a sealed journal's; None for versions 1 and 2).
    request: WriteRequest | None = None
    #: Rows by number: each row's outcome (None: not said), counted in one pass.
    outcomes: dict[int, bool | None] = field(default_factory=dict)
    #: Rows whose outcome says they are to be loaded again (JournalRow.again).
    again: set[int] = field(default_factory=set)
    next_row: int = 0
    #: Token ranges (their indexes in the head's "ranges") a rewrite finished.
    ranges_done: set[int] = field(default_factory=set)
    torn: Torn | None = None
    #: Its last line says the run ended (a sealed journal's).
    closed: bool = False
    #: A sealed journal's chain after its last whole line, None for an unsealed one.
    chain: Chain | None = None
    #: The file read (device, inode): the second pass and RESUME's append open the same one.
    identity: tuple[int, int] = (0, 0)
    #: The whole lines the first pass read, and where they end (bytes): the second pass reads no
    #: further (a line appended since, by anyone, is not read).
    lines: int = 0
    end: int = 0

    @property
    def kind(self) -> str:
        return str(self.head.get("kind", "edit"))

    @property
    def sealed(self) -> bool:
        return self.version >= VERSION

    @property
    def mechanism(self) -> str:
        return str(self.head.get("mechanism") or "")

    def rows(self) -> Iterator[JournalRow]:
        """The journal's rows in order, each with its outcome, read again from the file a line at a
        time (bounded and verified as the first pass was)."""
        for number, entry in _JournalFile(self.path, self.version >= VERSION, self).entries():
            if isinstance(entry, Torn):
                return
            if "key" in entry and number > 1:
                row = _row(entry, self.path, number)
                row.applied = self.outcomes.get(row.number)
                row.again = row.number in self.again
                yield row

    @property
    def cut(self) -> bool:
        """A sealed journal without its closing line: its run was killed, or lines were cut from
        its end (rows after its last line are not known)."""
        return self.sealed and not self.closed

    def cut_text(self) -> str:
        """What a reader says of a journal without its closing line, before its preview."""
        return (f"ends at line {self.lines:,} without its closing line: cut, or its run was killed; rows "
                "after it are not known")

    def torn_text(self) -> str:
        """What a reader says of a torn last line ('' when there is none)."""
        if self.torn is None:
            return ""
        what = _TORN_WORDS.get(self.torn.what, "what it held is not known")
        return (f"line {self.torn.line:,} is cut short (its write stopped: a kill or a full disk); {what}; "
                "every line before it is read")


def read_journal(path: str, unsealed: bool = False) -> JournalRead:
    """The journal at `path`, verified and its rows counted in one bounded pass (their values are
    read again by `rows()`); WriteRefused (one line) when it is missing, not a regular file of the
    user's that only the user can write, over a bound, not a journal, or its seal does not verify.
    `unsealed`: a journal of version 1 or 2 is read too (UNDO's UNSEALED)."""
    path = os.path.expanduser(path)
    read: JournalRead | None = None
    last_row = -1
    source = _JournalFile(path, None, None, unsealed)
    for number, entry in source.entries():
        if isinstance(entry, Torn):
            assert read is not None
            read.torn = entry
            break
        if read is None:
            read = source.read
            assert read is not None
            continue
        read.closed = False
        try:
            if "key" in entry:
                n = int(entry["row"])
                # Rows written a few at a time (UNDO, a rewrite) are journaled as their threads
                # come: numbers in any order, each once.
                if n < 0 or n in read.outcomes:
                    raise ValueError("a row number twice")
                last_row = max(last_row, n)
                read.outcomes[n] = None
                if not isinstance(entry["key"], dict):
                    raise TypeError("key")
            elif "applied" in entry:
                n = int(entry["row"])
                if n in read.outcomes:
                    read.outcomes[n] = bool(entry["applied"])
                    if entry.get("again") is True and not entry["applied"]:
                        read.again.add(n)
            elif "range" in entry:
                read.ranges_done.add(int(entry["range"]))
            elif entry.get("closed") is True:
                read.closed = True
            else:
                raise ValueError("unknown entry")
        except (KeyError, TypeError, ValueError):
            raise WriteRefused(f"{path}: line {number:,} is not a journal's line") from None
    if read is None:
        raise WriteRefused(f"{path} is not a journal (it is empty)")
    read.next_row = last_row + 1
    read.chain = source.chain()
    read.lines, read.end = source.lines, source.end
    return read


def without_outcome(parts: list[JournalRead]) -> list[tuple[int, JournalRow, bool]]:
    """The rows no line says the outcome of (a kill during their write), each with its part's
    index and whether it is its cell's last line in the journal (when not, a later line journals the
    row again: RESUME wrote it; a cell is a row's key and, in a load's journal, its column). Read
    from the files only when some outcome is missing."""
    unknown: dict[tuple[tuple[str, bytes], ...], list[tuple[int, JournalRow]]] = {}
    for i, part in enumerate(parts):
        if None not in part.outcomes.values():
            continue
        for row in part.rows():
            if row.applied is None:
                unknown.setdefault(row.cell(), []).append((i, row))
    if not unknown:
        return []
    last: dict[tuple[tuple[str, bytes], ...], tuple[int, int]] = {}
    for i, part in enumerate(parts):
        for row in part.rows():
            key = row.cell()
            if key in unknown:
                last[key] = (i, row.line)
    return [(i, row, (i, row.line) == last[key]) for key, rows in unknown.items() for i, row in rows]


def in_flight(parts: list[JournalRead]) -> list[JournalRow]:
    """The rows no line says the outcome of and no later line journals again: the writes in flight
    when the run was killed (a row a RESUME journaled again has its later line)."""
    return [row for _, row, last in without_outcome(parts) if last]


def read_journals(path: str, unsealed: bool = False) -> list[JournalRead]:
    """The journal at `path` (journal_path), or every journal part in a directory (a rewrite run on
    Spark writes one part per task), each read as one (read_journal); they must name one table and
    blob. WriteRefused."""
    path = journal_path(path)
    if os.path.islink(path):
        raise WriteRefused(f"{path} is a symbolic link: a journal is read by its own name, not through a "
                           "link")
    if os.path.isdir(path):
        safe_directory(os.path.dirname(os.path.abspath(path)), path)
        names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl"))[:MAX_PARTS]
        if not names:
            raise WriteRefused(f"{path} is a directory without journal parts (*.jsonl)")
        parts = [read_journal(os.path.join(path, name), unsealed) for name in names]
    else:
        parts = [read_journal(path, unsealed)]
    first = parts[0]
    for part in parts[1:]:
        if (part.keyspace, part.table, part.blob) != (first.keyspace, first.table, first.blob):
            raise WriteRefused(f"{part.path} journals {part.keyspace}.{part.table}.{part.blob}, not "
                               f"{first.keyspace}.{first.table}.{first.blob} as {first.path} does")
        if part.sealed != first.sealed or (part.request != first.request and part.kind != "undo"):
            raise WriteRefused(f"{part.path} is not a part of the run {first.path} is a part of")
    return parts


def _row(entry: dict[str, Any], path: str, number: int) -> JournalRow:
    try:
        key = {str(k): bytes.fromhex(v) for k, v in entry["key"].items()}

        def optional(name: str) -> int | None:
            value = entry.get(name)
            return None if value is None else int(value)

        def hexed(name: str) -> bytes | None:
            value = entry[name]
            return None if value is None else bytes.fromhex(value)

        def moment(name: str) -> float | None:
            value = entry.get(name)
            return None if value is None else float(value)

        column = entry.get("column")
        if column is not None and not isinstance(column, str):
            raise TypeError("column")
        read = entry.get("source_read")
        if read is not None:
            read = (int(read[0]), str(read[1]))
        whole = entry.get("source_whole")
        if whole is not None:
            whole = (int(whole[0]), str(whole[1]))
        return JournalRow(key, hexed("old"), hexed("new"), None, optional("ttl"), moment("expires"),
                          optional("writetime"), optional("at"), number, column, moment("new_expires"),
                          "new_expires" in entry, optional("source_row"), int(entry["row"]), read,
                          source_whole=whole)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise WriteRefused(f"{path}: line {number:,} is not a journal's line") from None


class _JournalFile:
    """One pass over a journal file: its checks, then its lines parsed and verified (see the module
    doc). `sealed` is known on a second pass (`known`: the first pass's reading, whose file it must
    be); on a first one the head says."""

    def __init__(self, path: str, sealed: bool | None, known: JournalRead | None,
                 unsealed: bool = False) -> None:
        self.path = path
        self.sealed = sealed
        self.known = known
        self.unsealed = unsealed
        #: The first pass's reading, made from the head.
        self.read: JournalRead | None = None
        self.verifier: Verifier | None = None
        self._rest_key: bytes | None = None
        self._st: os.stat_result | None = None
        #: The whole lines read so far, and where they end (bytes).
        self.lines = 0
        self.end = 0

    def chain(self) -> Chain | None:
        if self.verifier is None:
            return None
        return Chain(self.verifier.chain, self.verifier.number, self.verifier.previous)

    def _open(self) -> Any:
        path = self.path
        try:
            # O_NONBLOCK: a FIFO must not hold the shell while nobody writes to it.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as err:
            if os.path.islink(path):
                raise WriteRefused(f"{path} is a symbolic link: a journal is read by its own name, not "
                                   "through a link") from None
            raise WriteRefused(f"cannot read {path}: {err.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefused(f"{path} is not a regular file (a device, a pipe or a directory): not a "
                                   "journal")
            if stat.S_IMODE(st.st_mode) & 0o022:
                raise WriteRefused(f"{path} can be written by others ({stat.filemode(st.st_mode)[1:]}): a "
                                   "journal that anyone but its owner can change is refused")
            if self.known is not None and (st.st_dev, st.st_ino) != self.known.identity:
                raise WriteRefused(f"{path} was replaced while it was read: refused")
            if self.known is None:
                safe_directory(os.path.dirname(os.path.abspath(path)), path)
            if st.st_size > MAX_TOTAL_BYTES:
                raise WriteRefused(f"{path} is {st.st_size:,} bytes, more than a journal read here may hold "
                                   f"({MAX_TOTAL_BYTES:,})")
            self._st = st
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb", buffering=1 << 16)
        except BaseException:
            os.close(fd)
            raise

    def _owner(self) -> None:
        """A journal of the user's own, a Spark part too (its task runs as the user: the parts'
        directory is the user's, 0700)."""
        st = self._st
        assert st is not None
        if st.st_uid != os.geteuid():
            raise WriteRefused(f"{self.path} belongs to another user (uid {st.st_uid}): a journal is read "
                               "only by the user who wrote it")

    def entries(self) -> Iterator[tuple[int, Any]]:
        """(line number, parsed object) for each line, its seal checked; a Torn for a last line cut
        short, and nothing after it. WriteRefused past a bound, for a line that is not JSON or
        does not verify."""
        path = self.path
        with self._open() as f:
            size = self._st.st_size if self._st is not None else 0
            offset, number, total = 0, 0, 0
            while True:
                line = f.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                number += 1
                total += len(line)
                if number > MAX_LINES or total > MAX_TOTAL_BYTES:
                    raise WriteRefused(f"{path}: more than {MAX_LINES:,} lines or {MAX_TOTAL_BYTES:,} bytes, "
                                       "more than a journal read here may hold")
                if len(line) > MAX_LINE_BYTES:
                    raise WriteRefused(f"{path}: line {number:,} is longer than {MAX_LINE_BYTES >> 20} MiB, "
                                       "more than a journal's line holds")
                known = self.known
                if known is not None and offset >= known.end:
                    return  # where the first pass stopped: a line appended since is not read
                whole = line.endswith(b"\n")
                last = offset + len(line) >= size
                if not whole and last:  # the last line, cut short by a kill or a full disk
                    if number == 1:
                        raise WriteRefused(f"{path} is not a journal (its first line is cut short)")
                    yield number, Torn(offset, number, torn_what(line))
                    return
                entry = self._entry(line, number, last)
                if entry is None:  # an unsealed journal's last line, not JSON: cut short
                    yield number, Torn(offset, number, torn_what(line))
                    return
                offset += len(line)
                self.lines, self.end = number, offset
                yield number, entry

    def _entry(self, line: bytes, number: int, last: bool) -> dict[str, Any] | None:
        path = self.path
        sealed = self.sealed
        split = body_of(line)
        body = split[0] if split is not None else line
        try:
            entry = json.loads(body)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):
            if number == 1:
                raise WriteRefused(f"{path} is not a journal (its first line is not JSON)")
            if sealed is False and last:
                return None
            raise WriteRefused(f"{path}: line {number:,} is not JSON (only the last line of a journal can be "
                               "cut short: this one was changed)")
        if number == 1:
            sealed = self._version(entry, split is not None)
        if sealed:
            if split is None:
                raise WriteRefused(f"{path}: line {number:,} carries no seal: the journal was changed")
            self._verify(entry, split[0], split[1], number)
        elif split is not None:
            raise WriteRefused(f"{path}: line {number:,} carries a seal, in a journal that says it has none: "
                               "the journal was changed: refused")
        if number == 1:
            self._head(entry, bool(sealed))
        return entry

    def _version(self, entry: dict[str, Any], mac: bool) -> bool:
        """Whether the journal is sealed, by its first line (a version this release reads); a first
        line that carries a MAC is a sealed journal's whatever version it names: one that says
        it is older was changed."""
        path = self.path
        if "journal" in entry and entry.get("journal") != FORMAT:
            raise WriteRefused(f"{path} is not a cqlsh-ext journal")
        version = entry.get("version", 1) if entry.get("journal") == FORMAT else 1
        if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
            raise WriteRefused(f"{path} is a journal of version {version}: this cqlsh-ext reads versions 1 "
                               f"to {VERSION} (a newer release wrote it)")
        sealed = version >= VERSION
        if mac and not sealed:
            raise WriteRefused(f"{path}: its lines carry seals, but its first line says version {version}, "
                               "written before journals were sealed: the journal was changed: refused")
        if self.sealed is None and not sealed and not self.unsealed:
            raise Unsealed(path, version)
        return sealed

    def _head(self, entry: dict[str, Any], sealed: bool) -> None:
        """The first line, verified when sealed: whose the file is; a first pass's reading made."""
        path = self.path
        if self.sealed is None:
            version = entry.get("version", 1) if entry.get("journal") == FORMAT else 1
            self.read = _reading(entry, path, int(version))
            self.sealed = sealed
        self._owner()
        if self._st is not None and self.read is not None:
            self.read.identity = (self._st.st_dev, self._st.st_ino)

    def _verify(self, entry: dict[str, Any], body: bytes, mac: bytes, number: int) -> None:
        path = self.path
        if number == 1:
            run, part = entry.get("run"), entry.get("part")
            if not isinstance(run, str) or not _RUN.match(run) or not (part is None or type(part) is int):
                raise WriteRefused(f"{path}: its first line names no run: not a sealed journal")
            key = user_key(create=False)
            chain = run if part is None else f"{run}.part-{part:04d}"
            self.verifier = Verifier(key, chain)
            self._rest_key = key if part is None else run_key(key, run)
            if not self.verifier.check(body, mac):
                raise WriteRefused(f"{path}: its first line's seal does not verify (the line was changed, or "
                                   "another user's key sealed it): refused")
            return
        assert self.verifier is not None
        if not self.verifier.check(body, mac, self._rest_key):
            raise WriteRefused(f"{path}: line {number:,}'s seal does not verify (a line was changed, moved, "
                               "dropped or taken from another journal): refused")


def safe_directory(directory: str, journal: str) -> None:
    """The directory a journal is read from: nobody but the user (or root) may put another file in
    its place (the user's or root's, writable by others only with the sticky bit, which lets
    nobody rename another's file); WriteRefused in one line otherwise."""
    try:
        st = os.stat(directory)
    except OSError as err:
        raise WriteRefused(f"cannot read {journal}'s directory {directory}: {err.strerror}") from None
    if st.st_uid not in (os.geteuid(), 0):
        raise WriteRefused(f"{journal} is in {directory}, which belongs to another user (uid {st.st_uid}), "
                           "who could put another journal in its place: refused")
    if stat.S_IMODE(st.st_mode) & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise WriteRefused(f"{journal} is in {directory}, which others can write "
                           f"({stat.filemode(st.st_mode)[1:]}) without the sticky bit: anyone could put "
                           "another journal in its place: refused")


def _reading(entry: dict[str, Any], path: str, version: int) -> JournalRead:
    """A first pass's reading, from the journal's head; WriteRefused when it names no table and
    column, or (sealed) no request of its own target."""
    try:
        blob = BlobTarget.from_json({**entry, "text": bool(entry.get("text", False))})
        keyspace, table = entry["keyspace"], entry["name"]
        if not isinstance(keyspace, str) or not isinstance(table, str):
            raise TypeError("table")
    except (KeyError, TypeError, ValueError):
        raise WriteRefused(f"{path} is not a journal (its first line names no table and column)") from None
    request = None
    if version >= VERSION:
        try:
            request = request_from_json(entry.get("request"))
        except (KeyError, TypeError, ValueError):
            raise WriteRefused(f"{path}: its first line holds no request this cqlsh-ext reads") from None
        if isinstance(request, EditRequest | RewriteRequest) and \
                (request.keyspace, request.table, request.blob) != (keyspace, table, blob):
            raise WriteRefused(f"{path}: its first line's request names another table or column than it does")
    return JournalRead(path, keyspace, table, blob, entry, version, request)
