"""The cqlsh Shell, extended: wiring only.

Each method below hands over to the module that does the work, and with our features off (`-d
none`, table output, `--classic`, no Keyspaces flags) to cqlsh's own method, so stock behaviour
is kept. Where each override attaches to cqlsh is listed in cqlsh_ext.upstream.seams.

- results: cqlsh_ext.output.pipeline (writers, pager, blob cells, auto vertical);
- commands and statements of ours: their modules, imported here (COMMAND_MODULES); each
  command's `do_<word>` comes from its declaration, and handle_statement hands a statement to the
  intercepts declared for its first word (cqlsh_ext.commands) before cqlsh sees it;
- the interactive loop: cqlsh_ext.repl;
- a statement's bounds before cqlsh's lexer and grammar (size, nesting, tokens; a long statement
  sent whole): cqlsh_ext.commands.statement_bounds;
- Amazon Keyspaces: cqlsh_ext.keyspaces.

cqlsh's main(), SOURCE and LOGIN build the Shell themselves, by the module global name `Shell`:
`shell_class(settings)` makes the class for one run, with the run's settings and commands in it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cqlsh_ext import commands
from cqlsh_ext.commands import decode, decompress, statement_bounds
from cqlsh_ext.common import gc_pause
from cqlsh_ext.common.text import FittedLines, message, nearest, say, screen_width
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.describe import command as describe_payload
from cqlsh_ext.edit import command as edit_command
from cqlsh_ext.encode import command as encode_statement
from cqlsh_ext.export import command as export_command
from cqlsh_ext.insight import command as insight_commands
from cqlsh_ext.output import OutputClosed
from cqlsh_ext.output import command as output_command
from cqlsh_ext.output.pipeline import ResultPipeline
from cqlsh_ext.payload_select import command as payload_select
from cqlsh_ext.repl import passwords
from cqlsh_ext.repl import shellhooks as repl
from cqlsh_ext.rewrite import command as rewrite_statement
from cqlsh_ext.settings import Settings
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.upstream.protocol import Parsed

#: The modules that declare our commands and statement intercepts: importing one declares them
#: (HELP lists the commands with cqlsh's own, in alphabetical order). Intercepts of one first word
#: are tried in this order: a COPY (SELECT ...) is the export's before a COPY's column paths are
#: refused; an UPDATE with payload paths in SET is the edit's before encode() reads it.
COMMAND_MODULES = (decompress, decode, output_command, insight_commands, rewrite_statement, edit_command,
                   encode_statement, export_command, describe_payload, payload_select)

cqlshmain = seams.import_cqlshmain(None)
Stock = seams.stock_shell_class()

#: The first words of cqlsh-ext's own statements that the shell reads from their features'
#: declarations (features.feature.Statement; tests/mcp_server/test_declarations.py holds the two
#: equal): such a statement is read by our lexer, never by cqlsh's grammar, which completes it only.
DECLARED_FIRST_WORDS = frozenset({"compression", "inspect"})


def _statement(tokens: Any, srcstr: str) -> Lexed:
    """The statement cqlsh's `tokens` are, as our readers take it: its text, not yet lexed."""
    return Lexed(seams.statement_text(tokens, srcstr))


def _major_minor(release: str) -> tuple[str, ...]:
    return tuple(release.split("-", 1)[0].split(".")[:2])


def _major(release: str) -> int:
    """4 for '4.1.3', 3 for '3.11.2'; a release that does not start with a number counts as new."""
    head = release.split(".", 1)[0]
    return int(head) if head.isdigit() else 99


def _nearest_first_word(word: str) -> str | None:
    """The first word of a statement or command (cqlsh's, CQL's, ours: seams.first_words) that
    `word`, none of them, is a typo of ('COMPRESION': COMPRESSION), or None. A word that is near
    none goes to the server as typed (a newer server's statement cqlsh's grammar does not know)."""
    if not word[:1].isalpha():
        return None
    words = seams.first_words()
    if word.upper() in words:
        return None
    return nearest(word.upper(), words)


