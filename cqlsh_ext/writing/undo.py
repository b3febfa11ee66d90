"""UNDO (docs/edit.md, "The journal, and UNDO"): a journal's old values written back, bound to
what was written.

The plan: the journal (a file, or a Spark run's directory of parts) read and verified
(writing.journal_read: sealed, a regular file of the user's that nobody else can write, or a
version 1 or 2 journal named with UNSEALED); its target is its head's keyspace, table and column,
never a system keyspace; its rows are those its lines say were written, and those whose outcome a
kill left unsaid (a row the kill left and RESUME journaled again is undone once, at its later
line). A row goes back only where the cell still holds what was written, *as it was written*:

- written at a timestamp (the journal's "at"): the bytes and that write time, or the bytes at
  the write time an UNDO of this user's later journal wrote them back at (its sealed journal says
  so: writing.undo_chain), so that successive edits undo newest first. A cell written again since
  by anyone else, even with the same bytes (another client writing them back with another TTL),
  has another write time, and is left alone and counted.
- written on a condition (no write time of ours: "at" is null): the bytes and the moment of
  expiry (within WITHIN seconds). A later write of the same bytes expiring at the same moment
  cannot be told apart; the preview says so.

A cell that holds already what UNDO writes back (the old value: an UNDO killed on its way wrote it)
is done: said as already restored, never as changed, and nothing is written to it.

A load's journal (COPY FROM, db.write) has a line per cell it wrote, each naming its column: a
cell of a row that was new goes back to null (a row of the load's alone is then gone), a cell the
load wrote null shows no write time and goes back where it is still null.

Each old value is written by the same mechanism (at the cell's write time + 1, or on the condition
that the cell still holds what was written), expiring when the journal recorded the old value
would (writing.ttl), and journaled in turn, sealed, in a journal made at the first row written (an
UNDO that writes nothing leaves none): UNDO of that journal writes the values back again.

The journal undone is held by the UNDO for its run (writing.journal_lock): one a live run holds is
refused, and its rows are read no further than the preview's reading went. One without its closing
line (a kill, or lines cut from its end) is said to be so before the preview and written back only
with CUT; an unsealed one (UNSEALED) shows every row it would write, and writes with CONFIRM
UNSEALED (the shell's spelling; writing.requests.UndoRequest's `unsealed` and `confirm`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural, say
from cqlsh_ext.writing.blob_target import BlobTarget, key_columns, key_text, refuse_system
from cqlsh_ext.writing.cell_writer import CHANGED, EXPIRED, RESTORED, REWRITTEN, Written, same
from cqlsh_ext.writing.loop import RowsBar, closing, each_row, sent, stopping_under
from cqlsh_ext.writing.refused import WriteRefused
from cqlsh_ext.writing.undo_chain import MAX_CELLS, WHOSE, UndoWrites

if TYPE_CHECKING:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.writing.cell_writer import Cell, CellWriter
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.journal_read import JournalRead, JournalRow
    from cqlsh_ext.writing.loop import Done
    from cqlsh_ext.writing.requests import UndoRequest
    from cqlsh_ext.writing.write_context import WriteContext

LABEL = "undo"
#: Rows an UNDO writes at once (a rewrite's journal may hold millions).
UNDO_AT_ONCE = 8
#: Rows an UNDO preview reads to tell which still hold what was written (a rewrite's journal may
#: hold millions: the preview says it looked at these).
UNDO_PREVIEW_ROWS = 10_000
#: Rows whose `key: changed since ...` lines a preview shows.
PREVIEW_ROWS = 3
#: Rows left alone an UNDO names one a line as it goes (the closing line counts them all); a row
#: already restored (an UNDO stopped on its way wrote it back) is counted only.
NAMED_LEFT = 20
#: Seconds a cell written on a condition may expire from the moment the journal recorded and still
#: be the one written (each moment is known to its second; a write may cross one).
WITHIN = 2.0


@dataclass(frozen=True)
class UndoFigures:
    """What an UNDO found and did (the shell says it in lines): the rows to write back; of those the
    preview looked at, how many still hold what was written (None: not previewed); with CONFIRM,
    what the writes did (`done`) and the undo's own journal (None: it wrote no row, and so no
    journal)."""

    rows: int
    still: int | None = None
    done: Done | None = None
    journal: str | None = None


#: LAST names the newest journal of these kinds (an undo's is undone by its id).
UNDONE_KINDS = ("edit", "rewrite", "load")
#: The word that writes back a journal without its closing line (UNDO 'f' CUT CONFIRM).
CUT = "CUT"


def run_undo(ctx: WriteContext, request: UndoRequest, undone: bool = False) -> UndoFigures:
    """Preview or write a journal's old values back (see the module doc); WriteRefused (one line)
    for a journal or a target that is refused, before anything is written. Its figures. The
    journal (found by its path, its id or LAST: writing.journal_names) is locked for the run
    (writing.journal_lock): a live run's is refused. `undone` (the shell's): first of all, say when
    an UNDO of this user's undid the journal already (writing.undo_chain), or finish one stopped
    on its way (its first line says so)."""
    from cqlsh_ext.writing.journal_lock import JournalLock
    from cqlsh_ext.writing.journal_names import find_journal

    path, found = find_journal(request.path, ctx.journal_dir, UNDONE_KINDS)
    with JournalLock.take(path, "an UNDO"):
        return _run_undo(ctx, request, path, found, undone)


def undo_call(ctx: WriteContext, call: Any) -> dict[str, Any]:
    """UNDO called with a front end's arguments (a features.feature.FeatureCall, checked against the
    declaration: the API's db.undo): `run_undo`'s figures as the fields its declared answer names
    (features.output_schemas.UNDO_RESULT: the API's UndoResult). A confirmed UNDO with no row to
    write back wrote none (0), a preview nothing yet (None)."""
    from cqlsh_ext.writing.requests import UndoRequest

    given = call.arguments
    request = UndoRequest(given["journal"], given.get("unsealed", False), given.get("confirm", False),
                          given.get("cut", False))
    figures = run_undo(ctx, request)
    answer: dict[str, Any] = {"request": request, "confirmed": request.confirm, "rows": figures.rows,
                              "still": figures.still}
    done = figures.done
    if done is None:
        nothing = 0 if request.confirm else None
        return {**answer, "written": nothing, "left_alone": nothing}
    return {**answer, "confirmed": True, "written": done.written,
            "left_alone": done.changed + done.rewritten + done.expired, "journal": figures.journal,
            "stopped": done.stop or None}


def _run_undo(ctx: WriteContext, request: UndoRequest, path: str, found: bool, undone: bool) -> UndoFigures:
    from cqlsh_ext.reading.resolve import find_table
    from cqlsh_ext.writing.cell_writer import CellWriter
    from cqlsh_ext.writing.journal_names import hint_name
    from cqlsh_ext.writing.journal_read import read_journals
    from cqlsh_ext.writing.mechanism import choose

    parts = read_journals(path, request.unsealed)
    first = parts[0]
    blob = first.blob
    chain = UndoWrites(ctx.journal_dir, first.keyspace, first.table, blob,
                       frozenset(part.path for part in parts))
    skip = _superseded(parts)
    todo = sum(1 for part in parts for applied in part.outcomes.values() if applied is not False) - len(skip)
    back = chain.finishing(path, todo + len(skip), ctx.out) if undone else None
    refuse_system(first.keyspace)
    table = find_table(ctx.cluster, None, first.keyspace, first.table, refresh=True)
    meta = table.meta if table is not None else None
    if meta is None or blob.column not in meta.columns:
        raise WriteRefused(f"{first.keyspace}.{first.table}.{blob.column} is not in the schema")
    keys = key_columns(meta, blob.column)
    whose = WHOSE.get(first.kind, "the edit")
    unsealed = any(not part.sealed for part in parts)
    cut = [part for part in parts if part.cut]
    asking = not request.confirm and bool(todo) and ctx.ask is not None and not unsealed and \
        (not cut or request.cut)
    out = sys.stderr if asking else ctx.out  # with the question, not held by the pager
    noun, where = _cells(first, blob)
    add = '' if request.confirm or asking else ' (add CONFIRM to write them)' if not unsealed else ''
    heading = _heading(hint_name(path, ctx.journal_dir), todo, back, noun, where, add)
    if back is not None and todo:  # (finishing: first of all what it does, never words of a refusal)
        say(heading, out)
    if found:
        _say_found(request, path, out)
    _say_unvouched(parts, out)
    if request.confirm and cut and not request.cut:
        raise _cut_refused(cut[0], hint_name(path, ctx.journal_dir))
    if back is None or not todo:
        say(heading, out)
    if not todo:
        return UndoFigures(0)
    mechanism = choose(ctx, first.keyspace, meta.name, blob, keys)
    writer = CellWriter.of(ctx, first.keyspace, meta, blob, keys, mechanism)
    writers = _column_writers(ctx, first, meta, keys, mechanism, writer)
    still: int | None = None
    if not request.confirm:
        shown = _ValueText(ctx) if unsealed else None
        still = _preview(writers, keys, parts, todo, out, skip, whose, chain, shown)
        say(mechanism.promise("what was written"), out)
        question = f"Write {plural(todo, noun)} back? [y/N] "
        if not (asking and still and ctx.ask is not None and ctx.ask(question)):
            _say_nothing_written(ctx, path, unsealed=unsealed, cut=bool(cut) and not request.cut,
                                 asking=asking, still=still, whose=whose)
            return UndoFigures(todo, still)
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.writing.journal import open_journal
    from cqlsh_ext.writing.requests import UndoRequest

    def journal() -> Journal:
        # Its path said through the bar's stream: cleared first, never drawn over.
        return open_journal(replace(ctx, out=bar.out), "undo", first.keyspace, meta.name, blob, mechanism,
                            UndoRequest(path, request.unsealed, True, request.cut))

    undo_journal = _OpenedOnWrite(journal)
    # On a terminal a bar labelled as REWRITE's (the table is named above it: a short label keeps
    # the command's word at 80 columns); elsewhere a line every PROGRESS_EVERY rows (ctx.say).
    bar = RowsBar(ctx, f"UNDO {blob}", todo, ctx.out)
    try:
        with CtrlC(on_first=stopping_under(bar)) as ctrl_c:
            if first.kind == "load" and mechanism.timestamped and not unsealed:
                done = _undo_load(ctx, meta, writers, keys, parts, todo, undo_journal, ctrl_c, skip, whose,
                                  chain, bar)
            else:
                done = _undo_rows(writers, keys, parts, todo, undo_journal, ctrl_c, skip, whose, chain, bar,
                                  ctx.say)
    finally:
        bar.close()
    written = undo_journal.path
    _closing(ctx, done, request, path, written, noun, whose)
    return UndoFigures(todo, still, done, written)


def _cut_refused(part: JournalRead, named: str) -> WriteRefused:
    """A journal without its closing line, confirmed without CUT: what to add."""
    return WriteRefused(f"{part.path} has no closing line: its rows after line {part.lines:,} are not known; "
                        f"add {CUT} to write back the rows it holds (UNDO '{named}' {CUT} CONFIRM)")


def _heading(named: str, todo: int, finishing: int | None, noun: str, where: str, add: str) -> str:
    """What the UNDO will do: the `todo` rows (cells: `noun`) it writes back, or, finishing an UNDO
    stopped on its way (`finishing`: the rows it wrote back), those left of them."""
    if finishing is None or not todo:
        return f"undo: {plural(todo, noun)} of {where} to write back{add}"
    # What the stopped UNDO's journal says it wrote, not a count of what is left: a write it had
    # sent when killed may have landed unjournaled (the closing line counts what each row held).
    return (f"finishing UNDO '{named}': it wrote back {finishing:,} of the {plural(todo, noun)} of {where} "
            f"before it stopped; the others to write back{add}")


def _say_found(request: UndoRequest, path: str, out: IO[str]) -> None:
    """The journal a name (LAST, an id) was found as, and, for LAST, whose it is."""
    from cqlsh_ext.writing.journal_names import LAST
    from cqlsh_ext.writing.journal_names import whose as written_by

    named = request.path.strip()
    say(f"undo: {named} is {path}" + (f" ({written_by(path)})" if named.upper() == LAST else ""), out)


def _closing(ctx: WriteContext, done: Done, request: UndoRequest, path: str, written: str | None, noun: str,
             whose: str) -> None:
    """The rows found already restored, on a line of their own (nothing is written to them: an UNDO
    stopped on its way wrote them back), then the closing line, of what this run wrote, then the
    statement that finishes an UNDO stopped on its way (the same UNDO) and the one that undoes it."""
    from cqlsh_ext.writing.journal_names import hint_name

    again = f"Undo the undo: UNDO '{hint_name(written, ctx.journal_dir)}' CONFIRM" if written else ""
    if done.stop:
        cut_word = f" {CUT}" if request.cut else ""
        finish = f"Finish it: UNDO '{hint_name(path, ctx.journal_dir)}'{cut_word} CONFIRM"
        again = f"{finish}\n{again}" if again else finish
    if done.restored:  # (its own line: what this run writes back is the closing line's alone)
        say(f"{plural(done.restored, noun)} {_restored_words(whose)}.", ctx.out)
    closing(ctx, done, f"{plural(done.written, noun)} written back", f"changed since {whose}: left alone",
            again, _rewritten_words(whose), f"whose TTL ran out since {whose}: nothing to write back")


def _say_unvouched(parts: Sequence[JournalRead], out: IO[str]) -> None:
    """What the journal cannot vouch for, said first: a journal not sealed, one without its end, one
    torn."""
    for part in parts:
        if not part.sealed:
            say(f"undo: {part.path}: a journal of version {part.version}, not sealed: read as UNSEALED asks; "
                "every row it would write is shown (its rows go back only where the cell holds what they "
                "say was written)", out)
        if part.cut:
            say(f"undo: {part.path} {part.cut_text()}", out)
        if part.torn is not None:
            say(f"undo: {part.path}: {part.torn_text()}", out)


def _say_nothing_written(ctx: WriteContext, path: str, *, unsealed: bool, cut: bool, asking: bool,
                         still: int | None, whose: str) -> None:
    """Why a preview wrote nothing, and what writes it (`cut`: a journal without its closing line,
    CUT not given)."""
    from cqlsh_ext.writing.journal_names import hint_name

    if unsealed:
        print("Nothing written: an unsealed journal's rows go back only with CONFIRM UNSEALED, "
              "once you know the journal is yours.", file=ctx.out)
    elif cut:
        print("Nothing written: a journal without its closing line is written back with CUT, the "
              "rows it holds:", file=ctx.out)
        print(f"Undo: UNDO '{hint_name(path, ctx.journal_dir)}' {CUT} CONFIRM", file=ctx.out)
    elif asking and not still:  # (already undone, or changed since: CONFIRM would write none)
        print(f"Nothing to write back: no row holds what {whose} wrote.", file=ctx.out)
    elif asking:
        print("Nothing written: add CONFIRM to write them back.", file=ctx.out)


class _Writers(dict[str, "CellWriter"]):
    """The cell writer of each column a journal's lines write (a load's journal writes several),
    by column; the journal's own first (its head's blob)."""

    def __init__(self, first: CellWriter) -> None:
        super().__init__({first.blob.column: first})
        self.first = first

    def of(self, row: JournalRow) -> CellWriter:
        return self.first if row.column is None else self[row.column]


def _column_writers(ctx: WriteContext, read: JournalRead, meta: Any, keys: list[str], mechanism: Any,
                    first: CellWriter) -> _Writers:
    """The cell writers of the columns a load's journal names beside its head's blob ("columns"),
    each a blob or text column of the table with the same key; WriteRefused for one that is not."""
    from cqlsh_ext.writing.cell_writer import CellWriter

    writers = _Writers(first)
    named = read.head.get("columns") or []
    if not isinstance(named, list):
        raise WriteRefused(f"{read.path}: its first line's columns are not a list")
    for column in named:
        if not isinstance(column, str) or column not in meta.columns or \
                key_columns(meta, column) != keys:
            raise WriteRefused(f"{read.path}: its first line names a column {column!r} this table has not "
                               "beside the journal's")
        if column not in writers:
            text = str(meta.columns[column].cql_type) in ("text", "varchar", "ascii")
            target = BlobTarget(column, holds_text=text)
            writers[column] = CellWriter.of(ctx, read.keyspace, meta, target, keys, mechanism)
    return writers


def _cells(read: JournalRead, blob: BlobTarget) -> tuple[str, str]:
    """What a journal's lines are and where: rows of its blob, or a load's cells of several columns."""
    columns = read.head.get("columns")
    if read.kind == "load" and isinstance(columns, list) and len(columns) > 1:
        return "cell", f"{read.keyspace}.{read.table} ({', '.join(map(str, columns))})"
    return "row", f"{read.keyspace}.{read.table}.{blob}"


class _OpenedOnWrite:
    """An UNDO's own journal, made when its first row is about to be written (an UNDO that writes
    nothing leaves no journal); thread-safe, the rows being written a few at once."""

    def __init__(self, make: Callable[[], Journal]) -> None:
        import threading

        self._make = make
        self._lock = threading.Lock()
        self.journal: Journal | None = None

    def get(self) -> Journal:
        with self._lock:
            if self.journal is None:
                self.journal = self._make()
            return self.journal

    @property
    def path(self) -> str | None:
        return None if self.journal is None else self.journal.path

    def close(self) -> None:
        with self._lock:
            if self.journal is not None:
                self.journal.close()


def _rewritten_words(whose: str) -> str:
    return f"written again since {whose} (the same bytes, a later write): left alone"


def _restored_words(whose: str) -> str:
    return f"already restored (they hold the value from before {whose}): nothing written to them"


def key_values(writer: CellWriter, keys: Sequence[str], row: JournalRow, path: str) -> list[Any]:
    """A journal row's key as the driver's values; WriteRefused naming the line and the column when
    it names other columns or its bytes are no value of the column's type."""
    if set(row.key) != set(keys):
        raise WriteRefused(f"{path}: line {row.line:,}: the journal's keys are not the table's primary key")
    out = []
    for name, kind in zip(keys, writer.key_types, strict=True):
        data = row.key[name]
        try:
            out.append(kind.from_binary(data, writer.protocol))
        except Exception:
            typename = getattr(kind, "typename", type(kind).__name__)
            size = _FIXED_SIZES.get(str(typename))
            article = "an" if str(typename)[:1] in "aeiou" else "a"
            need = f" ({article} {typename} is {size} bytes)" if size else ""
            raise WriteRefused(f"{path}: line {row.line:,}: the key's {name} is {len(data)} bytes that are "
                               f"no {typename}{need}") from None
    return out


