"""The guides as a pip user reaches them: `cqlsh-ext docs [TOPIC]`, and every pointer to a guide that
--help, HELP and the manual page print names that command, never a path in the source tree (a pip
user has no docs/ directory; tests/test_wheels.py shows a guide from an installed wheel)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import man_page
from conftest import REPO_ROOT
from shell_runner import CQLSH_EXT, isolated_env, run

#: How the texts name a guide: the command that shows it.
GUIDE = re.compile(r"cqlsh-ext docs ([a-z][a-z-]*)")


def test_docs_lists_every_guide_with_its_title(tmp_path: Path) -> None:
    result = run(CQLSH_EXT, ["docs"], tmp_path)
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    on_disk = {path.stem for path in (REPO_ROOT / "docs").glob("*.md")}
    assert set(listed) == on_disk
    assert "Editing fields inside stored payloads" in listed["edit"]


def test_docs_topic_prints_the_guide_whole_into_a_pipe(tmp_path: Path) -> None:
    for typed in ("edit", "EDIT", "docs/edit.md"):  # as the topic, or as an old pointer spelled it
        result = run(CQLSH_EXT, ["docs", typed], tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (REPO_ROOT / "docs" / "edit.md").read_text(encoding="utf-8")


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
    for intercept in commands.intercepts():
        for word, line in intercept.see_also:
            texts[f"HELP {word.upper()}"] = line
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
