"""COMPRESSION TRIAL's figures and report: per variant, the stored bytes, the writes and reads
(operations per second, latency percentiles from a histogram made for latency, failures, retries),
the client's decode time and Amazon Keyspaces' units, each against the uncompressed variant, with
how much of each latency change is the cluster's noise (insight.trial.noise, from the rounds).

The report opens with its verdict and a summary line per codec; the text is laid out for the
screen when it is written (common.text.fit); `to_json()` is the same figures as one object.
The measuring is insight.trial.latency's; this module only counts and shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.common.text import Line, plural
from cqlsh_ext.insight import report, verdict
from cqlsh_ext.insight.trial import noise
from cqlsh_ext.scanning.capacity import Pricing

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
#: The percentiles whose changes are tested against the rounds' noise (p99.9 and max of a round
#: are its slowest operation or two: no interval).
TESTED = ("median", "p95", "p99")


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
        #: Per round (insight.trial.noise): the latencies in microseconds, and the turn's seconds.
        self.rounds: list[list[int]] = []
        self.round_seconds: list[float] = []
        self._round: int | None = None
        self._cache: dict[tuple[Any, ...], Any] = {}

    def start_round(self, index: int) -> None:
        """Operations recorded from now on belong to round `index` (from 0)."""
        while len(self.rounds) <= index:
            self.rounds.append([])
            self.round_seconds.append(0.0)
        self._round = index

    def add_seconds(self, seconds: float) -> None:
        """A turn's wall time, to the phase and to its round."""
        self.seconds += seconds
        if self._round is not None:
            self.round_seconds[self._round] += seconds

    def record(self, micros: int) -> None:
        value = min(max(1, micros), LATENCY_MAX_US)
        self.latency.record_value(value)
        self.ok += 1
        if self._round is not None:
            self.rounds[self._round].append(value)

    def round_rates(self) -> list[tuple[int, float]]:
        """(operations, seconds) per round."""
        return [(len(r), s) for r, s in zip(self.rounds, self.round_seconds, strict=True)]

    def against(self, base: Phase) -> dict[str, noise.Difference]:
        """The changes tested against the noise, by JSON key: ops/s and the TESTED percentiles
        (worked out once per count of operations on either side)."""
        key = ("against", id(base), self.ok, base.ok, self.seconds, base.seconds)
        if key not in self._cache:
            self._cache[key] = self._against(base)
        return dict(self._cache[key])

    def _against(self, base: Phase) -> dict[str, noise.Difference]:
        mine, theirs = self.latency_ms(), base.latency_ms()
        out = {"ops_per_s": noise.rate_difference(self.round_rates(), base.round_rates(),
                                                  self.ops_per_second, base.ops_per_second)}
        for key, pct in PERCENTILES:
            if key in TESTED:
                out[key] = noise.latency_difference(self.rounds, base.rounds, pct, mine[key], theirs[key])
        return out

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
        # A report reads them many times: worked out once per count of operations (the histogram's
        # walk is long).
        key = ("latency", self.ok)
        if key not in self._cache:
            out: dict[str, float | None] = {
                k: self.latency.get_value_at_percentile(pct) / 1000 for k, pct in PERCENTILES}
            out["max"] = self.latency.get_max_value() / 1000
            self._cache[key] = out
        return dict(self._cache[key])

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
            "rounds": [{"ok": len(r), "seconds": round(sec, 4),
                        "latency_ms": {k: round(noise.percentile(sorted(r), pct) / 1000, 3) if r else None
                                       for k, pct in PERCENTILES if k in TESTED}}
                       for r, sec in zip(self.rounds, self.round_seconds, strict=True)]}


