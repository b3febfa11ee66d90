"""COMPRESSION REWRITE's figures and what the user reads of them: the preview's (rows read, would
change, already in the target, refused by reason, stored bytes before and after, write units on
Amazon Keyspaces' terms, rows over 1 MB, time at the PACE), the progress line's, the closing lines.

`RowTally` add up per row and merge (a sample's slices, Spark's tasks); a sample's are scaled to the
table by the sampler's slice count (Horvitz-Thompson: slices x the mean slice).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from cqlsh_ext.common.text import plural
from cqlsh_ext.common.units import human_size
from cqlsh_ext.writing.ranges import WriteTally


@dataclass
class RowTally:
    """What the rows read hold, for the preview and the run alike."""

    #: Rows read, and those the WHERE's payload conditions keep (all of them without any).
    rows: int = 0
    found: int = 0
    #: Rows to rewrite, already in the target chain, refused (by reason).
    change: int = 0
    already: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    #: Stored bytes of the values found, as they are and as they would be (unchanged ones as they are).
    before: int = 0
    after: int = 0
    #: Write units (1 per started KB of the key and the value) to write every row found as it is
    #: and as it would be; those of the rewrite's own writes; read units of the reading.
    wcu_before: int = 0
    wcu_after: int = 0
    rewrite_wcu: int = 0
    rcu: int = 0
    #: Rows over Amazon Keyspaces' 1 MB, as they are and as they would be.
    over_before: int = 0
    over_after: int = 0
    #: New values the value engine would not read in auto mode (a chain without a signature).
    unreadable_after: int = 0

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def merge(self, other: RowTally) -> None:
        for f in fields(self):
            if f.name == "refused":
                for reason, n in other.refused.items():
                    self.refused[reason] = self.refused.get(reason, 0) + n
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def snapshot(self) -> dict[tuple[str, ...], int]:
        """Flat additive counters (a sample's per-slice totals); ('stored', ...) are the bytes read."""
        out: dict[tuple[str, ...], int] = {(f.name,): getattr(self, f.name) for f in fields(self)
                                            if f.name not in ("refused", "before")}
        out[("stored", "before")] = self.before
        out.update({("refused", reason): n for reason, n in self.refused.items()})
        return out

    def scaled(self, factor: float) -> RowTally:
        """The counts times `factor` (a sample's estimate of the table's), rounded."""
        out = RowTally()
        for f in fields(self):
            if f.name == "refused":
                out.refused = {reason: round(n * factor) for reason, n in self.refused.items()}
            else:
                setattr(out, f.name, round(getattr(self, f.name) * factor))
        return out

    def to_json(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def saving(before: int, after: int) -> str:
    """'-52 %' (or '+3 %' for a growth); '' when there was nothing."""
    if not before:
        return ""
    share = round(100 * (after - before) / before)
    return f" ({share:+d} %)"


def refused_lines(counts: RowTally, indent: str = "    ") -> list[str]:
    return [f"{indent}{plural(n, 'row')}: {reason}"
            for reason, n in sorted(counts.refused.items(), key=lambda item: (-item[1], item[0]))]


def preview_lines(counts: RowTally, target: str, pace: int | None, reading: str, about: bool,
                  keyspaces: bool, readable_hint: str) -> list[str]:
    """The preview: what was read (`reading` says how), what would change, bytes, units, time."""
    a = "about " if about else ""
    lines = [f"  read {plural(counts.rows, 'row')} ({reading})"
             + (f"; {counts.found:,} meet the WHERE" if counts.found != counts.rows else "")]
    refused = sum(counts.refused.values())
    lines.append(f"  would rewrite {a}{plural(counts.change, 'row')}, {counts.already:,} already {target}, "
                 f"{refused:,} refused")
    lines += refused_lines(counts)
    lines.append(f"  stored bytes: {a}{human_size(counts.before)} now, {human_size(counts.after)} after"
                 f"{saving(counts.before, counts.after)}")
    lines.append(f"  rows over 1 MB: {counts.over_before:,} now, {counts.over_after:,} after")
    whose = "Amazon Keyspaces" if keyspaces else "on Amazon Keyspaces"
    lines.append(f"  write units ({whose}: 1 per started KB of a row): the rewrite costs {a}"
                 f"{counts.rewrite_wcu:,} once, and reading the rows {counts.rcu:,} read units; writing "
                 f"these rows costs {counts.wcu_before:,} now, {counts.wcu_after:,} after"
                 f"{saving(counts.wcu_before, counts.wcu_after)}; stored, they take "
                 f"{human_size(abs(counts.before - counts.after))} "
                 f"{'less' if counts.after <= counts.before else 'more'} space")
    if pace:
        # The PACE bounds the writes' rate: the time at it is the least the run takes (reading the
        # rows, and a cluster slower than the PACE, add to it; the progress line measures the rest).
        seconds = counts.rewrite_wcu / pace
        lines.append(f"  at PACE {pace:,}: {a}{duration(seconds)} at the least ({counts.rewrite_wcu:,} write "
                     f"units at {pace:,} a second; reading the rows and a slower cluster add to it)")
    else:
        lines.append("  no PACE: as fast as the cluster takes the writes (PACE n: at most n write units a "
                     "second)")
    if counts.unreadable_after:
        values = plural(counts.unreadable_after, "new value")
        lines.append(f"  after the rewrite, auto mode reads {values} as no known format: {readable_hint}")
    return lines


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:,.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"


def progress_text(written: WriteTally, rows_per_second: float, units_per_second: float, pace: int | None,
                  left: float | None) -> str:
    """The progress line's figures, the most wanted first (a narrow terminal cuts the end): rows
    written, the time left (at the rate measured so far: more than the preview's time at the PACE
    when the reading or the cluster is slower), units a second against the PACE, rows a second,
    bytes saved."""
    against = f" (PACE {pace:,})" if pace else ""
    time_left = f", ~{duration(left)} left" if left is not None else ""
    return (f"{written.written:,} written{time_left}, {units_per_second:,.0f} units/s{against}, "
            f"{rows_per_second:,.0f} rows/s, {bytes_changed(written.before, written.after)}")


def bytes_changed(before: int, after: int) -> str:
    """'1.2 MiB saved', or '3.0 KiB more' when the new chain is larger."""
    if after <= before:
        return f"{human_size(before - after)} saved"
    return f"{human_size(after - before)} more"


def closing_lines(label: str, counts: RowTally, written: WriteTally, target: str, span: float,
                  pace: int | None, busiest: int, slowed: int, ranges: str) -> list[str]:
    """The closing lines: what was written and left alone, what was read, bytes saved, units and
    time against the PACE."""
    head = f"{label}: {plural(written.written, 'row')} rewritten"
    if written.changed:
        head += f", {written.changed:,} changed since they were read: left alone"
    if written.expired:
        head += f", {written.expired:,} whose TTL ran out since they were read: left alone"
    refused = sum(counts.refused.values())
    lines = [head,
             f"  read {plural(counts.rows, 'row')}{ranges}: {counts.already:,} already {target}, "
             f"{refused:,} refused"]
    lines += refused_lines(counts)
    lines.append(f"  stored bytes of the rows rewritten: {human_size(written.before)} before, "
                 f"{human_size(written.after)} after{saving(written.before, written.after)}: "
                 f"{bytes_changed(written.before, written.after)}")
    rate = written.units / max(span, 1.0)  # (units sent within the first second: not a rate above PACE)
    against = f"PACE {pace:,}" if pace else "no PACE"
    slow = f"; slowed down {plural(slowed, 'time')} (throttling, timeouts, overload)" if slowed else ""
    lines.append(f"  {written.units:,} write units in {span:,.1f} s: {rate:,.0f} a second ({against}; the "
                 f"busiest second {busiest:,}){slow}")
    return lines
