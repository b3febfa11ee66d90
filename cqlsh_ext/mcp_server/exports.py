"""The export directory of `cqlsh-ext mcp` (the `export` tool's files): a directory the server was
started with (the setting mcp_export_dir; a client never names a path), whose files the server
names itself (a random name and the format's ending), reads back as resources in chunks
(cqlsh-ext://exports/NAME, then ?offset=N for the next chunk), and removes by age and by the
directory's total size (the settings mcp_export_max_age and mcp_export_max_bytes): the oldest go
first, before each export and after it.

What it holds is the rows of tables, so it is kept as the journals are (common.private_dir): the
user's own and 0700, made so when the server makes it, refused at start when it is another user's
or open to others. Each file is written 0600 and at most mcp_export_max_bytes (export.target's
PrivateFile: the writing stops there and leaves nothing), and is read only by the client that made
it (the call's owner: server.py's _owner) while this server runs: another client, knowing the URI,
is answered as for a name never given. A file is read through the directory's descriptor, opened at
start, and opened without following a link, then checked (fstat) before a byte is served: a
regular file of this user's with no other name. A file is written through that descriptor too
(export.target: made, checked and named in it, no path resolved again). No answer names the
directory.

A chunk is at most the server's answer cap as sent: JSON Lines as text ending at a line's end (a
line longer than a chunk is cut at a character's end, and the chunk says so), Parquet as base64 of
the bytes. Each chunk's `_meta` says where it starts, how many bytes the file has, and whether it
was cut (`truncated`, `next`: the URI of the chunk that follows).
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cqlsh_ext.common.file_formats import FILE_FORMATS
from cqlsh_ext.common.jsonenc import base64_text

#: The URI of an export's file: resources.SCHEME's, the file's name, and where a chunk starts.
PREFIX = "cqlsh-ext://exports/"
TEMPLATE = PREFIX + "{name}"
#: The formats the tool writes (common.file_formats: those MCP's): each one's ending, its MIME type,
#: and whether its chunks are text.
FORMATS = {f.name: (f.suffixes[0], f.mime, f.text) for f in FILE_FORMATS if f.mcp}
#: The same by a file's ending (without its dot).
_BY_ENDING = {ending[1:]: (ending, mime, text) for ending, mime, text in FORMATS.values()}
#: The names the server gives: nothing a client could make reach out of the directory.
_NAME = re.compile(r"export-[0-9a-f]{32}\.(" + "|".join(re.escape(e) for e in _BY_ENDING) + ")")
#: An offset: ASCII digits (str.isdigit takes "²" and "٣" too, which int() refuses).
_OFFSET = re.compile(r"[0-9]{1,19}")
#: Bytes of a chunk's message besides its contents (the URI, the MIME type, _meta, the JSON-RPC frame).
_FRAME_BYTES = 1024
#: Exports whose maker is remembered at most (the oldest forgotten first): a removed file's too, so
#: that its maker is told it expired.
MAX_REMEMBERED = 10_000
#: The setting that caps an export's file, as its refusal names it.
CAP_NAME = "mcp_export_max_bytes"


class ExportRefused(Exception):
    """A read or an export refused; str() is the one line."""


class ExportDir:
    """The directory (its descriptor, held from start), how long and how much it keeps, and who
    made each of its files."""

    def __init__(self, path: Path, max_age: float, max_bytes: int, fd: int) -> None:
        self.path = path
        self.max_age = max_age
        self.max_bytes = max_bytes
        self._fd = fd
        self._made_by: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def of(cls, path: str, max_age: float, max_bytes: int) -> ExportDir:
        """The directory, made 0700 when missing, or checked: the user's and open to nobody else
        (common.private_dir); raises ExportRefused."""
        from cqlsh_ext.common.private_dir import NotPrivate, owner_only_directory

        where = Path(os.path.expanduser(path)).resolve()
        try:
            checked = owner_only_directory(str(where), "the export directory",
                                           "its files hold the rows of tables", "", close_open=False).checked
            fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except NotPrivate as err:
            raise ExportRefused(str(err)) from None
        except OSError as err:
            raise ExportRefused(f"the export directory {where} cannot be opened: {err.strerror}") from None
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
            os.close(fd)
            raise ExportRefused(f"the export directory {where} was replaced while it was checked: refused")
        if not os.access(where, os.W_OK | os.X_OK):
            os.close(fd)
            raise ExportRefused(f"the export directory {where} is not writable")
        return cls(where, max_age, max_bytes, fd)

    def new_name(self, fmt: str) -> str:
        return f"export-{secrets.token_hex(16)}{FORMATS[fmt][0]}"

    def file(self, name: str) -> Path:
        """The path of one of its files' names, as the writer's lines name it (refused: a name the
        server gave none of); the writer makes it through `descriptor`, never through this path."""
        if not _NAME.fullmatch(name):
            raise ExportRefused(f"no export {name[:80]!r}")
        return self.path / name

    @property
    def descriptor(self) -> int:
        """The directory's descriptor, held since start: every file is made, checked, read and
        removed through it (export.target.PrivateFile.directory), so a directory moved and replaced
        by a link later is still the one written into."""
        return self._fd

    def made(self, name: str, owner: bytes) -> None:
        """`name` was written for the client `owner` (server.py's _owner): that client alone reads it."""
        with self._lock:
            self._made_by[name] = owner
            while len(self._made_by) > MAX_REMEMBERED:
                self._made_by.popitem(last=False)

    def without_directory(self, text: str) -> str:
        """`text` (a closing line, an error) with the directory's path left out: the file's name alone."""
        return text.replace(f"{self.path}{os.sep}", "").replace(str(self.path), "the export directory")

    def sweep(self, keep: str | None = None) -> list[str]:
        """Remove the files older than max_age, then the oldest until the rest hold at most max_bytes
        (`keep`: a file just written, removed last); the names removed."""
        now = time.time()
        found: list[tuple[float, int, str]] = []
        with os.scandir(self._fd) as entries:
            for entry in entries:
                if not _NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                found.append((st.st_mtime, st.st_size, entry.name))
        found.sort(key=lambda item: (item[2] == keep, item[0]))  # the oldest first, `keep` last
        removed: list[str] = []
        total = sum(size for _, size, _ in found)
        for mtime, size, name in found:
            if now - mtime <= self.max_age and total <= self.max_bytes:
                continue
            try:
                os.unlink(name, dir_fd=self._fd)
            except FileNotFoundError:
                pass
            total -= size
            removed.append(name)
        return removed

    def uri(self, name: str) -> str:
        return PREFIX + name

    def written(self, name: str, owner: bytes) -> os.stat_result:
        """The file `name` as `owner` may read it (`opened`'s checks), without reading it."""
        fd, st = self.opened(name, owner)
        os.close(fd)
        return st

    def expires(self, st: os.stat_result) -> float:
        return st.st_mtime + self.max_age

    def opened(self, name: str, owner: bytes) -> tuple[int, os.stat_result]:
        """A descriptor of the file `name`, when the client `owner` made it, opened in the directory
        without following a link and checked: a regular file of this user's with no other name.
        Raises ExportRefused."""
        with self._lock:
            maker = self._made_by.get(name)
        if maker is None or not hmac.compare_digest(maker, owner):  # another's is as none
            raise ExportRefused(f"no export {name[:80]!r} of this client (an export is read by the MCP "
                                "session or OAuth identity that made it, while the server that wrote it "
                                "runs)")
        not_ours = (f"the export {name} is no longer the file this server wrote (a link, or a file of "
                    "another name or user): refused")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self._fd)
        except FileNotFoundError:
            raise ExportRefused(f"the export {name} has expired (kept {self.max_age:g} s, and at most "
                                f"{self.max_bytes:,} bytes in all): export again") from None
        except OSError:  # ELOOP: a link where the file was
            raise ExportRefused(not_ours) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
            os.close(fd)
            raise ExportRefused(not_ours)
        return fd, st

    def chunk(self, uri: str, cap: int, owner: bytes) -> tuple[str, str, str, dict[str, Any]]:
        """A chunk of the file `uri` names, at most `cap` bytes as sent, for the client `owner`: (its
        URI, its MIME type, its text: the file's text, or its bytes' base64 for a binary format,
        _meta). Raises ExportRefused."""
        name, offset = _parsed(uri)
        self.sweep()
        fd, st = self.opened(name, owner)
        try:
            size = st.st_size
            is_text = _BY_ENDING[name.rsplit(".", 1)[1]][2]
            room = max(256, cap - _FRAME_BYTES - len(uri) * 2)
            # Text is sent as JSON (each character up to 6 bytes escaped, most 1); bytes as base64 (4/3).
            want = room // 2 if is_text else room * 3 // 4
            data = b""
            while offset < size and len(data) < want + 1:
                more = os.pread(fd, want + 1 - len(data), offset + len(data))
                if not more:
                    break
                data += more
        finally:
            os.close(fd)
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
        mime = _BY_ENDING[name.rsplit(".", 1)[1]][1]
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
    if not _OFFSET.fullmatch(offset_text):
        raise ExportRefused(f"{uri[:200]}: offset must be a whole number of bytes (the digits 0-9, at "
                            "most 19)")
    if not _NAME.fullmatch(name):
        raise ExportRefused(f"no export {name[:80]!r}")
    return name, int(offset_text)
