"""Waiting in a test for a state (a count in a file, a line in a log, a server gone): polled
until it comes, with a deadline that is a hang guard, never a measurement. A test never sleeps a
fixed time to let something happen: it waits here for what shows that it happened."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds a state may take to come: far beyond what any run on a loaded 2-core machine needs,
#: short of the suite's per-test timeout (pyproject.toml), so the failure says what never came.
DEADLINE = 180.0


def wait_until(state: Callable[[], T], what: str, seconds: float = DEADLINE, every: float = 0.05,
               process: subprocess.Popen | None = None) -> T:
    """`state()` once it is true (returned), checked every `every` seconds; the test fails naming
    `what` after `seconds`, or as soon as `process` (the program expected to bring the state) has
    ended without it."""
    deadline = time.monotonic() + seconds
    while True:
        found = state()
        if found:
            return found
        if process is not None and process.poll() is not None:
            found = state()  # what the process did just before its end
            if found:
                return found
            raise AssertionError(f"{what}: never happened; the process ended first (exit status "
                                 f"{process.returncode})")
        assert time.monotonic() < deadline, f"{what}: never happened in {seconds:.0f} s"
        time.sleep(every)


def running(pid: int) -> bool:
    """Whether process `pid` still runs: a zombie (ended, not yet reaped) does not."""
    from pathlib import Path

    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
