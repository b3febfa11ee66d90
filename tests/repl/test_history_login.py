"""No password in the interactive shell's history when LOGIN follows a comment: cqlsh's lexer skips
the comment and logs in, so the entry carries the password as much as a bare LOGIN does."""

from __future__ import annotations

from pathlib import Path


def test_a_login_after_a_comment_is_not_kept_in_the_history(term, cassandra, home: Path) -> None:
    t = term()
    t.prompt()
    t.run("SELECT release_version FROM system.local;")
    t.run(f"/* again */ LOGIN {cassandra.username} '{cassandra.password}'", until=r"cqlsh>")
    t.run("SELECT cluster_name FROM system.local;")
    assert t.exit() == 0
    saved = (home / ".cassandra" / "cqlsh_ext_history").read_text()
    assert "SELECT release_version FROM system.local;" in saved and "SELECT cluster_name" in saved, saved
    assert "LOGIN" not in saved and "again" not in saved, saved
