"""No password in any history: the one test of input that may carry one (`carries_password`), and
cqlsh's readline history kept free of it.

The interactive shell's own history (history.py) asks carries_password before it keeps a line.
cqlsh's loop (`--classic`, and -f or SOURCE started from a terminal) keeps readline's history
instead: readline adds every line typed, cqlsh adds each multi-line statement again as one line,
and at exit the whole history, with what was read from cqlsh_history at start, is written back to
that file. The shell (cqlsh_ext.shell.ext_shell.ExtShell: its get_input_line, init_history and
save_history, and each statement run) calls `forget` for each line read and each statement run, and
`drop_all` after the file is read and before it is written: an entry that carries a password is
never recalled, never listed by HISTORY and never written. Plain Python: the classic loop never
loads prompt_toolkit.
"""

from __future__ import annotations

import re
from typing import Any

# Compiled at first use (re's cache): a script's shell imports this module and never asks.
_PASSWORD_WORD = r"passw(or)?d|\bpwd\b"
#: LOGIN first in a statement, after any space and comments (cqlsh's lexer skips them: `/* */ LOGIN
#: user pw` logs in).
_LOGIN = r"(^|;)(?:\s|/\*.*?\*/|--[^\n]*+|//[^\n]*+)*+login\b"
_PASSWORD_FLAG = r"(^|\s)(-p|--password)(\s|=|$)"


def carries_password(text: str) -> bool:
    """True for input that must not be remembered: LOGIN, any statement with the word PASSWORD
    (CREATE/ALTER ROLE/USER ... PASSWORD, but also a column named password), and anything that
    looks like a pasted command line with -p/--password. Errs on the side of forgetting."""
    return bool(re.search(_PASSWORD_WORD, text, re.IGNORECASE)
                or re.search(_LOGIN, text, re.IGNORECASE | re.DOTALL)
                or re.search(_PASSWORD_FLAG, text))


def forget(readline: Any, statement: str) -> None:
    """When `statement` (the lines typed so far, or a whole statement) carries a password: the
    latest entries of readline's history that are its lines, or the statement as one line (as
    cqlsh adds a multi-line one), are removed, and any other entry that carries one. A line of
    the statement that says nothing of a password itself (`'s3cret';` after `PASSWORD =`) goes
    with the rest."""
    if readline is None or not carries_password(statement):
        return
    lines = {line.rstrip("\n") for line in statement.split("\n")}
    lines.add(statement.replace("\n", " ").rstrip())
    position = readline.get_current_history_length() - 1
    # Walk back over the entries this statement added (readline numbers them from 1 to read and
    # from 0 to remove); stop at the first that is not one of its lines.
    while position >= 0:
        entry = readline.get_history_item(position + 1)
        if entry is None or (entry not in lines and not carries_password(entry)):
            break
        readline.remove_history_item(position)
        position -= 1
    drop_all(readline)


def drop_all(readline: Any) -> None:
    """Every entry of readline's history that carries a password, removed."""
    if readline is None:
        return
    for position in range(readline.get_current_history_length() - 1, -1, -1):
        entry = readline.get_history_item(position + 1)
        if entry is not None and carries_password(entry):
            readline.remove_history_item(position)
