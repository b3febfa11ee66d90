"""`man cqlsh-ext`: the page tools/man_page.py writes from --help and the HELP texts, committed in
man/ and installed with the package (pyproject.toml's data-files; tests/test_wheels.py installs the
wheel and asks man for it)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess

import man_page
import pytest
from conftest import REPO_ROOT


def test_the_page_is_what_the_texts_make_now() -> None:
    # A changed HELP text or option changes the page: tools/man_page.py writes it again.
    assert man_page.MAN_PAGE.read_text(encoding="utf-8") == man_page.page()


def test_the_page_lists_every_command_topic_and_option() -> None:
    from cqlsh_ext.cli import _ext_parser
    from cqlsh_ext.features import commands
    from cqlsh_ext.features.help import help_of
    from cqlsh_ext.upstream.seams import import_cqlshmain

    page = man_page.page()
    headings = [line.removeprefix(".SS ") for line in page.splitlines() if line.startswith(".SS ")]
    listed = {topic.removeprefix("HELP ") for heading in headings for topic in heading.split(", ")}
    words = {c.word.upper() for c in commands.commands()}
    topics = {topic.upper() for topic, _ in commands.help_topics()}
    assert words and words <= listed and topics <= listed, (words | topics) - listed
    assert {"COMPRESSION STATS", "DESCRIBE PAYLOAD", "RESUME", "UNDO", "REWRITE", "INSPECT", "DECODE",
            "ENCODE"} <= listed
    # Each section is that topic's HELP text, as the shell prints it (less the indent).
    for command in commands.commands():
        first = help_of(command).strip().splitlines()[0].strip()
        assert f"\n{man_page._roff(first)[0]}\n" in page, first
    flags = [flag for parser in (import_cqlshmain(None).parser, _ext_parser()) for action in parser._actions
             for flag in action.option_strings if flag.startswith("--") and action.help != argparse.SUPPRESS]
    assert flags and all(re.search(rf"(^|[\s,]){re.escape(flag)}\b", page, re.M) for flag in flags)


def test_the_synopsis_names_every_subcommand() -> None:
    # It named six of the nine (docs, journal and skill missing): it is made from cli's tables now.
    from cqlsh_ext.cli import SERVING_SUBCOMMANDS, STATEMENT_SUBCOMMANDS, SUBCOMMANDS

    page = man_page.MAN_PAGE.read_text(encoding="utf-8")
    synopsis = page.split(".SH SYNOPSIS\n", 1)[1].split(".SH ", 1)[0]
    named = set(re.findall(r"[\w-]+", synopsis.split(".br\n", 1)[1]))
    assert {*SUBCOMMANDS, *STATEMENT_SUBCOMMANDS, *SERVING_SUBCOMMANDS} <= named, synopsis


def test_the_package_installs_it_where_man_looks() -> None:
    import tomllib
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["setuptools"]["data-files"]["share/man/man1"] == ["man/cqlsh-ext.1"]


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_shows_it_within_80_columns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {"MANWIDTH": "80", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    shown = subprocess.run(["man", "-l", str(man_page.MAN_PAGE)], env=env, capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    text = re.sub(r".\x08", "", shown.stdout)
    assert text.startswith("CQLSH-EXT(1)") and "HELP DESCRIBE PAYLOAD" in text
    assert max(len(line) for line in text.splitlines()) <= 80
