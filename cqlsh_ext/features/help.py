"""HELP from the declarations. The texts of the statements declared with their features
(features.feature.Statement): each text's first lines are its statement's form (features.forms),
wrapped as HELP lays a form out, then the prose its Statement declares (`help`, from its package's
help.py); HELP COMPRESSION is every COMPRESSION form's (an umbrella command's: Command.umbrella), in the
registry's order. And
what HELP of some topics prints besides cqlsh's own (`help_answer`): the shell prints it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from cqlsh_ext.common.text import HELP_WIDTH
from cqlsh_ext.features.feature import Text
from cqlsh_ext.features.forms import statement_words, usage

if TYPE_CHECKING:
    from cqlsh_ext.features.commands import Command
    from cqlsh_ext.features.feature import Feature

__all__ = ["HelpAnswer", "StatementHelp", "form_and_prose", "form_lines", "heading", "help_answer", "help_of",
           "mistyped_line", "shell_methods", "statement_help", "umbrella_help", "umbrella_mistyped",
           "umbrella_usage", "usage_of"]

#: Where a HELP text's statement lines start.
INDENT = 8


def _parts(text: str) -> list[str]:
    """A usage's parts, each kept whole on a line: a bracketed option with what is inside it
    (`[SAMPLE n [SEED s]]`), a placeholder (`<SELECT statement>`), alternatives with their `|`."""
    parts: list[str] = []
    depth, part = 0, ""
    for ch in text:
        depth += (ch in "[<") - (ch in "]>")
        if ch == " " and depth == 0:
            if part:
                parts.append(part)
            part = ""
        else:
            part += ch
    if part:
        parts.append(part)
    joined: list[str] = []
    for part in parts:  # `a | b`: one part
        if joined and (part == "|" or joined[-1].endswith("|")):
            joined[-1] += f" {part}"
        else:
            joined.append(part)
    return joined


def form_lines(feature: Feature, width: int = HELP_WIDTH) -> str:
    """The statement's form as HELP's first lines: its words, then its usage's parts, a line going
    on under the first part where the next one would pass `width`."""
    words = " ".join(statement_words(feature))
    under = " " * (INDENT + len(words) + 1)
    lines, line = [], " " * INDENT + words
    for part in _parts(usage(feature)):
        if len(line) > len(under) and len(line) + 1 + len(part) > width:
            lines.append(line)
            line = under + part
        else:
            line = f"{line} {part}"
    lines.append(line)
    return "\n".join(lines)


def heading(words: str) -> str:
    """A HELP text's first line: what it is about, marked as cqlsh-ext's."""
    return f"{' ' * INDENT}{words} [cqlsh-ext]"


def statement_help(feature: Feature) -> str:
    """HELP of a declared statement: its heading, its form, its Statement's prose."""
    prose = str(feature.statement.help) if feature.statement is not None else ""
    words = " ".join(statement_words(feature))
    return f"\n{heading(words)}\n\n{form_lines(feature)}\n\n{prose.rstrip()}\n"


class StatementHelp(Text):
    """HELP of a declared statement (`statement_help`), written from its feature's declaration when
    HELP first shows it: what a command or topic declares as its text (HELP INSPECT, HELP COMPRESSION
    STATS)."""

    def __init__(self, feature: str) -> None:
        super().__init__(__name__, feature)

    def __str__(self) -> str:
        from cqlsh_ext.features import declared

        return statement_help(declared(plugins=False)[self.name])


def form_and_prose(feature: Feature) -> str:
    """A declared statement's form and prose (its summary where it declares one), as HELP
    COMPRESSION gives each of its forms."""
    prose = str(feature.statement.summary or feature.statement.help) if feature.statement is not None else ""
    return f"\n{form_lines(feature)}\n\n{prose.rstrip()}\n"


def _umbrella(word: str) -> dict[str, tuple[str, str, str]]:
    """The statements that start with `word` (an umbrella command's: COMPRESSION), by their second
    word in the registry's order: each one's form, example and its part of HELP <word>. The
    features' statements' from their declarations; an intercept's from the form it declares
    (StatementIntercept.form: COMPRESSION REWRITE's)."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.commands import intercepts
    from cqlsh_ext.features.forms import form

    upper = word.upper()
    parts: dict[str, tuple[str, str, str]] = {}
    for feature in declared(plugins=False).values():
        words = statement_words(feature)
        if feature.statement is not None and len(words) > 1 and words[0] == upper:
            parts[words[1]] = (form(feature), feature.statement.example, form_and_prose(feature))
    for intercept in intercepts():
        if intercept.form is not None and word.lower() in intercept.words:
            usage_text, example, prose = (str(text) for text in intercept.form)
            parts[usage_text.split()[1]] = (usage_text, example, prose)
    return parts


def umbrella_help(word: str) -> str:
    """HELP of a word several statements start with (HELP COMPRESSION): a heading naming each, then
    each one's form and prose."""
    parts = _umbrella(word)
    return f"\n{heading(f'{word.upper()} ' + ' | '.join(parts))}\n" \
        + "".join(text for _, _, text in parts.values())


def umbrella_usage(word: str, words: list[str]) -> str:
    """What a statement of an umbrella's word that cqlsh cannot parse is told (`words` upper case):
    the form it started as, or all of them when its second word is none of them, with an example
    each."""
    parts = _umbrella(word)
    asked = [words[1]] if len(words) > 1 and words[1] in parts else list(parts)
    expected = "\n".join(f"  {parts[second][0]}" for second in asked)
    examples = "\n".join(f"  {parts[second][1]}" for second in asked)
    return f"Expected:\n{expected}\nFor example:\n{examples}\nMore: HELP {word.upper()}"


