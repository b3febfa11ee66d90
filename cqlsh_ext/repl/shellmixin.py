"""Shell methods for the interactive front end (mixed into cqlsh_ext.shell.ExtShell).

`repl_mode` is decided once, when the main shell is built: a person at a terminal (stdin and
stdout are terminals, no -e/-f, not a SOURCE sub-shell) and not `--classic`. When it is False
every method here hands over to cqlsh unchanged, so the classic loop stays exactly stock.

In repl_mode:
- cqlsh's readline hooks are switched off (its module global `readline` set to None) before
  cqlsh's Shell.__init__ runs: no "ATTENTION: all commands will be saved" banner, and
  cqlsh_history is neither read nor written; our history (history.py) replaces it;
- results are printed without ---MORE--- pauses, through the pager when taller than the screen,
  and vertically when wider (auto_vertical);
- HISTORY reads our history, HELP lists the key bindings;
- the driver retries a lost server every few seconds at most, so a restarted server is used
  again soon (the default backs off up to 10 minutes).

Nothing here imports prompt_toolkit; app.py does, in the Preload thread while cqlsh connects.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Any

#: Driver reconnection schedule in the interactive shell: 0.5 s, 1 s, then every 2 s.
RECONNECT_BASE_DELAY = 0.5
RECONNECT_MAX_DELAY = 2.0
#: GIL switch interval while the prompt is built in the background (seconds).
PRELOAD_SWITCH_INTERVAL = 0.0005
#: The preload starts once the main thread has waited this long for the server (seconds).
PRELOAD_SETTLE = 0.002
#: HELP KEYS / HELP KEYBINDINGS
KEY_TOPICS = ("keys", "keybindings", "bindings")


def wants_repl(settings: Any, kwargs: dict[str, Any]) -> bool:
    """The Shell kwargs cqlsh's main() passes decide: interactive main shell, not classic."""
    return (not settings.classic
            and bool(kwargs.get("tty", True))
            and kwargs.get("stdin") is None
            and not kwargs.get("single_statement")
            and not kwargs.get("is_subshell")
            and kwargs.get("use_conn") is None
            and sys.stdin.isatty() and sys.stdout.isatty())


class Preload:
    """Builds the prompt (prompt_toolkit's import, the session) in a thread while the main thread
    waits for the server; cqlsh's main() has set up the rule set before the Shell.

    Idle priority: the work starts once the main thread has waited (in threading's
    Condition.wait, where the driver waits for the server) for PRELOAD_SETTLE seconds on end.
    The handshake's short waits (a round trip each on localhost) do not count: sharing the GIL
    then only stretches the handshake. Cassandra's password check (~80 ms) or a distant server
    does. `join()` (the loop needs the prompt now) starts the work at once.
    """

    def __init__(self, shell: Any) -> None:
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