#: Bytes a serialized value of these CQL types takes: what a journal's key must hold.
_FIXED_SIZES = {"int": 4, "bigint": 8, "smallint": 2, "tinyint": 1, "uuid": 16, "timeuuid": 16,
                "timestamp": 8, "double": 8, "float": 4, "boolean": 1, "date": 4, "time": 8, "counter": 8}


def as_written(row: JournalRow, cell: Cell, blob: BlobTarget, chain: UndoWrites | None = None
               ) -> str | None:
    """None when the cell holds what the row wrote, as it was written (see the module doc), or as an
    UNDO of this user's later journal put it back (`chain`: writing.undo_chain); else RESTORED (it
    holds the row's old value, what UNDO writes back: an UNDO killed on its way wrote it), CHANGED
    (other bytes, or the row deleted), EXPIRED (gone when its TTL ran out) or REWRITTEN (the same
    bytes, written again since by another write)."""
    expires = row.written_expires
    if cell.value is None and row.new is not None and expires is not None and expires <= cell.sent + 1:
        return EXPIRED
    if not same(cell.value, column_value(row.new, blob)):
        return RESTORED if same(cell.value, column_value(row.old, blob)) else CHANGED
    if row.new is None:
        return None  # a cell written null: null holds no write time to tell whose it is
    if row.at is not None and cell.writetime is not None:
        if cell.writetime == row.at:
            return None
        if chain is not None and chain.wrote(row.key, row.new, cell.writetime, row.column):
            return None
        return REWRITTEN
    now = None if cell.ttl is None else cell.sent + cell.ttl
    if (now is None) != (expires is None):
        return REWRITTEN
    if now is not None and expires is not None and abs(now - expires) > WITHIN:
        return REWRITTEN
    return None


