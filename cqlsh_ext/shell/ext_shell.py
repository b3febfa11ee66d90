"""The shell's class: cqlsh's Shell, extended, as one class with one door (`ExtShell`), and the
class of one run (`shell_class`); what it hands over to, and why, is the package's doc
(cqlsh_ext/shell/__init__.py). It loads cqlsh and the driver: imported by the entry that runs a
shell (cli.py), never by a declaration."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.agent.door import AgentRun
from cqlsh_ext.common import gc_pause
from cqlsh_ext.common.interrupt import wraps_ctrl_c
from cqlsh_ext.common.text import FittedLines, message, say, screen_width
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import commands
from cqlsh_ext.output import OutputClosed, named_rows
from cqlsh_ext.output.pipeline import ResultPipeline
from cqlsh_ext.repl import passwords
from cqlsh_ext.repl import shellhooks as repl
from cqlsh_ext.settings import Settings
from cqlsh_ext.shell import script, statement_bounds
from cqlsh_ext.shell.results import said, same_grammar
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.upstream.protocol import CqlshShell as Stock
    from cqlsh_ext.upstream.protocol import Parsed
else:  # cqlsh's own, untyped; mypy checks the class against its declaration (upstream/protocol.pyi)
    Stock = seams.stock_shell_class()

cqlshmain = seams.import_cqlshmain(None)


def _pager_found(setting: str | None, secure: bool) -> bool:
    from cqlsh_ext.repl.pager import pager_found  # the interactive shell's pager, on first use

    return pager_found(setting, secure)


class ServingLoop(Protocol):
    """A loop of our own that serves calls on the shell instead of reading statements (`cqlsh-ext
    mcp`: mcp_server.connection.Headless), given to the run's class by shell_class(): the shell is
    built and connected by cqlsh's main() exactly as for `cqlsh-ext`, then serves."""

    def admit(self, connecting: dict[str, Any]) -> None:
        """Before the shell connects (`connecting`: cqlsh's keyword arguments to the Shell): a
        SystemExit with one line where it cannot serve (a user without a password: cqlsh would ask
        at a terminal there is none of)."""

    def serve(self, context: ReadContext, versions: dict[str, Any]) -> None:
        """The loop, instead of the shell's: every call read in the connection's context, with the
        server's release as cqlsh read it at connect (`versions`)."""


