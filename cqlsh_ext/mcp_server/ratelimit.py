"""A calls-per-minute limit (the policy's [limits] calls_per_minute, or --calls-per-minute): the
calls of the last 60 seconds, a call over the limit refused in one line that says when the next
one will be served. Counted for the whole server (every client of an HTTP server together), on the
protocol's side, before the call is queued: a refused call costs the database nothing."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

WINDOW = 60.0


class RateLimit:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> str | None:
        """Count a call: None when it may run, else the one line it is refused with."""
        now = self._clock()
        with self._lock:
            while self._calls and now - self._calls[0] >= WINDOW:
                self._calls.popleft()
            if len(self._calls) >= self.per_minute:
                wait = WINDOW - (now - self._calls[0])
                return (f"refused: more than {self.per_minute:,} calls a minute (the server's limit); "
                        f"the next call is served in {max(wait, 0.1):.1f} s")
            self._calls.append(now)
        return None
