"""An internal error: a bug of cqlsh-ext's (or of the libraries it runs), never the user's input nor
the server's answer. Said in one line that names a crash report, a file beside the shell's history
(`crashes/`, the user's alone) holding what a bug report needs: the versions, the traceback, the
first word of the statement it happened in. Never the statement itself, the command line or the
environment: they may hold a password (-p, ALTER ROLE ... PASSWORD).

Which exceptions are bugs is decided by their class (BUGS): Python's errors of a program's own
(a wrong type, a missing attribute or key, a failed assertion, ...), which neither cqlsh nor
cqlsh-ext raises for anything a user typed; every other exception a statement raises is its error,
said as cqlsh says it (exit code 2).
"""

from __future__ import annotations

import os
import sys
import time
import traceback

from cqlsh_ext.common.private_dir import NotPrivate, owner_only_directory

#: The exceptions that are bugs wherever they come from (see the module doc).
BUGS: tuple[type[BaseException], ...] = (
    AssertionError, AttributeError, ImportError, IndexError, KeyError, NameError, NotImplementedError,
    RecursionError, SystemError, TypeError, UnboundLocalError, ZeroDivisionError)
#: The crash reports' directory, beside the shell's history.
DIRECTORY = "crashes"


def is_bug(err: BaseException) -> bool:
    return isinstance(err, BUGS)


def report_directory() -> str:
    """The `crashes` directory beside the shell's history (cqlsh's CQL_HISTORY, ~/.cassandra)."""
    from cqlsh_ext.upstream import seams

    history = seams.import_cqlshmain(None).HISTORY
    return os.path.join(os.path.dirname(os.path.abspath(history)), DIRECTORY)


def write(err: BaseException, during: str) -> str | None:
    """Write the crash report of `err` (raised `during`: "a statement starting with SELECT", "the
    start"); its path, or None when it could not be written (the one line says so)."""
    from cqlsh_ext import __version__

    lines = [f"cqlsh-ext {__version__} internal error during {during}",
             f"Python {sys.version.split()[0]} on {sys.platform}",
             time.strftime("%Y-%m-%dT%H:%M:%S%z"), "",
             *traceback.format_exception(type(err), err, err.__traceback__)]
    try:
        directory = report_directory()
        owner_only_directory(directory, "the crash report directory", "reports hold tracebacks", "",
                             close_open=True)
        path = os.path.join(directory, f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as out:
            out.write("\n".join(line.rstrip("\n") for line in lines) + "\n")
    except (OSError, NotPrivate):
        return None
    return path


def line(err: BaseException, path: str | None) -> str:
    """The one line an internal error is said in."""
    said = str(err).splitlines()[0] if str(err) else ""
    what = f"{type(err).__name__}: {said}" if said else type(err).__name__
    where = f"a crash report: {path}" if path else "its crash report could not be written"
    return f"internal error ({what}); {where}: please report it"
