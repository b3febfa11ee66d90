"""Entry point: `cqlsh-ext [cqlsh options] [-d CODEC] [host [port]]` and its subcommands.

Our own flags are taken off the command line first; everything else goes to cqlsh's own
`main()` unchanged, so every cqlsh flag and cqlshrc setting keeps its meaning.
"""

import io
import sys
import time

from cqlsh_ext import __version__
from cqlsh_ext.common import gc_pause

#: typing's own flag, without importing typing (nor argparse): a warm session's call
#: (agent.session_client) starts with this module's imports alone. The annotations naming what it
#: guards are quoted: no `from __future__ import annotations`, a module to load at every call.
TYPE_CHECKING = False
# The rest of cqlsh-ext is imported inside the functions, after run() paused the collector: at
# start-up it scans every object the imports build, again and again (common.gc_pause).
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from cqlsh_ext.agent.door import AgentRun
    from cqlsh_ext.settings import Settings

#: When the process started, as near as it knows: --stats' elapsed time counts from here.
STARTED = time.monotonic()
#: `cqlsh-ext <word> ...` runs a tool instead of the shell.
SUBCOMMANDS = {
    "demo": "cqlsh_ext.demo.cli",
    "skill": "cqlsh_ext.agent.skill",
    "docs": "cqlsh_ext.user_docs.cli",
    "inspect": "cqlsh_ext.insight.cli",
    "journal": "cqlsh_ext.writing.cli",
    "sample-config": "cqlsh_ext.settings.sample_config",
    "spark": "cqlsh_ext.spark.cli",
}
#: `cqlsh-ext <word> ...` that runs the shell on one statement: the module's `shell_args(args)` gives
#: the shell's command line (the connection options given and `-e STATEMENT`).
STATEMENT_SUBCOMMANDS = {
    "trial": "cqlsh_ext.insight.trial.cli",
}
#: `cqlsh-ext <word> ...` that serves statements instead of reading them: the module's
#: `prepare(args)` gives a Serving (the shell's command line, the loop that serves on the shell:
#: its `server`, cqlsh_ext.shell.ext_shell.ServingLoop, and `run(main)`), or an exit code.
SERVING_SUBCOMMANDS = {
    "mcp": "cqlsh_ext.mcp_server.cli",
}


def _ext_parser() -> "argparse.ArgumentParser":
    import argparse

    from cqlsh_ext.keyspaces import options as keyspaces_options
    from cqlsh_ext.settings import add_flags

    # allow_abbrev=False: '--de' must stay cqlsh's '--debug', never a prefix of ours.
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, prog="cqlsh-ext")
    # Every flag of ours is a Key in cqlsh_ext.settings.SETTINGS: its dest is the Key's name.
    add_flags(parser, "display")
    keyspaces_options.add_arguments(parser)  # --keyspaces, --sigv4, --region, ... (cqlsh_ext.keyspaces)
    add_flags(parser, "agent")  # --read-only, --timeout, --stats, ... (cqlsh_ext.agent)
    return parser


def _shell_args(settings: "Settings", cqlshmain: "Any", cqlsh_args: list[str]) -> list[str]:
    """cqlsh's arguments (_connection_args); with --catalog, a run of no statement (`-e ';'`: the
    shell writes the catalog instead, never reading standard input nor prompting)."""
    cqlsh_args = _connection_args(settings, cqlshmain, cqlsh_args)
    if settings.agent.catalog is not None:
        cqlsh_args = [*cqlsh_args, "-e", ";"]
    return cqlsh_args


def _connection_args(settings: "Settings", cqlshmain: "Any", cqlsh_args: list[str]) -> list[str]:
    """cqlsh's arguments, with the host and port --keyspaces implies; raises KeyspacesError."""
    from cqlsh_ext.keyspaces import options as keyspaces_options

    opts = settings.keyspaces
    if not opts.active:
        return cqlsh_args
    cqlsh_args = opts.give_back + cqlsh_args  # `--keyspaces 127.0.0.1`: a host, not a region
    positional = cqlshmain.parser.parse_known_args(cqlsh_args)[1]
    return keyspaces_options.connection_args(opts, cqlsh_args, positional)