class ExtShell(Stock):
    """cqlsh's Shell with cqlsh-ext's side (see the module doc): how it is made and connected, its
    door for statements and what it prints, its loops and history, its commands and HELP."""

    #: The run's settings, set on the per-run class by shell_class(); SOURCE/LOGIN sub-shells share it.
    settings: Settings = Settings()
    #: The run's side for programs (agent.door), set on the per-run class by shell_class().
    agent: AgentRun = AgentRun()
    #: Decided once when the main shell is built (cqlsh_ext.repl.shellhooks.wants_repl).
    repl_mode: bool = False
    #: A loop of our own that serves calls instead of a terminal (ServingLoop), set on the per-run
    #: class by shell_class(); None: the shell reads statements.
    server: ServingLoop | None = None
    repl_preload: Any = None
    repl_history: Any = None
    repl_session: Any = None
    #: The statement sent whole while it runs (its table for the result's formatting).
    sent_whole: Lexed | None = None
    #: What each result prints through (output.pipeline), made with the shell.
    results: ResultPipeline
    #: The statement read so far, measured before cqlsh's lexer (shell.statement_bounds).
    statement_reading: statement_bounds.StatementSoFar

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.server is not None:
            self.server.admit(kwargs)
        self.statement_reading = statement_bounds.StatementSoFar(seams.newline_commands())
        self.repl_mode = repl.wants_repl(self.settings.display, kwargs)
        self.save_repl_history = not kwargs.get("disable_history", False)
        self.max_history_length_shown = 50
        self.results = ResultPipeline(self, self.repl_mode, (lambda setting: _pager_found(
            setting, self.settings.agent.read_only)) if self.repl_mode else None)
        if self.repl_mode:
            # cqlsh's grammar read here (once per process), in the main thread alone, before the
            # prompt is built in another thread: read at the first statement, its machinery cost a
            # Ctrl-C pressed then (lost under load, tests/repl test_ctrl_c_*).
            seams.first_words()
            repl.before_connect(self)
        from cqlsh_ext.agent import kept_connection
        from cqlsh_ext.keyspaces import wiring

        kept_connection.lend(kwargs)  # a warm session's call: the session's connection, no new login
        # One-line connection errors for every connection (cqlsh's own for an unsupported CQL
        # version); under the Keyspaces flags the SigV4 provider and TLS context, LOCAL_QUORUM.
        # cqlsh's banner in its own loop (its history warning, 'Connected to ...') fitted to a
        # terminal at words. Never while the interactive prompt is built in another thread
        # (repl.shellhooks.Preload): it would take the stand-in for the terminal.
        banner = FittedLines(sys.stdout)
        fitting = bool(banner.width) and not self.repl_mode
        with wiring.connecting(self.settings, args, kwargs, keep=(cqlshmain.VersionNotSupported,),
                               keyspaces=self._keyspaces_read), \
                contextlib.redirect_stdout(banner) if fitting else contextlib.nullcontext():
            super().__init__(*args, **kwargs)
        if kept_connection.keep(self.conn, self.session):  # a warm session's first: the session's now
            self.owns_connection = False
        # cqlsh's rows, which keep each value where a name is said twice (LOGIN's session takes it).
        self.session.row_factory = named_rows.shell_row_factory
        banner.flush()
        for stream in ("stdout", "query_out"):  # cqlsh keeps the sys.stdout of its __init__
            if getattr(self, stream, None) is banner:
                setattr(self, stream, banner.out)
        level = wiring.consistency(self.settings)
        if level is not None:
            self.consistency_level = level
        if kwargs.get("single_statement") or self.server is not None:
            # -e (or a server's calls): cqlsh prefixes every error with '<stdin>:1:', a place in a
            # file there is none of.
            self.show_line_nums = False
        if self.settings.display.dictionary_table:  # before any read: forked workers inherit the store
            from cqlsh_ext.scanning import dictionary_table

            dictionary_table.load(self.session, self.settings.display.dictionary_table)
        if self.settings.display.output_format.expand:
            self.expand_enabled = True
        if self.repl_mode or self.server is not None:  # a lost server retried every few seconds, not minutes
            repl.shorten_reconnection(self)
        if self.server is None:  # a script's or a program's run (batch), or the interactive shell
            self.results.rows = self.agent.rows  # what each result printed: the run's
            self.agent.begin(repl.batch_run(kwargs, self.agent.batch), self.printerr,
                             lambda: setattr(self, "stop", True))
        if not self.repl_mode:  # the interactive loop resumes it once its prompt is built
            gc_pause.resume()

    def _keyspaces_read(self) -> list[str]:
        """The keyspaces the connection has read (the driver's metadata), while it is being made:
        none before cqlsh's __init__ made it."""
        conn = getattr(self, "conn", None)
        return list(getattr(getattr(conn, "metadata", None), "keyspaces", None) or {})

    # ------------------------------------------------ the door: each statement

    def onecmd(self, statementtext: str) -> Any:
        # Handed the statement read so far at every line: measured before cqlsh's lexer reads it
        # (shell.statement_bounds); what was said outside a statement (cqlsh's lexing errors)
        # written as JSON for a program (agent.door).
        try:
            way, said_first = self.statement_reading.whole(statementtext)
            if said_first is not None:
                self.printerr(said_first)
            if way != statement_bounds.LEX:
                return True
            done = super().onecmd(statementtext)
            if done:
                self.statement_reading.forget()
            return done
        finally:
            self.agent.flush()

    def reset_statement(self) -> None:
        self.statement_reading.forget()
        super().reset_statement()

    def handle_statement(self, tokens: Any, srcstr: str) -> Any:
        try:  # timed, classed by how it ended (agent.door)
            return self.agent.run_statement(lambda: self._handle_statement(tokens, srcstr))
        except BrokenPipeError:
            raise OutputClosed from None
        except Exception as err:
            if wraps_ctrl_c(err):  # cqlsh's onecmd would print it as an error
                raise KeyboardInterrupt from err
            raise
        finally:
            # cqlsh adds a multi-line statement to readline's history as one line: never one
            # that carries a password (cqlsh_ext.repl.passwords).
            passwords.forget(cqlshmain.readline, srcstr)

    def _handle_statement(self, tokens: Any, srcstr: str) -> Any:
        # The shell's door: a declared statement (shell.dispatcher.arrival) is read from its
        # declaration; else the statements' claims declared for its first word, in order: one that takes
        # the statement ends it here, a rewrite goes on, rewritten, to the next and to cqlsh; any
        # other statement goes to cqlsh as written. Each is handed a Lexed: the statement's text,
        # lexed once when first read (cqlsh_ext.cql.lexer).
        from cqlsh_ext.shell.dispatcher import arrival

        if all(tok[0] == "endtoken" for tok in tokens):
            return True  # a lone `;`: nothing to send (cqlsh sent it, for a syntax error)
        tokens, srcstr = statement_bounds.own_text(tokens, srcstr)
        first, lexed = str(tokens[0][1]), Lexed(seams.statement_text(tokens, srcstr))
        door = arrival(first, lambda: lexed)
        if door.plugin_error is not None:  # a package's bug, in its one line; the statement goes on
            self.printerr(door.plugin_error)
        refused = door.typo or statement_bounds.too_deep(tokens)  # no server takes it; nothing reads it
        if refused is not None:
            self.printerr(refused)
            return True
        feature = door.feature[0] if door.feature is not None else None
        if self.agent.refused(lexed, feature, self.current_keyspace, self.agent_tables, self.session.prepare,
                              self.agent_view_base):
            return True  # --read-only's refusal, said (agent.read_only)
        if door.feature is not None:
            self._run_feature(*door.feature, lexed)
            return True
        statement: Lexed | None = lexed
        rewritten: commands.Rewrite | None = None
        for claim in commands.claims_for(first):
            statement = statement or Lexed(seams.statement_text(tokens, srcstr))
            outcome = claim.handler(self, statement)
            if outcome is True:
                return True
            if outcome is not False:
                rewritten, tokens, srcstr, statement = outcome, outcome.tokens, outcome.text, None
        way, said = statement_bounds.admit(tokens, self.has_command)  # past cqlsh's grammar's bound
        if said is not None:
            self.printerr(said)
        if way == statement_bounds.REFUSED:
            return True
        done = self.send_whole(tokens, srcstr, statement) if way == statement_bounds.WHOLE \
            else super().handle_statement(tokens, srcstr)
        if rewritten is not None and done:
            rewritten.said()
        return done

    def _run_feature(self, feature: Feature, skip: int, statement: Lexed) -> None:
        """A declared feature's statement (shell.dispatcher: a package's, or one cqlsh-ext
        declares with its feature), run and printed on the shell's output."""
        from cqlsh_ext.reading.context import shell_context
        from cqlsh_ext.shell import dispatcher

        dispatcher.run(shell_context(self), feature, skip, statement, self.query_out,
                       self.results.screen_width())

    def handle_parse_error(self, cmdword: str, tokens: Any, parsed: Parsed, srcstr: str) -> Any:
        # A word chosen from a list and mistyped is told in one line, the nearest and the list;
        # our commands say what was expected, with an example, where cqlsh says only 'Improper'.
        from cqlsh_ext.shell.help import mistyped_line, usage_of

        said = mistyped_line([str(tok[1]) for tok in tokens if tok[0] != "endtoken"])
        if said is not None:
            self.printerr(said)
            return None
        declared = commands.command(cmdword)
        usage = usage_of(declared) if declared is not None else None
        if usage is None:
            return super().handle_parse_error(cmdword, tokens, parsed, srcstr)
        problem = f" (problem at {parsed.remainder[0][1]!r})" if parsed and parsed.remainder else ""
        words = [str(tok[1]).upper() for tok in tokens if tok[0] != "endtoken"]
        self.printerr(f"Improper {cmdword.upper()} command{problem}.\n{usage(words)}")

    def has_command(self, word: str) -> bool:
        """A `do_<word>` method: a command cqlsh's grammar must read."""
        return getattr(self, f"do_{word}", None) is not None

    def send_whole(self, tokens: Any, srcstr: str, statement: Lexed | None) -> Any:
        """The statement sent as written, as cqlsh sends one its grammar does not read
        (shell.statement_bounds); a SELECT of system_traces without tracing it."""
        statement = statement_bounds.whole_statement(tokens, srcstr, statement)
        tracing = self.tracing_enabled
        if statement_bounds.reads_traces(tokens, statement, self.current_keyspace):
            self.tracing_enabled = False
        self.sent_whole = statement
        try:
            return self.perform_statement(statement.text)
        finally:
            self.sent_whole = None
            self.tracing_enabled = tracing

    def parse_for_select_meta(self, query_string: str) -> Any:
        # A statement sent whole: its table found by our lexer, where cqlsh would parse it again.
        found, named = statement_bounds.table_of_whole(self.sent_whole, query_string, written=False)
        if not found:
            return super().parse_for_select_meta(query_string)
        return seams.select_meta(self, *named) if named is not None else None

    def parse_for_update_meta(self, query_string: str) -> Any:
        found, named = statement_bounds.table_of_whole(self.sent_whole, query_string, written=True)
        if not found:
            return super().parse_for_update_meta(query_string)
        return seams.update_meta(self, *named) if named is not None else None

    def agent_tables(self, keyspace: str) -> list[str]:
        """The tables and views of `keyspace` as the driver's schema has them (--read-only reads a
        name alone as a table of the keyspace in use by them)."""
        meta = self.conn.metadata.keyspaces.get(keyspace)
        if meta is None:
            return []
        return [*meta.tables, *getattr(meta, "views", {})]

    def agent_view_base(self, keyspace: str, name: str) -> str | None:
        """The table whose rows the view keyspace.name holds (None: no view), by the driver's
        schema: --read-only refuses a view of a table it refuses."""
        from cqlsh_ext.agent.read_only import view_base

        return view_base(self.conn.metadata, keyspace, name)

    # ------------------------------------------------ what it prints (output.pipeline, shell.results)

    def printerr(self, text: Any, *args: Any, **kwargs: Any) -> None:
        conn, keyspace = getattr(self, "conn", None), getattr(self, "current_keyspace", None)
        statement = self.agent.statement.text if self.agent.statement is not None else None
        read_only = self.agent.read_only  # the name meant is never one its policy hides
        hidden = read_only.hidden_in(conn.metadata) if read_only is not None and conn is not None else None
        if self.agent.json_errors:  # a program's run: kept, written as JSON (agent.door)
            self.statement_error = True  # as cqlsh's printerr: the run exits 2
            self.agent.keep(said(str(text), conn, keyspace, False, statement, hidden))  # the name meant too
            return
        super().printerr(said(str(text), conn, keyspace, statement=statement, hidden=hidden), *args, **kwargs)

    def perform_simple_statement(self, statement: Any) -> Any:
        self.results.read_in_pages(statement)  # PAGING OFF: a SELECT read in pages all the same
        state = self.results.rows.reading_start()[0]  # a resumed SELECT's (--resume: output.row_limit)
        if state is None:
            return super().perform_simple_statement(statement)
        with seams.paging_from(self.session, state):
            return super().perform_simple_statement(statement)

    def print_result(self, result: Any, table_meta: Any) -> None:
        self.results.print_result(result, table_meta)

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = 0) -> None:
        self.results.print_static_result(result, table_meta, with_header, tty, row_count_offset)

    def myformat_value(self, val: Any, cqltype: Any = None, **kwargs: Any) -> Any:
        return self.results.format_value(val, cqltype, kwargs)

    def print_formatted_result(self, formatted_names: list[Any], formatted_values: list[Any] | None,
                               with_header: bool, tty: bool) -> None:
        self.results.print_formatted_result(formatted_names, formatted_values, with_header, tty)

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None:
        self.results.print_formatted_result_vertically(formatted_names, formatted_values, row_count_offset)

    def check_build_versions(self) -> None:
        # On stderr, so results stay clean, and only where the grammar may differ (shell.results).
        if same_grammar(self.connection_versions["build"], cqlshmain.build_version):
            return
        with contextlib.redirect_stdout(sys.stderr):
            super().check_build_versions()

    def print_warnings(self, warnings: Any) -> None:
        if not self.settings.display.output_format.machine or not warnings:
            super().print_warnings(warnings)
            return
        for warning in warnings:  # beside a machine format: lines of their own, on stderr
            say(f"Warning: {warning}")

    # ------------------------------------------------ the loops and the history

    def cmdloop(self, intro: Any = None) -> None:
        # A server's loop (ServingLoop) serves calls; prompt_toolkit for a person at a terminal;
        # cqlsh's own loop, each line measured first (shell.script.run_script), for -e, -f, pipes,
        # SOURCE and --classic. Imported here so scripts never load prompt_toolkit.
        if self.server is not None:
            from cqlsh_ext.reading.context import shell_context

            self.server.serve(shell_context(self), dict(self.connection_versions or {}))
            self.statement_error = False  # cqlsh's main() exits 2 after a script whose statement failed
            return
        if self.agent.settings.catalog is not None:  # --catalog: the catalog, no statement
            from cqlsh_ext.reading.context import shell_context

            self.agent.write_catalog(shell_context(self), self.agent_tables)
        elif self.repl_mode:
            from cqlsh_ext.repl.app import run

            run(self)
        else:
            script.run_script(self, cqlshmain.CQL_ERRORS)
        if self.owns_connection:
            # The loop over (-e, -f, a pipe's end): the connection closed now, as cqlsh's EXIT
            # closes it. Left to the driver's exit hook, it would close after Python has stopped
            # the thread pools, and a schema refresh the driver scheduled after a DDL statement
            # would end in a traceback. A Ctrl-C from here on ends the process at once.
            from cqlsh_ext.common.interrupt import ends_at_once

            ends_at_once()
            self.conn.shutdown()


    def get_input_line(self, prompt: str = "") -> str:
        try:
            line = str(super().get_input_line(prompt))
        except UnicodeDecodeError as err:  # -f of a binary file: one line, and the loop ends
            self.printerr(script.unreadable_input(err, self.lineno))
            self.reset_statement()
            raise EOFError from None
        # A line typed at a terminal that carries a password is forgotten, with the statement's
        # earlier lines (a script's lines are not added: the statement so far is not read again).
        if self.tty:
            passwords.forget(cqlshmain.readline, self.statement.getvalue() + line)
        return line

    def init_history(self) -> None:
        super().init_history()
        passwords.drop_all(cqlshmain.readline)  # entries an older cqlsh-ext or cqlsh wrote

    def save_history(self, history_disabled: bool = False) -> None:
        passwords.drop_all(cqlshmain.readline)
        super().save_history(history_disabled)

    # ------------------------------------------------ commands: DESCRIBE, COPY, LOGIN, HISTORY, HELP

    def do_describe(self, parsed: Parsed) -> None:
        from cqlsh_ext.keyspaces.command import describe, server_describes

        # A read-only policy's denied tables are absent from every DESCRIBE (agent.read_only); the
        # server's answer is screened by the printers below (describe_keyspaces, ...).
        read_only = self.agent.read_only
        hidden = read_only.hidden_in(self.conn.metadata) if read_only is not None else None
        if self.settings.display.output_format.name == "json" and self.server is None:
            # the schema as objects, not CQL text (a program's run; MCP's describe_table answers CQL)
            import json

            from cqlsh_ext.agent.schema_json import describe as describe_json
            from cqlsh_ext.keyspaces.describe import KeyspacesDescribeError
            from cqlsh_ext.reading.context import shell_context

            try:
                answer = describe_json(self.conn, self.current_keyspace, shell_context(self), parsed,
                                       self.cql_unprotect_name, hidden)
            except KeyspacesDescribeError as err:
                self.printerr(str(err))
                return None
            self.stdout.write(json.dumps(answer, ensure_ascii=False, default=str) + "\n")
            return None
        if server_describes(self.connection_versions["build"]):
            return super().do_describe(parsed)
        # A 3.x server (Amazon Keyspaces reports 3.11.2): from the driver's schema, printed by
        # cqlsh's own printers.
        return describe(self, parsed, hidden)

    # A read-only policy's denied tables are absent from what DESCRIBE lists and prints: the
    # server's rows screened (agent.read_only).
    def describe_keyspaces(self, rows: Any) -> None:
        return super().describe_keyspaces(self._shown_schema(rows))

    def describe_list(self, rows: Any) -> None:
        return super().describe_list(self._shown_schema(rows))

    def describe_element(self, rows: Any) -> None:
        return super().describe_element(self._shown_schema(rows))

    # ... nor from the names completion offers (cqlsh's completer asks these).
    def get_keyspace_names(self) -> Sequence[str]:
        return self._shown_names(None, super().get_keyspace_names())

    def get_columnfamily_names(self, ksname: str | None = None) -> Sequence[str]:
        return self._shown_names(ksname or self.current_keyspace, super().get_columnfamily_names(ksname))

    def get_materialized_view_names(self, ksname: str | None = None) -> Sequence[str]:
        return self._shown_names(ksname or self.current_keyspace,
                                 super().get_materialized_view_names(ksname))

    def _shown_names(self, keyspace: str | None, names: Sequence[str]) -> Sequence[str]:
        """`names` (keyspaces; `keyspace` given: its tables or views) without those a read-only
        policy hides."""
        read_only = self.agent.read_only
        if read_only is None:
            return names
        hidden = read_only.hidden_in(self.conn.metadata)
        return [name for name in names
                if not (hidden(name, None) if keyspace is None else hidden(keyspace, name))]

    def _shown_schema(self, rows: Any) -> Any:
        read_only = self.agent.read_only
        return rows if read_only is None else read_only.shown_schema(rows, self.conn.metadata)

    def do_copy(self, parsed: Parsed) -> None:
        from cqlsh_ext.keyspaces import wiring

        level = wiring.copy_consistency(self.settings, parsed.get_binding("dir", "") or "",
                                        self.consistency_level) if self.settings.keyspaces.active else None
        if level is None:
            return super().do_copy(parsed)
        saved, self.consistency_level = self.consistency_level, level  # COPY FROM at LOCAL_QUORUM
        try:
            return super().do_copy(parsed)
        finally:
            self.consistency_level = saved

    def do_login(self, parsed: Parsed) -> None:
        from cqlsh_ext.common.interrupt import answering

        with answering():  # its password prompt: Ctrl-C answers it at once
            super().do_login(parsed)  # a new Cluster on success
        from cqlsh_ext.agent import kept_connection

        kept_connection.opened(self.conn)  # in a warm session's call: closed when the call ends
        if self.repl_mode:
            repl.shorten_reconnection(self)

    def do_history(self, parsed: Parsed) -> None:
        if self.repl_mode:
            repl.do_history(self, parsed)
        elif cqlshmain.readline is None:  # a script's run (-e, -f, a pipe): cqlsh's own HISTORY fails
            self.printerr("HISTORY lists the statements typed at the prompt: a run of -e, -f or "
                          "piped input has none")
        else:
            super().do_history(parsed)

    def do_help(self, parsed: Parsed) -> None:
        from cqlsh_ext.shell.help import help_answer

        keys = frozenset(repl.KEY_TOPICS)  # HELP KEYS (the interactive prompt's, asked anywhere)
        answer = help_answer([str(topic) for topic in parsed.get_binding("topic", ())],
                             lambda: seams.help_topic_words(self.get_help_topics()) | keys)
        for line in answer.said:
            self.printerr(line)
        if answer.topics is None:
            return
        parsed = seams.with_help_topics(parsed, list(answer.topics)) if answer.alone is None else parsed
        width = screen_width(self.stdout)  # the terminal's, read before the repl's HELP wraps stdout

        def helper(shell: Any, parsed: Parsed) -> None:
            if answer.alone is not None:  # HELP DESCRIBE PAYLOAD, a package's feature: that alone
                shell.stdout.write(answer.alone + "\n")
                return
            Stock.do_help(shell, parsed)
            shell.stdout.write(answer.after + "\n" if answer.after else "")
            for line in answer.see_also:  # fitted to the screen as a message is (never 'HEL' / 'P EDIT')
                shell.stdout.write(message(line, width) + "\n")

        if self.repl_mode:
            repl.do_help(self, parsed, helper)
        elif answer.topics and all(topic.lower() in repl.KEY_TOPICS for topic in answer.topics):
            print("The interactive prompt's keys (cqlsh-ext without -e or -f, on a terminal):")
            repl.print_key_help()
        else:
            helper(self, parsed)

    do_describe.__doc__ = Stock.do_describe.__doc__
    do_desc = do_describe
    do_copy.__doc__ = Stock.do_copy.__doc__
    do_login.__doc__ = Stock.do_login.__doc__
    do_history.__doc__ = Stock.do_history.__doc__
    do_help.__doc__ = Stock.do_help.__doc__


def shell_class(settings: Settings, agent: AgentRun | None = None,
                server: ServingLoop | None = None) -> type[ExtShell]:
    """The Shell class of one run: its settings, its side for programs (agent.door; None: one that
    does nothing, a server's), the loop that serves calls instead of reading statements (None: it
    reads them), and the declarations' methods (shell.help: a `do_<word>` per
    command, one per HELP topic, their texts read when HELP asks)."""
    from cqlsh_ext.shell.help import shell_methods

    return type("ExtShell", (ExtShell,), {"settings": settings, "agent": agent or AgentRun(),
                                          "server": server, **shell_methods()})
