"""Turn a blob into the cell cqlsh prints: decoded and labelled, or hex with a reason.

Conventions a user can rely on (docs/interactive.md, "Reading the output"):
- a decoded value starts with its chain in square brackets: `[<codec>] {"id": ...}`,
  `[<codec>><format>] text`, `[<codec>, first 4.0 MiB of 1.0 TiB] ...` when the output cap cut it;
- a value stored as text is `[text] ...`; a value in no known format is its `0x...` hex exactly
  as stock cqlsh prints it; one that looks like a known format but fails (or fails the codec
  named by -d) adds `(reason)`;
- decoded binary payloads are `[codec] 0x... (N bytes)`.
The label is coloured on a terminal and plain in scripts; table alignment uses display widths.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Sequence
from typing import Any

import wcwidth
from cqlshlib.displaying import ANSI_RESET, CYAN, RED, FormattedValue

from cqlsh_ext.common.text import ELLIPSIS
from cqlsh_ext.common.units import human_size
from cqlsh_ext.output.cells import NotedValue
from cqlsh_ext.output.row_limit import VALUES
from cqlsh_ext.payload.budget import DEFAULT as DEFAULT_BUDGET
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.held_views import HeldView
from cqlsh_ext.payload.places import Engines
from cqlsh_ext.payload.unwrap import failed
from cqlsh_ext.payload.view import BINARY, FAILED, RECORD, TEXT, UNKNOWN, BlobView
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.upstream import seams

color_text, _controlchars_re, _show_control_chars = seams.text_formatting()
#: The bidirectional controls (Unicode's Bidi_Control: ALM, LRM, RLM, the embeddings and overrides
#: U+202A-U+202E, the isolates U+2066-U+2069): a terminal reorders what follows them (a U+202E in a
#: stored value turns the rest of its line around), so a cell shows them escaped, as cqlsh shows a
#: control character.
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI_RE = re.compile(f"[{_BIDI_CONTROLS}]")
#: What a decoded value's cell escapes: cqlsh's control characters (C0, DEL, C1 and NBSP: its
#: unicode_controlchars_re, a character class), the bidirectional controls and the lone surrogates
#: (a decoded document's "\ud800": no character a terminal can show, nor UTF-8 write), each spelt as
#: cqlsh spells one (`\x1b`, `\u202e`, `\ud800`: _show_control_chars, in red on a terminal).
_ESCAPED_RE = re.compile(_controlchars_re.pattern[:-1] + _BIDI_CONTROLS + "\ud800-\udfff]")
LABEL_COLOR = CYAN
REASON_COLOR = RED


def label_of(view: BlobView | CoreText) -> str:
    """'[<codec>]', '[<codec>><format>]', '[<codec>, first 4.0 MiB of 1.0 TiB]': the view's short
    label, and where the cap cut it."""
    chain = view.short_label
    cut = view.truncated_layer
    if cut is not None:
        shown = human_size(cut.output_size)
        total = f" of {human_size(cut.declared_size)}" if cut.declared_size else ""
        chain += f", first {shown}{total}"
    return f"[{chain}]"


def _escape(text: str) -> str:
    """cqlsh's text escaping: backslashes doubled, control characters (and bidirectional controls:
    _ESCAPED_RE) shown as escapes."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if not text.isprintable():
        text = _ESCAPED_RE.sub(_show_control_chars, text)
    return text


def decoded_text_cell(text: str, colormap: Any) -> FormattedValue:
    """A DecodedText's cell (output.cells): escaped as a decoded value's text is, coloured as cqlsh
    colours a text cell (its escapes in red)."""
    body = _escape(text)
    return color_text(body, colormap, _width(body))


def _width(text: str) -> int:
    # wcswidth walks every character in Python: only needed beyond ASCII.
    if text.isascii():
        return len(text)
    width = wcwidth.wcswidth(text)
    return width if width >= 0 else len(text)


def _cut(text: str, limit: int) -> str:
    if limit and len(text) > limit:
        kept = text[: max(limit - 1, 1)]
        # A body cut already inside (a nested value) keeps one mark, not two.
        return (kept[:-1] if kept.endswith(ELLIPSIS) else kept) + ELLIPSIS
    return text


