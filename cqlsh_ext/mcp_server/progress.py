"""Progress notifications (`notifications/progress`) while a call scans, when its client sent a
progress token. Every reading reports its progress as events (reading.context.ProgressEvents: the
call's context makes its progress so, tools.Work.context); a `Reporter` turns them into
notifications and hands each to the protocol's event loop, at most twice a second: `progress` is
the rows read so far (it only grows), `total` the table's estimated rows when the reading knows
it, `message` what runs and how far it is; and a last one when the call ends (`..., done`).

The figures are the reading's own (rows read, the share of the token ranges done): the same the
shell's status line shows on a terminal. The scanning layer knows nothing of MCP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

#: Seconds between two notifications at least.
INTERVAL = 0.5


class Reporter:
    """One call's progress, told to `send(progress, total, message)` (which must be thread-safe: it
    is called on the shell's thread). `event` takes the reading's events; `last` is the last."""

    def __init__(self, send: Callable[[float, float | None, str], None]) -> None:
        self._send = send
        self._last = 0.0
        self._progress = 0.0
        self._started = time.monotonic()
        #: The last count of rows and what it was of: (total, label).
        self._held: tuple[float | None, str] | None = None
        self._lock = threading.Lock()

    def event(self, event: dict[str, Any]) -> None:
        """A reading's progress event: {"reading", "rows", "done", "detail"} or {"reading", "step",
        "done"} (ProgressEvents)."""
        label = str(event.get("reading") or "reading")
        share = _share(event.get("done"))
        if "step" in event:
            self._tell(0, None, f"{label}: {event['step']}{share}", force=True)
            return
        rows = int(event.get("rows") or 0)
        elapsed = time.monotonic() - self._started
        detail = f" ({event['detail']})" if event.get("detail") else ""
        estimate = event.get("estimate")
        total = float(estimate) if isinstance(estimate, (int, float)) and estimate > 0 else None
        with self._lock:
            self._held = (total, label)
        self._tell(rows, total, f"{label}: {rows:,} rows read in {elapsed:.0f} s{share}{detail}")

    def last(self) -> tuple[float, float | None, str] | None:
        """The call ended: its last figure, said done (whenever the one before was sent), for the
        protocol's side to send before the call's answer; None when nothing was read."""
        with self._lock:
            held, rows = self._held, self._progress
            self._last = time.monotonic()
        if held is None:
            return None
        total, label = held
        elapsed = time.monotonic() - self._started
        return rows, total, f"{label}: {rows:,.0f} rows read in {elapsed:.0f} s, done"

    def _tell(self, rows: float, total: float | None, message: str, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            self._progress = max(self._progress, rows)  # never backwards, whatever a stage says
            progress = self._progress
            if not force and now - self._last < INTERVAL:
                return
            self._last = now
        self._send(progress, total, message)


def _share(done: Any) -> str:
    if not isinstance(done, (int, float)):
        return ""
    return f", about {100 * min(max(float(done), 0.0), 1.0):.0f} % done"


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
