"""COMPRESSION REWRITE RESUME (docs/rewrite.md, "The journal, RESUME and UNDO"): a rewrite gone on
with from its journal (a file, or a Spark run's directory of parts). The journal must verify
(writing.journal_read: sealed, the user's, nobody else can write it); the work is rebuilt from its
head's sealed request (writing.requests.RewriteRequest: the table, the blob, the chain, the WHERE's
conditions, the PACE) and its token ranges, never from a statement's text; the ranges it has not
finished are read and rewritten, appended to the same journal. The journal (named by its path, the
id its name ends with, or LAST: writing.journal_names) is locked from before it is read to the
run's end (writing.journal_lock): one a live run holds is refused."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cqlsh_ext.common.text import plural
from cqlsh_ext.rewrite.job import LABEL, Job
from cqlsh_ext.writing.refused import WriteRefused

if TYPE_CHECKING:
    from cqlsh_ext.rewrite.execute import RunFigures
    from cqlsh_ext.rewrite.preview import PreviewFigures
    from cqlsh_ext.writing.journal_lock import JournalLock
    from cqlsh_ext.writing.journal_read import JournalRead
    from cqlsh_ext.writing.requests import ResumeRequest
    from cqlsh_ext.writing.write_context import WriteContext


@dataclass
class Resumed:
    """A rewrite to go on with: its journal's parts, the job rebuilt from them, the token ranges
    finished and those left; the journal's path (found from what was given) and its lock, held
    until the run that goes on with it ends (`lock.release()`, or Journal.close once reopened)."""

    parts: list[JournalRead]
    job: Job
    done: set[int]
    todo: list[int]
    path: str
    lock: JournalLock

    @property
    def rows_before(self) -> int:
        return sum(1 for part in self.parts for applied in part.outcomes.values() if applied)


def resumed(ctx: WriteContext, given: str) -> Resumed:
    """The rewrite `given` journals (a path, an id, LAST), rebuilt from its verified head, its
    journal locked (released here when it is refused); WriteRefused or QueryError."""
    from cqlsh_ext.writing.journal_lock import JournalLock
    from cqlsh_ext.writing.journal_names import find_journal

    path, _ = find_journal(given, ctx.journal_dir, ("rewrite",))
    lock = JournalLock.take(path, "COMPRESSION REWRITE RESUME")
    try:
        return _resumed(ctx, path, lock)
    except BaseException:
        lock.release()
        raise


def _resumed(ctx: WriteContext, path: str, lock: JournalLock) -> Resumed:
    from cqlsh_ext.rewrite.job import job_for, table_meta, table_schema
    from cqlsh_ext.rewrite.parse import where_of
    from cqlsh_ext.writing.journal_read import Unsealed, read_journals
    from cqlsh_ext.writing.requests import RewriteRequest

    try:
        parts = read_journals(path)
    except Unsealed as err:
        raise WriteRefused(f"{err.path} is a journal of version {err.version}, written before journals "
                           "were sealed: RESUME goes on only with a sealed journal (the rewrite's statement "
                           "run again writes no row twice)") from None
    first = parts[0]
    request = first.request
    if first.kind != "rewrite" or not isinstance(request, RewriteRequest):
        raise WriteRefused(f"{path} is not a {LABEL}'s journal (RESUME goes on with one; UNDO reads any)")
    meta = table_meta(ctx, request.keyspace, request.table)
    where = where_of(request, table_schema(ctx, meta)) if meta is not None else None
    ranges = first.head.get("ranges")
    if ranges is not None and (not isinstance(ranges, list) or not all(
            isinstance(r, list) and len(r) == 2 and all(type(t) is int for t in r) for r in ranges)):
        raise WriteRefused(f"{first.path}: its first line's token ranges are not ranges")
    job = job_for(ctx, request, where, ranges if isinstance(ranges, list) else None)
    done: set[int] = set()
    for part in parts:
        done |= part.ranges_done
    todo = [i for i in range(job.work.range_count) if i not in done]
    return Resumed(parts, job, done, todo, path, lock)


#: Rows in flight at a kill named in RESUME's heading (all of them are looked up, up to LOOKED_UP).
NAMED = 8
LOOKED_UP = 1_000


def in_flight_lines(ctx: WriteContext, job: Job, parts: list[JournalRead]) -> list[str]:
    """The rows the journal has no outcome for (in flight at the kill: writing.journal_read.in_flight),
    each looked up now: holding the bytes sent (the write applied; the ranges left read it as already
    in the target), the old bytes at the write time read (it never applied; rewritten with its
    range), the old bytes written again since (an UNDO's write, or another client's: rewritten with
    its range too), or neither (written or deleted by someone else since: left alone); named, the
    first NAMED."""
    from cqlsh_ext.writing.blob_target import key_text
    from cqlsh_ext.writing.cell_writer import CellWriter, same
    from cqlsh_ext.writing.journal_read import in_flight
    from cqlsh_ext.writing.undo import column_value, key_values

    rows = in_flight(parts)
    if not rows:
        return []
    work = job.work
    writer = CellWriter(ctx.session, work.keyspace, work.table, work.blob, work.keys, work.mechanism,
                        work.consistency, work.serial, work.default_ttl)
    applied = old = again = other = 0
    for row in rows[:LOOKED_UP]:
        cell = writer.read(key_values(writer, work.keys, row, parts[0].path))
        if same(cell.value, column_value(row.new, work.blob)):
            applied += 1
        elif same(cell.value, column_value(row.old, work.blob)):
            if row.writetime is None or cell.writetime in (None, row.writetime):
                old += 1
            else:
                again += 1
        else:
            other += 1
    def hold(n: int) -> str:
        return f"{n:,} {'holds' if n == 1 else 'hold'}"

    found = [f"{hold(applied)} the bytes sent (applied: read again as already {job.target.shown})"
             if applied else "",
             f"{hold(old)} the old bytes (never applied: rewritten with the token ranges left)"
             if old else "",
             f"{hold(again)} the old bytes written again since (by an UNDO, or another client: rewritten "
             "with the token ranges left)" if again else "",
             f"{hold(other)} neither (written or deleted by another client since: left alone)"
             if other else ""]
    unread = f" (the first {LOOKED_UP:,} looked up)" if len(rows) > LOOKED_UP else ""
    lines = [f"  {plural(len(rows), 'row')} with no outcome in the journal (in flight at the kill), looked "
             f"up now{unread}: " + ", ".join(part for part in found if part)]
    names = [key_text(dict(zip(work.keys, key_values(writer, work.keys, row, parts[0].path), strict=True)))
             for row in rows[:NAMED]]
    more = f", and {len(rows) - NAMED:,} more" if len(rows) > NAMED else ""
    lines.append("    " + "; ".join(names) + more)
    return lines


def resume(ctx: WriteContext, request: ResumeRequest) -> tuple[Resumed, PreviewFigures | RunFigures | None]:
    """Go on with a rewrite from its journal (see the module doc): what the journal holds, and the
    preview's or the run's figures of the token ranges left (None: none is left, or the preview's
    reading failed, said through ctx.error)."""
    found = resumed(ctx, request.path)
    try:
        return found, _resume(ctx, request, found)
    finally:
        found.lock.release()  # (a journal reopened released it when it closed)


def _resume(ctx: WriteContext, request: ResumeRequest, found: Resumed) -> PreviewFigures | RunFigures | None:
    from cqlsh_ext.rewrite.execute import execute
    from cqlsh_ext.rewrite.preview import preview, sayer
    from cqlsh_ext.writing.journal import Journal, open_journal

    job, parts = found.job, found.parts
    shown = job.request.statement().removesuffix(" CONFIRM")
    say = sayer(ctx.out)
    # Said first, before anything is looked up or read; the rows in flight at the kill after.
    previewed = " (preview: nothing is written)" if found.todo and not request.confirm else ""
    heading = (f"{LABEL} RESUME {found.path}: {shown}\n  {len(found.done):,} of "
               f"{job.work.range_count:,} token ranges finished, {plural(found.rows_before, 'row')} "
               f"rewritten so far{previewed}")
    for part in parts:
        if part.cut:
            heading += f"\n  {part.path} {part.cut_text()}"
        if part.torn is not None:
            heading += f"\n  {part.path}: {part.torn_text()}"
    say(heading)
    for line in in_flight_lines(ctx, job, parts):
        say(line)
    if not found.todo:
        say("  nothing left to rewrite")
        return None
    if not request.confirm:
        figures = preview(ctx, job, True, found.todo, None)
        if figures is None or not figures.accepted:  # not answered yes at the prompt
            return figures
    if os.path.isdir(found.path):
        journal = open_journal(ctx, "rewrite", job.work.keyspace, job.work.table, job.work.blob,
                               job.work.mechanism, job.request, job.head(), LABEL)
    else:
        journal = Journal.reopen(parts[0], found.lock)
        say(f"Journal: {journal.path} (appended to)")
    return execute(ctx, job, journal, found.todo, len(found.done))
