"""Persistent history of the interactive shell, never holding a password.

A file of its own (`cqlsh_ext_history` next to cqlsh's `cqlsh_history`, prompt_toolkit's format,
mode 0600): cqlsh's readline file stays untouched for the classic loop. Input that may carry a
password is neither written nor kept for recall in the session: LOGIN, any statement with the
word PASSWORD (CREATE/ALTER ROLE/USER ... PASSWORD, but also a column named password), and
anything that looks like a pasted command line with -p/--password.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from prompt_toolkit.history import FileHistory

HISTORY_FILE_NAME = "cqlsh_ext_history"

_PASSWORD_WORD = re.compile(r"passw(or)?d|\bpwd\b", re.IGNORECASE)
_LOGIN = re.compile(r"(^|;)\s*login\b", re.IGNORECASE)
_PASSWORD_FLAG = re.compile(r"(^|\s)(-p|--password)(\s|=|$)")


def carries_password(text: str) -> bool:
    """True for input that must not be remembered. Errs on the side of forgetting."""
    return bool(_PASSWORD_WORD.search(text) or _LOGIN.search(text) or _PASSWORD_FLAG.search(text))


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