def column_value(value: bytes | None, blob: BlobTarget) -> Any:
    return value.decode("utf-8") if blob.holds_text and value is not None else value


def _undoable(parts: list[JournalRead],
              skip: set[tuple[int, int]]) -> Iterable[tuple[JournalRead, JournalRow]]:
    """The rows an UNDO writes back, in journal order: those written, or whose outcome the journal
    does not say, but not those `skip` names."""
    for i, part in enumerate(parts):
        for row in part.rows():
            if row.applied is not False and (i, row.line) not in skip:
                yield part, row


def _superseded(parts: list[JournalRead]) -> set[tuple[int, int]]:
    """(part, line) of rows whose outcome the journal does not say (a kill during their write) and
    that a later line journals again (RESUME wrote them): the later line is the one undone."""
    from cqlsh_ext.writing.journal_read import without_outcome

    return {(i, row.line) for i, row, last in without_outcome(parts) if not last}


def _undo_rows(writers: _Writers, keys: list[str], parts: list[JournalRead], todo: int,
               undo_journal: _OpenedOnWrite, ctrl_c: CtrlC, skip: set[tuple[int, int]], whose: str,
               chain: UndoWrites, bar: RowsBar, note: Callable[[str], None]) -> Done:
    """Each journaled row written back where it holds what was written (journaled in turn, in a
    journal made at the first row written); the rows left alone said on the bar's `out`, progress
    on the bar (a terminal's) or to `note`."""
    out = bar.out
    words = {CHANGED: f"changed since {whose}: left alone", REWRITTEN: _rewritten_words(whose),
             EXPIRED: f"its TTL ran out since {whose}: nothing to write back"}
    named = _Named(out, NAMED_LEFT)

    def rows() -> Iterable[tuple[JournalRead, JournalRow]]:
        return _undoable(parts, skip)

    def one(n: int, item: tuple[JournalRead, JournalRow]) -> Written:
        part, row = item
        writer = writers.of(row)
        blob = writer.blob
        key = key_values(writer, keys, row, part.path)
        text = key_text(dict(zip(keys, key, strict=True)))
        old, new = column_value(row.old, blob), column_value(row.new, blob)
        cell = writer.read(key)
        left = as_written(row, cell, blob, chain)
        if left is not None:
            if left != RESTORED:
                named.say(f"  {text}{_of(row)}: {words[left]}")
            return Written(left)
        # A cell written null shows no write time: the journal's is the null's.
        writetime = cell.writetime if cell.writetime is not None or row.new is not None else row.at
        at = writer.timestamp(writetime)
        journal = undo_journal.get()
        journal.before(n, row.key, row.new, row.old, cell.ttl, row.written_expires, writetime, at,
                       extra=_cell_fields(row))
        written = sent(writer, key, new, old, writetime, row.expires, at, text, out)
        journal.after(n, written.applied)
        return written

    try:
        return each_row(_Lazy(rows, todo), one, lambda item: key_text(item[1].key), note, ctrl_c, LABEL,
                        UNDO_AT_ONCE, bar)
    finally:
        undo_journal.close()
        named.close()


