"""UNDO of a load's journal (COPY FROM, db.write: docs/load.md) a window of cells at a time, as the
load wrote them: the window's rows read by key, a group of keys a request (writing.row_loads); each
cell judged as writing.undo judges one (undo.as_written: written back only where it holds what the
load wrote, as it was written); the window's cells to write back journaled in one append (fsync'd
before any is sent); a partition's cells in one unlogged batch, at most IN_FLIGHT requests at once,
each at its cell's write time + 1 (the TIMESTAMP mechanism: a load is never written on a
condition), a request that times out sent again (the same values at the same timestamps:
harmless); the outcomes journaled in one append a window. A cell counts as written back when the
server acknowledged its write. Ctrl-C sends no more (the cells journaled and not sent are
journaled so); a second Ctrl-C leaves those in flight (UNDO of the UNDO looks at each).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural
from cqlsh_ext.writing.cell_writer import CHANGED, EXPIRED, RESTORED, REWRITTEN, Cell, Written

if TYPE_CHECKING:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.writing.journal_read import JournalRead, JournalRow
    from cqlsh_ext.writing.loop import Done
    from cqlsh_ext.writing.row_loads import RowLoads

#: Journal lines (cells) an UNDO reads and writes back together.
WINDOW_CELLS = 500
#: Requests in flight at most (a load's own: load.load_job.IN_FLIGHT).
IN_FLIGHT = 32
#: A progress line every this many cells off a terminal.
PROGRESS_EVERY = 5000


@dataclass
class _Send:
    """One request: its cells' numbers in the UNDO's journal, the bound statement, its tries."""

    numbers: list[int]
    request: Any
    attempts: int = 0


@dataclass
class WindowsUndo:
    """What undo_in_windows needs of the UNDO (writing.undo): the cells' writers by column, the
    key's columns, the row reader, how a cell is judged, the UNDO's own journal, its counts."""

    writers: Any
    keys: list[str]
    partition_columns: int
    loads: RowLoads
    judge: Callable[[JournalRow, Cell, Any], str | None]
    journal: Any
    key_values: Callable[[Any, JournalRow, str], list[Any]]
    fields: Callable[[JournalRow], dict[str, object] | None]
    named: Any
    whose: str
    done: Done
    number: int = 0
    failure: str = ""
    #: Cells journaled and not sent (a stop before their turn).
    unsent: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)


def undo_in_windows(plan: WindowsUndo, rows: Iterable[tuple[JournalRead, JournalRow]], todo: int,
                    ctrl_c: CtrlC, advanced: Callable[[int], None], note: Callable[[str], None]) -> Done:
    """Every cell of `rows` written back where it still holds what the load wrote (see the module
    doc), `todo` of them; the counts in plan.done."""
    from cqlsh_ext.writing.refused import WriteRefused

    done = plan.done
    seen = 0
    told = 0
    try:
        for window in _windows(rows):
            if ctrl_c.pressed or plan.failure:
                break
            try:
                _window(plan, window, ctrl_c)
            except WriteRefused as err:  # a row's key read before the window sends: the windows before stay
                plan.failure = str(err)
                break
            seen += len(window)
            advanced(seen)
            if seen - told >= PROGRESS_EVERY:
                told = seen
                note(f"undo: {seen:,} of {todo:,} cells done")
    except KeyboardInterrupt as err:
        done.interrupt, done.failed = err, True
        done.left = max(todo - seen, 0) + plan.unsent
        done.stop = (f"stopped by a second Ctrl-C with writes in flight (whether they applied is unknown: "
                     f"UNDO checks them), {plural(done.left, 'more row')} not written")
        return done
    done.left = max(todo - seen, 0) + plan.unsent if ctrl_c.pressed or plan.failure else 0
    if plan.failure:
        done.failed = True
        done.stop = f"stopped: {plan.failure}" + (f", {plural(done.left, 'more row')} not written"
                                                  if done.left else "")
    elif done.left:
        done.stop = (f"stopped by Ctrl-C after the writes in flight, {plural(done.left, 'more row')} not "
                     "written")
    return done


Item = tuple["JournalRead", "JournalRow"]


def _windows(rows: Iterable[Item]) -> Iterator[list[Item]]:
    window: list[Item] = []
    for item in rows:
        window.append(item)
        if len(window) >= WINDOW_CELLS:
            yield window
            window = []
    if window:
        yield window


def _window(plan: WindowsUndo, window: list[tuple[JournalRead, JournalRow]], ctrl_c: CtrlC) -> None:
    """The window's rows read, its cells judged, those to write back journaled and sent."""
    from cqlsh_ext.writing.blob_target import key_text
    from cqlsh_ext.writing.journal import row_entry
    from cqlsh_ext.writing.ttl import ttl_to_send

    keys, loads, done = plan.keys, plan.loads, plan.done
    by_key: dict[tuple[bytes, ...], list[Any]] = {}
    for part, row in window:
        values = plan.key_values(plan.writers.of(row), row, part.path)  # WriteRefused: not the table's key
        by_key.setdefault(tuple(row.key[k] for k in keys), values)
    olds = dict(zip(by_key, loads.read(list(by_key.values()), list(by_key)), strict=True))
    columns = loads.columns
    entries: list[dict[str, Any]] = []
    sends: list[tuple[tuple[bytes, ...], int, Any]] = []
    for _part, row in window:
        serialized = tuple(row.key[k] for k in keys)
        writer = plan.writers.of(row)
        old = olds[serialized]
        j = columns.index(writer.blob.column)
        cell = Cell(None, None, None, time.time()) if old is None else \
            Cell(old.values[j], old.writetimes[j], old.ttls[j], old.sent)
        left = plan.judge(row, cell, writer.blob)
        ttl = ttl_to_send(row.expires)
        # A cell written null shows no write time: the journal's is the null's.
        writetime = cell.writetime if cell.writetime is not None or row.new is not None else row.at
        at = writer.timestamp(writetime) if left is None else None
        if left is None and ttl is not None and ttl <= 0:
            left = EXPIRED
        elif left is None and at is None:
            left = CHANGED  # a cell with no write time holds nothing: nothing to rewrite
        if left is not None:
            if left != RESTORED:
                column = "" if row.column is None else f" ({row.column})"
                key = key_text(dict(zip(keys, by_key[serialized], strict=True)))
                plan.named.say(f"  {key}{column}: {_WORDS[left](plan.whose)}")
            done.add(Written(left))
            continue
        n = plan.number
        plan.number += 1
        entry = row_entry(n, row.key, row.new, row.old, cell.ttl, row.written_expires, writetime, at)
        entry.update(plan.fields(row) or {})
        entries.append(entry)
        old_value = row.old.decode("utf-8") if writer.blob.holds_text and row.old is not None else row.old
        sends.append((serialized[:plan.partition_columns], n,
                      writer.statement(by_key[serialized], old_value, at, ttl)))
    if sends:
        _send(plan, entries, sends, ctrl_c)


