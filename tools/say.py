"""The one rule for what the scripts say (bin/setup, bin/test, bin/demo, bin/dev-cassandra): a
message on a terminal wraps at word boundaries to the terminal's width, its further lines indented
two spaces, so no word (`minute`, `127.0.0.1:9042`, a pid) is split at the screen's edge; written
to a file or a pipe it stays one line per line, for logs and tests to read.

    python3 tools/say.py 'bin/setup: installing ...'      # on stderr, from a shell script
    say(f"starting Cassandra ...", sys.stdout)            # from Python (tools/devcassandra.py)

Standard library only: bin/setup runs it before .venv exists.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

#: Further lines of a wrapped message start here, so it reads as one message.
INDENT = "  "


def wrap(message: str, width: int) -> str:
    """`message` with each of its lines wrapped at word boundaries to `width` columns; a word
    longer than the width (a path) stays whole on a line of its own."""
    lines = []
    for line in message.split("\n"):
        lines.extend(textwrap.wrap(line, width, subsequent_indent=INDENT, break_long_words=False,
                                   break_on_hyphens=False) or [""])
    return "\n".join(lines)


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal `stream` writes to, or None when it is no terminal."""
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return None


def say(message: str, stream: TextIO | None = None) -> None:
    """Write `message` (a line, or lines) to `stream` (stderr by default), wrapped on a terminal."""
    stream = stream if stream is not None else sys.stderr
    width = terminal_width(stream)
    print(wrap(message, width) if width else message, file=stream, flush=True)


if __name__ == "__main__":
    say(" ".join(sys.argv[1:]))
