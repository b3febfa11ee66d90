"""COMPRESSION STATS' text report, per column and per row (the aggregation is insight.stats)."""

from __future__ import annotations

from typing import Any, Protocol

from cqlsh_ext.insight import report
from cqlsh_ext.scanning import capacity


class ColumnFigures(Protocol):
    """What the report reads of one column's counters (insight.stats.ColumnStats): declared here so
    that the aggregate imports its report and not the other way round, even for typing."""

    name: str
    values: int
    nulls: int
    stored: int
    size: int
    inexact: int
    from_headers: int
    reasons: dict[str, int]
    before: capacity.Buckets
    after: capacity.Buckets

    def by_codec(self) -> dict[str, int]: ...

    def to_json(self) -> dict[str, object]: ...


def retried_lines(retried: dict[str, int]) -> list[str]:
    """Errors the scan retried with backoff, named (Keyspaces throttling shows as read timeouts)."""
    if not retried:
        return []
    named = ", ".join(f"{n:,} x {reason}" for reason, n in sorted(retried.items(), key=lambda kv: -kv[1]))
    return [f"  retried with backoff: {named}"]


def render_column(col: ColumnFigures) -> list[str]:
    doc: dict[str, Any] = col.to_json()
    nulls = f", {report.count(col.nulls)} null" if col.nulls else ""
    lines = [f"Column {col.name}: {report.count(col.values)} values{nulls}"]
    rows = []
    for entry in doc["by_chain"]:
        rows.append(
            [
                str(entry["chain"]),
                report.count(entry["values"]),
                report.pct(entry["values"], col.values),
                report.sized(entry["stored_bytes"]),
                report.sized(entry["decompressed_bytes"]),
                report.ratio(entry["ratio"]),
            ]
        )
    rows.append(
        [
            "total",
            report.count(col.values),
            "",
            report.sized(col.stored),
            report.sized(col.size),
            report.ratio(doc["ratio"]),
        ]
    )
    lines.extend(
        report.table(
            rows,
            ["codec / container", "values", "share", "stored", "decompressed", "ratio"],
            right=(1, 2, 3, 4, 5),
        )
    )
    codecs = ", ".join(f"{k} {report.count(v)}" for k, v in col.by_codec().items())
    lines.append(f"  by codec: {codecs}")
    median = doc["median_ratio"]
    comp = doc["compressed"]
    if comp["values"]:
        approx = "" if doc["median_exact"] else " (histogram estimate, within 0.1 %)"
        lines.append(
            f"  ratio (decompressed / stored): overall {report.ratio(doc['ratio'])}, "
            f"compressed values {report.ratio(comp['ratio'])}, "
            f"median per value {report.ratio(median)}{approx}"
        )
    if col.inexact:
        were = "value was" if col.inexact == 1 else "values were"
        lines.append(
            f"  {report.count(col.inexact)} {were} cut at the output cap: the decompressed size counted "
            "is the size the header declares, or a lower bound"
        )
    if col.from_headers:
        were = ("value was sized from its header" if col.from_headers == 1
                else "values were sized from their headers")
        lines.append(
            f"  {report.count(col.from_headers)} {were}, not "
            "decompressed (STATS ... DECODE ALL decompresses every value)"
        )
    for reason, n in list(col.reasons.items())[:8]:
        lines.append(f"  {report.count(n)} x {reason}")
    lines.append("")
    lines.extend(render_buckets(col.before, col.after))
    return lines


def render_buckets(before: capacity.Buckets, after: capacity.Buckets) -> list[str]:
    """The size distribution, decompressed (before) and stored (after), with a text bar per side."""
    tb, ta = before.total, after.total
    rows = []
    for label, b, a in zip(capacity.BUCKET_LABELS, before.counts, after.counts, strict=False):
        rows.append(
            [
                label,
                report.count(b),
                report.pct(b, tb),
                report.bar(b, tb, 20, "#"),
                report.count(a),
                report.pct(a, ta),
                report.bar(a, ta, 20, "="),
            ]
        )
    header = ["size", "decompressed", "share", "before", "stored", "share", "after"]
    return report.table(rows, header, right=(1, 2, 4, 5))


def render_capacity(before: capacity.Capacity, after: capacity.Capacity, unit: str, basis: str) -> list[str]:
    lines = [f"Amazon Keyspaces ({basis}; 1 WCU per started KB, 1 RCU per started 4 KB at LOCAL_QUORUM):"]

    def per(v: int, c: capacity.Capacity) -> str:
        return f"{v / c.rows:.2f}" if c.rows else "-"

    rows = [
        [
            "write units (WCU)",
            report.count(before.wcu),
            report.count(after.wcu),
            _saving(before.wcu, after.wcu),
        ],
        [f"WCU per {unit}", per(before.wcu, before), per(after.wcu, after), ""],
        [
            "read units (RCU)",
            report.count(before.rcu),
            report.count(after.rcu),
            _saving(before.rcu, after.rcu),
        ],
        [f"RCU per {unit}", per(before.rcu, before), per(after.rcu, after), ""],
        [f"{unit}s near 1 MB (>= 90 %)", report.count(before.near_quota), report.count(after.near_quota), ""],
        [f"{unit}s over 1 MB (quota)", report.count(before.over_quota), report.count(after.over_quota), ""],
        [f"largest {unit}", report.sized(before.largest), report.sized(after.largest), ""],
    ]
    lines.extend(report.table(rows, ["", "decompressed", "stored", "saved"], right=(1, 2, 3)))
    return lines


def _saving(before: int, after: int) -> str:
    s = capacity.saving(before, after)
    return "-" if s is None else f"{100 * s:.1f} %"
