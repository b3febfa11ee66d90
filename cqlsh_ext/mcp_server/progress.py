"""Progress notifications (`notifications/progress`) while a call scans, when its client sent a
progress token: the scans the call runs report to a `Reporter` instead of a terminal's status line
(scanning.scan.watch_progress, on the shell's thread), which hands each figure to the protocol's
event loop, at most twice a second: `progress` is the rows read so far (it only grows), `total`
the table's estimated rows when the scan knows it, `message` what runs and how far it is.

The figures are the scan's own (rows read, the share of the token ranges done): the same the
shell's status line shows. With typed answers (issue 54) they come from the answer's event stream;
the Reporter then takes its events unchanged.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cqlsh_ext.scanning.scan import Progress

#: Seconds between two notifications at least.
INTERVAL = 0.5


class Reporter:
    """One call's progress, told to `send(progress, total, message)` (which must be thread-safe: it
    is called on the shell's thread)."""

    def __init__(self, send: Callable[[float, float | None, str], None]) -> None:
        self._send = send
        self._last = 0.0
        self._progress = 0.0
        self._lock = threading.Lock()

    def tell(self, rows: float, total: float | None, message: str, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last < INTERVAL:
                return
            self._last = now
            self._progress = max(self._progress, rows)  # never backwards, whatever a stage says
            progress = self._progress
        self._send(progress, total, message)

    def make(self, label: str, estimate: int | None) -> Progress:
        return Notifying(self, label, estimate)

    @contextmanager
    def watching(self) -> Iterator[None]:
        """This thread's scans report here while the block runs."""
        from cqlsh_ext.scanning.scan import watch_progress

        watch_progress(self.make)
        try:
            yield
        finally:
            watch_progress(None)


class Notifying(Progress):
    """A scan's Progress that notifies the client instead of drawing a status line."""

    def __init__(self, reporter: Reporter, label: str, estimate: int | None) -> None:
        super().__init__(io.StringIO(), label, estimate)
        self.reporter = reporter
        self._rows: int | None = None

    def update(self, rows: int, fraction: float | None = None, force: bool = False) -> None:
        self._rows = rows
        if fraction is None and self.estimate and rows <= self.estimate:
            fraction = rows / self.estimate
        elapsed = time.monotonic() - self.started
        share = f", about {100 * min(max(fraction, 0.0), 1.0):.0f} % done" if fraction is not None else ""
        detail = ""
        if self.detail is not None:
            try:
                detail = f" ({self.detail()})"
            except Exception:  # noqa: BLE001 - a detail is a nicety; the figures go on
                detail = ""
        self.reporter.tell(rows, float(self.estimate) if self.estimate else None,
                           f"{self.label}: {rows:,} rows read in {elapsed:.0f} s{share}{detail}", force)

    def step(self, what: str, fraction: float | None = None) -> None:
        share = f", about {100 * min(max(fraction, 0.0), 1.0):.0f} % done" if fraction is not None else ""
        self.reporter.tell(0, None, f"{self.label}: {what}{share}", force=True)

    def close(self) -> None:
        if self._rows is not None:  # the scan's last figure, whenever the one before was sent
            elapsed = time.monotonic() - self.started
            self.reporter.tell(self._rows, float(self.estimate) if self.estimate else None,
                               f"{self.label}: {self._rows:,} rows read in {elapsed:.0f} s, done", force=True)
            self._rows = None


def sender(loop: Any, report: Callable[..., Any]) -> Callable[[float, float | None, str], None]:
    """A thread-safe `send` for a Reporter: each figure is handed to `loop` (the protocol's), where
    `report(progress, total, message)` (the request's ctx.session.report_progress) sends it."""
    import asyncio

    def send(progress: float, total: float | None, message: str) -> None:
        def schedule() -> None:
            task = asyncio.ensure_future(report(progress, total, message))
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

        try:
            loop.call_soon_threadsafe(schedule)
        except RuntimeError:  # the protocol's loop is gone
            pass

    return send


def wrap(tool: Any, reporter: Reporter) -> Any:
    """`tool` (tools.Tool) reporting its scans' progress to `reporter` while it answers."""
    from dataclasses import replace

    answer = tool.answer

    def reporting(work: Any, arguments: dict[str, Any]) -> Any:
        with reporter.watching():
            return answer(work, arguments)

    return replace(tool, answer=reporting)
