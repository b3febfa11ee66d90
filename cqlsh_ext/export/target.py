"""The file an export writes: never half-written under its final name.

Rows go to a hidden temporary file in the target's directory (`.NAME.XXXX.part`, made new with
O_EXCL|O_NOFOLLOW, 0600), made before anything is read, so an unwritable directory is said before a
scan starts; the renderers write through `output()`, that file's descriptor. `commit()` gives it the
final name: an existing file is replaced only when the statement said OVERWRITE, and the check is
atomic (a hard link, which fails when the name exists, a link included). `discard()` removes the
temporary file (safe to call twice, and after commit). Errors are ExportError, one line.

Every name is made, checked, linked and removed through one descriptor of the directory, opened
once (openat-style: `dir_fd`), never through its path again: a directory moved and replaced by a
link while an export runs does not move the file elsewhere. `cqlsh-ext mcp` hands the descriptor of
its export directory, held since it started (PrivateFile.directory); the shell's is the target's
directory as the path names it when the export starts.

The shell's file is readable as any new file of the user's is (the umask's mode, as cqlsh writes
its COPY TO). A file written for someone else (`PrivateFile`: `cqlsh-ext mcp`'s exports) stays 0600
and holds at most its cap: the write that would pass it raises FileTooLarge, and the export leaves
no file.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cqlsh_ext.export.errors import ExportError


@dataclass(frozen=True)
class PrivateFile:
    """A file written for someone else: readable by its owner alone (0600 whatever the umask), of at
    most `max_bytes`; `cap_name` is the setting that says so, named when an export passes it;
    `directory`: the descriptor of the directory it is written in (the export's path is then a name
    in it), held by the caller."""

    max_bytes: int
    cap_name: str
    directory: int | None = None


class FileTooLarge(ExportError):
    """An export stopped at its file's cap (PrivateFile): nothing is left of it."""


class _CountedFile(io.FileIO):
    """The temporary file's descriptor as a raw file whose writes are counted: the one that would
    take it past `cap` raises FileTooLarge. Once refused, writes go nowhere (the file is discarded):
    a buffer flushed on close has nothing more to say."""

    def __init__(self, fd: int, cap: PrivateFile | None) -> None:
        super().__init__(fd, "wb", closefd=False)
        self.cap = cap
        self.written = 0
        self.refused = False

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        if self.refused:
            return size
        if self.cap is not None and self.written + size > self.cap.max_bytes:
            self.refused = True
            raise FileTooLarge(f"the file would pass {self.cap.max_bytes:,} bytes, the most an export may "
                               f"write ({self.cap.cap_name}): stopped, nothing written; select fewer rows "
                               "or columns")
        done = super().write(data) or 0
        self.written += done
        return done


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def os_error(err: OSError) -> str:
    """An OSError as one line without the path repeated ('No space left on device'); pyarrow's
    name the errno inside their message ('... Detail: [errno 28] No space left on device')."""
    found = re.search(r"\[errno (\d+)\]", str(err))
    if found:
        return os.strerror(int(found.group(1)))
    return err.strerror or str(err)


class ExportFile:
    def __init__(self, path: str, overwrite: bool, private: PrivateFile | None = None) -> None:
        self.overwrite = overwrite
        self.private = private
        self.shown = path
        self.out: io.BufferedWriter | None = None
        self.fd: int | None = None
        self.temp: str | None = None
        if path.endswith(os.sep):
            raise ExportError(f"{path} is a directory: name a file")
        self.dir_fd = self._directory(path)
        try:
            self.name = self._checked_name(path)
            self.fd, self.temp = self._made_temporary()
        except BaseException:
            os.close(self.dir_fd)
            raise

    def _directory(self, path: str) -> int:
        """A descriptor of the directory the file goes in, its own (a dup of the held one, or opened)."""
        if self.private is not None and self.private.directory is not None:
            return os.dup(self.private.directory)
        directory = Path(os.path.expanduser(path)).parent
        try:
            return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ExportError(f"cannot write {path}: no directory {directory}") from None
        except NotADirectoryError:
            raise ExportError(f"cannot write {path}: {directory} is not a directory") from None
        except OSError as err:
            raise ExportError(f"cannot write {path}: {os_error(err)}") from None

    def _checked_name(self, path: str) -> str:
        """The file's name in the directory, refused when it is a directory or (without OVERWRITE) exists."""
        name = os.path.basename(os.path.expanduser(path))
        if name in ("", ".", ".."):
            raise ExportError(f"{path} is a directory: name a file")
        try:
            found = os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return name
        except OSError as err:
            raise ExportError(f"cannot write {path}: {os_error(err)}") from None
        if stat.S_ISDIR(found.st_mode) or (stat.S_ISLNK(found.st_mode) and self._names_a_directory(name)):
            raise ExportError(f"{path} is a directory: name a file")
        if not self.overwrite:
            raise ExportError(f"{path} exists: add WITH OVERWRITE = true to replace it")
        return name

    def _names_a_directory(self, name: str) -> bool:
        try:
            return stat.S_ISDIR(os.stat(name, dir_fd=self.dir_fd).st_mode)
        except OSError:
            return False

    def _made_temporary(self) -> tuple[int, str]:
        """A new hidden file beside the target (O_CREAT|O_EXCL|O_NOFOLLOW, 0600), and its name."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        for _ in range(100):
            temp = f".{self.name}.{secrets.token_hex(6)}.part"
            try:
                return os.open(temp, flags, 0o600, dir_fd=self.dir_fd), temp
            except FileExistsError:
                continue
            except OSError as err:
                raise ExportError(f"cannot write {self.shown}: {os_error(err)}") from None
        raise ExportError(f"cannot write {self.shown}: no free temporary name beside it")

    def output(self) -> io.BufferedWriter:
        """The temporary file, to write the rows into (once; the renderers' file)."""
        assert self.fd is not None and self.out is None, "one output per export, before commit"
        self.out = io.BufferedWriter(_CountedFile(self.fd, self.private))
        return self.out

    def _close(self) -> None:
        """The output flushed and the descriptor closed (FileTooLarge or OSError: the last bytes'
        write failed)."""
        out, fd = self.out, self.fd
        self.out = self.fd = None
        try:
            if out is not None and not out.closed:
                out.close()
        finally:
            if fd is not None:
                os.close(fd)

    def commit(self) -> None:
        """The temporary file becomes the target: readable as a new file would be, or by its owner
        alone (PrivateFile)."""
        assert self.fd is not None and self.temp is not None, "commit once"
        os.fchmod(self.fd, 0o600 if self.private is not None else 0o666 & ~_umask())
        self._close()
        at = {"src_dir_fd": self.dir_fd, "dst_dir_fd": self.dir_fd}
        if self.overwrite:
            os.replace(self.temp, self.name, **at)
        else:
            try:
                os.link(self.temp, self.name, follow_symlinks=False, **at)
            except FileExistsError:
                raise ExportError(f"{self.shown} exists (made while exporting): "
                                  "add WITH OVERWRITE = true to replace it") from None
            except OSError:  # a filesystem without hard links: the exists check above must do
                if self._exists(self.name):
                    raise ExportError(f"{self.shown} exists: add WITH OVERWRITE = true to replace it") \
                        from None
                os.replace(self.temp, self.name, **at)
        self.discard()

    def _exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def discard(self) -> None:
        with contextlib.suppress(OSError, ExportError):
            self._close()
        if self.temp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp, dir_fd=self.dir_fd)
            self.temp = None
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1
