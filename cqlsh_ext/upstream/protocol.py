"""What cqlsh-ext uses of cqlsh's Shell, declared: the type every module that is handed the shell
takes (`shell: Shell`), checked by mypy. cqlsh's Shell is untyped: a use of the shell not declared
here is a type error, so this list is the whole of what we depend on (cqlsh_ext.upstream.seams pins where
each attaches). Our own additions (cqlsh_ext.shell.ExtShell) are at the end.

Typing only: nothing imports this module at run time (`if TYPE_CHECKING:`), so it sits at the
bottom of the layers and costs nothing at start-up. The driver's objects (Cluster, Session) are
untyped as well and stay Any.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from cqlsh_ext.settings import Settings

__all__ = ["Out", "Parsed", "Shell"]

#: Where text goes: a terminal, a file, CAPTURE's file, or the interactive shell's pager (repl.pager).
Out = TextIO | io.TextIOBase


class Parsed(Protocol):
    """A statement as cqlsh's grammar parsed it (cqlshlib.cql3handling), handed to a command."""

    #: The tokens matched: (kind, text, ...) tuples.
    matched: list[Any]
    #: The tokens left over (a statement that did not parse to its end).
    remainder: list[Any]

    def get_binding(self, name: str, default: Any = ...) -> Any: ...

    def extract_orig(self, tokens: list[Any]) -> str: ...


class Results(Protocol):
    """What modules handed the shell use of its result pipeline (cqlsh_ext.output.pipeline), declared
    here so that this bottom module imports nothing above it, even for typing. render.terminal
    prints a typed answer's batches through it."""

    #: The prompt_toolkit shell (cqlsh_ext.repl), not scripts or cqlsh's classic loop.
    interactive: bool
    #: What each result printed, --max-rows and a resumed SELECT's start (output.row_limit.RowLimit).
    rows: Any

    @property
    def display(self) -> Any: ...  # cqlsh_ext.settings.DisplaySettings

    @property
    def float_precision(self) -> int: ...

    def screen_width(self) -> int: ...

    def answer_rows(self, answer: Any) -> Any: ...  # a typed answer's batches of rows, counted

    def print_answer(self, names: list[str], types: list[Any], batches: Any, table_meta: Any) -> None: ...


class Shell(Protocol):
    # ---------------------------------------------------------------- cqlsh's Shell: connection
    conn: Any  # cassandra.cluster.Cluster
    session: Any  # cassandra.cluster.Session
    hostname: str
    port: int
    current_keyspace: str | None
    consistency_level: int
    serial_consistency_level: int
    # ---------------------------------------------------------------- state and output
    tty: bool
    color: bool
    stdout: Out
    query_out: Out
    #: CAPTURE's file while one is open (cqlsh swaps query_out).
    shunted_query_out: Out | None
    expand_enabled: bool
    tracing_enabled: bool
    use_paging: bool
    page_size: int
    #: cqlshrc [ui] float_precision: the digits cqlsh shows of a float.
    display_float_precision: int
    #: cqlshrc [ui] double_precision, time_format, date_format, nanotime_format, timezone, and the
    #: output codec (Shell.myformat_value reads them for every cell).
    display_double_precision: int
    display_timestamp_format: str
    display_date_format: str
    display_nanotime_format: str
    display_timezone: Any
    output_codec: Any
    decoding_errors: list[Any]
    prompt: str
    statement: Any  # io.StringIO of the statement being typed
    stop: bool

    def printerr(self, text: str, color: str | None = ..., newline: bool = ...,
                 shownum: bool | None = ...) -> None: ...

    def writeresult(self, text: str, color: str | None = ..., newline: bool = ...,
                    out: Any = ...) -> None: ...

    def onecmd(self, statementtext: str) -> Any: ...

    def handle_statement(self, tokens: Any, srcstr: str) -> Any: ...

    def reset_statement(self) -> None: ...

    def reset_prompt(self) -> None: ...

    def do_exit(self, parsed: Parsed = ...) -> None: ...

    def cql_unprotect_name(self, namestr: str) -> str: ...

    def cql_unprotect_value(self, valstr: str) -> Any: ...

    # ---------------------------------------------------------------- schema names (completion)
    def get_keyspace_names(self) -> Sequence[str]: ...

    def get_columnfamily_names(self, ksname: str | None = ...) -> Sequence[str]: ...

    def get_materialized_view_names(self, ksname: str | None = ...) -> Sequence[str]: ...

    def get_usertype_names(self, ksname: str | None = ...) -> Sequence[str]: ...

    # ---------------------------------------------------------------- results and DESCRIBE
    myformat_value: Callable[..., Any]

    def print_result(self, result: Any, table_meta: Any) -> None: ...

    def myformat_colname(self, name: str, table_meta: Any = ...) -> Any: ...

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None: ...

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None: ...

    def describe_keyspaces(self, rows: Any) -> None: ...

    def describe_list(self, rows: Any) -> None: ...

    def describe_cluster(self, rows: Any) -> None: ...

    def describe_element(self, rows: Any) -> None: ...

    lineno: int

    def perform_statement(self, statement: str) -> Any: ...

    # ---------------------------------------------------------------- ours (cqlsh_ext.shell.ExtShell)
    settings: Settings
    results: Results
    #: The statement being read, as the shell's bounds measure it (features.statement_bounds.StatementSoFar).
    statement_reading: Any
    #: A statement sent whole past cqlsh's grammar while it runs (features.statement_bounds): a
    #: cql.lexer.Lexed.
    sent_whole: Any
    repl_mode: bool
    repl_preload: Any
    repl_history: Any
    repl_session: Any
    save_repl_history: bool
    max_history_length_shown: int
