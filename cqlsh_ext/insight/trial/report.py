"""COMPRESSION TRIAL's figures and report: per variant, the stored bytes, the writes and reads
(operations per second, latency percentiles from a histogram made for latency, failures, retries),
the client's decode time and Amazon Keyspaces' units, each against the uncompressed variant.

The measuring is insight.trial.measure's; this module only counts and shows. The text report fits 80
columns; `to_json()` is the same figures as one object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.common.text import fit
from cqlsh_ext.insight import report

#: Latencies are recorded in microseconds, from 1 us to an hour, to 3 significant digits (the
#: histogram's relative error is then at most 0.1 %); a longer one is recorded as an hour.
LATENCY_MAX_US = 3_600_000_000
LATENCY_DIGITS = 3
#: The percentiles shown, by their JSON key.
PERCENTILES = (("median", 50.0), ("p95", 95.0), ("p99", 99.0), ("p99_9", 99.9))
#: The variant every change is measured against, and the stored values as they are.
BASELINE, STORED = "uncompressed", "stored"
#: Below this many operations per variant, p99.9 and max are the slowest one or two: said so.
FEW_OPERATIONS = 1000
#: The text report's width: its tables are narrower, its prose lines are wrapped to it.
WIDTH = 80


class Phase:
    """One variant's writes, or its reads: latencies of the operations that succeeded (the
    successful attempt's own time, from sending the request to its answer), and counts."""

    def __init__(self) -> None:
        from hdrh.histogram import HdrHistogram  # on first use: the shell starts without it

        self.latency = HdrHistogram(1, LATENCY_MAX_US, LATENCY_DIGITS)
        self.ok = 0
        self.timed_out = 0
        #: Operations that failed, by reason (after their retries ran out, or read back wrong).
        self.failed: dict[str, int] = {}
        #: Attempts retried, by reason (overload, throttling, timeouts).
        self.retried: dict[str, int] = {}
        #: Wall time of this variant's turns, summed: operations per second are ok / seconds.
        self.seconds = 0.0

    def record(self, micros: int) -> None:
        self.latency.record_value(min(max(1, micros), LATENCY_MAX_US))
        self.ok += 1

    def fail(self, reason: str) -> None:
        self.failed[reason] = self.failed.get(reason, 0) + 1

    def retry(self, reason: str) -> None:
        self.retried[reason] = self.retried.get(reason, 0) + 1

    @property
    def failures(self) -> int:
        return self.timed_out + sum(self.failed.values())

    @property
    def ops_per_second(self) -> float | None:
        return self.ok / self.seconds if self.ok and self.seconds > 0 else None

    def latency_ms(self) -> dict[str, float | None]:
        """Median, p95, p99, p99.9 and max in milliseconds (None without an operation)."""
        if not self.ok:
            return {key: None for key in (*dict(PERCENTILES), "max")}
        out: dict[str, float | None] = {
            key: self.latency.get_value_at_percentile(pct) / 1000 for key, pct in PERCENTILES}
        out["max"] = self.latency.get_max_value() / 1000
        return out

    def to_json(self) -> dict[str, Any]:
        rate = self.ops_per_second
        return {
            "ok": self.ok,
            "failed": dict(self.failed),
            "timed_out": self.timed_out,
            "retried": dict(self.retried),
            "seconds": round(self.seconds, 4),
            "ops_per_s": round(rate, 1) if rate is not None else None,
            "latency_ms": {k: (round(v, 3) if v is not None else None) for k, v in self.latency_ms().items()},
        }


@dataclass
class VariantResult:
    """One variant: its values' sizes and units (known before the cluster is touched) and what the
    cluster and the client did with them."""

    name: str
    table: str
    values: int
    stored_bytes: int
    payload_bytes: int
    #: Keyspaces units over the values, summed: write units, read units at the session's consistency.
    wcu: int
    rcu: float
    writes: Phase = field(default_factory=Phase)
    reads: Phase = field(default_factory=Phase)
    #: Mean decode time per value in microseconds; None when there is nothing to decode.
    decode_us: float | None = None

    @property
    def mean_bytes(self) -> float:
        return self.stored_bytes / self.values if self.values else 0.0

    @property
    def ratio(self) -> float | None:
        return self.payload_bytes / self.stored_bytes if self.stored_bytes else None

    def per_row(self, units: float) -> float:
        return units / self.values if self.values else 0.0

    def figures(self) -> dict[str, Any]:
        """The figures a change is computed for, by their JSON names."""
        return {
            "stored_bytes_mean": self.mean_bytes,
            "stored_bytes_total": self.stored_bytes,
            "decode_us_per_value": self.decode_us,
            "wcu_per_row": self.per_row(self.wcu),
            "rcu_per_row": self.per_row(self.rcu),
            "writes": {"ops_per_s": self.writes.ops_per_second, **self.writes.latency_ms()},
            "reads": {"ops_per_s": self.reads.ops_per_second, **self.reads.latency_ms()},
        }


