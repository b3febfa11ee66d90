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
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal_names import own_journals
from cqlsh_ext.writing.refused import WriteRefused

#: Cells of this table's undo journals kept at most (16 bytes each, with a set's overhead).
MAX_CELLS = 1_000_000
#: Undo journals of one table looked at at most, newest first.
MAX_JOURNALS = 10_000


class UndoWrites:
    """The cells this user's UNDOs wrote to `blob` of keyspace.table (see the module doc), read on
    first use; `skip`: journals not to read (the one being undone)."""

    def __init__(self, directory: str, keyspace: str, table: str, blob: BlobTarget,
                 skip: frozenset[str] = frozenset()) -> None:
        self.directory, self.keyspace, self.table, self.blob = directory, keyspace, table, blob
        self.skip = frozenset(os.path.realpath(path) for path in skip)
        self._salt = os.urandom(16)
        self._cells: set[bytes] | None = None
        #: Whether MAX_CELLS stopped the reading (older undo journals' cells not looked at).
        self.capped = False

    def wrote(self, key: Mapping[str, bytes], value: bytes, at: int, column: str | None = None) -> bool:
        """Whether one of this user's UNDOs wrote `value` into the row of `key` (serialized, as
        journals hold it) at the timestamp `at`; `column`: the cell's, where a load's journal names
        it (None: the journal's blob)."""
        if self._cells is None:
            self._cells = self._read()
        return self._digest(key, value, at, column) in self._cells

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
        for path in own_journals(self.directory, "undo", f"{self.keyspace}.{self.table}", MAX_JOURNALS,
                                 lambda name: name.endswith(".jsonl"), self.skip):
            try:
                read = read_journal(path)
                if read.kind != "undo" or (read.keyspace, read.table, read.blob) != \
                        (self.keyspace, self.table, self.blob):
                    continue
                for row in read.rows():
                    if row.applied and row.at is not None and row.new is not None:
                        cells.add(self._digest(row.key, row.new, row.at, row.column))
                        if len(cells) >= MAX_CELLS:
                            self.capped = True
                            return cells
            except WriteRefused:
                continue  # not verified: it counts for nothing
        return cells
