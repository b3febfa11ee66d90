"""Doing an edit: the rows read as a payload query reads them (payload_select.command.read_answer:
the WHERE's payload conditions, ALLOW FILTERING, the whole-table plan, progress, Ctrl-C), each
stored value rewritten in its own chain (edit.rewrite), then either a preview or, with CONFIRM,
each row journaled and written with a lightweight transaction on the bytes read.

UNDO writes a journal's old values back the same way, each conditioned on the value the edit
wrote.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural, say
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.edit.document import REMOVE, EditRefused, brief
from cqlsh_ext.edit.parse import Edit

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Shell

LABEL = "edit"
#: Rows whose `path: old -> new` lines a preview shows.
PREVIEW_ROWS = 3
#: A write progress line every this many rows.
PROGRESS_EVERY = 500
CHANGED_SINCE = "changed since it was read: left alone"


@dataclass
class RowChange:
    """A row to write: its key (name -> value as the driver gives it), the bytes read, the bytes
    to write (as the column holds them: bytes, or text) and the changes."""

    key: dict[str, Any]
    old: Any
    new: Any
    changes: list[tuple[str, Any, Any]]


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


def _restricted(where: str) -> set[str]:
    """Columns the WHERE restricts by = or IN, as written (top-level conditions joined by AND)."""
    from cqlsh_ext.cql.lexer import lexed

    tokens = lexed(where).tokens
    out: set[str] = set()
    at_start = True
    depth = 0
    for i, tok in enumerate(tokens[:-1]):
        if tok.kind == "punct" and tok.value == "(":
            depth += 1
        elif tok.kind == "punct" and tok.value == ")":
            depth -= 1
        if at_start and tok.kind in ("word", "qname") and (tokens[i + 1].value == "="
                                                            or tokens[i + 1].value.lower() == "in"):
            out.add(tok.value.lower() if tok.kind == "word" else tok.value)
        at_start = depth == 0 and tok.kind == "word" and tok.value.lower() == "and"
    return out


def run_edit(shell: Shell, edit: Edit, keyspace: str, meta: Any) -> None:
    """Preview or write the edit (see the module doc); QueryError for what is refused before reading."""
    from cqlsh_ext.edit.journal import BlobTarget
    from cqlsh_ext.payload_select.command import read_answer
    from cqlsh_ext.payload_select.schema import schema_of
    from cqlsh_ext.query.grammar import parse

    blob = BlobTarget(edit.column, edit.access, edit.container, edit.holds_text)
    if edit.container is not None and str(meta.columns[edit.column].cql_type).startswith("frozen<"):
        raise QueryError(f"{edit.column} is frozen: it is written whole, and {blob}'s documents are not "
                         "edited here")
    keys = key_columns(meta, edit.column)
    if not edit.allow_filtering and not set(keys) <= _restricted(edit.where):
        raise QueryError("the WHERE names no full primary key, so this edits the rows a scan finds: "
                         "add ALLOW FILTERING")
    table = f"{_quote(keyspace)}.{_quote(meta.name)}"
    columns = ", ".join(_quote(c) for c in [*keys, edit.column])
    select = f"SELECT {columns} FROM {table} WHERE {edit.where}"
    if edit.allow_filtering:
        select += " ALLOW FILTERING" + (" CONFIRM" if edit.confirm else "")
    schema = schema_of(shell, keyspace, meta)
    plan = parse(select, schema, plain=True)
    if plan is None:
        raise QueryError("nothing to read")
    answer = read_answer(shell, plan, schema, keyspace, meta, 500, 500)
    if answer is None:
        return
    reading, _names, _types, pages = answer
    outcome = _outcome(shell, edit, blob, keyspace, meta, keys, pages)
    if reading.error:
        shell.printerr(f"{LABEL}: the reading failed ({reading.error}); nothing was written")
        return
    stopped = " (the reading was stopped by Ctrl-C: these are the rows found before)" if reading.interrupted \
        else ""
    asking = not edit.confirm and bool(outcome.rows) and not reading.interrupted and _at_terminal(shell)
    # A question follows: the preview goes to the terminal with it, not to the pager that holds
    # standard output until the statement ends.
    _summary(shell, edit, outcome, stopped, sys.stderr if asking else sys.stdout)
    if not edit.confirm:
        if not outcome.rows:
            return
        if not asking or not _asked(f"Write {plural(len(outcome.rows), 'row')}? [y/N] "):
            print(f"Nothing written: add CONFIRM at the end of the statement to write "
                  f"{plural(len(outcome.rows), 'row')}.")
            return
    if reading.interrupted:
        print("Nothing written: the reading was stopped.")
        return
    if outcome.rows:
        _write(shell, keyspace, meta, blob, keys, outcome.rows)


def _at_terminal(shell: Shell) -> bool:
    """The interactive shell, which asks (a script is never asked: CONFIRM writes)."""
    return sys.stdin.isatty() and bool(getattr(shell, "tty", False))


def _asked(question: str) -> bool:
    from cqlsh_ext.common.ask import yes

    return yes(question)


def _outcome(shell: Shell, edit: Edit, blob: Any, keyspace: str, meta: Any, keys: list[str],
             pages: Any) -> Outcome:
    from cqlsh_ext.edit.rewrite import rewrite
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace
    from cqlsh_ext.payload.view import TEXT_READING, BlobView
    from cqlsh_ext.settings import NONE

    display = shell.settings.display
    decoding = display.decoding()
    if decoding.mode == NONE:  # the display is off; the edit still reads values as auto mode does
        decoding = Decoding("auto", decoding.cap, decoding.settings)
    is_text = blob.holds_text
    # A text column's value is its text: read as text whatever the mode guesses of its bytes.
    steps = ("value",) if blob.container == "map" else (str(blob.access),) if blob.container else ()
    engine = ValueEngine(cap=decoding.cap, spec=TEXT_READING) if is_text else \
        Engines(decoding)(ValuePlace(keyspace, meta.name, edit.column, steps))
    outcome = Outcome()
    seen: set[tuple[Any, ...]] = set()
    for page in pages:
        for row in page:
            if len(keys) < len(meta.primary_key):  # a static column: its partition's rows share it
                if tuple(row[:-1]) in seen:
                    continue
                seen.add(tuple(row[:-1]))
            outcome.found += 1
            stored = _inside(row[-1], blob)
            if isinstance(stored, BlobView):
                stored = stored.stored
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
            outcome.rows.append(RowChange(dict(zip(keys, row[:-1], strict=True)), stored, new, done.changes))
            for note in done.notes:
                outcome.notes[note] = outcome.notes.get(note, 0) + 1
    return outcome


def _inside(value: Any, blob: Any) -> Any:
    """The blob's value in the column's: a map of blobs' value by its key, a UDT's field."""
    if value is None or blob.container is None:
        return value
    if blob.container == "map":
        return value.get(blob.access)
    return getattr(value, str(blob.access), None)


def _refuse(outcome: Outcome, reason: str) -> None:
    outcome.refused[reason] = outcome.refused.get(reason, 0) + 1


def _summary(shell: Shell, edit: Edit, outcome: Outcome, stopped: str, out: IO[str]) -> None:
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
        say(f"  header of {plural(n, 'row')} as the reference producer writes it: {note}", out)
    for change in outcome.rows[:PREVIEW_ROWS]:
        say("  " + _key_text(change.key), out)
        for path, old, new in change.changes:
            say(f"    {path}: {_side(old)} -> {_side(new)}", out)
    if len(outcome.rows) > PREVIEW_ROWS:
        say(f"  ... and {plural(len(outcome.rows) - PREVIEW_ROWS, 'more row')}", out)
    if outcome.rows:
        _units(shell, outcome.rows, out)


def _units(shell: Shell, rows: Sequence[RowChange], out: IO[str]) -> None:
    """On Amazon Keyspaces, the write units the conditional writes use: a write by its new value's
    size as COMPRESSION STATS counts a row (an LWT costs what a write does; one whose condition
    fails, the stored row's size)."""
    from cqlsh_ext.scanning.capacity import wcu
    from cqlsh_ext.scanning.cost import pricing

    if not pricing(shell).keyspaces:
        return
    units = sum(wcu(len(_raw(row.new))) for row in rows)
    writes = plural(len(rows), "conditional write")
    print(f"  Amazon Keyspaces: about {plural(units, 'write unit')} for {writes} (1 per started KB of each "
          "new value)", file=out)


def _side(value: Any) -> str:
    return "(none)" if value is REMOVE else brief(value)


def _key_text(key: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} = {value!r}" if isinstance(value, str) else f"{name} = {value}"
                     for name, value in key.items())


