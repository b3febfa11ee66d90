"""The file an export writes: never half-written under its final name.

Rows go to a hidden temporary file in the target's directory (`.NAME.XXXX.part`, made new with
O_EXCL|O_NOFOLLOW, 0600), made before anything is read, so an unwritable directory is said before a
scan starts; the renderers write through `output()`, that file's descriptor. `commit()` gives it the
final name: an existing file is replaced only when the statement said OVERWRITE, and the check is
atomic (a hard link, which fails when the name exists, a link included). `discard()` removes the
temporary file (safe to call twice, and after commit). Errors are ExportError, one line.

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
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cqlsh_ext.export.errors import ExportError


@dataclass(frozen=True)
class PrivateFile:
    """A file written for someone else: readable by its owner alone (0600 whatever the umask), of at
    most `max_bytes`; `cap_name` is the setting that says so, named when an export passes it."""

    max_bytes: int
    cap_name: str


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
        self.final = Path(os.path.expanduser(path))
        self.overwrite = overwrite
        self.private = private
        self.shown = path
        if self.final.is_dir() or path.endswith(os.sep):
            raise ExportError(f"{path} is a directory: name a file")
        if self.final.exists() and not overwrite:
            raise ExportError(f"{path} exists: add WITH OVERWRITE = true to replace it")
        directory = self.final.parent
        if not directory.is_dir():
            raise ExportError(f"cannot write {path}: no directory {directory}")
        self.out: io.BufferedWriter | None = None
        try:
            # mkstemp: O_CREAT|O_EXCL|O_NOFOLLOW, 0600; written through this descriptor only
            self.fd: int | None
            self.fd, name = tempfile.mkstemp(dir=self.final.parent, prefix=f".{self.final.name}.",
                                             suffix=".part")
        except OSError as err:
            raise ExportError(f"cannot write {self.shown}: {os_error(err)}") from None
        self.temp: Path | None = Path(name)

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
        if self.overwrite:
            os.replace(self.temp, self.final)
        else:
            try:
                os.link(self.temp, self.final)
            except FileExistsError:
                raise ExportError(f"{self.shown} exists (made while exporting): "
                                  "add WITH OVERWRITE = true to replace it") from None
            except OSError:  # a filesystem without hard links: the exists check above must do
                if self.final.exists():
                    raise ExportError(f"{self.shown} exists: add WITH OVERWRITE = true to replace it") \
                        from None
                os.replace(self.temp, self.final)
        self.discard()

    def discard(self) -> None:
        with contextlib.suppress(OSError, ExportError):
            self._close()
        if self.temp is not None:
            with contextlib.suppress(FileNotFoundError):
                self.temp.unlink()
            self.temp = None
