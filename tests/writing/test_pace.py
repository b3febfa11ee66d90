"""The pacer alone, on a clock the test moves: units sent against PACE, and rows larger than the
bucket (a tenth of a second's units) sent, not waited on for ever."""

from __future__ import annotations

import threading

import pytest

from cqlsh_ext.writing.pace import Pace


class _Clock:
    """A clock that moves only when asked: each wait of the pacer's condition moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _ClockCondition(threading.Condition):
    """The pacer's condition, whose waits move the test's clock by what they wait and return at
    once: this pacer's alone, not every Condition of the process (a thread of pytest's or of a
    library waiting meanwhile keeps its own waits)."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__()
        self.clock = clock

    def wait(self, timeout: float | None = None) -> bool:
        self.clock.now += timeout or 0.0
        return super().wait(0)


def _send(pace: Pace, clock: _Clock, costs: list[int]) -> float:
    """Sends rows of `costs` units one after another, each released at once; the clock's time
    when the last was sent. The pacer's waits move the clock by what they wait."""
    pace._cond = _ClockCondition(clock)  # before anything waits on or holds it
    for cost in costs:
        asked = iter(range(100_000))  # stop() after that many looks: a wait that never ends
        sent = pace.acquire(cost, lambda looks=asked: next(looks, None) is None)
        assert sent, f"a row of {cost} units was never sent (PACE {pace.ceiling})"
        pace.release(throttled=False)
    return clock.now


@pytest.mark.parametrize(("pace", "cost"), [(100, 11), (100, 64), (200, 21), (50, 6), (10, 1_000)])
def test_a_row_larger_than_the_bucket_is_sent_and_paid_for(pace: int, cost: int) -> None:
    clock = _Clock()
    pacer = Pace(pace, clock=clock)
    rows = 20
    # Seconds on the test's own clock (moved only by the pacer's waits): the machine's speed
    # plays no part.
    clock_seconds = _send(pacer, clock, [cost] * rows)
    assert pacer.figures.rows == rows and pacer.figures.units == rows * cost
    # Within PACE over the span: the debt of each large row is waited out by the next.
    assert (rows - 1) * cost / pace - 0.2 <= clock_seconds <= rows * cost / pace + 0.2
    # And over any second, the first too: at most PACE and one row's units.
    assert pacer.figures.busiest_second <= pace + cost


def test_small_rows_go_at_the_pace() -> None:
    clock = _Clock()
    pacer = Pace(100, clock=clock)
    clock_seconds = _send(pacer, clock, [1] * 500)  # the test's clock, as above
    assert pacer.figures.units == 500 and 4.5 <= clock_seconds <= 5.2
    assert pacer.figures.busiest_second <= 100 + 1  # the pace and one row, from the first second on


@pytest.mark.parametrize("already", [0, 3])
def test_the_time_left_holds_steady_at_a_steady_pace(already: int) -> None:
    """16 token ranges of 50 rows written at 10 rows a second, the progress line drawn every half
    second; with `already`, RESUME's first ranges: their rows were written before the kill, so they
    finish at once. The time left never jumps by more than a few seconds from one line to the
    next, and stays near the truth."""
    from cqlsh_ext.writing.pace import TimeLeft
    from cqlsh_ext.writing.ranges import RangeState

    clock = _Clock()
    state = RangeState()
    left = TimeLeft(clock)
    for r in range(already):  # read, nothing to write: finished at once
        state.sent[r] = 0
        state.finished.add(r)
    rows = (16 - already) * 50
    said: list[tuple[float, float]] = []
    for row in range(rows):
        r = already + row // 50
        state.sent[r] = state.sent.get(r, 0) + 1
        if row % 50 == 49:
            state.finished.add(r)
        clock.now += 0.1
        if row % 5 == 4:
            estimate = left(state.share_done(16))
            if estimate is not None:
                said.append((clock.now, estimate))
    end = rows / 10
    steady = [(t, s) for t, s in said if 10 < t < end - 5]
    assert steady
    for t, s in steady:
        assert abs(s - (end - t)) <= 0.2 * (end - t) + 2, (t, s)
    jumps = [abs((s2 - s1) + (t2 - t1)) for (t1, s1), (t2, s2) in zip(steady, steady[1:], strict=False)]
    assert max(jumps) < 3, max(jumps)


def test_the_time_left_of_a_short_run_that_started_slowly_is_within_twice_the_truth() -> None:
    """A rewrite on a busy machine: its first 3 s at a quarter of the rate of the rest, 11 s in
    all. Smoothed over 10 s whatever the run, the time left said ~13 s at 36 % of a run with 5.5 s
    to go (issue 109: '~29 s left, 38 % in, of a run that took 11 s'); smoothed over a third of the
    run so far at most, it is within twice the truth from a quarter of the work on."""
    from cqlsh_ext.writing.pace import TimeLeft

    clock = _Clock()
    left = TimeLeft(clock)
    said: list[tuple[float, float, float]] = []
    share = 0.0
    while share < 1:
        clock.now += 0.25
        share = min(share + (0.03 if clock.now <= 3 else 0.12) * 0.25, 1.0)
        estimate = left(share)
        if estimate is not None:
            said.append((clock.now, share, estimate))
    end = clock.now
    judged = [(t, s, e) for t, s, e in said if 0.25 <= s < 0.95]
    assert judged
    assert all(0.5 <= e / (end - t) <= 2 for t, _, e in judged), [(t, s, e, end - t) for t, s, e in judged]
