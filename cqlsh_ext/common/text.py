"""Text the shell writes for people: reports laid out for the screen, messages wrapped at words,
help text filled to its width, counted nouns. The one place lines are wrapped: report texts,
messages and help texts are written as whole lines and paragraphs, never broken by hand (a
terminal breaks a long line inside a word). Standard library only (start-up imports it through
the command modules' help texts)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import IO

__all__ = ["HELP_WIDTH", "fill", "fit", "message", "plural", "say", "screen_width"]

#: Columns set apart by two spaces or more: three such gaps make a line a table row.
_COLUMN_GAP = re.compile(r"\S {2,}(?=\S)")
#: The first such gap of a line ("  key  text"): its text continues under the text after it.
_FIRST_GAP = re.compile(r"^ *\S+(?: \S+)*? {2,}(?=\S)")
#: What a continuation under the text after the first gap must leave for the text, else it
#: continues under the line's start.
_HANGING_ROOM = 24


def fit(lines: Iterable[str], width: int, cut: bool = True) -> Iterator[str]:
    """Report lines for a screen `width` columns wide (0: as they are), as a person reads them.

    A line of text longer than the screen wraps at a space, or after a comma when that leaves the
    line at least half full (so a `key value` field stays whole); it continues under its text: after
    a bullet's `- `, under the text after the first gap of two spaces (`key  text`), else four
    columns in from its start. A word wider than the room (a payload preview) is cut with '…', or,
    with `cut` False (a message: a file name, a host), left whole on its line. Table rows (three
    such gaps or more) stay whole: a pager scrolls them, wrapping would break their columns. Report
    texts are written as whole lines, never broken by hand: this is the one place they are wrapped."""
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
                if cut:
                    text = text[: width - 1] + "…"
                    break
                end = text.find(" ", start)
                if end < 0:
                    break
                at = end  # the word whole, the rest on the next line

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


def screen_width(out: IO[str]) -> int:
    """The width of the terminal `out` writes to, 0 when it is no terminal: a pipe or a file gets
    whole lines (the one-line messages scripts read), a person the lines fitted to the screen."""
    import os

    try:
        if not out.isatty():
            return 0
        return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError):  # a stand-in without a descriptor (a pager's)
        return 0


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
