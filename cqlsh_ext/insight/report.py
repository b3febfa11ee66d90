"""Plain-text building blocks of the reports: aligned tables, bar charts, numbers.

Reports are plain ASCII apart from the data itself, so they read the same in a terminal, a CI log
and a CAPTURE file.
"""

from __future__ import annotations

from collections.abc import Sequence

from cqlsh_ext.common.units import human_size

__all__ = ["bar", "count", "human_size", "pct", "ratio", "sized", "table"]

def count(n: int) -> str:
    return f"{n:,}"


def sized(n: int) -> str:
    """'1,234 B' below 10 KiB (exact, as people compare byte counts), else '12.3 KiB'."""
    return f"{n:,} B" if n < 10 * 1024 else human_size(n)


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def bar(part: float, whole: float, width: int = 24, char: str = "#") -> str:
    """A bar of `width` characters at most; any non-zero part shows at least one character."""
    if not whole or part <= 0:
        return ""
    return char * max(1, round(width * part / whole))


def table(
    rows: Sequence[Sequence[str]],
    header: Sequence[str] | None = None,
    right: Sequence[int] = (),
    indent: int = 2,
) -> list[str]:
    """Lines of an aligned table; columns listed in `right` are right-aligned."""
    every = ([list(header)] if header else []) + [list(r) for r in rows]
    if not every:
        return []
    ncols = max(len(r) for r in every)
    for r in every:
        r.extend([""] * (ncols - len(r)))
    widths = [max(len(r[i]) for r in every) for i in range(ncols)]
    lines = []
    for n, r in enumerate(every):
        pairs = enumerate(zip(r, widths, strict=True))
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in pairs]
        lines.append(" " * indent + "  ".join(cells).rstrip())
        if header and n == 0:
            lines.append(" " * indent + "  ".join("-" * w for w in widths))
    return lines
