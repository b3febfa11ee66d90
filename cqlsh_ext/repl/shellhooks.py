"""What the Shell does differently for the interactive front end (called from cqlsh_ext.shell).

`repl_mode` is decided once, when the main shell is built: a person at a terminal (stdin and
stdout are terminals, no -e/-f, not a SOURCE sub-shell) and not `--classic`. When it is False
the shell calls none of this, so the classic loop stays exactly stock. Whether the shell reads a
batch (-e, -f, a pipe: its Ctrl-C ends the run, agent.door) is decided here too, from the same
kwargs (batch_run): the classic loop at a terminal is no batch.

In repl_mode:
- cqlsh's readline hooks are switched off (its module global `readline` set to None) before
  cqlsh's Shell.__init__ runs: no "ATTENTION: all commands will be saved" banner, and
  cqlsh_history is neither read nor written; our history (history.py) replaces it;
- results are printed without ---MORE--- pauses, through the pager when taller than the screen,
  and vertically when wider (auto_vertical): cqlsh_ext.output.pipeline;
- HISTORY reads our history, HELP lists the key bindings;
- the driver retries a lost server every few seconds at most, so a restarted server is used
  again soon (the default backs off up to 10 minutes).

Nothing here imports prompt_toolkit; app.py does, in the Preload thread while cqlsh connects.
"""

from __future__ import annotations

import io
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed

#: Driver reconnection schedule in the interactive shell: 0.5 s, 1 s, then every 2 s.
RECONNECT_BASE_DELAY = 0.5
RECONNECT_MAX_DELAY = 2.0
#: GIL switch interval while the prompt is built in the background (seconds).
PRELOAD_SWITCH_INTERVAL = 0.0005
#: The preload starts once the main thread has waited this long for the server (seconds).
PRELOAD_SETTLE = 0.002
#: HELP KEYS / HELP KEYBINDINGS
KEY_TOPICS = ("keys", "keybindings", "bindings")


def typed_at_a_terminal(kwargs: dict[str, Any]) -> bool:
    """The Shell kwargs cqlsh's main() passes decide: a person types the statements at a terminal
    (the main shell, stdin a terminal; not -e, -f, a pipe, nor SOURCE's sub-shell, which reads a
    file). Else the run is a batch (agent.door): its Ctrl-C ends it, exit code 130."""
    return (bool(kwargs.get("tty", True))
            and kwargs.get("stdin") is None
            and not kwargs.get("single_statement")
            and not kwargs.get("is_subshell")
            and kwargs.get("use_conn") is None
            and sys.stdin.isatty())


def batch_run(kwargs: dict[str, Any], running: bool) -> bool:
    """Whether the shell made with these kwargs reads a batch: -e, -f or a pipe's statements, not
    the person at the prompt (--classic's included). SOURCE's sub-shell runs as the shell that
    runs it, which is a batch when `running` says so."""
    if kwargs.get("is_subshell"):
        return running
    return not typed_at_a_terminal(kwargs)


def wants_repl(settings: Any, kwargs: dict[str, Any]) -> bool:
    """Our prompt (prompt_toolkit): typed at a terminal that shows it, and not --classic."""
    return not settings.classic and typed_at_a_terminal(kwargs) and sys.stdout.isatty()


class Preload:
    """Builds the prompt (prompt_toolkit's import, the session) in a thread while the main thread
    waits for the server; cqlsh's main() has set up the rule set before the Shell.

    Idle priority: the work starts once the main thread has waited (in threading's
    Condition.wait, where the driver waits for the server) for PRELOAD_SETTLE seconds on end.
    The handshake's short waits (a round trip each on localhost) do not count: sharing the GIL
    then only stretches the handshake. Cassandra's password check (~80 ms) or a distant server
    does. `join()` (the loop needs the prompt now) starts the work at once.
    """

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.main_thread = threading.get_ident()
        self.needed = threading.Event()
        # The driver's I/O thread wakes up for every answer of the connection handshake; with the
        # default 5 ms GIL switch interval it would queue behind this CPU-bound thread each time.
        self.saved_interval = sys.getswitchinterval()
        sys.setswitchinterval(PRELOAD_SWITCH_INTERVAL)
        self.thread = threading.Thread(target=self._run, name="cqlsh-ext-preload", daemon=True)
        self.thread.start()

    def join(self) -> None:
        self.needed.set()
        self.thread.join()

    def _run(self) -> None:
        try:
            self._wait_for_idle_main_thread()
            from cqlsh_ext.repl import app

            app.prepare(self.shell)
        except Exception:  # the loop builds it again in the main thread, and reports errors
            pass
        finally:
            sys.setswitchinterval(self.saved_interval)

    def _wait_for_idle_main_thread(self) -> None:
        blocked_since: float | None = None
        while not self.needed.is_set():
            frame = sys._current_frames().get(self.main_thread)
            if frame is None:
                return
            now = time.monotonic()
            if frame.f_code.co_name == "wait" and frame.f_code.co_filename == threading.__file__:
                if blocked_since is None:
                    blocked_since = now
                elif now - blocked_since >= PRELOAD_SETTLE:
                    return
            else:
                blocked_since = None
            del frame
            self.needed.wait(PRELOAD_SETTLE / 4)