def _wraps_ctrl_c(err: BaseException) -> bool:
    """Whether `err` was caused by a Ctrl-C (KeyboardInterrupt) that Python wrapped: on Python 3.11
    one that lands while a class is made (a dataclass's fields, on a module's first import right
    after Enter) comes out as 'RuntimeError: Error calling __set_name__ ...'."""
    seen: set[int] = set()
    cause = err.__cause__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def _pager_found(setting: str | None) -> bool:
    from cqlsh_ext.repl.pager import pager_found  # the interactive shell's pager, on first use

    return pager_found(setting)


class ExtShell(Stock):  # type: ignore[misc,valid-type]  # cqlsh's Shell is untyped
    #: The run's settings, set on the per-run class by shell_class(); SOURCE/LOGIN sub-shells share it.
    settings: Settings = Settings()
    #: Decided once when the main shell is built (cqlsh_ext.repl.shellhooks.wants_repl).
    repl_mode: bool = False
    #: A loop of our own serves statements instead of a terminal (cqlsh_ext.mcp_server.connection).
    serving: bool = False
    repl_preload: Any = None
    repl_history: Any = None
    repl_session: Any = None
    #: The statement being read, as its bounds measure it; one sent whole while it runs.
    statement_reading: statement_bounds.StatementSoFar
    sent_whole: Lexed | None = None
    #: cqlsh's TRACING ON/OFF (a statement sent whole may read system_traces without it).
    tracing_enabled: bool
    #: cqlsh's loop ends once it is set (EXIT, -e's statement read).
    stop: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.statement_reading = statement_bounds.StatementSoFar(seams.newline_commands())
        self.repl_mode = repl.wants_repl(self.settings.display, kwargs)
        self.save_repl_history = not kwargs.get("disable_history", False)
        self.max_history_length_shown = 50
        self.results = ResultPipeline(self, self.repl_mode, _pager_found if self.repl_mode else None)
        if self.repl_mode:
            # cqlsh's grammar read here (once per process), in the main thread alone, before the
            # prompt is built in another thread: read at the first statement, its machinery cost a
            # Ctrl-C pressed then (lost under load, tests/repl test_ctrl_c_*).
            seams.first_words()
            repl.before_connect(self)
        from cqlsh_ext.keyspaces import wiring

        # One-line connection errors for every connection (cqlsh's own for an unsupported CQL
        # version); under the Keyspaces flags the SigV4 provider and TLS context, LOCAL_QUORUM.
        # cqlsh's banner in its own loop (its history warning, 'Connected to ...') fitted to a
        # terminal at words. Never while the interactive prompt is built in another thread
        # (repl.shellhooks.Preload): it would take the stand-in for the terminal.
        banner = FittedLines(sys.stdout)
        fitting = bool(banner.width) and not self.repl_mode
        with wiring.connecting(self.settings, args, kwargs, keep=(cqlshmain.VersionNotSupported,)), \
                contextlib.redirect_stdout(banner) if fitting else contextlib.nullcontext():
            super().__init__(*args, **kwargs)
        banner.flush()
        for stream in ("stdout", "query_out"):  # cqlsh keeps the sys.stdout of its __init__
            if getattr(self, stream, None) is banner:
                setattr(self, stream, banner.out)
        level = wiring.consistency(self.settings)
        if level is not None:
            self.consistency_level = level
        if kwargs.get("single_statement"):
            # -e: cqlsh prefixes every error with '<stdin>:1:', a place in a file there is none of.
            self.show_line_nums = False
        if self.settings.display.dictionary_table:  # before any read: forked workers inherit the store
            from cqlsh_ext.scanning import dictionary_table

            dictionary_table.load(self.session, self.settings.display.dictionary_table)
        if self.settings.display.output_format.expand:
            self.expand_enabled = True
        if self.repl_mode or self.serving:  # a lost server is retried every few seconds, not minutes
            repl.shorten_reconnection(self)
        if not self.repl_mode:  # the interactive loop resumes it once its prompt is built
            gc_pause.resume()

    def onecmd(self, statementtext: str) -> Any:
        # The statement read so far, bounded before cqlsh's lexer reads it: measured here when it
        # was not a line at a time (the interactive shell's input).
        way, said = self.statement_reading.whole(statementtext)
        if said is not None:
            self.printerr(said)
        if way != statement_bounds.LEX:
            return True
        done = super().onecmd(statementtext)
        if done:
            self.statement_reading.forget()
        return done

    def reset_statement(self) -> None:
        self.statement_reading.forget()
        super().reset_statement()

    def handle_statement(self, tokens: Any, srcstr: str) -> Any:
        try:
            return self._handle_statement(tokens, srcstr)
        except Exception as err:
            if _wraps_ctrl_c(err):  # cqlsh's onecmd would print it as an error
                raise KeyboardInterrupt from err
            raise
        finally:
            # cqlsh adds a multi-line statement to readline's history as one line: never one
            # that carries a password (cqlsh_ext.repl.passwords).
            passwords.forget(cqlshmain.readline, srcstr)

    def _handle_statement(self, tokens: Any, srcstr: str) -> Any:
        # The statement intercepts declared for its first word (cqlsh_ext.commands), in order: one
        # that takes the statement ends it here; a rewrite goes on, rewritten, to the next and to
        # cqlsh; any other statement goes to cqlsh as written. Each is handed a Lexed: the
        # statement's text, lexed once when first read (cqlsh_ext.cql.lexer).
        if all(tok[0] == "endtoken" for tok in tokens):
            return True  # a lone `;`: nothing to send (cqlsh sent it, for a syntax error)
        tokens, srcstr = statement_bounds.own_text(tokens, srcstr)
        first = str(tokens[0][1]).lower()
        # A declared feature's statement (features.shell_statement): one of cqlsh-ext's own that its
        # feature declares (COMPRESSION SETTINGS), or one whose first word is none of the shell's, a
        # package's read feature's (never a statement of cqlsh's, CQL's or ours).
        feature = None
        statement: Lexed | None = None
        own = first in DECLARED_FIRST_WORDS
        if own or first.upper() not in seams.first_words():
            from cqlsh_ext.features import PluginError, shell_statement

            statement = _statement(tokens, srcstr)
            try:
                feature = shell_statement.own_feature_of(statement) if own \
                    else shell_statement.feature_of(statement)
            except PluginError as err:  # a package's bug, in its one line; the statement goes on
                self.printerr(str(err))
        meant = _nearest_first_word(first) if feature is None else None
        if meant is not None:  # a typo no server takes: the word meant, not a SyntaxException
            self.printerr(f"{tokens[0][1]} is not a command or statement: did you mean {meant}? "
                          "(HELP lists the commands)")
            return True
        too_deep = statement_bounds.too_deep(tokens)
        if too_deep is not None:  # nothing reads it, the server never sees it
            self.printerr(too_deep)
            return True
        if feature is not None and statement is not None:
            try:
                self._run_feature(*feature, statement)
            except BrokenPipeError:
                raise OutputClosed from None
            return True
        rewritten: commands.Rewrite | None = None
        try:
            for intercept in commands.intercepts_for(first):
                if statement is None:
                    statement = _statement(tokens, srcstr)
                outcome = intercept.handler(self, statement)
                if outcome is True:
                    return True
                if isinstance(outcome, commands.Declared):  # a feature's statement (DESCRIBE PAYLOAD)
                    from cqlsh_ext.features import declared

                    self._run_feature(declared(plugins=False)[outcome.feature], outcome.skip, statement)
                    return True
                if outcome is not False:
                    rewritten, tokens, srcstr, statement = outcome, outcome.tokens, outcome.text, None
            # Past cqlsh's grammar's bound: sent whole, or refused.
            way, said = statement_bounds.admit(tokens, self._has_command)
            if said is not None:
                self.printerr(said)
            if way == statement_bounds.REFUSED:
                return True
            if way == statement_bounds.WHOLE:
                done = self._send_whole(tokens, srcstr, statement)
            else:
                done = super().handle_statement(tokens, srcstr)
        except BrokenPipeError:
            raise OutputClosed from None
        if rewritten is not None and done:
            rewritten.said()
        return done

    def _run_feature(self, feature: Feature, skip: int, statement: Lexed) -> None:
        """A declared feature's statement (features.shell_statement: a package's, or one cqlsh-ext
        declares with its feature), run and printed on the shell's output."""
        from cqlsh_ext.features import shell_statement
        from cqlsh_ext.reading.context import shell_context

        shell_statement.run(shell_context(self), feature, skip, statement, self.query_out,
                            self.results.screen_width())

    def _has_command(self, word: str) -> bool:
        """A `do_<word>` method: a command cqlsh's grammar must read."""
        return getattr(self, f"do_{word}", None) is not None

    def _send_whole(self, tokens: Any, srcstr: str, statement: Lexed | None) -> Any:
        """The statement sent as written, as cqlsh sends one its grammar does not read
        (commands.statement_bounds); a SELECT of system_traces without tracing it."""
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

    def handle_parse_error(self, cmdword: str, tokens: Any, parsed: Parsed, srcstr: str) -> Any:
        # A word chosen from a list and mistyped is told in one line, the nearest and the list;
        # our commands say what was expected, with an example, where cqlsh says only 'Improper'.
        said = commands.mistyped([str(tok[1]) for tok in tokens if tok[0] != "endtoken"])
        if said is not None:
            self.printerr(said)
            return None
        declared = commands.command(cmdword)
        if declared is None or declared.usage is None:
            return super().handle_parse_error(cmdword, tokens, parsed, srcstr)
        problem = f" (problem at {parsed.remainder[0][1]!r})" if parsed and parsed.remainder else ""
        words = [str(tok[1]).upper() for tok in tokens if tok[0] != "endtoken"]
        self.printerr(f"Improper {cmdword.upper()} command{problem}.\n{declared.usage(words)}")

    # ------------------------------------------------ cqlsh's readline history: no password in it

    def get_input_line(self, prompt: str = "") -> str:
        try:
            line = super().get_input_line(prompt)
        except UnicodeDecodeError as err:  # -f of a binary file: one line, and the loop ends
            self.printerr(statement_bounds.unreadable_input(err, self.lineno))
            self.reset_statement()
            raise EOFError from None
        # readline has just added the line typed: forgotten, with the statement's earlier lines,
        # once the statement carries a password. Only a line typed at a terminal is added (a
        # script's lines are not: the statement so far is not read again at each of them).
        if self.tty:
            passwords.forget(cqlshmain.readline, self.statement.getvalue() + line)
        return str(line)

    def init_history(self) -> None:
        super().init_history()
        passwords.drop_all(cqlshmain.readline)  # entries an older cqlsh-ext or cqlsh wrote

    def save_history(self, history_disabled: bool = False) -> None:
        passwords.drop_all(cqlshmain.readline)
        super().save_history(history_disabled)

    def cmdloop(self, intro: Any = None) -> None:
        # prompt_toolkit for a person at a terminal; cqlsh's own loop, each line measured first
        # (_run_script), for -e, -f, pipes, SOURCE and --classic.
        # Imported here so scripts never load prompt_toolkit.
        if self.repl_mode:
            from cqlsh_ext.repl.app import run

            run(self)
        else:
            self._run_script()
        if self.owns_connection:
            # The loop over (-e, -f, a pipe's end): the connection closed now, as cqlsh's EXIT
            # closes it. Left to the driver's exit hook, it would close after Python has stopped
            # the thread pools, and a schema refresh the driver scheduled after a DDL statement
            # would end in a traceback. A Ctrl-C from here on ends the process at once.
            from cqlsh_ext.common.interrupt import ends_at_once

            ends_at_once()
            self.conn.shutdown()

    def _run_script(self) -> None:
        # cqlsh's cmdloop (COPIED pins it: -e, -f, stdin, SOURCE, --classic), each line measured
        # (commands.statement_bounds.StatementSoFar) before anything lexes it. cqlsh's loop hands
        # onecmd all of the statement read so far at every line, and its lexer reads it all again (an
        # unclosed comment of 100,000 lines took 123 s): here onecmd is handed it only where it may
        # end, a statement past a bound is refused at the line that passes it, and one of nothing to
        # run (a lone `;`) is not sent.
        reading = self.statement_reading
        with self.prepare_loop():
            while not self.stop:
                try:
                    if self.single_statement:
                        line = self.single_statement
                        self.stop = True
                    else:
                        line = self.get_input_line(self.prompt)
                    if statement_bounds.nothing_to_run(line) and not reading.dropping \
                            and not self.statement.tell():
                        continue  # nothing to run, nothing before it (a million lines of `;`: at once)
                    way, said = reading.line(line)
                    if said is not None:
                        self.printerr(said)
                    if way == statement_bounds.LEX:
                        self.statement.write(line)
                        if self.onecmd(self.statement.getvalue()):
                            self.reset_statement()
                    elif way == statement_bounds.WAIT:
                        self.statement.write(line)
                        self.set_continue_prompt()
                    elif way == statement_bounds.REFUSED or self.statement.tell():
                        self.reset_statement()
                    else:  # nothing read before it: nothing to reset
                        reading.forget()
                except EOFError:
                    self.handle_eof()
                except cqlshmain.CQL_ERRORS as cqlerr:
                    self.printerr(cqlerr.message)
                except KeyboardInterrupt:
                    self.reset_statement()
                    print("")

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

    # ------------------------------------------------ results (cqlsh_ext.output.pipeline)

    def perform_simple_statement(self, statement: Any) -> Any:
        self.results.read_in_pages(statement)  # PAGING OFF: a SELECT read in pages all the same
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
        # cqlsh warns on stdout whenever the server's release differs at all from the one it was
        # built against (5.0.0 vs 5.0.6 too). Only a different major.minor can change the
        # protocol or the grammar; the warning goes to stderr, so results stay clean.
        if _major_minor(self.connection_versions["build"]) == _major_minor(cqlshmain.build_version):
            return
        with contextlib.redirect_stdout(sys.stderr):
            return super().check_build_versions()

    def print_warnings(self, warnings: Any) -> None:
        if not self.settings.display.output_format.machine or not warnings:
            return super().print_warnings(warnings)
        for warning in warnings:
            say(f"Warning: {warning}")

    def printerr(self, text: Any, *args: Any, **kwargs: Any) -> None:
        # Every message the shell writes wraps at words on a terminal (common.text.message), where
        # the terminal would break it inside a word; a pipe or a file gets its one line.
        super().printerr(message(str(text), screen_width(sys.stderr)), *args, **kwargs)

    # ------------------------------------------------ the interactive shell (cqlsh_ext.repl)

    def do_login(self, parsed: Parsed) -> None:
        from cqlsh_ext.common.interrupt import answering

        with answering():  # its password prompt: Ctrl-C answers it at once
            super().do_login(parsed)  # a new Cluster on success
        if self.repl_mode:
            repl.shorten_reconnection(self)

    def do_history(self, parsed: Parsed) -> None:
        if not self.repl_mode:
            return super().do_history(parsed)
        repl.do_history(self, parsed)

    def do_help(self, parsed: Parsed) -> None:
        typed = [str(topic) for topic in parsed.get_binding("topic", ())]
        asked = [topic.lower() for topic in typed]
        from cqlsh_ext.features import PluginError
        from cqlsh_ext.features.shell_statement import help_of, help_section

        phrase = commands.phrase_help(asked)
        helper: Callable[[Any, Parsed], None] = Stock.do_help
        try:  # HELP TOY ROWS: a package's read feature's document; HELP: theirs after cqlsh's
            phrase = help_of(asked) if asked and phrase is None else phrase
            features = help_section() if not asked else ""
        except PluginError as err:  # a package's bug, in its one line; cqlsh's HELP goes on
            self.printerr(str(err))
            features = ""
        if features:
            def helper(shell: Any, parsed: Parsed) -> None:
                Stock.do_help(shell, parsed)
                shell.stdout.write(features + "\n")
        if phrase is not None:  # HELP DESCRIBE PAYLOAD, HELP COMPRESSION STATS: that text alone
            def helper(shell: Any, _parsed: Parsed) -> None:
                shell.stdout.write(phrase + "\n")
        else:
            keys = frozenset(repl.KEY_TOPICS) if self.repl_mode else frozenset()  # HELP KEYS
            known = seams.help_topic_words(self.get_help_topics()) | keys
            unknown = [topic for topic in typed if topic.lower() not in known]
            for topic in unknown:  # cqlsh's line, and the topic meant
                near = nearest(topic.upper(), [t.upper() for t in known])
                self.printerr(f"*** No help on {topic}" + (f" (did you mean {near}?)" if near else ""))
            if unknown:
                if len(unknown) == len(typed):
                    return
                parsed = seams.with_help_topics(parsed, [t for t in typed if t not in unknown])
        if not self.repl_mode:
            helper(self, parsed)
        else:
            repl.do_help(self, parsed, helper)
        if phrase is not None:
            return
        # A line an intercept adds to cqlsh's HELP of its word (HELP SELECT is a web address).
        for intercept in commands.intercepts():
            for word, line in intercept.see_also:
                if word in asked:
                    self.stdout.write(line + "\n")

    # ------------------------------------------------ Amazon Keyspaces (cqlsh_ext.keyspaces)

    def do_describe(self, parsed: Parsed) -> None:
        if _major(self.connection_versions["build"]) >= 4:  # the test stock cqlsh makes
            return super().do_describe(parsed)
        # A 3.x server (Amazon Keyspaces reports 3.11.2) has no server-side DESCRIBE: answered from
        # the driver's schema (cqlsh_ext.keyspaces.describe), printed by cqlsh's own printers.
        from cqlsh_ext.keyspaces.describe import KeyspacesDescribeError, describe_request, described

        try:
            kind, rows = described(self.conn, self.current_keyspace,
                                   describe_request(parsed, self.cql_unprotect_name))
        except KeyspacesDescribeError as err:
            self.printerr(str(err))
            return None
        printers = {"keyspaces": self.describe_keyspaces, "list": self.describe_list,
                    "cluster": self.describe_cluster}
        if kind in printers:
            printers[kind](rows)
        else:
            self.describe_element([{"create_statement": text} for text in rows])
        return None

    do_describe.__doc__ = Stock.do_describe.__doc__
    do_desc = do_describe

    def do_copy(self, parsed: Parsed) -> None:
        if not self.settings.keyspaces.active:
            return super().do_copy(parsed)
        from cqlsh_ext.keyspaces import wiring

        # COPY FROM writes at LOCAL_QUORUM on Keyspaces: the shell's level for the command's time.
        level = wiring.copy_consistency(self.settings, parsed.get_binding("dir", "") or "",
                                        self.consistency_level)
        if level is None:
            return super().do_copy(parsed)
        saved, self.consistency_level = self.consistency_level, level
        try:
            return super().do_copy(parsed)
        finally:
            self.consistency_level = saved

    do_copy.__doc__ = Stock.do_copy.__doc__
    do_login.__doc__ = Stock.do_login.__doc__
    do_history.__doc__ = Stock.do_history.__doc__
    do_help.__doc__ = Stock.do_help.__doc__


