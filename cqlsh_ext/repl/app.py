"""The prompt_toolkit loop: read a statement, hand it to cqlsh's Shell.onecmd, repeat.

Wiring only; each concern lives in its own module (completer, lexer, history, keybindings,
toolbar, and the Shell side in shellhooks). Statements run in the main thread, as in cqlsh, so
Ctrl-C while one runs raises KeyboardInterrupt where the shell waits for the driver (the
driver's ResponseFuture.result() or a page fetch): we stop waiting, drop the rest of the result
and are back at the prompt. The CQL protocol has no way to cancel a request on the server, so
a write that was already sent may still be applied.
"""

from __future__ import annotations

import re
import signal
import sys
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.shortcuts import CompleteStyle

from cqlsh_ext.common import gc_pause
from cqlsh_ext.common.interrupt import carried, hand_on
from cqlsh_ext.repl.completer import CqlCompleter
from cqlsh_ext.repl.highlight import CqlLexer, style
from cqlsh_ext.repl.history import SafeFileHistory, history_path
from cqlsh_ext.repl.keybindings import key_bindings
from cqlsh_ext.repl.pager import paged_output
from cqlsh_ext.repl.statement_end import input_state, pasted
from cqlsh_ext.repl.toolbar import toolbar_fragments
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell

#: cqlsh statements whose effects cannot be left half done by stopping to wait: reads, and LOGIN
#: (a new connection of this shell's, nothing on the server). Our own commands say so in their
#: declaration (cqlsh_ext.features.commands).
_READS = ("select", "describe", "desc", "list", "show", "help", "history", "login")
#: Reads of the terminal's pending input after a prompt (1 KiB each): a paste's worth at most.
TYPEAHEAD_READS = 64


def prepare(shell: Shell) -> None:
    """Build the prompt while the shell connects (a thread started by shellhooks).

    Nothing here touches the terminal or the shell's connection: prompt_toolkit's import
    (~60 ms CPU) and the prompt session with its key bindings (~10 ms) are built while the driver
    waits for the server (password checks alone take ~80 ms per connection on Cassandra), so the
    first prompt comes about when cqlsh's does. Highlighting builds its scanner on first input.
    """
    if getattr(shell, "repl_session", None) is None:
        shell.repl_session = build_session(shell, seams.import_cqlshmain(None).cqlruleset)
    # prompt_toolkit imports ctypes when the first prompt starts (for its Ctrl-C handling).
    import ctypes  # noqa: F401


def build_session(shell: Shell, ruleset: Any) -> PromptSession[str]:
    cqlshmain = seams.import_cqlshmain(None)
    history = SafeFileHistory(history_path(cqlshmain.HISTORY), save=shell.save_repl_history)
    shell.repl_history = history

    def complete(text: str) -> bool:
        return input_state(text, ruleset)[0]

    def continuation(width: int, line_number: int, is_soft_wrap: int) -> str:
        return continuation_prefix(width, screen_columns(), bool(is_soft_wrap))

    def toolbar() -> Any:  # prompt_toolkit's StyleAndTextTuples
        from prompt_toolkit.application import get_app

        app = get_app()
        text = app.current_buffer.text
        done, opened = input_state(text, ruleset)
        return toolbar_fragments(shell, pending=bool(text.strip()) and not done,
                                 width=app.output.get_size().columns, opened=opened)

    completer = CqlCompleter(shell, ruleset)
    return PromptSession(
        history=history,
        completer=completer,
        complete_while_typing=True,
        complete_style=CompleteStyle.COLUMN,
        lexer=CqlLexer(ruleset),  # dropped in run() when colours are off
        style=style(),
        include_default_pygments_style=False,
        key_bindings=key_bindings(complete, completer, lambda before, data: pasted(before, data, ruleset)),
        multiline=True,
        prompt_continuation=continuation,
        bottom_toolbar=toolbar,
        enable_history_search=False,
        search_ignore_case=True,
        erase_when_done=False,
    )


