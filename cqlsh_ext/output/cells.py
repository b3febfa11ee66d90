"""Formatted cells shared by the blob display (output.display) and the layouts (output.layout):
display makes these cells, the layouts cut them."""

from __future__ import annotations

from typing import Any

from cqlshlib.displaying import FormattedValue

__all__ = ["DecodedText", "NotedValue"]


class DecodedText(str):
    """Text read out of a stored value that a text column of cqlsh's layouts shows (a payload path's
    or an aggregate's value: render.terminal): its cell is escaped as the blob display escapes a
    decoded value's text (output.display.decoded_text_cell: bidirectional controls too), where
    cqlsh's own text cells escape control characters only."""

    __slots__ = ()


class NotedValue(FormattedValue):  # type: ignore[misc]  # cqlsh ships no types
    """A value followed by a note that says more than the value does (hex, and why it was not
    decoded): a cut shortens the value and keeps the note, as far as the width allows."""

    def __init__(self, value: Any, note: Any) -> None:
        super().__init__(f"{value.strval} {note.strval}", f"{value.coloredval} {note.coloredval}",
                         value.displaywidth + 1 + note.displaywidth)
        self.value = value
        self.note = note
