"""--timeout: a statement that runs past its seconds is stopped as a Ctrl-C stops it, from a timer
thread that sends the process SIGINT: a reading of cqlsh-ext's stops at its next boundary and keeps
what it read (common.interrupt.CtrlC), cqlsh's own wait for a page ends at once. One that has not
ended GRACE seconds later is sent a second one, which ends it at once. The shell then says it timed
out (exit code 4), not that it was interrupted: `fired` tells the two apart.
"""

from __future__ import annotations

import os
import signal
import threading

from cqlsh_ext.common.interrupt import pressing

#: Seconds between the first press and the second.
GRACE = 5.0


class StatementTimer:
    """One statement's time limit: `start()` when it starts, `cancel()` when it ends (whatever
    happened); `fired` once its time was up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> StatementTimer:
        self._thread = threading.Thread(target=self._run, name="statement-timeout", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        for wait in (self.seconds, GRACE):
            if self._ended.wait(wait):
                return
            with self._lock:  # never a press after cancel() returned
                if self._ended.is_set():
                    return
                self.fired = True
                # (what the reading's closing line says: timed out, not a person's Ctrl-C)
                pressing(f"--timeout {self.seconds:g} s")
                os.kill(os.getpid(), signal.SIGINT)

    def cancel(self) -> None:
        with self._lock:
            self._ended.set()
            pressing(None)
