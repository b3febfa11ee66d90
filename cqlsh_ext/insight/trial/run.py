"""COMPRESSION TRIAL: what the statement asks for (`TrialRequest`, built from the statement as its
declaration reads it: insight/declared.py, insight.report_requests.trial; refused in one
line when it cannot run), the values (the sampler COMPRESSION STATS SAMPLE uses, or files), on Amazon
Keyspaces the cost asked for, then the measuring (insight.trial.latency) and the report
(insight.trial.report): `trial_answer(ctx, request)`, in a reading's context
(reading.context.ReadContext), no shell."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.insight import shellside as side
from cqlsh_ext.insight.trial import MAX_CONCURRENCY, MIN_VALUES

if TYPE_CHECKING:
    from cqlsh_ext.insight.trial.latency import Value
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer

LABEL = "COMPRESSION TRIAL"


@dataclass(frozen=True)
class TrialRequest:
    """COMPRESSION TRIAL's clauses: the column (`keyspace`, `table`, `column` as the schema spells
    them; keyspace None: the context's) or the file or directory (`path`), the scratch keyspace
    (`into`), how many values (`rows`), the requests in flight (`concurrency`), the variants
    (`codecs`; None: the default ones), KEEP and CONFIRM."""

    into: str | None
    rows: int
    concurrency: int
    codecs: tuple[str, ...] | None
    path: str | None
    keep: bool
    confirm: bool
    keyspace: str | None = None
    table: str | None = None
    column: str | None = None


@dataclass
class TakenValues:
    """The values to measure and how they were taken."""

    taken: list[Value]
    column_type: str
    source: str
    skipped: dict[str, int] = field(default_factory=dict)
    sample: dict[str, Any] = field(default_factory=dict)
    partitioner: str = ""


def refuse(ctx: ReadContext, reason: str) -> None:
    ctx.error(f"{LABEL}: {reason}")


def trial_answer(ctx: ReadContext, asked: TrialRequest) -> ReportAnswer | None:
    """The trial run and its report's answer, or None when nothing was measured (ctx.error said
    why)."""
    from cqlsh_ext.insight.trial import latency as trial

    problem = _check(ctx, asked)
    if problem:
        refuse(ctx, problem)
        return None
    assert asked.into is not None
    try:
        trial.variant_names(asked.codecs, True)  # every named variant written here, before reading
    except trial.TrialRefused as err:
        refuse(ctx, str(err))
        return None
    from cqlsh_ext.insight.view_measures import effective_mode

    mode, cap = effective_mode(ctx.display.mode), ctx.display.cap
    values = _from_files(ctx, asked, mode, cap) if asked.path is not None \
        else _from_column(ctx, asked, mode, cap)
    if values is None:
        return None
    if len(values.taken) < MIN_VALUES:
        left_out = "; left out: " + ", ".join(f"{n:,} {why}" for why, n in values.skipped.items()) \
            if values.skipped else ""
        refuse(ctx, f"too few values to measure: {len(values.taken):,} in {values.source} "
                    f"(at least {MIN_VALUES}){left_out}")
        return None
    try:
        names = trial.variant_names(asked.codecs, any(v.layers for v in values.taken))
        variants = trial.build_variants(names, values.taken, cap)
    except trial.TrialRefused as err:
        refuse(ctx, str(err))
        return None
    return _measure(ctx, asked, values, variants, cap)


def _check(ctx: ReadContext, asked: TrialRequest) -> str | None:
    """Why the statement cannot run as written, or None."""
    if not asked.into:
        return ("name the keyspace for the scratch tables: ... INTO <keyspace> (the trial writes into "
                "tables of its own there, never into the column's table)")
    if asked.into not in ctx.cluster.metadata.keyspaces:
        return (f"keyspace {asked.into} does not exist (INTO names where the scratch tables go): make it "
                f"with {_create_keyspace(ctx.cluster.metadata, asked.into)}")
    if asked.rows < MIN_VALUES:
        return f"ROWS {asked.rows}: at least {MIN_VALUES} values are needed to measure"
    if not 1 <= asked.concurrency <= MAX_CONCURRENCY:
        return f"CONCURRENCY {asked.concurrency}: from 1 to {MAX_CONCURRENCY}"
    return None


def _create_keyspace(metadata: Any, name: str) -> str:
    """The statement that makes keyspace `name` for scratch tables: one replica in each data
    center the driver's cluster metadata sees (NetworkTopologyStrategy), or SimpleStrategy when it
    names none."""
    from cassandra.metadata import protect_name

    centers = sorted({host.datacenter for host in metadata.all_hosts() if host.datacenter})
    replication = ", ".join(["'class': 'NetworkTopologyStrategy'", *(f"'{dc}': 1" for dc in centers)]) \
        if centers else "'class': 'SimpleStrategy', 'replication_factor': 1"
    return f"CREATE KEYSPACE {protect_name(name)} WITH replication = {{{replication}}};"


# ------------------------------------------------------------------------------------- values


def _from_files(ctx: ReadContext, asked: TrialRequest, mode: str, cap: int) -> TakenValues | None:
    from cqlsh_ext.insight.trial.latency import take_value
    from cqlsh_ext.payload.engine import ValueEngine

    engine = ValueEngine(mode, cap)
    from cqlsh_ext.insight.value_files import read_values
    from cqlsh_ext.scanning.ring import server_partitioner

    assert asked.path is not None
    try:
        read = read_values(asked.path, asked.rows)
    except (OSError, ValueError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        refuse(ctx, f"cannot read {asked.path}: {reason}")
        return None
    values = TakenValues([], "files", asked.path)
    for data in read:
        _keep(values, take_value(data, engine))
    values.sample = {"method": "files", "path": asked.path, "values_read": len(read),
                     "text": f"{len(values.taken):,} of {len(read):,} values read from {asked.path}"}
    values.partitioner = server_partitioner(ctx.session)
    return values


def _keep(values: TakenValues, taken: Value | str) -> None:
    if isinstance(taken, str):
        values.skipped[taken] = values.skipped.get(taken, 0) + 1
    else:
        values.taken.append(taken)


def _from_column(ctx: ReadContext, asked: TrialRequest, mode: str, cap: int) -> TakenValues | None:
    from cqlsh_ext.insight.trial.latency import column_kind

    ks, table, meta = side.named_table(ctx, asked.keyspace, asked.table)
    column = asked.column
    if not ks or not table or not column:
        refuse(ctx, "name the column as keyspace.table.column (or USE a keyspace first)")
        return None
    if meta is None:
        refuse(ctx, f"table {ks}.{table} not found")
        return None
    found = meta.columns.get(column)
    if found is None:
        refuse(ctx, f"{ks}.{table} has no column {column}")
        return None
    kind = column_kind(str(found.cql_type))
    if kind is None:
        refuse(ctx, f"{ks}.{table}.{column} is {found.cql_type}: the trial takes blob and text columns")
        return None
    return _sample(ctx, asked, ks, table, column, kind, [c.name for c in meta.partition_key], mode, cap)


class _Collector:
    """What the sampler fills (an Aggregate and its Totals): the values that can be measured, and
    why the others cannot; `rows` counts the first only, so the sampler stops when there are enough
    of them. Each slice is read into a fresh() one and merged in launch order (scanning.sample)."""

    def __init__(self, mode: str, cap: int, values: TakenValues) -> None:
        from cqlsh_ext.payload.engine import ValueEngine

        self.mode, self.cap, self.values = mode, cap, values
        self.engine = ValueEngine(mode, cap)
        self.rows = 0
        self.bytes = 0
        self.interrupted = False
        self.error: str | None = None
        self.scan = ""

    def fresh(self) -> _Collector:
        return _Collector(self.mode, self.cap, TakenValues([], self.values.column_type, self.values.source))

    def set_columns(self, names: Any, types: Any) -> None:
        """The one column read: nothing to look up."""

    def add_rows(self, rows: Any) -> None:
        from cqlsh_ext.insight.trial.latency import take_value

        for row in rows:
            stored = row[0]
            if stored is None:
                self.values.skipped["null"] = self.values.skipped.get("null", 0) + 1
                continue
            taken = take_value(stored, self.engine)
            _keep(self.values, taken)
            if not isinstance(taken, str):
                self.rows += 1
                self.bytes += len(taken.payload) + len(taken.stored)

    def merge(self, other: _Collector) -> None:
        self.values.taken.extend(other.values.taken)
        for reason, count in other.values.skipped.items():
            self.values.skipped[reason] = self.values.skipped.get(reason, 0) + count
        self.rows += other.rows
        self.bytes += other.bytes

    def snapshot(self) -> dict[tuple[str, ...], int]:
        return {("rows",): self.rows}

    def figures(self) -> list[Any]:
        """None: the values are taken by count (SAMPLE n), never to a precision."""
        return []

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a worker process sends its part back): the engine stays behind."""
        return {**self.__dict__, "engine": None}


