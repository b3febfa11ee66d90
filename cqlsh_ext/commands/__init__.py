"""The shell commands and statements cqlsh-ext adds, declared once each: one door for each.

A command module declares its command with `@shell_command(...)` on its handler: the word, the
grammar rules, the HELP text, whether it only reads (the interactive loop then does not warn
that a cancelled command may still apply on the server) and whether its output goes through the
pager. Importing a command module declares its commands: the shell (cqlsh_ext.shell) imports them
all, turns each declaration into a `do_<word>` method with its HELP text and adds the grammar to
cqlsh's before cqlsh builds its rule set; the interactive front end highlights, completes and
pages them from the same declarations.

Command modules are imported at start-up, so they import nothing heavy at module level: a handler
imports what it needs (codecs, report modules, the driver's extras) when it first runs.

A statement of ours that starts with one of CQL's words (a SELECT reaching into payloads,
DESCRIBE PAYLOAD, COPY (SELECT ...) TO, encode() in INSERT/UPDATE/BATCH) is a *statement
intercept*: `@statement_intercept(...)` on its handler declares the first words it looks at, its
grammar and completers (for completion: cqlsh never parses it), its HELP topics and whether it
only reads. The shell's handle_statement hands every statement whose first word is declared to
these handlers, in declaration order, before cqlsh sees it; each answers True (its own: run, or
refused in one line), False (not its own), a Rewrite (cqlsh runs the rewritten statement) or a
Declared (a feature's statement, read from its declaration by the shell: DESCRIBE PAYLOAD, whose
first word is cqlsh's DESCRIBE's too).

Adding a command or a statement: write its module with one declared handler, list the module in
cqlsh_ext.shell's COMMAND_MODULES and give it its place in the layers (pyproject.toml); the shell's
grammar, HELP and the interactive front end follow from the declaration (docs/architecture.md,
"Adding a shell command or statement").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.upstream.protocol import Parsed, Shell

Handler = Callable[["Shell", "Parsed"], None]
#: Completers for grammar symbols: ((rule name, symbol), function) as cqlsh's `completer_for`
#: takes them; the function gets (ctxt, shell) and returns candidates.
Completers = tuple[tuple[tuple[str, str], Callable[..., Any]], ...]
#: HELP topics that are no command: (topic, text); HELP <topic> prints the text. A topic of
#: several words ("describe payload", "compression stats") is asked for as HELP <words>.
HelpTopics = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Command:
    """One shell command: `word` is its first word, `rule` the grammar symbol it is
    ('<decompressCommand>'), `grammar` the rules defining that symbol, in cqlsh's grammar language."""

    word: str
    rule: str
    grammar: str
    help: str
    #: None: the shell reads the command from its feature's declaration (features.shell_statement)
    #: before cqlsh's grammar, which only completes it (`declared_command`).
    handler: Handler | None
    #: Only reads: cancelling it with Ctrl-C cannot leave a write half done on the server.
    reads_only: bool = True
    #: May end with a newline instead of ';', as cqlsh's own shell commands do.
    ends_with_newline: bool = True
    #: Extra completers for grammar symbols (Completers).
    completers: Completers = field(default=())
    #: What a malformed command is told: the words typed (upper case) -> the expected forms and an
    #: example. None: cqlsh's own 'Improper ... command.'
    usage: Callable[[list[str]], str] | None = None
    #: Its output can be long: the interactive shell shows it through the pager (what it writes to
    #: stderr, progress and questions, stays on the terminal).
    paged: bool = False
    #: More HELP topics that go with it (HELP TRIAL beside HELP COMPRESSION).
    topics: HelpTopics = ()


_DECLARED: dict[str, Command] = {}


def shell_command(word: str, rule: str, grammar: str, help: str, reads_only: bool = True,
                  completers: Completers = (), usage: Callable[[list[str]], str] | None = None,
                  paged: bool = False, topics: HelpTopics = ()) -> Callable[[Handler], Handler]:
    """Declare the decorated function as the handler of a shell command (see the module doc)."""

    def declare(handler: Handler) -> Handler:
        key = word.lower()
        if key in _DECLARED and _DECLARED[key].handler is not handler:
            raise RuntimeError(f"shell command {word!r} is declared twice")
        _DECLARED[key] = Command(key, rule, grammar, help, handler, reads_only, True, completers, usage,
                                 paged, topics)
        return handler

    return declare


def declared_command(word: str, rule: str, grammar: str, help: str, paged: bool = False) -> None:
    """Declare a command the shell reads from its feature's declaration (features.feature.Statement),
    never by cqlsh's grammar: the grammar completes it, HELP gives it, the pager and a line's end
    take it as they take any command; it has no handler (cqlsh never runs it)."""
    key = word.lower()
    if key in _DECLARED:
        raise RuntimeError(f"shell command {word!r} is declared twice")
    _DECLARED[key] = Command(key, rule, grammar, help, None, paged=paged)


