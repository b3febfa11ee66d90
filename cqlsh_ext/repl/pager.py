"""Output taller than the terminal goes through a pager instead of cqlsh's ---MORE--- prompt.

Every command whose output can be long (query results, DESCRIBE, HELP, INSPECT, COMPRESSION,
HISTORY) runs inside `paged_output`, which sends the shell's standard output and query output
through one PagedOutput for the whole command.

Output is held back until it no longer fits on the screen; only then is the pager started (and
given what was held). Later pages stream into it as they are fetched, so the first screen shows
at once and a pipe that the pager does not read holds the fetching back. Quitting the pager stops
the fetching (PagerClosed). The command is a shell command line, as git and psql run $PAGER.
Under --read-only it runs in less's secure mode (LESSSECURE=1: no `!command`, no `s` to a file, no
editor), so the pager is no way round the read-only rule; a pager that has no such mode (more,
most) is replaced by less, or without less by cqlsh's own ---MORE--- pauses (pager_command).
Only standard output is held: a command's progress line and its questions ([y/N] before a costly
run, cqlsh_ext.common.ask) go to standard error, which stays on the terminal.

A result's closing lines (cqlsh's `(20 rows)`, a payload query's closing line, warnings) are
written after the pager, on the terminal: less quit on its first page would leave them unseen.
The output layer says where they start (`result_closing`, after each page of rows) and where rows
go on (`result_rows`); what is written after the pager was quit (a closing line in a `finally`)
follows it too.
"""

from __future__ import annotations

import enum
import io
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from cqlsh_ext.settings import DEFAULT_PAGER

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell

#: A result's closing part is a few lines: more (a trace after the rows) goes through the pager.
CLOSING_LINES = 8


class PagerClosed(Exception):
    """The user quit the pager before the whole result was written."""


class NoPager(enum.Enum):
    """pager_command()'s answer when no pager is to run."""

    #: Paging turned off ([cqlsh_ext] pager = off, or an empty $PAGER, as in psql): all at once.
    OFF = "off"
    #: The program is not installed (a slim container has no less): cqlsh's own ---MORE---
    #: pauses, so a long result never scrolls by unread.
    NOT_FOUND = "not found"


def pager_command(setting: str | None, secure: bool = False) -> str | NoPager:
    """The pager to run: the cqlshrc setting, else $PAGER, else DEFAULT_PAGER. `secure`
    (--read-only): only less, which runs in its secure mode (PagedOutput); another pager (more,
    most: each runs `!command`) is replaced by DEFAULT_PAGER, and without less installed none runs
    (NOT_FOUND: cqlsh's own ---MORE--- pauses, which run nothing)."""
    command = setting if setting is not None else os.environ.get("PAGER", DEFAULT_PAGER)
    command = command.strip()
    if not command:
        return NoPager.OFF
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return NoPager.NOT_FOUND
    if secure and os.path.basename(program) != "less":
        command, program = DEFAULT_PAGER, shlex.split(DEFAULT_PAGER)[0]
    return command if shutil.which(program) else NoPager.NOT_FOUND


def pager_found(setting: str | None, secure: bool = False) -> bool:
    """The pager seam the output layer is handed (cqlsh_ext.output.pipeline): does `setting`
    name a pager program that is installed (`secure`: one pager_command runs under --read-only)?"""
    return pager_command(setting, secure) is not NoPager.NOT_FOUND