def help_text(cqlshmain: "Any | None" = None, exit_codes: bool = True) -> str:
    """--help: one usage text, cqlsh's options (its own help, under our name) followed by ours, the
    tools and the exit codes (also the man page's, tools/man_page.py, whose EXIT STATUS section
    lists the exit codes: `exit_codes` False leaves them out)."""
    from cqlsh_ext.upstream import seams

    cqlshmain = cqlshmain or seams.import_cqlshmain(None)
    ext_parser = _ext_parser()
    cqlsh_parser = cqlshmain.parser
    cqlsh_parser.prog = "cqlsh-ext"
    cqlsh_parser.usage = "%(prog)s [options] [host [port]]"  # cqlsh's reads "Usage: ..." after "usage:"
    cqlsh_parser.description = ("cqlsh, extended: every cqlsh option and cqlshrc setting, plus decoded "
                                "blobs, compression insight and Amazon Keyspaces.")
    epilog = cqlsh_parser.epilog
    cqlsh_parser.epilog = None
    try:
        parts = [cqlsh_parser.format_help().rstrip(), ""]
    finally:
        cqlsh_parser.epilog = epilog
    # Without its usage: ours wraps onto as many lines as the width asks, none of which belong here.
    import argparse

    ext_parser.usage = argparse.SUPPRESS
    # The tools and cqlsh's closing paragraph filled to the width argparse fills its own to.
    import shutil
    import textwrap

    width = shutil.get_terminal_size().columns - 2
    parts += [ext_parser.format_help().strip(), "", "tools:"]
    for tool, does in TOOLS:
        # break_on_hyphens=False: `cqlsh-ext docs edit` is a command to copy, never cut at its hyphen
        parts += textwrap.wrap(does, width, initial_indent=f"  {tool:<32}", subsequent_indent=" " * 34,
                               break_on_hyphens=False, break_long_words=False)
    from cqlsh_ext.common.exits import table_lines

    if exit_codes:
        parts += ["", "exit codes (cqlsh-ext docs agents):", *table_lines(width)]
    if epilog:  # cqlsh's source breaks it after a few words
        said = epilog % vars(cqlshmain) if "%(" in epilog else epilog
        parts += ["", textwrap.fill(" ".join(said.split()), width, break_on_hyphens=False,
                                    break_long_words=False)]
    return "\n".join(parts)


#: The tools --help lists, each with what it does.
TOOLS = (("cqlsh-ext demo load [--help]", "create and fill a demo keyspace"),
         ("cqlsh-ext docs [TOPIC]", "the guides: every statement in depth"),
         ("cqlsh-ext inspect FILE|-|0x...", "describe one stored value, no server needed"),
         ("cqlsh-ext journal new-key", "a new journal key, made on purpose (cqlsh-ext docs edit)"),
         ("cqlsh-ext mcp [--help]", "an MCP server for AI assistants, read-only (cqlsh-ext docs mcp)"),
         ("cqlsh-ext sample-config", "print a commented [cqlsh_ext] cqlshrc section"),
         ("cqlsh-ext skill [DIR]", "write a skill (SKILL.md) for assistants that run this version "
                                   "(cqlsh-ext docs agents)"),
         ("cqlsh-ext spark [--help]", "the same statements on Apache Spark (cqlsh-ext docs spark)"),
         ("cqlsh-ext trial PATH --into KS", "COMPRESSION TRIAL on values from files (its --help)"))


def _unknown_option(cqlsh_parser: "argparse.ArgumentParser", ext_parser: "argparse.ArgumentParser",
                    cqlsh_args: list[str]) -> str | None:
    """The one line for an option neither cqlsh nor cqlsh-ext knows (`--verison`), or None. cqlsh
    reads such a word as its host name ('the host name in --verison:9042 does not resolve')."""
    from cqlsh_ext.common.text import nearest

    left = cqlsh_parser.parse_known_args(cqlsh_args)[1]
    typed = next((word for word in left if word.startswith("-") and word != "-"), None)
    if typed is None:
        return None
    # argparse's own list of each parser's option strings (cqlsh's parser is an ArgumentParser too).
    known = [flag for parser in (cqlsh_parser, ext_parser) for action in parser._actions
             for flag in action.option_strings]
    near = nearest(typed.split("=", 1)[0], known)
    meant = f" (did you mean {near}?)" if near else ""
    return f"unknown option {typed}{meant}: cqlsh-ext --help lists them"


def mistyped_option(args: list[str]) -> str | None:
    """The one line for an option of the shell's command line `args` that neither cqlsh nor
    cqlsh-ext takes (_unknown_option), or None: bin/demo asks before it starts a server for it."""
    from cqlsh_ext.upstream import seams

    if args and any(args[0] in tools for tools in (SUBCOMMANDS, STATEMENT_SUBCOMMANDS, SERVING_SUBCOMMANDS)):
        return None  # a tool's own options, which it checks itself
    ext_parser = _ext_parser()
    cqlsh_args = ext_parser.parse_known_args(args)[1]
    return _unknown_option(seams.import_cqlshmain(seams.cqlshrc_arg(cqlsh_args)).parser, ext_parser,
                           cqlsh_args)