def change(value: float | None, base: float | None) -> float | None:
    """value against base as a share (-0.195: 19.5 % lower); None when either is missing or base is 0."""
    if value is None or base is None or base == 0:
        return None
    return round(value / base - 1, 4)


def _changes(figures: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    return {key: _changes(value, base[key]) if isinstance(value, dict) else change(value, base[key])
            for key, value in figures.items()}


@dataclass
class TrialReport:
    source: str
    column_type: str
    into: str
    concurrency: int
    consistency: str
    variants: list[VariantResult]
    rounds: int = 0
    warmup_rows: int = 0
    keyspaces: bool = False
    kept: bool = False
    elapsed: float = 0.0
    interrupted: bool = False
    error: str | None = None
    #: How the values were taken (the sampler's figures, or the files read).
    sample: dict[str, Any] = field(default_factory=dict)
    #: Values left out, by reason (not decodable, cut at the output cap, null).
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Keyspaces: the wait for ACTIVE (keyspaces.tables.ActiveWait.to_json()).
    active_wait: dict[str, Any] | None = None
    #: The units the whole trial was estimated to use before it ran (warm-up included).
    units_estimate: dict[str, float] | None = None

    @property
    def rows(self) -> int:
        return self.variants[0].values if self.variants else 0

    def baseline(self) -> VariantResult | None:
        return next((v for v in self.variants if v.name == BASELINE), None)

    def to_json(self) -> dict[str, Any]:
        base = self.baseline()
        base_figures = base.figures() if base is not None else None
        variants = []
        for v in self.variants:
            figures = v.figures()
            ratio = v.ratio
            variants.append({
                "variant": v.name,
                "table": v.table,
                "values": v.values,
                "stored_bytes": {"mean": round(v.mean_bytes, 1), "total": v.stored_bytes,
                                 "ratio": round(ratio, 4) if ratio is not None else None},
                "payload_bytes": v.payload_bytes,
                "decode_us_per_value": round(v.decode_us, 3) if v.decode_us is not None else None,
                "keyspaces": {"wcu_per_row": round(v.per_row(v.wcu), 3),
                              "rcu_per_row": round(v.per_row(v.rcu), 3)},
                "writes": v.writes.to_json(),
                "reads": v.reads.to_json(),
                "change": (_changes(figures, base_figures)
                           if base_figures is not None and v is not base else None),
            })
        return {
            "trial": {
                "source": self.source,
                "column_type": self.column_type,
                "into": self.into,
                "rows": self.rows,
                "concurrency": self.concurrency,
                "consistency": self.consistency,
                "rounds": self.rounds,
                "warmup_rows": self.warmup_rows,
                "keyspaces": self.keyspaces,
                "tables_kept": self.kept,
                "elapsed_s": round(self.elapsed, 3),
                "complete": not self.interrupted and self.error is None,
                "interrupted": self.interrupted,
                "error": self.error,
                "sample": self.sample,
                "skipped": self.skipped,
                "notes": self.notes,
                "active_wait": self.active_wait,
                "units_estimate": self.units_estimate,
                "baseline": BASELINE,
            },
            "variants": variants,
        }

    # ------------------------------------------------------------------------------ text
    def render(self) -> list[str]:
        kept = "kept" if self.kept else "dropped"
        lines = [
            f"COMPRESSION TRIAL {self.source}: {report.count(self.rows)} values ({self.column_type}), "
            f"{len(self.variants)} variants, {self.elapsed:.1f} s",
        ]
        if self.sample.get("text"):
            lines.append(f"  values: {self.sample['text']}")
        if self.skipped:
            lines.append("  left out: " + ", ".join(f"{n:,} {why}" for why, n in self.skipped.items()))
        lines.append(f"  scratch tables in {self.into} ({kept}); concurrency {self.concurrency}, "
                     f"consistency {self.consistency}, {self.rounds} round{'s' if self.rounds != 1 else ''} "
                     "after a warm-up of "
                     f"{self.warmup_rows} rows per variant")
        if self.active_wait is not None:
            lines.append(f"  Amazon Keyspaces: tables ACTIVE after {self.active_wait['seconds']:.1f} s "
                         f"({self.active_wait['polls']} status reads)")
        if self.kept:
            lines.append("  tables: " + ", ".join(f"{v.name} {v.table}" for v in self.variants))
        if self.interrupted:
            lines.append("  INTERRUPTED: the figures are those measured before Ctrl-C.")
        if self.error:
            lines.append(f"  STOPPED BY AN ERROR: {self.error}; the figures are those measured before it.")
        lines.extend(f"  note: {note}" for note in self.notes)
        base = self.baseline()
        ordered = ([base] if base is not None else []) + [v for v in self.variants if v is not base]
        lines.append("")
        lines.extend(self._sizes(ordered, base))
        for title, phase_of in (("Writes", _writes), ("Reads", _reads)):
            lines.append("")
            lines.extend(self._latencies(title, ordered, base, phase_of))
        lines.append("")
        lines.extend(self._failures())
        if base is not None:
            lines.append(f"  Changes (+/- %) are against {BASELINE}: lower is better for bytes, units, "
                         "latency and decode time, higher for ops/s.")
        if self.units_estimate is not None:
            lines.append(f"  Amazon Keyspaces units for the whole trial (estimated before it ran, warm-up "
                         f"included): {report.count(round(self.units_estimate['wcu']))} write, "
                         f"{report.count(round(self.units_estimate['rcu']))} read.")
        return list(fit(lines, WIDTH))

    def _sizes(self, ordered: list[VariantResult], base: VariantResult | None) -> list[str]:
        header = ["Stored bytes", "mean", "total", "ratio", "decode", "WCU/row", "RCU/row"]
        rows: list[list[str]] = []
        for v in ordered:
            rows.append([f"  {v.name}", report.sized(round(v.mean_bytes)), report.sized(v.stored_bytes),
                         report.ratio(v.ratio), _micros(v.decode_us), f"{v.per_row(v.wcu):.2f}",
                         f"{v.per_row(v.rcu):.2f}"])
            if base is not None and v is not base:
                rows.append(["", _pct(change(v.mean_bytes, base.mean_bytes)),
                             _pct(change(v.stored_bytes, base.stored_bytes)), "", "",
                             _pct(change(v.per_row(v.wcu), base.per_row(base.wcu))),
                             _pct(change(v.per_row(v.rcu), base.per_row(base.rcu)))])
        return report.table(rows, header, right=range(1, 7), indent=0)

    def _latencies(self, title: str, ordered: list[VariantResult], base: VariantResult | None,
                   phase_of: Callable[[VariantResult], Phase]) -> list[str]:
        keys = [k for k, _ in PERCENTILES] + ["max"]
        header = [f"{title} (ms)", "ops/s", "median", "p95", "p99", "p99.9", "max", "failed"]
        rows: list[list[str]] = []
        for v in ordered:
            phase = phase_of(v)
            latency = phase.latency_ms()
            rate = phase.ops_per_second
            rows.append([f"  {v.name}", f"{rate:,.0f}" if rate is not None else "-",
                         *(_ms(latency[k]) for k in keys), report.count(phase.failures)])
            if base is not None and v is not base:
                base_phase = phase_of(base)
                base_latency = base_phase.latency_ms()
                rows.append(["", _pct(change(rate, base_phase.ops_per_second)),
                             *(_pct(change(latency[k], base_latency[k])) for k in keys), ""])
        return report.table(rows, header, right=range(1, 8), indent=0)

    def _failures(self) -> list[str]:
        lines = []
        for v in self.variants:
            for what, phase in (("writes", v.writes), ("reads", v.reads)):
                parts = [f"{n:,} {why}" for why, n in phase.failed.items()]
                if phase.timed_out:
                    parts.insert(0, f"{phase.timed_out:,} timed out")
                if parts:
                    lines.append(f"  FAILED: {v.name} {what}: {', '.join(parts)}")
                if phase.retried:
                    tries = ", ".join(f"{why} {n:,}" for why, n in phase.retried.items())
                    lines.append(f"  retried: {v.name} {what}: {sum(phase.retried.values()):,} ({tries})")
        if not lines:
            lines.append("  No operation failed, timed out or was retried.")
        return lines


def _writes(v: VariantResult) -> Phase:
    return v.writes


def _reads(v: VariantResult) -> Phase:
    return v.reads


def _pct(share: float | None) -> str:
    """'+3.2 %', '-64.1 %', '+180 %'; '' when there is no change to show."""
    if share is None:
        return ""
    value = 100 * share
    return f"{value:+.1f} %" if abs(value) < 100 else f"{value:+,.0f} %"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 10:
        return f"{value:.2f}"
    return f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _micros(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} us" if value < 1000 else f"{value / 1000:.2f} ms"