def _undo_load(ctx: WriteContext, meta: Any, writers: _Writers, keys: list[str], parts: list[JournalRead],
               todo: int, undo_journal: _OpenedOnWrite, ctrl_c: CtrlC, skip: set[tuple[int, int]], whose: str,
               chain: UndoWrites, bar: RowsBar) -> Done:
    """A load's journal written back a window of cells at a time, as the load wrote them
    (writing.undo_windows): its rows read by key, a partition's cells a request."""
    from cqlsh_ext.writing.loop import Done
    from cqlsh_ext.writing.row_loads import RowLoads
    from cqlsh_ext.writing.undo_windows import WindowsUndo, undo_in_windows

    partition_key = [c.name for c in meta.partition_key]
    clustering = [c.name for c in meta.clustering_key]
    loads = RowLoads(ctx.session, parts[0].keyspace, meta.name, partition_key, clustering, list(writers),
                     ctx.consistency)
    named = _Named(bar.out, NAMED_LEFT)
    plan = WindowsUndo(writers, keys, len(partition_key), loads,
                       lambda row, cell, blob: as_written(row, cell, blob, chain), undo_journal,
                       lambda writer, row, path: key_values(writer, keys, row, path), _cell_fields, named,
                       whose, Done())
    note = ctx.say if not bar.shown else (lambda _line: None)
    try:
        return undo_in_windows(plan, _undoable(parts, skip), todo, ctrl_c, bar.advanced, note)
    finally:
        undo_journal.close()
        named.close()


