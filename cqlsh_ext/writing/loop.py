"""The row loop every write shares: each row written (one at a time, or a few at once on threads),
Ctrl-C between rows (a second one at once), a write that fails or a journal that cannot be written
stopping it, and the closing line that says what was written, what was left alone, why it stopped
and how to undo it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, cast

from cqlsh_ext.common.text import plural
from cqlsh_ext.writing.cell_writer import CHANGED_SINCE, EXPIRED, EXPIRED_SINCE, RESTORED, REWRITTEN

if TYPE_CHECKING:
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.writing.blob_target import BlobTarget
    from cqlsh_ext.writing.cell_writer import CellWriter, Written
    from cqlsh_ext.writing.journal import Journal
    from cqlsh_ext.writing.mechanism import Mechanism
    from cqlsh_ext.writing.requests import WriteRequest
    from cqlsh_ext.writing.write_context import WriteContext

LABEL = "edit"
#: A write progress line every this many rows.
PROGRESS_EVERY = 500


def sent(writer: CellWriter, key: Sequence[Any], expected: Any, new: Any, writetime: int | None,
         expires: float | None, at: int | None, key_text: str, out: IO[str]) -> Written:
    """One write through the mechanism; a row left alone said on `out`, a failure with the row's
    key (RowFailed)."""
    from cqlsh_ext.writing.cell_writer import WriteFailed

    try:
        written = writer.write(key, expected, new, writetime, expires, at)
    except WriteFailed as err:
        raise RowFailed(key_text, str(err)) from None
    if not written.applied:
        print(f"  {key_text}: {EXPIRED_SINCE if written.outcome == EXPIRED else CHANGED_SINCE}", file=out)
    return written


def _silent(_text: str) -> None:
    """A note not said: a terminal's bar says it."""


class RowsBar:
    """A write's progress on a terminal, as REWRITE's: the rows done of all on one line with a bar
    (the context's progress line: scanning.scan.Progress; none off a terminal), drawn from the
    thread that counts them. `out` is the stream the rows' own lines go to (a row left alone,
    written from the writing threads): it clears the bar before a line and holds it back until the
    line ends (print writes the text and its newline apart), so a row's line is never drawn over."""

    def __init__(self, ctx: WriteContext, label: str, total: int, out: IO[str]) -> None:
        import threading

        self.total = total
        self.lock = threading.Lock()
        #: A row's line begun and not ended: the bar waits.
        self.held = False
        self.line = ctx.progress(label, True, total)
        if self.line is not None:
            self.line.ctrl_c = ("(Ctrl-C stops after the writes in flight)", "(Ctrl-C stops)")
        self.out: IO[str] = out if self.line is None else cast("IO[str]", _ClearedFirst(out, self))

    @property
    def shown(self) -> bool:
        return self.line is not None

    def advanced(self, done: int) -> None:
        if self.line is not None:
            with self.lock:
                if not self.held:
                    self.line.update(done, done / self.total if self.total else None)

    def close(self) -> None:
        if self.line is not None:
            with self.lock:
                self.line.close()


class _ClearedFirst:
    """A RowsBar's `out`: the bar cleared before a line, held back until the line ends."""

    def __init__(self, out: IO[str], bar: RowsBar) -> None:
        self._out = out
        self._bar = bar

    def write(self, text: str) -> int:
        bar = self._bar
        with bar.lock:
            if bar.line is not None and not bar.held:
                bar.line.close()
            written = self._out.write(text)
            bar.held = not text.endswith("\n")
            if not bar.held:
                self._out.flush()  # on the screen before the bar (standard error) is drawn again
            return written

    def flush(self) -> None:
        self._out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)


def stopping_under(bar: RowsBar) -> Callable[[], None]:
    """`stopping` for a write with a bar: the bar's line cleared first (the note would follow it
    on its row; the bar is drawn again below the note). From the signal handler: no lock taken,
    one write."""
    import os

    def said() -> None:
        if not bar.shown:
            stopping()
            return
        os.write(2, b"\r\x1b[K" + _STOPPING + b"\n")

    return said


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
    #: UNDO: rows holding the bytes written, written again since (left alone).
    rewritten: int = 0
    #: UNDO: rows holding already what it writes back (nothing to write: done).
    restored: int = 0
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
        elif written.outcome == REWRITTEN:
            self.rewritten += 1
        elif written.outcome == RESTORED:
            self.restored += 1
        else:
            self.changed += 1


