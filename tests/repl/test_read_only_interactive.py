"""The read-only rule at the interactive shell's door (features/read_rule.py), typed in a pseudo-terminal
as a person types: CAPTURE appends to no file, DESCRIBE PAYLOAD table.column reads the column of the
table in the keyspace in use (system_auth's roles: refused), SHOW SESSION reads no trace; each
refusal one line, and the shell goes on. The pager runs no command typed in it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .terminal import write_script


def test_the_interactive_shell_keeps_to_the_rule(term, home: Path) -> None:
    rc = home / "rc"
    rc.write_text("# the user's rc\n")
    t = term("--read-only", "-k", "system_auth")  # (USE system_auth is refused itself)
    t.prompt()
    t.type(f"CAPTURE '{rc}';")
    t.enter()
    t.expect(r"refused: cqlsh-ext --read-only runs reads only, and CAPTURE appends to a local file")
    t.prompt()
    t.type("DESCRIBE PAYLOAD roles.salted_hash SAMPLE 5;")
    t.enter()
    t.expect(r"refused: table system_auth\.roles holds credentials or other sessions' statements")
    t.prompt()
    t.type("SHOW SESSION 6e1f5f30-0d8c-11ee-9a8f-5f2c3a1c1b2a")
    t.enter()
    t.expect(r"refused: cqlsh-ext --read-only runs reads only, and SHOW SESSION reads system_traces")
    t.prompt()
    t.type("SELECT release_version FROM system.local;")
    t.enter()
    t.expect(r"\(1 rows\)")  # the shell goes on, and reads
    assert t.exit() == 0
    assert rc.read_text() == "# the user's rc\n"


def test_the_pager_runs_in_less_s_secure_mode(term, home: Path) -> None:
    """Under --read-only, a result taller than the screen goes to the pager in less's secure mode
    (LESSSECURE=1): no `!command` and no `s` to a file from inside it."""
    pager = write_script(home / "less", 'cat > /dev/null\necho "pager LESSSECURE=[$LESSSECURE]"\n')
    t = term("--read-only", env={"PAGER": str(pager)}, rows=10)
    t.prompt()
    t.run("HELP", until=r"pager LESSSECURE=\[1\]")
    assert t.exit() == 0


@pytest.mark.skipif(not (shutil.which("more") and shutil.which("less")), reason="needs more and less")
def test_a_pager_with_no_secure_mode_is_replaced_by_less(term, home: Path) -> None:
    """PAGER=more runs the `!command` typed in it, and more has no secure mode: under --read-only,
    less runs in its place, in its secure mode, and the command typed there is not run (the disk
    says so: it would have made a file)."""
    made = home / "escaped"
    escape = write_script(home / "escape", f"touch '{made}'\n")
    t = term("--read-only", env={"PAGER": "more"}, rows=10)
    t.prompt()
    t.type("HELP")
    t.enter()
    t.expect(r"--More--|\n:")  # the pager's prompt: more's, or less's
    t.type("!")
    t.expect(r"Command not available|!")  # less in its secure mode refuses it; more reads a command
    # (less reads the rest as a search; a RETURN ends more's command, or less's message; q quits.)
    t.type(f"{escape}\r\rq")
    t.prompt()
    assert not made.exists()
    assert t.exit() == 0


def test_completion_offers_no_table_the_policy_denies(term, home: Path, repl_ks: str) -> None:
    """Denied means absent at the prompt too: Tab after FROM keyspace. offers the keyspace's other
    tables, never the denied one (without the policy it offers both)."""
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{repl_ks}.orders"]\n')
    for args, offered in ((["--read-only"], True), (["--read-only", "--policy", str(policy)], False)):
        t = term(*args, "-k", repl_ks, env={"PAGER": ""})
        t.prompt()
        # The keyspace named: the session's other tests leave many keyspaces, whose menu would push
        # the tables off the screen.
        t.type(f"SELECT * FROM {repl_ks}.")
        t.type("\t")
        t.expect(r"notes")
        menu = "\n".join(t.display())
        assert bool(re.search(r"(^|\s)orders(\s|$)", menu)) is offered, menu
        t.type("\x1b")
        t.ctrl("u")
        assert t.exit() == 0