def _command_method(command: commands.Command) -> Any:
    handler = command.handler

    def do_command(self: Any, parsed: Parsed) -> None:
        if handler is None:  # commands.declared_command: _handle_statement read it before cqlsh
            raise RuntimeError(f"{command.word.upper()} is read from its feature's declaration, "
                               "never by cqlsh's grammar")
        handler(self, parsed)

    do_command.__name__ = f"do_{command.word}"
    do_command.__doc__ = command.help  # HELP <word>
    return do_command


_registered: list[bool] = []


def register_commands() -> None:
    """Teach cqlsh's grammar and completion every declared command; must run before cqlshmain.main()
    builds its rule set. Once per process: the rule set is cqlsh's module-level singleton."""
    if _registered:
        return
    declared = commands.commands()
    # An intercept's rule completes only (its statement never reaches cqlsh's parser).
    completing = [i for i in commands.intercepts() if i.rule]
    seams.register_special_commands(
        "".join(c.grammar for c in declared) + "".join(i.grammar for i in completing),
        tuple(c.word for c in declared if c.ends_with_newline),
        (*(c.rule for c in declared), *(i.rule for i in completing)),
    )
    for completers in [c.completers for c in declared] + [i.completers for i in completing]:
        for (rule, symbol), complete in completers:
            seams.register_completer(rule, symbol, complete)
    _registered.append(True)


def shell_class(settings: Settings) -> type[ExtShell]:
    """The Shell class of one run: its settings, a `do_<word>` per declared command and one per
    HELP topic the commands and intercepts declare (a topic, no command: seams.help_topic)."""
    methods: dict[str, Any] = {"settings": settings}
    for command in commands.commands():
        methods[f"do_{command.word}"] = _command_method(command)
    for topic, text in commands.help_topics():
        if " " not in topic:  # one of several words is asked for as HELP <words>: do_help
            methods[f"do_{topic}"] = seams.help_topic(topic, text)
    return type("ExtShell", (ExtShell,), methods)
