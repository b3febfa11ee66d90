"""What a reading runs with, instead of the shell: the session and its consistency levels, the
settings (how values decode, Amazon Keyspaces' options), and how it talks to whoever asked (a
question at a terminal, a message, an error, progress), with a stop signal. The shell makes one
per command (`shell_context`); `cqlsh-ext mcp` makes one per call, with nobody to ask, its errors
kept as data and its stop set by the client's cancellation or the time limit; Spark mode and
tests make their own from a driver session.

Command handlers receive the shell; what they call takes this. The scanning layer reads the
little it needs of it through its own Protocol (scanning.scan.ScanContext).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.scanning.scan import Progress
    from cqlsh_ext.settings import DisplaySettings, KeyspacesOptions, Settings
    from cqlsh_ext.settings.shell import Shell

__all__ = ["ProgressEvents", "ReadContext", "progress_events", "shell_context"]

#: A progress line for a reading: (its label, whether it is wanted, the rows expected or None).
ProgressFactory = Callable[[str, bool, "int | None"], "Progress | None"]


def _say(line: str) -> None:
    from cqlsh_ext.common.text import say

    say(line)


def _error(line: str) -> None:
    print(line, file=sys.stderr)


def _no_progress(label: str, enabled: bool, estimate: int | None = None) -> Progress | None:
    return None


class ProgressEvents:
    """The progress of a reading as events, for a front end with no terminal line to draw: each
    update (rows read, the share done when known, the detail) or stage is handed to `on_event`,
    at most `every` seconds apart. It takes the place of scanning.scan.Progress (the terminal's
    line, one subscriber of the same reading): the same calls reach it."""

    def __init__(self, label: str, on_event: Callable[[dict[str, Any]], None], estimate: int | None = None,
                 every: float = 1.0) -> None:
        self.label = label
        self.on_event = on_event
        self.estimate = estimate
        self.every = every
        self._last = 0.0
        #: As Progress's: extra text (a sample's interval), whether to hold back, what Ctrl-C does.
        self.detail: Any = None
        self.paused: Any = None
        self.ctrl_c: tuple[str, ...] = ()

    def update(self, rows: int, fraction: float | None = None, force: bool = False) -> None:
        import time

        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        if fraction is None and self.estimate and rows <= self.estimate:
            fraction = rows / self.estimate
        self.on_event({"reading": self.label, "rows": rows, "done": fraction, "estimate": self.estimate,
                       "detail": self.detail() if self.detail is not None else None})

    def step(self, what: str, fraction: float | None = None) -> None:
        self.on_event({"reading": self.label, "step": what, "done": fraction})

    def close(self) -> None:
        pass


def progress_events(on_event: Callable[[dict[str, Any]], None], every: float = 1.0) -> ProgressFactory:
    """A context's `progress` that hands each reading's progress to `on_event` as events, at most
    `every` seconds apart."""

    def factory(label: str, enabled: bool, estimate: int | None = None) -> Any:
        return ProgressEvents(label, on_event, estimate, every) if enabled else None

    return factory


def _terminal_progress(label: str, enabled: bool, estimate: int | None = None) -> Progress | None:
    """A status line on a terminal's stderr, held back while the interactive shell's pager owns
    the terminal (rows stream into it while the reading goes on)."""
    from cqlsh_ext.scanning.scan import progress_for

    progress = progress_for(label, enabled, estimate)
    if progress is not None:
        progress.paused = lambda: bool(getattr(sys.stdout, "paging", False))
    return progress


@dataclass
class ReadContext:
    """A reading's context (see the module doc). `ask` is None where nobody can answer a question
    (a script, `cqlsh-ext mcp`): a costly full scan is then refused with how to confirm it."""

    session: Any  # cassandra.cluster.Session
    cluster: Any  # cassandra.cluster.Cluster: its metadata (the schema), worker processes' connections
    host: str
    #: The keyspace in use (USE, -k): where a table named alone is.
    keyspace: str | None
    consistency: int
    serial_consistency: int
    settings: Settings
    #: Rows per page of a statement the server answers row for row (None: cqlsh's paging is off).
    page_size: int | None = None
    #: Rows the reader may take in all (an MCP call's, and the row after them its cursor names):
    #: after the first page, each is asked as big as the rows seen fit in scanning.scan.PAGE_BYTES,
    #: at most what is still wanted (None: every page of page_size rows).
    wanted_rows: int | None = None
    #: A yes/no question to the person (a costly full scan); None: nobody to ask.
    ask: Callable[[str], bool] | None = None
    #: A message for the person (what a full scan costs, before the question).
    say: Callable[[str], None] = _say
    #: An error, one line (the shell's printerr; `cqlsh-ext mcp` keeps it as the call's answer).
    error: Callable[[str], None] = _error
    #: The progress of a reading (a terminal's status line; none where nobody watches).
    progress: ProgressFactory = _no_progress
    #: Set to stop the reading at its next page (a client's cancellation, a time limit); Ctrl-C
    #: stops it too (common.interrupt).
    stop: threading.Event = field(default_factory=threading.Event)
    #: The interactive shell: its pager holds the result, the closing line follows it there.
    interactive: bool = False
    #: The width the output is fitted to (0: whole lines).
    width: int = 0
    #: Seconds a request may take, instead of the session's (a program's per-call timeout).
    request_timeout: float | None = None
    #: A whole table's payload query is read as one stream in the server's order, so that its
    #: answer, cut, goes on from its rows (reading.select.reads_in_order: an MCP query's cursor).
    in_order: bool = False

    @property
    def where(self) -> str:
        """The host and port the session connected to, as an error names them."""
        return f"{self.host}:{getattr(self.cluster, 'port', '?')}"

    @property
    def display(self) -> DisplaySettings:
        return self.settings.display

    @property
    def keyspaces(self) -> KeyspacesOptions:
        return self.settings.keyspaces

    @property
    def timeout(self) -> float | None:
        """The request timeout: the context's own, else the session's (cqlsh's --request-timeout)."""
        if self.request_timeout is not None:
            return self.request_timeout
        return getattr(self.session, "default_timeout", None)

    def decoding(self) -> Decoding:
        """How values decode: -d's mode, the output cap, the column settings."""
        return self.settings.display.decoding()

def shell_context(shell: Shell) -> ReadContext:
    """The context of a command the shell runs: its session, keyspace, levels and settings; a
    question asked at the terminal when stdin and the shell are one; messages and progress on
    stderr; errors through its printerr."""
    from cqlsh_ext.common.ask import yes

    at_terminal = sys.stdin.isatty() and getattr(shell, "tty", True)
    interactive = bool(getattr(shell, "repl_mode", False))
    width = shell.results.screen_width() if interactive else 0
    return ReadContext(
        session=shell.session, cluster=shell.conn, host=shell.hostname, keyspace=shell.current_keyspace,
        consistency=shell.consistency_level, serial_consistency=shell.serial_consistency_level,
        settings=shell.settings, page_size=shell.page_size if shell.use_paging else None,
        ask=yes if at_terminal else None, error=shell.printerr, progress=_terminal_progress,
        interactive=interactive, width=width)