@dataclass
class _Writer:
    """A prepared conditional write: SET column = new WHERE key IF column = expected."""

    shell: Shell
    prepared: Any
    #: The driver's types of the key's bind markers, in key order.
    key_types: list[Any]
    #: The conditions' serial consistency: the shell's, LOCAL_SERIAL on Amazon Keyspaces (whose
    #: writes are all LOCAL_QUORUM, in one region).
    serial: Any = None

    #: The map key bound before the value and before the condition's (a map of blobs), else none.
    element: tuple[Any, ...] = ()

    @classmethod
    def of(cls, shell: Shell, keyspace: str, meta: Any, blob: Any, keys: Sequence[str]) -> _Writer:
        where = " AND ".join(f"{_quote(k)} = ?" for k in keys)
        target = _quote(blob.column)
        if blob.container == "map":
            target += "[?]"
        elif blob.container == "udt":
            target += "." + _quote(str(blob.access))
        text = (f"UPDATE {_quote(keyspace)}.{_quote(meta.name)} SET {target} = ? WHERE {where} "
                f"IF {target} = ?")
        element: tuple[Any, ...] = (blob.access,) if blob.container == "map" else ()
        from cassandra import ConsistencyLevel

        from cqlsh_ext.scanning.cost import pricing

        prepared = shell.session.prepare(text)
        first = len(element) + 1
        types = [c[3] for c in prepared.column_metadata[first:first + len(keys)]]
        serial = ConsistencyLevel.LOCAL_SERIAL if pricing(shell).keyspaces else shell.serial_consistency_level
        return cls(shell, prepared, types, serial, element)

    @property
    def protocol(self) -> int:
        return int(self.shell.session.cluster.protocol_version)

    def serialized(self, key: Sequence[Any]) -> list[bytes]:
        return [t.to_binary(v, self.protocol) for t, v in zip(self.key_types, key, strict=True)]

    def values(self, serialized: Sequence[bytes]) -> list[Any]:
        return [t.from_binary(b, self.protocol) for t, b in zip(self.key_types, serialized, strict=True)]

    def write(self, new: Any, key: Sequence[Any], expected: Any) -> bool:
        """Whether the server applied it (False: the value was not `expected`)."""
        from cassandra.query import BoundStatement

        shell = self.shell
        bound = BoundStatement(self.prepared, consistency_level=shell.consistency_level,
                               serial_consistency_level=self.serial)
        bound.bind([*self.element, new, *key, *self.element, expected])
        row = shell.session.execute(bound).one()
        # The shell's sessions make rows dicts: the driver's was_applied cannot read those.
        return bool(row["[applied]"] if isinstance(row, Mapping) else row[0])