class Rewrite(Protocol):
    """A statement an intercept rewrote: cqlsh's `tokens` and the `text` cqlsh runs instead;
    `said()` once cqlsh ran it."""

    tokens: Any
    text: str

    def said(self) -> None: ...


@dataclass(frozen=True)
class Declared:
    """The statement is the declared feature `feature`'s (features.reads), its words the first
    `skip` tokens: the shell reads and runs it from the declaration (features.shell_statement)."""

    feature: str
    skip: int


#: An intercept's handler: True, False, a Rewrite or a Declared (see the module doc).
InterceptHandler = Callable[["Shell", "Lexed"], "bool | Rewrite | Declared"]


@dataclass(frozen=True)
class StatementIntercept:
    """A statement of ours that starts with a CQL word: `name` says what it is, `words` the first
    words (lower case) of the statements its handler looks at."""

    name: str
    words: frozenset[str]
    handler: InterceptHandler
    #: Only reads (as Command.reads_only).
    reads_only: bool = True
    #: The grammar symbol and rules that complete it (cqlsh's special commands take them: the
    #: statement itself never reaches cqlsh's parser), and completers for their symbols.
    rule: str = ""
    grammar: str = ""
    completers: Completers = ()
    #: Its HELP topics, and lines said after cqlsh's own HELP of a word: (word, line).
    topics: HelpTopics = ()
    see_also: tuple[tuple[str, str], ...] = ()


_INTERCEPTS: dict[str, StatementIntercept] = {}


def statement_intercept(name: str, words: tuple[str, ...], reads_only: bool = True, rule: str = "",
                        grammar: str = "", completers: Completers = (), topics: HelpTopics = (),
                        see_also: tuple[tuple[str, str], ...] = ()
                        ) -> Callable[[InterceptHandler], InterceptHandler]:
    """Declare the decorated function as a statement intercept (see the module doc)."""

    def declare(handler: InterceptHandler) -> InterceptHandler:
        if name in _INTERCEPTS and _INTERCEPTS[name].handler is not handler:
            raise RuntimeError(f"statement intercept {name!r} is declared twice")
        _INTERCEPTS[name] = StatementIntercept(name, frozenset(w.lower() for w in words), handler,
                                               reads_only, rule, grammar, completers, topics, see_also)
        return handler

    return declare


def intercepts() -> list[StatementIntercept]:
    """Every statement intercept declared so far, in declaration order (the order they are tried)."""
    return list(_INTERCEPTS.values())


def intercepts_for(word: str) -> list[StatementIntercept]:
    """The intercepts a statement starting with `word` is handed to, in order."""
    key = word.lower()
    return [i for i in _INTERCEPTS.values() if key in i.words]


def commands() -> list[Command]:
    """Every command declared so far (all of them once cqlsh_ext.shell is imported), in the order
    their modules were imported."""
    return list(_DECLARED.values())


def command(word: str) -> Command | None:
    return _DECLARED.get(word.lower())


def help_topics() -> list[tuple[str, str]]:
    """Every HELP topic the commands and intercepts declare, (topic, text), in declaration order;
    topics of several words included."""
    return [t for c in _DECLARED.values() for t in c.topics] + \
        [t for i in _INTERCEPTS.values() for t in i.topics]


def phrase_help(words: list[str]) -> str | None:
    """The text of the HELP topic of several words that `words` (lower case) spell (HELP DESCRIBE
    PAYLOAD, HELP COMPRESSION STATS), or None."""
    asked = " ".join(words)
    return next((text for topic, text in help_topics() if " " in topic and topic == asked), None)


#: A mistyped word chosen from a list, per the first word of the statements it goes in (lower
#: case): the statement's words as typed -> the one line it is told (common.text.unknown), or None
#: when its word is fine, or near none of a list that is not the only thing there (a table's name
#: after DESCRIBE).
Mistyped = Callable[[list[str]], "str | None"]
_MISTYPED: dict[str, Mistyped] = {}


def word_from_list(*firsts: str) -> Callable[[Mistyped], Mistyped]:
    """Declare the decorated function as what a statement starting with one of `firsts`, that cqlsh
    cannot parse, is told when a word of it chosen from a list is none of them (a DECOMPRESS mode,
    COMPRESSION's statements, DESCRIBE's words): one line instead of 'Improper ... command.'"""

    def declare(said: Mistyped) -> Mistyped:
        for first in firsts:
            _MISTYPED[first.lower()] = said
        return said

    return declare


def mistyped(words: list[str]) -> str | None:
    """The one line a statement of `words` (as typed) that did not parse is told about a word
    mistyped from a list (word_from_list), or None."""
    said = _MISTYPED.get(words[0].lower()) if words else None
    return said(words) if said is not None else None