def _send(plan: WindowsUndo, entries: list[dict[str, Any]], sends: list[tuple[tuple[bytes, ...], int, Any]],
          ctrl_c: CtrlC) -> None:
    """The window's cells journaled (one append), then sent a partition's cells a request, at most
    IN_FLIGHT at once; their outcomes journaled (one append)."""
    from cqlsh_ext.writing.journal import JournalError
    from cqlsh_ext.writing.row_loads import BATCH_ROWS

    journal = plan.journal.get()
    try:
        journal.append(entries)
    except JournalError as err:
        plan.failure = str(err)
        return
    groups: dict[tuple[bytes, ...], list[tuple[int, Any]]] = {}
    for partition, n, statement in sends:
        groups.setdefault(partition, []).append((n, statement))
    requests = []
    for members in groups.values():
        for start in range(0, len(members), BATCH_ROWS):
            chunk = members[start:start + BATCH_ROWS]
            requests.append(_Send([n for n, _ in chunk], plan.loads.batch([s for _, s in chunk])))
    outcomes: list[dict[str, Any]] = []
    not_sent = _fire_all(plan, requests, ctrl_c, outcomes)
    plan.unsent += len(not_sent)
    outcomes.extend({"row": n, "applied": False} for n in not_sent)
    if outcomes:
        try:
            journal.append(outcomes)
        except JournalError as err:
            plan.failure = plan.failure or str(err)


def _fire_all(plan: WindowsUndo, requests: list[_Send], ctrl_c: CtrlC, outcomes: list[dict[str, Any]]
              ) -> list[int]:
    """Each request sent, at most IN_FLIGHT at once, retried as a write is; the cells written
    counted and their outcomes put in `outcomes`; the numbers of the cells not sent (a stop)."""
    from cqlsh_ext.common import retry
    from cqlsh_ext.scanning.scan import error_text
    from cqlsh_ext.writing.cell_writer import APPLIED, retry_reason

    slots = threading.Semaphore(IN_FLIGHT)
    finished = threading.Event()
    pending = [len(requests)]

    def answered(request: _Send, err: BaseException | None) -> None:
        if err is not None and retry_reason(err) is not None and not retry.exhausted(request.attempts):
            request.attempts += 1
            timer = threading.Timer(retry.delay(request.attempts), fire, (request,))
            timer.daemon = True
            timer.start()
            return
        with plan._lock:
            if err is None:
                outcomes.extend({"row": n, "applied": True} for n in request.numbers)
                for _ in request.numbers:
                    plan.done.add(Written(APPLIED))
            else:
                plan.failure = plan.failure or (f"a write back failed, whether it applied is unknown "
                                                f"({error_text(err)})")
            pending[0] -= 1
            if pending[0] == 0:
                finished.set()
        slots.release()

    def fire(request: _Send) -> None:
        future = plan.loads.session.execute_async(request.request)
        future.add_callbacks(lambda _rows: answered(request, None), lambda err: answered(request, err))

    not_sent: list[int] = []
    for i, request in enumerate(requests):
        while not slots.acquire(timeout=0.1):
            pass
        if ctrl_c.pressed or plan.failure:
            slots.release()
            rest = requests[i:]
            not_sent = [n for r in rest for n in r.numbers]
            with plan._lock:
                pending[0] -= len(rest)
                if pending[0] == 0:
                    finished.set()
            break
        fire(request)
    while not finished.wait(0.1):
        pass
    return not_sent


_WORDS: dict[str, Callable[[str], str]] = {
    CHANGED: lambda whose: f"changed since {whose}: left alone",
    EXPIRED: lambda whose: f"its TTL ran out since {whose}: nothing to write back",
    REWRITTEN: lambda whose: f"written again since {whose} (the same bytes, a later write): left alone"}