def before_connect(shell: Shell) -> None:
    """Before cqlsh's Shell.__init__ connects: start building the prompt, switch cqlsh's
    readline history off (ours replaces it)."""
    shell.repl_preload = Preload(shell)
    from cqlsh_ext.upstream.seams import import_cqlshmain

    setattr(import_cqlshmain(None), "readline", None)  # noqa: B010  (cqlsh's module global)


def shorten_reconnection(shell: Shell) -> None:
    """After connecting (and after LOGIN): retry a lost server every few seconds at most."""
    from cassandra.policies import ExponentialReconnectionPolicy

    # Read by the driver whenever it starts reconnecting to a host, so setting it after
    # connecting is enough.
    shell.conn.reconnection_policy = ExponentialReconnectionPolicy(RECONNECT_BASE_DELAY, RECONNECT_MAX_DELAY)


def do_history(shell: Shell, parsed: Parsed) -> None:
    """HISTORY from our history file (cqlsh's reads readline's)."""
    n = parsed.get_binding("n")
    if n is not None:
        shell.max_history_length_shown = int(n)
    entries = list(shell.repl_history.get_strings()) if shell.repl_history is not None else []
    # The last entry is this HISTORY command itself; cqlsh leaves it out as well.
    for entry in entries[:-1][-shell.max_history_length_shown:]:
        print(entry)


def do_help(shell: Shell, parsed: Parsed, stock_help: Any) -> None:
    """cqlsh's HELP, plus the key bindings (HELP KEYS, or at the end of a bare HELP). Our own
    topics' texts are fitted to a screen narrower than they are (insight.report.fit); cqlsh's
    are printed as cqlsh prints them."""
    topics = [t.lower() for t in parsed.get_binding("topic", ())]
    if topics and all(t in KEY_TOPICS for t in topics):
        print_key_help()
        return
    saved = shell.stdout
    shell.stdout = _FittedHelp(saved, own_help_texts(type(shell)))
    try:
        stock_help(shell, parsed)
    finally:
        shell.stdout = saved
    if not topics:
        print_key_help()


def own_help_texts(cls: type) -> frozenset[str]:
    """The HELP texts the Shell class `cls` has of cqlsh-ext's (its commands' and topics', those
    of several words included), not cqlsh's own."""
    from cqlsh_ext.features.commands import help_topics
    from cqlsh_ext.upstream.seams import stock_shell_class

    stock = stock_shell_class()
    return frozenset(getattr(cls, name).__doc__ for name in dir(cls)
                     if name.startswith("do_") and not hasattr(stock, name) and getattr(cls, name).__doc__) \
        | {str(text) for _topic, text in help_topics()}


class _FittedHelp(io.TextIOBase):
    """The shell's stdout while cqlsh's HELP writes: a text of ours (cqlsh writes each topic's
    text in one call) is fitted to the screen; anything else passes unchanged."""

    #: A plain attribute here (io.TextIOBase's is a read-only property): the stream's encoding,
    #: set from the one written to.
    encoding = "utf-8"

    def __init__(self, out: Any, texts: frozenset[str]) -> None:
        super().__init__()
        self.out = out
        self.encoding = getattr(out, "encoding", None) or "utf-8"
        self.texts = texts


    def flush(self) -> None:
        self.out.flush()

    def write(self, text: str) -> int:
        body = text[:-1] if text.endswith("\n") else text
        if body in self.texts:
            import shutil

            from cqlsh_ext.common.text import fit

            fitted = "\n".join(fit(body.split("\n"), shutil.get_terminal_size().columns))
            self.out.write(fitted + text[len(body):])
        else:
            self.out.write(text)
        return len(text)


#: The widest the key column of HELP KEYS is made on a screen where the longest key would leave
#: its description too little room: a longer key then stands on a line of its own.
KEY_COLUMN = 24
#: Below this many columns beside the keys, HELP KEYS stacks each description under its key: beside
#: them, at 40 columns, it was a column of a word or two, continued at other indents.
KEY_TEXT_ROOM = 30


def key_help_lines(width: int) -> list[str]:
    """HELP KEYS for a screen `width` columns wide (0: whole lines): keys in a column, each
    description beside it, wrapped at words under its column (common.text.fit)."""
    from cqlsh_ext.common.text import fit
    from cqlsh_ext.repl.keybindings import KEY_HELP

    longest = max(len(key) for key, _ in KEY_HELP)
    if not width or all(2 + longest + 2 + len(what) <= width for _, what in KEY_HELP):
        column = longest  # every entry on one line
    else:
        column = max(len(key) for key, _ in KEY_HELP if len(key) <= KEY_COLUMN)
        if width - (2 + column + 2) < KEY_TEXT_ROOM:  # narrow: each key on its row, its text under it
            column = 0
    lines = ["Key bindings (HELP KEYS):"]
    for key, what in KEY_HELP:
        if len(key) > column:
            lines.append(f"  {key}")
            key = ""
        lines.append(f"  {key.ljust(column)}  {what}")
    return list(fit(lines, width))


def print_key_help() -> None:
    import shutil

    for line in key_help_lines(shutil.get_terminal_size().columns):
        print(line)
    print()
