"""The shell commands cqlsh-ext adds, declared once each.

A command module declares its command with `@shell_command(...)` on its handler: the word, the
grammar rules, the HELP text, whether it only reads (the interactive loop then does not warn
that a cancelled command may still apply on the server) and whether its output goes through the
pager. Importing a command module declares its commands: the shell (cqlsh_ext.shell) imports them
all, turns each declaration into a `do_<word>` method with its HELP text and adds the grammar to
cqlsh's before cqlsh builds its rule set; the interactive front end highlights, completes and
pages them from the same declarations.

Command modules are imported at start-up, so they import nothing heavy at module level: a handler
imports what it needs (codecs, report modules, the driver's extras) when it first runs.

Adding a command: write its module with one `@shell_command` handler, import the module in
cqlsh_ext.shell's COMMAND_MODULES and give it its place in the layers (pyproject.toml); the shell's
grammar, HELP and the interactive front end follow from the declaration (docs/architecture.md,
"Adding a shell command").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell

Handler = Callable[["Shell", "Parsed"], None]


@dataclass(frozen=True)
class Command:
    """One shell command: `word` is its first word, `rule` the grammar symbol it is
    ('<decompressCommand>'), `grammar` the rules defining that symbol, in cqlsh's grammar language."""

    word: str
    rule: str
    grammar: str
    help: str
    handler: Handler
    #: Only reads: cancelling it with Ctrl-C cannot leave a write half done on the server.
    reads_only: bool = True
    #: May end with a newline instead of ';', as cqlsh's own shell commands do.
    ends_with_newline: bool = True
    #: Extra completers for grammar symbols: ((rule name, symbol), function) as cqlsh's
    #: `completer_for` takes them; the function gets (ctxt, shell) and returns candidates.
    completers: tuple[tuple[tuple[str, str], Callable[..., Any]], ...] = field(default=())
    #: What a malformed command is told: the words typed (upper case) -> the expected forms and an
    #: example. None: cqlsh's own 'Improper ... command.'
    usage: Callable[[list[str]], str] | None = None
    #: Its output can be long: the interactive shell shows it through the pager (what it writes to
    #: stderr, progress and questions, stays on the terminal).
    paged: bool = False


_DECLARED: dict[str, Command] = {}


def shell_command(word: str, rule: str, grammar: str, help: str, reads_only: bool = True,
                  completers: tuple[tuple[tuple[str, str], Callable[..., Any]], ...] = (),
                  usage: Callable[[list[str]], str] | None = None,
                  paged: bool = False) -> Callable[[Handler], Handler]:
    """Declare the decorated function as the handler of a shell command (see the module doc)."""

    def declare(handler: Handler) -> Handler:
        key = word.lower()
        if key in _DECLARED and _DECLARED[key].handler is not handler:
            raise RuntimeError(f"shell command {word!r} is declared twice")
        _DECLARED[key] = Command(key, rule, grammar, help, handler, reads_only, True, completers, usage,
                                 paged)
        return handler

    return declare


def commands() -> list[Command]:
    """Every command declared so far (all of them once cqlsh_ext.shell is imported), in the order
    their modules were imported."""
    return list(_DECLARED.values())


def command(word: str) -> Command | None:
    return _DECLARED.get(word.lower())
