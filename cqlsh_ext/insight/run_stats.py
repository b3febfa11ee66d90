"""COMPRESSION STATS: an exact scan (in the shell, or over worker processes), or a sampled one;
the cost asked for first where a full scan is expensive."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.read_requests import SampleSpec, StatsRequest
    from cqlsh_ext.reading.typed import ReportAnswer

NO_PAYLOAD = "COMPRESSION STATS: the result has no blob or text column"


def stats_answer(ctx: ReadContext, request: StatsRequest) -> ReportAnswer | None:
    """The report's answer (its figures, its text), or None when nothing is reported (ctx.error
    said why). Stopped (Ctrl-C, the context's stop), the figures are those of the rows read."""
    from cqlsh_ext.insight.stats import Stats
    from cqlsh_ext.scanning.cost import pricing
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table

    read = side.target(ctx, request.target, "STATS")
    if read is None:
        return None
    stats = Stats(read.query, read.mode, read.cap, from_headers=request.from_headers, pricing=pricing(ctx))
    whole = read.meta is not None and read.whole_table
    sample = _sample_plan(request.sample)
    confirmed = request.confirm
    if sample is not None:
        cheaper, answer = _sampled_stats(ctx, stats, sample, read if whole else None)
        if cheaper is None:
            return answer
        # The policy (scanning.sample): the whole table reads faster than a sample would, exactly.
        stats = stats.fresh()
        stats.notes.append(f"SAMPLE read the whole table: {cheaper}")
        stats.sample = {"plan": sample.describe(), "whole_table": cheaper}
        confirmed = True  # cheap by the estimate: nothing to ask
    if whole:
        ask = FullScanQuestion(
            "COMPRESSION STATS",
            "Add CONFIRM to run it from a script (COMPRESSION STATS CONFIRM SELECT ...; confirm: true over "
            "MCP and the Python API), or estimate from a sample (COMPRESSION STATS SAMPLE SELECT ...).",
            "Scan the whole table? (a sample costs far less: COMPRESSION STATS SAMPLE ...) [y/N] ",
            confirmed)
        plan = whole_table(ctx, read.query, read.meta, ask, workers=request.parallel)
        if plan is None:
            return None
    else:
        plan = ReadPlan(read.query, limit=read.limit)
    label = f"COMPRESSION STATS {read.keyspace}.{read.table}" if read.table else "COMPRESSION STATS"
    progress = ctx.progress(label, True, plan.size.partitions if plan.size is not None else None)
    scan = plan.read(ctx, stats, progress, accept=partial(_has_payloads, ctx))
    for _ in scan:
        if ctx.stop.is_set():
            scan.stop()
            stats.interrupted = True
    if scan.refused:
        return None
    if stats.error and not stats.rows:  # nothing to report: the error alone, in one line
        ctx.error(stats.error)
        return None
    if not stats.columns and not stats.error and not stats.interrupted:  # workers: seen only there
        ctx.error(NO_PAYLOAD)
        return None
    stats.retried = scan.retried
    stats.finish()
    return side.report("COMPRESSION STATS", stats.to_json, stats.render, _stopped(stats))


def _stopped(figures: Any) -> str | None:
    from cqlsh_ext.reading.typed import FAILED, INTERRUPTED

    return FAILED if figures.error else INTERRUPTED if figures.interrupted else None


def _has_payloads(ctx: ReadContext, stats: Any) -> bool:
    """The first page's columns hold a blob or are text (else said, and nothing more is read)."""
    if not stats.has_payloads:
        ctx.error(NO_PAYLOAD)
        return False
    return True


def _sample_plan(sample: SampleSpec | None) -> Any:
    """The SAMPLE clause as a SamplePlan, or None for an exact scan."""
    if sample is None:
        return None
    from cqlsh_ext.scanning.sample import DEFAULT_SECONDS, SamplePlan

    plan = SamplePlan(seconds=sample.seconds or DEFAULT_SECONDS, seed=sample.seed)
    if sample.percent is not None:
        plan.percent = min(100.0, sample.percent)
    elif sample.rows is not None:
        plan.rows = sample.rows
    elif sample.precision is not None:
        plan.precision = sample.precision
    return plan


def _sampled_stats(ctx: ReadContext, stats: Any, plan: Any,
                   read: side.InsightTarget | None) -> tuple[str | None, ReportAnswer | None]:
    """The sample read: (None, its report's answer, or None when nothing is reported: ctx.error
    said why); or, where the policy finds the whole table cheaper to read than the sample
    (scanning.sample), (why, None)."""
    from cqlsh_ext.insight.sampled import SampledStats
    from cqlsh_ext.scanning.ring import RingError
    from cqlsh_ext.scanning.scan import error_text, scanner_for

    if read is None or not read.keyspace or not read.table:
        ctx.error("COMPRESSION STATS: SAMPLE needs a whole-table SELECT (SELECT columns FROM table, "
                  "nothing after the table name)")
        return None, None
    ks, table = read.keyspace, read.table
    partition_key = [c.name for c in read.meta.partition_key]
    try:
        sampler = SampledStats.of_table(ctx.session, stats, plan, ks, table, partition_key)
    except RingError as err:
        ctx.error(f"COMPRESSION STATS: cannot sample: {err}")
        return None, None
    if sampler.whole_table:
        return sampler.whole_table, None
    progress = ctx.progress(f"COMPRESSION STATS SAMPLE {ks}.{table}", True, None)
    if progress is not None:
        progress.detail = sampler.progress_detail
    spec = sampler.spec(stats.query, partition_key)
    scanner = scanner_for(ctx, spec, progress)
    scanner.pages_in = stats.pages_in  # the server's pages, read by the core (scanning.pages_in)
    if not sampler.read(scanner, partial(_has_payloads, ctx, stats), ctx.stop):
        return None, None
    if sampler.whole_table and not scanner.interrupted and scanner.error is None:
        return sampler.whole_table, None
    stats.interrupted = stats.interrupted or scanner.interrupted
    stats.scan = (f"the whole table, {spec.streams} parallel streams" if sampler.read_whole
                  else f"sample, {spec.streams} parallel streams")
    stats.retried = scanner.retried
    if scanner.error is not None:
        if not sampler.done:
            side.failed(ctx, scanner.error)
            return None, None
        stats.error = error_text(scanner.error)
    stats.finish()
    return None, side.report("COMPRESSION STATS", sampler.to_json, sampler.render, _stopped(stats))
