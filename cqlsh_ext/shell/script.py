"""The shell's loop of scripts: cqlsh's cmdloop (-e, -f, stdin, SOURCE, --classic), each line
measured (shell.statement_bounds.StatementSoFar) before anything lexes it (`run_script`), and
the one line for input that is not text (`unreadable_input`: nothing from there on runs). The
interactive shell's loop is cqlsh_ext.repl's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.shell.statement_bounds import LEX, REFUSED, WAIT, StatementSoFar

if TYPE_CHECKING:
    import io
    from contextlib import AbstractContextManager

__all__ = ["ScriptLoop", "nothing_to_run", "run_script", "unreadable_input"]

#: What a line of nothing to run holds (space, `;`).
_NOTHING = " \t\r\n\f\v;"


def nothing_to_run(line: str) -> bool:
    """Whether a line holds nothing to run (space, `;`): with nothing before it, the scripts' loop
    passes it at once (a million lines of `;`)."""
    return not line.strip(_NOTHING)


def unreadable_input(err: UnicodeDecodeError, lineno: int) -> str:
    """The line for input that is not text in its encoding (a binary file given to -f), at cqlsh's
    line number `lineno`: the shell drops the statement read so far and reads nothing from there
    on."""
    read = lineno - 1  # cqlsh counts from 1, and a line once it is read
    return (f"not {err.encoding} text (byte 0x{err.object[err.start]:02x}: {err.reason}) after "
            f"{read:,} line{'' if read == 1 else 's'} read: nothing from there on is run")


def _read_linearly(loop: ScriptLoop) -> None:
    """cqlsh opens `-f`'s file and SOURCE's with codecs.open, whose readline looks for the line's end
    again in all it has read of the line at every chunk of it: a line of 8 MB cost 10 s of CPU
    before the shell could measure and refuse it, 24 MB 88 s. The same file read as stdin is (io:
    each character once), its lines split where io splits them untranslated (\n, \r, \r\n)."""
    import codecs

    stdin = getattr(loop, "stdin", None)  # (cqlsh's Shell's: where its get_input_line reads)
    if isinstance(stdin, codecs.StreamReaderWriter):
        import io

        # (stdin.stream: codecs.open's binary file; the wrapper reads it from where it is)
        setattr(loop, "stdin", io.TextIOWrapper(stdin.stream, newline="",  # noqa: B010 (not a Protocol member)
                                                encoding=getattr(stdin, "encoding", None) or "utf-8"))


class ScriptLoop(Protocol):
    """What the scripts' loop (`run_script`) uses of the shell: cqlsh's reading of a script's lines
    (its statement so far, its prompts, onecmd, its end of input) and the statement's bounds."""

    statement_reading: StatementSoFar
    statement: io.StringIO
    stop: bool
    single_statement: str | None
    prompt: str

    def prepare_loop(self) -> AbstractContextManager[Any]: ...
    def get_input_line(self, prompt: str = "") -> str: ...
    def onecmd(self, statementtext: str) -> Any: ...
    def reset_statement(self) -> None: ...
    def set_continue_prompt(self) -> None: ...
    def handle_eof(self) -> None: ...
    def printerr(self, text: Any, *args: Any, **kwargs: Any) -> None: ...


def run_script(loop: ScriptLoop, cql_errors: tuple[type[BaseException], ...]) -> None:
    """cqlsh's cmdloop (upstream.seams.COPIED pins it: -e, -f, stdin, SOURCE, --classic), each line
    measured (StatementSoFar) before anything lexes it. cqlsh's loop hands onecmd all of the
    statement read so far at every line, and its lexer reads it all again (an unclosed comment of
    100,000 lines took 123 s): here onecmd is handed it only where it may end, a statement past a
    bound is refused at the line that passes it, and one of nothing to run (a lone `;`) is not sent.
    `cql_errors`: what cqlsh's loop says in one line (cqlshmain.CQL_ERRORS)."""
    reading = loop.statement_reading
    _read_linearly(loop)
    with loop.prepare_loop():
        while not loop.stop:
            try:
                if loop.single_statement:
                    line = loop.single_statement
                    loop.stop = True
                else:
                    line = loop.get_input_line(loop.prompt)
                if nothing_to_run(line) and not reading.dropping and not loop.statement.tell():
                    continue  # nothing to run, nothing before it (a million lines of `;`: at once)
                way, said = reading.line(line)
                if said is not None:
                    loop.printerr(said)
                if way == LEX:
                    loop.statement.write(line)
                    if loop.onecmd(loop.statement.getvalue()):
                        loop.reset_statement()
                elif way == WAIT:
                    loop.statement.write(line)
                    loop.set_continue_prompt()
                elif way == REFUSED or loop.statement.tell():
                    loop.reset_statement()
                else:  # nothing read before it: nothing to reset
                    reading.forget()
            except EOFError:
                loop.handle_eof()
            except cql_errors as cqlerr:
                loop.printerr(getattr(cqlerr, "message", str(cqlerr)))
            except KeyboardInterrupt:
                loop.reset_statement()
                print("")
