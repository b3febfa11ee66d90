"""The journal of an edit: before a row is written, its primary key and its stored bytes (and the
bytes the edit writes) are appended to a file and flushed to disk; after the write, whether it was
applied. UNDO reads it back.

One JSON object a line. The first line names the table and the blob (`{"table": ..., "column": ...}`,
with the map key or UDT field inside the column, and whether its values are text); then per
row `{"row": n, "key": {column: hex of the driver's serialized value}, "old": hex, "new": hex}`,
then `{"row": n, "applied": true|false}`. Keys are kept serialized, so any CQL type goes back as
it was. Journals hold stored values: created readable by the user only (0600, in a directory made
0700), by default in a `journal` directory beside the shell's history (cqlsh's CQL_HISTORY moves
both).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO

from cqlsh_ext.edit.document import EditRefused

JOURNAL_DIR = "journal"


def journal_dir(history_file: str) -> str:
    """The `journal` directory beside the shell's history file."""
    return os.path.join(os.path.dirname(os.path.abspath(history_file)), JOURNAL_DIR)


class Journal:
    """A journal being written: `path` is printed before the first row is."""

    def __init__(self, directory: str, keyspace: str, table: str, blob: BlobTarget) -> None:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        base = os.path.join(directory, f"edit-{keyspace}.{table}-{stamp}")
        path, n = base + ".jsonl", 1
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                break
            except FileExistsError:
                n += 1
                path = f"{base}-{n}.jsonl"
        self.path = path
        self.file: IO[str] = os.fdopen(fd, "w", encoding="utf-8")
        self._append({"table": f"{keyspace}.{table}", "keyspace": keyspace, "name": table,
                      "column": blob.column, "access": blob.access, "container": blob.container,
                      "text": blob.holds_text})

    def before(self, row: int, key: Mapping[str, bytes], old: bytes, new: bytes) -> None:
        """On disk before the row is written."""
        self._append({"row": row, "key": {k: v.hex() for k, v in key.items()}, "old": old.hex(),
                      "new": new.hex()})

    def after(self, row: int, applied: bool) -> None:
        self._append({"row": row, "applied": applied})

    def _append(self, entry: dict[str, object]) -> None:
        self.file.write(json.dumps(entry) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()


@dataclass
class JournalRow:
    key: dict[str, bytes]
    old: bytes
    new: bytes
    #: Whether the edit's write was applied (None: the journal stops before it said).
    applied: bool | None = None


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


@dataclass
class JournalRead:
    keyspace: str
    table: str
    blob: BlobTarget
    rows: list[JournalRow] = field(default_factory=list)


def read_journal(path: str) -> JournalRead:
    """The journal at `path`; EditRefused (one line) when it is missing or not a journal."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except OSError as err:
        raise EditRefused(f"cannot read {path}: {err.strerror}") from None
    except ValueError:
        raise EditRefused(f"{path} is not an edit journal (a line is not JSON)") from None
    if not lines or not isinstance(lines[0], dict) or "column" not in lines[0]:
        raise EditRefused(f"{path} is not an edit journal")
    head = lines[0]
    access, container = head.get("access"), head.get("container")
    blob = BlobTarget(str(head["column"]), None if access is None else str(access),
                      None if container is None else str(container), bool(head.get("text", False)))
    read = JournalRead(str(head["keyspace"]), str(head["name"]), blob)
    by_row: dict[int, JournalRow] = {}
    try:
        for entry in lines[1:]:
            if "key" in entry:
                row = JournalRow({k: bytes.fromhex(v) for k, v in entry["key"].items()},
                                 bytes.fromhex(entry["old"]), bytes.fromhex(entry["new"]))
                by_row[int(entry["row"])] = row
                read.rows.append(row)
            elif "applied" in entry and int(entry["row"]) in by_row:
                by_row[int(entry["row"])].applied = bool(entry["applied"])
    except (KeyError, TypeError, ValueError, AttributeError):
        raise EditRefused(f"{path}: a line is not an edit journal's") from None
    return read
