"""The shell as a module handed it sees it: cqlsh's Shell (upstream/protocol.pyi's `CqlshShell`)
with what cqlsh-ext adds to it (cqlsh_ext.shell.ext_shell.ExtShell): the run's settings, its result pipeline,
the interactive shell's state. Every module that is handed the shell takes `shell: Shell`, checked
by mypy: a use of the shell not declared here or in CqlshShell is a type error.

Declared here, in the lowest package that knows the settings, so that no module imports a type
from above its layer (upstream, below, would have to import the settings: a circle). A stub
(.pyi), typing only: nothing can import it at run time (`if TYPE_CHECKING:`).
"""

from __future__ import annotations

from typing import Any, Protocol

from cqlsh_ext.settings import Settings
from cqlsh_ext.upstream.protocol import CqlshShell, Results

__all__ = ["Shell"]


class Shell(CqlshShell, Protocol):
    """cqlsh's Shell with our additions (cqlsh_ext.shell.ext_shell.ExtShell): what a module handed the shell
    may use of it."""

    settings: Settings

    @property
    def results(self) -> Results: ...
    #: The statement being read, as the shell's bounds measure it (shell.statement_bounds.StatementSoFar).
    statement_reading: Any
    #: A statement sent whole past cqlsh's grammar while it runs (shell.statement_bounds): a
    #: cql.lexer.Lexed.
    sent_whole: Any
    repl_mode: bool
    repl_preload: Any
    repl_history: Any
    repl_session: Any
    save_repl_history: bool
    max_history_length_shown: int
