"""What cqlsh-ext uses of cqlsh's Shell, declared: `CqlshShell`, cqlsh's own, the base the shell's
class (cqlsh_ext.shell.ext_shell.ExtShell) is checked against: every method it overrides and hands on to
cqlsh's with super(), every attribute of cqlsh's a module handed the shell reads. With our additions
it is settings/shell.pyi's `Shell`, the type every module that is handed the shell takes (`shell:
Shell`). cqlsh's Shell is untyped: a use of the shell not declared here is a type error, so this
list is the whole of what we depend on (cqlsh_ext.upstream.seams pins where each attaches).

A stub (.pyi), typing only: nothing can import it at run time (`if TYPE_CHECKING:`), and it imports
nothing of ours, so it sits at the bottom of the layers and costs nothing at start-up. The
driver's objects (Cluster, Session) are untyped as well and stay Any.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TextIO

__all__ = ["CqlshShell", "Out", "Parsed", "Results"]

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


class CqlshShell(Protocol):
    """cqlsh's Shell (cqlshlib.cqlshmain.Shell), what cqlsh-ext reads, calls and overrides of it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    # ---------------------------------------------------------------- connection
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
    #: (A value, `= ...`: the shell reads it before it sets it, which mypy allows only of a member
    #: that has one in a protocol its class derives from.)
    tracing_enabled: bool = ...
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
    def myformat_value(self, val: Any, cqltype: Any = ..., **kwargs: Any) -> Any: ...

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

    def perform_simple_statement(self, statement: Any) -> Any: ...

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = ...) -> None: ...

    def parse_for_select_meta(self, query_string: str) -> Any: ...

    def parse_for_update_meta(self, query_string: str) -> Any: ...

    def get_table_meta(self, ksname: str | None, tablename: str) -> Any: ...

    def get_view_meta(self, ksname: str | None, viewname: str) -> Any: ...

    # ---------------------------------------------------------------- the loop, commands, history
    #: The server's releases as cqlsh read them at connect ("build", "cql", "protocol").
    connection_versions: dict[str, Any]
    #: cqlsh's main() exits 2 once a statement failed (printerr sets it).
    statement_error: bool
    #: '<stdin>:1:' before each error of a script.
    show_line_nums: bool
    #: False for SOURCE's and LOGIN's sub-shells, which share their parent's connection.
    owns_connection: bool

    #: -e's statement, read instead of a line of input.
    single_statement: str | None

    def prepare_loop(self) -> AbstractContextManager[Any]: ...

    def get_input_line(self, prompt: str = ...) -> str: ...

    def set_continue_prompt(self) -> None: ...

    def handle_eof(self) -> None: ...

    def handle_parse_error(self, cmdword: str, tokens: Any, parsed: Parsed, srcstr: str) -> Any: ...

    def init_history(self) -> None: ...

    def save_history(self, history_disabled: bool = ...) -> None: ...

    def check_build_versions(self) -> None: ...

    def print_warnings(self, warnings: Any) -> None: ...

    def get_help_topics(self) -> list[str]: ...

    def do_describe(self, parsed: Parsed) -> None: ...

    def do_copy(self, parsed: Parsed) -> None: ...

    def do_login(self, parsed: Parsed) -> None: ...

    def do_history(self, parsed: Parsed) -> None: ...

    def do_help(self, parsed: Parsed) -> None: ...
