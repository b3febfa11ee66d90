"""What a write runs with: a reading's context (reading.context.ReadContext: the session, its
levels, the settings, whom to ask and tell, the stop signal), the journal directory and where the
write's lines go. A command handler makes one from the shell (`write_context(shell_context(shell),
journal_directory(...), sys.stdout)`); Spark's driver and a Python front end make theirs from a
driver session (the Python API with its own stream: the lines it gives back, never the process's
standard output)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from typing import IO

from cqlsh_ext.reading.context import ReadContext


def _stdout() -> IO[str]:
    return sys.stdout


@dataclass
class WriteContext(ReadContext):
    """A ReadContext with where journals are written (writing.journal.journal_directory) and
    `out`, where the lines a person reads of the write go (a preview, the journal's path, a row
    left alone, the closing lines); its notes (progress off a terminal, Ctrl-C's) go to `say`, its
    failures to `error`, as a reading's."""

    journal_dir: str = ""
    out: IO[str] = field(default_factory=_stdout)


def write_context(ctx: ReadContext, journal_dir: str, out: IO[str] | None = None) -> WriteContext:
    """`ctx` with the journal directory and where its lines go (None: standard output as it is now)."""
    values = {f.name: getattr(ctx, f.name) for f in fields(ReadContext)}
    return WriteContext(**values, journal_dir=journal_dir, out=sys.stdout if out is None else out)
