"""What an edit says before it writes: the rows found, how many it would change, refuse (by
reason) or find already as asked, how headers change, the first rows' `path: old -> new`, the TTLs
kept, the write units on Amazon Keyspaces, and how the rows will be written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural, say
from cqlsh_ext.edit.document import REMOVE, brief
from cqlsh_ext.writing.blob_target import key_text

if TYPE_CHECKING:
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.writing.mechanism import Mechanism

LABEL = "edit"
#: Rows whose `path: old -> new` lines a preview shows.
PREVIEW_ROWS = 3


@dataclass
class RowChange:
    """A row to write: its key (name -> value as the driver gives it), the bytes read, the bytes
    to write (as the column holds them: bytes, or text), the changes, and the cell's write time,
    TTL and moment of expiry as read."""

    key: dict[str, Any]
    old: Any
    new: Any
    changes: list[tuple[str, Any, Any]]
    writetime: int | None = None
    ttl: int | None = None
    expires: float | None = None


@dataclass
class Outcome:
    found: int = 0
    unchanged: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    rows: list[RowChange] = field(default_factory=list)
    #: How the new values' outer headers differ from the stored ones' (rewrite.EditedValue.notes).
    notes: dict[str, int] = field(default_factory=dict)

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1


def summary(ctx: ReadContext, confirm: bool, outcome: Outcome, stopped: str, mechanism: Mechanism,
            out: IO[str]) -> None:
    verb = "would change" if not confirm else "to change"
    parts = [f"{plural(outcome.found, 'row')} found{stopped}: {len(outcome.rows):,} {verb}"]
    if outcome.unchanged:
        parts.append(f"{outcome.unchanged:,} already as asked")
    refused = sum(outcome.refused.values())
    if refused:
        parts.append(f"{refused:,} refused")
    say(f"{LABEL}: " + ", ".join(parts), out)
    for reason, n in sorted(outcome.refused.items(), key=lambda item: -item[1]):
        say(f"  refused {plural(n, 'row')}: {reason}", out)
    for note, n in sorted(outcome.notes.items(), key=lambda item: -item[1]):
        if note.endswith("kept as they were"):
            say(f"  {plural(n, 'row')}: {note}", out)
        else:
            say(f"  header of {plural(n, 'row')} as the reference producer writes it: {note}", out)
    for change in outcome.rows[:PREVIEW_ROWS]:
        for line in change_lines(change.key, change.changes):
            say(line, out)
    if len(outcome.rows) > PREVIEW_ROWS:
        say(f"  ... and {plural(len(outcome.rows) - PREVIEW_ROWS, 'more row')}", out)
    if not outcome.rows:
        return
    expiring = sum(1 for row in outcome.rows if row.ttl is not None)
    if expiring:
        say(f"  TTL kept: the new values expire when the old ones would have ({plural(expiring, 'row')} "
            "with a TTL: the seconds left when read)", out)
    _units(ctx, outcome.rows, mechanism, out)
    say(mechanism.promise(), out)


def _units(ctx: ReadContext, rows: Sequence[RowChange], mechanism: Mechanism, out: IO[str]) -> None:
    """On Amazon Keyspaces, the write units the writes use: a write by its new value's size as
    COMPRESSION STATS counts a row (a failed condition costs the stored row's size), and the reads
    after timestamped writes."""
    from cqlsh_ext.scanning.capacity import rcu, wcu
    from cqlsh_ext.scanning.cost import pricing
    from cqlsh_ext.writing.cell_writer import raw

    if not pricing(ctx).keyspaces:
        return
    units = sum(wcu(len(raw(row.new))) for row in rows)
    if mechanism.timestamped:
        reads = sum(rcu(len(raw(row.new))) for row in rows)
        say(f"  Amazon Keyspaces: about {plural(units, 'write unit')} for {plural(len(rows), 'write')} (1 "
            f"per started KB of each new value), {plural(reads, 'read unit')} to read each row again", out)
        return
    writes = plural(len(rows), "conditional write")
    say(f"  Amazon Keyspaces: about {plural(units, 'write unit')} for {writes} (1 per started KB of each "
        "new value)", out)


def change_lines(key: dict[str, Any], changes: Sequence[tuple[str, Any, Any]]) -> list[str]:
    """A row's lines in a preview (an edit's, a load's): its key, then each `path: old -> new`."""
    return ["  " + key_text(key),
            *(f"    {path}: {side(old)} -> {side(new)}" for path, old, new in changes)]


def document_changes(path: str, old: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """The places where document `new` differs from `old` (JSON values, REMOVE for a key one of
    them lacks), each `(path, old, new)` below `path`: an object's keys one by one, a list's
    items where both have as many, else the value whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in [*old, *(k for k in new if k not in old)]:
            out.extend(document_changes(f"{path}.{key}", old.get(key, REMOVE), new.get(key, REMOVE)))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [change for i, (a, b) in enumerate(zip(old, new, strict=True))
                for change in document_changes(f"{path}[{i}]", a, b)]
    same = type(old) is type(new) and old == new
    return [] if same else [(path, old, new)]


def side(value: Any) -> str:
    """One side of a change, as a preview shows it (`(none)`: a key that is not there)."""
    return "(none)" if value is REMOVE else brief(value)
