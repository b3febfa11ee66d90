"""The shell's commands and statement intercepts: what each declaration holds and the one registry of
them, beside the features' (features.feature). The declarations are made in
features/shell_commands.py, each naming its handler in the feature package that does the work (a
package's command.py), its grammar, its HELP text and the rest; nothing below registers itself.

A *command* (`Command`) starts with a word of ours (DECOMPRESS, DECODE, OUTPUT, UNDO, COMPRESSION):
the shell turns each into a `do_<word>` method with its HELP text and adds its grammar to cqlsh's
before cqlsh builds its rule set; the interactive front end highlights, completes and pages it from
the same declaration. A command whose statement the shell reads from its feature's declaration
(INSPECT: features.feature.Statement) has no handler: its grammar completes it only.

A *statement intercept* (`StatementIntercept`) is a statement of ours that starts with one of CQL's
words (a SELECT reaching into payloads, COPY (SELECT ...) TO, encode() in INSERT/UPDATE/BATCH, the
edits, DESCRIBE PAYLOAD, COMPRESSION REWRITE): it names the first words it looks at, its grammar and
completers (for completion: cqlsh never parses it), its HELP topics and whether it only reads. The
shell hands every statement whose first word is declared to these handlers, in declaration order,
before cqlsh sees it; each answers True (its own: run, or refused in one line), False (not its
own) or a Rewrite (cqlsh runs the rewritten statement). A feature's statement whose first word is
cqlsh's too (DESCRIBE PAYLOAD) is read from its feature's declaration before these (its Statement
tells it from cqlsh's), and declares only its completion and HELP here.

Handlers run when their statement does, so a handler's module (imported when this registry is)
imports nothing heavy at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.upstream.protocol import Parsed, Shell

__all__ = ["Command", "Completers", "HelpTopics", "Mistyped", "Rewrite", "StatementIntercept",
           "command", "commands", "help_topics", "intercepts", "intercepts_for", "mistyped", "phrase_help",
           "register_command", "register_intercept", "register_mistyped", "shell_methods"]

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
    #: before cqlsh's grammar, which only completes it.
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
_loaded: list[bool] = []


def _built_in() -> None:
    """cqlsh-ext's own commands and intercepts declared (features/shell_commands.py), once, before the
    registry is first read or added to (a test's toy comes after them)."""
    if not _loaded:
        _loaded.append(True)
        import_module("cqlsh_ext.features.shell_commands")


def register_command(declared: Command) -> Command:
    """Declares the command (its word new): the shell built after has it."""
    _built_in()
    key = declared.word.lower()
    if key in _DECLARED:
        raise RuntimeError(f"shell command {declared.word!r} is declared twice")
    _DECLARED[key] = Command(key, *(getattr(declared, name) for name in Command.__dataclass_fields__
                                    if name != "word"))
    return _DECLARED[key]


class Rewrite(Protocol):
    """A statement an intercept rewrote: cqlsh's `tokens` and the `text` cqlsh runs instead;
    `said()` once cqlsh ran it."""

    tokens: Any
    text: str

    def said(self) -> None: ...


#: An intercept's handler: True, False or a Rewrite (see the module doc).
InterceptHandler = Callable[["Shell", "Lexed"], "bool | Rewrite"]


@dataclass(frozen=True)
class StatementIntercept:
    """A statement of ours that starts with a CQL word: `name` says what it is, `words` the first
    words (lower case) of the statements its handler looks at."""

    name: str
    words: frozenset[str]
    #: None: the statement is a declared feature's (features.feature.Statement), read by the shell
    #: from that declaration; this one declares its completion, HELP topics and lines only.
    handler: InterceptHandler | None
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


def register_intercept(declared: StatementIntercept) -> StatementIntercept:
    """Declares the intercept (its name new), tried after those declared before it."""
    _built_in()
    if declared.name in _INTERCEPTS:
        raise RuntimeError(f"statement intercept {declared.name!r} is declared twice")
    _INTERCEPTS[declared.name] = declared
    return declared


def intercepts() -> list[StatementIntercept]:
    """Every statement intercept declared, in declaration order (the order they are tried)."""
    _built_in()
    return list(_INTERCEPTS.values())


def intercepts_for(word: str) -> list[StatementIntercept]:
    """The intercepts a statement starting with `word` is handed to, in order."""
    _built_in()
    key = word.lower()
    return [i for i in _INTERCEPTS.values() if key in i.words and i.handler is not None]


def commands() -> list[Command]:
    """Every command declared, in declaration order."""
    _built_in()
    return list(_DECLARED.values())


def command(word: str) -> Command | None:
    _built_in()
    return _DECLARED.get(word.lower())


def help_topics() -> list[tuple[str, str]]:
    """Every HELP topic the commands and intercepts declare, (topic, text), in declaration order;
    topics of several words included."""
    _built_in()
    return [t for c in _DECLARED.values() for t in c.topics] + \
        [t for i in _INTERCEPTS.values() for t in i.topics]


def help_phrases() -> list[str]:
    """The HELP topics of several words (lower case): COMPRESSION STATS, DESCRIBE PAYLOAD, ..."""
    return [topic for topic, _ in help_topics() if " " in topic]


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


def register_mistyped(firsts: tuple[str, ...], said: Mistyped) -> None:
    """`said` is what a statement starting with one of `firsts`, that cqlsh cannot parse, is told
    when a word of it chosen from a list is none of them (a DECOMPRESS mode, COMPRESSION's
    statements, DESCRIBE's words): one line instead of 'Improper ... command.'"""
    _built_in()
    for first in firsts:
        _MISTYPED[first.lower()] = said


def mistyped(words: list[str]) -> str | None:
    """The one line a statement of `words` (as typed) that did not parse is told about a word
    mistyped from a list (register_mistyped), or None."""
    _built_in()
    said = _MISTYPED.get(words[0].lower()) if words else None
    return said(words) if said is not None else None


def shell_methods() -> dict[str, Any]:
    """The Shell's methods of the declarations: a `do_<word>` per command (cqlsh's HELP lists it with
    its text) and one per HELP topic of one word (a topic, no command: seams.help_topic); a topic of
    several words is asked for as HELP <words> (features.help.help_answer)."""
    from cqlsh_ext.upstream import seams

    methods: dict[str, Any] = {f"do_{declared.word}": _command_method(declared) for declared in commands()}
    for topic, text in help_topics():
        if " " not in topic:
            methods[f"do_{topic}"] = seams.help_topic(topic, text)
    return methods


def _command_method(declared: Command) -> Any:
    handler = declared.handler

    def do_command(self: Any, parsed: Parsed) -> None:
        if handler is None:  # read before cqlsh's grammar, from its feature's declaration
            raise RuntimeError(f"{declared.word.upper()} is read from its feature's declaration, "
                               "never by cqlsh's grammar")
        handler(self, parsed)

    do_command.__name__ = f"do_{declared.word}"
    do_command.__doc__ = declared.help  # HELP <word>
    return do_command