def continuation_prefix(prompt_width: int, columns: int, soft_wrap: bool) -> str:
    """What a line of the statement after its first starts with. '...' only where the user started
    a new line; a long line the screen wraps goes on unmarked. Both under the text when the prompt
    leaves it at least half the screen; else from the first column, as a terminal (and cqlsh's
    readline) wraps: under a prompt as wide as the screen (a long keyspace name, a narrow window)
    nothing typed, nor the prompt, was shown."""
    if 2 * prompt_width > columns:
        return "" if soft_wrap else "... "
    return " " * prompt_width if soft_wrap else " " * max(prompt_width - 4, 0) + "... "


def screen_columns() -> int:
    from prompt_toolkit.application import get_app

    return get_app().output.get_size().columns


def run(shell: Shell) -> None:
    """The interactive loop; returns when the user exits (EXIT, QUIT, Ctrl-D)."""
    cqlshmain = seams.import_cqlshmain(None)
    if shell.repl_preload is not None:
        shell.repl_preload.join()
    prepare(shell)  # in case the thread failed
    gc_pause.resume()
    session = shell.repl_session
    if not shell.color:
        session.lexer = None
    while not shell.stop:
        try:
            shell.reset_prompt()
            sigint = _PromptSigint()
            try:
                text = session.prompt(shell.prompt, handle_sigint=False, pre_run=sigint.prompt_started)
                if ctrl_c_typed_after_enter(session):
                    sigint.typed = True
            except KeyboardInterrupt:
                sigint.restore()
                continue  # Ctrl-C at the prompt: input cleared
            except EOFError:
                sigint.restore()
                print()
                shell.do_exit()
                break
            except BaseException:
                sigint.restore()
                raise
            execute(shell, text, cqlshmain, sigint)
        except KeyboardInterrupt:
            # A second Ctrl-C while the first was being reported: still never the shell.
            shell.reset_statement()
            print()


class _PromptSigint:
    """Ctrl-C from Enter until the statement starts. Installed as the SIGINT handler for prompt()
    and after it, until `restore()` (execute(), inside its own handling of KeyboardInterrupt) puts
    the previous one back.

    prompt_toolkit's own handler hands SIGINT to the running prompt and drops it once Enter has
    been taken: a Ctrl-C pressed just after Enter, while the prompt winds down (it waits for the
    completion threads: a second or so on a session's first statements), was lost and the
    statement ran to its end. A prompt that takes the signal raises KeyboardInterrupt; one that
    returns the input after a signal has dropped it: `seen` says so. A Ctrl-C typed while the
    prompt still held the terminal in raw mode is no signal but a key: `typed` says so
    (ctrl_c_typed_after_enter).

    A Ctrl-C before the prompt has started (as a statement's last lines are written: a COMPRESSION
    STATS finishing) is not the next statement's: it was taken as pressed after that statement's
    Enter and cancelled it, unasked (`Cancelled.` under a statement typed afterwards). It is the
    empty prompt's, which shows as ever."""

    def __init__(self) -> None:
        self.seen = False
        self.typed = False
        #: The prompt has started (its pre_run): a press from then on is the prompt's, or, after
        #: Enter, the statement's.
        self.prompting = False
        self.previous: Any = signal.signal(signal.SIGINT, self)
        self._installed = True

    def prompt_started(self) -> None:
        self.prompting = True

    def __call__(self, signum: int, frame: Any) -> None:
        from prompt_toolkit.application.current import get_app_or_none

        if not self._installed:  # restored, and put back by whoever had saved it: not the prompt's
            hand_on(self.previous, signum, frame)
            return
        if not self.prompting:  # the prompt to come is empty: nothing to clear, nothing to cancel
            return
        app = get_app_or_none()
        if app is not None and not app.is_done:  # before Enter: the prompt's (its input cleared)
            if app.is_running and app.loop is not None:
                self.seen = True  # (should Enter be taken first, the statement is the one cancelled)
                app.loop.call_soon_threadsafe(app.key_processor.send_sigint)  # as prompt_toolkit does
            return
        self.seen = True  # after Enter: the statement's, cancelled before it starts

    def restore(self) -> bool:
        """Put the previous handler back (idempotent); whether Ctrl-C was pressed meanwhile. A
        signal that came before is handled by this one: CPython runs pending handlers before it
        replaces one; one that comes after goes to the previous handler (KeyboardInterrupt)."""
        if self._installed:
            self._installed = False
            signal.signal(signal.SIGINT, self.previous)
        return self.seen or self.typed


