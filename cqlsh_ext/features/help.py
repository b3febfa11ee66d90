"""The HELP texts of the statements declared with their features (features.feature.Statement), written
from the declarations: each text's first lines are its statement's form (features.forms), wrapped as
HELP lays a form out, then the prose its Statement declares (`help`, from its package's help.py).
HELP COMPRESSION is every COMPRESSION form's, in the order its command declares them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.common.text import HELP_WIDTH
from cqlsh_ext.features.forms import statement_words, usage

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Feature

__all__ = ["form_lines", "heading", "statement_help", "umbrella_help"]

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
