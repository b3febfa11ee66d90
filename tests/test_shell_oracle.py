"""HELP, Tab, --spec and the man page as the shell said them before issue 110 moved its statements'
declarations (tests/shell_oracle.txt, recorded from 488219fb by tools/shell_oracle.py): every question
the file holds asked of the running code, every answer the same. One run of the shell per width."""

from __future__ import annotations

import os
from pathlib import Path

import shell_oracle
from conftest import CassandraServer


def test_help_tab_spec_and_man_say_what_they_said(cassandra: CassandraServer, tmp_path: Path) -> None:
    recorded = shell_oracle.sections(shell_oracle.RECORDED.read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CQLSH_", "COLUMNS", "LINES"))}
    env["HOME"] = str(tmp_path)
    now: dict[str, str] = {}
    for width in shell_oracle.WIDTHS:
        prefix = f"help {width}: "
        topics = [label.removeprefix(prefix) for label in recorded if label.startswith(prefix)]
        assert topics, prefix
        now.update({prefix + topic: text for topic, text in
                    shell_oracle.help_answers(topics, width, cassandra.cqlsh_args, env).items()})
    tab = shell_oracle.completer()
    now.update({label: tab(label.removeprefix("tab: ").removesuffix("|"))
                for label in recorded if label.startswith("tab: ")})
    now.update(shell_oracle.spec_and_man(env))
    changed = [label for label in recorded if now.get(label) != recorded[label]]
    assert not changed, "\n\n".join(f"=== {label}\nwas:\n{recorded[label]}\nnow:\n{now.get(label)}"
                                    for label in changed[:3])
