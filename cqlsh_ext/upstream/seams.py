"""Every place cqlsh-ext relies on the internals of cqlsh, cassandra-driver or boto3, in one module.

cqlsh-ext extends the official PyPI `cqlsh` (pinned to 6.2.2, module `cqlshlib`) without forking
it. Whatever reaches past a library's public surface is listed in SEAMS below, with the module of
ours that uses it; what can be done through a function is done through one here. Upstream code we
copied or re-implemented is pinned by the SHA-256 of the upstream source it came from (COPIED), so
an upgrade of a pin fails in tests/test_seams.py, naming the function to re-read, before anything
misbehaves. tests/test_seams.py checks every entry.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import CqlshShell, Parsed

CQLSH_VERSION_PIN = "6.2"

#: (library, what we rely on, who uses it). tests/test_seams.py has one check per entry.
SEAMS: tuple[tuple[str, str, str], ...] = (
    ("cqlsh", "cqlshmain parses sys.argv and renames ~/.cqlshrc at import: import_cqlshmain",
     "cli, shell"),
    ("cqlsh", "main(), SOURCE and LOGIN build the module global `Shell`: install_shell_class",
     "cli"),
    ("cqlsh", "Shell methods overridden by name and signature (OVERRIDDEN)", "shell"),
    ("cqlsh", "Shell.print_static_result copied with blob nodes bound by place and a page pre-pass "
              "before formatted_values (COPIED)",
     "output.table, output.pipeline"),
    ("cqlsh", "Shell.print_result pauses only when shunted_query_out is None: "
              "more_prompt_suppressed; its page loop followed for typed answers (COPIED pins the source)",
     "output.pipeline"),
    ("cqlsh", "Shell.cmdloop re-implemented for prompt_toolkit, and for scripts with each line measured "
              "first (COPIED pins the source)", "repl.app, shell"),
    ("cqlsh", "CqlType nodes carry type_name, sub_types, formatter; built from cql_typename; a "
              "vector's node repeats its element's once per dimension", "output.table, cql.types"),
    ("cqlsh", "special commands: cqlshhandling rules and my_commands_ending_with_newline: "
              "register_special_commands", "shell"),
    ("cqlsh", "CqlRuleSet.completer_for: register_completer", "shell"),
    ("cqlsh", "cqlruleset.cql_split_statements re-lexes a rewritten statement: statement_tokens; "
              "splits a text as onecmd runs it (pylexotron.LexingError when it does not lex): "
              "split_statements", "encode.command, mcp_server.gate"),
    ("cqlsh", "HELP lists, prints and completes the docstring of every do_<topic> method: help_topic; "
              "it knows Shell.get_help_topics() and cqlshmain.cqldocs.get_help_topics(): "
              "help_topic_words; its parsed topics are a ParseContext binding (with_binding): "
              "with_help_topics", "shell"),
    ("cqlsh", "formatting.color_text, unicode_controlchars_re, _show_control_chars, colormaps: "
              "text_formatting, value_colormap", "output.display"),
    ("cqlsh", "formatting.format_floating_point_type(value, colormap, float_precision).strval, and "
              "Shell.display_float_precision: float_text", "render.terminal, spark.cli"),
    ("cqlsh", "pylexotron Matcher classes, ruleset.ruleset, scanner, cql_split_statements, is_hint",
     "repl.highlight, repl.statement_end, repl.completer"),
    ("cqlsh", "cqlshmain globals readline (set to None; its history kept free of passwords), HISTORY, "
              "CQL_ERRORS, parser, CONFIG_FILE and CQL_DIR (cqlshrc_in_force), cqlruleset",
     "repl, cli, shell, reading.connecting"),
    ("cqlsh", "cqlruleset.cql_complete('', '', startsymbol='cqlshCommand') offers every first word of a "
              "statement or command, ours included: first_words", "shell"),
    ("cqlsh", "cqlruleset.ruleset's values are pylexotron Matchers whose arg is a TextMatch's word or "
              "the matchers inside: grammar_literals", "shell.results, repl.highlight"),
    ("cqlsh", "main() reports VersionNotSupported out of Shell() itself (our one-line connection "
              "errors let it through)", "shell"),
    ("cqlsh", "cqlruleset.cql_extract_orig gives a statement's text from its tokens: statement_text",
     "shell"),
    ("cqlsh", "Shell.parse_for_select_meta and parse_for_update_meta (COPIED pins them) are what a "
              "statement's result is formatted with, Shell.get_table_meta / get_view_meta and their "
              "ColumnFamilyNotFound, MaterializedViewNotFound, ObjectNotFound: select_meta, update_meta; "
              "Shell.perform_statement(text) sends a statement as written; onecmd is handed the statement "
              "read so far, reset_statement empties it; cqlruleset.commands_end_with_newline: "
              "newline_commands", "shell, repl.completer"),
    ("cqlsh", "cqlruleset.cql_whole_parse_tokens(tokens, srcstr, startsymbol='cqlshCommand') parses a "
              "shell command as handle_statement does (None, or a remainder, when it does not parse): "
              "parse_command", "mcp_server.tools"),
    ("cqlsh", "Cluster and ssl_settings looked up in cqlshmain, copyutil and sslhandling: "
              "install_connection_hook", "keyspaces.wiring, keyspaces.tls"),
    ("cqlsh", "util.is_file_secure: a credentials file is read only when it is the user's own and "
              "not readable by group or others: credentials_file_secure", "demo.cli"),
    ("cassandra-driver", "cython_deps imports numpy, when installed, only for NumpyProtocolHandler, "
                         "which cqlsh never uses: import_cqlshmain loads the driver without it", "cli"),
    ("cassandra-driver", "cluster imports its Twisted reactor inside try/except ImportError, the reactor "
                         "importing `deprecated` (wrapt, asyncio) before Twisted: where Twisted is not "
                         "installed import_cqlshmain loads the driver without that reactor", "cli"),
    ("cassandra-driver", "ResultSet._current_rows set by page prefetching; ResponseFuture."
                         "start_fetching_next_page/has_more_pages/result()", "output.paging"),
    ("cassandra-driver", "type classes carry typename and subtypes; a UserType's fieldnames, a "
                         "VectorType's subtype and vector_size", "cql.types, output.spellings"),
    ("cassandra-driver", "Cluster.reconnection_policy read when reconnection starts",
     "repl.shellhooks"),
    ("cassandra-driver", "Connection.process_io_buffer re-implemented for protocol v5's segments, "
                         "linear in what the reactor read (segments.DRIVER_COPIED pins the source)",
     "upstream.segments"),
    ("cassandra-driver", "DateType.deserialize and TimeType.deserialize replaced and the Cython "
                         "deserializers' DesDateType and DesTimeType taken away (the row parser's generic "
                         "reader then calls the class's), as cqlsh's insert_driver_hooks does for "
                         "DateType (COPIED pins it; our reading goes in after it)",
     "upstream.time_values"),
    ("cassandra-driver", "ResponseFuture.message.fetch_size changed between pages; a reactor reset "
                         "in a forked child (Connection.handle_fork) for worker processes",
     "scanning.scan, scanning.workers"),
    ("cassandra-driver", "the libev reactor's event loop, one a process (libevreactor._global_loop, "
                         "made again by LibevConnection.initialize_reactor when None; LibevLoop._cleanup, "
                         "_live_conns, _new_conns, _conn_set_lock), ended once no connection is left: "
                         "end_idle_event_loop", "api.database"),
    ("boto3", "Session._session (the botocore session) to derive sessions and STS clients",
     "keyspaces.auth"),
    ("cqlsh", "Shell.perform_simple_statement sends its statement with session.execute_async(statement, "
              "trace=...), the driver's paging_state a keyword of it: paging_from", "shell"),
    ("cassandra-driver", "ResultSet.paging_state: the state the page after the current one is asked "
                         "with", "output.paging"),
    ("cqlsh", "Shell(use_conn=cluster) takes its session from cluster.connect(keyspace) (its __init__, "
              "SOURCE's sub-shells): lend_session", "agent.kept_connection"),
)

#: Shell methods cqlsh-ext overrides, with the parameters they must still have.
OVERRIDDEN: dict[str, list[str]] = {
    "print_result": ["self", "result", "table_meta"],
    "print_static_result": ["self", "result", "table_meta", "with_header", "tty", "row_count_offset"],
    "myformat_value": ["self", "val", "cqltype", "kwargs"],
    "print_formatted_result": ["self", "formatted_names", "formatted_values", "with_header", "tty"],
    "print_formatted_result_vertically": ["self", "formatted_names", "formatted_values",
                                          "row_count_offset"],
    "check_build_versions": ["self"],
    "print_warnings": ["self", "warnings"],
    "printerr": ["self", "text", "color", "newline", "shownum"],
    "cmdloop": ["self", "intro"],
    "handle_statement": ["self", "tokens", "srcstr"],
    "handle_parse_error": ["self", "cmdword", "tokens", "parsed", "srcstr"],
    "do_login": ["self", "parsed"],
    "do_history": ["self", "parsed"],
    "do_help": ["self", "parsed"],
    "do_describe": ["self", "parsed"],
    "describe_keyspaces": ["self", "rows"],
    "describe_list": ["self", "rows"],
    "describe_element": ["self", "rows"],
    "get_keyspace_names": ["self"],
    "get_columnfamily_names": ["self", "ksname"],
    "get_materialized_view_names": ["self", "ksname"],
    "do_copy": ["self", "parsed"],
    "get_input_line": ["self", "prompt"],
    "init_history": ["self"],
    "save_history": ["self", "history_disabled"],
    "onecmd": ["self", "statementtext"],
    "reset_statement": ["self"],
    "parse_for_select_meta": ["self", "query_string"],
    "parse_for_update_meta": ["self", "query_string"],
    "perform_simple_statement": ["self", "statement"],
}

#: Upstream functions copied or re-implemented: SHA-256 of their source in the pinned version.
COPIED: dict[str, str] = {
    "cqlshlib.cqlshmain.Shell.print_static_result":
        "5c1b0091fcfc25c41730839c86ef7fe7dd8e0eeb727e45a496f7042c6d5ae7df",
    "cqlshlib.cqlshmain.Shell.print_result":
        "eef22a5952e27516ff88b979a2c0e44b2cb97a8ae26657e54d0965dafc7ac6a7",
    "cqlshlib.cqlshmain.Shell.cmdloop":
        "b4adaaefab94ccb4c48c32d4b68ff70dce19703bcb8ae674b0593f4fd9114209",
    "cqlshlib.cqlshmain.Shell.parse_for_select_meta":
        "6b7843edda3924efe716737e46820b3c4efc28a1dfa06fdd4057658dca60576d",
    "cqlshlib.cqlshmain.Shell.parse_for_update_meta":
        "84b1f8cf14cccc3de6ded34c566d7bb495742e19954a7079be5a61bc0afba8c2",
    # output.pipeline's _page_formats: its body, with what it reads per cell read once a page.
    "cqlshlib.cqlshmain.Shell.myformat_value":
        "bced80f1b829ea079bbe0ba3a89b5fe3fb6819754f08caecd2b616c8a9180dec",
    # upstream.time_values: its reading of timestamps put in after these hooks, in place of theirs.
    "cqlshlib.cqlshmain.insert_driver_hooks":
        "af37e36861b4728ed9550971712d5927988e6f96d871d2ab9e50eb78cbaf8aea",
    # output.pipeline's _page_formats' columns: the chain below myformat_value, to the value's
    # formatter (the arguments it hands that formatter, the null, EMPTY, the formatter's lookup).
    "cqlshlib.cqlshmain.format_value":
        "ff81c6365c5c9a6ab8fc44dc6bee2c52dfd76426f16f14fc6224f6311be87f9c",
    "cqlshlib.formatting.format_by_type":
        "3edee72f0ad0a46797358c03ffe5af56d211a6e7bd91ca7be44151b1f79c1bd9",
    "cqlshlib.formatting.format_value":
        "7bcc4b02164b997ee76b849bd6425010789f96483f4c82dbfca9f7fd98bedd75",
    "cqlshlib.formatting.get_formatter":
        "86ee5b027c9b938bcbc29e9e4a4907bc37175f007892e7ed79d31cddfd8e9b71",
    # ... and what it spells itself: a printable ASCII text, an integer.
    "cqlshlib.formatting.format_value_text":
        "76876be90ca255a8b35f84ad08597b70c4a56fbac0118464efe43393b95f9f4f",
    "cqlshlib.formatting.color_text":
        "e8f053c9c7b01dbd28e5625a24ba1eafef5a85242ea845988ffce493beb69ed4",
    "cqlshlib.formatting.format_integer_type":
        "011e7a13aa384bfc23b9e689eb8891c1c762f6f92347c8b6fe1760cbd113f3cd",
    "cqlshlib.displaying.colorme":
        "6bbc7789e60f91c89f0e84324f0a36f83701cddec738df512324b0e40c407037",
    # output.layout's print_table: a FormattedValue's rjust inlined.
    "cqlshlib.displaying.FormattedValue.rjust":
        "50a86fdfcf12cb99e7c0837fc63479fdf2435b394cacde2edd26c06c310348a0",
    "cqlshlib.displaying.FormattedValue.color_rjust":
        "766b589ddff6b16153e42163bf333734f4b9c914263df26eaa2ccc0635426783",
    "cqlshlib.displaying.FormattedValue._pad":
        "c778454a816b604b4c734d0f5d0edddcc86ba6ee6d520cf42bdb8dd249b92e3a",
}

_STOCK_SHELL: list[Any] = []


def cqlshrc_arg(args: list[str]) -> str | None:
    """The `--cqlshrc FILE` of a command line (cqlsh's own option), or None."""
    import argparse

    finder = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    finder.add_argument("--cqlshrc")
    return finder.parse_known_args(args)[0].cqlshrc


def import_cqlshmain(cqlshrc: str | None) -> ModuleType:
    """Import cqlshlib.cqlshmain without letting it act on our command line.

    It parses sys.argv at import time (`--help` would exit) and derives CONFIG_FILE from
    `--cqlshrc`: it sees only the program name and our `--cqlshrc`, so the config file is stock.
    """
    if "cqlshlib.cqlshmain" in sys.modules:
        return sys.modules["cqlshlib.cqlshmain"]
    saved = sys.argv
    sys.argv = [saved[0] if saved else "cqlsh-ext"] + (["--cqlshrc", cqlshrc] if cqlshrc else [])
    # numpy: the driver imports it whenever it can, only to offer a protocol handler that cqlsh never
    # uses (50 to 65 ms and 12 MB at every start where the spark extra brought it). Twisted's reactor
    # where Twisted is not installed: the driver's cluster module imports it inside try/except
    # ImportError, and it imports `deprecated` (wrapt, asyncio: about a tenth of the shell's start-up
    # CPU) before it fails on Twisted itself.
    import importlib.util

    reactor_kept = "cassandra.cluster" in sys.modules or importlib.util.find_spec("twisted") is not None
    try:
        with _driver_without("numpy", "cassandra.protocol" in sys.modules), \
                _driver_without("cassandra.io.twistedreactor", reactor_kept):
            from cqlshlib import cqlshmain
    finally:
        sys.argv = saved
    if not cqlshmain.version.startswith(CQLSH_VERSION_PIN):
        raise RuntimeError(f"cqlsh-ext needs cqlsh {CQLSH_VERSION_PIN}.x, found {cqlshmain.version}")
    from cqlsh_ext.upstream import segments, time_values

    segments.install()  # the driver is loaded: its v5 segments read in one pass, before any connection
    time_values.install()  # every timestamp and time read exactly, none leaving a connection defunct
    # (cqlsh's main() puts its own reading of timestamps in: ours goes back in right after it)
    setattr(cqlshmain, "insert_driver_hooks",  # noqa: B010 - a module global main() calls
            time_values.after_cqlsh_hooks(cqlshmain.insert_driver_hooks))
    _STOCK_SHELL.append(cqlshmain.Shell)
    return cqlshmain


@contextmanager
def cqlshrc_in_force(cqlshmain: ModuleType, cqlshrc: str | None) -> Iterator[str]:
    """cqlshmain.CONFIG_FILE and CQL_DIR (where the credentials file is looked for by default: the
    cqlshrc's directory) as `--cqlshrc` would make them at import (the stock file when it is not
    given or does not exist), in force while the block runs (read_options reads the globals), for a
    process that connects more than once (the Python API), each with its own file; yields its path."""
    path = os.path.expanduser(cqlshrc) if cqlshrc else cqlshmain.DEFAULT_CQLSHRC
    if not os.path.exists(path):
        path = cqlshmain.DEFAULT_CQLSHRC
    saved = getattr(cqlshmain, "CONFIG_FILE"), getattr(cqlshmain, "CQL_DIR")  # noqa: B009 - module globals
    setattr(cqlshmain, "CONFIG_FILE", path)  # noqa: B010 - set and put back
    setattr(cqlshmain, "CQL_DIR", os.path.dirname(path))  # noqa: B010
    try:
        yield path
    finally:
        setattr(cqlshmain, "CONFIG_FILE", saved[0])  # noqa: B010
        setattr(cqlshmain, "CQL_DIR", saved[1])  # noqa: B010


@contextmanager
def _driver_without(module: str, unless: bool) -> Iterator[None]:
    """The driver loads as if `module` were not installed (`import` of it raises ImportError), unless
    it is loaded already (or `unless`); it stays importable afterwards."""
    if unless or module in sys.modules:
        yield
        return
    sys.modules[module] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if module in sys.modules and sys.modules[module] is None:
            del sys.modules[module]


def stock_shell_class() -> Any:  # cqlsh's Shell is untyped
    """cqlsh's own Shell class, also after install_shell_class replaced the module global."""
    if not _STOCK_SHELL:
        import_cqlshmain(None)
    return _STOCK_SHELL[0]


def install_shell_class(cqlshmain: ModuleType, shell_class: type) -> None:
    """Make cqlsh's main(), SOURCE and LOGIN construct our Shell subclass."""
    setattr(cqlshmain, "Shell", shell_class)  # noqa: B010  (a module global, set from outside)


def upstream_source_hash(qualified_name: str) -> str:
    """SHA-256 of the installed source of a cqlsh Shell method, module function or class method
    named as in COPIED."""
    import hashlib  # for the seam tests only: kept out of the shell's start-up
    import importlib
    import inspect

    where, name = qualified_name.rsplit(".", 1)
    if where.endswith(".Shell"):
        owner: Any = stock_shell_class()
    else:  # a module's function, or a class's method (module.Class.method)
        module, _, cls = where.rpartition(".") if where.rsplit(".", 1)[-1][:1].isupper() else (where, "", "")
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
    return hashlib.sha256(inspect.getsource(getattr(owner, name)).encode()).hexdigest()


@contextmanager
def more_prompt_suppressed(shell: CqlshShell) -> Iterator[None]:
    """cqlsh's print_result without its `---MORE---` pauses: it pauses only while
    `shunted_query_out` (its CAPTURE state) is None, so that is set for the call."""
    saved = shell.shunted_query_out
    shell.shunted_query_out = shell.query_out
    try:
        yield
    finally:
        shell.shunted_query_out = saved


@contextmanager
def paging_from(session: Any, state: bytes) -> Iterator[None]:
    """cqlsh's perform_simple_statement with its statement sent from the paging state `state` (a
    resumed SELECT's, --resume): it calls session.execute_async(statement, trace=...) on the shell's
    `session`, so that call is made with the driver's paging_state for the one statement."""
    import functools

    own = vars(session).get("execute_async")
    session.execute_async = functools.partial(session.execute_async, paging_state=state)
    try:
        yield
    finally:
        if own is None:
            del session.execute_async
        else:
            session.execute_async = own


def lend_session(cluster: Any, session_for: Callable[[str | None], Any]) -> Callable[[], None]:
    """cqlsh's Shell handed `use_conn=cluster` still asks it for a session of its own
    (`cluster.connect(keyspace)`: new pools, new connections): `session_for(keyspace)` answers in
    its place, on this one cluster object, until the function returned is called."""

    def connect(keyspace: str | None = None, wait_for_all_pools: bool = False) -> Any:
        return session_for(keyspace)

    cluster.connect = connect
    return lambda: vars(cluster).pop("connect", None)


def statement_text(tokens: Any, srcstr: str) -> str:
    """The text of the statement `tokens` (cqlsh's lexer tokens) as the user typed it."""
    return str(sys.modules["cqlshlib.cqlshmain"].cqlruleset.cql_extract_orig(tokens, srcstr))


def select_meta(shell: CqlshShell, keyspace: str | None, table: str) -> Any:
    """What cqlsh's parse_for_select_meta gives a SELECT of keyspace.table (None: the keyspace in
    use) once its grammar has found them: the table's metadata, else its view's, else ObjectNotFound
    (its tail, COPIED: for a statement too long for cqlsh's grammar, whose table the shell's lexer
    finds)."""
    cqlshmain = sys.modules["cqlshlib.cqlshmain"]
    try:
        return shell.get_table_meta(keyspace, table)
    except cqlshmain.ColumnFamilyNotFound:
        try:
            return shell.get_view_meta(keyspace, table)
        except cqlshmain.MaterializedViewNotFound:
            raise cqlshmain.ObjectNotFound(f"'{table}' not found in keyspace '{keyspace}'") from None


def update_meta(shell: CqlshShell, keyspace: str | None, table: str) -> Any:
    """What cqlsh's parse_for_update_meta gives a statement writing keyspace.table (the result of a
    conditional write is printed with it), once found (COPIED, as select_meta)."""
    return shell.get_table_meta(keyspace, table)


def parse_command(tokens: Any, srcstr: str) -> Parsed | None:
    """A shell command (cqlsh's lexer tokens of one statement) parsed by cqlsh's grammar as its
    handle_statement parses it for a do_<command> method; None when it does not parse to its end."""
    parsed = sys.modules["cqlshlib.cqlshmain"].cqlruleset.cql_whole_parse_tokens(
        tokens, srcstr=srcstr, startsymbol="cqlshCommand")
    if not parsed or parsed.remainder:
        return None
    return cast("Parsed", parsed)


def value_colormap(color: bool) -> Any:
    """The colour map cqlsh's format_by_type hands a value formatter."""
    from cqlshlib import formatting

    return formatting.default_colormap if color else formatting.empty_colormap


def float_text(value: float, precision: int) -> str:
    """A float as cqlsh prints a float column's value at this precision (its float_precision):
    cqlsh's own rule, so the shell's computed numbers read like the server's."""
    from cqlshlib import formatting

    return str(formatting.format_floating_point_type(value, formatting.empty_colormap, precision).strval)


def register_special_commands(rules: str, words: tuple[str, ...], alternatives: tuple[str, ...]) -> None:
    """Add shell commands to cqlsh's grammar before setup_cqlruleset() runs.

    `rules` defines the new rule names, `alternatives` are those names (e.g. '<decompressCommand>')
    appended to `<specialCommand>` (re-derived from the installed version's own rule text), `words`
    may end with a newline instead of ';'.
    """
    from cqlshlib import cqlshhandling

    base = cqlshhandling.cqlsh_special_cmd_command_syntax_rules
    head, sep, _ = base.rpartition(";")
    if not sep or "<specialCommand>" not in head:
        raise RuntimeError("cqlsh's <specialCommand> rule has an unexpected shape")
    pad = "\n                   "
    special = head.rstrip() + "".join(f"{pad}| {alt}" for alt in alternatives) + f"{pad};\n"
    cqlshhandling.cqlsh_extra_syntax_rules += special + rules
    cqlshhandling.my_commands_ending_with_newline += words


def register_completer(rule: str, symbol: str, complete: Callable[..., Any]) -> None:
    """Complete `symbol` inside `rule` with `complete(ctxt, shell)`, as cqlsh's own completers."""
    from cqlshlib import cql3handling

    cql3handling.CqlRuleSet.completer_for(rule, symbol)(complete)


def statement_tokens(text: str) -> Any:
    """cqlsh's tokens of a single statement's text, as its handle_statement takes them."""
    statements, _ = import_cqlshmain(None).cqlruleset.cql_split_statements(text)
    statements = [s for s in statements if s]
    if len(statements) != 1:
        raise ValueError(f"expected one statement, found {len(statements)}")
    return statements[0]


def newline_commands() -> frozenset[str]:
    """The first words of the shell commands that end at their line's end, not at a `;` (HELP,
    DESCRIBE, ours that say so): what cqlsh's cql_massage_tokens reads as their end."""
    return frozenset(import_cqlshmain(None).cqlruleset.commands_end_with_newline)


#: first_words(), read once per process.
_FIRST_WORDS: list[frozenset[str]] = []


def first_words() -> frozenset[str]:
    """The words a statement or shell command may start with, in upper case, as cqlsh's grammar
    declares them (with ours: the shell registers its commands before it first asks): what cqlsh's
    completion offers on an empty line. Read once per process: the shell reads it in its main
    thread before its prompt exists (cqlsh_ext.shell), and the packages' features' statements
    (features.statements) read the same words, in whichever thread completes."""
    if not _FIRST_WORDS:
        found = import_cqlshmain(None).cqlruleset.cql_complete("", "", cassandra_conn=None,
                                                              startsymbol="cqlshCommand")
        _FIRST_WORDS.append(frozenset(str(word).upper() for word in found if str(word)[:1].isalpha()))
    return _FIRST_WORDS[0]


_GRAMMAR_WORDS: list[frozenset[str]] = []


def grammar_literals(ruleset: Any) -> frozenset[str]:
    """The literal words of `ruleset`'s rules (cqlsh's grammar, ours registered with it), lower case:
    TABLE, KEYSPACE, DESCRIBE, EXPAND, LOCAL_QUORUM, LZ4, ..."""
    from cqlshlib import pylexotron

    words: set[str] = set()
    seen: set[int] = set()

    def walk(node: Any) -> None:
        if id(node) in seen or not isinstance(node, pylexotron.Matcher):
            return
        seen.add(id(node))
        if isinstance(node, pylexotron.TextMatch):
            text = node.arg
            if isinstance(text, str) and text[:1].isalpha() and text.replace("_", "").isalnum():
                words.add(text.lower())
        elif isinstance(node, pylexotron.TerminalTypeMatcher):
            walk(node.submatcher)
        elif isinstance(node.arg, (list, tuple)):
            for child in node.arg:
                walk(child)
        else:
            walk(node.arg)  # RuleReference's arg is a rule name (a str): ignored by walk

    for rule in ruleset.ruleset.values():
        walk(rule)
    return frozenset(words)


def grammar_words() -> frozenset[str]:
    """Every word of letters alone cqlsh's grammar spells out (grammar_literals), in upper case: what a
    word a statement's syntax error names may be a typo of (CONFRIM). Read once, after the shell has
    registered its commands."""
    if not _GRAMMAR_WORDS:
        literals = grammar_literals(import_cqlshmain(None).cqlruleset)
        _GRAMMAR_WORDS.append(frozenset(word.upper() for word in literals if word.isalpha()))
    return _GRAMMAR_WORDS[0]


def split_statements(text: str) -> list[Any]:
    """The statements of `text` as cqlsh's onecmd would run them, each a list of cqlsh's tokens (a
    statement ends with an `endtoken`: `;`, or a newline after a command that ends at its line, such
    as DESCRIBE); a lone `;` is none. Raises ValueError when cqlsh's lexer cannot read the text."""
    from cqlshlib import pylexotron

    try:
        statements, _ = import_cqlshmain(None).cqlruleset.cql_split_statements(text)
    except pylexotron.LexingError as err:
        raise ValueError(f"cqlsh cannot read it: {err}") from None
    return [s for s in statements if any(token[0] != "endtoken" for token in s)]


def help_topic(word: str, text: str) -> Callable[..., None]:
    """A HELP topic that is not a command (HELP QUERIES), as a Shell method `do_<word>`.

    cqlsh's HELP lists every `do_<word>` method with a docstring (Shell.get_help_topics), prints
    that docstring for `HELP <word>` and offers the word when completing HELP. Typed on its own,
    the word is no command: cqlsh finds no grammar rule for it and says 'Improper <word> command.',
    so the body never runs.
    """

    def topic(self: Any, parsed: Any) -> None:
        self.stdout.write(text + "\n")

    topic.__name__ = f"do_{word}"
    topic.__doc__ = text
    return topic


def help_topic_words(shell_topics: Iterable[str]) -> frozenset[str]:
    """The topics cqlsh's HELP answers (lower case): the shell's own (`shell_topics`: its
    `do_<topic>` methods with a docstring, cmd's get_help_topics) and CQL's help topics."""
    cqldocs = import_cqlshmain(None).cqldocs  # a module global main() sets (setup_cqldocs)
    cql = cqldocs.get_help_topics() if cqldocs is not None else []
    return frozenset(str(t).lower() for t in [*shell_topics, *cql])


def with_help_topics(parsed: Parsed, topics: list[str]) -> Parsed:
    """HELP's parsed statement with `topics` instead of those typed."""
    return cast("Parsed", cast(Any, parsed).with_binding("topic", topics))


def credentials_file_secure(path: str) -> bool:
    """cqlsh's rule for a credentials file: used only when owned by the user and not readable by
    group or others (a missing file is no risk)."""
    from cqlshlib.util import is_file_secure

    return bool(is_file_secure(path))


def text_formatting() -> tuple[Callable[..., Any], Any, Callable[..., str]]:
    """cqlsh's own text escaping and colouring helpers, so decoded text looks like cqlsh's text."""
    from cqlshlib import formatting

    return formatting.color_text, formatting.unicode_controlchars_re, formatting._show_control_chars


def install_connection_hook(adjust: Callable[[dict[str, Any]], dict[str, Any]],
                            ssl_settings: Callable[..., dict[str, Any]]) -> None:
    """Let `adjust` rewrite the kwargs of every Cluster cqlsh creates; replace ssl_settings.

    cqlsh builds every Cluster itself (the shell, LOGIN, COPY's workers in copyutil) from
    `ssl_options=ssl_settings(...)`, which cannot carry an SSLContext; only used with --keyspaces,
    --sigv4 or --certfile.
    """
    from cassandra.cluster import Cluster
    from cqlshlib import copyutil, sslhandling

    def cluster(*args: Any, **kwargs: Any) -> Cluster:
        return Cluster(*args, **adjust(kwargs))

    # A COPY worker started with spawn has copyutil but must not import cqlshmain.
    cqlshmain = sys.modules.get("cqlshlib.cqlshmain")
    for module in (m for m in (cqlshmain, copyutil) if m is not None):
        if getattr(module, "Cluster", None) is not Cluster:
            raise RuntimeError(f"{module.__name__}.Cluster is not cassandra.cluster.Cluster")
        setattr(module, "Cluster", cluster)  # noqa: B010
    sslhandling.ssl_settings = ssl_settings
    setattr(copyutil, "ssl_settings", ssl_settings)  # noqa: B010


def end_idle_event_loop(connection_class: Any) -> bool:
    """The driver's libev event loop ended, and its thread joined, once no connection of any
    cluster of this process is left (the driver starts it with the first connection and keeps it
    for the process; the next connection starts another). A program's own clusters of the driver
    share it: while one has a connection, nothing is done. Whether it was ended."""
    from cassandra.io import libevreactor

    loop = getattr(libevreactor, "_global_loop", None)
    if loop is None or connection_class is not libevreactor.LibevConnection:
        return False
    with loop._conn_set_lock:
        if loop._live_conns or loop._new_conns:
            return False
    loop._cleanup()
    libevreactor._global_loop = None
    return True