def _sample(ctx: ReadContext, asked: TrialRequest, ks: str, table: str, column: str, kind: str,
            partition_key: list[str], mode: str, cap: int) -> TakenValues | None:
    """At least asked.rows values of the column from random token-range slices (the sampler of
    COMPRESSION STATS SAMPLE: it finishes the slices it started), then exactly asked.rows of them
    chosen at random; fewer when the table holds fewer."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.insight.trial.latency import SAMPLE_BYTES
    from cqlsh_ext.scanning.ring import RingError
    from cqlsh_ext.scanning.sample import SamplePlan, SliceSampler
    from cqlsh_ext.scanning.scan import error_text, progress_for, scanner_for

    source = f"{ks}.{table}.{column}"
    values = TakenValues([], kind, source)
    collector = _Collector(mode, cap, values)
    try:
        sampler = SliceSampler.of_table(ctx.session, collector, SamplePlan(rows=asked.rows), ks, table,
                                        partition_key)
    except RingError as err:
        refuse(ctx, f"cannot sample {ks}.{table}: {err}")
        return None
    values.partitioner = sampler.ring.partitioner
    query = f"SELECT {protect_name(column)} FROM {protect_name(ks)}.{protect_name(table)}"
    progress = progress_for(f"{LABEL} {source}: taking the sample", True)
    scanner = scanner_for(ctx, sampler.spec(query, partition_key), progress)
    sampler.read(scanner, enough=lambda: sampler.enough or collector.bytes >= SAMPLE_BYTES)
    if scanner.interrupted:
        refuse(ctx, "INTERRUPTED (Ctrl-C) while taking the sample; nothing was written")
        return None
    if scanner.error is not None and not values.taken:
        refuse(ctx, f"reading {ks}.{table}: {error_text(scanner.error)}")
        return None
    read = len(values.taken)
    if read > asked.rows:  # exactly ROWS of what the sampler gave: it finishes the slices it started
        values.taken = sampler.rng.sample(values.taken, asked.rows)
    stopped = "the byte limit" if collector.bytes >= SAMPLE_BYTES else sampler.stopped
    values.sample = {
        "method": "random token-range slices (COMPRESSION STATS SAMPLE's sampler)",
        "values_read": read,
        "slices_read": len(sampler.done),
        "slices": sampler.slices,
        "seed": sampler.seed,
        "stopped": stopped,
        "error": error_text(scanner.error) if scanner.error is not None else None,
        "text": f"{len(values.taken):,} of {read:,} read in {len(sampler.done):,} random token-range "
                f"slices of {sampler.slices:,} (seed {sampler.seed}; stopped: {stopped})"}
    if read < asked.rows:
        values.sample["text"] += f"; the table holds fewer than ROWS {asked.rows:,}"
    return values


# ------------------------------------------------------------------------------------- measuring


def _measure(ctx: ReadContext, asked: TrialRequest, values: TakenValues, variants: list[Any],
             cap: int) -> ReportAnswer | None:
    from cassandra import ConsistencyLevel

    from cqlsh_ext.insight import report as text
    from cqlsh_ext.insight.trial.latency import WARMUP_ROWS, Trial, units
    from cqlsh_ext.insight.trial.report import TrialReport, VariantResult
    from cqlsh_ext.scanning.cost import accepted, on_keyspaces, pricing
    from cqlsh_ext.scanning.scan import progress_for

    assert asked.into is not None
    consistency = ConsistencyLevel.value_to_name.get(ctx.consistency, str(ctx.consistency))
    priced = pricing(ctx, values.partitioner)
    results = []
    for variant in variants:
        wcu, rcu = units(variant.values)
        results.append(VariantResult(variant.name, "", len(variant.values), sum(map(len, variant.values)),
                                     sum(len(v.payload) for v in values.taken), wcu, rcu))
    report = TrialReport(values.source, values.column_type, asked.into, asked.concurrency, consistency,
                         results, sample=values.sample, skipped=values.skipped, pricing=priced)
    keyspaces = on_keyspaces(ctx, values.partitioner)
    if keyspaces:
        warm = min(WARMUP_ROWS, report.rows)
        total_wcu, total_rcu = 0.0, 0.0
        for variant, result in zip(variants, results, strict=True):
            warm_wcu, warm_rcu = units(variant.values[:warm])
            total_wcu += result.wcu + warm_wcu
            total_rcu += priced.reads(result.rcu + warm_rcu)
        report.units_estimate = {"wcu": total_wcu, "rcu": total_rcu}
        what = (f"{LABEL}: writing and reading {report.rows:,} rows of {len(variants)} variants (and a "
                f"warm-up) in {asked.into} uses about {text.count(round(total_wcu))} write and "
                f"{text.count(round(total_rcu))} read capacity units (estimate, at {consistency}); Amazon "
                "Keyspaces bills them.")
        if not asked.confirm and not accepted(ctx, what, "Add CONFIRM to run it from a script.",
                                              "Run the trial? [y/N] ", f"{LABEL}: not run."):
            return None
    progress = progress_for(f"{LABEL} {values.source}", True)
    if progress is not None:
        progress.paused = lambda: bool(getattr(sys.stdout, "paging", False))
    run = Trial(ctx.session, asked.into, variants, asked.concurrency, ctx.consistency,
                ctx.session.default_timeout, keyspaces=keyspaces, keep=asked.keep, cap=cap, progress=progress)
    report.keyspaces = keyspaces
    run.run(report)
    measured = any(r.writes.ok or r.writes.failures for r in report.variants)
    if not measured and (report.error or report.interrupted):
        why = report.error or "INTERRUPTED (Ctrl-C)"
        tables = "kept" if report.kept else "dropped"
        refuse(ctx, f"{why}; nothing was measured (scratch tables {tables})")
        for note in report.notes:
            if note.startswith("could not drop"):
                refuse(ctx, note)
        return None
    return side.report("COMPRESSION TRIAL", report.to_json, report.render)