def pretty_json(view: BlobView, budget: Budget = DEFAULT_BUDGET) -> tuple[str, str | None] | None:
    """(indented JSON, None) when a text view's payload is a JSON object or array (the view's
    tree, parsed once), else None; indenting stays within the value's budget: (what fits, the
    reason) past it."""
    value = view.tree
    if value is None:
        return None
    from cqlsh_ext.payload.formats.tree import fits, render_walk  # loaded with the first record

    # JSON text has no back-references: a small text is trusted without a first count. Past the
    # count, the bounded walk (not render_cut, which would count the tree again).
    if budget.trusts(len(view.text or ""), 2) or fits(value, budget, 2):
        try:
            return json.dumps(value, indent=2, ensure_ascii=False), None
        except (RecursionError, ValueError):
            pass
    return render_walk(value, 2, budget)


def compact_json(view: BlobView) -> str:
    """A text view's multi-line JSON on one line for a table cell; other text unchanged. Never
    longer than the text, so no budget is needed; nesting too deep for json stays as stored."""
    text = view.text or ""
    if "\n" not in text:
        return text
    value = view.tree
    if value is None:
        return text
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        return text


class CoreText:
    """A text cell the native core decoded (BlobDisplay.prepare): its display label, its text (its
    first characters when the cell is narrower), clean, not cut; read by _format as the view's
    parts it reads for such a cell."""

    __slots__ = ("short_label", "text")
    kind = TEXT
    clean = True
    truncated_layer = None
    reason = None
    object_class = None

    def __init__(self, short_label: str, text: str) -> None:
        self.short_label = short_label
        self.text = text


class CoreRaw:
    """A value the native core read as no known format (with a quiet reason): its hex, as cqlsh
    prints it."""

    __slots__ = ("stored",)
    kind = UNKNOWN
    quiet = True
    reason = None

    def __init__(self, stored: bytes) -> None:
        self.stored = stored


Cell = BlobView | CoreText | CoreRaw


