"""HELP from the declarations. The texts of the statements declared with their features
(features.feature.Statement): each text's first lines are its statement's form (features.forms),
wrapped as HELP lays a form out, then the prose its Statement declares (`help`, from its package's
help.py); HELP COMPRESSION is every COMPRESSION form's, in the order its command declares them. And
what HELP of some topics prints besides cqlsh's own (`help_answer`): the shell prints it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cqlsh_ext.common.text import HELP_WIDTH
from cqlsh_ext.features.forms import statement_words, usage

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Feature

__all__ = ["HelpAnswer", "form_and_prose", "form_lines", "heading", "help_answer", "statement_help",
           "umbrella_help"]

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
    prose = feature.statement.help if feature.statement is not None else ""
    words = " ".join(statement_words(feature))
    return f"\n{heading(words)}\n\n{form_lines(feature)}\n\n{prose.rstrip()}\n"


def umbrella_help(word: str, parts: list[tuple[str, str]]) -> str:
    """HELP of a word several statements start with (HELP COMPRESSION): a heading naming each, then
    each one's form and prose (`parts`: (its second word, its text without its heading))."""
    return f"\n{heading(f'{word} ' + ' | '.join(second for second, _ in parts))}\n" \
        + "".join(text for _, text in parts)


def form_and_prose(feature: Feature) -> str:
    """A declared statement's form and prose (its summary where it declares one), as HELP
    COMPRESSION gives each of its forms."""
    prose = (feature.statement.summary or feature.statement.help) if feature.statement is not None else ""
    return f"\n{form_lines(feature)}\n\n{prose.rstrip()}\n"


@dataclass(frozen=True)
class HelpAnswer:
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
    see_also = tuple(line for intercept in intercepts() for word, line in intercept.see_also if word in asked)
    topics = tuple(topic for topic in typed if topic not in unknown)
    return HelpAnswer(tuple(said), None, topics, after, see_also)
