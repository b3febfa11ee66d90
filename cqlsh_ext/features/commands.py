"""The shell's commands and the features' statement claims, each read as one list from the features'
declarations (features.feature.Statement). Every command and every claim is a feature's statement,
declared in its package's declaration module (its `declared.py`, found through the entry
point group `cqlsh_ext.features`: features.load), naming its handler, usage, completers and HELP
texts by module and name (features.feature.Service, Text): nothing is imported until it runs or is
shown, so that the registry loads without the packages' services.

A *command* (`Command`, made here from the declarations: `commands()`) starts with a word of ours
(COMPRESSION, UNDO, DECOMPRESS, DECODE, OUTPUT): the shell turns each into a `do_<word>` method with
its HELP text and adds its grammar to cqlsh's before cqlsh builds its rule set; the interactive front
end highlights, completes and pages it from the same declaration. One that cqlsh's grammar parses
(UNDO, DECOMPRESS, DECODE, OUTPUT: Statement `parsed`, its handler taking cqlsh's parse) is made
from its statement (its grammar, completers, usage, HELP; it writes what its feature writes). A word
several statements start with (COMPRESSION: STATS, ADVISE, SETTINGS, TRIAL, REWRITE) is an
`umbrella`: no handler (its statements are read from their declarations or by their claims), its
HELP, its usage and its mistyped second word written from every statement of its word. A feature's
statement that is a command of the shell's own (INSPECT: Statement `command`) is a Command too
(`command`), read from its declaration, though none of `commands()`: it ends at its line's end, is
paged, and cqlsh's HELP lists it by its statement's topic.

A feature's statement that starts with one of CQL's words (a SELECT reaching into payloads, COPY
(SELECT ...) TO, COPY ... FROM, encode() in INSERT/UPDATE/BATCH, the edits' UPDATE and DELETE) or with
a word another statement starts too (COMPRESSION REWRITE) declares its claim on the lexed statement,
its grammar for Tab and the claims it is tried after in its Statement (`claims`, `rule`, `grammar`,
`after`: features.feature); `claims()` is their one list, as the shell's door tries them (a `Claim`
each): a claim answers True (its own: run, or refused in one line), False (not its own: handed on
unchanged, in the end to cqlsh as written) or a Rewrite (cqlsh runs the rewritten statement). A
feature's statement whose first word is cqlsh's too (DESCRIBE PAYLOAD) is read from its declaration
before these (its Statement's `recognizes` tells it from cqlsh's). Every statement's HELP topics and
lines are its Statement's (`topics`, `see_also`).
"""

# No `from __future__ import annotations`: the declarations' types are NamedTuples, whose string
# annotations typing would compile one by one when the shell starts.
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from cqlsh_ext.features.feature import HelpText

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed

__all__ = ["Claim", "Command", "Completers", "Mistyped", "Rewrite", "claims", "claims_for",
           "command", "commands", "help_phrases", "help_topics", "mistyped", "phrase_help",
           "register_mistyped", "see_also", "statement_commands"]

Handler = Callable[["Shell", "Parsed"], None]
#: Completers for grammar symbols: ((rule name, symbol), function) as cqlsh's `completer_for`
#: takes them; the function (a features.feature.Service: imported when first called) gets (ctxt,
#: shell) and returns candidates.
Completers = tuple[tuple[tuple[str, str], Callable[..., Any]], ...]


class Command(NamedTuple):
    """One shell command: `word` is its first word, `rule` the grammar symbol it is
    ('<decompressCommand>'), `grammar` the rules defining that symbol, in cqlsh's grammar language
    (read when the shell registers its grammar). Each may end with a newline instead of ';', as
    cqlsh's own shell commands do."""

    word: str
    rule: str
    grammar: HelpText
    help: HelpText
    #: None: the shell reads the command from its feature's declaration (shell.dispatcher)
    #: before cqlsh's grammar, which only completes it.
    handler: Handler | None
    #: Only reads: cancelling it with Ctrl-C cannot leave a write half done on the server.
    reads_only: bool = True
    #: Extra completers for grammar symbols (Completers).
    completers: Completers = ()
    #: What a malformed command is told: the words typed (upper case) -> the expected forms and an
    #: example. None: cqlsh's own 'Improper ... command.'
    usage: Callable[[list[str]], str] | None = None
    #: Its output can be long: the interactive shell shows it through the pager (what it writes to
    #: stderr, progress and questions, stays on the terminal).
    paged: bool = False
    #: The word several declared statements start with (COMPRESSION STATS, ADVISE, ..., REWRITE): its
    #: HELP, its usage and the line its mistyped second word is told are written from every declared
    #: statement of its word (features.help.umbrella), in the registry's order.
    umbrella: bool = False