class PagedOutput(io.TextIOBase):
    """A text stream for one result: to `out` when it fits in `max_lines`, else to the pager
    (command None: always to `out`)."""

    #: A plain attribute here (io.TextIOBase's is a read-only property): the stream's encoding,
    #: set from the one written to.
    encoding = "utf-8"

    def __init__(self, out: TextIO, command: str | None, max_lines: int, secure: bool = False) -> None:
        super().__init__()
        #: --read-only: the pager may run no command and write no file (less's secure mode).
        self.secure = secure
        self.out = out
        self.encoding = getattr(out, "encoding", None) or "utf-8"
        self.command = command
        self.max_lines = max_lines
        self.held: list[str] = []
        self.held_lines = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.pipe: TextIO | None = None
        self.saved_sigint: Any = None
        #: Written after the pager (or after what was held): a result's closing lines, and
        #: anything written once the pager was quit.
        self.after: list[str] = []
        self.closing = False
        self.quit = False

    @property
    def paging(self) -> bool:
        """The pager runs: it owns the terminal (a status line drawn now would land in its screen)."""
        return self.pipe is not None

    def release(self) -> None:
        """From now on, what is written goes to the terminal as it is written (common.text.unheld:
        a long statement's first lines, what to recover with, before it works); what was held is
        written first. Once the pager runs, it keeps the rest."""
        if self.pipe is None and self.command is not None:
            self.command = None
            held, self.held = "".join(self.held), []
            self.out.write(held)
            self.out.flush()

    def isatty(self) -> bool:
        """The terminal's answer while this writes straight to it (released, or no pager), so
        that what is written is fitted to it (common.text.screen_width); else False."""
        return self.command is None and self.pipe is None and self.out.isatty()

    def fileno(self) -> int:
        if not self.isatty():
            raise io.UnsupportedOperation("fileno")
        return self.out.fileno()

    def result_closing(self) -> None:
        """What is written from now on closes a result, unless rows follow (result_rows): it is
        written after the pager (output layer: after each page of rows)."""
        self.closing = True

    def result_rows(self) -> None:
        """Rows follow: what was kept as closing lines was not (output layer: before a page)."""
        self.closing = False
        kept, self.after = "".join(self.after), []
        if kept:
            self.write(kept)

    def write(self, text: str) -> int:
        if self.quit or self.closing:
            self.after.append(text)
            if self.closing and not self.quit and sum(t.count("\n") for t in self.after) > CLOSING_LINES:
                self.result_rows()  # not a closing line: a report, a trace, after the rows
            return len(text)
        if self.pipe is not None:
            self._to_pager(text)
        elif self.command is None:
            self.out.write(text)
        else:
            self.held.append(text)
            self.held_lines += text.count("\n")
            if self.held_lines > self.max_lines:
                self._start()
        return len(text)

    def flush(self) -> None:
        if self.pipe is None:
            self.out.flush()

    def _start(self) -> None:
        assert self.command is not None
        # While the pager runs, Ctrl-C belongs to it, as in git: the default pager quits at once
        # (less -K), and what is written next finds the pipe closed (PagerClosed).
        self.saved_sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.out.flush()
        env = {**os.environ, "LESSSECURE": "1"} if self.secure else None  # (less: no !command, no s file)
        self.proc = subprocess.Popen(self.command, shell=True, stdin=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None
        self.pipe = io.TextIOWrapper(self.proc.stdin, encoding=self.encoding, errors="backslashreplace")
        held, self.held = "".join(self.held), []
        self._to_pager(held)

    def _to_pager(self, text: str) -> None:
        assert self.pipe is not None
        try:
            self.pipe.write(text)
        except (BrokenPipeError, ValueError):
            self.quit = True  # the fetching stops here; what is written later follows the pager
            raise PagerClosed() from None

    def finish(self) -> None:
        """Write what was held, or close the pager's input and wait for the user to quit it."""
        if self.pipe is None:
            if self.held or self.after:
                self.out.write("".join(self.held + self.after))
                self.held, self.after = [], []
            self.out.flush()
            return
        try:
            try:
                self.pipe.close()
            except BrokenPipeError:
                pass
            assert self.proc is not None
            self.proc.wait()
        finally:
            self.pipe = None
            signal.signal(signal.SIGINT, self.saved_sigint)
        if self.after:  # the closing lines, on the terminal under what the pager left there
            after, self.after = "".join(self.after), []
            self.out.write(after if after.startswith("\n") else "\n" + after)
        self.out.flush()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.finish()


#: First words of cqlsh's own commands whose output goes through the pager (their output can be
#: long); ours say so in their declaration (`paged`, cqlsh_ext.features.commands).
CQLSH_PAGED_COMMANDS = frozenset({"select", "describe", "desc", "help", "?", "history", "list", "show"})


def is_paged(first_word: str) -> bool:
    from cqlsh_ext.features.commands import command

    declared = command(first_word)
    return declared.paged if declared is not None else first_word.lower() in CQLSH_PAGED_COMMANDS


@contextmanager
def paged_output(shell: Shell, first_word: str) -> Iterator[None]:
    """Run one command with its standard output and query output through the pager (when it is
    paged (`is_paged`), a pager is set and found, and output is not being captured)."""
    command = pager_command(shell.settings.display.pager, secure=shell.settings.agent.read_only)
    if not is_paged(first_word) or not isinstance(command, str) \
            or shell.shunted_query_out is not None:
        yield
        return
    out = PagedOutput(sys.stdout, command, max(shutil.get_terminal_size().lines - 2, 1),
                      secure=shell.settings.agent.read_only)
    saved = sys.stdout, shell.stdout, shell.query_out
    sys.stdout = shell.stdout = shell.query_out = out
    try:
        yield
    except PagerClosed:
        pass
    finally:
        sys.stdout, shell.stdout, shell.query_out = saved
        out.finish()
