"""The API's one exception: every refusal and failure, with the shell's one-line message."""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """What the shell would say in one line (a refused statement, the server's error, a setting
    that does not parse, a missing extra); `str(err)` is that line."""


def one_line(err: BaseException, where: str | None = None) -> str:
    """An exception of ours, as it says itself, or of the driver or the server, in the one wording
    of such errors (scanning.scan.error_text: the class, the server's message, the hosts by name,
    never the driver's repr of its dicts; `where`: the host and port connected to)."""
    from cqlsh_ext.scanning.scan import error_text

    text = str(err) if type(err).__module__.startswith("cqlsh_ext") else error_text(err, where)
    return " ".join(text.split())