def _loaded() -> None:
    """cqlsh-ext's own declarations loaded (features.load: its packages' declaration modules),
    once, before the registry is first read or added to (a test's toy comes after them)."""
    from cqlsh_ext.features import load

    load()


class Rewrite(Protocol):
    """A statement a claim rewrote: cqlsh's `tokens` and the `text` cqlsh runs instead; `said()` once
    cqlsh ran it."""

    tokens: Any
    text: str

    def said(self) -> None: ...


#: A claim's handler: True, False or a Rewrite (see the module doc).
ClaimHandler = Callable[["Shell", "Lexed"], "bool | Rewrite"]


class Claim(NamedTuple):
    """A feature's statement that claims its own among statements of its first words (lower case), as
    the shell's door, Tab and the read-only rule read it: its feature's `name`, its `handler` (the
    Statement's `claims`), whether it only reads (its feature writes nothing), its grammar for Tab
    (its symbol, rules and completers: cqlsh never parses it) and the claims it is tried `after`."""

    name: str
    words: frozenset[str]
    handler: ClaimHandler
    reads_only: bool
    rule: str
    grammar: HelpText
    completers: Completers
    after: tuple[str, ...]


def _claims() -> dict[str, Claim]:
    """The features' statements that claim statements (features.feature.Statement `claims`), by their
    feature's name, in the registry's order."""
    from cqlsh_ext.features import declared

    found: dict[str, Claim] = {}
    for feature in declared(plugins=False).values():
        statement = feature.statement
        if statement is None or statement.claims is None:
            continue
        words = frozenset(words[0].lower() for words in (statement.words, *statement.aliases))
        found[feature.name] = Claim(feature.name, words, statement.claims, feature.writes is None,
                                    statement.rule, statement.grammar, statement.grammar_completers,
                                    statement.after)
    return found


def claims() -> list[Claim]:
    """Every claim declared, in the order they are tried: each after those it names `after`, else in
    the registry's order."""
    _loaded()
    entries = _claims()
    placed: dict[str, Claim] = {}

    def place(claim: Claim, path: tuple[str, ...]) -> None:
        if claim.name in placed:
            return
        if claim.name in path:
            raise RuntimeError(f"statement claims tried after each other: {' -> '.join(path)}")
        for name in claim.after:
            if name in entries:
                place(entries[name], (*path, claim.name))
        placed[claim.name] = claim

    for claim in entries.values():
        place(claim, ())
    return list(placed.values())


def claims_for(word: str) -> list[Claim]:
    """The claims a statement starting with `word` is handed to, in order."""
    key = word.lower()
    return [claim for claim in claims() if key in claim.words]


def _statement_commands() -> list[Command]:
    """The features' statements that are the shell's own commands (Statement.command: INSPECT), each
    a command read from its declaration (no handler, no grammar of cqlsh's), paged."""
    from cqlsh_ext.features import declared

    return [Command(statement.words[0].lower(), "", "", statement.help, None,
                    reads_only=feature.writes is None, paged=True)
            for feature in declared(plugins=False).values()
            if (statement := feature.statement) is not None and statement.command]


def _parsed_commands() -> list[Command]:
    """The features' statements cqlsh's grammar parses (features.feature.Statement `parsed`: UNDO), as
    the shell's commands they are: their handler, grammar, completers, HELP and usage as declared, a
    line's end ending them, writing what their feature writes."""
    from cqlsh_ext.features import declared

    return [Command(statement.words[0].lower(), statement.rule, statement.grammar, statement.help,
                    statement.parsed, reads_only=feature.writes is None,
                    completers=statement.grammar_completers, usage=statement.malformed)
            for feature in declared(plugins=False).values()
            if (statement := feature.statement) is not None and statement.parsed is not None]


