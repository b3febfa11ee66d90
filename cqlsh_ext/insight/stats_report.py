"""COMPRESSION STATS' text report, per column and per row (the aggregation is insight.stats): the
verdict, each column's codecs, its Keyspaces size buckets and its sizes on a log scale, and the
capacity units per row."""

from __future__ import annotations

from typing import Any, Protocol

from cqlsh_ext.common.text import Line
from cqlsh_ext.insight import report, sizes, verdict
from cqlsh_ext.payload.view import KIND_TITLES, KINDS
from cqlsh_ext.scanning import capacity


class ColumnFigures(Protocol):
    """What the report reads of one column's counters (insight.stats.ColumnStats): declared here so
    that the aggregate imports its report and not the other way round, even for typing."""

    name: str
    #: A text column's (stored uncompressed), not a blob's.
    text: bool
    values: int
    nulls: int
    stored: int
    size: int
    inexact: int
    from_headers: int
    reasons: dict[str, int]
    compressed: list[int]
    before: capacity.Buckets
    after: capacity.Buckets
    sizes_before: sizes.SizeHistogram
    sizes_after: sizes.SizeHistogram

    def by_codec(self) -> dict[str, int]: ...

    def undecodable(self) -> dict[str, int]: ...

    def to_json(self) -> dict[str, object]: ...


def retried_lines(retried: dict[str, int]) -> list[Line]:
    """Errors the scan retried with backoff, named (Keyspaces throttling shows as read timeouts)."""
    if not retried:
        return []
    named = ", ".join(f"{n:,} x {reason}" for reason, n in sorted(retried.items(), key=lambda kv: -kv[1]))
    return [f"  retried with backoff: {named}"]


def stats_verdict(pricing: capacity.Pricing, columns: list[ColumnFigures], before: capacity.Capacity,
                  after: capacity.Capacity, undecodable: dict[str, int], sizes_of: str = "") -> str:
    """The report's first answer: what client-side compression saves on this table, in what the user
    pays (verdict.py), from the exact figures (`sizes_of`: whose bytes they are, when not the
    table's: a sample's)."""
    values = sum(c.values for c in columns)
    if not values:
        return f"{verdict.LEAD} no blob or text values to measure."
    stored, size = sum(c.stored for c in columns), sum(c.size for c in columns)
    compressed = sum(c.compressed[0] for c in columns)
    change = verdict.Change((before.wcu, after.wcu), (before.rcu, after.rcu), (size, stored))
    rows = before.rows
    if not compressed:
        if not pricing.keyspaces:
            text = (f"stored uncompressed ({report.sized(stored)}): COMPRESSION ADVISE measures what "
                    "client-side compression would save in storage, COMPRESSION TRIAL what it does to "
                    "latency")
        elif floor := verdict.floor_reason(rows, before.wcu, before.rcu):
            text = (f"stored uncompressed, and compression cannot save capacity units here: {floor}; it "
                    "would save storage only (COMPRESSION ADVISE measures how much)")
        else:
            most = verdict.at_most(rows, before.wcu, before.rcu)
            text = (f"stored uncompressed; compression could save {most}, a row costing 1 of each at least "
                    "(COMPRESSION ADVISE measures what each codec saves)")
    else:
        text = f"client-side compression {verdict.saves(change, pricing, sizes=True, sizes_of=sizes_of)}"
        if pricing.keyspaces and not change.saves_units:
            floor = verdict.floor_reason(rows, before.wcu, before.rcu)
            text += f": {floor}" if floor else ""
        elif not pricing.keyspaces:
            text += "; COMPRESSION TRIAL measures what it does to latency on this cluster"
        if pricing.keyspaces and before.over_quota > after.over_quota:
            text += (f"; {before.over_quota - after.over_quota:,} rows would be over the 1 MB row quota "
                     "uncompressed")
        plain = values - compressed - sum(undecodable.values())
        if plain:
            text += f"; {plain:,} of {values:,} values are not compressed"
    if undecodable:
        text += (f"; {sum(undecodable.values()):,} undecodable{breakdown(undecodable)}, counted at their "
                 "stored size")
    return f"{verdict.LEAD} {text}."


def validated_lines(validated: dict[str, int]) -> list[Line]:
    """How the values under a container were checked (ColumnStats.validated): decompressed whole
    (their checksums checked), sized from their headers alone (what that does not see said), cut
    at the cap, failed."""
    decoded, headers, cut, failed = (validated[k] for k in ("decoded", "headers", "cut", "failed"))
    parts = []
    if decoded:
        parts.append(f"{report.count(decoded)} decompressed whole (the container's checksum checked where it "
                     "carries one)")
    if headers:
        were = "value was sized from its header" if headers == 1 else "values were sized from their headers"
        parts.append(f"{report.count(headers)} {were}, not decompressed (the framing checked, not the "
                     "payload: STATS ... DECODE ALL decompresses every value)")
    if cut:  # the line above the validated one says what was counted of them
        parts.append(f"{report.count(cut)} decoded up to the output cap")
    if failed:
        parts.append(f"{report.count(failed)} failed")
    return [f"  validated: {'; '.join(parts)}"] if parts else []


def breakdown(kinds: dict[str, int]) -> str:
    """' (3 no known format, 1 a format that failed)': undecodable values by kind, in the view's
    words and order."""
    parts = [f"{kinds[kind]:,} {KIND_TITLES[kind]}" for kind in KINDS if kinds.get(kind)]
    return f" ({', '.join(parts)})" if parts else ""