def each_row(rows: Sequence[Any], one: Callable[[int, Any], Written], key_text: Callable[[Any], str],
             note: Callable[[str], None], ctrl_c: CtrlC | None = None, label: str = LABEL,
             at_once: int = 1, bar: RowsBar | None = None) -> Done:
    """`one` on each row, in order; every PROGRESS_EVERY rows a line to `note` (a context's say),
    or with a terminal's `bar` each row on it.
    Ctrl-C stops between rows; a second one stops at once (the row in flight is journaled: UNDO
    reads it back if it was written). A write that fails stops it (a timeout may still apply: its
    outcome is the server's to tell, the journal holds its old value), and so does the journal
    when it cannot be written (a full disk: the row is not sent), and a row refused before it is
    sent (WriteRefused: a journal's key that is no key of the table); the rows before it stay
    written and are counted."""
    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.writing.journal import JournalError
    from cqlsh_ext.writing.refused import WriteRefused

    done = Done()
    with CtrlC(on_first=stopping) if ctrl_c is None else _Entered(ctrl_c) as ctrl_c:
        if bar is not None and bar.shown:
            note = _silent
        if at_once > 1:
            return _at_once(rows, one, ctrl_c, label, at_once, done, note, bar)
        for n, row in enumerate(rows):
            if ctrl_c.pressed:
                done.left = len(rows) - n
                done.stop = f"stopped by Ctrl-C, {plural(done.left, 'row')} not written"
                return done
            try:
                written = one(n, row)
                done.add(written)
                if bar is not None:
                    bar.advanced(n + 1)
                if len(rows) > PROGRESS_EVERY and (n + 1) % PROGRESS_EVERY == 0:
                    note(f"{label}: {n + 1:,} of {len(rows):,} rows done")
            except RowFailed as err:
                done.left = len(rows) - n - 1
                done.stop = (f"stopped at {err.key} (its write failed, whether it applied is unknown: "
                             f"{err.error}), {plural(done.left, 'more row')} not written")
                done.failed = True
                return done
            except (JournalError, WriteRefused) as err:  # the journal unwritable; the row refused unsent
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
             at_once: int, done: Done, note: Callable[[str], None], bar: RowsBar | None) -> Done:
    """each_row with `at_once` rows written at a time, on threads, in journal order: the same stops
    (Ctrl-C sends no more and waits for those in flight; a second one leaves them; a failure stops
    the sending)."""
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    from cqlsh_ext.writing.journal import JournalError
    from cqlsh_ext.writing.refused import WriteRefused

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
            except (JournalError, WriteRefused) as err:
                done.failed = True
                done.stop = done.stop or f"stopped: {err}"
            finished += 1
            if bar is not None:
                bar.advanced(finished)
            if len(rows) > PROGRESS_EVERY and finished % PROGRESS_EVERY == 0:
                note(f"{label}: {finished:,} of {len(rows):,} rows done")

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
        done.left = max(len(rows) - sent, 0)
        done.stop = (f"stopped by a second Ctrl-C with {plural(len(pending), 'write')} in flight (whether "
                     f"they applied is unknown: UNDO checks them), {plural(done.left, 'more row')} not "
                     "written")
        done.failed, done.interrupt = True, err
        return done
    pool.shutdown(wait=True)
    # The rows not sent, counted from what was sent: never below none, and a stop said only when
    # something stopped it (a Ctrl-C pressed, a failure).
    done.left = max(len(rows) - sent, 0) if ctrl_c.pressed or done.failed else 0
    if done.left:
        what = done.stop or "stopped by Ctrl-C after the writes in flight"
        done.stop = f"{what}, {plural(done.left, 'more row')} not written"
    return done


def stopping() -> None:
    """Said at the first Ctrl-C, from the signal handler (one write to the descriptor: never into
    a buffered write the handler interrupted)."""
    import os

    os.write(2, b"\n" + _STOPPING + b"\n")


_STOPPING = b"Ctrl-C: stopping after the row being written (Ctrl-C again stops at once)"


class _Entered:
    """A CtrlC the caller entered already, as a context that leaves it to the caller."""

    def __init__(self, ctrl_c: CtrlC) -> None:
        self.ctrl_c = ctrl_c

    def __enter__(self) -> CtrlC:
        return self.ctrl_c

    def __exit__(self, *exc: object) -> None:
        return None


