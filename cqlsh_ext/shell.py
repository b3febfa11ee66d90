"""The cqlsh Shell, extended: wiring only.

Each method below hands over to the module that does the work, and with our features off (`-d
none`, table output, `--classic`, no Keyspaces flags) to cqlsh's own method, so stock behaviour
is kept. Where each override attaches to cqlsh is listed in cqlsh_ext.upstream.seams.

- statements and commands of ours: declared once in cqlsh_ext.features, the one registry; the
  shell's door (handle_statement) hands a statement to its declaration (features.shell_statement:
  cqlsh-ext's own features' statements and the packages'), else to the intercepts declared for its
  first word (features.commands), before cqlsh sees it; the commands' `do_<word>` methods, HELP
  (features.help) and grammar come from the declarations too;
- results: cqlsh_ext.output.pipeline (writers, pager, blob cells, auto vertical);
- the interactive loop: cqlsh_ext.repl; cqlsh's loop of scripts, each line measured first, and a
  statement's bounds before cqlsh's lexer and grammar: cqlsh_ext.features.statement_bounds;
- Amazon Keyspaces: cqlsh_ext.keyspaces (its command.py: DESCRIBE and COPY).

cqlsh's main(), SOURCE and LOGIN build the Shell themselves, by the module global name `Shell`:
`shell_class(settings)` makes the class for one run, with the run's settings and commands in it.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from cqlsh_ext.agent.door import AgentDoor, AgentRun
from cqlsh_ext.common import gc_pause
from cqlsh_ext.common.interrupt import wraps_ctrl_c
from cqlsh_ext.common.text import FittedLines, message, screen_width
from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import commands, statement_bounds
from cqlsh_ext.features.statement_bounds import BoundedStatements
from cqlsh_ext.keyspaces.command import KeyspacesCommands
from cqlsh_ext.output import OutputClosed
from cqlsh_ext.output.pipeline import ResultPipeline
from cqlsh_ext.output.shell_results import ShellResults
from cqlsh_ext.repl import passwords
from cqlsh_ext.repl import shellhooks as repl
from cqlsh_ext.repl.passwords import HistoryWithoutPasswords
from cqlsh_ext.settings import Settings
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.upstream.protocol import Parsed

cqlshmain = seams.import_cqlshmain(None)
Stock = seams.stock_shell_class()


def _pager_found(setting: str | None) -> bool:
    from cqlsh_ext.repl.pager import pager_found  # the interactive shell's pager, on first use

    return pager_found(setting)


class ExtShell(AgentDoor, ShellResults, BoundedStatements, HistoryWithoutPasswords, KeyspacesCommands,
               Stock):  # type: ignore[misc,valid-type]  # cqlsh's Shell is untyped
    """cqlsh's Shell with cqlsh-ext's side: a run for programs (agent.door: each statement checked,
    timed and classed by how it ended, errors as JSON), what it prints (output.shell_results), the
    bounds of a statement before cqlsh's lexer (features.statement_bounds), a history without
    passwords (repl.passwords), Amazon Keyspaces' DESCRIBE and COPY (keyspaces.command), and below:
    how it is made and connected, its door for statements, its loops and HELP."""

    #: The run's settings, set on the per-run class by shell_class(); SOURCE/LOGIN sub-shells share it.
    settings: Settings = Settings()
    #: Decided once when the main shell is built (cqlsh_ext.repl.shellhooks.wants_repl).
    repl_mode: bool = False
    #: A loop of our own serves statements instead of a terminal (cqlsh_ext.mcp_server.connection).
    serving: bool = False
    repl_preload: Any = None
    repl_history: Any = None
    repl_session: Any = None
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
        with wiring.connecting(self.settings, args, kwargs, keep=(cqlshmain.VersionNotSupported,),
                               keyspaces=self._keyspaces_read), \
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
        if not self.serving:  # a script's or a program's run (batch), or the interactive shell
            self.results.rows = self.agent.rows  # what each result printed: the run's
            self.agent.begin(not self.repl_mode, self.printerr, lambda: setattr(self, "stop", True))
        if not self.repl_mode:  # the interactive loop resumes it once its prompt is built
            gc_pause.resume()

    def _keyspaces_read(self) -> list[str]:
        """The keyspaces the connection has read (the driver's metadata), while it is being made:
        none before cqlsh's __init__ made it."""
        conn = getattr(self, "conn", None)
        return list(getattr(getattr(conn, "metadata", None), "keyspaces", None) or {})

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
        # The shell's door: a declared statement (features.shell_statement.arrival) is read from its
        # declaration; else the intercepts declared for its first word, in order: one that takes
        # the statement ends it here, a rewrite goes on, rewritten, to the next and to cqlsh; any
        # other statement goes to cqlsh as written. Each is handed a Lexed: the statement's text,
        # lexed once when first read (cqlsh_ext.cql.lexer).
        from cqlsh_ext.features.shell_statement import arrival

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
        if self.agent.refused(lexed, feature, self.current_keyspace, self.agent_tables):
            return True  # --read-only's refusal, said (agent.read_only)
        if door.feature is not None:
            self._run_feature(*door.feature, lexed)
            return True
        statement: Lexed | None = lexed
        rewritten: commands.Rewrite | None = None
        for intercept in commands.intercepts_for(first):
            statement = statement or Lexed(seams.statement_text(tokens, srcstr))
            outcome = intercept.handler(self, statement) if intercept.handler is not None else False
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
        """A declared feature's statement (features.shell_statement: a package's, or one cqlsh-ext
        declares with its feature), run and printed on the shell's output."""
        from cqlsh_ext.features import shell_statement
        from cqlsh_ext.reading.context import shell_context

        shell_statement.run(shell_context(self), feature, skip, statement, self.query_out,
                            self.results.screen_width())

    def handle_parse_error(self, cmdword: str, tokens: Any, parsed: Parsed, srcstr: str) -> Any:
        # A word chosen from a list and mistyped is told in one line, the nearest and the list;
        # our commands say what was expected, with an example, where cqlsh says only 'Improper'.
        from cqlsh_ext.features.help import mistyped_line, usage_of

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

    def cmdloop(self, intro: Any = None) -> None:
        # prompt_toolkit for a person at a terminal; cqlsh's own loop, each line measured first
        # (statement_bounds.run_script), for -e, -f, pipes, SOURCE and --classic.
        # Imported here so scripts never load prompt_toolkit.
        if self.repl_mode:
            from cqlsh_ext.repl.app import run

            run(self)
        else:
            statement_bounds.run_script(self, cqlshmain.CQL_ERRORS)
        if self.owns_connection:
            # The loop over (-e, -f, a pipe's end): the connection closed now, as cqlsh's EXIT
            # closes it. Left to the driver's exit hook, it would close after Python has stopped
            # the thread pools, and a schema refresh the driver scheduled after a DDL statement
            # would end in a traceback. A Ctrl-C from here on ends the process at once.
            from cqlsh_ext.common.interrupt import ends_at_once

            ends_at_once()
            self.conn.shutdown()

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
        from cqlsh_ext.features.help import help_answer

        keys = frozenset(repl.KEY_TOPICS) if self.repl_mode else frozenset()  # HELP KEYS
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
        else:
            helper(self, parsed)

    do_login.__doc__ = Stock.do_login.__doc__
    do_history.__doc__ = Stock.do_history.__doc__
    do_help.__doc__ = Stock.do_help.__doc__


def register_commands() -> None:
    """Teach cqlsh's grammar every declared command and statement
    (features.completion_grammar.register_grammar); must run before cqlshmain.main() builds its
    rule set."""
    from cqlsh_ext.features.completion_grammar import register_grammar

    register_grammar()


def shell_class(settings: Settings, agent: AgentRun | None = None) -> type[ExtShell]:
    """The Shell class of one run: its settings, its side for programs (agent.door; None: one that
    does nothing, a server's), and the declarations' methods (features.help: a `do_<word>` per
    command, one per HELP topic, their texts read when HELP asks)."""
    from cqlsh_ext.features.help import shell_methods

    return type("ExtShell", (ExtShell,), {"settings": settings, "agent": agent or AgentRun(),
                                          **shell_methods()})
