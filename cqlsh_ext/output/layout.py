"""Laying a page of formatted cells out to a width: cqlsh's table, with cells cut or wrapped.

cqlsh pads every column to its widest cell. On a terminal that makes a table of long values wrap
over many screen lines; in a script, one long value pads every other row of its column with
thousands of spaces. Here:

- `fit_widths`: column widths that fit a screen: narrow columns keep their width, the widest
  ones share what is left (at least MIN_COLUMN each, never narrower than the column's name);
  with `keep_short`, columns whose values fit in SHORT_VALUE are never cut (an id, a status, a
  date cut by a few characters says nothing, or the wrong thing); None when that cannot fit
  (then the result is shown vertically);
- `script_widths`: cqlsh's widths, except that cells wider than a bound do not count; such a cell
  is written whole and the other rows keep their alignment;
- `print_table`: cqlsh's table layout (the header, the `-+-` rule, right-aligned cells) with
  cells cut with `…` (cut) or continued on further lines (wrap) where they exceed their column,
  or written whole (scripts).

Colours survive a cut: the cut walks the coloured text, copying escape sequences and counting
only what is displayed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import wcwidth
from cqlshlib.displaying import ANSI_RESET, FormattedValue

from cqlsh_ext.common.text import ELLIPSIS
from cqlsh_ext.output.cells import NotedValue

#: A column is never cut narrower than this (or its name), so a cut cell still says something.
MIN_COLUMN = 12
#: A column whose values all fit in this many columns (ids, statuses, names, dates, numbers) is
#: shown whole or not at all: cut, such a value becomes ambiguous ('ORD-2024001…').
SHORT_VALUE = 2 * MIN_COLUMN
#: -e/-f/piped output without a terminal: a cell wider than this does not widen its column.
SCRIPT_CELL_BOUND = 120

_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")

#: How a cell too wide for its column is shown: "cut", "wrap", or "whole" (scripts).
CUT, WRAP, WHOLE = "cut", "wrap", "whole"


def table_width(widths: Sequence[int]) -> int:
    """Screen columns of cqlsh's table: rows ' a | b | c', and the rule under the header one
    wider: '---+---+---' with a dash on each end."""
    return 2 + sum(widths) + 3 * (len(widths) - 1)


def natural_widths(names: Sequence[Any], rows: Sequence[Sequence[Any]] | None) -> list[int]:
    widths = [n.displaywidth for n in names]
    for row in rows or ():
        for i, cell in enumerate(row):
            if cell.displaywidth > widths[i]:
                widths[i] = cell.displaywidth
    return widths


def fit_widths(names: Sequence[Any], rows: Sequence[Sequence[Any]], screen: int,
               keep_short: bool = False, whole: Sequence[bool] = ()) -> list[int] | None:
    """Widths that fit `screen` columns, or None when the columns cannot fit even cut (with
    `keep_short`: without cutting a column of short values; never without cutting a column
    `whole` marks: a key, a uuid, which a cut makes useless in a WHERE: whole_columns)."""
    natural = natural_widths(names, rows)
    room = screen - table_width([0] * len(natural))
    if sum(natural) <= room:
        return natural
    floor = [min(w, max(n.displaywidth, MIN_COLUMN)) for n, w in zip(names, natural, strict=True)]
    if keep_short:
        floor = [w if w <= SHORT_VALUE else f for w, f in zip(natural, floor, strict=True)]
    if whole:
        floor = [w if keep else f for w, f, keep in zip(natural, floor, whole, strict=True)]
    if sum(floor) > room:
        return None
    # The largest cap c with sum(min(natural, max(floor, c))) <= room: narrow columns keep their
    # width, the wide ones are cut to the same width.
    low, high = 0, max(natural)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(w, max(f, mid)) for w, f in zip(natural, floor, strict=True)) <= room:
            low = mid
        else:
            high = mid - 1
    widths = [min(w, max(f, low)) for w, f in zip(natural, floor, strict=True)]
    # What rounding left goes to the first cut columns, one each.
    spare = room - sum(widths)
    for i, w in enumerate(natural):
        if spare <= 0:
            break
        if widths[i] < w:
            widths[i] += 1
            spare -= 1
    return widths


#: Types whose values are copied into a WHERE whole, never cut (with the table's key columns).
WHOLE_TYPES = frozenset({"uuid", "timeuuid"})


def whole_columns(names: Sequence[str], types: Sequence[Any] | None, table_meta: Any) -> tuple[bool, ...]:
    """Per column of a result: shown whole at any width, a partition or clustering key of the
    table (its metadata, when the result is one table's) or a uuid or timeuuid (the driver's
    types): a cut one cannot be copied into a WHERE."""
    keys: set[str] = set()
    if table_meta is not None:
        keys = {column.name for column in (*getattr(table_meta, "partition_key", ()),
                                           *getattr(table_meta, "clustering_key", ()))}
    kinds = [getattr(t, "typename", None) for t in types or ()]
    kinds += [None] * (len(names) - len(kinds))
    return tuple(name in keys or kind in WHOLE_TYPES for name, kind in zip(names, kinds, strict=False))


def script_widths(names: Sequence[Any], rows: Sequence[Sequence[Any]] | None, bound: int) -> list[int]:
    """cqlsh's column widths, counting only cells up to `bound` wide."""
    widths = [n.displaywidth for n in names]
    for row in rows or ():
        for i, cell in enumerate(row):
            if widths[i] < cell.displaywidth <= bound:
                widths[i] = cell.displaywidth
    return widths