def closing(ctx: WriteContext, done: Done, head: str, changed_words: str, undo: str,
            rewritten_words: str = "", expired_words: str = EXPIRED_SINCE) -> None:
    """The closing line: what was written, what was left alone, why it stopped; then the statements
    that finish or undo it (`undo`, '' for none), each on a line of its own, so that it pastes
    whole. A run that failed says it on stderr (a script's exit status is then 2), and a second
    Ctrl-C goes on to the shell once it is said."""
    line = head
    if done.changed:
        line += f", {done.changed:,} {changed_words}"
    if done.rewritten:
        line += f", {done.rewritten:,} {rewritten_words}"
    if done.expired:
        line += f", {done.expired:,} {expired_words}"
    line += (f"; {done.stop}" if done.stop else "") + "."
    ctx.say_lines([line, *undo.splitlines()], done.failed)
    if done.interrupt is not None:
        raise done.interrupt


@dataclass
class CellChange:
    """One row's blob to write (write_changes): its key (name -> value as the driver gives it), the
    value read and the value to write (as the column holds them: bytes, or text), the cell's write
    time, TTL and moment of expiry as read. An edit's rows (edit.preview.RowChange) are ones too."""

    key: dict[str, Any]
    old: Any
    new: Any
    writetime: int | None = None
    ttl: int | None = None
    expires: float | None = None


def write_changes(ctx: WriteContext, keyspace: str, meta: Any, blob: BlobTarget, keys: list[str],
                  mechanism: Mechanism, rows: Sequence[Any], request: WriteRequest,
                  label: str = LABEL) -> tuple[Done, str]:
    """`rows` (each a CellChange, or alike: an edit's RowChange) journaled and written, one blob a
    row, as every edit of stored values is: the journal (its head holding `request`) opened and said
    first, each row's old value on disk before it is written by the one mechanism (on its condition:
    a row changed since is left alone), Ctrl-C between rows, then the closing line and its UNDO
    statement. The row loop's figures and the journal's path; JournalError (a WriteRefused) before
    the first row."""
    from cqlsh_ext.common.interrupt import CtrlC, shielded
    from cqlsh_ext.writing.blob_target import key_text
    from cqlsh_ext.writing.cell_writer import CellWriter
    from cqlsh_ext.writing.journal import open_journal
    from cqlsh_ext.writing.journal_names import hint_name

    with CtrlC(on_first=stopping) as ctrl_c:  # from before the journal is said: a Ctrl-C then stops first
        try:
            writer = CellWriter.of(ctx, keyspace, meta, blob, keys, mechanism)
            journal = open_journal(ctx, "edit", keyspace, meta.name, blob, mechanism, request, label=label)
        except KeyboardInterrupt:
            ctx.error(f"{label}: stopped by a second Ctrl-C before the first row; nothing was written")
            raise
        try:
            done = each_row(rows, lambda n, row: _write_one(writer, journal, n, row, keys, ctx.out),
                            lambda row: key_text(row.key), ctx.say, ctrl_c, label=label)
        finally:
            with shielded():
                journal.close()
        # A write that wrote nothing has nothing to undo, unless it stopped on a write whose outcome
        # is the server's to tell (a timeout, a second Ctrl-C): its journal then holds that row.
        undo = f"Undo: UNDO '{hint_name(journal.path, ctx.journal_dir)}' CONFIRM" \
            if done.written or done.failed else ""
        with shielded():  # the closing line and its undo statement, whatever is pressed now
            closing(ctx, done, f"{plural(done.written, 'row')} written", CHANGED_SINCE, undo)
    return done, str(journal.path)


def _write_one(writer: CellWriter, journal: Journal, n: int, row: Any, keys: list[str],
               out: IO[str]) -> Written:
    from cqlsh_ext.writing.blob_target import key_text
    from cqlsh_ext.writing.cell_writer import raw

    key = [row.key[k] for k in keys]
    at = writer.timestamp(row.writetime)
    journal.before(n, dict(zip(keys, writer.serialized(key), strict=True)), raw(row.old), raw(row.new),
                   row.ttl, row.expires, row.writetime, at)
    written = sent(writer, key, row.old, row.new, row.writetime, row.expires, at, key_text(row.key), out)
    journal.after(n, written.applied)
    return written
