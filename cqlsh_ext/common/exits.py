"""The exit codes of `cqlsh-ext`, declared once: --help's table, the man page's and --spec's come
from EXITS. cqlsh's own are kept where cqlsh has them (a statement's error 2, a connection's 1);
each outcome cqlsh has no code for has its own, so that a program running the shell tells them
apart without reading its messages.

A run that meets several outcomes (a script: one statement refused, another failed) exits with the
most severe (`RunOutcome.code`: EXITS' `rank`), as cqlsh exits 2 when any of its statements failed.
"""

from __future__ import annotations

from typing import NamedTuple


class Exit(NamedTuple):  # a NamedTuple, not a dataclass: cheaper to make at every start-up
    """One exit code: its number, its name (as --spec and --stats name it) and what it means."""

    code: int
    name: str
    meaning: str
    #: Which of two outcomes of one run wins: the higher.
    rank: int


OK = Exit(0, "ok", "every statement ran (a SELECT cut by --max-rows, said on standard error, too)", 0)
CONNECTION = Exit(1, "connection", "no connection: the server could not be reached or refused the "
                  "login (cqlsh's); also a file given with -f that cannot be read", 6)
STATEMENT = Exit(2, "statement", "a statement failed: the server's error, a syntax error, a value or "
                 "name refused (cqlsh's); also an option or setting refused before connecting", 1)
REFUSED = Exit(3, "refused", "a statement refused before it ran by --read-only or the policy "
               "(--policy)", 2)
TIMED_OUT = Exit(4, "timed_out", "a statement ran past --timeout and was stopped; what it read before "
                 "is printed", 3)
INTERNAL = Exit(70, "internal", "an internal error of cqlsh-ext's: its one line names a crash report", 5)
INTERRUPTED = Exit(130, "interrupted", "stopped by Ctrl-C (SIGINT), while connecting too; what was read "
                   "before is printed", 4)
OUTPUT_CLOSED = Exit(141, "output_closed", "standard output closed by its reader (`| head`), or closed "
                     "from the start (`>&-`), as a shell reports a command the pipe ended", 0)

#: Every exit code, in the order of their numbers.
EXITS: tuple[Exit, ...] = (OK, CONNECTION, STATEMENT, REFUSED, TIMED_OUT, INTERNAL, INTERRUPTED,
                           OUTPUT_CLOSED)
_BY_CODE = {e.code: e for e in EXITS}


def of_code(code: int) -> Exit | None:
    """The declared exit of `code`, or None."""
    return _BY_CODE.get(code)


def table_lines(width: int = 80) -> list[str]:
    """The exit codes as --help and the man page list them, filled to `width` columns:
    `  2    statement      what it means`."""
    import textwrap

    lines: list[str] = []
    for e in EXITS:
        lines += textwrap.wrap(e.meaning, width, initial_indent=f"  {e.code:<4} {e.name:<15}",
                               subsequent_indent=" " * 22, break_on_hyphens=False, break_long_words=False)
    return lines


class RunOutcome:
    """What one run met, for its exit code: each outcome noted as it happens (the shell's
    statements, the entry point), the most severe kept; and the crash report an internal error
    wrote (its path)."""

    def __init__(self) -> None:
        self.worst: Exit = OK
        self.crash_report: str | None = None

    def note(self, outcome: Exit) -> None:
        if outcome.rank > self.worst.rank:
            self.worst = outcome

    def code(self, cqlsh_code: int = 0) -> int:
        """The run's exit code: the most severe of what was noted and what cqlsh exits with
        (`cqlsh_code`: 2 when a statement failed, 1 without a connection)."""
        known = of_code(cqlsh_code)
        if known is None:  # an exit of cqlsh's own beyond the table: kept as it is
            return cqlsh_code if self.worst is OK else self.worst.code
        return max(known, self.worst, key=lambda e: e.rank).code
