"""Running an export: the SELECT's answer, read as the shell reads a payload query
(payload_select.command.read_answer), written to a file instead of printed.

Ctrl-C: the scan stops at a page boundary, the file is closed with the rows read so far and takes
its name; the closing line says it was interrupted. A second Ctrl-C while it closes, an error
while writing (a full disk, an unwritable file) or a scan stopped by an error leave no file: the
temporary file is removed and one line says why.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from cqlsh_ext.export.errors import ExportError
from cqlsh_ext.export.parse import LABEL, ExportStatement

if TYPE_CHECKING:
    from cqlsh_ext.cqlsh.protocol import Shell

#: Rows per page handed from the reading to the file (the server's pages, when it returns the
#: answer's rows one for one, are of FETCH_SIZE rows).
PAGE_SIZE = 5000
FETCH_SIZE = 5000
PARQUET_INSTALL = "pip install 'cqlsh-ext[parquet]'"


def run(shell: Shell, statement: ExportStatement) -> None:
    from cqlsh_ext.cql.errors import QueryError

    try:
        _export(shell, statement)
    except (ExportError, QueryError) as err:
        shell.printerr(f"{LABEL}: {err}")


def _plan(shell: Shell, statement: ExportStatement) -> tuple[Any, Any, str, Any]:
    from cqlsh_ext.payload_select.schema import schema_of, table_meta
    from cqlsh_ext.query.grammar import parse
    from cqlsh_ext.query.recognize import table_of

    target = table_of(statement.select)
    if target is None:
        raise ExportError("COPY ( ... ) takes a SELECT ... FROM [keyspace.]table")
    keyspace = target[0] or shell.current_keyspace
    meta = table_meta(shell, keyspace, target[1])
    if meta is None or keyspace is None:
        where = f"{target[0]}.{target[1]}" if target[0] else target[1]
        hint = "" if keyspace else " (no keyspace: USE one or name it)"
        raise ExportError(f"unknown table {where}{hint}")
    schema = schema_of(shell, keyspace, meta)
    plan = parse(statement.select, schema, plain=True)
    if plan is None:
        raise ExportError("COPY ( ... ) takes a SELECT ... FROM [keyspace.]table")
    return plan, schema, keyspace, meta


def _export(shell: Shell, statement: ExportStatement) -> None:
    from cqlsh_ext.export.target import ExportFile
    from cqlsh_ext.payload_select.command import read_answer

    if statement.fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ExportError(f"a Parquet file needs pyarrow: {PARQUET_INSTALL}") from None
    plan, schema, keyspace, meta = _plan(shell, statement)
    target = ExportFile(statement.path, statement.overwrite)  # an unwritable place is said before reading
    try:
        answer = read_answer(shell, plan, schema, keyspace, meta, PAGE_SIZE, FETCH_SIZE)
    except BaseException:
        target.discard()
        raise
    if answer is None:  # refused or declined: said
        target.discard()
        return
    reading, names, types, pages = answer
    try:
        sink = _sink(shell, statement, target, names, types, keyspace, meta)
    except BaseException:
        pages.close()
        target.discard()
        raise
    _write(shell, statement, plan, reading, pages, sink, target)


def _sink(shell: Shell, statement: ExportStatement, target: Any, names: list[str], types: list[Any],
          keyspace: str, meta: Any) -> Any:
    from cqlsh_ext.output.place import ValuePlace

    settings = shell.settings.display
    if statement.raw is not None:
        settings = dataclasses.replace(settings, raw_blobs=statement.raw)
    places = [ValuePlace(keyspace, meta.name, name) for name in names]
    if statement.fmt == "parquet":
        from cqlsh_ext.export.parquet import DEFAULT_CODEC, ROW_GROUP_SIZE, ParquetSink

        metadata = {"cqlsh_ext.select": statement.select}
        return ParquetSink(target, names, types, settings, places, statement.codec or DEFAULT_CODEC,
                           statement.row_group_size or ROW_GROUP_SIZE, metadata)
    from cqlsh_ext.export.text import TextSink

    return TextSink(statement.fmt, target, names, types, settings, places)


def _write(shell: Shell, statement: ExportStatement, plan: Any, reading: Any, pages: Any, sink: Any,
           target: Any) -> None:
    from cqlsh_ext.export.target import os_error

    interrupted = False
    try:
        try:
            for page in pages:
                sink.write(page)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            pages.close()
        if reading.error:
            raise ExportError(f"the scan stopped: {reading.error}; nothing written")
        summary = sink.finish()
        target.commit()
    except KeyboardInterrupt:
        sink.abort()
        target.discard()
        shell.printerr(f"{LABEL}: interrupted (Ctrl-C) while closing {statement.path}: nothing written")
        return
    except OSError as err:
        sink.abort()
        target.discard()
        shell.printerr(f"{LABEL}: writing {statement.path} failed: {os_error(err)}; nothing written")
        return
    except BaseException:
        sink.abort()
        target.discard()
        raise
    interrupted = interrupted or reading.interrupted
    closing_line(statement, plan, reading, summary, sink, interrupted)


def closing_line(statement: ExportStatement, plan: Any, reading: Any, summary: Any, sink: Any,
                 interrupted: bool) -> None:
    from cqlsh_ext.payload_select.command import closing_parts

    if statement.fmt == "parquet":
        rows = summary.rows
        groups = f"{summary.row_groups:,} row group{'s' if summary.row_groups != 1 else ''}"
        how = f"Parquet, {sink.codec}, {groups}"
    else:
        rows = sink.rows
        how = "JSON Lines" if statement.fmt == "json" else "CSV"
    sections = [f"{rows:,} rows written to {statement.path} ({how})", ", ".join(closing_parts(plan, reading))]
    if statement.fmt == "parquet":
        for name, widened in summary.widened.items():
            sections.append(f"{name}: {widened.values:,} value{'s' if widened.values != 1 else ''} past the "
                            f"first row group did not fit {widened.first}, kept as {widened.last}")
    if interrupted:
        sections.append("interrupted (Ctrl-C): the file holds the rows read before")
    print(f"{LABEL}: " + "; ".join(sections))
    sys.stdout.flush()