def _write(shell: Shell, keyspace: str, meta: Any, blob: Any, keys: list[str],
           rows: list[RowChange]) -> None:
    from cqlsh_ext.edit.journal import Journal

    writer = _Writer.of(shell, keyspace, meta, blob, keys)
    journal = Journal(_journal_directory(shell), keyspace, meta.name, blob)
    say(f"Journal: {journal.path}", sys.stdout)  # wrapped at words, the path at a '/'
    try:
        done = _each(rows, lambda n, row: _write_one(writer, journal, n, row, keys))
    finally:
        journal.close()
    line = f"{plural(done.written, 'row')} written"
    if done.refused:
        line += f", {done.refused:,} {CHANGED_SINCE}"
    say(f"{line}{done.stop_text()}. Undo: UNDO '{journal.path}' CONFIRM", sys.stdout)


def _write_one(writer: _Writer, journal: Any, n: int, row: RowChange, keys: list[str]) -> bool:
    key = [row.key[k] for k in keys]
    journal.before(n, dict(zip(keys, writer.serialized(key), strict=True)), _raw(row.old), _raw(row.new))
    try:
        applied = writer.write(row.new, key, row.old)
    except Exception as err:
        raise _RowFailed(_key_text(row.key), err) from err
    journal.after(n, applied)
    if not applied:
        print(f"  {_key_text(row.key)}: {CHANGED_SINCE}")
    return applied


class _RowFailed(Exception):
    """A row's write failed: the server's error, and the row's key as the lines name it."""

    def __init__(self, key: str, error: BaseException) -> None:
        super().__init__(key)
        self.key = key
        self.error = error