def ctrl_c_typed_after_enter(session: PromptSession[str]) -> bool:
    """Whether Ctrl-C was typed after Enter while prompt_toolkit still held the terminal in raw
    mode (ISIG off): from the moment Enter is pressed until prompt() has read it, drawn the input
    as done, waited for the terminal's cursor report and put the terminal back (50 to 130 ms,
    once 0.4 s, on a 2-core machine at a load average of 10). The terminal then sends no SIGINT
    but the byte 0x03: prompt_toolkit keeps the keys after Enter for the next prompt (its
    typeahead) or leaves them unread, and the next prompt took that Ctrl-C as "clear the input"
    after the statement had run to its end.

    Called once prompt() has returned (the terminal is back in its own mode): the keys kept and the
    bytes still pending are read; a Ctrl-C among them is taken out, with what was typed before it
    (as a terminal's Ctrl-C drops the input it holds), and what was typed after it is handed to
    the next prompt."""
    from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
    from prompt_toolkit.keys import Keys

    given = session.input
    keys = get_typeahead(given)
    for _ in range(TYPEAHEAD_READS):  # read() returns what is there, never waits
        more = given.read_keys()
        if not more:
            break
        keys += more
    keys += given.flush_keys()
    pressed = [i for i, key in enumerate(keys) if key.key == Keys.ControlC]
    store_typeahead(given, keys[pressed[-1] + 1:] if pressed else keys)
    return bool(pressed)


#: COPY that reads: ours, `COPY (SELECT ...) TO`, and cqlsh's `COPY t [(columns)] TO`; its FROM writes.
_COPY_TO = re.compile(r"copy\s*(\(|[\w.\"]+\s*(\([^)]*\)\s*)?to\b)", re.IGNORECASE)


def _reads_only(word: str, text: str) -> bool:
    from cqlsh_ext.features.commands import command

    if word == "copy":
        return _COPY_TO.match(text.strip()) is not None
    declared = command(word)
    return declared.reads_only if declared is not None else word in _READS


def execute(shell: Shell, text: str, cqlshmain: Any, sigint: _PromptSigint | None = None) -> None:
    """Run one submitted input through cqlsh, as its cmdloop does for a finished statement.
    `sigint`: the handler the loop installed at the prompt, put back here, where a Ctrl-C from
    then on is reported."""
    first = re.split(r"[\s;(]", text.strip(), maxsplit=1)[0].lower()
    never_started = False
    try:
        if sigint is not None and sigint.restore() and text.strip():
            never_started = True  # Ctrl-C between Enter and here
            raise KeyboardInterrupt
        if not text.strip():
            return
        source = text + "\n"
        shell.statement.write(source)
        with carried(), paged_output(shell, first):
            shell.onecmd(source)
    except cqlshmain.CQL_ERRORS as err:
        shell.printerr(getattr(err, "message", str(err)))
    except KeyboardInterrupt:
        if not (never_started and sigint is not None and not sigint.seen):
            sys.stdout.write("\n")  # under the ^C the terminal wrote (none for a key typed in raw mode)
        note = "" if never_started or _reads_only(first, text) else " (the server may still apply it)"
        shell.printerr(f"Cancelled{note}.")
    finally:
        shell.reset_statement()
        sys.stdout.flush()
