"""A question to the person at the terminal ([y/N] before a costly run), asked on stderr.

Not with input(): while a command runs, the interactive shell sends standard output through its
pager, which holds output back until a screenful is there, and input() writes its prompt to
standard output when that is not the terminal itself. The question would wait in the pager,
unseen, while the shell waits for the answer. Standard error stays on the terminal.

Ctrl-C answers no at once, whatever handler the command asking has in place (interrupt.answering).
"""

from __future__ import annotations

import sys

from cqlsh_ext.common.interrupt import answering

__all__ = ["yes"]


def yes(question: str) -> bool:
    """Ask `question` on stderr and read the answer from stdin: True for y or yes (any case);
    end of input or Ctrl-C is a no (from before the question is written: a press as it shows, on
    a loaded machine, is never left to the running command's handler)."""
    try:
        with answering():
            sys.stderr.write(question)
            sys.stderr.flush()
            answer = sys.stdin.readline()
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")
