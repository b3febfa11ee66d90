"""What a write runs with: a reading's context (reading.context.ReadContext: the session, its
levels, the settings, whom to ask and tell, the stop signal) and the journal directory. A command
handler makes one from the shell (`write_context(shell_context(shell), journal_directory(...))`);
Spark's driver and a Python front end make theirs from a driver session."""

from __future__ import annotations

from dataclasses import dataclass, fields

from cqlsh_ext.reading.context import ReadContext


@dataclass
class WriteContext(ReadContext):
    """A ReadContext with where journals are written (writing.journal.journal_directory)."""

    journal_dir: str = ""


def write_context(ctx: ReadContext, journal_dir: str) -> WriteContext:
    """`ctx` with the journal directory."""
    values = {f.name: getattr(ctx, f.name) for f in fields(ReadContext)}
    return WriteContext(**values, journal_dir=journal_dir)
