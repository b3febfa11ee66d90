"""What the scripts say (bin/setup, bin/test, bin/demo, bin/dev-cassandra), under the shell's one
rule for lines on a terminal (cqlsh_ext/common/text.py, `message`): wrapped at words to the
terminal's width, a path on a line of its own and never broken, no word cut (`minute`,
`127.0.0.1:9042`, a pid); written to a file or a pipe it stays one line per line, for logs and
tests to read.

    python3 tools/say.py 'bin/setup: installing ...'      # on stderr, from a shell script
    say(f"starting Cassandra ...", sys.stdout)            # from Python (tools/devcassandra.py)

Standard library only (bin/setup runs it before .venv exists): the rule's module is standard
library only too, and is read from the checkout's file, not imported as the package. A copy of this
file without the checkout beside it (a Docker image's) writes its lines as they are.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType
from typing import TextIO

#: The module that holds the rule: cqlsh_ext/common/text.py of the checkout this file is in.
RULE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cqlsh_ext", "common",
                    "text.py")


def _rule() -> ModuleType | None:
    """cqlsh_ext/common/text.py, loaded from its file (without cqlsh_ext's package, whose imports
    need the installed dependencies); None when this file has no checkout beside it."""
    name = "_cqlsh_ext_text_rule"
    if name in sys.modules:
        return sys.modules[name]
    if not os.path.isfile(RULE):
        return None
    spec = importlib.util.spec_from_file_location(name, RULE)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (its dataclasses look their module up while they are made)
    spec.loader.exec_module(module)
    return module


def wrap(message: str, width: int) -> str:
    """`message` fitted to `width` columns by the shell's rule (its `message`)."""
    rule = _rule()
    return message if rule is None else str(rule.message(message, width))


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
