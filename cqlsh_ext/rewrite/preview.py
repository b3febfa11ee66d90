"""COMPRESSION REWRITE's preview (docs/rewrite.md, "The preview"): the rows read (a sample of
random token-range slices of a big table unless ALL, or the ranges RESUME has left), each examined
as the run would (rewrite.job.Examiner), nothing written; the figures said (rewrite.report)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, plural, screen_width
from cqlsh_ext.rewrite.job import LABEL, Examiner, Job
from cqlsh_ext.rewrite.report import RowTally

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.writing.write_context import WriteContext

#: A preview of a table larger than this (the server's estimate) reads a sample unless ALL; the
#: variable sets another size (tests: the estimate of a table written a moment ago is empty).
SAMPLE_FROM_BYTES = 16 << 20
SAMPLE_FROM_VARIABLE = "CQLSH_EXT_REWRITE_SAMPLE_FROM_BYTES"
#: Rows a preview's sample reads (random token-range slices, whole partitions).
SAMPLE_ROWS = 2_000


@dataclass(frozen=True)
class PreviewFigures:
    """What a preview found (the shell says it in lines): the counts (a sample's scaled to the
    table), whether they are a sample's estimate, and what was read, in words."""

    counts: RowTally
    sampled: bool
    reading: str
    #: Asked at the interactive prompt (`Rewrite ... rows? [y/N]`), as UPDATE and UNDO ask: yes.
    accepted: bool = False


class _Preview:
    """A preview's Aggregate (scanning.aggregate; a sample's Totals, scanning.sample): the rows read
    examined, nothing written."""

    def __init__(self, job: Job, key_size: Callable[[Sequence[Any]], int]) -> None:
        from cqlsh_ext.writing.cell_reads import PageCells

        work = job.work
        self.job, self.key_size = job, key_size
        self.cells = PageCells(work.plan, work.keyspace, work.keys, work.blob, work.mechanism, work.decoding,
                               work.static)
        self.examiner = Examiner(job, key_size)
        self.names: list[str] = []
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""
        self.factor = 1.0

    @property
    def counts(self) -> RowTally:
        return self.examiner.counts

    @property
    def rows(self) -> int:
        return self.counts.rows

    def fresh(self) -> _Preview:
        return _Preview(self.job, self.key_size)

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None:
        self.names = list(names)

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        from cqlsh_ext.writing.cell_reads import LeftAlone

        examiner = self.examiner
        examiner.read(len(rows))
        # Nothing written: no expiry needed. A server's page (pages in): the rows left alone unmade.
        for cell in self.cells.page_in(self.names, rows, 0.0, examiner):
            if isinstance(cell, LeftAlone):
                examiner.leave(cell.stored, cell.key_sizes)
            else:
                examiner.examine(cell)

    def merge(self, other: _Preview) -> None:
        self.counts.merge(other.counts)

    def snapshot(self) -> dict[tuple[str, ...], int]:
        return self.counts.snapshot()

    def figures(self) -> list[Any]:
        return []


def _key_size(ctx: ReadContext, job: Job) -> Callable[[Sequence[Any]], int]:
    from cqlsh_ext.writing.cell_writer import CellWriter

    work = job.work
    writer = CellWriter(ctx.session, work.keyspace, work.table, work.blob, work.keys, work.mechanism,
                        work.consistency, work.serial, work.default_ttl)
    return lambda key: sum(len(b) for b in writer.serialized(key))


