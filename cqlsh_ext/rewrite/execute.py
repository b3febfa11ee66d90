"""COMPRESSION REWRITE's paced run in the shell (a front end on writing.ranges): progress, Ctrl-C
(the first stops sending, the writes in flight finish; a second stops at once), the closing lines
with the RESUME and UNDO statements."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural
from cqlsh_ext.rewrite.job import LABEL, Job, examiner_of
from cqlsh_ext.rewrite.report import RowTally
from cqlsh_ext.writing.ranges import WriteTally

if TYPE_CHECKING:
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.ranges import RangeRewriter
    from cqlsh_ext.writing.write_context import WriteContext

#: Off a terminal, a progress line every this many seconds.
PROGRESS_SECONDS = 10.0


@dataclass(frozen=True)
class RunFigures:
    """What a run did (the shell says it in its closing lines): the rows read (`counts`), what the
    writes did (`written`), the journal, whether every token range is finished, and why it stopped
    ('' when it was not stopped); `failed`: stopped by a failure (said through ctx.error)."""

    counts: RowTally
    written: WriteTally
    journal: str
    complete: bool
    stop: str
    failed: bool


def execute(ctx: WriteContext, job: Job, journal: Journal, todo: list[int],
            done_before: int = 0) -> RunFigures:
    """The paced run in the shell: progress, Ctrl-C (the first stops sending, the writes in flight
    finish; a second stops at once), the closing lines; its figures."""
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.rewrite.report import closing_lines, progress_text
    from cqlsh_ext.writing.journal_names import hint_name
    from cqlsh_ext.writing.pace import Pace, TimeLeft
    from cqlsh_ext.writing.ranges import RangeRewriter

    pace = Pace(job.pace)
    examiner = examiner_of(job)
    rewriter = RangeRewriter(ctx.session, job.work, journal, pace, examiner, ctx.timeout)
    counts = rewriter.changes.counts
    label = f"{LABEL} {job.name}"
    total = job.work.range_count
    progress = _progress(ctx, f"REWRITE {job.work.blob}")
    last_line = [0.0]
    told = [False]
    time_left = TimeLeft()

    def share() -> float | None:
        """The share of the ranges left at the start done (the time left is this run's)."""
        return rewriter.state.share_done(len(todo))

    def tick() -> None:
        now = time.monotonic()
        if rewriter.stop_seen and not rewriter.failure and not told[0]:
            told[0] = True
            if progress is not None:
                progress.close()
            ctx.say("Ctrl-C: stopping: the writes in flight finish (Ctrl-C again stops at once)")
        due = PROGRESS_SECONDS if progress is None else 0.125
        if now - last_line[0] < due:
            return
        last_line[0] = now
        units, rows = pace.per_second()
        done = share()
        text = progress_text(rewriter.tally, rows, units, job.pace, time_left(done))
        if progress is not None:
            ranges = done * len(todo) if done is not None else len(rewriter.state.finished)
            total_share = (done_before + ranges) / (done_before + len(todo)) if todo else None
            progress.step(text, total_share)
        else:
            ctx.say(f"{label}: {counts.rows:,} rows read, {text}")

    with CtrlC() as ctrl_c:
        try:
            rewriter.run(todo, lambda: ctrl_c.pressed, tick)
        finally:
            if progress is not None:
                progress.close()
            journal.close()
    figures = pace.figures
    # The ranges this run read (RESUME: of those left), wholly or in part.
    read = len(rewriter.state.sent)
    ranges = f" in {plural(read, 'token range')}" if job.work.ranges is not None else ""
    lines = closing_lines(label, counts, rewriter.tally, job.target.shown, figures.span, job.pace,
                          figures.busiest_second, figures.slowed, ranges)
    named = hint_name(journal.path, ctx.journal_dir)  # its id: a hint that fits one line
    finished = done_before + len(rewriter.state.finished)
    complete = finished == total
    stop = _stop_reason(rewriter)
    if not complete:
        lines.append(f"  {finished:,} of {total:,} token ranges finished"
                     + (f"; {stop}" if stop else ""))
        lines.append(f"Resume: {LABEL} RESUME '{named}' CONFIRM")
    lines.append(f"Undo: UNDO '{named}' CONFIRM")
    failed = rewriter.hard_stop or bool(rewriter.failure) or bool(rewriter.read_error)
    ctx.say_lines(lines, failed)
    if rewriter.hard_stop:
        raise KeyboardInterrupt
    return RunFigures(counts, rewriter.tally, journal.path, complete, stop, failed)


def _stop_reason(rewriter: RangeRewriter) -> str:
    """Why the run stopped before its end, as its closing lines say it ('' when it was not stopped)."""
    if rewriter.hard_stop:
        flying = plural(rewriter.in_flight_left, "write")
        return (f"stopped by a second Ctrl-C: {flying} in flight may or may not have applied (RESUME and "
                "UNDO look at each row)")
    if rewriter.failure:
        return f"stopped: {rewriter.failure}"
    if rewriter.read_error:
        return f"stopped: the reading failed ({rewriter.read_error})"
    if rewriter.interrupted:
        return "stopped by Ctrl-C after the writes in flight"
    return ""


def _progress(ctx: WriteContext, label: str) -> Any:
    progress = ctx.progress(label, True, None)
    if progress is not None:
        progress.ctrl_c = ("(Ctrl-C stops after the writes in flight)", "(Ctrl-C stops)")
    return progress