def _char_width(ch: str) -> int:
    if ch.isascii():
        return 1
    width = wcwidth.wcwidth(ch)
    return max(width, 0)


#: What a cut NotedValue keeps of its value at least ('0x…'), before the note is cut too.
_NOTED_VALUE_MIN = 3


def cut(cell: Any, width: int, color: bool) -> Any:
    """`cell` (a FormattedValue) shortened to `width` display columns, ending with '…'."""
    if cell.displaywidth <= width:
        return cell
    if isinstance(cell, NotedValue) and width >= _NOTED_VALUE_MIN + 2:
        return _cut_noted(cell, width, color)
    text = cell.coloredval if color else cell.strval
    pieces, used, i = [], 0, 0
    while i < len(text):
        escape = _ESCAPE.match(text, i)
        if escape:
            pieces.append(escape.group())
            i = escape.end()
            continue
        w = _char_width(text[i])
        if used + w > width - 1:
            break
        pieces.append(text[i])
        used += w
        i += 1
    # The cell was cut already (a nested blob, a long hex value): one mark. Look past the escape
    # sequence that may close the cut part's colour.
    last = next((k for k in range(len(pieces) - 1, -1, -1) if not pieces[k].startswith("\x1b")), None)
    if last is not None and pieces[last] == ELLIPSIS:
        del pieces[last]
        used -= 1
    shown = "".join(pieces) + ELLIPSIS + (ANSI_RESET if color and "\x1b[" in text else "")
    plain = _ESCAPE.sub("", shown) if color else shown
    return FormattedValue(plain, shown, used + 1)


def _cut_noted(cell: NotedValue, width: int, color: bool) -> Any:
    if cell.note.displaywidth <= width < cell.note.displaywidth + 1 + _NOTED_VALUE_MIN:
        return cell.note  # the note whole rather than '0x…' and part of it
    note_room = min(cell.note.displaywidth, width - _NOTED_VALUE_MIN - 1)
    value = cut(cell.value, width - note_room - 1, color)
    note = _cut_words(cell.note, note_room, color)
    shown = f"{value.coloredval} {note.coloredval}" if color else f"{value.strval} {note.strval}"
    return FormattedValue(f"{value.strval} {note.strval}", shown, value.displaywidth + 1 + note.displaywidth)


def _text_width(text: str) -> int:
    return sum(_char_width(ch) for ch in text)


#: What a note cut at a word ends with besides '…': a dangling opener or separator says nothing.
_DANGLING = " ,;:(-"


def _cut_words(note: Any, width: int, color: bool) -> Any:
    """A note '(reason)' cut to `width` at a word boundary, its tail words replaced by '…' and its
    parenthesis closed: '(zlib stream needs a preset dictionary…)'. A first word wider than that
    is cut where it must."""
    if note.displaywidth <= width:
        return note
    text = note.strval
    opened = text.startswith("(") and text.endswith(")")
    inner = text[1:-1] if opened else text
    room = width - 1 - (2 if opened else 0)  # '…', and '(' ')'
    kept = ""
    for i, ch in enumerate(inner):
        if ch == " ":
            words = inner[:i].rstrip(_DANGLING)
            if _text_width(words) > room:
                break
            kept = words
    if not kept or room < 1:
        return cut(note, width, color)
    plain = f"({kept}{ELLIPSIS})" if opened else kept + ELLIPSIS
    opener = _ESCAPE.match(note.coloredval) if color else None
    shown = f"{opener.group()}{plain}{ANSI_RESET}" if opener else plain
    return FormattedValue(plain, shown, _text_width(plain))


def wrap(cell: Any, width: int, color: bool) -> list[Any]:
    """`cell` split into lines of at most `width` display columns (colours carried over)."""
    if cell.displaywidth <= width:
        return [cell]
    text = cell.coloredval if color else cell.strval
    lines: list[Any] = []
    pieces: list[str] = []
    active = ""  # the escape sequence in force, re-opened on each continuation line
    used, i = 0, 0

    def close() -> None:
        shown = "".join(pieces) + (ANSI_RESET if color and active else "")
        lines.append(FormattedValue(_ESCAPE.sub("", shown), shown, used))

    while i < len(text):
        escape = _ESCAPE.match(text, i)
        if escape:
            pieces.append(escape.group())
            active = "" if escape.group() == ANSI_RESET else escape.group()
            i = escape.end()
            continue
        w = _char_width(text[i])
        if used + w > width:
            close()
            pieces, used = [active] if active else [], 0
        pieces.append(text[i])
        used += w
        i += 1
    close()
    return lines