def _credentials_problem(cqlshmain: "Any", cqlsh_args: list[str]) -> str | None:
    """The one line for the credentials file cqlsh would read when it cannot: a `--credentials FILE`
    that is not there (the API's words: cqlsh would read no file, and the server's refusal would
    never say the file named is missing), or one that is no ini file (its line named by its number,
    never by its text, settings.read_cqlshrc: the line may be the password's; cqlsh's configparser
    would raise with the line in its message, an internal error whose crash report held it), read
    whether or not -u and -p are given (cqlsh reads it for its auth provider's settings too). None:
    no such file there, or one not the user's own alone (cqlsh ignores it)."""
    import os

    from cqlsh_ext.settings import SettingError, read_cqlshrc
    from cqlsh_ext.upstream import seams

    options = cqlshmain.parser.parse_known_args(cqlsh_args)[0]
    named = options.credentials
    flag = "--credentials: " if named is not None else ""
    if named is not None and not os.path.isfile(os.path.expanduser(named)):
        return f"--credentials: credentials file {os.path.expanduser(named)}: no such file"
    if named is None:  # cqlsh's default: cqlshrc's [authentication] credentials, else beside cqlshrc
        try:
            named = read_cqlshrc(cqlshmain.CONFIG_FILE).get("authentication", "credentials", fallback=None)
        except SettingError:
            return None  # (the settings say what is wrong with cqlshrc)
    path = os.path.expanduser(named or os.path.join(cqlshmain.CQL_DIR, "credentials"))
    if not os.path.isfile(path) or not seams.credentials_file_secure(path):
        return None
    try:
        read_cqlshrc(path)
    except SettingError as err:
        return f"{flag}credentials file {err}"
    return None


def _unknown_encoding(cqlshmain: "Any", cqlsh_args: list[str]) -> str | None:
    """The one line for an --encoding Python has no codec of, or None: cqlsh looks it up only
    once connected, and its error was said as a connection's ('Connection error: ... unknown
    encoding')."""
    from cqlsh_ext.settings import SettingError
    from cqlsh_ext.settings.values import parse_encoding

    named = cqlshmain.parser.parse_known_args(cqlsh_args)[0].encoding
    try:
        if named is not None:
            parse_encoding(named)
    except SettingError as err:
        return f"--encoding: {err}"
    return None


def _print_versions(cqlshmain: "Any") -> None:
    """--version: wrapped at words on a terminal (the core's list of formats is one long line); a
    pipe gets each line whole, as scripts read it."""
    import cassandra

    from cqlsh_ext.common.text import message, screen_width
    from cqlsh_ext.payload.running import version_lines

    # (what the core reads too: it is loaded for this, --version is no shell start-up)
    versions = (f"cqlsh-ext {__version__} (cqlsh {cqlshmain.version}, "
                f"cassandra-driver {cassandra.__version__})\n{version_lines()}")
    print(message(versions + "".join(f"\n{line}" for line in outside_lines()), screen_width(sys.stdout)))


def outside_lines() -> list[str]:
    """The formats from outside, one line each: a plugin's name, distribution and version, a
    command's line (--version)."""
    from cqlsh_ext.payload.formats._outside import origins

    return [f"format {origin}" for origin in origins()]


def _stock_timestamps(settings: "Settings") -> None:
    """With decompression off (-d none) the shell prints what stock cqlsh prints: its timestamps
    read as cqlsh reads them (upstream.time_values.read_as_stock)."""
    from cqlsh_ext.settings import NONE
    from cqlsh_ext.upstream.time_values import read_as_stock

    read_as_stock(settings.display.mode == NONE)


def main(argv: list[str] | None = None) -> int:
    from cqlsh_ext.output import OutputClosed

    try:
        return _main(argv)
    except (BrokenPipeError, OutputClosed):
        # `cqlsh-ext ... | head`: the reader is gone; end quietly, as cat does. Python would
        # report the pipe again when it flushes stdout at exit, so stdout goes to /dev/null.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by the pipe


