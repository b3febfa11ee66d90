"""A guide's Markdown as a person reads it in a terminal (`cqlsh-ext docs TOPIC`): laid out for the
screen's width with the shell's own rules (common.text: words and paths whole, tables narrowed or
stacked), code blocks kept line for line, links as text a pip user can follow (another guide as the
command that shows it, a section by its heading, a web address spelt out), and no path of the source
tree's tests, benchmarks or tools, which a pip user does not have.

Only the Markdown the guides are written in: headings, paragraphs, lists, fenced code, pipe tables,
quotes, inline code, emphasis and links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cqlsh_ext.common.text import Table, fill

__all__ = ["Guides", "render"]

#: Code blocks and quotes sit this far in, as man pages set them.
CODE_INDENT = 4
_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d+[a-z]?[.)])\s+(.*)$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])+)\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
#: The source tree's directories a pip user does not have, and how the text names what is there.
_SOURCE_ONLY = {"tests": "a test in cqlsh-ext's source", "bench": "a benchmark in cqlsh-ext's source",
                "tools": "a tool in cqlsh-ext's source"}
#: (`tools/` only with a program's name: MCP's methods are `tools/list`, `tools/call`.)
_SOURCE_PATH = r"(?:\.\./)?(?:(?:tests|bench)/[\w./*-]*\w|tools/[\w/-]+\.py)"
#: A parenthesis that only cites such paths ("(tests/api/test_cancel.py)"): left out whole.
#: The spaces that line a code line's trailing comment up with its neighbours' (`-- preview`, `# 120`):
#: two are kept where the line is too wide for the screen.
_COMMENT_GAP = re.compile(r"(?<=\S) {3,}(?=(?:--|#|//) )")
_CITATION = re.compile(rf" ?\((?:\s*{_SOURCE_PATH}(?:\s*(?:,|;|and)\s*)?)+\s*\)")
_SOURCE_WORD = re.compile(rf"(?<![\w/]){_SOURCE_PATH}")
#: A guide named by its path (docs/edit.md).
_GUIDE_PATH = re.compile(r"(?<![\w/])docs/([\w-]+)\.md\b")


@dataclass(frozen=True)
class Guides:
    """What a guide's links may point to: each guide's topic and its headings by their anchors."""

    headings: dict[str, dict[str, str]]

    def heading(self, topic: str, anchor: str) -> str | None:
        return self.headings.get(topic, {}).get(anchor)


def anchors(markdown: str) -> dict[str, str]:
    """A guide's headings by the anchors its links name (GitHub's: lower case, punctuation left
    out, spaces as hyphens)."""
    found: dict[str, str] = {}
    for line in _outside_code(markdown.splitlines()):
        heading = _HEADING.match(line)
        if heading:
            text = _plain(heading.group(2))
            found.setdefault(re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-"), text)
    return found


def _outside_code(lines: list[str]) -> Iterator[str]:
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield line


def render(markdown: str, topic: str, guides: Guides, width: int) -> str:
    """The guide `topic`'s Markdown laid out for a screen `width` columns wide."""
    out: list[str] = []
    previous = ""
    for block in _blocks(markdown.splitlines()):
        laid = _lay(block, topic, guides, width)
        if laid:
            if out and not (previous == block.kind == "item"):  # a list's items close together
                out.append("")
            out.extend(laid)
            previous = block.kind
    return "\n".join(out).rstrip("\n") + "\n"


@dataclass
class _Block:
    kind: str  # heading, paragraph, item, code, table, quote
    lines: list[str]
    level: int = 0  # a heading's level, an item's indent
    marker: str = ""  # an item's bullet or number


def _blocks(lines: list[str]) -> Iterator[_Block]:
    """The guide's blocks in order."""
    k = 0
    while k < len(lines):
        line = lines[k]
        if not line.strip():
            k += 1
        elif _FENCE.match(line):
            end = next((j for j in range(k + 1, len(lines)) if _FENCE.match(lines[j])), len(lines))
            yield _Block("code", lines[k + 1:end])
            k = end + 1
        elif heading := _HEADING.match(line):
            yield _Block("heading", [heading.group(2)], level=len(heading.group(1)))
            k += 1
        elif line.lstrip().startswith("|"):
            end = _until(lines, k, lambda s: not s.lstrip().startswith("|"))
            yield _Block("table", lines[k:end])
            k = end
        elif line.startswith(">"):
            end = _until(lines, k, lambda s: not s.startswith(">"))
            yield _Block("quote", [s[1:].strip() for s in lines[k:end]])
            k = end
        elif item := _ITEM.match(line):
            end = _until(lines, k + 1, _starts_block)
            yield _Block("item", [item.group(3), *(s.strip() for s in lines[k + 1:end])],
                         level=len(item.group(1)), marker=item.group(2))
            k = end
        else:
            end = _until(lines, k + 1, _starts_block)
            yield _Block("paragraph", [s.strip() for s in lines[k:end]])
            k = end