def umbrella_mistyped(word: str, words: list[str]) -> str | None:
    """An umbrella's word followed by a word (as typed) that is none of its statements: the nearest,
    and the statements."""
    from cqlsh_ext.common.text import unknown

    parts = _umbrella(word)
    if len(words) < 2 or not words[1][:1].isalpha() or words[1].upper() in parts:
        return None
    return f"{word.upper()} {unknown('statement', words[1], list(parts))} (HELP {word.upper()})"


class HelpAnswer(NamedTuple):  # a NamedTuple, not a dataclass: cheaper to create at start-up
    """What HELP <typed topics> prints besides cqlsh's own HELP: `said`, lines on stderr (a topic no
    one answers, with the one meant; a package whose features do not load); `alone`, a text printed
    instead of cqlsh's (a topic of several words, HELP DESCRIBE PAYLOAD, or a package's feature);
    else the `topics` cqlsh's HELP is asked (None: none is left to ask), what follows it (`after`:
    the packages' features, for HELP alone) and the lines after its HELP of a word (`see_also`:
    HELP SELECT points to HELP QUERIES)."""

    said: tuple[str, ...] = ()
    alone: str | None = None
    topics: tuple[str, ...] | None = ()
    after: str = ""
    see_also: tuple[str, ...] = ()


def help_answer(typed: list[str], known: Callable[[], frozenset[str]]) -> HelpAnswer:
    """HELP of the topics `typed` (as typed; none: HELP alone), from the declarations: the commands'
    and intercepts' topics (features.commands), the packages' features (features.shell_statement);
    `known`, the topics cqlsh's HELP answers (lower case), asked only where no declaration does."""
    from cqlsh_ext.common.text import nearest
    from cqlsh_ext.features import PluginError
    from cqlsh_ext.features.commands import help_phrases, intercepts, phrase_help
    from cqlsh_ext.features.shell_statement import help_of, help_section

    asked = [topic.lower() for topic in typed]
    said: list[str] = []
    alone, after = phrase_help(asked), ""
    try:  # HELP TOY ROWS: a package's read feature's document; HELP: theirs after cqlsh's
        alone = help_of(asked) if asked and alone is None else alone
        after = help_section() if not asked else ""
    except PluginError as err:  # a package's bug, in its one line; cqlsh's HELP goes on
        said.append(str(err))
    if alone is not None:
        return HelpAnswer(tuple(said), alone)
    answered = known()
    unknown = [topic for topic in typed if topic.lower() not in answered]
    # A topic of several words meant by its last (STATS: COMPRESSION STATS), or one mistyped (ADVSIE).
    by_last = {name.split()[-1].upper(): name.upper() for name in help_phrases()}
    for topic in unknown:  # cqlsh's line, and the topic meant
        near = by_last.get(topic.upper()) or nearest(topic.upper(),
                                                     [t.upper() for t in answered] + list(by_last))
        near = near if near is None or near.lower() in answered else by_last.get(near, near)
        said.append(f"*** No help on {topic}" + (f" (did you mean {near}?)" if near else ""))
    if unknown and len(unknown) == len(typed):
        return HelpAnswer(tuple(said), topics=None)
    see_also = tuple(str(line) for intercept in intercepts() for word, line in intercept.see_also
                     if word in asked)
    topics = tuple(topic for topic in typed if topic not in unknown)
    return HelpAnswer(tuple(said), None, topics, after, see_also)


def mistyped_line(words: list[str]) -> str | None:
    """The one line a statement of `words` (as typed) that cqlsh could not parse is told about a word
    mistyped from a list: a command's own (features.commands.register_mistyped), else an umbrella
    command's second word (COMPRESSION STATMENT); None: cqlsh's own line."""
    from cqlsh_ext.features.commands import command, mistyped

    said = mistyped(words)
    declared = command(words[0]) if words and said is None else None
    if declared is not None and declared.umbrella:
        return umbrella_mistyped(declared.word, words)
    return said


def usage_of(declared: Command) -> Callable[[list[str]], str] | None:
    """What a malformed `declared` command is told (Command.usage; an umbrella's, from its
    statements), or None: cqlsh's own line."""
    if declared.umbrella:
        return lambda words: umbrella_usage(declared.word, words)
    return declared.usage


def help_of(declared: Command) -> str:
    """HELP <its word>: its text as declared (an umbrella's, from its statements)."""
    return umbrella_help(declared.word) if declared.umbrella else str(declared.help)


def shell_methods() -> dict[str, Any]:
    """The Shell's methods of the declarations: a `do_<word>` per command (cqlsh's HELP lists it with
    its text) and one per HELP topic of one word (a topic, no command: seams.help_topic); a topic of
    several words is asked for as HELP <words> (help_answer). Their texts are read when HELP asks."""
    from cqlsh_ext.features.commands import commands, help_topics
    from cqlsh_ext.upstream.methods import command_method, topic_method

    methods: dict[str, Any] = {f"do_{declared.word}": command_method(declared.word, declared.handler,
                                                                      _help_reader(declared))
                               for declared in commands()}
    for topic, text in help_topics():
        if " " not in topic:
            methods[f"do_{topic}"] = topic_method(topic, text.__str__)
    return methods


def _help_reader(declared: Command) -> Callable[[], str]:
    return lambda: help_of(declared)