class BlobDisplay:
    """Formats the blob cells of one result page (cqlsh_ext.output.table binds it to each blob's place)."""

    def __init__(
        self, settings: DisplaySettings, interactive: bool, expanded: bool, screen_room: int = 0
    ) -> None:
        self.mode = settings.mode
        self.cap = settings.cap
        self.width = settings.effective_width(interactive)
        if self.width and screen_room and settings.max_field_width is None:
            # On a terminal a cell wider than the screen is unreadable anyway: one screen line at most
            # (room left beside the longest column name and the " | " of vertical layout).
            self.width = min(self.width, max(screen_room, 40))
        self.expanded = expanded
        self.budget = Budget.for_cap(self.cap)
        #: A value engine per place (a column setting is its mode), and the views prepare()
        #: decoded ahead: per place, the page's values in order with their views.
        self._engine = Engines(settings.decoding())
        self._prepared: dict[Any, deque[tuple[Any, Cell]]] = {}

    def prepare(self, place: Any, values: Sequence[Any], names: Sequence[str] = (),
                rows: Sequence[Sequence[Any]] = ()) -> None:
        """Decode a page of one place's values together (output.table's pre-pass, before cqlsh
        formats the page cell by cell): each cell then takes its view from here. Where the engine
        reads the page whole (ValueEngine.page_cells: one call on the native core), a clean text
        that the cap did not cut, or a value in no known format, is a cell as it comes (CoreText,
        CoreRaw: its label and text, or its hex); the other values' cells are their views. Where a
        sibling column picks the chain, each value is read with its row's sibling (`names`, `rows`:
        the page's column names and rows)."""
        kept = [at for at, v in enumerate(values) if isinstance(v, (bytes, bytearray, memoryview))]
        blobs = [values[at] for at in kept]
        stored = [bytes(v) for v in blobs]
        engine = self._engine(place)
        cells: list[Cell]
        if engine.choice is not None and rows:  # the chain picked by a sibling column (its rows')
            given = self._engine.with_siblings(place, stored, names, [rows[at] for at in kept])
            cells = list(engine.views(given))
        else:
            cells = list(engine.views(stored)) if self.expanded else self._cells(engine, stored)
        self._prepared[place] = deque(zip(blobs, cells, strict=True))

    def _cells(self, engine: Any, values: list[bytes]) -> list[Cell]:
        """The page's cells from the engine (ValueEngine.page_cells)."""
        # A text longer than the cell is cut there (_format cuts it to at most the cell's width,
        # at least 8 characters): one more character says that it goes on.
        limit = max(self.width, 8) + 1 if self.width else 0
        cells: list[Cell] = engine.page_cells(values, limit, CoreText, CoreRaw)
        return cells

    def _view(self, val: Any, value: bytes, place: Any) -> Cell:
        prepared = self._prepared.get(place)
        if prepared:
            ahead, view = prepared[0]
            if ahead is val or ahead == value:
                prepared.popleft()
                return view
            prepared.clear()  # cells came in another order than the page's: decoded one by one
        return self._engine(place).view(value)

    def __call__(self, val: bytes | BlobView, colormap: Any, quote: bool = False, place: Any = None,
                 **_: Any) -> FormattedValue:
        if isinstance(val, BlobView):  # decoded already (a payload query's answer)
            return self._shown(self._held_cell(val), val.stored, colormap, quote)
        value = val if type(val) is bytes else bytes(val)
        try:
            view = self._view(val, value, place)
        except Exception as err:  # the last-resort boundary: this cell shows why, the result goes on
            VALUES.count(FAILED)
            return self._raw(failed(value, err), colormap, bool(colormap["reset"]))
        return self._shown(view, value, colormap, quote)

    def _held_cell(self, view: BlobView) -> Cell:
        """A value a reading read already, as a plain SELECT's page shows it (prepare: the core's
        page_cells): a clean text the native core read (payload.held_views.HeldView) is the same
        CoreText, its display label and its text; any other view is its own cell."""
        if type(view) is HeldView and view.kind == TEXT and view.clean and not self.expanded:
            return CoreText(view.short_label, view.text or "")
        return view

    def cells(self, place: Any, values: Sequence[bytes], colormap: Any) -> list[FormattedValue]:
        """The cells of a top-level blob column's values of the page (the bytes prepare() was
        handed for `place`, in order), as calling this display on each value gives them, without
        a call through cqlsh's formatter a cell (output.table formats such a column at once)."""
        prepared = self._prepared.get(place)
        if not prepared or len(prepared) != len(values):
            return [self(value, colormap, place=place) for value in values]
        cells: list[FormattedValue] = []
        for val, (ahead, view) in zip(values, prepared, strict=True):
            if ahead is not val:  # not the page prepare() was handed: each value on its own
                prepared.clear()
                return cells + [self(value, colormap, place=place) for value in values[len(cells):]]
            cells.append(self._shown(view, val, colormap, False))
        prepared.clear()
        return cells

    def _shown(self, view: Cell, value: bytes, colormap: Any, quote: bool) -> FormattedValue:
        """A view's cell; a failure to format it is the cell's own (its hex and why)."""
        VALUES.count(view.kind)  # (the core's cells carry theirs too)
        if isinstance(view, CoreRaw):
            return self._raw(view, colormap, bool(colormap["reset"]))
        try:
            return self._format(view, colormap, quote)
        except Exception as err:
            stored = view.stored if isinstance(view, BlobView) else value  # (a CoreText's value)
            return self._raw(failed(stored, err), colormap, bool(colormap["reset"]))

    def _format(self, view: BlobView | CoreText, colormap: Any, quote: bool) -> FormattedValue:
        colored = bool(colormap["reset"])
        if type(view) is CoreText and not quote and not self.width:
            # A script's table's most common cell (-e, -f, a pipe; coloured on a terminal): a whole
            # clean text the core decoded: its label and body, without the steps below (the label
            # of a cut layer, notes, a width to cut at).
            body = self._text_body(view, quote)[0]
            return self._assemble(f"[{view.short_label}]", body, [], colormap, colored)
        if view.kind == UNKNOWN or view.kind == FAILED:
            assert isinstance(view, BlobView)
            return self._raw(view, colormap, colored)
        label = label_of(view)
        cut: str | None = None
        if view.kind == TEXT:
            text, cut = self._text_body(view, quote)
        elif view.kind == RECORD:
            assert isinstance(view, BlobView)
            text, cut = self._structured_body(view, quote)
        # (text, colour) pairs shown after the value: sizes in the blob colour, failures in red.
        notes: list[tuple[str, str]] = []
        if view.kind == BINARY and isinstance(view, BlobView) and view.object_class is None:
            notes.append((f"({len(view.data)} bytes)", colormap["blob"]))
        if view.reason:
            notes.append((f"({_escape(view.reason)})", REASON_COLOR))  # reasons may quote stored bytes
        if cut:
            notes.append((f"(cut: {cut})", REASON_COLOR))
        limit = 0 if self.expanded and not quote else self.width
        room = 0
        if limit:
            taken = len(label) + 1 + sum(len(note) + 1 for note, _ in notes) + (2 if quote else 0)
            room = max(limit - taken, 8)
        if view.kind in (TEXT, RECORD):
            body = _cut(text, room)
        elif view.object_class is not None:
            # an object its serialization stream's reader could not read (the reason is in the notes)
            body = f"{_escape(view.object_class)} (not deserialized)"  # a class name is stored data too
        else:
            assert isinstance(view, BlobView)
            # Hex only what can be shown: a capped payload may be megabytes.
            shown = view.data[: room // 2 + 1] if room else view.data
            body = _cut("0x" + shown.hex(), room)
        if quote:
            body = "'" + body.replace("'", "''") + "'"
        return self._assemble(label, body, notes, colormap, colored)

    def _structured_body(self, view: BlobView, quote: bool) -> tuple[str, str | None]:
        """The record as text, and why it was cut (None when whole)."""
        from cqlsh_ext.payload.formats.tree import render_cut  # loaded with the first record

        indent = 2 if self.expanded and not quote else None
        size = view.tree_input_size
        trusted = size is not None and self.budget.trusts(size, indent)
        text, cut = render_cut(view.record, indent, self.budget, trusted)
        if indent:
            return "\n".join(_escape(line) for line in text.split("\n")), cut
        # Rendered strings have their control characters escaped already; only non-ASCII text can
        # hold what cqlsh escapes besides (C1 controls).
        return (text.replace("\\", "\\\\") if text.isascii() else _escape(text)), cut

    def _text_body(self, view: BlobView | CoreText, quote: bool) -> tuple[str, str | None]:
        if self.expanded and not quote and isinstance(view, BlobView):
            pretty = pretty_json(view, self.budget)
            if pretty is not None:
                return "\n".join(_escape(line) for line in pretty[0].split("\n")), pretty[1]
        text = view.text or ""
        if view.clean:  # no control character: at most a bidirectional control to escape
            if text.isascii() or _BIDI_RE.search(text) is None:
                return (text.replace("\\", "\\\\") if "\\" in text else text), None
            return _escape(text), None
        assert isinstance(view, BlobView)  # (a CoreText is clean)
        return _escape(compact_json(view)), None

    def _raw(self, view: BlobView | CoreRaw, colormap: Any, colored: bool) -> FormattedValue:
        hexed = "0x" + view.stored.hex()
        if view.quiet:  # plain binary: exactly as cqlsh
            return FormattedValue(hexed, colormap["blob"] + hexed + colormap["reset"] if colored else hexed)
        note = f"({_escape(view.reason or '')})"  # not quiet: a reason is there
        hexed = _cut(hexed, max(self.width - len(note) - 1, 8) if self.width else 0)
        if not colored:
            return NotedValue(FormattedValue(hexed), FormattedValue(note))
        # The reason says more than the hex: a table column cut narrower keeps it (NotedValue).
        return NotedValue(FormattedValue(hexed, f"{colormap['blob']}{hexed}{ANSI_RESET}", len(hexed)),
                          FormattedValue(note, f"{REASON_COLOR}{note}{ANSI_RESET}", len(note)))

    def _assemble(
        self, label: str, body: str, notes: list[tuple[str, str]], colormap: Any, colored: bool
    ) -> FormattedValue:
        suffix = "".join(" " + note for note, _ in notes)
        plain = f"{label} {body}{suffix}"
        if "\n" in body:
            width = max(_width(line) for line in plain.split("\n"))
        else:
            width = _width(plain)
        if not colored:
            return FormattedValue(plain, plain, width)
        if "\\" in body:
            text = color_text(body, colormap, _width(body))
            # color_text renders escaped backslashes as single ones when coloured.
            body_colored, width = text.coloredval, width - (_width(body) - text.displaywidth)
        else:  # what color_text gives a body without a backslash (its changes start at one)
            body_colored = colormap["text"] + body + colormap["reset"]
        coloredval = f"{LABEL_COLOR}{label}{ANSI_RESET} {body_colored}"
        coloredval += "".join(f" {color}{note}{ANSI_RESET}" for note, color in notes)
        return FormattedValue(plain, coloredval, width)