def run() -> None:
    """The `cqlsh-ext` command: main() and its exit status, from the process's last steps on a
    Ctrl-C ends it at once, never with a traceback from Python's shutdown (ends_at_once)."""
    if any(word == "--session" or word.startswith(("--session=", "--session-status"))
           for word in sys.argv[1:]):
        from cqlsh_ext.agent import session_client  # the standard library only: a warm call starts at once

        sys.exit(session_client.main(sys.argv[1:]))
    gc_pause.pause()  # before the imports: see gc_pause
    from cqlsh_ext.common.interrupt import ends_at_once

    code = _exit_status(main)
    ends_at_once()
    sys.exit(code)


def _exit_status(step: "Callable[[], int]") -> str | int | None:
    """What `step` ends the process with, as sys.exit takes it."""
    try:
        return step()
    except SystemExit as done:  # cqlsh's own exits (sys.exit(2), 'Connection error: ...')
        return done.code
    except KeyboardInterrupt:  # before the shell hears Ctrl-C itself (or after)
        return 130
    except Exception as err:  # a bug outside any statement: said in one line, its crash report written
        return _internal_error(err)


def _internal_error(err: Exception) -> int:
    from cqlsh_ext.agent import crash
    from cqlsh_ext.common.exits import INTERNAL
    from cqlsh_ext.common.text import say

    say(f"cqlsh-ext: {crash.line(err, crash.write(err, 'the start or the end of the run'))}")
    return INTERNAL.code


class _NoOutput(io.TextIOBase):
    """Standard output of a process started without one (`cqlsh-ext ... >&-`): its first write
    ends the run as a reader gone does (`| head`: main(), exit code 141); a run that prints
    nothing (a write) runs as ever."""

    def write(self, text: str) -> int:
        import errno

        raise BrokenPipeError(errno.EBADF, "standard output is closed")

    def fileno(self) -> int:
        return 1  # (where main() puts /dev/null once the run ended)

    def isatty(self) -> bool:
        return False


def _writable_streams() -> None:
    """stdout and stderr that every print can write to."""
    if sys.stdout is None:  # started without one (`>&-`): Python leaves None, which every print fails on
        sys.stdout = _NoOutput()
    for stream in (sys.stdout, sys.stderr):
        # A decoded document's string may hold a lone surrogate (its "\\ud800" escape: valid JSON,
        # no Unicode character), which UTF-8 cannot write: printed as that escape, exactly what
        # the document holds, where strict encoding failed the whole answer. (A CQL text value
        # never holds one: what stock cqlsh prints is unchanged.)
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _main(argv: list[str] | None) -> int:
    from cqlsh_ext.common.private_process import make_private

    make_private()  # before anything runs an outside piece: none reads this process's environment
    args = list(sys.argv[1:] if argv is None else argv)
    _writable_streams()
    if args and args[0] in SUBCOMMANDS:
        from importlib import import_module

        gc_pause.resume()  # a tool's run, no shell start-up to hurry
        return import_module(SUBCOMMANDS[args[0]]).main(args[1:])
    if args and args[0] in STATEMENT_SUBCOMMANDS:
        from importlib import import_module

        args = import_module(STATEMENT_SUBCOMMANDS[args[0]]).shell_args(args[1:])
    serving = None
    if args and args[0] in SERVING_SUBCOMMANDS:
        from importlib import import_module

        serving = import_module(SERVING_SUBCOMMANDS[args[0]]).prepare(args[1:])
        if isinstance(serving, int):
            return serving
        args = serving.shell_args

    from cqlsh_ext.upstream import seams

    gc_pause.pause()  # until the shell is ready (main() called without run()): see gc_pause
    ext_parser = _ext_parser()
    ext, cqlsh_args = ext_parser.parse_known_args(args)

    cqlshmain = seams.import_cqlshmain(seams.cqlshrc_arg(cqlsh_args))
    if "-h" in cqlsh_args or "--help" in cqlsh_args:
        print(help_text(cqlshmain))
        return 0
    if "-v" in cqlsh_args or "--version" in cqlsh_args:
        _print_versions(cqlshmain)
        return 0
    if ext.spec:
        from cqlsh_ext.agent.cli_spec import spec_text

        print(spec_text(cqlshmain.parser, ext_parser, TOOLS))
        return 0
    mistyped = (_unknown_option(cqlshmain.parser, ext_parser, cqlsh_args)
                or _credentials_problem(cqlshmain, cqlsh_args) or _unknown_encoding(cqlshmain, cqlsh_args))
    if mistyped is not None:
        return _usage_error(mistyped, ext)
    if ext.serve is not None:
        return _serve(ext, args, cqlshmain, ext_parser)
    from cqlsh_ext.agent.door import AgentRun
    from cqlsh_ext.common.exits import RunOutcome
    from cqlsh_ext.keyspaces.errors import KeyspacesError
    from cqlsh_ext.settings import SettingError, load, load_dictionaries

    try:
        ext.debug = "--debug" in cqlsh_args
        settings = load(ext, cqlshmain.CONFIG_FILE)
        load_dictionaries(settings)
        _stock_timestamps(settings)
        cqlsh_args = _shell_args(settings, cqlshmain, cqlsh_args)
        agent = AgentRun.of(settings, RunOutcome(), STARTED) if serving is None else None
    except (SettingError, KeyspacesError) as err:
        return _usage_error(str(err), ext)

    from cqlsh_ext.shell import ext_shell
    from cqlsh_ext.shell.completion import register_grammar

    register_grammar()
    shell_class = ext_shell.shell_class(settings, agent, serving.server if serving is not None else None)
    seams.install_shell_class(cqlshmain, shell_class)
    if serving is not None:
        return int(serving.run(lambda: cqlshmain.main(cqlsh_args, "")))
    assert agent is not None
    return _shell_run(cqlshmain, cqlsh_args, agent)


