"""The API's one exception: every refusal and failure, with the shell's one-line message."""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """What the shell would say in one line (a refused statement, the server's error, a setting
    that does not parse, a missing extra); `str(err)` is that line."""


def one_line(err: BaseException) -> str:
    """An exception of ours or of the driver as the shell says it."""
    from cqlsh_ext.reading.statement import server_error

    if type(err).__module__.startswith("cqlsh_ext"):
        text = str(err)
    else:
        text = server_error(err)
    return " ".join(text.split())
