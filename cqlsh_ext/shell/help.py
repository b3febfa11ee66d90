"""The shell's HELP, from the declarations: what HELP <topics> prints besides cqlsh's own
(`help_answer`: the declared commands' and topics' texts, the packages' features, the topic meant
where one was mistyped), what a malformed or mistyped command of ours is told (`mistyped_line`,
`usage_of`), and the Shell's methods of the declarations (`shell_methods`: a `do_<word>` per command,
one per HELP topic). The texts themselves are the declarations' (features.help: every reader of
them reads them there); the shell prints what these answer (ExtShell.do_help,
ExtShell.handle_parse_error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from cqlsh_ext.features.help import help_of, umbrella_mistyped, umbrella_usage

if TYPE_CHECKING:
    from cqlsh_ext.features.commands import Command

__all__ = ["HelpAnswer", "help_answer", "mistyped_line", "shell_methods", "usage_of"]


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
    and statements' topics (features.commands), the packages' features (features.statements);
    `known`, the topics cqlsh's HELP answers (lower case), asked only where no declaration does."""
    from cqlsh_ext.common.text import nearest
    from cqlsh_ext.features import PluginError
    from cqlsh_ext.features.commands import help_phrases, phrase_help
    from cqlsh_ext.features.commands import see_also as declared_see_also
    from cqlsh_ext.features.statements import help_of as feature_help
    from cqlsh_ext.features.statements import help_section

    asked = [topic.lower() for topic in typed]
    said: list[str] = []
    alone, after = phrase_help(asked), ""
    try:  # HELP TOY ROWS: a package's read feature's document; HELP: theirs after cqlsh's
        alone = feature_help(asked) if asked and alone is None else alone
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
    see_also = tuple(str(line) for word, line in declared_see_also() if word in asked)
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
