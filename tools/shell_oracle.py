#!/usr/bin/env python3
"""What the shell says about its own statements, recorded so that a change of where they are declared
(issue 110's one registry) is seen to change none of it: HELP of every topic at 80 and 120 columns
(the real `cqlsh-ext -f` on a terminal of that size, connected to a server), Tab's completions of each
first word and of the second words after ours (cqlsh's rule set as the shell teaches it, asked as the
interactive prompt asks it), `cqlsh-ext --spec` and the man page's text.

    .venv/bin/python tools/shell_oracle.py HOST PORT [USER PASSWORD]  rewrite tests/shell_oracle.txt

tests/test_shell_oracle.py asks the running code every question the recorded file holds (its topics
and heads are read from the file, never from the code under test) and compares the answers.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

RECORDED = Path(__file__).resolve().parent.parent / "tests" / "shell_oracle.txt"
WIDTHS = (80, 120)
#: The table between two topics' HELP in one run: a one-row SELECT under this heading.
_MARK = "oracle_mark"
_SECTION = re.compile(r"^=== (.*)$", re.M)
BIN = str(Path(sys.executable).parent / "cqlsh-ext")


def _tty_run(args: list[str], width: int, env: dict[str, str], cwd: str) -> str:
    """`cqlsh-ext args` on a terminal `width` columns wide, what it wrote (stdout and stderr)."""
    import pexpect

    child = pexpect.spawn(BIN, args, env=env, dimensions=(50, width), encoding="utf-8",
                          timeout=300, cwd=cwd)
    child.expect(pexpect.EOF)
    child.close()
    return str(child.before).replace("\r\n", "\n")


def help_answers(topics: list[str], width: int, server: list[str], env: dict[str, str]) -> dict[str, str]:
    """HELP <topic> (`""`: HELP alone) of each topic, at `width` columns, in one run of the shell."""
    lines = []
    for topic in topics:
        lines.append(f"SELECT key AS {_MARK} FROM system.local;")
        lines.append(f"HELP {topic};" if topic else "HELP;")
    with tempfile.TemporaryDirectory() as place:  # named alike in every run: cqlsh says its name
        script = Path(place) / "oracle.cql"
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        said = _tty_run([*server, "--no-color", "-f", "oracle.cql"], width, env, place)
    parts = re.split(r"^\s*oracle_mark\s*\n[-+]+\n\s*local\s*\n\s*\n\(1 rows\)\n", said, flags=re.M)
    assert len(parts) == len(topics) + 1, said[:2000]
    answers = {topic: text.strip("\n") for topic, text in zip(topics, parts[1:], strict=True)}
    return answers


def help_topics(server: list[str], env: dict[str, str]) -> list[str]:
    """The topics HELP lists (cqlsh's and ours), and our topics of several words."""
    from cqlsh_ext.features.commands import help_phrases

    listed = help_answers([""], 120, server, env)[""]
    words = [w for line in listed.splitlines() if line and not line.startswith(("=", "Documented", "Miscell"))
             for w in line.split() if w.isupper() and w.replace("_", "").isalpha()]
    return ["", *sorted(set(words)), *sorted(p.upper() for p in help_phrases())]


def completer() -> Callable[[str], str]:
    """Tab's answer after `head` (a word being started: none): the candidates, one line."""
    from cqlshlib import cql3handling

    from cqlsh_ext.repl.completer import CqlCompleter
    from cqlsh_ext.shell.completion import register_grammar
    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    if cqlshmain.cqlruleset is None:
        register_grammar()
        cqlshmain.setup_cqlruleset(cql3handling)
    asking = CqlCompleter(None, cqlshmain.cqlruleset)  # type: ignore[arg-type]  # no schema names asked

    def tab(head: str) -> str:
        try:
            found, hints = asking.candidates(head, "")
        except Exception as err:  # a completer that needs the schema: said as such
            return f"({type(err).__name__})"
        return " ".join(found) + (" | " + " ".join(hints) if hints else "")

    return tab


def tab_heads(tab: Callable[[str], str]) -> list[str]:
    """The heads Tab is asked after: the empty line, and each first word offered followed by a space
    (the second words), a few of cqlsh's with ours in them (COPY, DESCRIBE, SELECT ... FROM)."""
    firsts = [w for w in tab("").split(" | ")[0].split() if w.isupper()]
    return ["", *(f"{w} " for w in firsts), "COPY ks.t ", "COPY ks.t FROM 'f' ", "DESCRIBE PAYLOAD ",
            "COMPRESSION REWRITE ", "OUTPUT FORMAT "]


def spec_and_man(env: dict[str, str]) -> dict[str, str]:
    import subprocess

    import man_page

    spec = subprocess.run([BIN, "--spec"], capture_output=True, text=True, env=env, check=True).stdout
    return {"spec": spec.strip("\n"), "man": man_page.page().strip("\n")}


def sections(text: str) -> dict[str, str]:
    """The recorded file's answers by their question."""
    parts = _SECTION.split(text)  # parts[0]: the header
    return {label: body.strip("\n") for label, body in zip(parts[1::2], parts[2::2], strict=True)}


def record(server: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CQLSH_", "COLUMNS", "LINES"))}
    env["HOME"] = tempfile.mkdtemp(prefix="oracle-home-")
    topics = help_topics(server, env)
    out = [__doc__.split("\n\n")[0].replace("\n", " "),
           "Captured from 488219fb (before issue 110's refactor) by tools/shell_oracle.py."]
    for width in WIDTHS:
        for topic, text in help_answers(topics, width, server, env).items():
            out.append(f"=== help {width}: {topic}\n{text}")
    tab = completer()
    out.extend(f"=== tab: {head}|\n{tab(head)}" for head in tab_heads(tab))
    out.extend(f"=== {label}\n{text}" for label, text in spec_and_man(env).items())
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    login = ["-u", sys.argv[3], "-p", sys.argv[4]] if len(sys.argv) > 4 else []
    RECORDED.write_text(record([*sys.argv[1:3], *login]), encoding="utf-8")