@dataclass
class VariantResult:
    """One variant: its values' sizes and units (known before the cluster is touched) and what the
    cluster and the client did with them."""

    name: str
    table: str
    values: int
    stored_bytes: int
    payload_bytes: int
    #: Keyspaces units over the values, summed: write units, read units at LOCAL_QUORUM (the
    #: report's Pricing prices them at the session's consistency).
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

    def figures(self, pricing: Pricing) -> dict[str, Any]:
        """The figures a change is computed for, by their JSON names."""
        return {"stored_bytes_mean": self.mean_bytes, "stored_bytes_total": self.stored_bytes,
                "decode_us_per_value": self.decode_us, "wcu_per_row": self.per_row(self.wcu),
                "rcu_per_row": self.per_row(pricing.reads(self.rcu)),
                "writes": {"ops_per_s": self.writes.ops_per_second, **self.writes.latency_ms()},
                "reads": {"ops_per_s": self.reads.ops_per_second, **self.reads.latency_ms()}}


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
    #: How units are priced (at the session's consistency, which the reads use) and what the user
    #: pays; None: at `consistency`, on Keyspaces when `keyspaces`.
    pricing: Pricing | None = None

    @property
    def rows(self) -> int:
        return self.variants[0].values if self.variants else 0

    @property
    def priced(self) -> Pricing:
        return self.pricing or Pricing(self.consistency, self.keyspaces)

    def baseline(self) -> VariantResult | None:
        return next((v for v in self.variants if v.name == BASELINE), None)

    @property
    def complete(self) -> bool:
        return not self.interrupted and self.error is None

    def rounds_run(self) -> int:
        """The rounds in which operations were measured: all of them unless the run was stopped."""
        return max((sum(1 for r in phase.rounds if r) for v in self.variants
                    for phase in (v.writes, v.reads)), default=0)

    def _done(self, phase_of: Callable[[VariantResult], Phase]) -> int:
        """A phase's operations, over every variant: those that succeeded and those that failed."""
        return sum(phase_of(v).ok + phase_of(v).failures for v in self.variants)

    def measured(self) -> str:
        """What a run that stopped measured, in words: '577 of 1,500 writes and none of the 1,500
        reads, in 1 of 4 rounds'."""
        planned = self.rows * len(self.variants)
        said = []
        for what, phase_of in (("writes", _writes), ("reads", _reads)):
            done = self._done(phase_of)
            said.append(f"{report.count(done) if done else 'none'} of the {report.count(planned)} {what}")
        return f"{' and '.join(said)} measured, in {self.rounds_run()} of {plural(self.rounds, 'round')}"

    def all_notes(self) -> list[str]:
        """The notes, and what the operations measured allow: below FEW_OPERATIONS per variant and
        phase, p99.9 and max are its slowest one or two."""
        counts = [phase.ok for v in self.variants for phase in (v.writes, v.reads) if phase.ok]
        few = min(counts, default=0)
        if counts and few < FEW_OPERATIONS:
            return [*self.notes, f"{few:,} operations per variant and phase: p99.9 and max are its slowest "
                    "one or two"]
        return list(self.notes)

    def noise(self, v: VariantResult) -> dict[str, dict[str, noise.Difference]] | None:
        """`v`'s changes against the baseline tested against the rounds' noise, per phase."""
        base = self.baseline()
        if base is None or v is base:
            return None
        return {"writes": v.writes.against(base.writes), "reads": v.reads.against(base.reads)}

    def to_json(self) -> dict[str, Any]:
        base = self.baseline()
        pricing = self.priced
        base_figures = base.figures(pricing) if base is not None else None
        variants = []
        for v in self.variants:
            figures = v.figures(pricing)
            ratio = v.ratio
            tested = self.noise(v)
            variants.append({
                "variant": v.name,
                "table": v.table,
                "values": v.values,
                "stored_bytes": {"mean": round(v.mean_bytes, 1), "total": v.stored_bytes,
                                 "ratio": round(ratio, 4) if ratio is not None else None},
                "payload_bytes": v.payload_bytes,
                "decode_us_per_value": round(v.decode_us, 3) if v.decode_us is not None else None,
                "keyspaces": {"wcu_per_row": round(v.per_row(v.wcu), 3),
                              "rcu_per_row": round(v.per_row(pricing.reads(v.rcu)), 3),
                              "consistency": pricing.consistency},
                "writes": v.writes.to_json(),
                "reads": v.reads.to_json(),
                "change": (_changes(figures, base_figures)
                           if base_figures is not None and v is not base else None),
                "noise": ({phase: {k: d.to_json() for k, d in found.items()}
                           for phase, found in tested.items()} if tested is not None else None),
                "summary": self._summary(v) if tested is not None else None})
        return {
            "trial": {"source": self.source, "column_type": self.column_type, "into": self.into,
                      "rows": self.rows, "concurrency": self.concurrency, "consistency": self.consistency,
                      "rounds": self.rounds, "rounds_run": self.rounds_run(), "warmup_rows": self.warmup_rows,
                      "keyspaces": self.keyspaces, "tables_kept": self.kept,
                      "elapsed_s": round(self.elapsed, 3), "complete": self.complete,
                      "interrupted": self.interrupted, "error": self.error, "sample": self.sample,
                      "skipped": self.skipped, "notes": self.all_notes(), "active_wait": self.active_wait,
                      "units_estimate": self.units_estimate, "baseline": BASELINE,
                      "pricing": pricing.to_json(), "verdict": self.verdict()},
            "variants": variants}

    # ------------------------------------------------------------------------------ the answer
    def _change(self, v: VariantResult, base: VariantResult) -> verdict.Change:
        return verdict.Change((base.wcu, v.wcu), (base.rcu, v.rcu), (base.stored_bytes, v.stored_bytes))

    def verdict(self) -> str:
        """The report's first answer: the variant that saves the most of what the user pays (bytes
        and units are exact for the values taken), and what it did to latency, told apart from the
        rounds' noise."""
        base = self.baseline()
        others = [v for v in self.variants if v is not base and v.values]
        if base is None or not others or not base.values:
            return f"{verdict.LEAD} nothing to compare against: no uncompressed variant was measured."
        pricing = self.priced
        best = max(others, key=lambda v: (*self._change(v, base).paid(pricing), -v.mean_bytes))
        moved = self._change(best, base)
        if moved.paid_saving(pricing) < verdict.NOTHING and moved.storage_saving < verdict.NOTHING:
            return (f"{verdict.LEAD} no variant saves anything against uncompressed here; "
                    f"{self._latency(best, ('median', 'p99'))}.")
        saves = verdict.saves(moved, pricing)
        if pricing.keyspaces and not moved.saves_units:
            floor = verdict.floor_reason(base.values, base.wcu, base.rcu, "value")
            saves += f" ({floor})" if floor else ""
        return (f"{verdict.LEAD} {best.name} {saves}, the most of the variants; "
                f"{self._latency(best, ('median', 'p99'))}.")

    def _latency(self, v: VariantResult, keys: tuple[str, ...] = TESTED) -> str:
        """What `v` did to latency against uncompressed, in words: the measurable changes of the
        percentiles `keys` only."""
        tested = self.noise(v)
        base = self.baseline()
        if tested is None or base is None:
            return "latency not compared"
        # A phase a stopped run never reached (or reached for one side only) is no comparison.
        phases = {"writes": _writes, "reads": _reads}
        tested = {phase: found for phase, found in tested.items()
                  if phases[phase](v).ok and phases[phase](base).ok}
        unmeasured = [phase for phase in phases if phase not in tested]
        if not tested:
            return "latency not measured"
        left = f"; {' and '.join(unmeasured)} not measured" if unmeasured else ""
        parts = []
        for phase, found in tested.items():
            told = [f"{key.replace('median', 'p50')} {d.text()}" for key, d in found.items()
                    if key in keys and d.outcome in (noise.HIGHER, noise.LOWER)]
            if told:
                parts.append(f"{phase} {', '.join(told)}")
        used = max(d.rounds for found in tested.values() for d in found.values())
        rounds = plural(used, "round")
        if any(d.outcome != noise.UNKNOWN for found in tested.values() for d in found.values()):
            if not parts:
                return f"latency: no measurable difference from uncompressed ({rounds}){left}"
            return f"latency against uncompressed: {'; '.join(parts)}{left}"
        return f"latency: too few rounds or operations to tell a difference from the noise ({rounds}){left}"

    def _summary(self, v: VariantResult) -> str:
        """One line for a variant: what it saves and what it did to latency."""
        base = self.baseline()
        assert base is not None
        moved = self._change(v, base)
        parts = [f"{noise.signed(-moved.storage_saving)} bytes"]
        if self.priced.keyspaces or moved.saves_units:
            parts += [f"{noise.signed(-moved.wcu_saving)} WCU", f"{noise.signed(-moved.rcu_saving)} RCU"]
        return f"{', '.join(parts)}; {self._latency(v)}"

    # ------------------------------------------------------------------------------ text
    def render(self) -> list[Line]:
        kept = "kept" if self.kept else "dropped"
        pricing = self.priced
        lines: list[Line] = [
            f"COMPRESSION TRIAL {self.source}: {report.count(self.rows)} values ({self.column_type}), "
            f"{len(self.variants)} variants, {self.elapsed:.1f} s"]
        # How the run ended comes before what it concludes, and says what was measured: the verdict
        # and the tables rest on that much.
        if self.interrupted:
            lines.append(f"  INTERRUPTED (Ctrl-C): {self.measured()}; the figures are those.")
        if self.error:
            lines.append(f"  STOPPED BY AN ERROR: {self.error}; {self.measured()}; the figures are those.")
        base = self.baseline()
        ordered = ([base] if base is not None else []) + [v for v in self.variants if v is not base]
        if base is not None and self.rows:
            lines.append(self.verdict())
            lines.append(report.table([[v.name, self._summary(v)] for v in ordered if v is not base]))
        lines.append("")
        if self.sample.get("text"):
            lines.append(f"  values: {self.sample['text']}")
        if self.skipped:
            lines.append("  left out: " + ", ".join(f"{n:,} {why}" for why, n in self.skipped.items()))
        rounds = plural(self.rounds, "round") if self.complete else \
            f"{self.rounds_run()} of {plural(self.rounds, 'round')} run"
        lines.append(f"  scratch tables in {self.into} ({kept}); concurrency {self.concurrency}, "
                     f"consistency {self.consistency}, {rounds} after a warm-up of {self.warmup_rows} rows "
                     "per variant")
        if self.active_wait is not None:
            lines.append(f"  Amazon Keyspaces: tables ACTIVE after {self.active_wait['seconds']:.1f} s "
                         f"({self.active_wait['polls']} status reads)")
        if self.kept:
            lines.append("  tables: " + ", ".join(f"{v.name} {v.table}" for v in self.variants))
        lines.extend(f"  note: {note}" for note in self.all_notes())
        lines.append("")
        lines.append(self._sizes(ordered, base, pricing))
        lines.extend(self._chart(ordered, base))
        for title, phase_of in (("Writes", _writes), ("Reads", _reads)):
            lines.append("")
            if self._done(phase_of):
                lines.append(self._latencies(title, ordered, base, phase_of))
            else:  # never reached: no table of dashes
                stopped = "Ctrl-C" if self.interrupted else "the error" if self.error else "the end"
                lines.append(f"  {title}: none measured ({stopped} came before them)")
        lines.append("")
        lines.extend(self._failures())
        run = self.rounds_run()
        if base is not None:
            lines.append(f"  Changes (+/- %) are against {BASELINE}: lower is better for bytes, units, "
                         "latency and decode time, higher for ops/s.")
            if run >= noise.MIN_ROUNDS:
                lines.append(
                    f"  Those of ops/s, median, p95 and p99 are the mean of the {run} rounds' own "
                    "changes, tested against their spread: ~ is no measurable difference (the 95 % interval "
                    "holds 0). A change in parentheses could not be tested: the whole run's.")
            elif run:
                more = "" if not self.complete else " (at least " \
                    f"{noise.MIN_ROUNDS}: more ROWS, or a lower CONCURRENCY)"
                lines.append(f"  {plural(run, 'round')} run: too few to tell a change from the noise{more}; "
                             "the changes are the whole run's, untested.")
        if self.units_estimate is not None:
            lines.append(f"  Amazon Keyspaces units for the whole trial (estimated before it ran, warm-up "
                         f"included): {report.count(round(self.units_estimate['wcu']))} write, "
                         f"{report.count(round(self.units_estimate['rcu']))} read at {pricing.consistency}.")
        return lines

    def _sizes(self, ordered: list[VariantResult], base: VariantResult | None, pricing: Pricing) -> Line:
        header = ["Stored bytes", "mean", "total", "ratio", "decode", "WCU/row",
                  f"RCU/row ({pricing.consistency})"]
        rows: list[list[str]] = []
        for v in ordered:
            rows.append([v.name, report.sized(round(v.mean_bytes)), report.sized(v.stored_bytes),
                         report.ratio(v.ratio), _micros(v.decode_us), f"{v.per_row(v.wcu):.2f}",
                         f"{v.per_row(pricing.reads(v.rcu)):.2f}"])
            if base is not None and v is not base:
                rows.append(["", _pct(change(v.mean_bytes, base.mean_bytes)),
                             _pct(change(v.stored_bytes, base.stored_bytes)), "", "",
                             _pct(change(v.per_row(v.wcu), base.per_row(base.wcu))),
                             _pct(change(v.per_row(v.rcu), base.per_row(base.rcu)))])
        return report.table(rows, header, right=range(1, 7), indent=2)

    def _chart(self, ordered: list[VariantResult], base: VariantResult | None) -> list[Line]:
        """Median and p99 per variant and phase as bars, each variant's drawn with the 95 % interval
        of its difference from uncompressed (shaded), its estimate marked."""
        if base is None or not any(v.writes.ok or v.reads.ok for v in ordered):
            return []
        out: list[Line] = []
        for title, phase_of in (("writes", _writes), ("reads", _reads)):
            scale = 0.0
            rows: list[list[Any]] = []
            found: list[tuple[VariantResult, str, float, noise.Difference | None]] = []
            for v in ordered:
                latency = phase_of(v).latency_ms()
                tested = self.noise(v)
                for key in ("median", "p99"):
                    value = latency[key]
                    if value is None:
                        continue
                    d = tested[title][key] if tested is not None else None
                    base_value = phase_of(base).latency_ms()[key]
                    high = value
                    if d is not None and d.high is not None and base_value:
                        high = base_value * (1 + d.high)
                    scale = max(scale, value, high)
                    found.append((v, key, value, d))
            if not found or not scale:
                continue
            for v, key, value, d in found:
                base_value = phase_of(base).latency_ms()[key] or 0.0
                bar: report.Bar
                if d is not None and d.low is not None and d.high is not None:
                    bar = report.Bar(value / scale, "#", base_value * (1 + d.low) / scale,
                                     base_value * (1 + d.high) / scale)
                else:
                    bar = report.Bar(value / scale)
                named = not any(v is earlier for earlier, *_ in found[:len(rows)])
                rows.append([v.name if named else "", "p50" if key == "median" else key, bar, _ms(value),
                             d.text() if d is not None else ""])
            out += ["", f"Latency of {title} (ms): median and p99 per variant; the shaded part of a bar is "
                    "the 95 % interval of its difference from uncompressed, the mark its estimate",
                    report.table(rows, ["variant", "", "", "ms", "against uncompressed"], right=(3,), keys=2)]
        return out

    def _latencies(self, title: str, ordered: list[VariantResult], base: VariantResult | None,
                   phase_of: Callable[[VariantResult], Phase]) -> Line:
        keys = [k for k, _ in PERCENTILES] + ["max"]
        header = [f"{title} (ms)", "ops/s", "median", "p95", "p99", "p99.9", "max", "failed"]
        rows: list[list[str]] = []
        for v in ordered:
            phase = phase_of(v)
            latency = phase.latency_ms()
            rate = phase.ops_per_second
            rows.append([v.name, f"{rate:,.0f}" if rate is not None else "-",
                         *(_ms(latency[k]) for k in keys), report.count(phase.failures)])
            if base is not None and v is not base:
                base_phase = phase_of(base)
                tested = phase.against(base_phase)
                base_latency = base_phase.latency_ms()
                testable = self.rounds_run() >= noise.MIN_ROUNDS
                cells = [_tested(tested["ops_per_s"], testable)]
                for k in keys:
                    moved = change(latency[k], base_latency[k])
                    if k in tested:
                        cells.append(_tested(tested[k], testable))
                    elif moved is not None:  # p99.9 and max: never tested against the noise
                        cells.append(f"({_pct(moved)})" if testable else _pct(moved))
                    else:
                        cells.append("")
                if any(cells):  # a change row with no change in it is no row
                    rows.append(["", *cells, ""])
        return report.table(rows, header, right=range(1, 8), indent=2)

    def _failures(self) -> list[Line]:
        lines: list[Line] = []
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


def _tested(d: noise.Difference, testable: bool) -> str:
    """A change in a latency table: itself when measurable, '~' inside the noise, in parentheses
    when it could not be tested (plain when the run had too few rounds to test any: said once)."""
    if d.change is None:
        return ""
    if d.outcome == noise.SAME:
        return "~"
    if d.outcome == noise.UNKNOWN and testable:
        return f"({_pct(d.change)})"
    return _pct(d.change)


def _pct(share: float | None) -> str:
    """'+3.2 %', '-64 %', '+180 %'; '' when there is no change to show."""
    return "" if share is None else noise.signed(share)


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
