"""The shell's commands and statement intercepts: what each declaration holds and the one registry of
them, beside the features' (features.feature). Each package declares its own in its declaration
module (its `declared.py`, found through the entry point group `cqlsh_ext.features`: features.load),
naming its handler, usage, completers and HELP texts by module and name (features.feature.Service,
Text): nothing is imported until it runs or is shown, so that the registry loads without the
packages' services.

A *command* (`Command`) starts with a word of ours (DECOMPRESS, DECODE, OUTPUT, UNDO, COMPRESSION):
the shell turns each into a `do_<word>` method with its HELP text and adds its grammar to cqlsh's
before cqlsh builds its rule set; the interactive front end highlights, completes and pages it from
the same declaration. A command whose statement the shell reads from its feature's declaration
(INSPECT: features.feature.Statement) has no handler: its grammar completes it only. A command
declared as an `umbrella` (COMPRESSION) has its HELP, its usage and its mistyped second word written
from every declared statement that starts with its word.

A *statement intercept* (`StatementIntercept`) is a statement of ours that starts with one of CQL's
words (a SELECT reaching into payloads, COPY (SELECT ...) TO, encode() in INSERT/UPDATE/BATCH, the
edits, COMPRESSION REWRITE): it names the first words it looks at, its grammar and
completers (for completion: cqlsh never parses it), its HELP topics and whether it only reads. The
shell hands every statement whose first word is declared to these handlers, in order (an intercept
declares those it is tried `after`), before cqlsh sees it; each answers True (its own: run, or
refused in one line), False (not its own) or a Rewrite (cqlsh runs the rewritten statement). A
feature's statement whose first word is cqlsh's too (DESCRIBE PAYLOAD) is read from its feature's
declaration before these (its Statement tells it from cqlsh's), and declares its HELP topics and
HELP's lines there too (Statement.topics, Statement.see_also): no intercept. A feature's statement
that starts with a word of CQL's declares its claim, its grammar and its order in its Statement
(`claims`, `rule`, `grammar`, `after`): `intercepts()` is the one list of both, tried in order.
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

__all__ = ["Command", "Completers", "HelpTopics", "Mistyped", "Rewrite", "StatementIntercept",
           "command", "commands", "help_phrases", "help_topics", "intercepts", "intercepts_for", "mistyped",
           "phrase_help", "register_command", "register_intercept", "register_mistyped", "see_also"]

Handler = Callable[["Shell", "Parsed"], None]
#: Completers for grammar symbols: ((rule name, symbol), function) as cqlsh's `completer_for`
#: takes them; the function (a features.feature.Service: imported when first called) gets (ctxt,
#: shell) and returns candidates.
Completers = tuple[tuple[tuple[str, str], Callable[..., Any]], ...]
#: HELP topics that are no command: (topic, text); HELP <topic> prints the text (str() of it: a
#: features.feature.Text is read then). A topic of several words ("describe payload", "compression
#: stats") is asked for as HELP <words>.
HelpTopics = tuple[tuple[str, HelpText], ...]


class Command(NamedTuple):
    """One shell command: `word` is its first word, `rule` the grammar symbol it is
    ('<decompressCommand>'), `grammar` the rules defining that symbol, in cqlsh's grammar language
    (read when the shell registers its grammar)."""

    word: str
    rule: str
    grammar: HelpText
    help: HelpText
    #: None: the shell reads the command from its feature's declaration (shell.dispatcher)
    #: before cqlsh's grammar, which only completes it.
    handler: Handler | None
    #: Only reads: cancelling it with Ctrl-C cannot leave a write half done on the server.
    reads_only: bool = True
    #: May end with a newline instead of ';', as cqlsh's own shell commands do.
    ends_with_newline: bool = True
    #: Extra completers for grammar symbols (Completers).
    completers: Completers = ()
    #: What a malformed command is told: the words typed (upper case) -> the expected forms and an
    #: example. None: cqlsh's own 'Improper ... command.'
    usage: Callable[[list[str]], str] | None = None
    #: Its output can be long: the interactive shell shows it through the pager (what it writes to
    #: stderr, progress and questions, stays on the terminal).
    paged: bool = False
    #: More HELP topics that go with it (HELP TRIAL beside HELP COMPRESSION).
    topics: HelpTopics = ()
    #: The word several declared statements start with (COMPRESSION STATS, ADVISE, ..., REWRITE): its
    #: HELP, its usage and the line its mistyped second word is told are written from every declared
    #: statement of its word (features.help.umbrella), in the registry's order.
    umbrella: bool = False


_DECLARED: dict[str, Command] = {}


def _loaded() -> None:
    """cqlsh-ext's own declarations loaded (features.load: its packages' declaration modules),
    once, before the registry is first read or added to (a test's toy comes after them)."""
    from cqlsh_ext.features import load

    load()


def register_command(declared: Command) -> Command:
    """Declares the command (its word new): the shell built after has it."""
    _loaded()
    key = declared.word.lower()
    if key in _DECLARED:
        raise RuntimeError(f"shell command {declared.word!r} is declared twice")
    _DECLARED[key] = declared._replace(word=key)
    return _DECLARED[key]


class Rewrite(Protocol):
    """A statement an intercept rewrote: cqlsh's `tokens` and the `text` cqlsh runs instead;
    `said()` once cqlsh ran it."""

    tokens: Any
    text: str

    def said(self) -> None: ...


#: An intercept's handler: True, False or a Rewrite (see the module doc).
InterceptHandler = Callable[["Shell", "Lexed"], "bool | Rewrite"]


class StatementIntercept(NamedTuple):
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
    grammar: HelpText = ""
    completers: Completers = ()
    #: Its HELP topics, and lines said after cqlsh's own HELP of a word: (word, line).
    topics: HelpTopics = ()
    see_also: tuple[tuple[str, HelpText], ...] = ()
    #: The intercepts (by name) of its words it is tried after: one whose statements another's also
    #: takes (an UPDATE with payload paths that calls encode() is the edit's).
    after: tuple[str, ...] = ()


_INTERCEPTS: dict[str, StatementIntercept] = {}


def register_intercept(declared: StatementIntercept) -> StatementIntercept:
    """Declares the intercept (its name new), tried after those it names `after` and, among the
    others, in the order declared."""
    _loaded()
    if declared.name in _INTERCEPTS:
        raise RuntimeError(f"statement intercept {declared.name!r} is declared twice")
    _INTERCEPTS[declared.name] = declared
    return declared


def _claimed() -> dict[str, StatementIntercept]:
    """The features' statements that claim statements of CQL's words (features.feature.Statement
    `claims`), by their feature's name, as the intercepts are read (their HELP topics and lines are
    read from the Statement: help_topics, see_also)."""
    from cqlsh_ext.features import declared

    claimed: dict[str, StatementIntercept] = {}
    for feature in declared(plugins=False).values():
        statement = feature.statement
        if statement is None or statement.claims is None:
            continue
        if feature.name in _INTERCEPTS:
            raise RuntimeError(f"statement claim {feature.name!r} is declared twice")
        words = frozenset(words[0].lower() for words in (statement.words, *statement.aliases))
        claimed[feature.name] = StatementIntercept(
            feature.name, words, statement.claims, feature.writes is None, statement.rule,
            statement.grammar, statement.grammar_completers, after=statement.after)
    return claimed


def intercepts() -> list[StatementIntercept]:
    """Every statement intercept and features' statement claim declared (one list), in the order
    they are tried: each after those it names `after`, else in the order declared (the intercepts,
    then the claims)."""
    _loaded()
    entries = {**_INTERCEPTS, **_claimed()}
    placed: dict[str, StatementIntercept] = {}

    def place(intercept: StatementIntercept, path: tuple[str, ...]) -> None:
        if intercept.name in placed:
            return
        if intercept.name in path:
            raise RuntimeError(f"statement intercepts tried after each other: {' -> '.join(path)}")
        for name in intercept.after:
            if name in entries:
                place(entries[name], (*path, intercept.name))
        placed[intercept.name] = intercept

    for intercept in entries.values():
        place(intercept, ())
    return list(placed.values())


def intercepts_for(word: str) -> list[StatementIntercept]:
    """The intercepts a statement starting with `word` is handed to, in order."""
    key = word.lower()
    return [i for i in intercepts() if key in i.words and i.handler is not None]


def commands() -> list[Command]:
    """Every command declared, in declaration order."""
    _loaded()
    return list(_DECLARED.values())


def command(word: str) -> Command | None:
    _loaded()
    return _DECLARED.get(word.lower())


def help_topics() -> list[tuple[str, HelpText]]:
    """Every HELP topic the commands, intercepts and features' statements declare, (topic, text), in
    declaration order; topics of several words included (the text as declared: str() reads it)."""
    return [t for c in commands() for t in c.topics] + [t for i in _INTERCEPTS.values() for t in i.topics] + \
        [t for statement in _statements() for t in statement.topics]


def see_also() -> list[tuple[str, HelpText]]:
    """Every line HELP of a word adds after cqlsh's own HELP of it, (word, line), as the intercepts
    and the features' statements declare them."""
    return [line for i in intercepts() for line in i.see_also] + \
        [line for statement in _statements() for line in statement.see_also]


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
