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
from cqlsh_ext.repl.completer import CqlCompleter
from cqlsh_ext.repl.highlight import CqlLexer, style
from cqlsh_ext.repl.history import SafeFileHistory, history_path
from cqlsh_ext.repl.keybindings import key_bindings
from cqlsh_ext.repl.pager import paged_output
from cqlsh_ext.repl.statement_end import input_state
from cqlsh_ext.repl.toolbar import toolbar_fragments
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell

#: cqlsh statements whose effects cannot be left half done by stopping to wait: reads. Our own
#: commands say so in their declaration (cqlsh_ext.commands).
_READS = ("select", "describe", "desc", "list", "show", "help", "history")


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
        # '...' only where the user started a new line: a long line the screen wraps continues
        # under the text, unmarked, as a terminal wraps it.
        return " " * width if is_soft_wrap else " " * max(width - 4, 0) + "... "

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
        key_bindings=key_bindings(complete, completer),
        multiline=True,
        prompt_continuation=continuation,
        bottom_toolbar=toolbar,
        enable_history_search=False,
        search_ignore_case=True,
        erase_when_done=False,
    )


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
            previous = signal.signal(signal.SIGINT, sigint)
            try:
                text = session.prompt(shell.prompt, handle_sigint=False)
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt: input cleared
            except EOFError:
                print()
                shell.do_exit()
                break
            finally:
                signal.signal(signal.SIGINT, previous)
            if sigint.seen:
                shell.printerr("Cancelled.")  # Ctrl-C right after Enter: the statement never starts
                continue
            execute(shell, text, cqlshmain)
        except KeyboardInterrupt:
            # A second Ctrl-C while the first was being reported: still never the shell.
            shell.reset_statement()
            print()


class _PromptSigint:
    """SIGINT while prompt() runs. prompt_toolkit's own handler hands it to the running prompt and
    drops it once Enter has been taken: a Ctrl-C pressed just after Enter, while the prompt winds
    down (it waits for the completion threads: a second or so on a session's first statements),
    was lost and the statement ran to its end. A prompt that takes the signal raises
    KeyboardInterrupt; one that returns the input after a signal has dropped it: `seen` says so."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: Any) -> None:
        from prompt_toolkit.application.current import get_app_or_none

        self.seen = True
        app = get_app_or_none()
        if app is not None and app.is_running and not app.is_done and app.loop is not None:
            app.loop.call_soon_threadsafe(app.key_processor.send_sigint)  # as prompt_toolkit does


def _reads_only(word: str) -> bool:
    from cqlsh_ext.commands import command

    declared = command(word)
    return declared.reads_only if declared is not None else word in _READS


def execute(shell: Shell, text: str, cqlshmain: Any) -> None:
    """Run one submitted input through cqlsh, as its cmdloop does for a finished statement."""
    if not text.strip():
        return
    source = text + "\n"
    shell.statement.write(source)
    first = re.split(r"[\s;(]", text.strip(), maxsplit=1)[0].lower()
    try:
        with paged_output(shell, first):
            shell.onecmd(source)
    except cqlshmain.CQL_ERRORS as err:
        shell.printerr(getattr(err, "message", str(err)))
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        note = "" if _reads_only(first) else " (the server may still apply it)"
        shell.printerr(f"Cancelled{note}.")
    finally:
        shell.reset_statement()
        sys.stdout.flush()