def _until(lines: list[str], start: int, stops: object) -> int:
    assert callable(stops)
    return next((j for j in range(start, len(lines)) if stops(lines[j])), len(lines))


def _starts_block(line: str) -> bool:
    return (not line.strip() or bool(_FENCE.match(line) or _HEADING.match(line) or _ITEM.match(line))
            or line.lstrip().startswith("|") or line.startswith(">"))


def _lay(block: _Block, topic: str, guides: Guides, width: int) -> list[str]:
    if block.kind == "code":
        room = width - CODE_INDENT
        kept = [_CITATION.sub("", line.rstrip()) for line in block.lines]  # a comment's citation
        kept = [_COMMENT_GAP.sub("  ", line) if len(line) > room else line for line in kept]
        indent = " " * (CODE_INDENT if all(len(line) <= room for line in kept) else 0)
        # Line for line, never wrapped: a wrapped line (a comment on a row of its own) reads as
        # another line of code; one wider than the screen is whole, as a path is.
        return [indent + line for line in kept]
    text = _inline(" ".join(block.lines), topic, guides)
    if block.kind == "heading":
        laid = _filled(text, width, "", "")
        rule = {1: "=", 2: "-"}.get(block.level)
        return laid + ([rule * min(width, max(len(line) for line in laid))] if rule else [])
    if block.kind == "table":
        return _table(block.lines, topic, guides, width)
    if block.kind == "item":
        lead = " " * block.level + ("-" if block.marker in "-*+" else block.marker) + " "
        return _filled(text, width, lead, " " * len(lead))
    if block.kind == "quote":
        return _filled(text, width, " " * CODE_INDENT, " " * CODE_INDENT)
    return _filled(text, width, "", "")


def _filled(text: str, width: int, first: str, rest: str) -> list[str]:
    """`text` filled at words within `width`, its first line after `first`, the others after `rest`
    (of the same length)."""
    laid = fill(text, width, indent=len(rest)).split("\n")
    return [first + laid[0][len(rest):], *laid[1:]]


def _table(lines: list[str], topic: str, guides: Guides, width: int) -> list[str]:
    rows = [_cells(line) for line in lines if not _TABLE_RULE.match(line)]
    has_header = len(lines) > 1 and _TABLE_RULE.match(lines[1]) is not None
    rows = [[_inline(cell, topic, guides) for cell in row] for row in rows]
    header, body = (rows[0], rows[1:]) if has_header else (None, rows)
    return Table(body, header=header, indent=0).lines(width, unicode=False)


def _cells(line: str) -> list[str]:
    """A table row's cells ('\\|' is a bar inside a cell)."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", inner)]


def _inline(text: str, topic: str, guides: Guides) -> str:
    """A line's inline Markdown as plain text: links as text to follow, code and emphasis marks
    left out, the source tree's paths as words."""
    text = _LINK.sub(lambda m: _link(m.group(1), m.group(2), topic, guides), text)
    text = _plain(text)
    text = _CITATION.sub("", text)
    text = _GUIDE_PATH.sub(lambda m: _guide(m.group(1), guides), text)
    return _SOURCE_WORD.sub(lambda m: _SOURCE_ONLY[m.group(0).removeprefix("../").split("/")[0]], text)


def _guide(topic: str, guides: Guides) -> str:
    """A guide named by its path in the source tree (docs/edit.md), as a reader reaches it."""
    if topic in guides.headings:
        return f"cqlsh-ext docs {topic}"
    return f"cqlsh-ext's source: docs/{topic}.md"


def _plain(text: str) -> str:
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    return _EMPHASIS.sub(lambda m: m.group(2), text)


def _link(text: str, target: str, topic: str, guides: Guides) -> str:
    """A link as words a reader without the source tree can follow."""
    shown = _plain(text)
    if re.match(r"^[a-z]+:", target):  # a web address
        return shown if shown == target else f"{shown} ({target})"
    path, _, anchor = target.partition("#")
    name = path.rsplit("/", 1)[-1]
    if not path:
        section = guides.heading(topic, anchor) or shown
        return f'"{shown}"' if section == shown else f'{shown} (see "{section}")'
    other = name.removesuffix(".md")
    named = shown in (name, path, f"docs/{name}")  # the link's text is the file it links
    if name.endswith(".md") and not path.startswith(".."):
        heading = guides.heading(other, anchor) if anchor else None
        where = _guide(other, guides) + (f', "{heading}"' if heading else "")
        return where if named else f"{shown} ({where})"
    if re.match(rf"^{_SOURCE_PATH}$", path.removeprefix("../")):
        return shown
    source = path.removeprefix("../")
    return f"cqlsh-ext's source: {source}" if named else f"{shown} (in cqlsh-ext's source: {source})"
