"""UNDO in a chain (docs/edit.md, "Successive edits, undone newest first"): the cells this user's
own UNDOs wrote to one blob, read from their sealed journals.

An UNDO writes each old value back at the cell's write time + 1, so a cell an UNDO of a later
journal put back holds the bytes an older journal wrote, at another write time than the one that
journal records. Such a cell is not a stranger's write: its bytes and write time are exactly those
an undo journal of this user records as written (sealed, under the user's key, "applied": true).
UNDO of the older journal writes it back; a cell anyone else wrote, with the same bytes or not, has
no such line and is left alone.

The cells are found in the undo journals of the same table in the user's journal directory
(`undo-KS.TABLE-*.jsonl`, KS.TABLE as names cut it or whole), newest first, each verified as any
journal is; a journal that does not verify counts for nothing. They are kept as keyed 16-byte
digests of (key, bytes, write time), at most MAX_CELLS of them (past that, the older journals'
cells are not looked at: those rows are left alone, as before).

The same reading says, first of all, when the journal being undone was undone already (UNDO LAST
after UNDO LAST CONFIRM names the same edit, whose rows hold their old values again): an undo
journal names the journal it undid in its sealed first line (its request's path); the newest
MAX_UNDO_JOURNALS of them by name (KIND-KS.TABLE-STAMP-ID.jsonl) are looked at.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

from cqlsh_ext.common.text import plural, say
from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal_names import hint_name, own_journals
from cqlsh_ext.writing.refused import WriteRefused

if TYPE_CHECKING:
    from cqlsh_ext.writing.journal_read import JournalRead

#: Cells of this table's undo journals kept at most (16 bytes each, with a set's overhead).
MAX_CELLS = 1_000_000
#: Undo journals of one table looked at at most, newest first.
MAX_JOURNALS = 10_000
#: Of those, the newest looked at for the UNDO that undid the journal being undone.
MAX_UNDO_JOURNALS = 200
#: A journal's file name: KIND-KS.TABLE-STAMP-ID.jsonl (writing.journal: the stamp in UTC).
_NAME = re.compile(r"^(?P<kind>[a-z]+)-(?P<table>.+)-(?P<stamp>\d{8}T\d{6})-[0-9a-f]{8}\.jsonl$")
#: A journal's kind as a person says whose rows UNDO writes back (any other: "the edit").
WHOSE = {"rewrite": "the rewrite", "undo": "the undo", "load": "the load"}


class UndoWrites:
    """The cells this user's UNDOs wrote to `blob` of keyspace.table, and the UNDOs that wrote a
    journal back (see the module doc), read on first use; `skip`: journals not to read (the one
    being undone)."""

    def __init__(self, directory: str, keyspace: str, table: str, blob: BlobTarget,
                 skip: frozenset[str] = frozenset()) -> None:
        self.directory, self.keyspace, self.table, self.blob = directory, keyspace, table, blob
        self.skip = frozenset(os.path.realpath(path) for path in skip)
        self._salt = os.urandom(16)
        self._cells: set[bytes] | None = None
        #: Each UNDO that wrote rows back, newest first: the real path of the journal it undid, its
        #: journal, when it started (UTC, from its name), the rows it wrote back, whether it ended.
        self._undos: list[tuple[str, str, str, int, bool]] = []
        #: Whether MAX_CELLS stopped the reading (older undo journals' cells not looked at).
        self.capped = False

    def wrote(self, key: Mapping[str, bytes], value: bytes, at: int, column: str | None = None) -> bool:
        """Whether one of this user's UNDOs wrote `value` into the row of `key` (serialized, as
        journals hold it) at the timestamp `at`; `column`: the cell's, where a load's journal names
        it (None: the journal's blob)."""
        if self._cells is None:
            self._cells = self._read()
        return self._digest(key, value, at, column) in self._cells

    def finishing(self, path: str, written: int, out: IO[str]) -> int | None:
        """First of all, when the journal at `path` (`written`: its rows written, or that may have
        been) was undone already (UNDO LAST twice), which UNDO did it and how to have its values
        back, said on `out`; unless a later UNDO of that UNDO put them back, or the journal's name is
        not one a run gives. An UNDO that stopped on its way is not said so: this one finishes it,
        and says that first (writing.undo), from the rows written back so far, returned."""
        named = _NAME.match(os.path.basename(os.path.normpath(path)))
        if named is None or named.group("kind") == "undo":
            return None
        if self._cells is None:
            self._cells = self._read()
        target = os.path.realpath(os.path.expanduser(path))
        undos = [undo for undo in self._undos if undo[0] == target]
        if not undos:
            return None
        _, journal, started, rows, ended = undos[0]
        if any(undo[0] == os.path.realpath(journal) and undo[2] >= started for undo in self._undos):
            return None  # that UNDO was undone in turn: the journal's values are back
        # Stopped on its way (a Ctrl-C closes its journal too): the UNDOs of the journal, together,
        # wrote back fewer rows than it holds written; they are the rows written back so far.
        back = sum(undo[3] for undo in undos)
        if back < written or not ended:
            return back if back < written else rows
        whose, hint = WHOSE.get(named.group("kind"), "the edit"), hint_name(journal, self.directory)
        say(f"undo: already undone: UNDO '{hint}' wrote {plural(rows, 'row')} of {whose} back at {started}; "
            f"{whose}'s values come back by undoing that UNDO:\nUndo the undo: UNDO '{hint}' CONFIRM", out)
        return None

    def _digest(self, key: Mapping[str, bytes], value: bytes, at: int, column: str | None) -> bytes:
        h = hashlib.blake2b(digest_size=16, key=self._salt)
        for name in sorted(key):
            part = key[name]
            h.update(name.encode("utf-8") + b"\x00" + len(part).to_bytes(4, "big") + part)
        h.update((column or "").encode("utf-8") + b"\x00")
        h.update(len(value).to_bytes(8, "big") + value + int(at).to_bytes(8, "big", signed=True))
        return h.digest()

    def _read(self) -> set[bytes]:
        from cqlsh_ext.writing.journal_read import read_journal

        cells: set[bytes] = set()
        named = 0
        for path in own_journals(self.directory, "undo", f"{self.keyspace}.{self.table}", MAX_JOURNALS,
                                 lambda name: name.endswith(".jsonl"), self.skip):
            if self.capped and named >= MAX_UNDO_JOURNALS:
                break  # (neither its cells nor its UNDO looked at)
            name = _NAME.match(os.path.basename(path))
            named += name is not None
            try:
                read = read_journal(path)
                if read.kind != "undo":
                    continue
                if name is not None and named <= MAX_UNDO_JOURNALS:
                    self._note_undo(path, name.group("stamp"), read)
                if self.capped or (read.keyspace, read.table, read.blob) != \
                        (self.keyspace, self.table, self.blob):
                    continue
                for row in read.rows():
                    if row.applied and row.at is not None and row.new is not None:
                        cells.add(self._digest(row.key, row.new, row.at, row.column))
                        if len(cells) >= MAX_CELLS:
                            self.capped = True
                            break
            except WriteRefused:
                continue  # not verified: it counts for nothing
        return cells

    def _note_undo(self, path: str, stamp: str, read: JournalRead) -> None:
        """The UNDO whose journal `read` is, when it wrote rows back, with the journal it undid."""
        undid = getattr(read.request, "path", None)
        written = sum(1 for applied in read.outcomes.values() if applied)
        if isinstance(undid, str) and written:
            started = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]} UTC"
            undid = os.path.realpath(os.path.expanduser(undid))
            self._undos.append((undid, path, started, written, read.closed))
