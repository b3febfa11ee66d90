"""A sampled COMPRESSION STATS' estimates and report: per-column totals over the slices read,
each with its 95 % interval (scanning.estimate), for the whole table.

The sampling itself (the slices, the plan, when to stop) is scanning.sample's.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.common.text import Line
from cqlsh_ext.insight import report, verdict
from cqlsh_ext.insight.stats import Stats, retried_lines
from cqlsh_ext.scanning import estimate
from cqlsh_ext.scanning.capacity import BUCKET_LABELS
from cqlsh_ext.scanning.sample import SliceSampler


class SampledStats(SliceSampler):
    """A SliceSampler over a Stats, with the estimates for the whole table."""

    stats: Stats

    def estimates(self) -> dict[str, Any]:
        M = self.slices
        rows = estimate.total(self._column("rows"), M)
        columns = []
        for name in self.stats.columns:
            values = self._column("values", name)
            codecs = sorted({k[2] for d in self.done for k in d if k[0] == "codec" and k[1] == name})
            columns.append({
                "column": name,
                "ratio": estimate.ratio(self._column("decompressed", name), self._column("stored", name), M),
                "values": estimate.total(values, M),
                "stored_bytes": estimate.total(self._column("stored", name), M),
                "decompressed_bytes": estimate.total(self._column("decompressed", name), M),
                "codecs": {c: estimate.share(self._column("codec", name, c), values, M) for c in codecs},
                "buckets": {
                    side: {
                        label: estimate.share(self._column("bucket", name, side, str(k)), values, M)
                        for k, label in enumerate(BUCKET_LABELS)}
                    for side in ("decompressed", "stored")}})
        sides = ("decompressed", "stored")
        capacity: dict[str, Any] = {
            f"{unit}_saving": estimate.saving(self._column(unit, sides[0]), self._column(unit, sides[1]), M)
            for unit in ("wcu", "rcu")}
        for what in ("near_quota", "over_quota"):
            capacity[what] = {side: estimate.total(self._column(what, side), M) for side in sides}
        return {"rows": rows, "ratio": self.overall_ratio(), "columns": columns, "keyspaces": capacity}

    def progress_detail(self) -> str:
        """The progress line's tail: slices read, and the ratio's interval as it narrows."""
        if len(self.done) < 2:
            return f"{len(self.done)} slices"
        r = self.overall_ratio()
        rel = r.relative
        width = f" +-{100 * rel:.1f} %" if rel is not None else ""
        return f"{len(self.done)} slices, ratio {report.ratio(r.estimate)}{width}"

    def to_json(self) -> dict[str, Any]:
        est = self.estimates()

        def js(x: Any) -> Any:
            if isinstance(x, estimate.Interval):
                return x.to_json()
            if isinstance(x, dict):
                return {k: js(v) for k, v in x.items()}
            if isinstance(x, list):
                return [js(v) for v in x]
            return x

        doc = self.stats.to_json()
        doc["sample"] = {
            "plan": self.plan.describe(),
            "partitioner": self.ring.partitioner,
            "slices_read": len(self.done),
            "slices": self.slices,
            "ring_share": round(len(self.done) / self.slices, 6) if self.slices else None,
            "rows_read": self.stats.rows,
            "seed": self.seed,
            "stopped": self.stopped,
            "partitions_estimate": self.server_partitions,
            "partitions_basis": self.partitions_basis,
            "whole_table": self.whole_table if self.read_whole else None,
            "precision": self.target if self.plan.until else None,
            "short": [{"figure": f.name, "kind": f.kind, "half_width": None if w is None else round(w, 4)}
                      for f, w in self.short()] if self.plan.until and not self.read_whole else []}
        doc["estimates"] = js(est)
        return doc

    @property
    def read_whole(self) -> bool:
        """Every slice was read: the figures are the table's own."""
        return bool(self.slices) and len(self.done) == self.slices

    def render(self) -> list[Line]:
        st = self.stats
        if self.read_whole:
            # Every slice: the table's own figures, exact; STATS' own report, saying so.
            whole = st.render()
            whole[1:1] = [f"  SAMPLE read every one of the {report.count(self.slices)} token-range slices "
                          f"({self.stopped or 'interrupted'}; seed {self.seed}): exact figures."]
            return whole
        est = self.estimates()
        m, M = len(self.done), self.slices
        lines: list[Line] = [
            "COMPRESSION STATS, SAMPLED: estimates for the whole table, each with its 95 % interval.",
            f"  sample: {report.count(st.rows)} rows in {m:,} random token-range slices of {M:,} "
            f"({_pct(m / M if M else 0)} of the ring, {self.ring.short_name}), {st.elapsed:.1f} s; "
            f"stopped: {self.stopped or 'interrupted'}; seed {self.seed}",
            f"  rows in the table: {_interval(est['rows'], report.count)}"]
        if self.server_partitions:
            lines[-1] = f"{lines[-1]}; partitions: {self.server_partitions:,} ({self.partitions_basis})"
        if st.columns:
            # The sample's own shares are the ratio estimates (sums over the slices read).
            lead = f"{verdict.LEAD[:-1]}, estimated from the sample (intervals below):"
            # (its bytes are the sample's: the table's estimates follow, with their intervals)
            lines.insert(1, st.verdict(sizes_of="in the sample: ").replace(verdict.LEAD, lead, 1))
        lines.extend(retried_lines(st.retried))
        if st.interrupted:
            lines.append("  INTERRUPTED: the estimates use the slices read before Ctrl-C.")
        if st.error:
            lines.append(f"  STOPPED BY AN ERROR: {st.error}; the estimates use the slices read before it.")
        if m < 2:
            lines.append("  Too few slices read for an interval: sample more (SAMPLE n, SAMPLE p PERCENT).")
        elif self.plan.until and (short := self.short()):
            named = ", ".join(f"{f.name} ({_width(f, w)})" for f, w in short[:6])
            more = f" and {len(short) - 6} more" if len(short) > 6 else ""
            lines.append(f"  Short of +-{100 * self.target:g} % when it stopped: {named}{more}.")
        for col in est["columns"]:
            lines.append("")
            lines.append(f"Column {col['column']}: {_interval(col['values'], report.count)} values")
            ratio = _interval(col["ratio"], report.ratio, True)
            lines.append(f"  ratio (decompressed / stored, byte-weighted): {ratio}")
            lines.append(f"  stored {_interval(col['stored_bytes'], report.sized)}, "
                         f"decompressed {_interval(col['decompressed_bytes'], report.sized)}")
            mix = ", ".join(f"{c} {_interval(i, _pct)}" for c, i in
                            sorted(col["codecs"].items(), key=lambda kv: -(kv[1].estimate or 0)))
            lines.append(f"  codec mix (share of values): {mix}")
            rows = [[label, _interval(col["buckets"]["decompressed"][label], _pct),
                     _interval(col["buckets"]["stored"][label], _pct)] for label in BUCKET_LABELS]
            lines.append(report.table(rows, ["Keyspaces bucket", "decompressed", "stored"], indent=4))
        ks = est["keyspaces"]
        lines.append("")
        lines.append(f"Amazon Keyspaces (per row over its blob and text values; {st.pricing.basis()}):")
        lines.append(f"  write units saved {_interval(ks['wcu_saving'], _pct)}, "
                     f"read units saved {_interval(ks['rcu_saving'], _pct)}")
        for what, label in (("near_quota", "rows near 1 MB (>= 90 %)"), ("over_quota", "rows over 1 MB")):
            lines.append(f"  {label}: decompressed {_interval(ks[what]['decompressed'], report.count)}, "
                         f"stored {_interval(ks[what]['stored'], report.count)}")
        return lines


def _width(figure: estimate.Figure, width: float | None) -> str:
    """A figure's half-width as its precision is judged: '+-3.1 %' of itself, '+-1.4 points'."""
    if width is None:
        return "no interval"
    unit = " points" if figure.kind == estimate.SHARE else " %"
    return f"+-{100 * width:.1f}{unit}"


def _pct(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.2f} %" if x < 0.1 else f"{100 * x:.1f} %"


def _interval(i: estimate.Interval, fmt: Any, relative: bool = False) -> str:
    """'3.41 (3.37 to 3.45, +-1.2 %)'; counts and sizes rounded to whole numbers."""
    if i.estimate is None:
        return "-"
    show = (lambda x: fmt(max(0, round(x)))) if fmt in (report.count, report.sized) else fmt
    if i.low is None or i.high is None:
        return f"{show(i.estimate)} (no interval)"
    rel = f", +-{100 * i.relative:.1f} %" if relative and i.relative is not None else ""
    return f"{show(i.estimate)} ({show(i.low)} to {show(i.high)}{rel})"
