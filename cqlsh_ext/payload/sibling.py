"""A chain picked per row by another column of the row: `DECODE 'ks.t.data' BY content_encoding AS
'zstd -> zstd>json, gz -> gzip>json'`.

Applications keep `content_encoding` or `payload_format` beside the blob. A column setting whose
text starts with `by` (payload.spec parses it into a Spec with a `choice`) names that sibling
column and maps each of its values to a chain:

    by content_encoding: zstd -> zstd>json, gz -> gzip>json

The value engine of such a place (payload.engine) reads a value given with its row's sibling value
(`Chosen`, made by `chosen`, the one way a reader hands them over) by the chain the sibling names;
a row whose sibling names no chain of the setting (or is null) is that row's note, and a value
handed over without its sibling says which column to read beside it. Standard library only: it
is parsed while settings are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: A setting's text that picks its chain by a sibling column starts with this word.
BY_WORD = "by"
_ARROW = "->"


class ChoiceError(ValueError):
    """A `by` setting that cannot be used; str() is the one-line reason."""


@dataclass(frozen=True)
class SiblingChoice:
    """The sibling column (as the result names it) and, per value of it, the chain's text."""

    column: str
    chains: tuple[tuple[str, str], ...]

    def chain(self, by: Any) -> str | None:
        """The chain the sibling value `by` names (text compared as written, case-blind, spaces
        around it ignored; bytes read as UTF-8); None when it names none."""
        if isinstance(by, (bytes, bytearray, memoryview)):
            try:
                by = bytes(by).decode("utf-8")
            except UnicodeDecodeError:
                return None
        if by is None:
            return None
        wanted = str(by).strip().lower()
        return next((chain for value, chain in self.chains if value.lower() == wanted), None)

    def no_chain(self, by: Any) -> str:
        """The note of a row whose sibling names no chain of the setting."""
        known = ", ".join(value for value, _ in self.chains)
        if by is None:
            return f"{self.column} is null: no chain to read it by (known: {known})"
        shown = bytes(by).hex() if isinstance(by, (bytes, bytearray, memoryview)) else str(by)
        return f"{self.column} {shown[:60]!r} names no chain of the setting (known: {known})"

    @property
    def unread(self) -> str:
        """The note of a value handed over without its row's sibling."""
        return f"its chain is picked by {self.column}: read {self.column} in the same row"

    def __str__(self) -> str:
        chains = ", ".join(f"{value} {_ARROW} {chain}" for value, chain in self.chains)
        return f"{BY_WORD} {self.column}: {chains}"


def is_choice(text: str) -> bool:
    """Whether a setting's text picks its chain by a sibling column (`by COLUMN: ...`)."""
    head = text.lstrip()[: len(BY_WORD) + 1]
    return head[: len(BY_WORD)].lower() == BY_WORD and head[len(BY_WORD):][:1].isspace()


def parse_choice(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(sibling column, ((value, chain text), ...)) of `by COLUMN: VALUE -> CHAIN, ...`; the
    chains' texts are checked by the caller (payload.spec). ChoiceError with one line."""
    body = text.strip()[len(BY_WORD):].strip()
    column, colon, mapping = body.partition(":")
    column = column.strip()
    example = "by content_encoding: zstd -> zstd>json, gz -> gzip>json"
    if not colon or not column or not mapping.strip():
        raise ChoiceError(f"{text.strip()!r}: expected {example!r}")
    if not (column.isidentifier() or (column.startswith('"') and column.endswith('"') and len(column) > 2)):
        raise ChoiceError(f"{column!r}: not a column name")
    if not column.startswith('"'):
        column = column.lower()  # CQL folds unquoted names
    chains: list[tuple[str, str]] = []
    for item in mapping.split(","):
        value, arrow, chain = item.partition(_ARROW)
        value, chain = _unquoted(value), _unquoted(chain)
        if not arrow or not value or not chain:
            raise ChoiceError(f"{item.strip()!r}: expected VALUE -> CHAIN ({example!r})")
        if any(known.lower() == value.lower() for known, _ in chains):
            raise ChoiceError(f"{value!r} is mapped twice")
        chains.append((value, chain))
    return column, tuple(chains)


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].strip()
    return text


class Chosen:
    """A stored value with its row's sibling value, handed to a `by` place's engine."""

    __slots__ = ("by", "stored")

    def __init__(self, stored: bytes, by: Any) -> None:
        self.stored = stored
        self.by = by

    def __bytes__(self) -> bytes:
        return self.stored

    def __len__(self) -> int:
        return len(self.stored)

    def __repr__(self) -> str:
        return f"Chosen({self.stored[:16]!r}..., by={self.by!r})"


def chosen(values: Sequence[Any], siblings: Sequence[Any]) -> list[Any]:
    """Each blob value with its row's sibling value (a null blob, or a value that is no blob, as it is)."""
    return [Chosen(bytes(value), by) if isinstance(value, (bytes, bytearray, memoryview)) else value
            for value, by in zip(values, siblings, strict=True)]


__all__ = ["BY_WORD", "ChoiceError", "Chosen", "SiblingChoice", "chosen", "is_choice", "parse_choice"]
