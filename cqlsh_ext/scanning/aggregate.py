"""What a reading fills: an Aggregate (insight.stats.Stats for COMPRESSION STATS, a payload query's
reading.select.ScanAnswer). The shell's process fills the one it is given; each worker process
fills its own fresh() copy and sends it back (pickled) once, and the parent merges them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

A = TypeVar("A", bound="Aggregate")


class Aggregate(Protocol):
    """Optional, looked up by name: `drain()`, what leaves after each page (a payload query's
    matching rows, streamed as they are found), `progress_counts()`, figures for the progress
    line (its matched and undecodable rows), and `page_sent(seconds)`, called before each page's
    `add_rows` with the wall-clock time its request was sent (a write's rows: their TTLs count from
    it, writing.ttl)."""

    interrupted: bool
    error: str | None
    #: How it was read: "single stream", "4 parallel streams", "2 worker processes".
    scan: str

    @property
    def rows(self) -> int:
        """Rows read so far (only read here: progress)."""
        ...

    def fresh(self: A) -> A: ...

    def set_columns(self, names: Sequence[str], types: Sequence[Any]) -> None: ...

    def add_rows(self, rows: Sequence[Sequence[Any]]) -> None: ...

    def merge(self: A, other: A) -> None: ...


def drained(aggregate: Any) -> list[Any] | None:
    """What the Aggregate lets out after a page (None when it streams nothing)."""
    drain = getattr(aggregate, "drain", None)
    return drain() if drain is not None else None


def progress_counts(aggregate: Any) -> tuple[int, ...] | None:
    counts = getattr(aggregate, "progress_counts", None)
    return counts() if counts is not None else None


def stamp(aggregate: Any, sent: float) -> None:
    """Tell the Aggregate when the page it is about to take was asked for, if it wants to know."""
    page_sent = getattr(aggregate, "page_sent", None)
    if page_sent is not None:
        page_sent(sent)