def render_column(col: ColumnFigures) -> list[Line]:
    doc: dict[str, Any] = col.to_json()
    nulls = f", {report.count(col.nulls)} null" if col.nulls else ""
    lines: list[Line] = [f"Column {col.name}: {report.count(col.values)} values{nulls}"]
    rows = []
    for entry in doc["by_chain"]:
        rows.append(
            [str(entry["chain"]), report.count(entry["values"]), report.pct(entry["values"], col.values),
             report.sized(entry["stored_bytes"]), report.sized(entry["decompressed_bytes"]),
             report.ratio(entry["ratio"])])
    rows.append(["total", report.count(col.values), "", report.sized(col.stored), report.sized(col.size),
                 report.ratio(doc["ratio"])])
    header = ["codec / container", "values", "share", "stored", "decompressed", "ratio"]
    lines.append(report.table(rows, header, right=(1, 2, 3, 4, 5)))
    codecs = ", ".join(f"{k} {report.count(v)}" for k, v in col.by_codec().items())
    lines.append(f"  by codec: {codecs}")
    sure = doc.get("by_confidence")
    if sure:
        counts = ", ".join(f"{k} {report.count(v)}" for k, v in sure.items())
        lines.append(f"  how sure (compressed values): {counts}")
    if col.text:
        lines.append("  a text column, stored uncompressed: COMPRESSION ADVISE says what codecs would save")
    median = doc["median_ratio"]
    comp = doc["compressed"]
    if comp["values"]:
        approx = "" if doc["median_exact"] else " (histogram estimate, within 0.1 %)"
        lines.append(f"  ratio (decompressed / stored): overall {report.ratio(doc['ratio'])}, "
                     f"compressed values {report.ratio(comp['ratio'])}, "
                     f"median per value {report.ratio(median)}{approx}")
    if col.inexact:
        were = "value was" if col.inexact == 1 else "values were"
        lines.append(
            f"  {report.count(col.inexact)} {were} cut at the output cap: the decompressed size counted "
            "is the size the header declares, or a lower bound")
    lines.extend(validated_lines(doc["validated"]))
    undecodable = col.undecodable()
    if undecodable:
        lines.append(f"  undecodable: {report.count(sum(undecodable.values()))}{breakdown(undecodable)}, "
                     "counted at their stored size")
    for reason, n in list(col.reasons.items())[:8]:
        lines.append(f"  {report.count(n)} x {reason}")
    lines.append("")
    lines.append(render_buckets(col.before, col.after))
    lines.append("")
    lines.extend(render_histogram(col.sizes_before, col.sizes_after))
    return lines


def render_buckets(before: capacity.Buckets, after: capacity.Buckets) -> Line:
    """The Keyspaces compression article's size buckets, decompressed (before) and stored (after)."""
    tb, ta = before.total, after.total
    rows = [[label, report.count(b), report.pct(b, tb), report.count(a), report.pct(a, ta)]
            for label, b, a in zip(capacity.BUCKET_LABELS, before.counts, after.counts, strict=False)]
    header = ["Keyspaces bucket", "decompressed", "share", "stored", "share"]
    return report.table(rows, header, right=(1, 2, 3, 4))


def render_histogram(before: sizes.SizeHistogram, after: sizes.SizeHistogram) -> list[Line]:
    """Sizes on a log scale, a bar per doubling, decompressed beside stored: the bins from the
    smallest value's to the largest's (one scale for both sides)."""
    used = [k for k, (b, a) in enumerate(zip(before.counts, after.counts, strict=True)) if b or a]
    if not used:
        return []
    top = max(max(before.counts), max(after.counts))
    labels = sizes.labels()
    rows: list[list[report.Cell]] = [
        [labels[k], report.bar(before.counts[k], top), report.count(before.counts[k]),
         report.bar(after.counts[k], top, "="), report.count(after.counts[k])]
        for k in range(used[0], used[-1] + 1)]
    return ["  values by size, log scale (a bin per doubling; 1 KB = 1,024 bytes):",
            report.table(rows, ["size", "decompressed", "", "stored", ""], right=(2, 4), indent=4)]


def render_capacity(before: capacity.Capacity, after: capacity.Capacity, unit: str, basis: str,
                    pricing: capacity.Pricing) -> list[Line]:
    lines: list[Line] = [f"Amazon Keyspaces ({basis}; {pricing.basis()}):"]

    def per(v: float, c: capacity.Capacity) -> str:
        return f"{v / c.rows:.2f}" if c.rows else "-"

    rcu_before, rcu_after = pricing.reads(before.rcu), pricing.reads(after.rcu)
    rows = [
        ["write units (WCU)", report.count(before.wcu), report.count(after.wcu),
         capacity.saving_text(before.wcu, after.wcu)],
        [f"WCU per {unit}", per(before.wcu, before), per(after.wcu, after), ""],
        [f"read units (RCU, {pricing.consistency})", capacity.units(rcu_before), capacity.units(rcu_after),
         capacity.saving_text(before.rcu, after.rcu)],
        [f"RCU per {unit}", per(rcu_before, before), per(rcu_after, after), ""],
        [f"{unit}s near 1 MB (>= 90 %)", report.count(before.near_quota), report.count(after.near_quota), ""],
        [f"{unit}s over 1 MB (quota)", report.count(before.over_quota), report.count(after.over_quota), ""],
        [f"largest {unit}", report.sized(before.largest), report.sized(after.largest), ""]]
    lines.append(report.table(rows, ["", "decompressed", "stored", "saved"], right=(1, 2, 3)))
    return lines
