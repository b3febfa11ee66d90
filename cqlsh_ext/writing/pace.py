"""How fast COMPRESSION REWRITE writes: PACE N, at most N write capacity units a second, priced as
Amazon Keyspaces prices a write (1 unit per started KB of the row: scanning.capacity.wcu), and never
more writes in flight than the window.

A token bucket: units accrue at the rate, at most a tenth of a second's worth ahead (what a wait
that oversleeps on a busy machine catches up with), and a row larger than that waits for a full
bucket and runs into debt that later rows wait out. And a sliding second: a row is sent only when
the units sent over the second before it and its own stay within PACE plus the largest row's units
so far, so over any second, the first ones included, at most that is sent. The rate adapts: a write that was
throttled, timed out or found the server overloaded (the retries writing.cell_writer.CellWriter makes, named
by their reason) halves the rate and the window (at most once a second: a burst of errors is one
signal), and every second of writes without one gives back a tenth of the ceiling and one more
write in flight, up to PACE and the largest window. Without PACE only the window adapts.

Standard library only; thread-safe (the writes complete on other threads).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

#: Writes in flight at most (and at first).
MAX_IN_FLIGHT = 16
#: The rate never drops below this share of PACE, nor the window below one write.
FLOOR_SHARE = 1 / 64
#: Seconds between two changes of the rate, down or up.
ADAPT_SECONDS = 1.0
#: The sliding second the units sent are held to (a millisecond more: a send's moment is read from
#: the wall clock for its journal line, which may differ from this clock by microseconds).
SECOND = 1.001


@dataclass
class PaceFigures:
    """What the pace did: units and rows sent, the span they were sent over (first to last send,
    seconds), the most units sent in any one second, how often it slowed down, the rate now."""

    units: int = 0
    rows: int = 0
    span: float = 0.0
    busiest_second: int = 0
    slowed: int = 0
    rate: float | None = None
    #: Units sent in each second of the wall clock (epoch seconds): Spark's tasks' add up.
    per_second: dict[int, int] = field(default_factory=dict)


class Pace:
    def __init__(self, units: float | None, max_in_flight: int = MAX_IN_FLIGHT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling = units
        self.rate = units
        self.clock = clock
        self.max_window = max(1, max_in_flight)
        self.window = self.max_window
        self.in_flight = 0
        now = clock()
        #: The largest row's units so far: what a second may hold beyond PACE.
        self._largest = 1
        self.tokens = self._bucket()
        self._filled = now
        self._changed = now
        self._cond = threading.Condition()
        self._sent: deque[tuple[float, int]] = deque()
        self._in_second = 0
        self.figures = PaceFigures(rate=units)
        self._first: float | None = None
        #: The wall clock's reading at this clock's zero: a send's moment on the wall clock (its
        #: journal line's) is the moment this clock gave it, never one read later.
        self._epoch = time.time() - now

    def _bucket(self) -> float:
        """What the bucket holds at most: a tenth of a second at the rate, one unit at least."""
        if self.rate is None:
            return float("inf")
        return max(self.rate / 10, 1.0)

    def _second_waits(self, now: float, units: int) -> float:
        """Seconds until `units` more stay within PACE and the largest row's units over the second
        before them (0: now); the sends more than a second old forgotten."""
        while self._sent and self._sent[0][0] <= now - SECOND:
            self._in_second -= self._sent.popleft()[1]
        if self.ceiling is None or not self._sent or self._in_second + units <= self.ceiling + self._largest:
            return 0.0
        return self._sent[0][0] + SECOND - now

    def _refill(self, now: float) -> None:
        if self.rate is not None:
            self.tokens = min(self._bucket(), self.tokens + (now - self._filled) * self.rate)
        self._filled = now

    def acquire(self, units: int, stop: Callable[[], bool],
                waiting: Callable[[], None] | None = None) -> float | None:
        """Wait for a place in the window and `units` tokens: the moment they were taken (epoch
        seconds: what the journal says the row was sent at), or None when `stop()` turns true
        while waiting (nothing taken). `waiting` is called while it waits (a progress line)."""
        with self._cond:
            self._largest = max(self._largest, int(units))
            while True:
                if stop():
                    return None
                now = self.clock()
                self._refill(now)
                room = self.in_flight < self.window
                # A row larger than the bucket waits for a full bucket, then goes into debt: the
                # bucket never holds more than _bucket(), so waiting for the row's whole cost would
                # wait for ever.
                need = min(float(units), self._bucket())
                enough = self.rate is None or self.tokens >= need - 1e-9
                second = self._second_waits(now, units)
                if room and enough and not second:
                    break
                wait = 0.1
                if room and self.rate is not None:
                    wait = min(0.1, max(0.001, (need - self.tokens) / self.rate, second))
                if waiting is not None:
                    self._cond.release()
                    try:
                        waiting()
                    finally:
                        self._cond.acquire()
                self._cond.wait(wait)
            if self.rate is not None:
                self.tokens -= units
            self.in_flight += 1
            return self._count(now, units)

    def per_second(self) -> tuple[float, float]:
        """Units and rows a second so far: those sent over the time since the first was (a
        second at least, so that the first rows do not read as a burst the pace never allowed)."""
        with self._cond:
            if self._first is None:
                return 0.0, 0.0
            elapsed = max(self.clock() - self._first, 1.0)
            return self.figures.units / elapsed, self.figures.rows / elapsed

    def _count(self, now: float, units: int) -> float:
        figures = self.figures
        figures.units += units
        figures.rows += 1
        if self._first is None:
            self._first = now
        figures.span = now - self._first
        self._sent.append((now, units))
        self._in_second += units
        while self._sent and self._sent[0][0] <= now - SECOND:
            self._in_second -= self._sent.popleft()[1]
        figures.busiest_second = max(figures.busiest_second, self._in_second)
        wall = self._epoch + now
        second = int(wall)
        figures.per_second[second] = figures.per_second.get(second, 0) + units
        return wall

    def release(self, throttled: bool) -> None:
        """A write is done: `throttled` when it met throttling, a timeout or an overload on the way."""
        with self._cond:
            self.in_flight -= 1
            now = self.clock()
            if throttled:
                self._slow_down(now)
            else:
                self._climb(now)
            self._cond.notify_all()

    def _slow_down(self, now: float) -> None:
        if now - self._changed < ADAPT_SECONDS and self.figures.slowed:
            return  # the same burst of errors
        self._refill(now)
        if self.rate is not None and self.ceiling is not None:
            self.rate = max(self.ceiling * FLOOR_SHARE, self.rate / 2)
            self.tokens = min(self.tokens, self._bucket())
        self.window = max(1, self.window // 2)
        self.figures.slowed += 1
        self.figures.rate = self.rate
        self._changed = now

    def _climb(self, now: float) -> None:
        if now - self._changed < ADAPT_SECONDS:
            return
        self._refill(now)
        if self.rate is not None and self.ceiling is not None and self.rate < self.ceiling:
            self.rate = min(self.ceiling, self.rate + self.ceiling / 10)
        self.window = min(self.max_window, self.window + 1)
        self.figures.rate = self.rate
        self._changed = now

#: The time left is smoothed over about this many seconds of the recent rate.
TIME_LEFT_SECONDS = 10.0


class TimeLeft:
    """The time a run has left, from the share of its work done (0 to 1) at each moment: the share
    left over the recent rate, an exponentially weighted rate whose weight halves every
    TIME_LEFT_SECONDS x ln 2 seconds, or a third of the run so far where that is shorter (a burst
    of ranges finishing at once moves it a little, a pace that changed moves it within seconds, a
    slow start does not hold it). None until there is a rate to go by: the share is known (not
    None) at two moments."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 seconds: float = TIME_LEFT_SECONDS) -> None:
        import math

        self.clock = clock
        self.seconds = seconds
        self._exp = math.exp
        self._last: tuple[float, float] | None = None
        #: When the share was first known: the rate is smoothed over at most a third of the time since.
        self._first = 0.0
        self.rate: float | None = None

    def __call__(self, share: float | None) -> float | None:
        now = self.clock()
        if share is None:  # not known yet: the rate counts from when it is
            self._last, self.rate = None, None
            return None
        if self._last is None:
            self._last, self._first = (now, share), now
            return None
        then, before = self._last
        dt = now - then
        if dt <= 0:
            return self._left(share)
        self._last = (now, share)
        recent = max(share - before, 0.0) / dt
        if self.rate is None:
            self.rate = recent if recent > 0 else None
            return self._left(share)
        # (over TIME_LEFT_SECONDS, or a third of the run so far where that is less: a slow first
        # second on a busy machine does not hold the estimate of a run of seconds)
        weight = 1 - self._exp(-dt / max(min(self.seconds, (now - self._first) / 3), dt))
        self.rate += weight * (recent - self.rate)
        return self._left(share)

    def _left(self, share: float) -> float | None:
        if self.rate is None or self.rate <= 0 or not 0 < share < 1:
            return None
        return (1 - share) / self.rate
