"""Building blocks of the reports: numbers, tables and charts.

A report is a list of lines of text and blocks (common.text.Line): tables and charts are blocks,
laid out when the report is written (common.text.fit) for the screen's width, drawn with
Unicode's block characters where the output's encoding has them and in plain ASCII otherwise
(common.text.draws_blocks: the one rule). A pipe or a file gets them at their natural width.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cqlsh_ext.common.text import Bar, Block, Cell, Line, Table
from cqlsh_ext.common.units import human_size

__all__ = ["Bar", "Block", "Cell", "Line", "Panel", "Point", "Scatter", "Table", "bar", "count", "human_size",
           "pct", "ratio", "saved", "sized", "table"]


def count(n: int) -> str:
    return f"{n:,}"


def sized(n: int) -> str:
    """'1,234 B' below 10 KiB (exact, as people compare byte counts), else '12.3 KiB'."""
    return f"{n:,} B" if n < 10 * 1024 else human_size(n)


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def saved(share: float | None) -> str:
    """A share saved as people read it: '54 %', '0.4 %', '-3 %' (more), 'none'."""
    if share is None:
        return "-"
    value = 100 * share
    if abs(value) < 0.05:
        return "none"
    return f"{value:.1f} %" if abs(value) < 10 else f"{value:.0f} %"


def bar(part: float, whole: float, ascii: str = "#") -> Bar:
    """A table cell drawn as a bar of part / whole of its column (any part above 0 shows)."""
    return Bar(part / whole if whole and part > 0 else 0.0, ascii)


def table(rows: Sequence[Sequence[Cell]], header: Sequence[str] | None = None, right: Iterable[int] = (),
          indent: int = 2, keys: int = 1) -> Table:
    """An aligned table (common.text.Table); columns listed in `right` are right-aligned, the first
    `keys` name a row (repeated when a narrow screen stacks the table)."""
    return Table(rows, header, tuple(right), indent, keys)


# ------------------------------------------------------------------------------------- charts

@dataclass(frozen=True)
class Point:
    """One codec on a scatter chart: `key` marks it, `x` and `y` place it."""

    key: str
    x: float
    y: float


@dataclass(frozen=True)
class Panel:
    """One chart of a Scatter: its title and its points."""

    title: str
    points: Sequence[Point]


#: A scatter panel's width: at least (else no chart: the table holds the figures), and at most.
PANEL_MIN, PANEL_MAX = 30, 60


@dataclass
class Scatter:
    """Panels of points: x on a log scale (speeds), y linear (ratios, one scale for every panel),
    each point marked by its key (`*` where two fall on one cell). A Block: the panels side by side
    where the screen has room for them, else one under the other."""

    panels: Sequence[Panel]
    x_name: str
    y_name: str
    height: int = 10
    indent: int = 2

    def lines(self, width: int, unicode: bool) -> list[str]:
        every = [p for panel in self.panels for p in panel.points if _placed(p)]
        if not every:
            return []
        room = (width or 80) - self.indent
        gap = 3
        beside = (room - gap * (len(self.panels) - 1)) // len(self.panels)
        y_low, y_high = min(1.0, min(p.y for p in every)), max(p.y for p in every)
        pad = " " * self.indent
        if beside >= PANEL_MIN:
            drawn = [self._panel(panel, min(beside, PANEL_MAX), y_low, y_high, unicode)
                     for panel in self.panels]
            tall = max(map(len, drawn))
            out = []
            for n in range(tall):
                row = [(d[n] if n < len(d) else "").ljust(min(beside, PANEL_MAX)) for d in drawn]
                out.append((pad + (" " * gap).join(row)).rstrip())
        elif room >= PANEL_MIN:
            out = []
            for panel in self.panels:
                out.extend(pad + line if line else "" for line in
                           self._panel(panel, min(room, PANEL_MAX), y_low, y_high, unicode))
        else:
            return []  # no room for a picture: the table above holds the same figures
        out.append(pad + f"x: {self.x_name}; y: {self.y_name}")
        return out

    def _panel(self, panel: Panel, width: int, y_low: float, y_high: float, unicode: bool) -> list[str]:
        shown = [p for p in panel.points if _placed(p)]
        y_labels = [f"{y_high:.1f}", f"{(y_low + y_high) / 2:.1f}", f"{y_low:.1f}"]
        label_w = max(map(len, y_labels))
        cols = width - label_w - 2
        x_low, x_high = _decades(min(p.x for p in shown), max(p.x for p in shown))
        grid = [[" "] * cols for _ in range(self.height)]
        for p in shown:
            col = round((math.log10(p.x) - x_low) / (x_high - x_low) * (cols - 1))
            up = round((p.y - y_low) / (y_high - y_low) * (self.height - 1)) if y_high > y_low else 0
            row = self.height - 1 - up
            # A taken cell: the nearest free one beside it (a column is a small step on a log
            # scale), else `*` for two at once.
            free = next((c for c in (col, col + 1, col - 1, col + 2, col - 2)
                         if 0 <= c < cols and grid[row][c] == " "), None)
            if free is None:
                grid[row][col] = "*"
            else:
                grid[row][free] = p.key
        side, corner, rule = ("│", "└", "─") if unicode else ("|", "+", "-")
        out = [panel.title[:width]]
        middle = (self.height - 1) // 2
        for n, cells in enumerate(grid):
            label = {0: y_labels[0], middle: y_labels[1], self.height - 1: y_labels[2]}.get(n, "")
            out.append(label.rjust(label_w) + " " + side + "".join(cells))
        out.append(" " * label_w + " " + corner + rule * cols)
        ticks = [" "] * (cols + 1)
        for decade in range(x_low, x_high + 1):
            text = f"{10 ** decade:,}" if decade >= 0 else f"{10 ** decade:g}"
            at = min(round((decade - x_low) / (x_high - x_low) * (cols - 1)), cols + 1 - len(text))
            if all(c == " " for c in ticks[max(0, at - 1):at + len(text) + 1]):
                ticks[at:at + len(text)] = list(text)
        out.append(" " * (label_w + 1) + "".join(ticks).rstrip())
        return out


def _placed(p: Point) -> bool:
    """A point the chart can place: a positive, finite speed and a finite ratio (NaN compares
    false)."""
    return 0 < p.x < math.inf and -math.inf < p.y < math.inf


def _decades(low: float, high: float) -> tuple[int, int]:
    """The powers of ten around [low, high], at least one apart."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    return first, max(last, first + 1)