def preview(ctx: WriteContext, job: Job, every_row: bool, todo: Sequence[int] | None = None,
            heading: str | None = "") -> PreviewFigures | None:
    """Read (a sample of a big table unless ALL) and say what the rewrite would do; nothing written.
    Its figures, or None when the reading failed (said through ctx.error)."""
    from cqlsh_ext.rewrite.report import preview_lines
    from cqlsh_ext.scanning.cost import pricing
    from cqlsh_ext.scanning.scan import Scanner, ScanSpec, error_text, table_size

    work = job.work
    say = sayer(ctx.out)
    # The heading first: on the screen before the reading's progress line (None: said already).
    if heading is not None:
        say(heading or f"{LABEL} {job.name} AS '{job.target.text}' (preview: nothing is written)")
    aggregate = _Preview(job, _key_size(ctx, job))
    label = f"{LABEL} {job.name}"
    ranges = work.ranges
    sampled = stopped = False
    reading = ""
    if ranges is not None and not every_row and todo is None:
        from cqlsh_ext.scanning.ring import ring_for, server_partitioner

        ring = ring_for(server_partitioner(ctx.session))
        size = table_size(ctx.session, work.keyspace, work.table, ring.span)
        forced = os.environ.get(SAMPLE_FROM_VARIABLE, "")
        threshold = int(forced) if forced.isdigit() else SAMPLE_FROM_BYTES
        if (size is not None and size.bytes > threshold) or (forced.isdigit() and threshold == 0):
            sampled = True
            reading, stopped = _sample(ctx, job, aggregate, ring, label)
    if not sampled:
        if ranges is None:
            spec = ScanSpec(work.plan.server_statement)
            reading = "the rows the WHERE names"
        else:
            chosen = [ranges[i] for i in (todo if todo is not None else range(len(ranges)))]
            spec = ScanSpec(work.select, partition_key=list(work.partition_key), ranges=chosen,
                            streams=4, also=work.also)
            reading = "every row" if todo is None else \
                f"every row of the {plural(len(chosen), 'token range')} left"
        scanner = Scanner(ctx.session, spec, consistency=ctx.consistency, timeout=ctx.timeout,
                          progress=ctx.progress(label, True, None),
                          pages_in=aggregate.cells.settles_pages and aggregate.examiner.settles)
        started = False
        for names, types, rows in scanner.pages():
            if not started:
                aggregate.set_columns(names, types)
                started = True
            aggregate.add_rows(rows)
        if scanner.error is not None:
            ctx.error(f"{LABEL}: the reading failed ({error_text(scanner.error)}); nothing was written")
            return None
        if scanner.interrupted:
            stopped = True
            reading += ", stopped by Ctrl-C: the rows read so far"
    counts = aggregate.counts
    shown = counts.scaled(aggregate.factor) if sampled else counts
    if sampled:
        reading += f"; figures below are for the whole table: about {shown.rows:,} rows"
    priced = pricing(ctx)
    hint = (f"its display then needs DECODE {work.keyspace}.{work.table}.{work.blob} '{job.target.chain}' "
            "(the chain has no signature)")
    for line in preview_lines(shown, job.target.shown, job.pace, reading, sampled, priced.keyspaces, hint):
        say(line)
    say(work.mechanism.promise())
    if shown.change:
        changed = f"{'about ' if sampled else ''}{plural(shown.change, 'row')}"
        # At the interactive prompt the question UPDATE and UNDO ask (docs/rewrite.md, "The preview");
        # a yes runs it as CONFIRM does, reading the token ranges again. A preview stopped by Ctrl-C
        # asks nothing.
        ctx.out.flush()  # the preview on the screen before its question (on stderr)
        if ctx.ask is not None and not stopped and ctx.ask(f"Rewrite {changed}? [y/N] "):
            return PreviewFigures(shown, sampled, reading, accepted=True)
        say(f"Nothing written: add CONFIRM at the end of the statement to rewrite {changed}.")
    return PreviewFigures(shown, sampled, reading)


def _sample(ctx: ReadContext, job: Job, aggregate: _Preview, ring: Any, label: str) -> tuple[str, bool]:
    """A sample of random token-range slices into `aggregate` (scanning.sample's policy), its
    counts to be scaled by `aggregate.factor`; what was read, in words, and whether Ctrl-C stopped
    it."""
    from cqlsh_ext.scanning.sample import SamplePlan, SliceSampler
    from cqlsh_ext.scanning.scan import Scanner

    work = job.work
    sampler = SliceSampler.of_table(ctx.session, aggregate, SamplePlan(rows=SAMPLE_ROWS), work.keyspace,
                                    work.table, work.partition_key, ring)
    spec = sampler.spec(work.select, work.partition_key, work.also)
    scanner = Scanner(ctx.session, spec, consistency=ctx.consistency, timeout=ctx.timeout,
                      progress=ctx.progress(label, True, None))
    sampler.read(scanner, enough=lambda: sampler.enough)
    joined = max(1, len(sampler.done))
    aggregate.factor = sampler.slices / joined
    stopped = ", stopped by Ctrl-C: the slices read so far" if scanner.interrupted else ""
    slices = f"{plural(joined, 'random token-range slice')} of {sampler.slices:,}"
    return f"a sample: {slices}{stopped}; ALL reads every row", scanner.interrupted


def sayer(out: Any) -> Callable[[str], None]:
    """Lines on `out`, each wrapped at words to its screen."""
    width = screen_width(out)

    def say(text: str) -> None:
        print(message(text, width), file=out)

    return say
