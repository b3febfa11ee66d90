"""Running an export: the SELECT's typed answer, read as the shell reads a payload query (the one
reading: reading.select), rendered into a file instead of printed (render's file renderers).

Ctrl-C, one rule from the first page to the file taking its name (common.interrupt.CtrlC): the
first press ends the reading at a page boundary, or, once everything is read, lets the writing go
on; either way the file is finished with the rows read, takes its name and the closing line says
so. A second press, while reading or writing, leaves no file. On a terminal a status line says
when the file is being written (for one row group, that is where the decoding happens). An error
while writing (a full disk, an unwritable file) or a scan stopped by an error leave no file
either: the temporary file is removed and one line says why.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.export.errors import ExportError
from cqlsh_ext.export.parse import LABEL, ExportStatement, named_format

if TYPE_CHECKING:
    from cqlsh_ext.export.target import PrivateFile
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget

#: Rows per page handed from the reading to the file (the server's pages, when it returns the
#: answer's rows one for one, are of FETCH_SIZE rows).
PAGE_SIZE = 5000
FETCH_SIZE = 5000


@dataclass(frozen=True)
class Exported:
    """A file written: its rows, its closing line (what the shell prints), and whether the reading
    was stopped before its end (the file holds the rows read before)."""

    rows: int
    line: str
    interrupted: bool


def export(ctx: ReadContext, statement: ExportStatement,
           private: PrivateFile | None = None) -> Exported | None:
    """The export of `statement` in `ctx`: the file written, or None when none was (what went wrong
    is one line: ctx.error). The caller says its closing line (the shell prints it). `private`: a
    file written for someone else (`cqlsh-ext mcp`): 0600, and stopped at its cap (export.target)."""
    from cqlsh_ext.common.kept_out import kept_out
    from cqlsh_ext.cql.errors import QueryError

    try:
        with kept_out():  # a file written: no DataFrame library, nor numpy, is of use (common.kept_out)
            return _export(ctx, statement, private)
    except (ExportError, QueryError) as err:
        ctx.error(f"{LABEL}: {err}")
        return None


def _plan(ctx: ReadContext, statement: ExportStatement) -> tuple[Any, TableTarget]:
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.reading.resolve import statement_table

    named, target = statement_table(ctx.cluster, ctx.keyspace, statement.query)
    if named is None:
        raise ExportError("COPY ( ... ) takes a SELECT ... FROM [keyspace.]table")
    if target is None:
        keyspace = named[0] or ctx.keyspace
        where = f"{named[0]}.{named[1]}" if named[0] else named[1]
        hint = "" if keyspace else " (no keyspace: USE one or name it)"
        raise ExportError(f"unknown table {where}{hint}")
    plan = parse(statement.query, target.schema, plain=True)
    if plan is None:
        raise ExportError("COPY ( ... ) takes a SELECT ... FROM [keyspace.]table")
    return plan, target


def _export(ctx: ReadContext, statement: ExportStatement, private: PrivateFile | None) -> Exported | None:
    from cqlsh_ext.export.target import ExportFile
    from cqlsh_ext.reading.select import blobs_on_core, read_select

    fmt = named_format(statement.fmt)
    if statement.typed:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            from cqlsh_ext.common.install import install_hint

            needs = f"a {fmt.title} file needs" if fmt.typed else "SAMPLE_ROWS and SCHEMA need"
            raise ExportError(f"{needs} pyarrow: {install_hint(fmt.extra or 'parquet')}") from None
    plan, table = _plan(ctx, statement)
    # An unwritable place is said before reading.
    target = ExportFile(statement.path, statement.overwrite, private)
    try:
        # On the native core the blobs come as stored: the file's renderer decodes them a page at
        # a time, as columns. Without it, the views the reading makes once are what it writes.
        # A file of text writes a text's payload from its text: no JSON tree is built for it;
        # JSON Lines writes a JSON text minified from the whitespace runs its check notes.
        answer = read_select(ctx, plan, table, PAGE_SIZE, FETCH_SIZE, stored_blobs=blobs_on_core(ctx, table),
                             text_trees=statement.typed,
                             text_gaps=statement.fmt == "jsonl" and not statement.typed)
    except BaseException:
        target.discard()
        raise
    if answer is None:  # refused or declined: said
        target.discard()
        return None
    try:
        sink = _sink(ctx, statement, target, answer, table)
    except BaseException:
        answer.close()
        target.discard()
        raise
    return _write(ctx, statement, answer, sink, target)


def _sink(ctx: ReadContext, statement: ExportStatement, target: Any, answer: Any, table: TableTarget) -> Any:
    """The file's renderer for the answer: its format's writer (common.file_formats)."""
    from cqlsh_ext.common.file_formats import imported

    settings = ctx.display
    if statement.raw is not None:
        settings = dataclasses.replace(settings, raw_blobs=statement.raw)
    places = [table.place(name) for name in answer.names]
    try:  # the types given and the sample's size, said before anything is written
        answer.typed_by(statement.sample_rows, statement.schema)
    except ValueError as err:
        raise ExportError(str(err)) from None
    return imported(named_format(statement.fmt).writer)(target, answer, settings, places, statement)


def _write(ctx: ReadContext, statement: ExportStatement, answer: Any, sink: Any,
           target: Any) -> Exported | None:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.common.long_int import LongIntegerError
    from cqlsh_ext.export.target import os_error

    rows = 0
    reading = answer.notes
    try:
        # A scan installs its own CtrlC while it reads (the first press stops it: reading.interrupted);
        # this one takes the presses of a reading without one (the shell's own paged result), and
        # is in place again when a scan's second press raises.
        with CtrlC() as reading_keys:
            try:
                for batch in answer:
                    sink.write(batch)
                    rows += len(batch)
                    if reading_keys.pressed:
                        break
            finally:
                answer.close()
        if reading.error:
            raise ExportError(f"the scan stopped: {reading.error}; nothing written")
        summary, writing_pressed = _finish(ctx, statement, sink, target, rows,
                                           reading_keys.pressed or reading.interrupted)
    except KeyboardInterrupt:  # a second Ctrl-C, while reading or writing
        sink.abort()
        target.discard()
        ctx.error(f"{LABEL}: interrupted (Ctrl-C twice) before {statement.path} was finished: "
                       "nothing written")
        return None
    except OSError as err:
        sink.abort()
        target.discard()
        ctx.error(f"{LABEL}: writing {statement.path} failed: {os_error(err)}; nothing written")
        return None
    except LongIntegerError as err:  # a stored varint the file cannot hold exactly
        sink.abort()
        target.discard()
        ctx.error(f"{LABEL}: a value read is {err}; nothing written to {statement.path}")
        return None
    except BaseException:
        sink.abort()
        target.discard()
        raise
    interrupted = reading_keys.pressed or reading.interrupted
    rows, line = closing_line(statement, reading, summary, sink, interrupted, writing_pressed)
    return Exported(rows, line, bool(interrupted or writing_pressed))


def _finish(ctx: ReadContext, statement: ExportStatement, sink: Any, target: Any, rows: int,
            pressed: bool) -> tuple[Any, bool]:
    """Write what the sink holds and give the file its name: (the sink's summary, whether a first
    Ctrl-C came while it did). `pressed`: the reading took a first Ctrl-C, so the next one is the
    second and raises KeyboardInterrupt. "writing ..." shows on a terminal meanwhile."""
    import os

    from cqlsh_ext.common.interrupt import CtrlC, heard_while
    from cqlsh_ext.common.text import message, screen_width

    status = ctx.progress(LABEL, True, None)
    name = os.path.basename(statement.path)  # the whole path is the closing line's
    notice = "\r\x1b[K" + message(f"Ctrl-C: finishing {name} with the rows read; Ctrl-C again discards it",
                                   screen_width(sys.stderr)) + "\n"

    def first_press() -> None:
        # In the signal handler, so one unbuffered write of the descriptor and nothing else: no
        # lock of sys.stderr's is taken, whatever the interrupted code was doing.
        if status is not None:
            os.write(status.out.fileno(), notice.encode())

    with CtrlC(on_first=first_press) as writing_keys:
        if pressed:
            writing_keys.stop.set()
        if status is not None:
            status.ctrl_c = ("(Ctrl-C again: discard it)",) if pressed else ("(Ctrl-C twice: discard it)",)
            status.step(f"writing {name}, {rows:,} rows")  # a status line is one row at most
        try:
            summary = heard_while(sink.finish)  # a press heard while the last row group is written
            target.commit()
        finally:
            if status is not None:
                status.close()
        return summary, writing_keys.pressed and not pressed


def closing_line(statement: ExportStatement, reading: Any, summary: Any, sink: Any,
                 interrupted: bool, writing_pressed: bool = False) -> tuple[int, str]:
    """The rows written, and the line that says so (and what else the file's writing met)."""
    from cqlsh_ext.common.text import plural
    from cqlsh_ext.render.closing import closing_parts

    fmt = named_format(statement.fmt)
    # A writer's summary counts the rows when it has one (Parquet's, a typed file's), else the sink.
    rows = getattr(summary, "rows", None)
    rows = sink.rows if rows is None else rows
    how = fmt.title
    details = getattr(sink, "details", None)  # what the writer says of the file: Parquet's codec, row groups
    if details is not None:
        how += ", " + details(summary)
    elif statement.typed:
        how += ", the Parquet file's typed columns"
    if fmt.name == "jsonl" and statement.path.lower().endswith(".json"):
        how += ": one object per line, not an array"  # what a .json name does not say
    sections = [f"{plural(rows, 'row')} written to {statement.path} ({how})",
                ", ".join(closing_parts(reading))]
    if statement.typed:
        for name, count in summary.misfits.items():
            sections.append(f"{name}: {count:,} value{'s' if count != 1 else ''} did not fit the column's "
                            f"type (null there; {name}:note says what each was)")
    if writing_pressed:
        sections.append("Ctrl-C while writing: the file was finished with the rows read")
    elif interrupted:
        from cqlsh_ext.common.interrupt import interrupted_words

        sections.append(f"{interrupted_words()}: the file holds the rows read before")
    return rows, f"{LABEL}: " + "; ".join(sections)