class _Named:
    """The rows left alone said one a line, the first `most` of them (from the writing threads);
    then how many more (the closing line counts each kind)."""

    def __init__(self, out: IO[str], most: int) -> None:
        import threading

        self.out = out
        self.most = most
        self.said = 0
        self.more = 0
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            if self.said < self.most:
                self.said += 1
                print(line, file=self.out)
            else:
                self.more += 1

    def close(self) -> None:
        if self.more:
            print(f"  and {plural(self.more, 'more row')} left alone (counted below)", file=self.out)


def _of(row: JournalRow) -> str:
    """A load's line names its cell's column after the row's key."""
    return "" if row.column is None else f" ({row.column})"


def _cell_fields(row: JournalRow) -> dict[str, object] | None:
    """What an UNDO's own line keeps of a load's line: the cell's column and, where the value it
    writes back expires otherwise than the one it overwrites, that moment (its UNDO goes back the
    other way)."""
    fields: dict[str, object] = {}
    if row.column is not None:
        fields["column"] = row.column
    if row.own_expiry:
        fields["new_expires"] = None if row.expires is None else round(row.expires, 6)
    return fields or None


class _Lazy(Sequence[Any]):
    """The rows of an UNDO, read from the journal as they are written (never all in memory): a
    sequence of known length that each_row walks once, in order."""

    def __init__(self, rows: Callable[[], Iterable[Any]], count: int) -> None:
        self._rows = rows
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Any:
        return iter(self._rows())

    def __getitem__(self, index: Any) -> Any:
        raise TypeError("walked in order only")


