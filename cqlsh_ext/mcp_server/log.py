"""The server's own log: standard error (the protocol has file descriptors of its own, cli.py), one
line per event, secrets removed. Nothing a call reads goes here: its answer is data (answers.py)."""

from __future__ import annotations


def log(line: str) -> None:
    """One line of the server's own log (standard error), never a call's answer; secrets removed
    (keyspaces.errors.redact: the password given, AWS secrets of the environment)."""
    import sys

    from cqlsh_ext.keyspaces.errors import redact

    sys.stderr.write(redact(f"cqlsh-ext mcp: {line}") + "\n")
    sys.stderr.flush()
