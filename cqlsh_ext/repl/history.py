"""Persistent history of the interactive shell, never holding a password.

A file of its own (`cqlsh_ext_history` next to cqlsh's `cqlsh_history`, prompt_toolkit's format,
mode 0600): cqlsh's readline file stays untouched for the classic loop (which passwords.py keeps
free of passwords). Input that may carry a password (passwords.carries_password) is neither
written nor kept for recall in the session.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from prompt_toolkit.history import FileHistory

from cqlsh_ext.repl.passwords import carries_password

__all__ = ["HISTORY_FILE_NAME", "SafeFileHistory", "carries_password", "history_path"]

HISTORY_FILE_NAME = "cqlsh_ext_history"


def history_path(cqlsh_history: str) -> str:
    """Our file, in the directory of cqlsh's own (which honours $CQL_HISTORY)."""
    return os.path.join(os.path.dirname(cqlsh_history) or ".", HISTORY_FILE_NAME)


class SafeFileHistory(FileHistory):
    def __init__(self, filename: str, save: bool = True) -> None:
        super().__init__(filename)
        self.save = save

    def load_history_strings(self) -> Iterable[str]:
        # Entries written before this filter existed (or by hand) are not offered either.
        return [s for s in super().load_history_strings() if not carries_password(s)]

    def append_string(self, string: str) -> None:
        if carries_password(string):
            return
        super().append_string(string)

    def store_string(self, string: str) -> None:
        if not self.save:
            return  # --disable-history / [history] disabled: read, never write (as cqlsh does)
        try:
            fd = os.open(self.filename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError:
            return  # an unwritable history must not break the shell
        os.close(fd)
        super().store_string(string)
