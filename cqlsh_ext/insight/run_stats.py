"""COMPRESSION STATS: an exact scan (in the shell, or over worker processes), or a sampled one;
the cost asked for first where a full scan is expensive."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell

NO_PAYLOAD = "COMPRESSION STATS: the result has no blob or text column"


def run(shell: Shell, parsed: Parsed) -> None:
    from cqlsh_ext.insight.stats import Stats
    from cqlsh_ext.scanning.cost import pricing
    from cqlsh_ext.scanning.plan import FullScanQuestion, ReadPlan, whole_table

    read = side.target(shell, parsed, "STATS")
    if read is None:
        return
    stats = Stats(read.query, read.mode, read.cap, from_headers=parsed.get_binding("decode_all") is None,
                  pricing=pricing(shell))
    whole = read.meta is not None and read.whole_table
    sample = _sample_plan(parsed)
    confirmed = parsed.get_binding("confirm") is not None
    if sample is not None:
        cheaper = _sampled_stats(shell, parsed, stats, sample, read if whole else None)
        if cheaper is None:
            return
        # The policy (scanning.sample): the whole table reads faster than a sample would, exactly.
        stats = stats.fresh()
        stats.notes.append(f"SAMPLE read the whole table: {cheaper}")
        stats.sample = {"plan": sample.describe(), "whole_table": cheaper}
        confirmed = True  # cheap by the estimate: nothing to ask
    if whole:
        ask = FullScanQuestion(
            "COMPRESSION STATS",
            "Add CONFIRM to run it from a script (COMPRESSION STATS CONFIRM SELECT ...), "
            "or estimate from a sample (COMPRESSION STATS SAMPLE SELECT ...).",
            "Scan the whole table? (a sample costs far less: COMPRESSION STATS SAMPLE ...) [y/N] ",
            confirmed)
        parallel = parsed.get_binding("parallel")
        plan = whole_table(shell, read.query, read.meta, ask,
                           workers=int(parallel) if parallel is not None else None)
        if plan is None:
            return
    else:
        plan = ReadPlan(read.query, limit=read.limit)
    progress = plan.progress(f"COMPRESSION STATS {read.keyspace}.{read.table}" if read.table
                             else "COMPRESSION STATS")
    scan = plan.read(shell, stats, progress, accept=partial(_has_payloads, shell))
    for _ in scan:
        pass
    if scan.refused:
        return
    if stats.error and not stats.rows:  # nothing to report: the error alone, in one line
        shell.printerr(stats.error)
        return
    if not stats.columns and not stats.error and not stats.interrupted:  # workers: seen only there
        shell.printerr(NO_PAYLOAD)
        return
    stats.retried = scan.retried
    stats.finish()
    side.publish(shell, parsed, stats.to_json, stats.render)


def _has_payloads(shell: Shell, stats: Any) -> bool:
    """The first page's columns hold a blob or are text (else said, and nothing more is read)."""
    if not stats.has_payloads:
        shell.printerr(NO_PAYLOAD)
        return False
    return True


def _sample_plan(parsed: Parsed) -> Any:
    """The SAMPLE clause as a SamplePlan, or None for an exact scan."""
    if parsed.get_binding("sample_mode") is None:
        return None
    from cqlsh_ext.scanning.sample import DEFAULT_SECONDS, SamplePlan

    sample, precision = parsed.get_binding("sample"), parsed.get_binding("precision")
    seconds, seed = parsed.get_binding("seconds"), parsed.get_binding("seed")
    plan = SamplePlan(seconds=float(seconds) if seconds else DEFAULT_SECONDS,
                      seed=int(seed) if seed is not None else None)
    if sample is not None and parsed.get_binding("percent") is not None:
        plan.percent = min(100.0, float(sample))
    elif sample is not None:
        plan.rows = int(sample)
    elif precision is not None:
        plan.precision = float(precision) / 100
    return plan


def _sampled_stats(shell: Shell, parsed: Parsed, stats: Any, plan: Any,
                   read: side.InsightTarget | None) -> str | None:
    """The sample read and its report published; or, where the policy finds the whole table
    cheaper to read than the sample (scanning.sample), why, and nothing published."""
    from cqlsh_ext.insight.sampled import SampledStats
    from cqlsh_ext.scanning.consume import consume
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.sample import SAMPLE_STREAMS
    from cqlsh_ext.scanning.scan import ScanSpec, error_text, progress_for, shell_scanner

    if read is None or not read.keyspace or not read.table:
        shell.printerr("COMPRESSION STATS: SAMPLE needs a whole-table SELECT (SELECT columns FROM table, "
                       "nothing after the table name)")
        return None
    try:
        ring = ring_for(server_partitioner(shell.session))
    except RingError as err:
        shell.printerr(f"COMPRESSION STATS: cannot sample: {err}")
        return None
    ks, table = read.keyspace, read.table
    partition_key = [c.name for c in read.meta.partition_key]
    sampler = SampledStats(stats, ring, 1, plan, None, "")
    sampler.count_partitions(shell.session, ks, table, partition_key)
    if sampler.whole_table:
        return sampler.whole_table
    progress = progress_for(f"COMPRESSION STATS SAMPLE {ks}.{table}", True)
    if progress is not None:
        progress.detail = sampler.progress_detail
    spec = ScanSpec(stats.query, partition_key=partition_key, ranges=sampler.ranges(), streams=SAMPLE_STREAMS)
    scanner = shell_scanner(shell, spec, progress)

    def start(names: Sequence[str], types: Sequence[Any]) -> bool:
        sampler.set_columns(names, types)
        return _has_payloads(shell, stats)

    taken = consume(scanner, start,
                    lambda _n, _t, rows: sampler.add_page(scanner.page_range, rows, scanner.range_finished))
    if taken is None:
        return None
    if sampler.whole_table and not scanner.interrupted and scanner.error is None:
        return sampler.whole_table
    stats.interrupted = stats.interrupted or scanner.interrupted
    stats.scan = (f"the whole table, {spec.streams} parallel streams" if sampler.read_whole
                  else f"sample, {spec.streams} parallel streams")
    stats.retried = scanner.retried
    if scanner.error is not None:
        if not sampler.done:
            side.failed(shell, scanner.error)
            return None
        stats.error = error_text(scanner.error)
    stats.finish()
    side.publish(shell, parsed, sampler.to_json, sampler.render)
    return None
