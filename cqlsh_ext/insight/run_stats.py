"""COMPRESSION STATS: an exact scan (in the shell, or over worker processes), or a sampled one;
the cost asked for first where a full scan is expensive."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side

if TYPE_CHECKING:
    from cqlsh_ext.shellapi import Parsed, Shell

#: Worker processes for an exact whole-table COMPRESSION STATS when PARALLEL is not given: one per
#: core (bench/scale.py). A table under WORKERS_FROM_BYTES (by the server's estimate) is scanned in
#: the shell's own process: starting workers costs more than it saves there.
MAX_PARALLEL = 32
WORKERS_FROM_BYTES = 64 << 20


def run(shell: Shell, parsed: Parsed) -> None:
    from cqlsh_ext.insight.stats import Stats
    from cqlsh_ext.scanning.consume import consume
    from cqlsh_ext.scanning.cost import full_scan_accepted
    from cqlsh_ext.scanning.ring import RingError, ring_for, server_partitioner
    from cqlsh_ext.scanning.scan import ScanSpec, error_text, progress_for, table_size

    target = side.target(shell, parsed, "STATS")
    if target is None:
        return
    query, whole_table, limit = target
    mode, cap = side.mode_cap(shell)
    stats = Stats(query, mode, cap, from_headers=parsed.get_binding("decode_all") is None)
    ks, table, meta = side.named_table(shell, parsed)
    whole = meta is not None and whole_table
    partition_key = [c.name for c in meta.partition_key] if meta is not None else []
    plan = _sample_plan(parsed)
    ring = None
    partitioner = ""
    if whole:
        partitioner = server_partitioner(shell.session)
        try:
            ring = ring_for(partitioner)
        except RingError as err:
            if plan is not None:
                shell.printerr(f"COMPRESSION STATS: cannot sample: {err}")
                return
    if plan is not None:
        if not whole or ring is None or not ks or not table:
            shell.printerr("COMPRESSION STATS: SAMPLE needs a whole-table SELECT (SELECT columns FROM table, "
                           "nothing after the table name)")
            return
        _sampled_stats(shell, parsed, stats, plan, ring, ks, table, partition_key)
        return
    size = None
    if whole and ks and table:
        size = table_size(shell.session, ks, table, ring.span if ring else None)
    if whole and ks and table and not full_scan_accepted(
            shell, ks, table, size, partitioner, parsed.get_binding("confirm") is not None,
            "COMPRESSION STATS",
            "Add CONFIRM to run it from a script (COMPRESSION STATS CONFIRM SELECT ...), "
            "or estimate from a sample (COMPRESSION STATS SAMPLE SELECT ...).",
            "Scan the whole table? (a sample costs far less: COMPRESSION STATS SAMPLE ...) [y/N] "):
        return
    parallel = parsed.get_binding("parallel")
    workers = min(int(parallel), MAX_PARALLEL) if parallel is not None else _default_workers(size)
    progress = progress_for(f"COMPRESSION STATS {ks}.{table}" if table else "COMPRESSION STATS", True)
    if progress is not None and size is not None:
        progress.estimate = size.partitions  # for a percentage (one row per partition is the usual case)
    retried: dict[str, int] = {}
    if whole and ring is not None and workers > 1:
        from cqlsh_ext.scanning import workers as worker_pool

        stats, retried = worker_pool.scan(shell, stats, ks, partition_key, ring, workers, progress)
        if stats.rows == 0 and stats.error:
            shell.printerr(f"COMPRESSION STATS: {stats.error}")
            return
        if not stats.columns and not stats.error and not stats.interrupted:
            shell.printerr("COMPRESSION STATS: the result has no blob column")
            return
    else:
        scanner = side.scanner_for(shell, ScanSpec(query, limit=limit), progress)
        pages = consume(scanner, partial(_stats_columns, shell, stats),
                        lambda _names, _types, rows: stats.add_rows(rows))
        if pages is None:
            return
        stats.interrupted = stats.interrupted or scanner.interrupted
        stats.scan = scanner.description
        retried = scanner.retried
        if scanner.error is not None:
            if not pages:
                side.failed(shell, scanner.error)
                return
            stats.error = error_text(scanner.error)
    stats.retried = retried
    stats.finish()
    side.publish(shell, parsed, stats.to_json, stats.render)


def _stats_columns(shell: Shell, stats: Any, names: Sequence[str], types: Sequence[Any]) -> bool:
    stats.set_columns(names, types)
    if not stats.has_blobs:
        shell.printerr("COMPRESSION STATS: the result has no blob column")
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


def _sampled_stats(shell: Shell, parsed: Parsed, stats: Any, plan: Any, ring: Any, ks: str, table: str,
                   partition_key: list[str]) -> None:
    from cqlsh_ext.insight.sampled import SampledStats
    from cqlsh_ext.scanning.consume import consume
    from cqlsh_ext.scanning.sample import SAMPLE_STREAMS, probe_partitions, slice_count
    from cqlsh_ext.scanning.scan import ScanSpec, error_text, progress_for, table_size

    size = table_size(shell.session, ks, table, ring.span)
    sampler = SampledStats(stats, ring, 1, plan, None, "")
    partitions: int | None
    if size is not None:
        partitions, basis = size.partitions, "system.size_estimates"
    else:
        partitions = probe_partitions(shell.session, ring, ks, table, partition_key, sampler.rng,
                                      shell.session.default_timeout)
        basis = "DISTINCT partition keys after random tokens"
    sampler.slices = slice_count(partitions)
    sampler.server_partitions, sampler.partitions_basis = partitions, basis
    progress = progress_for(f"COMPRESSION STATS SAMPLE {ks}.{table}", True)
    if progress is not None:
        progress.detail = sampler.progress_detail
    spec = ScanSpec(stats.query, partition_key=partition_key, ranges=sampler.ranges(), streams=SAMPLE_STREAMS)
    scanner = side.scanner_for(shell, spec, progress)
    taken = consume(scanner, partial(_stats_columns, shell, stats),
                    lambda _n, _t, rows: sampler.add_page(scanner.page_range, rows, scanner.range_finished))
    if taken is None:
        return
    stats.interrupted = stats.interrupted or scanner.interrupted
    stats.scan = f"sample, {spec.streams} token-range streams"
    stats.retried = scanner.retried
    if scanner.error is not None:
        if not sampler.done:
            side.failed(shell, scanner.error)
            return
        stats.error = error_text(scanner.error)
    stats.finish()
    side.publish(shell, parsed, sampler.to_json, sampler.render)


def _default_workers(size: Any) -> int:
    import os

    if size is None or size.bytes < WORKERS_FROM_BYTES:
        return 1
    return max(1, min(MAX_PARALLEL, os.cpu_count() or 1))
