"""Doing an edit: the rows read (edit.reading: the plan built from the statement's parts, read as a
payload query reads them), each stored value rewritten in its own chain (edit.rewrite), then either
a preview or, with CONFIRM, each row journaled (edit.journal) and written by the one write
mechanism (edit.write: at the cell's write time + 1 with its TTL kept, then read again; or, where
the server does not allow that, on the condition that the row holds the bytes read).

UNDO writes a journal's old values back the same way, where a row still holds what was written,
with the TTL the journal recorded (the same moment of expiry).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, plural, say, screen_width
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.edit.document import REMOVE, EditRefused, brief
from cqlsh_ext.edit.parse import Edit
from cqlsh_ext.edit.write import CHANGED_SINCE, EXPIRED, EXPIRED_SINCE

if TYPE_CHECKING:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.edit.journal import BlobTarget, Journal, JournalRead, JournalRow
    from cqlsh_ext.edit.reading import CellRead
    from cqlsh_ext.edit.write import CellWriter, Mechanism, Written
    from cqlsh_ext.upstream.protocol import Shell

LABEL = "edit"
#: Rows whose `path: old -> new` lines a preview shows.
PREVIEW_ROWS = 3
#: A write progress line every this many rows.
PROGRESS_EVERY = 500
#: Rows an UNDO preview reads to tell which still hold what was written (a rewrite's journal may
#: hold millions: the preview says it looked at these).
UNDO_PREVIEW_ROWS = 10_000


@dataclass
class RowChange:
    """A row to write: its key (name -> value as the driver gives it), the bytes read, the bytes
    to write (as the column holds them: bytes, or text), the changes, and the cell's write time and
    moment of expiry as read."""

    key: dict[str, Any]
    old: Any
    new: Any
    changes: list[tuple[str, Any, Any]]
    writetime: int | None = None
    ttl: int | None = None
    expires: int | None = None


@dataclass
class Outcome:
    found: int = 0
    unchanged: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    rows: list[RowChange] = field(default_factory=list)
    #: How the new values' outer headers differ from the stored ones' (rewrite.EditedValue.notes).
    notes: dict[str, int] = field(default_factory=dict)


def _quote(name: str) -> str:
    from cqlsh_ext.query.grammar import quote

    return quote(name)


def key_columns(meta: Any, column: str) -> list[str]:
    """The columns that name the row a value of `column` sits in: the primary key, or the
    partition key alone for a static column (one value per partition)."""
    if getattr(meta.columns[column], "is_static", False):
        return [c.name for c in meta.partition_key]
    return [c.name for c in (*meta.partition_key, *meta.clustering_key)]


def edit_decoding(shell: Shell) -> Any:
    """How an edit reads values: the display's decoding, in auto mode when the display is off."""
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.settings import NONE

    decoding = shell.settings.display.decoding()
    return Decoding("auto", decoding.cap, decoding.settings) if decoding.mode == NONE else decoding


