"""The file an export writes: never half-written under its final name.

Rows go to a hidden temporary file in the target's directory (`.NAME.XXXX.part`), made before
anything is read, so an unwritable directory is said before a scan starts. `commit()` gives it
the final name: an existing file is replaced only when the statement said OVERWRITE, and the
check is atomic (a hard link, which fails when the name exists). `discard()` removes every
temporary file; both are safe to call twice. Errors are ExportError, one line.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

from cqlsh_ext.export.errors import ExportError


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
    def __init__(self, path: str, overwrite: bool) -> None:
        self.final = Path(os.path.expanduser(path))
        self.overwrite = overwrite
        self.shown = path
        if self.final.is_dir() or path.endswith(os.sep):
            raise ExportError(f"{path} is a directory: name a file")
        if self.final.exists() and not overwrite:
            raise ExportError(f"{path} exists: add WITH OVERWRITE = true to replace it")
        directory = self.final.parent
        if not directory.is_dir():
            raise ExportError(f"cannot write {path}: no directory {directory}")
        self.scratch_files: list[Path] = []
        self.temp = self.scratch()

    def scratch(self) -> Path:
        """A new empty temporary file next to the target (removed by discard or commit)."""
        try:
            fd, name = tempfile.mkstemp(dir=self.final.parent, prefix=f".{self.final.name}.", suffix=".part")
        except OSError as err:
            raise ExportError(f"cannot write {self.shown}: {os_error(err)}") from None
        os.close(fd)
        path = Path(name)
        self.scratch_files.append(path)
        return path

    def commit(self) -> None:
        """The temporary file becomes the target, readable as a new file would be."""
        os.chmod(self.temp, 0o666 & ~_umask())
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
        for path in self.scratch_files:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.scratch_files = []