class ReplShellMixin:
    repl_mode: bool = False
    # Provided by cqlsh's Shell / ExtShell; declared for type checkers.
    display_settings: Any
    query_out: Any
    shunted_query_out: Any
    expand_enabled: bool
    color: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.repl_mode = wants_repl(self.display_settings, kwargs)
        self.save_repl_history = not kwargs.get("disable_history", False)
        self.max_history_length_shown = 50
        self.repl_history: Any = None  # set by app.build_session
        self.repl_session: Any = None
        # Auto vertical output: decided once per result (pages must not switch layout), and the
        # row numbers continue over pages. Traces and conditional-write results come outside a
        # result (print_formatted_result/print_static_result directly) and decide on their own.
        self._in_result = False
        self._vertical_now = False
        self._row_offset = 0
        self.repl_preload: Preload | None = None
        if self.repl_mode:
            self.repl_preload = Preload(self)
            from cqlsh_ext.seams import import_cqlshmain

            import_cqlshmain(None).readline = None
        super().__init__(*args, **kwargs)
        if self.repl_mode:
            self._shorten_reconnection()

    def _shorten_reconnection(self) -> None:
        from cassandra.policies import ExponentialReconnectionPolicy

        # Read by the driver whenever it starts reconnecting to a host, so setting it after
        # connecting is enough.
        self.conn.reconnection_policy = ExponentialReconnectionPolicy(  # type: ignore[attr-defined]
            RECONNECT_BASE_DELAY, RECONNECT_MAX_DELAY)

    def do_login(self, parsed: Any) -> None:
        super().do_login(parsed)  # type: ignore[misc]  # a new Cluster on success
        if self.repl_mode:
            self._shorten_reconnection()

    # ------------------------------------------------------------------ results

    def print_result(self, result: Any, table_meta: Any) -> None:
        if not self.repl_mode or self.shunted_query_out is not None:
            # Classic loop, or CAPTURE (which writes to its file without pauses anyway).
            return super().print_result(result, table_meta)  # type: ignore[misc]
        from cqlsh_ext.repl.pager import NoPager, PagedOutput, PagerClosed, pager_command

        size = shutil.get_terminal_size()
        command = pager_command(self.display_settings.pager)
        out = PagedOutput(self.query_out, command if isinstance(command, str) else None,
                          max(size.lines - 2, 1))
        self.query_out = out
        self._in_result = True
        try:
            if getattr(self, "machine_format", None) or command is NoPager.NOT_FOUND:
                # JSON/CSV: no pauses there. No pager installed: cqlsh's ---MORE--- pauses.
                super().print_result(result, table_meta)  # type: ignore[misc]
            else:
                self._print_result_unpaused(result, table_meta)
        except PagerClosed:
            pass
        finally:
            self._in_result, self._vertical_now, self._row_offset = False, False, 0
            self.query_out = out.out
            out.finish()

    def _print_result_unpaused(self, result: Any, table_meta: Any) -> None:
        """cqlsh's Shell.print_result for a terminal, without the ---MORE--- prompt."""
        self.decoding_errors: list[Any] = []
        self.writeresult("")  # type: ignore[attr-defined]
        num_rows = 0
        first = True
        while True:
            if result.current_rows or first:
                self.print_static_result(result, table_meta, True, True, num_rows)  # type: ignore[attr-defined]
                num_rows += len(result.current_rows)
            if not result.has_more_pages:
                break
            result.fetch_next_page()
            first = False
        self.writeresult(f"({num_rows} rows)")  # type: ignore[attr-defined]
        if self.decoding_errors:
            from cqlshlib.displaying import RED

            for err in self.decoding_errors[:2]:
                self.writeresult(err.message(), color=RED)  # type: ignore[attr-defined]
            if len(self.decoding_errors) > 2:
                more = len(self.decoding_errors) - 2
                self.writeresult(f"{more} more decoding errors suppressed.", color=RED)  # type: ignore[attr-defined]

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = 0) -> None:
        self._row_offset = row_count_offset
        try:
            return super().print_static_result(  # type: ignore[misc]
                result, table_meta, with_header, tty, row_count_offset)
        finally:
            if not self._in_result:
                self._row_offset = 0

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None:
        if self.repl_mode and formatted_values and not self.expand_enabled:
            vertical = self._vertical_now or (
                self.display_settings.auto_vertical
                and _table_width(formatted_names, formatted_values) > shutil.get_terminal_size().columns)
            if self._in_result:
                self._vertical_now = vertical
            if vertical:
                return self.print_formatted_result_vertically(  # type: ignore[attr-defined]
                    formatted_names, formatted_values, self._row_offset)
        return super().print_formatted_result(  # type: ignore[misc]
            formatted_names, formatted_values, with_header, tty)

    # ------------------------------------------------------------------ commands

    def do_history(self, parsed: Any) -> None:
        if not self.repl_mode:
            return super().do_history(parsed)  # type: ignore[misc]
        n = parsed.get_binding("n")
        if n is not None:
            self.max_history_length_shown = int(n)
        entries = list(self.repl_history.get_strings()) if self.repl_history is not None else []
        # The last entry is this HISTORY command itself; cqlsh leaves it out as well.
        for entry in entries[:-1][-self.max_history_length_shown:]:
            print(entry)

    def do_help(self, parsed: Any) -> None:
        topics = [t.lower() for t in parsed.get_binding("topic", ())]
        if not self.repl_mode:
            return super().do_help(parsed)  # type: ignore[misc]
        if topics and all(t in KEY_TOPICS for t in topics):
            self.print_key_help()
            return
        super().do_help(parsed)  # type: ignore[misc]
        if not topics:
            self.print_key_help()

    def print_key_help(self) -> None:
        from cqlsh_ext.repl.keybindings import KEY_HELP

        width = max(len(key) for key, _ in KEY_HELP)
        print("Key bindings (HELP KEYS):")
        for key, what in KEY_HELP:
            print(f"  {key.ljust(width)}  {what}")
        print()


def _table_width(formatted_names: list[Any], formatted_values: list[Any]) -> int:
    """Columns cqlsh's table layout needs: ' a | b | c'."""
    widths = [n.displaywidth for n in formatted_names]
    for row in formatted_values:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], value.displaywidth)
    return 1 + sum(widths) + 3 * (len(widths) - 1)
