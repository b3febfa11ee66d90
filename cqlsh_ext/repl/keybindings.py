"""Key bindings of the interactive shell, on top of prompt_toolkit's Emacs defaults.

Enter runs the input only when cqlsh would: a complete statement (see statement.py); otherwise
it starts a new line, as cqlsh's continuation prompt does. A paste (bracketed) goes in with a
wrapped command's lines joined (statement_end.pasted): a hint copied from a narrow screen runs as
one statement. Ctrl-C (clear the input), Ctrl-D (exit
on an empty line), Ctrl-R (history search) and Tab (completion) are prompt_toolkit's own.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.buffer import CompletionState
from prompt_toolkit.completion import CompleteEvent, Completer, get_common_complete_suffix
from prompt_toolkit.filters import completion_is_selected, has_focus, is_searching
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

#: Shown by HELP and HELP KEYS (cqlsh_ext.repl.shellhooks); keep in step with the bindings.
KEY_HELP: tuple[tuple[str, str], ...] = (
    ("Enter", "run the input if it is a complete statement (ends with ;), else a new line"),
    ("Alt-Enter, Esc Enter", "new line, even after a complete statement"),
    ("Tab", "complete: keywords, keyspaces, tables, columns, types, functions, payload keys; again: next"),
    ("Up, Down", "move between lines, then through the history"),
    ("Ctrl-R", "search the history backwards (Ctrl-R again: older, Enter: take it)"),
    ("Ctrl-C", "clear the input; while a statement runs: stop waiting for it; at a question: no"),
    ("Ctrl-D", "exit, on an empty line"),
    ("Ctrl-L", "clear the screen"),
    ("Ctrl-A, Ctrl-E, Alt-B, Alt-F, Ctrl-W, ...", "Emacs line editing"),
    ("q, Ctrl-C (in the pager)", "leave a long result; fetching stops"),
)


def key_bindings(is_complete: Callable[[str], bool], completer: Completer,
                 pasted: Callable[[str, str], str] | None = None) -> KeyBindings:
    kb = KeyBindings()
    default_buffer = has_focus("DEFAULT_BUFFER") & ~is_searching

    if pasted is not None:
        joined = pasted

        @kb.add(Keys.BracketedPaste, filter=default_buffer)
        def _paste(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            buffer.insert_text(joined(buffer.document.text_before_cursor, event.data))

    @kb.add("tab", filter=default_buffer)
    def _complete(event: KeyPressEvent) -> None:
        # prompt_toolkit's own Tab is dropped while the as-you-type completion of the last
        # keystroke is still pending, so a quick "key<Tab>" would do nothing. Our completer is
        # synchronous and fast: compute here, in key order.
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.completions:
            buffer.complete_next()
            return
        document = buffer.document
        buffer.complete_state = None  # also abandons a pending as-you-type completion
        completions = list(completer.get_completions(document, CompleteEvent(completion_requested=True)))
        if not completions:
            return
        if len(completions) == 1 and completions[0].text:
            buffer.apply_completion(completions[0])
            return
        common = get_common_complete_suffix(document, completions)
        if common:
            buffer.insert_text(common, fire_event=False)
            completions = [c.new_completion_from_position(len(common)) for c in completions]
        buffer.complete_state = CompletionState(original_document=buffer.document, completions=completions)
        buffer.on_completions_changed.fire()

    @kb.add("enter", filter=default_buffer & completion_is_selected)
    def _take_completion(event: KeyPressEvent) -> None:
        # Enter on a highlighted menu entry takes it, as in pgcli; a second Enter runs.
        event.current_buffer.complete_state = None

    @kb.add("enter", filter=default_buffer & ~completion_is_selected)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.newline(copy_margin=True)

    @kb.add(Keys.Escape, "enter", filter=default_buffer)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.newline(copy_margin=True)

    return kb
