"""Standard error as JSON Lines: with `--output-format json` in a run for a program (docs/agents.md)
every line on standard error is one JSON object, `{"type": ...}`: an error (agent.errors), a cut
(`truncated`), --stats' figures, a `warning` (a path no value read had, cqlsh's warnings) or a
`note` (what a person reads besides: a payload query's closing figures). `JsonLines` stands in for
sys.stderr while the run asks for it, so a line of prose from anywhere (cqlsh's own, a library's)
is written as a note rather than breaking a reader that parses each line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

NOTE, WARNING = "note", "warning"
#: How a prose line that warns starts (cqlsh's "Warning: ...", the driver's "WARNING: ...").
_WARNS = ("warning:", "warning ")


def write(obj: dict[str, Any], out: IO[str] | None = None) -> None:
    """One object, one line, on `out` (standard error by default)."""
    stream = sys.stderr if out is None else out
    stream.write(json.dumps(obj, ensure_ascii=False) + "\n")


def said(line: str) -> dict[str, Any]:
    """A line of prose as the object it is: a warning when it says it warns, else a note."""
    text = line.strip()
    if text.lower().startswith(_WARNS):
        return {"type": WARNING, "kind": "said", "message": text}
    return {"type": NOTE, "message": text}


class JsonLines:
    """sys.stderr's stand-in: while `active()`, each whole line written that is not a JSON object
    already is written as one (said); otherwise lines pass as they are."""

    def __init__(self, out: IO[str], active: Callable[[], bool]) -> None:
        self.out = out
        self.active = active
        self._pending = ""

    def write(self, text: str) -> int:
        if not self.active():
            return self.out.write(text)
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if not line.strip():
                continue
            if line.startswith("{"):
                self.out.write(line + "\n")
            else:
                write(said(line), self.out)
        return len(text)

    def finish(self) -> None:
        """A last line written without its newline, written now."""
        if self._pending:
            self.write("\n")
        self.out.flush()

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding, ...: the stream's
        return getattr(self.out, name)