def run_edit(shell: Shell, edit: Edit, keyspace: str, meta: Any) -> None:
    """Preview or write the edit (see the module doc); QueryError for what is refused before reading."""
    from cqlsh_ext.edit import reading, write
    from cqlsh_ext.edit.journal import BlobTarget
    from cqlsh_ext.reading.resolve import table_target

    blob = BlobTarget(edit.column, edit.access, edit.container, edit.holds_text)
    if edit.container is not None and str(meta.columns[edit.column].cql_type).startswith("frozen<"):
        raise QueryError(f"{edit.column} is frozen: it is written whole, and {blob}'s documents are not "
                         "edited here")
    keys = key_columns(meta, edit.column)
    if not edit.allow_filtering and not set(keys) <= edit.where.restricted:
        raise QueryError("the WHERE names no full primary key, so this edits the rows a scan finds: "
                         "add ALLOW FILTERING")
    mechanism = write.choose(shell, keyspace, meta.name, blob, keys)
    target = table_target(shell.conn.metadata, keyspace, meta.name)
    if target is None:
        raise QueryError(f"unknown table {keyspace}.{meta.name}")
    schema = target.schema
    plan = reading.plan_for(keyspace, meta, schema, blob, keys, edit.where, edit.allow_filtering,
                            edit.allow_filtering and edit.confirm, mechanism)
    read = reading.read_cells(shell, plan, schema, keyspace, meta, keys, blob, mechanism)
    if read is None:
        return
    summary, pages = read
    outcome = _outcome(shell, edit, blob, keyspace, meta, pages)
    if summary.error:
        shell.printerr(f"{LABEL}: the reading failed ({summary.error}); nothing was written")
        return
    stopped = " (the reading was stopped by Ctrl-C: these are the rows found before)" if summary.interrupted \
        else ""
    asking = not edit.confirm and bool(outcome.rows) and not summary.interrupted and _at_terminal(shell)
    # A question follows: the preview goes to the terminal with it, not to the pager that holds
    # standard output until the statement ends.
    out = sys.stderr if asking else sys.stdout
    _summary(shell, edit, outcome, stopped, mechanism, out)
    if not edit.confirm:
        if not outcome.rows:
            return
        if not asking or not _asked(f"Write {plural(len(outcome.rows), 'row')}? [y/N] "):
            print(f"Nothing written: add CONFIRM at the end of the statement to write "
                  f"{plural(len(outcome.rows), 'row')}.")
            return
    if summary.interrupted:
        print("Nothing written: the reading was stopped.")
        return
    if outcome.rows:
        _write(shell, keyspace, meta, blob, keys, mechanism, outcome.rows)


def _at_terminal(shell: Shell) -> bool:
    """The interactive shell, which asks (a script is never asked: CONFIRM writes)."""
    return sys.stdin.isatty() and bool(getattr(shell, "tty", False))


def _asked(question: str) -> bool:
    from cqlsh_ext.common.ask import yes

    return yes(question)


def _outcome(shell: Shell, edit: Edit, blob: BlobTarget, keyspace: str, meta: Any,
             pages: Iterable[list[CellRead]]) -> Outcome:
    from cqlsh_ext.edit.rewrite import rewrite
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.places import Engines, ValuePlace
    from cqlsh_ext.payload.view import TEXT_READING

    decoding = edit_decoding(shell)
    is_text = blob.holds_text
    # A text column's value is its text: read as text whatever the mode guesses of its bytes.
    steps = ("value",) if blob.container == "map" else (str(blob.access),) if blob.container else ()
    engine = ValueEngine(cap=decoding.cap, spec=TEXT_READING) if is_text else \
        Engines(decoding)(ValuePlace(keyspace, meta.name, edit.column, steps))
    outcome = Outcome()
    for page in pages:
        for cell in page:
            outcome.found += 1
            stored = cell.stored
            if stored is None:
                _refuse(outcome, "null: no document to edit")
                continue
            raw = stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)
            try:
                done = rewrite(raw, engine, edit.ops, decoding.cap)
            except EditRefused as err:
                _refuse(outcome, str(err))
                continue
            except Exception as err:  # the boundary of one value: a writer's or reader's surprise
                _refuse(outcome, f"not rewritten here ({type(err).__name__}: {str(err)[:80]})")
                continue
            if done is None:
                outcome.unchanged += 1
                continue
            new: Any = done.value
            if is_text:
                try:
                    new = done.value.decode("utf-8")
                except UnicodeDecodeError:
                    _refuse(outcome, "the new value is not text, and the column is")
                    continue
            outcome.rows.append(RowChange(cell.key, stored, new, done.changes, cell.writetime, cell.ttl,
                                          cell.expires))
            for note in done.notes:
                outcome.notes[note] = outcome.notes.get(note, 0) + 1
    return outcome


def _refuse(outcome: Outcome, reason: str) -> None:
    outcome.refused[reason] = outcome.refused.get(reason, 0) + 1