class _ValueText:
    """A value as the preview of an unsealed journal shows it: decoded as the display decodes it,
    on one line, cut to VALUE_WIDTH."""

    def __init__(self, ctx: WriteContext) -> None:
        from cqlsh_ext.payload.engine import ValueEngine
        from cqlsh_ext.writing.cell_reads import write_decoding

        self.engine = ValueEngine(cap=write_decoding(ctx.settings).cap)

    def __call__(self, value: bytes, blob: BlobTarget) -> str:
        from cqlsh_ext.common.text import shorten

        if blob.holds_text:
            text = value.decode("utf-8", "replace")
        else:
            view = self.engine.view(value)
            label = "+".join(view.chain)
            text = f"{label}: {view.text}" if view.text is not None and label else \
                view.text if view.text is not None else "0x" + value[:VALUE_WIDTH].hex()
        return shorten(" ".join(text.split()), VALUE_WIDTH)


#: Characters of a value an unsealed journal's preview shows.
VALUE_WIDTH = 72


def _preview(writers: _Writers, keys: list[str], parts: list[JournalRead], todo: int,
             out: IO[str], skip: set[tuple[int, int]], whose: str, chain: UndoWrites,
             shown: _ValueText | None) -> int:
    """How many rows still hold what was written, as it was written (UNDO writes those back), read
    now (at most UNDO_PREVIEW_ROWS of them; every row of an unsealed journal, each one it would
    write shown with its value, `shown`), said on `out`; their count."""
    found: dict[str, list[str]] = {CHANGED: [], REWRITTEN: [], EXPIRED: [], RESTORED: []}
    looked = chained = 0
    conditioned = False
    for part, row in _undoable(parts, skip):
        if looked >= UNDO_PREVIEW_ROWS and shown is None:
            break
        looked += 1
        writer = writers.of(row)
        key = key_values(writer, keys, row, part.path)
        cell = writer.read(key)
        conditioned = conditioned or row.at is None  # rows the journal says were written on a condition
        left = as_written(row, cell, writer.blob, chain)
        text = key_text(dict(zip(keys, key, strict=True))) + _of(row)
        if left is not None:
            found[left].append(text)
            continue
        if row.at is not None and cell.writetime is not None and cell.writetime != row.at:
            chained += 1
        if shown is not None and row.old is not None:  # an unsealed journal's: an edit's or a rewrite's
            say(f"  {text}: back to {len(row.old):,} bytes: {shown(row.old, writer.blob)}", out)
    changed, rewritten, expired, restored = found[CHANGED], found[REWRITTEN], found[EXPIRED], found[RESTORED]
    of = "" if looked == todo else f" of the first {looked:,} rows"
    put_back = f" ({chained:,} as an UNDO of a later journal put them back)" if chained else ""
    done = f"{len(restored):,} already restored (nothing to write); " if restored else ""
    again = f", {len(rewritten):,} written again since with the same bytes (left alone)" if rewritten else ""
    gone = f", {len(expired):,} whose TTL ran out since (nothing to write back)" if expired else ""
    still = looked - len(changed) - len(rewritten) - len(expired) - len(restored)
    say(f"  {still:,}{of} still as {whose} wrote them{put_back}; {done}{len(changed):,} changed since "
        f"{whose} (left alone){again}{gone}", out)
    for text in changed[:PREVIEW_ROWS]:
        say(f"  changed since {whose}: {text}", out)
    for text in rewritten[:PREVIEW_ROWS]:
        say(f"  written again since {whose} with the same bytes: {text}", out)
    if chain.capped:
        say(f"  this table's undo journals hold more than {MAX_CELLS:,} cells written: the older ones were "
            "not looked at (rows they put back are left alone)", out)
    if conditioned:
        say(f"  Rows written on a condition carry no write time of {whose}'s: a later write of the same "
            "bytes expiring at the same moment cannot be told apart from it, and is written back over.", out)
    return still
