"""The shell's side of a run for a program (docs/agents.md): `AgentRun`, what one run keeps, which
the shell (cqlsh_ext.shell.ext_shell.ExtShell: its `agent`) hands every statement and every error to.

Each statement, before it runs, is checked by --read-only (read_only.py: refused in one line, exit
code 3) and, when it is the SELECT a --resume token names, set to go on from there; while it runs,
its --timeout's timer is on (timer.py); after, how it ended is noted for the run's exit code
(common.exits.RunOutcome): a Ctrl-C (exit code 130: what it read before printed, the run stopped), its
time up (4: the run goes on with the next statement), an internal error (70: its crash report
written, crash.py). Each result a SELECT printed is counted (output.row_limit), and one cut by
--max-rows, or stopped at its --timeout, says so, with the token that goes on from the next row
(resume_token.py), or why none can.

With `--output-format json` (not in the interactive shell) each error is one JSON object on
standard error (errors.py), the lines cqlsh prints under one (a syntax error's statement and caret)
its `detail`. --stats writes the run's figures when it ends (figures.py).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common import exits
from cqlsh_ext.common.exits import RunOutcome
from cqlsh_ext.common.text import say
from cqlsh_ext.output.row_limit import MAX_ROWS, RowLimit

if TYPE_CHECKING:
    from cqlsh_ext.agent.read_only import ReadOnly
    from cqlsh_ext.agent.resume_token import ResumeToken
    from cqlsh_ext.agent.timer import StatementTimer
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.mcp_server.exports import ExportDir
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.settings import AgentSettings, Settings

#: Why a cut answer cannot be gone on with, when its reading says no more.
NO_RESUME = "the reading cannot be gone on with from its rows"
#: Why a SELECT stopped before its answer began cannot be (nothing of it to go on from).
NOT_BEGUN = "it was stopped before its answer began: run it again"
#: What cqlsh's main() exits with when Ctrl-C stops it connecting.
CONNECTION_ABORTED = "Connection aborted."
#: How long a press the timer sent just as its statement ended is waited for (seconds).
LATE_PRESS = 0.05


class AgentRun:
    """One run's side for programs: its settings, its outcome (the exit code), the read-only
    switch, the resume token, the rows each result printed (`rows`, the result pipelines' one),
    the errors waiting to be written as JSON, and the figures --stats writes."""

    def __init__(self, settings: AgentSettings | None = None, outcome: RunOutcome | None = None,
                 read_only: ReadOnly | None = None, resume: ResumeToken | None = None,
                 started: float | None = None) -> None:
        import time

        from cqlsh_ext.settings import AgentSettings

        self.settings = settings or AgentSettings()
        #: When the run started (time.monotonic()): --stats' elapsed time counts from it.
        self.started = time.monotonic() if started is None else started
        self.outcome = outcome or RunOutcome()
        self.read_only = read_only
        self.resume = resume
        self.rows = RowLimit(self.settings.max_rows)
        #: Errors said as JSON objects (--output-format json, a script): (line, kind or None).
        self.json_errors = False
        self._pending: list[tuple[str, str | None]] = []
        #: The statement running (its text: an error's position is read in it), the keyspace in use.
        self.statement: Lexed | None = None
        self.keyspace: str | None = None
        self.statements = 0
        #: A Ctrl-C stopped the run: the statements still to come are not run.
        self.interrupted = False
        self._timer: StatementTimer | None = None
        #: Why an answer was cut short, in order, as --stats names them (max_rows, timed_out, ...).
        self.cuts: list[str] = []
        #: The token of the first cut answer that can be gone on with; else why the first cut one
        #: cannot be (--stats' resume_unavailable).
        self.resume_token: str | None = None
        self.resume_unavailable: str | None = None
        #: How the shells made say an error (their printerr) and end their loops (begin()).
        self._printerr: Callable[[str], None] = say
        self._stops: list[Callable[[], None]] = []
        self._kind: str | None = None
        #: --export-dir's directory, held (export_dir.py): where COPY (SELECT ...) TO may write.
        self.export_dir: ExportDir | None = None
        #: A run of the shell's (of()); else one that does nothing (a server's shell, `cqlsh-ext mcp`).
        self.active = False
        #: Statements read from a script, -e or a pipe (begin()), not typed at the interactive prompt.
        self.batch = False

    @classmethod
    def of(cls, settings: Settings, outcome: RunOutcome, started: float) -> AgentRun:
        """The run's side from its settings (what a flag does not ask for is not imported: a
        run's start-up); raises SettingError (--policy's file, --resume's token)."""
        from cqlsh_ext.settings import SettingError

        agent = settings.agent
        guard = token = None
        if agent.read_only:
            from cqlsh_ext.agent import read_only
            from cqlsh_ext.mcp_server.policy import PolicyError

            try:
                guard = read_only.load(agent.policy)
            except PolicyError as err:
                raise SettingError(str(err)) from None
        if agent.resume is not None:
            from cqlsh_ext.agent import resume_token

            try:
                token = resume_token.read(agent.resume)
            except resume_token.ResumeError as err:
                raise SettingError(str(err)) from None
        run = cls(agent, outcome, guard, token, started)
        if agent.export_dir is not None:
            run.export_dir = _held_export_dir(agent)
        run.active = True
        # (from the start: a connection that fails says so as JSON too; the interactive shell, once
        # it is made, says its errors as prose: begin())
        run.json_errors = settings.display.output_format.name == "json" or agent.catalog is not None
        if run.json_errors:  # every line on standard error one JSON object (output.stderr_lines)
            from cqlsh_ext.output.stderr_lines import JsonLines

            sys.stderr = JsonLines(sys.stderr, lambda: run.json_errors)
        return run

    # ------------------------------------------------------------------ the shell's start

    def begin(self, batch: bool, printerr: Callable[[str], None], stop: Callable[[], None]) -> None:
        """When a shell is made (SOURCE's too): how it says an error (`printerr`: its own) and how
        its loop is ended (`stop`); a `batch` run's (not the interactive shell's, nor a server's)
        Ctrl-C heard between statements too (ending the run, 130), the interactive shell's errors
        said as prose whatever the output format."""
        self._printerr = printerr
        self._stops.append(stop)
        if not batch or not self.active:
            # The interactive shell: its own Ctrl-C (a press stops the statement, never the shell),
            # its errors in prose, no time limit; --read-only and --max-rows hold as ever.
            self.json_errors = self.batch = False
            return
        self.batch = True
        if threading.current_thread() is not threading.main_thread() \
                or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # (a job started to ignore it)
            return

        def pressed(signum: int, frame: FrameType | None) -> None:
            timer = self._timer
            if timer is None or not timer.fired:
                self.interrupted = True
                self.outcome.note(exits.INTERRUPTED)
                self._stop()
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, pressed)

    # ------------------------------------------------------------------ each statement

    def _stop(self) -> None:
        for stop in self._stops:  # SOURCE's shell and the one that runs it
            stop()

    def refused(self, statement: Lexed, feature: Feature | None, keyspace: str | None,
                tables_of: Callable[[str], Sequence[str]],
                prepare: Callable[[str], object] | None = None,
                base_of: Callable[[str, str], str | None] | None = None) -> bool:
        """Before `statement` runs (`keyspace` in use, `tables_of` a keyspace's tables, `prepare`
        the session's: the server names a SELECT's table; `base_of`: the table a view holds the
        rows of, read_only.view_base): True when --read-only refuses it (said,
        noted); a SELECT that --resume names is set to go on from its token."""
        self.statement, self.keyspace = statement, keyspace
        if self.read_only is not None:
            why = self.read_only.refusal(statement, feature, keyspace, tables_of, prepare, base_of)
            if why is not None and self.export_dir is not None:
                from cqlsh_ext.agent import export_dir

                if export_dir.is_copy(statement):  # a new file in --export-dir, of a SELECT it runs
                    why = export_dir.copy_refusal(statement, self.export_dir) or \
                        self.read_only.refusal(export_dir.inner_select(statement), None, keyspace, tables_of,
                                               prepare, base_of)
            if why is not None:
                self.error(why, "refused")
                if self.batch:  # (the interactive shell exits 0, as cqlsh's does)
                    self.outcome.note(exits.REFUSED)
                return True
        if self.resume is not None and _first_word(statement) == "select":
            resume, self.resume = self.resume, None
            why = resume.applies(statement, keyspace)
            if why is not None:
                self.error(why, "usage")
                return True
            self.rows.start, self.rows.before = resume.position, resume.before
        return False

    def run_statement(self, run: Callable[[], Any]) -> Any:
        """`run()`, the shell's handling of one statement, timed and classed by how it ended."""
        from cqlsh_ext.common.interrupt import presses, wraps_ctrl_c

        if not self.active or not self.batch:
            return run()
        if self.interrupted:
            return True  # a Ctrl-C stopped the run: what follows is not run
        self.statements += 1
        heard = presses()
        timer = self._start_timer()
        printed = len(self.rows.printed)
        try:
            done = run()
        except KeyboardInterrupt:
            self._stopped(timer, printed)
            return True
        except Exception as err:
            if wraps_ctrl_c(err):
                self._stopped(timer, printed)
                return True
            from cqlsh_ext.agent import crash  # (on a bug only: nothing of it at start-up)

            if not crash.is_bug(err):
                raise
            path = crash.write(err, f"a statement starting with {_first_word(self.statement).upper()}")
            self.outcome.crash_report = self.outcome.crash_report or path
            self.outcome.note(exits.INTERNAL)
            self.error(crash.line(err, path), "internal")
            return True
        finally:
            self._end_timer(timer)
            self._said_cut(printed)
            self.flush()
        if presses() > heard:  # stopped at a first press, and ended as if by itself
            self._stopped(timer, printed)
            self.flush()
        return done

    def write_catalog(self, ctx: ReadContext, tables_of: Callable[[str], Sequence[str]]) -> None:
        """--catalog: the catalog (catalog.py) on standard output, run as a statement is (its time
        limit, its errors); under --read-only a table the policy refuses is not sampled."""
        from cassandra.metadata import protect_name

        from cqlsh_ext.agent import catalog
        from cqlsh_ext.cql.lexer import Lexed

        guard = self.read_only

        def refusal(keyspace: str, table: str) -> str | None:
            if guard is None:
                return None
            read = Lexed(f"SELECT * FROM {protect_name(keyspace)}.{protect_name(table)}")
            return guard.refusal(read, None, None, tables_of)

        self.statement = Lexed("--catalog")
        hidden = guard.hidden_in(ctx.cluster.metadata) if guard is not None else None
        self.run_statement(lambda: catalog.write(ctx, self.settings.catalog or "", refusal, hidden))

    def _start_timer(self) -> StatementTimer | None:
        seconds = self.settings.timeout
        if seconds is None:
            return None
        from cqlsh_ext.agent.timer import StatementTimer

        self._timer = StatementTimer(seconds).start()
        return self._timer

    def _end_timer(self, timer: StatementTimer | None) -> None:
        if timer is None:
            return
        timer.cancel()
        if timer.fired:  # its press may land just after the statement ended: heard here, not later
            import time

            try:
                time.sleep(LATE_PRESS)
            except KeyboardInterrupt:
                pass
        self._timer = None

    def _stopped(self, timer: StatementTimer | None, before: int) -> None:
        """A statement stopped by its --timeout or by Ctrl-C: said, noted; `before`: the results
        printed before it (rows.printed): "printed above" only when a row of its answer was, or it
        is no read (a write's summary with its Resume and Undo lines: what it did)."""
        if _first_word(self.statement) != "select":
            said = "what the statement did before is printed above"
        elif any(result.shown for result in self.rows.printed[before:]):
            said = "what it read before is printed above"
        else:
            said = "no row of its answer was printed"
        if timer is not None and timer.fired:
            self.outcome.note(exits.TIMED_OUT)
            self.cuts.append("timed_out")
            self.error(f"timed out: the statement was stopped at --timeout {timer.seconds:g} s; {said}",
                       "timed_out")
            if _first_word(self.statement) == "select":
                self._said_stopped(before, "timed_out")
            return
        self.interrupted = True
        self._stop()
        self.outcome.note(exits.INTERRUPTED)
        self.cuts.append("interrupted")
        self.error(f"interrupted (Ctrl-C): {said}; the run stops here", "interrupted")
        if _first_word(self.statement) == "select":
            self._said_stopped(before, "interrupted")

    def _said_cut(self, before: int) -> None:
        """Each result --max-rows cut during the statement said, with its token."""
        for printed in self.rows.printed[before:]:
            if printed.cut is None:
                continue
            from cqlsh_ext.agent import resume_token  # (a cut's only)
            from cqlsh_ext.common.private_key import KeyRefused

            self.cuts.append(printed.cut)
            token = why_not = None
            if printed.resume is not None and self.statement is not None:
                try:
                    token = resume_token.token(self.statement, self.keyspace, printed.resume,
                                               self.rows.before + printed.rows)
                except KeyRefused as err:  # no key to seal it with: no token, and why
                    self.error(f"--resume: no token: {err}")
                self.resume_token = self.resume_token or token
            else:
                why_not = printed.why_not or NO_RESUME
                if self.resume_token is None:
                    self.resume_unavailable = self.resume_unavailable or why_not
            self.notice(printed.rows, token, why_not)

    def _said_stopped(self, before: int, cut: str) -> None:
        """A SELECT its --timeout or a Ctrl-C stopped (`cut`: timed_out, interrupted): the token that
        goes on from the row after the last one it printed (its reading's Position there:
        output.row_limit), or why none can."""
        results = self.rows.printed[before:]
        printed = results[-1] if results else None
        token = None
        why_not = NOT_BEGUN if printed is None else printed.why_not
        at = printed.stopped_at() if printed is not None and why_not is None else None
        if printed is not None and at is not None and self.statement is not None:
            from cqlsh_ext.agent import resume_token
            from cqlsh_ext.common.private_key import KeyRefused

            try:
                token = resume_token.token(self.statement, self.keyspace, at,
                                           self.rows.before + printed.shown)
            except KeyRefused as err:  # no key to seal it with: no token, and why
                why_not = f"no key to seal its token with: {err}"
        elif why_not is None:
            why_not = NO_RESUME
        self.rows.start = None  # (a resumed start no result took is not the next statement's)
        if token is not None:
            self.resume_token = self.resume_token or token
        elif self.resume_token is None:
            self.resume_unavailable = self.resume_unavailable or why_not
        self.notice(printed.shown if printed is not None else 0, token, why_not, cut)

    def notice(self, rows: int, token: str | None, why_not: str | None = None, cut: str = MAX_ROWS) -> None:
        """The one line that says an answer was cut (`cut`: on purpose by --max-rows, stopped at
        --timeout or by Ctrl-C), with the token that goes on, or why none can (`resume_unavailable`)."""
        import json

        if self.json_errors:
            said: dict[str, object] = {"type": "truncated", "why": cut, "rows": rows, "resume": token}
            if token is None:
                said["resume_unavailable"] = why_not or NO_RESUME
            sys.stderr.write(json.dumps(said) + "\n")
            return
        go_on = f": --resume {token} goes on from the next row" if token else \
            f": it cannot be gone on with ({why_not or NO_RESUME})"
        if cut == MAX_ROWS:
            most = self.settings.max_rows or 0
            say(f"cut at --max-rows {most:,}: {rows:,} rows printed, more follow{go_on}")
        elif cut == "interrupted":
            say(f"cut by Ctrl-C: {rows:,} rows printed{go_on}")
        else:
            say(f"cut at --timeout {self.settings.timeout or 0:g} s: {rows:,} rows printed{go_on}")

    # ------------------------------------------------------------------ errors

    def error(self, text: str, kind: str | None = None) -> None:
        """An error line, said by the shell's printerr (a JSON object of `kind` with json_errors:
        the shell's printerr keeps it)."""
        self._kind = kind
        try:
            self._printerr(text)
        finally:
            self._kind = None

    def fatal(self, text: str) -> int:
        """cqlsh's last words before it exits 1 ('Connection error: ...', "Can't open ..."), which
        Python would have printed: said as every error is; the run's exit code: 130 for a Ctrl-C
        while connecting (cqlsh's 'Connection aborted.'), else 1."""
        if text == CONNECTION_ABORTED:
            kind, code = "interrupted", exits.INTERRUPTED.code
        else:
            kind, code = ("usage" if text.startswith("Can't open") else "connection"), exits.CONNECTION.code
        if not self.json_errors:
            say(text)
        else:
            self._pending.append((text, kind))
        return code

    def keep(self, text: str) -> None:
        """A line the shell's printerr was handed, kept to be written as JSON (of the kind error()
        names, else read from the line)."""
        self._pending.append((text, self._kind))

    def flush(self) -> None:
        """The errors kept, each one JSON object on standard error; a line that starts with a space
        (cqlsh's statement and caret under a syntax error) is the detail of the one before, and the
        other lines of one error (a server's message that holds line breaks) its message's."""
        if not self._pending:
            return
        from cqlsh_ext.agent.errors import classify

        pending, self._pending = self._pending, []
        grouped: list[tuple[str, str | None, list[str]]] = []
        for text, kind in pending:
            for at, line in enumerate(text.splitlines() or [""]):
                if grouped and (line[:1].isspace() or not line.strip()):
                    grouped[-1][2].append(line)
                elif at and grouped:
                    last, last_kind, detail = grouped[-1]
                    grouped[-1] = (f"{last}\n{line}", last_kind, detail)
                else:
                    grouped.append((line, kind, []))
        statement = self.statement.text if self.statement is not None else None
        for line, kind, detail in grouped:
            found = classify(line, statement, kind)
            if detail:
                from dataclasses import replace

                found = replace(found, detail="\n".join(detail).rstrip())
            sys.stderr.write(found.line() + "\n")
        sys.stderr.flush()


def _held_export_dir(agent: AgentSettings) -> ExportDir:
    """--export-dir's directory held, the shell's exports written through it (export.command.HELD);
    raises SettingError (without --read-only, or a directory not the user's alone)."""
    from cqlsh_ext.agent import export_dir
    from cqlsh_ext.export import command
    from cqlsh_ext.mcp_server.exports import ExportRefused
    from cqlsh_ext.settings import SettingError

    if not agent.read_only or agent.export_dir is None:
        raise SettingError(f"{export_dir.FLAG} goes with --read-only: without it COPY writes where it names")
    try:
        held = export_dir.hold(agent.export_dir)
    except ExportRefused as err:
        raise SettingError(f"{export_dir.FLAG}: {err}") from None
    command.HELD = export_dir.private_file(held)
    return held


def _first_word(statement: Lexed | None) -> str:
    if statement is None:
        return ""
    first = statement.tokens[0] if statement.tokens else None
    return first.value.lower() if first is not None and first.kind == "word" else ""