def _summary(shell: Shell, edit: Edit, outcome: Outcome, stopped: str, mechanism: Mechanism,
             out: IO[str]) -> None:
    verb = "would change" if not edit.confirm else "to change"
    parts = [f"{plural(outcome.found, 'row')} found{stopped}: {len(outcome.rows):,} {verb}"]
    if outcome.unchanged:
        parts.append(f"{outcome.unchanged:,} already as asked")
    refused = sum(outcome.refused.values())
    if refused:
        parts.append(f"{refused:,} refused")
    say(f"{LABEL}: " + ", ".join(parts), out)
    for reason, n in sorted(outcome.refused.items(), key=lambda item: -item[1]):
        say(f"  refused {plural(n, 'row')}: {reason}", out)
    for note, n in sorted(outcome.notes.items(), key=lambda item: -item[1]):
        if note.endswith("kept as they were"):
            say(f"  {plural(n, 'row')}: {note}", out)
        else:
            say(f"  header of {plural(n, 'row')} as the reference producer writes it: {note}", out)
    for change in outcome.rows[:PREVIEW_ROWS]:
        say("  " + _key_text(change.key), out)
        for path, old, new in change.changes:
            say(f"    {path}: {_side(old)} -> {_side(new)}", out)
    if len(outcome.rows) > PREVIEW_ROWS:
        say(f"  ... and {plural(len(outcome.rows) - PREVIEW_ROWS, 'more row')}", out)
    if not outcome.rows:
        return
    expiring = sum(1 for row in outcome.rows if row.ttl is not None)
    if expiring:
        say(f"  TTL kept: the new values expire when the old ones would have ({plural(expiring, 'row')} "
             "with a TTL: the seconds left when read)", out)
    _units(shell, outcome.rows, mechanism, out)
    say(mechanism.promise(), out)


def _units(shell: Shell, rows: Sequence[RowChange], mechanism: Mechanism, out: IO[str]) -> None:
    """On Amazon Keyspaces, the write units the writes use: a write by its new value's size as
    COMPRESSION STATS counts a row (a failed condition costs the stored row's size), and the reads
    after timestamped writes."""
    from cqlsh_ext.reading.context import shell_context
    from cqlsh_ext.scanning.capacity import rcu, wcu
    from cqlsh_ext.scanning.cost import pricing

    if not pricing(shell_context(shell)).keyspaces:
        return
    units = sum(wcu(len(_raw(row.new))) for row in rows)
    if mechanism.timestamped:
        reads = sum(rcu(len(_raw(row.new))) for row in rows)
        say(f"  Amazon Keyspaces: about {plural(units, 'write unit')} for {plural(len(rows), 'write')} (1 "
             f"per started KB of each new value), {plural(reads, 'read unit')} to read each row again", out)
        return
    writes = plural(len(rows), "conditional write")
    say(f"  Amazon Keyspaces: about {plural(units, 'write unit')} for {writes} (1 per started KB of each "
         "new value)", out)


def _side(value: Any) -> str:
    return "(none)" if value is REMOVE else brief(value)


def _key_text(key: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} = {value!r}" if isinstance(value, str) else f"{name} = {value}"
                     for name, value in key.items())