def _serve(ext: "argparse.Namespace", args: list[str], cqlshmain: "Any",
           ext_parser: "argparse.ArgumentParser") -> int:
    """--serve NAME [connection options]: a warm session (agent.session_server)."""
    from cqlsh_ext.agent.session_client import option_value
    from cqlsh_ext.agent.session_server import serve
    from cqlsh_ext.settings import SettingError
    from cqlsh_ext.settings.values import parse_seconds

    _name, session_args = option_value(args, "--serve")
    _idle, session_args = option_value(session_args, "--session-idle")
    try:
        idle = parse_seconds(ext.session_idle) if isinstance(ext.session_idle, str) else ext.session_idle
    except (SettingError, ValueError) as err:
        return _usage_error(f"--session-idle: {err}", ext)
    from cqlsh_ext.shell import (
        ext_shell,  # loaded once, every call's for free (the rest: session_server's preload)
    )

    del ext_shell
    return serve(ext.serve, session_args, cqlshmain, ext_parser, idle, call_in_session)


def call_in_session(args: list[str], refusal: str | None) -> int:
    """One call of a warm session, in the session's process (agent.session_server): run()'s steps
    on `args` (the session's connection options and the call's words), or `refusal` said as a usage
    error; the exit code sys.exit would end a cold run with. (No ends_at_once: the process goes on.)"""
    global STARTED

    gc_pause.pause()
    STARTED = time.monotonic()  # --stats' elapsed time: the call's, not the session's
    sys.argv = [sys.argv[0], *args]
    if refusal is None:
        code = _exit_status(lambda: main(args))
    else:
        code = _exit_status(lambda: _usage_error(refusal, _ext_parser().parse_known_args(args)[0]))
    gc_pause.resume()  # (a call that ended before its shell was ready)
    if isinstance(code, str):  # as sys.exit prints a message and ends with 1
        sys.stderr.write(code + "\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader gone: nothing more reaches it
            pass
    return int(code or 0)


def _shell_run(cqlshmain: "Any", cqlsh_args: list[str], agent: "AgentRun") -> int:
    """cqlsh's main() with the shell of this run; its exit code, the most severe of cqlsh's and what
    the run met (common.exits); --stats' figures written at its end (agent.figures)."""
    code: int = 0
    try:
        cqlshmain.main(cqlsh_args, "")
    except SystemExit as done:  # cqlsh's: 2 (a statement failed), 'Connection error: ...' (1), ...
        if isinstance(done.code, str):
            code = agent.fatal(done.code)
        else:
            code = done.code or 0
    finally:
        agent.flush()
        finish = getattr(sys.stderr, "finish", None)  # output.stderr_lines.JsonLines: its last line
        if finish is not None:
            finish()
    code = agent.outcome.code(code)
    if agent.settings.stats:
        from cqlsh_ext.agent import figures

        figures.write(agent, code)
    return code


def _usage_error(line: str, ext: "argparse.Namespace") -> int:
    """An option or setting refused before connecting, in one line (a JSON object with
    --output-format json); exit code 2."""
    if str(getattr(ext, "output_format", "") or "").strip().lower() == "json":
        from cqlsh_ext.agent.errors import classify

        sys.stderr.write(classify(line, kind="usage").line() + "\n")
    else:
        from cqlsh_ext.common.text import say

        say(f"cqlsh-ext: error: {line}")  # wrapped at words on a terminal, one line in a pipe
    return 2


if __name__ == "__main__":
    run()
