"""Shell methods made from declarations (shell.help.shell_methods): a command's `do_<word>`, a
HELP topic's. cqlsh's HELP lists every `do_<word>` method with a docstring (Shell.get_help_topics)
and prints that docstring for `HELP <word>`; a declared method's docstring is read from its
declaration when HELP first asks for it, not when the shell starts (its text may be a package's
help module, imported then)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DeclaredMethod", "command_method", "topic_method"]


class _LazyDoc:
    """A docstring read when asked (its owner's `_doc()`)."""

    def __get__(self, owner: Any, kind: Any = None) -> str | None:
        return None if owner is None else str(owner._doc())


class DeclaredMethod:
    """A Shell method of a declaration, bound as a function is (`shell.do_<word>(parsed)`), whose
    docstring is read when asked."""

    __doc__ = _LazyDoc()

    def __init__(self, run: Callable[[Any, Any], None], doc: Callable[[], str], name: str) -> None:
        self._run, self._doc, self.__name__ = run, doc, name

    def __get__(self, shell: Any, owner: Any = None) -> Any:
        return self if shell is None else _Bound(self, shell)

    def __call__(self, shell: Any, parsed: Any) -> None:
        self._run(shell, parsed)


class _Bound:
    """A DeclaredMethod bound to a shell: called with the parsed statement."""

    __doc__ = _LazyDoc()

    def __init__(self, method: DeclaredMethod, shell: Any) -> None:
        self._doc, self._method, self._shell = method._doc, method, shell

    def __call__(self, parsed: Any) -> None:
        self._method(self._shell, parsed)


def command_method(word: str, handler: Callable[[Any, Any], None] | None,
                   doc: Callable[[], str]) -> DeclaredMethod:
    """A command's `do_<word>`: its handler called with cqlsh's parse of it. A command without one is
    read from its feature's declaration before cqlsh's grammar, which never hands it over."""

    def do_command(shell: Any, parsed: Any) -> None:
        if handler is None:
            raise RuntimeError(f"{word.upper()} is read from its feature's declaration, "
                               "never by cqlsh's grammar")
        handler(shell, parsed)

    return DeclaredMethod(do_command, doc, f"do_{word}")


def topic_method(topic: str, doc: Callable[[], str]) -> DeclaredMethod:
    """A HELP topic that is no command (HELP QUERIES), as seams.help_topic makes one: typed alone,
    cqlsh finds no grammar rule for its word and says 'Improper <word> command.', so the body never
    runs."""
    from cqlsh_ext.upstream.seams import help_topic

    return DeclaredMethod(lambda shell, parsed: help_topic(topic, doc())(shell, parsed), doc, f"do_{topic}")