def _raw(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


@dataclass
class _Done:
    """What a run of conditional writes did: rows applied, rows whose condition failed, rows not
    tried because it stopped (Ctrl-C, or a write that failed: `failed` says which and why)."""

    written: int = 0
    refused: int = 0
    left: int = 0
    ctrl_c: bool = False
    failed: str | None = None

    def stop_text(self) -> str:
        if self.ctrl_c:
            return f"; stopped by Ctrl-C, {plural(self.left, 'row')} not written"
        if self.failed is not None:
            return f"; stopped at {self.failed}, {plural(self.left, 'more row')} not written"
        return ""


def _each(rows: Sequence[Any], one: Callable[[int, Any], bool]) -> _Done:
    """`one` on each row; Ctrl-C stops between rows, and so does a write that fails (a timeout may
    still apply it: its outcome is the server's to tell, the journal holds its old value)."""
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.scanning.scan import error_text

    done = _Done()
    with CtrlC() as ctrl_c:
        for n, row in enumerate(rows):
            if ctrl_c.pressed:
                done.ctrl_c, done.left = True, len(rows) - n
                return done
            try:
                applied = one(n, row)
            except _RowFailed as err:
                done.failed = (f"{err.key} (its write failed, whether it applied is unknown: "
                               f"{error_text(err.error)})")
                done.left = len(rows) - n - 1
                return done
            done.written += applied
            done.refused += not applied
            if len(rows) > PROGRESS_EVERY and (n + 1) % PROGRESS_EVERY == 0:
                print(f"{LABEL}: {n + 1:,} of {len(rows):,} rows done", file=sys.stderr)
    return done


def _journal_directory(shell: Shell) -> str:
    """--journal-dir, or a `journal` directory beside the shell's history."""
    from cqlsh_ext.edit.journal import journal_dir
    from cqlsh_ext.upstream import seams

    return shell.settings.display.journal_dir or journal_dir(seams.import_cqlshmain(None).HISTORY)


def run_undo(shell: Shell, path: str, confirm: bool) -> None:
    """Preview or write a journal's old values back, each on the condition that the row still holds
    what the edit wrote."""
    from cqlsh_ext.edit.journal import read_journal
    from cqlsh_ext.payload_select.schema import table_meta

    journal = read_journal(path)
    meta = table_meta(shell, journal.keyspace, journal.table)
    blob = journal.blob
    if meta is None or blob.column not in meta.columns:
        raise EditRefused(f"{journal.keyspace}.{journal.table}.{blob.column} is not in the schema")
    keys = key_columns(meta, blob.column)
    rows = [r for r in journal.rows if r.applied is not False]
    if any(set(r.key) != set(keys) for r in rows):
        raise EditRefused(f"the journal's keys are not {journal.keyspace}.{journal.table}'s primary key")
    asking = not confirm and bool(rows) and _at_terminal(shell)
    out = sys.stderr if asking else sys.stdout  # with the question, not held by the pager
    print(f"undo: {plural(len(rows), 'row')} of {journal.keyspace}.{journal.table}.{blob} to "
          f"write back{'' if confirm or asking else ' (add CONFIRM to write them)'}", file=out)
    if not rows:
        return
    writer = _Writer.of(shell, journal.keyspace, meta, blob, keys)
    is_text = blob.holds_text
    if not confirm:
        still = _undo_preview(shell, writer, journal.keyspace, meta, blob, keys, rows, out)
        if not (asking and still and _asked(f"Write {plural(still, 'row')} back? [y/N] ")):
            if asking:
                print("Nothing written: add CONFIRM to write them back.")
            return

    def back(value: bytes) -> Any:
        return value.decode("utf-8") if is_text else value

    # An undo is journaled as an edit is (its old value the edit's new one): it can be undone too.
    from cqlsh_ext.edit.journal import Journal

    undo_journal = Journal(_journal_directory(shell), journal.keyspace, meta.name, blob)
    say(f"Journal: {undo_journal.path}", sys.stdout)

    def one(n: int, row: Any) -> bool:
        key = writer.values([row.key[k] for k in keys])
        undo_journal.before(n, row.key, row.new, row.old)
        try:
            applied = writer.write(back(row.old), key, back(row.new))
        except Exception as err:
            raise _RowFailed(_key_text(dict(zip(keys, key, strict=True))), err) from err
        undo_journal.after(n, applied)
        if not applied:
            print(f"  {_key_text(dict(zip(keys, key, strict=True)))}: changed since the edit: left alone")
        return applied

    try:
        done = _each(rows, one)
    finally:
        undo_journal.close()
    line = f"{plural(done.written, 'row')} written back"
    if done.refused:
        line += f", {done.refused:,} changed since the edit: left alone"
    say(line + done.stop_text() + f". Undo the undo: UNDO '{undo_journal.path}' CONFIRM", sys.stdout)


def _undo_preview(shell: Shell, writer: _Writer, keyspace: str, meta: Any, blob: Any, keys: list[str],
                  rows: Sequence[Any], out: IO[str]) -> int:
    """How many rows still hold what the edit wrote (UNDO writes those back), read now, said on
    `out`; their count."""
    where = " AND ".join(f"{_quote(k)} = ?" for k in keys)
    column = blob.column
    select = shell.session.prepare(f"SELECT {_quote(column)} FROM {_quote(keyspace)}.{_quote(meta.name)} "
                                   f"WHERE {where}")
    changed: list[str] = []
    for row in rows:
        key = writer.values([row.key[k] for k in keys])
        found = shell.session.execute(select, key).one()
        value = None if found is None else (found[column] if isinstance(found, Mapping) else found[0])
        value = _inside(value, blob)
        if value is None or _raw(value) != row.new:
            changed.append(_key_text(dict(zip(keys, key, strict=True))))
    print(f"  {len(rows) - len(changed):,} still as the edit wrote them; {len(changed):,} changed since "
          "the edit (left alone)", file=out)
    for text in changed[:PREVIEW_ROWS]:
        print(f"  changed since the edit: {text}", file=out)
    return len(rows) - len(changed)
