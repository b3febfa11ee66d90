"""The export directory of `cqlsh-ext mcp` (the `export` tool's files): a directory the server was
started with (the setting mcp_export_dir; a client never names a path), whose files the server
names itself (a random name and the format's ending), reads back as resources in chunks
(cqlsh-ext://exports/NAME, then ?offset=N for the next chunk), and removes by age and by the
directory's total size (the settings mcp_export_max_age and mcp_export_max_bytes): the oldest go
first, before each export and after it.

A chunk is at most the server's answer cap as sent: JSON Lines as text ending at a line's end (a
line longer than a chunk is cut at a character's end, and the chunk says so), Parquet as base64 of
the bytes. Each chunk's `_meta` says where it starts, how many bytes the file has, and whether it
was cut (`truncated`, `next`: the URI of the chunk that follows).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cqlsh_ext.common.jsonenc import base64_text

#: The URI of an export's file: resources.SCHEME's, the file's name, and where a chunk starts.
PREFIX = "cqlsh-ext://exports/"
TEMPLATE = PREFIX + "{name}"
#: Each format's ending, its MIME type, and whether its chunks are text.
FORMATS = {"parquet": (".parquet", "application/vnd.apache.parquet", False),
           "jsonl": (".jsonl", "application/jsonl", True)}
#: The names the server gives: nothing a client could make reach out of the directory.
_NAME = re.compile(r"^export-[0-9a-f]{32}\.(parquet|jsonl)$")
#: Bytes of a chunk's message besides its contents (the URI, the MIME type, _meta, the JSON-RPC frame).
_FRAME_BYTES = 1024


class ExportRefused(Exception):
    """A read or an export refused; str() is the one line."""


@dataclass
class ExportDir:
    """The directory, and how long and how much it keeps."""

    path: Path
    max_age: float
    max_bytes: int

    @classmethod
    def of(cls, path: str, max_age: float, max_bytes: int) -> ExportDir:
        """The directory (made when missing, readable by its owner alone); raises ExportRefused."""
        where = Path(os.path.expanduser(path)).resolve()
        try:
            where.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as err:
            raise ExportRefused(f"the export directory {where}: {err.strerror or err}") from None
        if not os.access(where, os.W_OK | os.X_OK):
            raise ExportRefused(f"the export directory {where} is not writable")
        return cls(where, max_age, max_bytes)

    def new_name(self, fmt: str) -> str:
        return f"export-{secrets.token_hex(16)}{FORMATS[fmt][0]}"

    def file(self, name: str) -> Path:
        """The path of one of its files' names (refused: a name the server gave none of)."""
        if not _NAME.match(name):
            raise ExportRefused(f"no export {name[:80]!r}")
        return self.path / name

    def sweep(self, keep: str | None = None) -> list[str]:
        """Remove the files older than max_age, then the oldest until the rest hold at most max_bytes
        (`keep`: a file just written, removed last); the names removed."""
        now = time.time()
        found: list[tuple[float, int, str]] = []
        for entry in os.scandir(self.path):
            if not _NAME.match(entry.name):
                continue
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            found.append((stat.st_mtime, stat.st_size, entry.name))
        found.sort(key=lambda item: (item[2] == keep, item[0]))  # the oldest first, `keep` last
        removed: list[str] = []
        total = sum(size for _, size, _ in found)
        for mtime, size, name in found:
            if now - mtime <= self.max_age and total <= self.max_bytes:
                continue
            try:
                (self.path / name).unlink()
            except FileNotFoundError:
                pass
            total -= size
            removed.append(name)
        return removed

    def uri(self, name: str) -> str:
        return PREFIX + name

    def expires(self, name: str) -> float:
        return self.file(name).stat().st_mtime + self.max_age

    def chunk(self, uri: str, cap: int) -> tuple[str, str, str, dict[str, Any]]:
        """A chunk of the file `uri` names, at most `cap` bytes as sent: (its URI, its MIME type, its
        text: the file's text, or its bytes' base64 for a binary format, _meta). Raises ExportRefused."""
        name, offset = _parsed(uri)
        path = self.file(name)
        self.sweep()
        try:
            size = path.stat().st_size
            is_text = FORMATS[name.rsplit(".", 1)[1]][2]
            room = max(256, cap - _FRAME_BYTES - len(uri) * 2)
            # Text is sent as JSON (each character up to 6 bytes escaped, most 1); bytes as base64 (4/3).
            want = room // 2 if is_text else room * 3 // 4
            with path.open("rb") as f:
                f.seek(min(offset, size))
                data = f.read(want + 1)
        except FileNotFoundError:
            raise ExportRefused(f"the export {name} has expired (kept {self.max_age:g} s, and at most "
                                f"{self.max_bytes:,} bytes in all): export again") from None
        if offset > size:
            raise ExportRefused(f"offset {offset:,} is past the end of {name} ({size:,} bytes)")
        cut_inside = False
        if len(data) > want:
            data = data[:want]
            if is_text:
                end = data.rfind(b"\n")
                if end >= 0:
                    data = data[:end + 1]
                else:  # one line longer than a chunk: cut at a character's end
                    cut_inside = True
                    while data and (data[-1] & 0xC0) == 0x80:
                        data = data[:-1]
                    if data and data[-1] >= 0xC0:
                        data = data[:-1]
        end = offset + len(data)
        meta: dict[str, Any] = {"offset": offset, "bytes": len(data), "size": size, "truncated": end < size}
        if end < size:
            meta["cap"] = "max_bytes"
            meta["next"] = f"{PREFIX}{name}?offset={end}"
        if cut_inside:
            meta["note"] = "a line longer than a chunk: it goes on in the next chunk"
        mime = FORMATS[name.rsplit(".", 1)[1]][1]
        return uri, mime, data.decode("utf-8") if is_text else base64_text(data), meta


def is_text(mime: str) -> bool:
    """Whether a file of this MIME type is sent as text (else its bytes' base64)."""
    return any(found == mime and text for _, found, text in FORMATS.values())


def is_export(uri: str) -> bool:
    return uri.startswith(PREFIX)


def _parsed(uri: str) -> tuple[str, int]:
    """(the file's name, the chunk's offset) of an export's URI; raises ExportRefused."""
    parts = urlsplit(uri)
    name = parts.path.lstrip("/")
    query = parse_qs(parts.query, keep_blank_values=True)
    if set(query) - {"offset"}:
        raise ExportRefused(f"{uri[:200]}: an export's URI takes ?offset=N only")
    offset_text = query.get("offset", ["0"])[-1]
    if not offset_text.isdigit():
        raise ExportRefused(f"{uri[:200]}: offset must be a whole number of bytes")
    return name, int(offset_text)
