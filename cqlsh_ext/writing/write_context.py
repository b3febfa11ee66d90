"""What a write runs with: a reading's context (reading.context.ReadContext: the session, its
levels, the settings, whom to ask and tell, the stop signal), the journal directory and where the
write's lines go. A command handler makes one from the shell (writing.journal.shell_write_context);
Spark's driver and a Python front end make theirs from a driver session (the Python API with its own
stream: the lines it gives back, never the process's standard output)."""

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

    def say_lines(self, lines: list[str], failed: bool = False) -> None:
        """`lines` fitted to the screen, to `out`; a run that failed says them as its error (on
        standard error: a script's exit status is then 2)."""
        from cqlsh_ext.common.text import message, screen_width

        width = screen_width(sys.stderr if failed else self.out)
        text = "\n".join(message(line, width) for line in lines)
        if failed:
            self.error(text)
        else:
            print(text, file=self.out)


def write_context(ctx: ReadContext, journal_dir: str, out: IO[str] | None = None) -> WriteContext:
    """`ctx` with the journal directory and where its lines go (None: standard output as it is now)."""
    values = {f.name: getattr(ctx, f.name) for f in fields(ReadContext)}
    return WriteContext(**values, journal_dir=journal_dir, out=sys.stdout if out is None else out)