def print_table(write: Callable[[str], None], names: Sequence[Any], rows: Sequence[Sequence[Any]] | None,
                widths: Sequence[int], with_header: bool, tty: bool, color: bool, overflow: str) -> None:
    """cqlsh's Shell.print_formatted_result with `widths` given and cells that exceed them cut,
    wrapped or written whole (`overflow`). seams.COPIED pins the cqlsh source this follows."""
    if with_header:
        header = " | ".join(name.ljust(w, color=color) for name, w in zip(names, widths, strict=True))
        write(" " + header.rstrip())
        write("-" + "-+-".join("-" * w for w in widths) + "-")
    if rows is None:
        write("")
        return
    for row in rows:
        if overflow == WRAP:
            _write_wrapped(write, row, widths, color)
            continue
        cells = [cut(cell, w, color) for cell, w in zip(row, widths, strict=True)] if overflow == CUT else row
        # FormattedValue.rjust inlined for a FormattedValue itself (its pad: `w - displaywidth`
        # spaces, none when negative); the line's leading space joined to its first cell, so a
        # long line is copied once
        parts = [" " * (w - cell.displaywidth) + (cell.coloredval if color else cell.strval)
                 if type(cell) is FormattedValue else cell.rjust(w, color=color)
                 for cell, w in zip(cells, widths, strict=True)]
        parts[0] = " " + parts[0]
        write(" | ".join(parts))
    if tty:
        write("")


def _write_wrapped(write: Callable[[str], None], row: Sequence[Any], widths: Sequence[int],
                   color: bool) -> None:
    columns = [wrap(cell, w, color) for cell, w in zip(row, widths, strict=True)]
    blank = FormattedValue("")
    for line_no in range(max(len(c) for c in columns)):
        parts = []
        for lines, w in zip(columns, widths, strict=True):
            if len(lines) == 1:  # a cell on one line keeps cqlsh's right alignment
                part = lines[0].rjust(w, color=color) if line_no == 0 else blank.ljust(w)
            else:
                part = lines[line_no].ljust(w, color=color) if line_no < len(lines) else blank.ljust(w)
            parts.append(part)
        write((" " + " | ".join(parts)).rstrip() if line_no else " " + " | ".join(parts))


def print_vertical(write: Callable[[str], None], names: Sequence[Any], rows: Sequence[Sequence[Any]],
                   row_count_offset: int, screen: int | None, color: bool, overflow: str,
                   whole: Sequence[bool] = ()) -> None:
    """cqlsh's Shell.print_formatted_result_vertically; with `screen`, values and the rule fit it,
    but for the `whole` columns' (whole_columns: a key, a uuid), written whole on their line, which
    the terminal wraps: a cut one cannot be copied into a WHERE.

    Multi-line values (indented JSON under EXPAND ON) continue under the value column.
    """
    name_width = max(n.displaywidth for n in names)
    value_width = max((line_width(v) for row in rows for v in row), default=0)
    room = None if screen is None else max(screen - name_width - 4, MIN_COLUMN)
    # The rule ('-name-+-value-') is one wider than the lines under it, as in cqlsh.
    rule_width = value_width if room is None else min(value_width, room - 1)
    indent = " " * (name_width + 4)
    for i, row in enumerate(rows):
        write(f"@ Row {row_count_offset + i + 1}")
        write(f"-{'-' * name_width}-+-{'-' * rule_width}-")
        for at, (name, value) in enumerate(zip(names, row, strict=True)):
            lines = [value] if "\n" not in value.strval else _split_lines(value, color)
            kept = at < len(whole) and whole[at]
            shown: list[Any] = []
            for line in lines:
                if room is None or kept or line.displaywidth <= room:
                    shown.append(line)
                elif overflow == WRAP:
                    shown.extend(wrap(line, room, color))
                else:
                    shown.append(cut(line, room, color))
            column = name.ljust(name_width, color=color)
            first, *rest = shown
            write(" " + column + " | " + first.ljust(first.displaywidth, color=color))
            for line in rest:
                write(indent + line.ljust(line.displaywidth, color=color))
        write("")


def line_width(value: Any) -> int:
    if "\n" not in value.strval:
        return int(value.displaywidth)
    return max(len(line) for line in value.strval.split("\n"))


def _split_lines(value: Any, color: bool) -> list[Any]:
    plain = value.strval.split("\n")
    colored = value.coloredval.split("\n") if color else plain
    if len(colored) != len(plain):
        colored = plain
    return [FormattedValue(p, c, wcwidth.wcswidth(p) if not p.isascii() else len(p))
            for p, c in zip(plain, colored, strict=True)]