def _umbrellas() -> list[Command]:
    """The words several of the features' statements start with (COMPRESSION: its STATS, ADVISE,
    SETTINGS, TRIAL and REWRITE), each a command of the shell's: its HELP, its usage and its
    mistyped second word written from those statements (features.help.umbrella_help), paged; each
    statement is read from its declaration or by its claim, never by cqlsh's grammar."""
    firsts = [statement.words[0] for statement in _statements() if len(statement.words) > 1]
    return [Command(word.lower(), "", "", "", None, paged=True, umbrella=True)
            for word in dict.fromkeys(firsts) if firsts.count(word) > 1]


#: (commands(), the commands of the features' statements that are the shell's own) as last made, with
#: the features they were made from: made again only when those change (a test's toy declared or
#: taken back), not at every lookup (the interactive shell's pager and Ctrl-C ask at every statement).
_MADE: list[tuple[tuple[Any, ...], tuple[Command, ...], tuple[Command, ...]]] = []


def _made() -> tuple[tuple[Command, ...], tuple[Command, ...]]:
    _loaded()
    from cqlsh_ext.features import declared

    made_from = tuple(declared(plugins=False).values())
    if not _MADE or _MADE[0][0] != made_from:
        _MADE[:] = [(made_from, (*_umbrellas(), *_parsed_commands()), tuple(_statement_commands()))]
    return _MADE[0][1], _MADE[0][2]


def commands() -> tuple[Command, ...]:
    """Every command with a `do_<word>` of its own and its own HELP text: the words several statements
    start with (their umbrella), then the features' statements cqlsh's grammar parses
    (Statement.parsed), in the registry's order."""
    return _made()[0]


def statement_commands() -> list[str]:
    """The words of the features' statements that are the shell's own commands (Statement.command:
    INSPECT, whose HELP is its statement's topic), lower case."""
    return [declared.word for declared in _made()[1]]


def command(word: str) -> Command | None:
    """The command `word` (any case) starts, a feature's statement that is the shell's own included,
    or None."""
    key, (own, stated) = word.lower(), _made()
    return next((declared for declared in (*own, *stated) if declared.word == key), None)


def help_topics() -> list[tuple[str, HelpText]]:
    """Every HELP topic the features' statements declare, (topic, text), in the registry's order;
    topics of several words included (the text as declared: str() reads it)."""
    _loaded()
    return [t for statement in _statements() for t in statement.topics]


def see_also() -> list[tuple[str, HelpText]]:
    """Every line HELP of a word adds after cqlsh's own HELP of it, (word, line), as the features'
    statements declare them."""
    return [line for statement in _statements() for line in statement.see_also]


def _statements() -> list[Any]:
    """cqlsh-ext's own features' statements (features.feature.Statement), in the registry's order."""
    from cqlsh_ext.features import declared

    return [f.statement for f in declared(plugins=False).values() if f.statement is not None]


def help_phrases() -> list[str]:
    """The HELP topics of several words (lower case): COMPRESSION STATS, DESCRIBE PAYLOAD, ..."""
    return [topic for topic, _ in help_topics() if " " in topic]


def phrase_help(words: list[str]) -> str | None:
    """The text of the HELP topic of several words that `words` (lower case) spell (HELP DESCRIBE
    PAYLOAD, HELP COMPRESSION STATS), or None."""
    asked = " ".join(words)
    return next((str(text) for topic, text in help_topics() if " " in topic and topic == asked), None)


#: A mistyped word chosen from a list, per the first word of the statements it goes in (lower
#: case): the statement's words as typed -> the one line it is told (common.text.unknown), or None
#: when its word is fine, or near none of a list that is not the only thing there (a table's name
#: after DESCRIBE).
Mistyped = Callable[[list[str]], str | None]
_MISTYPED: dict[str, Mistyped] = {}


def register_mistyped(firsts: tuple[str, ...], said: Mistyped) -> None:
    """`said` is what a statement starting with one of `firsts`, that cqlsh cannot parse, is told
    when a word of it chosen from a list is none of them (a DECOMPRESS mode, DESCRIBE's words): one
    line instead of 'Improper ... command.' An umbrella command's is its statements' (Command.umbrella)."""
    _loaded()
    for first in firsts:
        _MISTYPED[first.lower()] = said


def mistyped(words: list[str]) -> str | None:
    """The one line a statement of `words` (as typed) that did not parse is told about a word
    mistyped from a list (register_mistyped; an umbrella's second word: shell.help.mistyped_line),
    or None."""
    _loaded()
    said = _MISTYPED.get(words[0].lower()) if words else None
    return said(words) if said is not None else None
