"""A reading's notes (reading.typed.ReadNotes) as the line a person reads after the answer: what
was read, matched and not decodable, the paths no value read had (a typo is otherwise a column of
nulls), how the table was read, how the reading ended. The shell's payload queries, exports and
Spark mode end with it; `cqlsh-ext mcp` gives it among an answer's notes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

from cqlsh_ext.reading.select import LABEL

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import ReadNotes

#: Keys named when none is near the one a path wanted.
_KEYS_NAMED = 6


def closing_text(notes: ReadNotes) -> str | None:
    """The closing line of a SELECT's reading, or None when there is nothing to say: a SELECT whose
    paths are only projected says something only when a value was not decodable, a path was never
    found or the reading failed."""
    unknown = notes.paths_never_found
    problems = notes.undecodable + notes.cut
    if not notes.plan.local_rows and not problems and not notes.error and not unknown:
        return None
    missing = [f"no value read has {path}{_keys_named(nearest, seen)}" for path, nearest, seen in unknown]
    more = notes.paths_never_found_count - len(unknown)
    if more > 0:
        missing.append(f"and {more:,} more path{'' if more == 1 else 's'} no value read has")
    return f"{LABEL}: " + "; ".join([", ".join(closing_parts(notes)), *missing, *closing_ends(notes)])


def closing_objects(notes: ReadNotes) -> list[dict[str, object]]:
    """The closing line as a program reads it on standard error (output.stderr_lines): a `note`
    with the reading's figures (ReadNotes.to_json), after a `warning` for each path no value read
    had, naming the whole paths nearest to it; nothing when closing_text says nothing."""
    text = closing_text(notes)
    if text is None:
        return []
    warnings: list[dict[str, object]] = []
    for path, nearest, seen in notes.paths_never_found:
        meant, hint = path_meant(notes, path, nearest)
        said = f" ({hint})" if hint else ""
        warnings.append({"type": "warning", "kind": "path_not_found", "path": path, "nearest": meant,
                         "keys_seen": seen[:_KEYS_NAMED], "hint": hint,
                         "message": f"no value read has {path}{said}: its column is null on every row"})
    figures = notes.to_json()
    figures["exact"] = figures["exact"] and not warnings  # a typo's nulls: the answer may be wrong
    return [*warnings, {"type": "note", "kind": LABEL.replace(" ", "_"), "message": text, **figures}]


def path_meant(notes: ReadNotes, path: str, nearest: list[str]) -> tuple[list[str], str | None]:
    """The whole paths nearest to `path`, which no value read had (`nearest`: the keys nearest where
    it stopped), and the hint that names them ("did you mean data.status?", as a JSON error's hint
    says it: agent.errors), or None: the one suggestion of the shell's JSON warning and MCP's answer."""
    answer = notes.answer
    meant = answer.counts.paths.meant(path, nearest) if answer is not None else list(nearest)
    return meant, (f"did you mean {', '.join(meant)}?" if meant else None)


def closing_line(notes: ReadNotes, out: IO[str], width: int = 0) -> None:
    """closing_text on `out` (stderr in scripts: JSON Lines on stdout stay valid), fitted to `width`,
    else to the terminal `out` writes to (common.text.message)."""
    from cqlsh_ext.common.text import message, screen_width

    line = closing_text(notes)
    if line is not None:
        print(message(line, width or screen_width(out)), file=out)


def undecodable_breakdown(kinds: Mapping[str, int]) -> str:
    """' (3 no known format, 1 a format that failed)': the undecodable values by kind, in the
    view's words (payload.view.KIND_TITLES), in its order; '' without kinds."""
    from cqlsh_ext.payload.view import KIND_TITLES, KINDS

    parts = [f"{kinds[kind]:,} {KIND_TITLES[kind]}" for kind in KINDS if kinds.get(kind)]
    return f" ({', '.join(parts)})" if parts else ""


def closing_parts(notes: ReadNotes) -> list[str]:
    """What the reading saw: rows read and matched, values undecodable or cut, aggregate inputs
    skipped, LIMIT, how the table was read."""
    parts = [f"{notes.rows_read:,} rows read", f"{notes.matched:,} matched"]
    if notes.undecodable:
        parts.append(f"{notes.undecodable:,} undecodable{undecodable_breakdown(notes.undecodable_kinds)}")
    if notes.cut:
        parts.append(f"{notes.cut:,} cut by the budget")
    if notes.skipped:
        parts.append(f"{notes.skipped:,} aggregate inputs not numbers (skipped)")
    if notes.limit_reached:
        parts.append(f"stopped at LIMIT {notes.plan.limit}")
    if notes.how:
        parts.append(notes.how)
    return parts


def closing_ends(notes: ReadNotes) -> list[str]:
    """How the reading ended, when not by reaching the end: Ctrl-C, a cancellation, a closed
    output, an error."""
    ends = []
    if notes.cancelled:
        ends.append("stopped before its end (cancelled, or a time limit): the answer covers the rows read")
    elif notes.interrupted:
        from cqlsh_ext.common.interrupt import interrupted_words

        ends.append(f"{interrupted_words()}: the answer covers the rows read")
    elif notes.output_closed:
        ends.append(f"stopped {notes.closed_by or 'when the output closed'}")
    if notes.error:
        ends.append(f"stopped by an error: {notes.error}")
    return ends


def _keys_named(nearest: list[str], seen: list[str]) -> str:
    """What the closing line says of the keys where a path stopped: the nearest, else some."""
    from cqlsh_ext.query.grammar import spell_key

    if nearest:
        return f" (nearest keys seen there: {', '.join(map(spell_key, nearest))})"
    if seen:
        more = ", …" if len(seen) > _KEYS_NAMED else ""
        return f" (keys seen there: {', '.join(map(spell_key, seen[:_KEYS_NAMED]))}{more})"
    return ""
