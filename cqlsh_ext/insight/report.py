"""Plain-text building blocks of the reports: aligned tables, bar charts, numbers.

Reports are plain ASCII apart from the data itself, so they read the same in a terminal, a CI log
and a CAPTURE file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from cqlsh_ext.common.units import human_size

__all__ = ["bar", "count", "fit", "human_size", "pct", "ratio", "sized", "table"]

#: Columns set apart by two spaces or more: three such gaps make a line a table row.
_COLUMN_GAP = re.compile(r"\S {2,}(?=\S)")
#: The first such gap of a line ("  key  text"): its text continues under the text after it.
_FIRST_GAP = re.compile(r"^ *\S+(?: \S+)*? {2,}(?=\S)")
#: What a continuation under the text after the first gap must leave for the text, else it
#: continues under the line's start.
_HANGING_ROOM = 24


def fit(lines: Iterable[str], width: int) -> Iterator[str]:
    """Report lines for a screen `width` columns wide (0: as they are), as a person reads them.

    A line of text longer than the screen wraps at a space, or after a comma when that leaves the
    line at least half full (so a `key value` field stays whole); it continues under its text: after
    a bullet's `- `, under the text after the first gap of two spaces (`key  text`), else four
    columns in from its start. A word wider than the room (a payload preview) is cut with '…'.
    Table rows (three such gaps or more) stay whole: a pager scrolls them, wrapping would break
    their columns. Report texts are written as whole lines, never broken by hand: this is the one
    place they are wrapped."""
    for line in lines:
        if not width or len(line) <= width or len(_COLUMN_GAP.findall(line)) >= 3:
            yield line
            continue
        follow = " " * _continuation(line, width)
        text = line
        while len(text) > width:
            start = len(text) - len(text.lstrip(" "))
            at = text.rfind(", ", start + (width - start) // 2, width - 1)
            at = at + 1 if at > start else text.rfind(" ", start, width + 1)
            if at <= start:  # one word wider than the room
                text = text[: width - 1] + "…"
                break
            yield text[:at].rstrip()
            text = follow + text[at:].lstrip(" ")
        yield text


def _continuation(line: str, width: int) -> int:
    """The column a wrapped line continues at (see fit)."""
    indent = len(line) - len(line.lstrip(" "))
    if line.startswith("- ", indent):
        return min(indent + 2, width // 2)
    gap = _FIRST_GAP.match(line)
    if gap is not None and width - gap.end() >= _HANGING_ROOM:
        return gap.end()
    return min(indent + 4, width // 2)


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
