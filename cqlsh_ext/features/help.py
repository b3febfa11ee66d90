"""HELP's texts from the declarations, as every reader of them reads them (the shell's HELP,
`man cqlsh-ext`: tools/man_page.py): a declared statement's text (features.feature.Statement) is
its form (features.forms), wrapped as HELP lays a form out, then the prose its Statement declares
(`help`, from its package's help.py); HELP COMPRESSION is every COMPRESSION form's (an umbrella
command's: Command.umbrella), in the registry's order, and a malformed or mistyped one is told its
forms from the same. What HELP of some topics prints, and the Shell's methods of the declarations,
are the shell's (cqlsh_ext.shell.help)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.common.text import HELP_WIDTH
from cqlsh_ext.features.feature import Text
from cqlsh_ext.features.forms import statement_words, usage

if TYPE_CHECKING:
    from cqlsh_ext.features.commands import Command
    from cqlsh_ext.features.feature import Feature

__all__ = ["StatementHelp", "form_and_prose", "form_lines", "heading", "help_of", "statement_help",
           "umbrella_help", "umbrella_mistyped", "umbrella_usage"]

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
    word in the registry's order: each one's form, example and its part of HELP <word>, from its
    declaration. A claimed statement's (Statement.claims: COMPRESSION REWRITE's) come after those read
    from their declarations, its part its summary as written (its form is its own, not its arguments')."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.forms import form

    upper = word.upper()
    parts: dict[str, tuple[str, str, str]] = {}
    stated = [feature for feature in declared(plugins=False).values() if feature.statement is not None
              and len(feature.statement.words) > 1 and feature.statement.words[0] == upper]
    for feature in sorted(stated, key=lambda feature: getattr(feature.statement, "claims", None) is not None):
        statement = feature.statement
        assert statement is not None
        told = form_and_prose(feature) if statement.claims is None else str(statement.summary)
        parts[statement.words[1]] = (form(feature), statement.example, told)
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


def help_of(declared: Command) -> str:
    """HELP <its word>: its text as declared (an umbrella's, from its statements)."""
    return umbrella_help(declared.word) if declared.umbrella else str(declared.help)
