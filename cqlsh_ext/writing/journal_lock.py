"""One live run per journal (docs/edit.md, "One run at a time"): the run that writes a journal (an
edit, a rewrite, its RESUME, an UNDO's own journal) and the run that reads one to write from it
(UNDO, RESUME) hold an advisory lock on it (fcntl.flock, exclusive, on a descriptor of their own)
for as long as they run, and a run file beside it names that process (`.NAME.run`: its pid, host
and start). A RESUME or an UNDO started beside a live run is refused in one line naming the run,
before it reads a line: two runs never append two chains of MACs to one journal, and an UNDO never
reads lines appended after its preview.

The lock is the kernel's: it goes with the process (a kill -9, a crash), so the next run takes the
journal over, and the run file the dead run left is replaced. A Spark run's directory of parts is
locked the same way by its driver, each part by the task that writes it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import time
from dataclasses import dataclass

from cqlsh_ext.writing.refused import WriteRefused

#: What a run file may hold at most (it is read only to name the run).
_RUN_FILE_BYTES = 4096


def run_file(path: str) -> str:
    """The run file of the journal (or directory of parts) at `path`: `.NAME.run` beside it."""
    path = os.path.normpath(path)
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.run")


@dataclass
class JournalLock:
    """The lock of one journal held by this process (`release()` lets it go; idempotent)."""

    path: str
    fd: int | None
    #: The run file written (removed on release), or None when it could not be written.
    named: str | None = None

    @classmethod
    def hold(cls, fd: int, path: str, what: str) -> JournalLock:
        """The lock taken on `fd`, a descriptor of the journal just made at `path` (its writer):
        waits for a reader that opened the new file in the moment before (it finds it empty and
        lets go)."""
        fcntl.flock(fd, fcntl.LOCK_EX)
        lock = cls(path, None)
        lock.named = _name_run(path, what)
        return lock

    @classmethod
    def take(cls, path: str, what: str) -> JournalLock:
        """The lock of the journal (a file, or a Spark run's directory) at `path`, taken for a run
        that reads it to write (UNDO, RESUME); WriteRefused in one line naming the live run that
        holds it. A directory's parts are checked too: none may be held by a task."""
        directory = os.path.isdir(path) and not os.path.islink(path)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if directory else 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return cls(path, None)  # the reading says why it cannot be read, in its own words
        try:
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                os.close(fd)
                return cls(path, None)  # no journal (a device, a pipe): the reading refuses it
            _lock_or_refuse(fd, path)
            if directory:
                for name in sorted(os.listdir(path)):
                    if name.endswith(".jsonl"):
                        _free_or_refuse(os.path.join(path, name))
        except BaseException:
            os.close(fd)
            raise
        lock = cls(path, fd)
        lock.named = _name_run(path, what)
        return lock

    def release(self) -> None:
        """The run file removed, then the lock let go (a descriptor of ours closed)."""
        if self.named is not None:
            try:
                os.unlink(self.named)
            except OSError:
                pass  # gone already: nothing names this run
            self.named = None
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass  # the lock goes with the descriptor either way
            self.fd = None

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock_or_refuse(fd: int, path: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return  # a file system without locks: the run file, if any, cannot be trusted either
        raise WriteRefused(f"{path} is in use by a live run ({_run_named(path)}): refused while it "
                           "runs (let it finish, or stop it first)") from None


def _free_or_refuse(path: str) -> None:
    """A Spark part not held by a live task (checked, not kept: its directory's lock is kept)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        _lock_or_refuse(fd, path)
    finally:
        os.close(fd)


def _run_named(path: str) -> str:
    """The live run as its run file names it: pid, host, start."""
    try:
        fd = os.open(run_file(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            data = os.read(fd, _RUN_FILE_BYTES)
        finally:
            os.close(fd)
        run = json.loads(data)
        return (f"{run['what']}, pid {int(run['pid'])} on {run['host']}, started "
                f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(float(run['start'])))}")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process; its run file says no more"


def _name_run(path: str, what: str) -> str | None:
    """The run file naming this process, written whole under another name and moved into place
    (a file left by a run that is gone is replaced); None when it cannot be written (the lock
    holds all the same: a refusal then names no pid)."""
    named = run_file(path)
    temporary = f"{named}.{os.getpid()}.new"
    text = json.dumps({"what": what, "pid": os.getpid(), "host": socket.gethostname(),
                       "start": round(time.time(), 3)})
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(temporary, named)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass  # never made
        return None
    return named
