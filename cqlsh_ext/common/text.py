"""Text the shell writes for people: reports laid out for the screen, messages wrapped at words,
help text filled to its width, counted nouns. The one place lines are wrapped and tables laid out:
report texts, messages and help texts are written as whole lines and paragraphs, tables as
`Table`s, never broken by hand (a terminal breaks a long line inside a word).
Standard library only (start-up imports it through the command modules' help texts)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Protocol, runtime_checkable

__all__ = ["ELLIPSIS", "HELP_WIDTH", "Bar", "Block", "Cell", "FittedLines", "Holding", "Line", "OneRow",
           "Table", "draws_blocks", "fill", "fit", "message", "nearest", "plural", "say", "screen_width",
           "shorten", "unheld", "unknown", "visible", "wrap"]

#: The first gap of two spaces or more of a line ("  key  text"): its text continues under the
#: text after it.
_FIRST_GAP = r"^ *\S+(?: \S+)*? {2,}(?=\S)"
#: What a continuation under the text after the first gap must leave for the text, else it
#: continues under the line's start.
_HANGING_ROOM = 24


@runtime_checkable
class Block(Protocol):
    """A part of a report that lays itself out when the report is written, for the screen's
    `width` (0: no limit, its natural layout) and with Unicode's block characters or plain ASCII
    (`unicode`): a table, a chart. Every line it gives is at most `width` long."""

    def lines(self, width: int, unicode: bool) -> list[str]: ...


#: A report is a list of these: lines of text, and blocks laid out by fit().
Line = str | Block


def fit(lines: Iterable[Line], width: int, unicode: bool = False, cut: bool = True) -> Iterator[str]:
    """A report's lines for a screen `width` columns wide (0: as they are), as a person reads them;
    `unicode`: the output's encoding has block characters (draws_blocks).

    A block (a `Table`, a chart) lays itself out for the width: a table narrows or stacks rather
    than wrap. A line of text longer than the screen wraps at a space (not one after a figure:
    '6.9 MiB' stays whole), or after a comma when that leaves the line at least half full and keeps
    a field of a few words whole (`version 1`); it continues under its
    text: after a bullet's `- `, under the text after the first gap of two spaces (`key  text`),
    else four columns in from its start. No word is broken. A word wider than the room (a payload
    preview) is cut with '…', or, with `cut` False (a message: a file name, a host), left whole on
    its line. A path or a web address (is_path) is never cut nor broken: one that does not fit
    where it starts goes to the next line, and one wider than that line's room stands alone on a
    line of its own (at the line's indent: a statement pasted back continues there), so that the
    terminal shows it on as many rows as it takes and it copies as one (a break and an indent inside
    it would not paste); one that fits the screen's width but not after the indent starts at the
    left edge, whole on its row. A line too wide spells the paths in the home directory from `~`
    first (home_short). No line is longer than `width` but such a path, and a word that is no path
    with `cut` False. A `OneRow` line is cut, never wrapped."""
    for line in lines:
        if isinstance(line, OneRow):
            yield from line.lines(width, unicode)
        elif isinstance(line, str):
            yield from wrap(line, width, cut)
        else:
            for laid in line.lines(width, unicode):
                yield from wrap(laid, width)  # a block keeps to the width: this never cuts its lines


#: The one mark of a cut: a value, a preview, a cell shortened to fit (never '...').
ELLIPSIS = "…"


def shorten(text: str, width: int) -> str:
    """`text` in at most `width` characters: whole, or cut with ELLIPSIS. A quoted string ("...",
    '...') keeps its closing quote ('"Gift wrap, no invoice…"'): a cut never reads as a string
    that does not end."""
    if len(text) <= width:
        return text
    quote = text[0] if len(text) > 1 and text[0] in "\"'" and text[-1] == text[0] else ""
    if quote and width >= 3:
        return text[: width - 2].rstrip() + ELLIPSIS + quote
    return text[: max(width - 1, 0)] + ELLIPSIS


#: What a message never prints as it is: control characters (C0, DEL, C1), the line and paragraph
#: separators, bidirectional controls and lone surrogates.
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str, width: int) -> str:
    """`text` (a file's, a path's: text nobody typed into the statement) as a message shows it: on
    one line, what _UNSHOWN names as its escape (\\x1b, \\n, \\ud800: nothing reaches the terminal
    as a control), cut to `width` (shorten)."""
    if not text.isprintable() or _UNSHOWN.search(text):
        text = _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return shorten(text, width)


def wrap(line: str, width: int, cut: bool = True) -> Iterator[str]:
    """One line of text fitted to `width` (see fit)."""
    if not width or len(line) <= width:
        yield line
        return
    line = home_short(line)
    if len(line) <= width:
        yield line
        return
    follow = " " * _continuation(line, width)
    text = line
    while len(text) > width:
        start = len(text) - len(text.lstrip(" "))
        end = text.find(" ", start)
        word_end = len(text) if end < 0 else end
        if word_end > width and is_path(text[start:word_end]):  # wider than the room: alone, whole
            # (at the screen's left edge where only there it fits on one row; else at the indent)
            yield text[start:word_end] if word_end - start <= width else text[:word_end]
            rest = text[word_end:].lstrip(" ")
            if not rest:
                return
            text = follow + rest
            continue
        at = text.rfind(", ", start + (width - start) // 2, width - 1)
        at = at + 1 if at > start and _field_after(text, at, width) else _space(text, start, width)
        if at <= start:  # one word wider than the room
            if cut:  # that word cut, the words after it on the next line
                yield text[:start] + shorten(text[start:word_end], width - start)
                rest = text[word_end:].lstrip(" ")
                if not rest:
                    return
                text = follow + rest
                continue
            if end < 0:
                break
            at = end  # the word whole, the rest on the next line
        yield text[:at].rstrip()
        text = follow + text[at:].lstrip(" ")
    yield text


#: A comma's next part of at most this many words is a field ("version 1"): kept whole.
_FIELD_WORDS = 3


def _field_after(text: str, comma: int, width: int) -> bool:
    """Whether breaking after the comma at `comma` keeps a field whole: the part from it to the
    next comma is a few words that reach past the width (prose breaks at a space instead)."""
    end = text.find(",", comma + 1)
    part = text[comma + 1:end if end >= 0 else len(text)]
    return len(part.split()) <= _FIELD_WORDS and comma + 1 + len(part) > width


#: A path (absolute, from home, relative with a '/': docs/edit.md) or a web address, after any
#: opening quote or bracket: never cut or broken (fit).
_PATH = r"""^[('"`]*(?:~?/|\.\.?/|[A-Za-z][\w+.-]*://|[\w.+-]+/[\w.+-])"""


def home_short(text: str) -> str:
    """`text` with each path in the user's home directory spelt from `~` (`~/.cassandra/journal/...`):
    what a line too wide for the screen says so that its paths fit; every statement that takes a
    path (COPY, UNDO, RESUME, SAVE) reads `~` back as the home directory."""
    import os

    home = os.path.expanduser("~").rstrip("/")
    if len(home) < 2 or home not in text:
        return text
    return re.sub(rf"(?<![\w./~-]){re.escape(home)}(?=/)", "~", text)


def is_path(word: str) -> bool:
    """Whether `word` (no spaces) is a path or a web address, which fit never cuts or breaks."""
    return re.match(_PATH, word) is not None


def _space(text: str, start: int, width: int) -> int:
    """The last space after `start` a line may break at within `width`: not one after a figure,
    so that '6.9 MiB' and '54 %' stay whole (any space when there is no other); -1 for none."""
    at = text.rfind(" ", start, width + 1)
    first = at
    while at > start and text[at - 1].isdigit():
        at = text.rfind(" ", start, at)
    return at if at > start else first


def _continuation(line: str, width: int) -> int:
    """The column a wrapped line continues at (see fit)."""
    indent = len(line) - len(line.lstrip(" "))
    if line.startswith("- ", indent):
        return min(indent + 2, width // 2)
    gap = re.match(_FIRST_GAP, line)
    if gap is not None and width - gap.end() >= _HANGING_ROOM:
        return gap.end()
    return min(indent + 4, width // 2)


def message(text: str, width: int) -> str:
    """A message the shell writes (an error, a closing line), for a screen `width` columns wide (0:
    as it is): each line wrapped at words as fit wraps it, nothing cut."""
    return "\n".join(fit(text.split("\n"), width, cut=False))


def say(text: str, out: IO[str] | None = None) -> None:
    """Write a message to `out` (standard error by default), wrapped at words to the screen when
    `out` is a terminal (message, screen_width)."""
    import sys

    out = sys.stderr if out is None else out
    print(message(text, screen_width(out)), file=out)


class FittedLines:
    """A stand-in for `out` while someone else's code prints to it (cqlsh's banner): each whole
    line written is fitted to the terminal as a message is (message), when `out` is one."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.width = screen_width(out)
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.out.write(message(line, self.width) + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.out.write(message(self.pending, self.width))
            self.pending = ""
        self.out.flush()

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding: the terminal's
        return getattr(self.out, name)


@runtime_checkable
class Holding(Protocol):
    """A stand-in for standard output that holds what is written back (the interactive shell's
    pager, until a result is taller than the screen)."""

    def release(self) -> None: ...


def unheld(out: IO[str]) -> None:
    """What is written to `out` from now on reaches the screen as it is written, fitted to it
    (screen_width): a statement that runs long says first what a person needs to recover (a
    journal's path), then works. Nothing to do for a plain stream."""
    if isinstance(out, Holding):
        out.release()


class Stream(Protocol):
    """Where text goes, as screen_width reads it: a terminal, a pipe, a file or a stand-in."""

    def isatty(self) -> bool: ...

    def fileno(self) -> int: ...


def screen_width(out: Stream) -> int:
    """The width of the terminal `out` writes to, 0 when it is no terminal: a pipe or a file gets
    whole lines (the one-line messages scripts read), a person the lines fitted to the screen. A
    Holding stand-in (the interactive shell's pager) shows what it holds on the shell's terminal,
    in the pager or not: that terminal's width (a message in the pager wrapped at words, never cut
    by its edge)."""
    import os
    import sys

    if isinstance(out, Holding):
        out = sys.__stdout__ or out
    try:
        if not out.isatty():
            return 0
        return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError):  # a stand-in without a descriptor
        return 0


def draws_blocks(encoding: str | None) -> bool:
    """Whether text in `encoding` can hold the block characters charts are drawn with (else they
    are drawn in plain ASCII): the one rule for every report."""
    try:
        "█▏░│─".encode(encoding or "ascii")
    except (LookupError, UnicodeEncodeError):
        return False
    return True


# ------------------------------------------------------------------------------------- tables

#: Eighths of a character cell, for bars drawn in Unicode.
_EIGHTHS = " ▏▎▍▌▋▊▉"
#: Columns a table sets between its columns.
GAP = 2
#: A bar column narrows down to this many characters before a table stacks.
BAR_MIN = 6
#: A last column of text wraps inside the table when it keeps at least this many characters.
TEXT_MIN = 16


class OneRow(str):
    """A line of text that stays one row at any width: fit() cuts it with ELLIPSIS where the screen
    is narrower, never wraps it (a preview of a value: wrapped, it would break inside a string and
    read as two). Whole at width 0; a str everywhere else."""

    __slots__ = ()

    def lines(self, width: int, unicode: bool) -> list[str]:
        text = str(self)
        if not width or len(text) <= width:
            return [text]
        indent = len(text) - len(text.lstrip(" "))
        return [text[:indent] + shorten(text[indent:], width - indent)]


@dataclass(frozen=True)
class Bar:
    """A table cell drawn as a bar: `share` (0..1) of the column's width. `ascii` is the
    character it is drawn with in plain ASCII; in Unicode it is drawn in eighths of a cell. Any
    share above 0 shows.

    With an interval (`low`, `high`, shares too) the bar is solid up to the interval's low end,
    shaded across the interval, and the estimate is marked: `████░░┃░░` (`####--|--` in ASCII)."""

    share: float
    ascii: str = "#"
    low: float | None = None
    high: float | None = None

    def draw(self, width: int, unicode: bool) -> str:
        share = min(1.0, max(0.0, self.share))
        if width <= 0:
            return ""
        if self.low is not None and self.high is not None:
            return self._interval(width, unicode)
        if share <= 0:
            return ""
        if not unicode:
            return self.ascii * max(1, round(width * share))
        eighths = max(1, round(width * share * 8))
        full, part = divmod(eighths, 8)
        return "█" * full + (_EIGHTHS[part] if part else "")

    def _interval(self, width: int, unicode: bool) -> str:
        solid, shade, mark = ("█", "░", "┃") if unicode else (self.ascii, "-", "|")

        def cell(share: float | None) -> int:
            return min(width - 1, max(0, round((width - 1) * min(1.0, max(0.0, share or 0.0)))))

        low, high, at = cell(self.low), cell(self.high), cell(self.share)
        drawn = [solid if k < low else shade for k in range(max(high, at) + 1)]
        drawn[at] = mark
        return "".join(drawn)


#: A table's cell: text, or a bar laid out at the column's width.
Cell = str | Bar


@dataclass
class Table:
    """Rows of cells under an optional header, columns set apart by two spaces; `right`: the
    columns aligned right (figures); `keys`: the leading columns that name a row (repeated when
    the table is stacked); `bar_width`: a bar column's width when there is room.

    At a width it does not fit (lines(width)), it narrows: bars shorten, headers of two words or
    more take two lines, a last column of text wraps inside its column; then it stacks: as few
    groups of the other columns as fit, of about the same width, each under the key columns
    again; where not even one column fits beside the keys, each row becomes a record (its name,
    then one `header: value` line a field). No line is ever wider than the width."""

    rows: Sequence[Sequence[Cell]]
    header: Sequence[str] | None = None
    right: Iterable[int] = ()
    indent: int = 2
    keys: int = 1
    bar_width: int = 20
    _right: frozenset[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._right = frozenset(self.right)

    @property
    def columns(self) -> int:
        return max([len(r) for r in self.rows] + [len(self.header or ())], default=0)

    def lines(self, width: int, unicode: bool) -> list[str]:
        if not self.columns:
            return []
        every = list(range(self.columns))
        laid = self._laid(every, width, unicode)
        if laid is not None:
            return laid
        keys = every[: min(self.keys, self.columns - 1)]
        rest = every[len(keys):]
        groups: list[list[int]] = []
        for column in rest:
            if groups and self._laid(keys + groups[-1] + [column], width, unicode) is not None:
                groups[-1].append(column)
            elif self._laid(keys + [column], width, unicode) is not None:
                groups.append([column])
            else:
                return self._records(width, unicode)
        groups = self._balanced(keys, rest, len(groups), width, unicode) or groups
        out: list[str] = []
        for group in groups:
            if out:
                out.append("")
            out.extend(self._laid(keys + group, width, unicode) or [])
        return out

    def _balanced(self, keys: list[int], rest: list[int], count: int, width: int,
                  unicode: bool) -> list[list[int]] | None:
        """`rest` cut into `count` groups of about the same width (greedy filling leaves a last
        group of one column), or None when such groups do not fit."""
        if count < 2:
            return None
        def natural(column: int) -> int:
            head = len(self.header[column]) if self.header and column < len(self.header) else 0
            cells = (self._cell(r, column) for r in self.rows)
            return max([head] + [len(c) if isinstance(c, str) else BAR_MIN for c in cells])

        sizes = [natural(c) for c in rest]
        target = sum(sizes) / count
        groups: list[list[int]] = [[]]
        filled = 0.0
        for column, size in zip(rest, sizes, strict=True):
            if groups[-1] and filled + size / 2 > target * len(groups) and len(groups) < count:
                groups.append([])
            groups[-1].append(column)
            filled += size
        if any(self._laid(keys + group, width, unicode) is None for group in groups):
            return None
        return groups

    # ------------------------------------------------------------------ one layout of some columns
    def _cell(self, row: Sequence[Cell], column: int) -> Cell:
        return row[column] if column < len(row) else ""

    def _laid(self, columns: list[int], width: int, unicode: bool) -> list[str] | None:
        """`columns` laid out within `width` (0: no limit), narrowed as far as needed: bars
        shorten, then headers take two lines, then a last column of text wraps; None when they
        cannot fit."""
        header = [(self.header[c] if self.header and c < len(self.header) else "") for c in columns]
        texts = [[self._cell(r, c) for c in columns] for r in self.rows]
        bars = {k for k in range(len(columns)) if any(isinstance(row[k], Bar) for row in texts)}
        cells = [max([len(cell) for row in texts if isinstance(cell := row[k], str)], default=0)
                 for k in range(len(columns))]
        fixed_gaps = self.indent + GAP * (len(columns) - 1)
        for heads in ([[h] for h in header], [_two_lines(h) for h in header]):
            head = [max(len(x) for x in h) for h in heads]
            plain = sum(max(head[k], cells[k]) for k in range(len(columns)) if k not in bars)
            room = (width - fixed_gaps - plain) if width else None
            widths = _bar_widths(bars, head, self.bar_width, room)
            if widths is None:
                continue
            full = [widths[k] if k in bars else max(head[k], cells[k]) for k in range(len(columns))]
            return self._draw(columns, heads, texts, full, None, unicode)
        # A last column of text (left-aligned, not a bar) wraps inside its column.
        last = len(columns) - 1
        if not width or not last or last in bars or columns[last] in self._right:
            return None
        heads = [_two_lines(h) for h in header]
        head = [max(len(x) for x in h) for h in heads]
        plain = sum(max(head[k], cells[k]) for k in range(last) if k not in bars)
        room = width - fixed_gaps - plain - max(TEXT_MIN, head[last])
        widths = _bar_widths(bars, head, self.bar_width, room)
        if widths is None:
            return None
        full = [widths[k] if k in bars else max(head[k], cells[k]) for k in range(last)]
        full.append(width - fixed_gaps - sum(full))
        return self._draw(columns, heads, texts, full, full[-1], unicode)

    def _draw(self, columns: list[int], heads: list[list[str]], texts: list[list[Cell]], widths: list[int],
              last_wraps: int | None, unicode: bool) -> list[str]:
        pad = " " * self.indent
        right = [c in self._right for c in columns]

        def row_lines(cells: list[str]) -> list[str]:
            parts = [cells]
            if last_wraps and len(cells[-1]) > widths[-1]:
                pieces = list(_pieces(cells[-1], widths[-1]))
                parts = [cells[:-1] + [pieces[0]]] + [[""] * (len(cells) - 1) + [p] for p in pieces[1:]]
            out = []
            for part in parts:
                shown = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(part, widths, right, strict=True)]
                out.append(pad + (" " * GAP).join(shown).rstrip())
            return out

        lines: list[str] = []
        if self.header:
            height = max(len(h) for h in heads)
            for n in range(height):
                # Bottom-aligned: a one-line header sits on the last line, next to the units.
                row = [h[n - (height - len(h))] if n >= height - len(h) else "" for h in heads]
                lines.extend(row_lines(row))
            lines.append(pad + (" " * GAP).join("-" * w for w in widths))
        for cells in texts:
            shown = [c.draw(widths[k], unicode) if isinstance(c, Bar) else c for k, c in enumerate(cells)]
            lines.extend(row_lines(shown))
        return lines

    # ------------------------------------------------------------------ the last resort: records
    def _records(self, width: int, unicode: bool) -> list[str]:
        pad = " " * self.indent
        keys = min(self.keys, self.columns)
        out: list[str] = []
        for row in self.rows:
            name = " ".join(c for c in (self._cell(row, k) for k in range(keys)) if isinstance(c, str) and c)
            if name:
                out.extend(wrap(pad + name, width))
            for column in range(keys, self.columns):
                cell = self._cell(row, column)
                head = self.header[column] if self.header and column < len(self.header) else ""
                lead = f"{pad}  {head}: " if head else f"{pad}  "
                value = cell.draw(max(1, min(self.bar_width, width - len(lead))), unicode) \
                    if isinstance(cell, Bar) else cell
                if value:
                    out.extend(wrap(lead + value, width))
        return out


def _bar_widths(bars: set[int], head: list[int], preferred: int, room: int | None) -> dict[int, int] | None:
    """The bar columns' widths: `preferred` each when `room` (the characters left for all of them;
    None: no limit) allows, else shared out evenly down to BAR_MIN (or the header); None when even
    that is too wide."""
    floors = {k: max(BAR_MIN, head[k]) for k in bars}
    if room is None:
        return {k: max(preferred, floors[k]) for k in bars}
    if sum(floors.values()) > room:
        return None
    widths = {k: max(preferred, floors[k]) for k in bars}
    while sum(widths.values()) > room:
        k = max(widths, key=lambda k: widths[k] - floors[k])
        widths[k] -= 1
    return widths


def _two_lines(header: str) -> list[str]:
    """A header on at most two lines, broken at the space that makes the longer line shortest (not
    between a figure and its unit: '> 1 MB' breaks as '>', '1 MB')."""
    words = header.split(" ")
    breaks = [k for k in range(1, len(words)) if not words[k - 1][-1:].isdigit()]
    if not breaks:
        return [header]
    best = min(breaks, key=lambda k: max(len(" ".join(words[:k])), len(" ".join(words[k:]))))
    return [" ".join(words[:best]), " ".join(words[best:])]


def _pieces(text: str, width: int) -> Iterator[str]:
    """`text` in pieces of at most `width` characters, broken at spaces (a longer word is cut)."""
    while len(text) > width:
        at = text.rfind(" ", 0, width + 1)
        if at <= 0:
            yield text[: width - 1] + "…"
            return
        yield text[:at]
        text = text[at:].lstrip(" ")
    yield text


# ------------------------------------------------------------------------------------- help

#: Help texts fit an 80-column terminal (less -S chops nothing), as cqlsh's own mostly do.
HELP_WIDTH = 79


def fill(text: str, width: int = HELP_WIDTH, indent: int = 10) -> str:
    """`text` wrapped at spaces into indented lines of at most `width` characters (a long word
    stays whole): help text built from declared names. textwrap would cost start-up time."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and indent + len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(" " * indent + one for one in lines)


def plural(n: int, word: str) -> str:
    """'1 value', '2,048 values': a count and its noun (a regular plural)."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


#: How alike (difflib's ratio, case aside) a declared name must be to a word typed to be named as
#: what was meant: 'zstdd' finds zstd (0.89), 'COMPRESION' COMPRESSION (0.95), 'lz' lz4 (0.8);
#: 'json' is not taken for bson (0.75): it is no step at all.
NEAR = 0.8


def nearest(word: str, names: Iterable[str]) -> str | None:
    """The declared name nearest to `word`, a typo of it (a command, a codec), as declared; None
    when none is near (NEAR) or `word` is one of them."""
    import difflib

    spelled = {name.lower(): name for name in names}
    typed = word.lower()
    if typed in spelled:
        return None
    # Two letters swapped ('zsdt', 'PAYLAOD', 'FORM'): one slip, however short the word, and nearer
    # than a name merely alike ('FORM' is FROM, not FORMAT).
    found = [name for name in spelled if _swapped(typed, name)][:1] or \
        difflib.get_close_matches(typed, list(spelled), n=1, cutoff=NEAR)
    return spelled[found[0]] if found else None


def _swapped(typed: str, name: str) -> bool:
    """`typed` is `name` with two neighbouring letters swapped."""
    if len(typed) != len(name):
        return False
    differ = [i for i, (a, b) in enumerate(zip(typed, name, strict=True)) if a != b]
    return (len(differ) == 2 and differ[1] == differ[0] + 1
            and typed[differ[0]] == name[differ[1]] and typed[differ[1]] == name[differ[0]])


def unknown(what: str, word: str, valid: Sequence[str], also: str = "", within: str = "") -> str:
    """The one line for `word` typed where one of `valid` goes (a codec, a decompression mode, a
    compression to rewrite to, a statement's second word): the nearest of them when one is near,
    then the valid words of that place and no others, as declared (`also`: what else goes there,
    in words; `within`: what it was typed in): "unknown codec 'zsdt' (did you mean zstd?); valid:
    snappy, lz4, ...". Every place a word is chosen from a list says it so."""
    near = nearest(word, valid)
    meant = f" (did you mean {near}?)" if near else ""
    inside = f" in {within!r}" if within else ""
    other = f", or {also}" if also else ""
    return f"unknown {what} {word!r}{inside}{meant}; valid: {', '.join(valid)}{other}"
