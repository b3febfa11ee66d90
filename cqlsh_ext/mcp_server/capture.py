"""What one call's statement writes, taken while it runs: the query output (the shell's result rows
and reports) and its messages (errors, closing lines, warnings).

The shell writes to sys.stdout, sys.stderr and its `query_out` (sys.stdout when the shell is
built). In `cqlsh-ext mcp` both are a `Router`, installed before the shell is built (cli.py): what
the thread running a call writes goes to that call's Capture, anything else to the process's
standard error (the server's log). The protocol has file descriptors of its own.

A Capture of rows ends the statement's output (OutputClosed, as when the reader of `-e ... | head`
goes away) once `limit` rows or `max_bytes` have been taken, and when the call is stopped (`stop`:
cancelled or out of time); the shell then stops reading.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from cqlsh_ext.output import OutputClosed

#: Messages kept per call (errors, closing lines): enough for any one statement's, bounded anyway.
MAX_MESSAGE_BYTES = 64 << 10
#: Why a Capture ended the output early.
LIMIT, BYTES = "limit", "bytes"

_local = threading.local()


class Capture:
    """One call's output. `rows`: the output is rows, one a line (JSON Lines), cut at `limit`
    rows; any output is cut at `max_bytes`."""

    def __init__(self, rows: bool, limit: int | None, max_bytes: int, stop: threading.Event) -> None:
        self.rows = rows
        self.limit = limit
        self.max_bytes = max_bytes
        self.stop = stop
        #: The query output's complete lines, in order.
        self.lines: list[str] = []
        self.size = 0
        #: LIMIT or BYTES when the output was cut there; None when it ended by itself.
        self.cut: str | None = None
        #: What the statement said on standard error (closing lines, warnings), line by line.
        self.messages: list[str] = []
        #: The shell's error lines (its printerr).
        self.errors: list[str] = []
        self._partial = ""
        self._said = 0

    def out(self, text: str) -> None:
        if self.stop.is_set() or self.cut is not None:
            raise OutputClosed
        *complete, self._partial = (self._partial + text).split("\n")
        for line in complete:
            self._line(line)
        if len(self._partial.encode()) > self.max_bytes - self.size:
            self._end(BYTES)

    def _line(self, line: str) -> None:
        if self.rows and self.limit is not None and len(self.lines) >= self.limit:
            self._end(LIMIT)
        size = len(line.encode()) + 1
        if self.size + size > self.max_bytes:
            self._end(BYTES)
        self.lines.append(line)
        self.size += size

    def _end(self, why: str) -> None:
        self.cut = why
        self._partial = ""
        raise OutputClosed

    def message(self, text: str) -> None:
        self._keep(self.messages, text)

    def error(self, text: str) -> None:
        self._keep(self.errors, text)

    def _keep(self, kept: list[str], text: str) -> None:
        for line in text.splitlines():
            if not line.strip():
                continue
            self._said += len(line)
            if self._said <= MAX_MESSAGE_BYTES:
                kept.append(line)

    def text(self) -> str:
        """The query output as it was written (the lines taken)."""
        return "\n".join(self.lines + ([self._partial] if self._partial else []))


class Router(io.TextIOBase):
    """sys.stdout or sys.stderr in `cqlsh-ext mcp`: a call's output to its Capture (in the thread
    running it), anything else to `real`."""

    #: A plain attribute here (io.TextIOBase's is a read-only property): what the server writes.
    encoding = "utf-8"

    def __init__(self, real: TextIO, messages: bool) -> None:
        super().__init__()
        self.real = real
        self.messages = messages

    def write(self, text: str) -> int:
        capture: Capture | None = getattr(_local, "capture", None)
        if capture is None:
            return self.real.write(text)
        if self.messages:
            capture.message(text)
        else:
            capture.out(text)
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return False  # no person reads this: no pager, no progress line, whole lines

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.real.fileno()


def current() -> Capture | None:
    """The Capture of the call this thread runs, if any."""
    return getattr(_local, "capture", None)


@contextmanager
def capturing(capture: Capture) -> Iterator[Capture]:
    """What this thread writes goes to `capture` while the block runs."""
    previous = getattr(_local, "capture", None)
    _local.capture = capture
    try:
        yield capture
    finally:
        _local.capture = previous


def install() -> None:
    """sys.stdout and sys.stderr become Routers (once), before the shell is built."""
    import sys

    if not isinstance(sys.stdout, Router):
        sys.stdout = Router(sys.stdout, messages=False)
    if not isinstance(sys.stderr, Router):
        sys.stderr = Router(sys.stderr, messages=True)


def log(line: str) -> None:
    """One line of the server's own log (standard error), never a call's output; secrets removed
    (keyspaces.errors.redact: the password given, AWS secrets of the environment)."""
    import sys

    from cqlsh_ext.keyspaces.errors import redact

    real = sys.stderr.real if isinstance(sys.stderr, Router) else sys.stderr
    real.write(redact(f"cqlsh-ext mcp: {line}") + "\n")
    real.flush()
