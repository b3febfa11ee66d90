"""Doing a load (docs/load.md), a front end on the writing layer: the request (the shell's COPY ...
FROM, load.parse; db.write's, `load_call`), the job (load.load_job), then the preview (every row of the
source read, encoded and verified, the cells it writes read: nothing written) or, with CONFIRM, the
run: journaled by writing.journal with the request in its sealed head, paced by writing.pace, each
row written by writing.row_loads; and RESUME of a run stopped part-way, from its journal. UNDO
(writing.undo) writes the journal's old values back: a new row's cells back to null.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, plural, screen_width
from cqlsh_ext.common.units import human_size as sizeof
from cqlsh_ext.load.load_job import LABEL, PROMISE, LoadFigures, LoadJob, Pass, chain_words
from cqlsh_ext.writing.refused import WriteRefused

if TYPE_CHECKING:
    from collections.abc import Iterator

    from cqlsh_ext.load.source import SourceRow
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.journal_lock import JournalLock
    from cqlsh_ext.writing.journal_read import JournalRead
    from cqlsh_ext.writing.requests import LoadRequest, ResumeRequest
    from cqlsh_ext.writing.write_context import WriteContext

#: Off a terminal, a progress line every this many seconds.
PROGRESS_SECONDS = 10.0


def statement(request: LoadRequest) -> str:
    """The statement that asks for `request`, spelt from its fields (its headings; RESUME's)."""
    from cqlsh_ext.writing.blob_target import quote

    name = f"{quote(request.keyspace)}.{quote(request.table)}"
    columns = ", ".join(quote(c) for c in request.columns)
    source = "data" if request.source is None else "'" + request.source.replace("'", "''") + "'"
    options = [f"ENCODE {quote(c)} = '{chain}'" for c, chain in request.encode]
    if request.ttl is not None:
        options.append(f"TTL = {request.ttl}")
    if not request.header:  # (a format of text records': common.file_formats)
        options.append("HEADER = false")
    text = f"COPY {name} ({columns}) FROM {source}"
    if options:
        text += " WITH " + " AND ".join(options)
    if request.pace is not None:
        text += f" PACE {request.pace}"
    return text


def load(ctx: WriteContext, request: LoadRequest, data: Any = None) -> LoadFigures:
    """The preview, or with CONFIRM (or a yes at the prompt) the run, of the load `request` asks
    for (`data`: db.write's rows in memory); QueryError or WriteRefused before anything is read."""
    from cqlsh_ext.load.load_job import job_for, source_rows
    from cqlsh_ext.writing.journal import open_journal

    job = job_for(ctx, with_columns(ctx, request))
    request = job.request
    if not request.confirm:
        figures, accepted = _preview(ctx, job, data)
        if not accepted:
            return figures
        if request.format == "data" and not _replayable(data):
            return figures  # a RecordBatchReader is read once: confirm=True loads it
        job = replace(job, request=replace(request, confirm=True))
    extra: dict[str, Any] = {"columns": [c.name for c in job.columns.written]}
    rows = source_rows(job, data)  # the source opened (and refused) before a journal is made
    journal = open_journal(ctx, "load", request.keyspace, job.meta.name, job.head_blob, job.mechanism,
                           job.request, extra, LABEL)
    return _run(ctx, job, journal, rows)


def with_columns(ctx: WriteContext, request: LoadRequest) -> LoadRequest:
    """The request with its columns named: without a list, the table's columns the file holds, in
    the file's order (a JSON Lines file's first object's keys, a Parquet file's columns, a CSV
    file's header), or every column of the table in its order (a CSV file without a header). A
    file's column that is not the table's (nor an export's companion of one) is refused, list or
    not (load.encoded_values.refuse_strays)."""
    if request.format == "data":
        return request  # (db.write names the data's columns: load_call)
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.load import source
    from cqlsh_ext.load.encoded_values import refuse_strays
    from cqlsh_ext.load.files import line_budget
    from cqlsh_ext.rewrite.job import table_meta
    from cqlsh_ext.writing.cell_reads import write_decoding

    meta = table_meta(ctx, request.keyspace, request.table)
    if meta is None:
        raise QueryError(f"unknown table {request.keyspace}.{request.table}")
    cap = write_decoding(ctx.settings).cap
    reading = source.FileReading(line_budget(cap), cap, request.header)
    path = str(request.source)
    names = source.file_header(request.format, path, reading)
    if names is None:  # a file of text records without its header: the table's columns
        names = list(meta.columns)
    refuse_strays(names, meta, request.keyspace)
    if request.columns:
        return request
    columns = tuple(n for n in names if n in meta.columns)
    if not columns:
        from cqlsh_ext.load.files import shown

        raise QueryError(f"{shown(path)} names no column of {request.keyspace}.{meta.name}")
    return replace(request, columns=columns)


def _replayable(data: Any) -> bool:
    """Data a second pass can read again (a table, a frame: not a stream)."""
    return type(data).__name__ != "RecordBatchReader"


def _pass_under_ctrl_c(one: Pass, windows: Any, tick: Callable[[], None]) -> LoadFigures:
    """`one` pass over the source's `windows`, Ctrl-C stopping it (its figures say whether it did)."""
    from cqlsh_ext.common.interrupt import CtrlC

    with CtrlC() as ctrl_c:
        figures = one.run(windows, lambda: ctrl_c.pressed, tick)
        figures.interrupted = ctrl_c.pressed
    return figures


def _preview(ctx: WriteContext, job: LoadJob, data: Any) -> tuple[LoadFigures, bool]:
    """Every row of the source read as the run reads it, nothing written; said, then asked at the
    interactive prompt (yes: as CONFIRM)."""
    from cqlsh_ext.load.load_job import row_loads, source_rows

    asking = ctx.ask is not None
    out = sys.stderr if asking else ctx.out
    windows, total = source_rows(job, data)
    loads = row_loads(ctx, job)
    one = Pass(ctx, job, loads, out=out)
    progress = ctx.progress(f"{LABEL} {job.name}", True, total)
    try:
        figures = _pass_under_ctrl_c(one, windows, _ticker(ctx, one, progress, total, "read"))
    finally:
        if progress is not None:
            progress.close()
    lines = [f"{statement(job.request)} (preview: nothing is written)", *_found(figures)]
    if one.shown:
        from cqlsh_ext.edit.preview import change_lines

        more = figures.to_write - len(one.shown)
        lines.append(f"  the first {plural(len(one.shown), 'row')} to write, what changes:"
                     if more else "  what the rows to write change:")
        for key, changes in one.shown:
            lines.extend(change_lines(key, changes))
    if figures.interrupted:
        lines.append("  stopped by Ctrl-C: the figures are those of the rows read")
    lines.append(PROMISE)
    _say(out, lines)
    todo = figures.to_write
    accepted = asking and todo > 0 and not figures.interrupted and ctx.ask is not None and \
        ctx.ask(f"Write {plural(todo, 'row')}? [y/N] ")
    if not accepted:
        what = "add CONFIRM at the end of the statement" if job.request.format != "data" else "confirm=True"
        print(f"Nothing written: {what} to write {plural(todo, 'row')}." if todo else "Nothing to write.",
              file=ctx.out)
    return figures, bool(accepted)


def _found(figures: LoadFigures) -> list[str]:
    """What the rows read come to, as lines (the preview's and the closing lines' figures)."""
    refused = sum(figures.refused.values())
    lines = [f"  read {plural(figures.rows, 'row')}: {figures.new:,} new, {figures.overwritten:,} "
             f"overwritten, {figures.unchanged:,} already as loaded (not written), {refused:,} refused"]
    lines.extend(_chains(figures))
    lines.append(f"  stored bytes of the columns loaded: {sizeof(figures.bytes_before)} now (the rows "
                 f"overwritten), {sizeof(figures.bytes_after)} after (the rows written)")
    lines.append(f"  write units (on Amazon Keyspaces: 1 per started KB of a row): {figures.units:,}; "
                 f"reading the rows first: {figures.read_units:,} read units")
    if figures.assumed_utc:
        lines.append(f"  {plural(figures.assumed_utc, 'row')}: a timestamp key given without a time zone, "
                     "taken as UTC (give its zone, +00:00 or Z, to say so)")
    for what, n in sorted(figures.unsaid.items(), key=lambda item: -item[1]):
        lines.append(f"  {plural(n, 'row')} new to the table hold {what}: the source cannot say what the "
                     "stored documents held; for an exact copy export WITH RAW = true (each row then "
                     "carries its stored bytes)")
    for reason, n in sorted(figures.refused.items(), key=lambda item: -item[1]):
        lines.append(f"  refused {plural(n, 'row')}: {reason}")
    for text in figures.named[:3]:
        lines.append(f"    {text}")
    if refused > 3:
        lines.append(f"    and {refused - 3:,} more")
    return lines


def _chains(figures: LoadFigures) -> list[str]:
    """The chains the blob values are written in, per column, the most first."""
    lines = []
    for column, chains in figures.chains.items():
        counted = ", ".join(f"{n:,} {chain_words(chain)}" for chain, n in
                            sorted(chains.items(), key=lambda item: (-item[1], item[0])))
        lines.append(f"  {column}: {counted}")
    return lines


def _say(out: Any, lines: list[str]) -> None:
    width = screen_width(out)
    print("\n".join(message(line, width) for line in lines), file=out)
    out.flush()


def _ticker(ctx: WriteContext, one: Pass, progress: Any, total: int | None, what: str
            ) -> Callable[[], None]:
    """The progress: a line redrawn on a terminal, else a line every PROGRESS_SECONDS to ctx.say."""
    last = [time.monotonic()]
    figures = one.figures
    told = [False]

    def tick() -> None:
        if one.stopping and not told[0] and what == "written":
            told[0] = True
            if progress is not None:
                progress.close()
            ctx.say("Ctrl-C: stopping: the writes in flight finish (Ctrl-C again stops at once)")
        done = figures.rows + figures.done_before
        share = done / total if total else None
        if progress is not None:
            progress.update(done, share)
            return
        now = time.monotonic()
        if now - last[0] >= PROGRESS_SECONDS:
            last[0] = now
            ctx.say(f"{LABEL} {one.job.name}: {done:,} rows read, {figures.written:,} written")

    return tick


def _run(ctx: WriteContext, job: LoadJob, journal: Journal,
         rows: tuple[Iterator[list[SourceRow]], int | None],
         skip: frozenset[int] = frozenset(), before: list[str] | None = None) -> LoadFigures:
    """The run: every row of the source's `rows` (its windows, how many when known) not in `skip`
    written, journaled; the closing lines."""
    from cqlsh_ext.load.load_job import IN_FLIGHT, row_loads
    from cqlsh_ext.writing.journal_names import hint_name
    from cqlsh_ext.writing.pace import Pace

    pace = Pace(job.request.pace, IN_FLIGHT)
    loads = row_loads(ctx, job)
    one = Pass(ctx, job, loads, journal, pace, skip)
    started = time.monotonic()
    progress = ctx.progress(f"{LABEL} {job.name}", True, None)
    if progress is not None:
        progress.ctrl_c = ("(Ctrl-C stops after the writes in flight)", "(Ctrl-C stops)")
    try:
        windows, total = rows
        if progress is not None:
            progress.estimate = total
        figures = _pass_under_ctrl_c(one, windows, _ticker(ctx, one, progress, total, "written"))
    finally:
        if progress is not None:
            progress.close()
        if not one.hard_stop:
            journal.close()
    figures.journal = journal.path
    seconds = time.monotonic() - started
    named = hint_name(journal.path, ctx.journal_dir)
    stop = ""
    if one.hard_stop:
        stop = "stopped by a second Ctrl-C: the writes in flight may or may not have applied (UNDO and " \
            "RESUME look at each row)"
    elif one.failure:
        stop = f"stopped: {one.failure}"
    elif figures.interrupted or one.stopping:
        stop = "stopped by Ctrl-C after the writes in flight"
    figures.stop = stop
    figures.failed = figures.failed or one.hard_stop or bool(one.failure)
    refused = sum(figures.refused.values())
    head = (f"{statement(job.request)}: {plural(figures.written, 'row')} written ({figures.written_new:,} "
            f"new, {figures.written_overwritten:,} overwritten), {figures.unchanged:,} already as loaded, "
            f"{refused:,} refused")
    if figures.not_sent:
        head += f"; {plural(figures.not_sent, 'row')} not sent"
    if figures.unknown:
        head += f"; {plural(figures.unknown, 'row')} whose write failed (UNDO and RESUME look at them)"
    if stop:
        head += f"; {stop}"
    lines = [*(before or []), head + ".", *_chains(figures)]
    for text in figures.named:
        lines.append(f"  refused: {text}")
    if refused > len(figures.named):
        lines.append(f"  and {refused - len(figures.named):,} more refused")
    span = pace.figures
    rate = f"{span.units / seconds:,.0f} a second" if seconds > 0 else ""
    paced = f" (PACE {job.request.pace}; the busiest second {span.busiest_second:,})" \
        if job.request.pace is not None else ""
    lines.append(f"  stored bytes of the columns loaded: {sizeof(figures.bytes_before)} before (the rows "
                 f"overwritten), {sizeof(figures.bytes_after)} written")
    lines.append(f"  {span.units:,} write units in {seconds:.1f} s: {rate}{paced}")
    if stop and not one.hard_stop:
        lines.append(f"Resume: COPY RESUME '{named}' CONFIRM")
    if figures.written or stop:
        lines.append(f"Undo: UNDO '{named}' CONFIRM")
    ctx.say_lines(lines, figures.failed)
    if one.hard_stop:
        raise KeyboardInterrupt
    return figures


# ---------------------------------------------------------------------------------------- RESUME

def resume(ctx: WriteContext, request: ResumeRequest, data: Any = None) -> LoadFigures | None:
    """A load stopped part-way (Ctrl-C, a kill, a failure) gone on with from its journal: the rows in
    flight at the kill looked up, the rows not written loaded (a preview of those without CONFIRM);
    the job rebuilt from the journal's sealed request, its file checked unchanged. None: nothing
    was left."""
    from cqlsh_ext.writing.journal_lock import JournalLock
    from cqlsh_ext.writing.journal_names import find_journal

    path, _ = find_journal(request.path, ctx.journal_dir, ("load",))
    lock = JournalLock.take(path, f"{LABEL} RESUME")
    try:
        return _resume(ctx, request, path, lock, data)
    finally:
        lock.release()


def _resume(ctx: WriteContext, request: ResumeRequest, path: str, lock: JournalLock, data: Any
            ) -> LoadFigures | None:
    from cqlsh_ext.load.load_job import job_for, source_rows
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.journal_read import Unsealed, read_journals
    from cqlsh_ext.writing.requests import LoadRequest

    try:
        parts = read_journals(path)
    except Unsealed as err:
        raise WriteRefused(f"{err.path} is a journal of version {err.version}: not a load's") from None
    first = parts[0]
    asked = first.request
    if first.kind != "load" or not isinstance(asked, LoadRequest) or len(parts) != 1:
        raise WriteRefused(f"{path} is not a load's journal (RESUME goes on with one; UNDO reads any)")
    if asked.source is not None:
        _same_file(asked.source, first)
    job = job_for(ctx, replace(asked, confirm=request.confirm))
    done, lines, outcomes = _looked_up(ctx, job, first)
    heading = [f"{LABEL} RESUME {path}: {statement(asked)}",
               f"  {plural(len(done), 'row')} of the source loaded before"
               + ("" if request.confirm else " (preview: nothing is written)")]
    if first.cut:
        heading.append(f"  {first.path} {first.cut_text()}")
    if first.torn is not None:
        heading.append(f"  {first.path}: {first.torn_text()}")
    heading.extend(lines)
    if not request.confirm:
        _say(ctx.out, heading)
        job_preview = replace(job, request=replace(job.request, confirm=False))
        return _preview_rest(ctx, job_preview, data, frozenset(done))
    rows = source_rows(job, data)
    journal = Journal.reopen(first, lock)
    if outcomes:
        journal.append(outcomes)
    _say(ctx.out, [*heading, f"Journal: {journal.path} (appended to)"])
    return _run(ctx, job, journal, rows, frozenset(done))


def _same_file(path: str, read: JournalRead) -> None:
    """WriteRefused unless the file is the one the load read: its whole content, by its size and
    digest as the load opened it (the rows not read yet too: a tail replaced or appended to is
    another file); a journal written before those, the bytes its last window says were read, by
    their digest (before digests: the file's size and time)."""
    import os

    from cqlsh_ext.load.files import SourceError, digest_of, open_regular, shown, whole_digest

    wholes: set[tuple[int, str]] = set()
    marks: list[tuple[int, str]] = []
    for row in read.rows():  # (read from the journal's file again: one pass)
        if row.source_whole is not None:
            wholes.add(row.source_whole)
        if row.source_read is not None:
            marks.append(row.source_read)
    try:
        if wholes:
            with open_regular(path) as f:
                now = whole_digest(f.fileno())
            if now not in wholes:
                size = max(wholes)[0]
                sizes = f"{size:,} bytes then, {now[0]:,} now" if now[0] != size else \
                    f"its {size:,} bytes are not those it read"
                raise WriteRefused(f"{shown(path)} changed since the load read it ({sizes}): RESUME goes on "
                                   "only with the same file, whole")
            return
        if marks:
            size, digest = max(marks)
            if digest_of(path, size) != digest:
                raise WriteRefused(f"{shown(path)} changed since the load read it (its first {size:,} bytes, "
                                   "the rows the load read, are not those it read): RESUME goes on only with "
                                   "the same file")
            return
        before = read.head.get("source")
        if isinstance(before, dict) and "mtime_ns" in before:
            st = os.stat(path)
            if {"size": st.st_size, "mtime_ns": st.st_mtime_ns} != before:
                raise WriteRefused(f"{shown(path)} changed since the load read it (its size or its time): "
                                   "RESUME goes on only with the same file")
    except (SourceError, OSError) as err:
        why = err if isinstance(err, SourceError) else err.strerror
        raise WriteRefused(f"{why}: the file the load read cannot be read") from None


def _preview_rest(ctx: WriteContext, job: LoadJob, data: Any, done: frozenset[int]) -> LoadFigures:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.load.load_job import row_loads, source_rows

    windows, _total = source_rows(job, data)
    one = Pass(ctx, job, row_loads(ctx, job), skip=done)
    with CtrlC() as ctrl_c:
        figures = one.run(windows, lambda: ctrl_c.pressed)
    lines = _found(figures)
    lines.append(PROMISE)
    _say(ctx.out, lines)
    print(f"Nothing written: add CONFIRM to write {plural(figures.to_write, 'row')}." if figures.to_write
          else "Nothing left to write.", file=ctx.out)
    return figures


def _looked_up(ctx: WriteContext, job: LoadJob, read: JournalRead
               ) -> tuple[set[int], list[str], list[dict[str, Any]]]:
    """The source rows the journal says were loaded (every cell's outcome said), and those in flight
    at the kill looked up now: holding what the load sent (applied: done), what they held before
    (never applied: loaded again), or neither (written by another client since: left alone); the
    lines saying so, and the outcomes to journal for the lines in flight."""
    from cqlsh_ext.load.load_job import row_loads
    from cqlsh_ext.writing.blob_target import key_text

    by_source: dict[int, list[Any]] = {}
    for row in read.rows():
        if row.source is not None:
            by_source.setdefault(row.source, []).append(row)
    # Done: every line's outcome said, one not to be loaded again (a row not sent is loaded now).
    done = {position for position, rows in by_source.items()
            if all(r.applied is not None for r in rows) and not all(r.again for r in rows)}
    flying = {position: rows for position, rows in by_source.items() if position not in done}
    if not flying:
        return done, [], []
    loads = row_loads(ctx, job)
    names = [c.name for c in job.columns.written]
    keys = [c.name for c in job.columns.keys]
    items = list(flying.items())
    key_values = [[t.from_binary(rows[0].key[k], loads._protocol) for k, t in zip(keys, loads.key_types,
                                                                                strict=True)]
                  for _, rows in items]
    olds = loads.read(key_values, [tuple(rows[0].key[k] for k in keys) for _, rows in items])
    applied = again = other = 0
    outcomes: list[dict[str, Any]] = []
    named: list[str] = []
    for (position, rows), key, old in zip(items, key_values, olds, strict=True):
        now = {names.index(r.column or names[0]): r for r in rows}
        cells = [loads.cell_bytes(j, None if old is None else old.values[j]) for j in range(len(names))]
        times = [None if old is None else old.writetimes[j] for j in range(len(names))]
        unsaid = [r for r in rows if r.applied is None]
        if all(cells[j] == r.new and (r.new is None or times[j] == r.at) for j, r in now.items()):
            applied += 1
            done.add(position)
            outcomes.extend({"row": r.number, "applied": True} for r in unsaid)
        elif all(cells[j] == r.old and (r.old is None or times[j] == r.writetime) for j, r in now.items()):
            again += 1  # never applied: loaded again, journaled anew
            outcomes.extend({"row": r.number, "applied": False, "again": True} for r in unsaid)
        else:
            other += 1
            done.add(position)
            outcomes.extend({"row": r.number, "applied": False} for r in unsaid)
        if len(named) < 8:
            named.append(key_text(dict(zip(keys, key, strict=True))))
    found = [f"{applied:,} hold what the load sent (applied)" if applied else "",
             f"{again:,} hold what they held before (never applied: loaded again)" if again else "",
             f"{other:,} hold neither (written by another client since: left alone)" if other else ""]
    lines = [f"  {plural(len(items), 'row')} with no outcome in the journal (in flight at the kill), looked "
             "up now: " + ", ".join(part for part in found if part),
             "    " + "; ".join(named) + (f", and {len(items) - len(named):,} more" if len(items) > len(named)
                                          else "")]
    return done, lines, outcomes


# ------------------------------------------------------ called with a front end's arguments

def load_call(ctx: WriteContext, call: Any) -> dict[str, Any] | None:
    """A load called with a front end's arguments (a features.feature.FeatureCall, checked against its
    declaration: the API's db.write): `data`'s rows (an Arrow table or RecordBatchReader, a pandas or
    a polars DataFrame) loaded into `table` (a table alone in the context's keyspace), the columns
    its names name (one that is not the table's refused, naming the nearest); or, with `resume`, a
    stopped load's journal gone on with. Its figures as the fields its declared answer names
    (`answer_of`); None: nothing was left to write. QueryError before anything is read."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid, names
    from cqlsh_ext.load.encoded_values import refuse_strays
    from cqlsh_ext.load.source import SourceError, data_rows
    from cqlsh_ext.reading.resolve import find_table
    from cqlsh_ext.writing.requests import LoadRequest, ResumeRequest

    given = call.arguments
    encode, data, confirm = given.get("encode") or {}, given["data"], given.get("confirm", False)
    # What the declaration's "object" cannot say: each of its values a chain's text.
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in encode.items()):
        raise QueryError("encode takes a dict of column names to chains ({'data': 'snappy>json'})")
    try:
        found_names = names(given["table"], (1, 2), "table")
    except Invalid as err:
        raise QueryError(str(err)) from None
    name = found_names[-1]
    keyspace = found_names[0] if len(found_names) == 2 else ctx.keyspace
    if keyspace is None:
        raise QueryError(f"no keyspace for {name}: name it ('ks.{name}') or connect with keyspace=")
    try:
        columns, _rows, _total = data_rows(data, (), frozenset())
    except SourceError as err:
        raise QueryError(str(err)) from None
    table_found = find_table(ctx.cluster, ctx.keyspace, keyspace, name, refresh=True)
    meta = table_found.meta if table_found is not None else None
    if meta is not None:  # (none: the load says the table is unknown)
        refuse_strays(columns, meta, keyspace)
    request = LoadRequest(keyspace, name, tuple(n for n in columns if meta is None or n in meta.columns),
                          None, "data", tuple(encode.items()), given.get("ttl"), True, given.get("pace"),
                          confirm)
    figures = load(ctx, request, data) if "resume" not in given else \
        resume(ctx, ResumeRequest(given["resume"], confirm), data)
    if figures is None:
        raise QueryError("nothing was left to write")
    return answer_of(request, figures)


def answer_of(request: LoadRequest, figures: LoadFigures) -> dict[str, Any]:
    """A load's answer as its declaration names its fields (features.output_schemas.LOAD_RESULT: the
    API's LoadResult): confirmed where it made a journal."""
    confirmed = figures.journal is not None
    answer: dict[str, Any] = {
        "request": request, "confirmed": confirmed, "rows": figures.rows, "new": figures.new,
        "overwritten": figures.overwritten, "unchanged": figures.unchanged,
        "refused": dict(figures.refused), "refused_rows": list(figures.named),
        "chains": {k: dict(v) for k, v in figures.chains.items()}, "bytes_before": figures.bytes_before,
        "bytes_after": figures.bytes_after, "write_units": figures.units}
    if not confirmed:
        return answer
    return {**answer, "written": figures.written, "not_sent": figures.not_sent, "journal": figures.journal,
            "stopped": figures.stop or None}