def _raw(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def journal_directory(shell: Shell) -> str:
    """--journal-dir, or a `journal` directory beside the shell's history."""
    from cqlsh_ext.edit.journal import journal_dir
    from cqlsh_ext.upstream import seams

    return shell.settings.display.journal_dir or journal_dir(seams.import_cqlshmain(None).HISTORY)


def open_journal(shell: Shell, keyspace: str, table: str, blob: BlobTarget, kind: str, mechanism: Mechanism,
                 extra: Mapping[str, object] | None = None) -> Journal:
    """A new journal in the shell's journal directory, its path said (and a word when the
    directory had to be closed to others); JournalError."""
    from cqlsh_ext.edit.journal import Journal

    journal = Journal(journal_directory(shell), keyspace, table, blob, kind, mechanism.kind, extra)
    if journal.note:
        say(f"{LABEL}: {journal.note}", sys.stderr)
    say(f"Journal: {journal.path}", sys.stdout)  # wrapped at words, the path at a '/'
    return journal


def _write(shell: Shell, keyspace: str, meta: Any, blob: BlobTarget, keys: list[str], mechanism: Mechanism,
           rows: list[RowChange]) -> None:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.edit.write import CellWriter

    with CtrlC(on_first=_stopping) as ctrl_c:  # from before the journal is said: a Ctrl-C then stops first
        try:
            writer = CellWriter.of(shell, keyspace, meta, blob, keys, mechanism)
            journal = open_journal(shell, keyspace, meta.name, blob, "edit", mechanism)
        except KeyboardInterrupt:
            shell.printerr(f"{LABEL}: stopped by a second Ctrl-C before the first row; nothing was written")
            raise
        try:
            done = each_row(rows, lambda n, row: _write_one(writer, journal, n, row, keys),
                            lambda row: _key_text(row.key), ctrl_c)
        finally:
            journal.close()
    closing(shell, done, f"{plural(done.written, 'row')} written", CHANGED_SINCE,
            f"Undo: UNDO '{journal.path}' CONFIRM")


def _write_one(writer: CellWriter, journal: Journal, n: int, row: RowChange, keys: list[str]) -> Written:
    key = [row.key[k] for k in keys]
    journal.before(n, dict(zip(keys, writer.serialized(key), strict=True)), _raw(row.old), _raw(row.new),
                   row.ttl, row.expires, row.writetime, writer.timestamp(row.writetime))
    written = _sent(writer, key, row.old, row.new, row.writetime, row.expires, _key_text(row.key))
    journal.after(n, written.applied)
    return written


def _sent(writer: CellWriter, key: Sequence[Any], expected: Any, new: Any, writetime: int | None,
          expires: int | None, key_text: str) -> Written:
    """One write through the mechanism; a failure said with the row's key (RowFailed)."""
    from cqlsh_ext.edit.write import WriteFailed

    try:
        written = writer.write(key, expected, new, writetime, expires)
    except WriteFailed as err:
        raise RowFailed(key_text, str(err)) from None
    if not written.applied:
        print(f"  {key_text}: {EXPIRED_SINCE if written.outcome == EXPIRED else CHANGED_SINCE}")
    return written


class RowFailed(Exception):
    """A row's write failed: the server's error, and the row's key as the lines name it."""

    def __init__(self, key: str, error: str) -> None:
        super().__init__(key)
        self.key = key
        self.error = error


@dataclass
class Done:
    """What a run of writes did: rows that hold the new value, rows left alone (changed since they
    were read; their TTL ran out), rows not tried because it stopped (Ctrl-C, a write that failed,
    the journal that could not be written: `stop` says which and why)."""

    written: int = 0
    changed: int = 0
    expired: int = 0
    left: int = 0
    stop: str = ""
    #: Stopped by a second Ctrl-C, or by a journal or a write that failed: the statement failed.
    failed: bool = False
    #: The second Ctrl-C that ended it, raised again once the closing line is said.
    interrupt: BaseException | None = None

    def add(self, written: Written) -> None:
        if written.applied:
            self.written += 1
        elif written.outcome == EXPIRED:
            self.expired += 1
        else:
            self.changed += 1


#: Rows an UNDO writes at once (a rewrite's journal may hold millions).
UNDO_AT_ONCE = 8


def each_row(rows: Sequence[Any], one: Callable[[int, Any], Written], key_text: Callable[[Any], str],
             ctrl_c: CtrlC | None = None, label: str = LABEL, at_once: int = 1) -> Done:
    """`one` on each row, in order. Ctrl-C stops between rows; a second one stops at once (the row
    in flight is journaled: UNDO reads it back if it was written). A write that fails stops it (a
    timeout may still apply: its outcome is the server's to tell, the journal holds its old
    value), and so does the journal when it cannot be written (a full disk: the row is not sent)."""
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.edit.journal import JournalError

    done = Done()
    with CtrlC(on_first=_stopping) if ctrl_c is None else _Entered(ctrl_c) as ctrl_c:
        if at_once > 1:
            return _at_once(rows, one, ctrl_c, label, at_once, done)
        for n, row in enumerate(rows):
            if ctrl_c.pressed:
                done.left = len(rows) - n
                done.stop = f"stopped by Ctrl-C, {plural(done.left, 'row')} not written"
                return done
            try:
                written = one(n, row)
                done.add(written)
                if len(rows) > PROGRESS_EVERY and (n + 1) % PROGRESS_EVERY == 0:
                    print(f"{label}: {n + 1:,} of {len(rows):,} rows done", file=sys.stderr)
            except RowFailed as err:
                done.left = len(rows) - n - 1
                done.stop = (f"stopped at {err.key} (its write failed, whether it applied is unknown: "
                             f"{err.error}), {plural(done.left, 'more row')} not written")
                done.failed = True
                return done
            except JournalError as err:
                done.left = len(rows) - n
                done.stop = f"stopped: {err}; {plural(done.left, 'row')} not written"
                done.failed = True
                return done
            except KeyboardInterrupt as err:
                done.left = len(rows) - n - 1
                done.stop = (f"stopped by a second Ctrl-C while writing {key_text(row)} (whether it applied "
                             f"is unknown: UNDO checks it), {plural(done.left, 'more row')} not written")
                done.failed, done.interrupt = True, err
                return done
    return done


def _at_once(rows: Sequence[Any], one: Callable[[int, Any], Written], ctrl_c: CtrlC, label: str,
             at_once: int, done: Done) -> Done:
    """each_row with `at_once` rows written at a time, on threads, in journal order: the same stops
    (Ctrl-C sends no more and waits for those in flight; a second one leaves them; a failure stops
    the sending)."""
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    from cqlsh_ext.edit.journal import JournalError

    pending: set[Future[Written]] = set()
    sent = finished = 0

    def settle(futures: set[Future[Written]]) -> None:
        nonlocal finished
        for future in futures:
            try:
                done.add(future.result())
            except RowFailed as err:
                done.failed = True
                done.stop = done.stop or (f"stopped at {err.key} (its write failed, whether it applied is "
                                          f"unknown: {err.error})")
            except JournalError as err:
                done.failed = True
                done.stop = done.stop or f"stopped: {err}"
            finished += 1
            if len(rows) > PROGRESS_EVERY and finished % PROGRESS_EVERY == 0:
                print(f"{label}: {finished:,} of {len(rows):,} rows done", file=sys.stderr)

    pool = ThreadPoolExecutor(max_workers=at_once, thread_name_prefix=label)
    try:
        for n, row in enumerate(rows):
            if ctrl_c.pressed or done.failed:
                break
            while len(pending) >= at_once:
                ready, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                settle(ready)
            pending.add(pool.submit(one, n, row))
            sent += 1
        while pending:
            ready, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            settle(ready)
    except KeyboardInterrupt as err:
        pool.shutdown(wait=False, cancel_futures=True)
        done.left = len(rows) - sent
        done.stop = (f"stopped by a second Ctrl-C with {plural(len(pending), 'write')} in flight (whether "
                     f"they applied is unknown: UNDO checks them), {plural(done.left, 'more row')} not "
                     "written")
        done.failed, done.interrupt = True, err
        return done
    pool.shutdown(wait=True)
    done.left = len(rows) - sent
    if done.left:
        what = done.stop or "stopped by Ctrl-C after the writes in flight"
        done.stop = f"{what}, {plural(done.left, 'more row')} not written"
    return done


def _stopping() -> None:
    """Said at the first Ctrl-C, from the signal handler (one write to the descriptor: never into
    a buffered write the handler interrupted)."""
    import os

    os.write(2, b"\nCtrl-C: stopping after the row being written (Ctrl-C again stops at once)\n")


class _Entered:
    """A CtrlC the caller entered already, as a context that leaves it to the caller."""

    def __init__(self, ctrl_c: CtrlC) -> None:
        self.ctrl_c = ctrl_c

    def __enter__(self) -> CtrlC:
        return self.ctrl_c

    def __exit__(self, *exc: object) -> None:
        return None


def closing(shell: Shell, done: Done, head: str, changed_words: str, undo: str) -> None:
    """The closing line: what was written, what was left alone, why it stopped, how to undo it. A
    run that failed says it on stderr (a script's exit status is then 2), and a second Ctrl-C goes
    on to the shell once it is said."""
    line = head
    if done.changed:
        line += f", {done.changed:,} {changed_words}"
    if done.expired:
        line += f", {done.expired:,} {EXPIRED_SINCE}"
    line += (f"; {done.stop}" if done.stop else "") + f". {undo}"
    if done.failed:
        shell.printerr(message(line, screen_width(sys.stderr)))
    else:
        say(line, sys.stdout)
    if done.interrupt is not None:
        raise done.interrupt


# ------------------------------------------------------------------------------------- UNDO


def read_journals(path: str) -> list[JournalRead]:
    """The journal at `path`, or every journal part in a directory (a rewrite run on Spark writes
    one part per task), each read as one (edit.journal.read_journal); they must name one table and
    blob. EditRefused."""
    import os
    import re

    from cqlsh_ext.edit.journal import read_journal

    path = os.path.expanduser(path)
    if "\n" in path and not os.path.exists(path):
        # Copied from a message that broke the path after a '/' (the row's break and indent came
        # along): no journal this shell names holds a newline.
        path = re.sub(r"\n[ \t]*", "", path)
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl"))[:100_000]
        if not names:
            raise EditRefused(f"{path} is a directory without journal parts (*.jsonl)")
        parts = [read_journal(os.path.join(path, name)) for name in names]
    else:
        parts = [read_journal(path)]
    first = parts[0]
    for part in parts[1:]:
        if (part.keyspace, part.table, part.blob) != (first.keyspace, first.table, first.blob):
            raise EditRefused(f"{part.path} journals {part.keyspace}.{part.table}.{part.blob}, not "
                              f"{first.keyspace}.{first.table}.{first.blob} as {first.path} does")
    return parts


def key_values(writer: CellWriter, keys: Sequence[str], row: JournalRow, path: str) -> list[Any]:
    """A journal row's key as the driver's values; EditRefused naming the line and the column when
    its bytes are no value of the column's type (a journal is an argument: it may be changed)."""
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
            raise EditRefused(f"{path}: line {row.line:,}: the key's {name} is {len(data)} bytes that are no "
                              f"{typename}{need}") from None
    return out


#: Bytes a serialized value of these CQL types takes: what a journal's key must hold.
_FIXED_SIZES = {"int": 4, "bigint": 8, "smallint": 2, "tinyint": 1, "uuid": 16, "timeuuid": 16,
                "timestamp": 8, "double": 8, "float": 4, "boolean": 1, "date": 4, "time": 8, "counter": 8}


def run_undo(shell: Shell, path: str, confirm: bool) -> None:
    """Preview or write a journal's old values back, each where the row still holds what was
    written, with the TTL the journal recorded."""
    from cqlsh_ext.edit import write
    from cqlsh_ext.edit.write import CellWriter
    from cqlsh_ext.reading.resolve import find_table

    parts = read_journals(path)
    first = parts[0]
    found = find_table(shell.conn, None, first.keyspace, first.table, refresh=True)
    meta = found.meta if found is not None else None
    blob = first.blob
    if meta is None or blob.column not in meta.columns:
        raise EditRefused(f"{first.keyspace}.{first.table}.{blob.column} is not in the schema")
    keys = key_columns(meta, blob.column)
    for part in parts:
        for row in part.rows():
            if set(row.key) != set(keys):
                raise EditRefused(f"{part.path}: line {row.line:,}: the journal's keys are not "
                                  f"{first.keyspace}.{first.table}'s primary key")
            break
    skip = _superseded(parts)
    todo = sum(1 for part in parts for applied in part.outcomes.values() if applied is not False) - len(skip)
    whose = {"rewrite": "the rewrite", "undo": "the undo"}.get(first.kind, "the edit")
    asking = not confirm and bool(todo) and _at_terminal(shell)
    out = sys.stderr if asking else sys.stdout  # with the question, not held by the pager
    say(f"undo: {plural(todo, 'row')} of {first.keyspace}.{first.table}.{blob} to write back"
         f"{'' if confirm or asking else ' (add CONFIRM to write them)'}", out)
    for part in parts:
        if part.torn is not None:
            say(f"undo: {part.path}: {part.torn_text()}", out)
    if not todo:
        return
    mechanism = write.choose(shell, first.keyspace, meta.name, blob, keys)
    writer = CellWriter.of(shell, first.keyspace, meta, blob, keys, mechanism)
    if not confirm:
        still = _undo_preview(writer, keys, parts, todo, out, skip, whose)
        say(mechanism.promise("what was written"), out)
        if not (asking and still and _asked(f"Write {plural(todo, 'row')} back? [y/N] ")):
            if asking:
                print("Nothing written: add CONFIRM to write them back.")
            return
    from cqlsh_ext.common.interrupt import CtrlC

    with CtrlC(on_first=_stopping) as ctrl_c:
        try:
            undo_journal = open_journal(shell, first.keyspace, meta.name, blob, "undo", mechanism)
        except KeyboardInterrupt:
            shell.printerr("undo: stopped by a second Ctrl-C before the first row; nothing was written")
            raise
        done = _undo_rows(shell, writer, keys, parts, todo, undo_journal, ctrl_c, skip, whose)
    closing(shell, done, f"{plural(done.written, 'row')} written back", f"changed since {whose}: left alone",
            f"Undo the undo: UNDO '{undo_journal.path}' CONFIRM")


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
    unknown: dict[tuple[tuple[str, bytes], ...], list[tuple[int, int]]] = {}
    for i, part in enumerate(parts):
        if None not in part.outcomes.values():
            continue
        for row in part.rows():
            if row.applied is None:
                unknown.setdefault(tuple(sorted(row.key.items())), []).append((i, row.line))
    if not unknown:
        return set()
    last: dict[tuple[tuple[str, bytes], ...], tuple[int, int]] = {}
    for i, part in enumerate(parts):
        for row in part.rows():
            key = tuple(sorted(row.key.items()))
            if key in unknown:
                last[key] = (i, row.line)
    return {place for key, places in unknown.items() for place in places if place != last[key]}


def _undo_rows(shell: Shell, writer: CellWriter, keys: list[str], parts: list[JournalRead], todo: int,
               undo_journal: Journal, ctrl_c: CtrlC, skip: set[tuple[int, int]], whose: str) -> Done:
    """Each journaled row written back where it holds what was written (journaled in turn)."""
    from cqlsh_ext.edit import write

    blob = writer.blob

    def rows() -> Iterable[tuple[JournalRead, JournalRow]]:
        return _undoable(parts, skip)

    def one(n: int, item: tuple[JournalRead, JournalRow]) -> Written:
        part, row = item
        key = key_values(writer, keys, row, part.path)
        text = _key_text(dict(zip(keys, key, strict=True)))
        old, new = _column_value(row.old, blob), _column_value(row.new, blob)
        cell = writer.read(key)
        if not write.same(cell.value, new):
            print(f"  {text}: changed since {whose}: left alone")
            undo_journal.before(n, row.key, row.new, row.old, None, row.expires, cell.writetime, None)
            undo_journal.after(n, False)
            return write.Written(write.CHANGED)
        undo_journal.before(n, row.key, row.new, row.old, cell.ttl, row.expires, cell.writetime,
                            writer.timestamp(cell.writetime))
        written = _sent(writer, key, new, old, cell.writetime, row.expires, text)
        undo_journal.after(n, written.applied)
        return written

    try:
        return each_row(_Lazy(rows, todo), one, lambda item: _key_text(item[1].key), ctrl_c, "undo",
                        UNDO_AT_ONCE)
    finally:
        undo_journal.close()


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


def _column_value(value: bytes, blob: BlobTarget) -> Any:
    return value.decode("utf-8") if blob.holds_text else value


def _undo_preview(writer: CellWriter, keys: list[str], parts: list[JournalRead], todo: int,
                  out: IO[str], skip: set[tuple[int, int]], whose: str) -> int:
    """How many rows still hold what was written (UNDO writes those back), read now (at most
    UNDO_PREVIEW_ROWS of them), said on `out`; their count."""
    from cqlsh_ext.edit.write import same

    changed: list[str] = []
    looked = 0
    for part, row in _undoable(parts, skip):
        if looked >= UNDO_PREVIEW_ROWS:
            break
        looked += 1
        key = key_values(writer, keys, row, part.path)
        if not same(writer.read(key).value, _column_value(row.new, writer.blob)):
            changed.append(_key_text(dict(zip(keys, key, strict=True))))
    of = "" if looked == todo else f" of the first {looked:,} rows"
    say(f"  {looked - len(changed):,}{of} still as {whose} wrote them; {len(changed):,} changed since "
         f"{whose} (left alone)", out)
    for text in changed[:PREVIEW_ROWS]:
        say(f"  changed since {whose}: {text}", out)
    return looked - len(changed)
