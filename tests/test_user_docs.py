"""The guides as a pip user reaches them: `cqlsh-ext docs [TOPIC]`, and every pointer to a guide that
--help, HELP and the manual page print names that command, never a path in the source tree (a pip
user has no docs/ directory; tests/test_wheels.py shows a guide from an installed wheel)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import man_page
import pytest
from conftest import REPO_ROOT
from repl.terminal import Term
from shell_runner import CQLSH_EXT, isolated_env, run

#: How the texts name a guide: the command that shows it.
GUIDE = re.compile(r"cqlsh-ext docs ([a-z][a-z-]*)")


#: docs/ files that are no user's guide: the contributors' map and the measurements' notebook.
FOR_CONTRIBUTORS = {"architecture", "extending", "performance"}
#: The user's guides, as docs/ holds them.
USER_GUIDES = {path.stem for path in (REPO_ROOT / "docs").glob("*.md")} - FOR_CONTRIBUTORS


def _term(args: list[str], home: Path, rows: int, pager: str | None = None) -> Term:
    """`cqlsh-ext ARGS` on an 80-column terminal, read to its end; `pager` as PAGER (None: the
    system's, less)."""
    term = Term(args, home, rows=rows, cols=80, env={"PAGER": pager} if pager else None)
    assert term.finish() == 0, term.tail()
    return term


def test_docs_lists_the_user_guides_with_their_titles_within_80_columns(tmp_path: Path) -> None:
    # The list had lines of 81 and 92 characters (broken mid-word at 80), and listed the lab
    # notebook (performance) and the contributors' map (architecture) beside the user's guides.
    rows = [row for row in _term(["docs"], tmp_path, rows=60).display() if row]
    assert rows[0] == "Guides (cqlsh-ext docs TOPIC shows one):"
    assert all(len(row) < 80 for row in rows), rows  # no row filled to the edge: none went on
    entries = [row for row in rows[1:] if not row.startswith("   ")]
    listed = {row.split()[0]: row for row in entries}
    assert set(listed) == USER_GUIDES, set(listed) ^ USER_GUIDES
    assert "Editing fields inside stored payloads" in listed["edit"]
    titles = " ".join(" ".join(row.split()[1:]) if not row.startswith("   ") else row.strip()
                      for row in rows[1:])
    for topic in USER_GUIDES:  # every title whole, continued under itself
        assert _title(topic) in titles, topic
    for topic in FOR_CONTRIBUTORS:
        shown = run(CQLSH_EXT, ["docs", topic], tmp_path)
        assert shown.returncode == 2 and f"no guide on {topic!r}" in shown.stderr


def _title(topic: str) -> str:
    text = (REPO_ROOT / "docs" / f"{topic}.md").read_text(encoding="utf-8")
    return next(line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#"))


#: Marks of Markdown left out of a word before it is compared (a code span, emphasis), and a link's.
_MARKS = re.compile(r"[`*]")
_LINK_MARKS = re.compile(r"\]\(|[\[\]]")
#: The words the rendering adds: a link to another guide as its command, to a section by its
#: heading, a path of the source tree said in words.
_RENDERING_WORDS = {"cqlsh-ext", "docs", "see", "in", "cqlsh-ext's", "source", "a", "test", "benchmark",
                    "tool", *USER_GUIDES}


def _words(text: str) -> set[str]:
    """The words of `text`, not a heading's or a table's rule."""
    plain = _LINK_MARKS.sub(" ", _MARKS.sub("", text))
    return {word.strip("()\"',.:;!?") for word in plain.split() if set(word) - set("-=|")}


def _read_as_shown(topic: str, home: Path) -> list[str]:
    """`cqlsh-ext docs TOPIC` through the pager (cat) on an 80-column terminal: the lines it printed
    for that screen (a line wider than it is one line, however many rows the terminal shows it on:
    a path, a line of code)."""
    term = _term(["docs", topic], home, rows=60, pager="cat")
    shown = [line.rstrip() for line in term.text.split("\n")]
    while shown and not shown[-1]:
        shown.pop()
    return shown


#: A code line that cites a path of the source tree (shown without it: render._CITATION).
_CITED = re.compile(r"\b(?:tests|bench|tools)/")


@pytest.mark.parametrize("topic", ["load", "mcp"])
def test_a_guide_reads_whole_at_80_columns(topic: str, tmp_path: Path) -> None:
    # Raw Markdown written for ~100 columns broke about half its lines mid-word at 80 (load.md 140 of
    # 271, mcp.md 673 of 1,131), linked .md files and tests/ and bench/ paths a pip user lacks.
    source = (REPO_ROOT / "docs" / f"{topic}.md").read_text(encoding="utf-8")
    shown = _read_as_shown(topic, tmp_path)
    # Words whole: every word on the screen is a word of the guide (a word the terminal cut at its
    # edge reads as two pieces, which are not), or one the rendering adds to a link.
    headings = "\n".join(line for guide in USER_GUIDES for line in
                         (REPO_ROOT / "docs" / f"{guide}.md").read_text(encoding="utf-8").splitlines()
                         if line.startswith("#"))  # a link to a section names it
    contributors = {f"docs/{name}.md" for name in FOR_CONTRIBUTORS}  # a link to one: in the source
    known = _words(source) | _words(headings) | _RENDERING_WORDS | contributors
    pieces = sorted({word for line in shown for word in _words(line)} - known - {""})
    assert pieces == [], pieces[:20]
    # What fits is within the screen; a longer line is one path or value, whole, on a line of its own,
    # or a line of code, never wrapped (its comment lined up with two spaces, not more).
    blocks = re.findall(r"^```\w*\n(.*?)^```", source, re.DOTALL | re.MULTILINE)
    code = {" ".join(line.split()) for block in blocks for line in block.splitlines()}
    for line in shown:
        assert len(line) <= 80 or " " not in line.strip() or " ".join(line.split()) in code, line
    # Code blocks kept line for line, every line of every block on its own: a comment was wrapped onto
    # a line of its own (issue 109).
    stripped = {" ".join(line.split()) for line in shown}
    missing = [line for line in code if line and line not in stripped and not _CITED.search(line)]
    assert missing == [], missing[:5]
    # Links as text a pip user can follow, and no path of the source tree.
    text = "\n".join(shown)
    assert "](" not in text
    # A guide by the command that shows it; a file only the source tree has, said so.
    assert re.findall(r"\S*\.md\b", text) == re.findall(r"(?<=source:\s)docs/\S*\.md\b", text)
    assert "tests/" not in text and "bench/" not in text
    assert re.search(r"cqlsh-ext docs (export|edit|payloads)\b", text)
    assert shown[0] == _title(topic) and set(shown[1]) == {"="}


def test_mcp_s_user_part_comes_first_and_its_example_early(tmp_path: Path) -> None:
    # The example conversation was at line 1,047 of 1,131, after the protocol's bounds and revisions.
    source = (REPO_ROOT / "docs" / "mcp.md").read_text(encoding="utf-8").splitlines()
    sections = [line[3:] for line in source if line.startswith("## ")]
    assert sections.index("An example conversation (the demo data)") <= 3, sections
    user, maintainers = sections[:sections.index("Options") + 1], sections[sections.index("Options") + 1:]
    assert {"Install", "Registering it with an assistant", "The tools", "Policy", "Over HTTP"} <= set(user)
    assert {"Output schemas", "Protocol revisions", "Bounded and safe", "Figures"} <= set(maintainers)
    shown = run(CQLSH_EXT, ["docs", "mcp"], tmp_path).stdout.splitlines()
    assert shown.index("An example conversation (the demo data)") < 200, len(shown)


def test_docs_topic_prints_the_guide_whole_into_a_pipe(tmp_path: Path) -> None:
    headings = [re.sub(r"[`*]", "", line.lstrip("#").strip())
                for line in (REPO_ROOT / "docs" / "edit.md").read_text(encoding="utf-8").splitlines()
                if re.match(r"#+ ", line)]
    guide = (REPO_ROOT / "docs" / "edit.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^ *```\w*\n(.*?)^ *```", guide, re.DOTALL | re.MULTILINE)
    code = {" ".join(line.split()) for block in blocks for line in block.splitlines()}
    for typed in ("edit", "EDIT", "docs/edit.md"):  # as the topic, or as an old pointer spelled it
        result = run(CQLSH_EXT, ["docs", typed], tmp_path)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        at = [lines.index(heading) for heading in headings]  # every section, in order
        assert at == sorted(at), headings
        # 80 columns into a pipe, but for a line of code, printed whole (never wrapped)
        assert all(len(line) <= 80 or " " not in line.strip() or " ".join(line.split()) in code
                   for line in lines)


def test_a_mistyped_topic_is_one_line_with_the_one_meant(tmp_path: Path) -> None:
    result = run(CQLSH_EXT, ["docs", "rewirte"], tmp_path)
    assert result.returncode == 2 and not result.stdout
    assert result.stderr.strip() == ("cqlsh-ext docs: no guide on 'rewirte' (did you mean rewrite?); "
                                      "`cqlsh-ext docs` lists them")


def _texts_users_read(tmp_path: Path) -> dict[str, str]:
    """--help of cqlsh-ext and of each tool, and the manual page (every HELP text, as the shell
    prints it, and the lines HELP UPDATE, DELETE and DESCRIBE add)."""
    from cqlsh_ext.features import commands

    env = isolated_env(tmp_path)
    texts = {"man page": man_page.page()}
    for args in (["--help"], ["journal", "--help"], ["journal", "new-key", "--help"], ["mcp", "--help"],
                 ["trial", "--help"], ["demo", "load", "--help"], ["docs", "--help"],
                 ["spark", "--help"]):
        shown = subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, env=env, timeout=120)
        assert shown.returncode == 0, (args, shown.stderr)
        texts[" ".join(args)] = shown.stdout
    for word, line in commands.see_also():
        texts[f"HELP {word.upper()}"] = str(line)
    return texts


def test_every_pointer_to_a_guide_is_a_command_that_shows_one(tmp_path: Path) -> None:
    on_disk = {path.stem for path in (REPO_ROOT / "docs").glob("*.md")}
    named: set[str] = set()
    for where, text in _texts_users_read(tmp_path).items():
        flat = " ".join(text.split())  # a pointer wrapped over two lines reads as one
        assert not re.search(r"\bdocs/[\w-]+\.md", flat), (where, re.findall(r"\S*docs/\S*", flat))
        named |= set(GUIDE.findall(flat))
    assert {"edit", "rewrite", "mcp", "spark", "payloads", "describe"} <= named
    assert named <= on_disk, named - on_disk
