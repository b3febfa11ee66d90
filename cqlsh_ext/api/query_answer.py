"""A query's answer in a program: its columns, its rows as dicts (a decoded blob as its payload),
its notes, and the same answer as Arrow (the types COPY TO Parquet writes: payload.columns), pandas
or polars. Read once: a second reader gets cqlsh_ext.Error; `to_arrow()` holds the table it made,
so the Arrow forms may be asked for again.

The reading around the batches is the answer's own (`AnswerReading`, made by Database.query): Ctrl-C
from the call until the answer ends stops it at once and is kept in its notes (a second press
raises KeyboardInterrupt), `close()` ends it before the next row, progress events end with
`done: 1.0`, and `paging_state` says where it stopped, to go on from there on any connection."""

from __future__ import annotations

import hashlib
import itertools
import struct
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    import pandas
    import polars
    import pyarrow

    from cqlsh_ext.common.interrupt import CtrlC
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.payload.columns import AnswerColumn, BlobReading
    from cqlsh_ext.reading.typed import AnswerBatch, Position, TypedAnswer
    from cqlsh_ext.render.arrow_batches import ArrowBatches
    from cqlsh_ext.settings import DisplaySettings

__all__ = ["AnswerField", "Notes", "Progress", "QueryAnswer"]

#: The extra that brings what to_arrow(), to_pandas() and to_polars() need.
EXTRA = "api"
#: A progress callback: handed each event (a dict: "reading", "rows", "done", ...).
Progress = Callable[[dict[str, Any]], None]
#: An answer's notes (ReadNotes.to_json): "rows_read", "matched", "undecodable", "stopped", ...
Notes = dict[str, Any]
#: Progress events of a reading that has none of its own: at most one this many seconds apart
#: (the last, `done: 1.0` or why it stopped, always).
EVENT_SECONDS = 1.0


@dataclass(frozen=True)
class AnswerField:
    """An answer column: its name, its role (cql, blob, path, aggregate), its type as text (CQL's,
    or what a path's values were), the path it reads (None: a column)."""

    name: str
    role: str
    type: str
    source: str | None = None


def need(module: str) -> Any:
    """An optional module, or Error naming the extra that brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        from cqlsh_ext.common.install import install_hint

        raise Error(f"{module} is not installed: {install_hint(EXTRA)}") from None


def warm() -> None:
    """Load what a reading and its Arrow batches take (connect() calls it): the reading's modules,
    the value engine (the native core configured, the format plugins found) and pyarrow, with the
    pandas pyarrow imports at its first array made from Python values where pandas is installed
    (about a second of CPU, paid by a stream's first batch otherwise); then one full collection
    of the garbage collector. Nothing is read."""
    import gc

    try:
        _warm_imports()
    finally:
        # The imports leave some 90,000 young objects: the collector's first full pass over them
        # (about 75 ms) came with the next allocations, the leading sample's, before the first batch.
        gc.collect()


def _warm_imports() -> None:
    """warm()'s imports, the modules a query's reading takes up front among them."""
    from cqlsh_ext.common import interrupt  # noqa: F401  (imported for their cost, here)
    from cqlsh_ext.output import spellings  # noqa: F401
    from cqlsh_ext.payload import running
    from cqlsh_ext.reading import context, resolve, select, statement  # noqa: F401
    from cqlsh_ext.scanning import scan  # noqa: F401

    running.reads_pages_whole()
    try:
        import pyarrow as pa
    except ImportError:  # the rows need none; an Arrow reading says which extra brings it (need)
        return
    from cqlsh_ext.render import arrow_batches  # noqa: F401

    pa.array([0])


class Closeable(Protocol):
    def close(self) -> None: ...


@dataclass
class AnswerReading:
    """How an answer's reading goes around its batches (Database.query makes it): the Ctrl-C in
    force from the call on and the reading's own stop (`stop`: set to end it at its next page,
    the rows read kept), the progress callback and the reading's
    label, whether the reading gives events of its own (`evented`: a scan's), the statement and
    parameters a paging state belongs to (`identity`), where it went on from (`start`: the paging
    state, `skip` rows of that page given out before, `given` rows given out before that page),
    why it cannot be gone on with (`why_not`), and what to close when it ends (`owner`:
    read_partition's own connection)."""

    ctrl_c: CtrlC | None = None
    stop: threading.Event | None = None
    progress: Progress | None = None
    label: str = ""
    evented: Callable[[], bool] | None = None
    identity: bytes = b""
    start: bytes | None = None
    skip: int = 0
    given: int = 0
    why_not: str | None = None
    owner: Closeable | None = None
    #: Rows an Arrow batch holds at least where more come (the call's page size): smaller ones are
    #: joined (render.arrow_batches.coalesced); 0: as the reading gives them.
    batch_rows: int = 0


class QueryAnswer:
    """See the module doc. Iterating gives one dict a row, answer column name to value: a CQL
    value as the driver gives it (but a collection, tuple or UDT holding a blob: the table's, its
    blobs decoded), a path's value as parsed (dict, list, text, number), a blob as its
    decoded payload (None when it did not decode: `records(details=True)` adds its label, kind,
    note and stored bytes, as the Parquet file's columns NAME:label, NAME:kind, ...).

    As Arrow it is a stream: `schema` (fixed before the first row is given: the CQL types, and the
    kinds read from the answer's first rows), `to_reader()` (a pyarrow.RecordBatchReader, a batch
    per page), `__arrow_c_stream__` (DuckDB, polars and pyarrow read it so), `to_arrow()` (the
    stream collected, held). Use it as a context manager, or close() an answer not read to its
    end: the reading ends there."""

    def __init__(self, typed: TypedAnswer, settings: DisplaySettings,
                 reading: AnswerReading | None = None) -> None:
        self._typed = typed
        self._settings = settings
        self._reading = reading if reading is not None else AnswerReading()
        self._read_by: str | None = None
        self._table: pyarrow.Table | None = None
        self._arrow: ArrowBatches | None = None
        #: Rows given out by this answer; where the next one is (its Position).
        self._given = 0
        self._next: Position = (self._reading.start, self._reading.skip)
        #: Read to its end; ended (its end, close(), Ctrl-C, an error) and cleaned up.
        self._complete = False
        self._done = False
        self._closed = False
        #: Threads reading the typed answer now (its next batch, its schema's sample): close()
        #: from another thread leaves the reading to end in theirs (_reading_here).
        self._readers = 0
        self._lock = threading.RLock()
        self._last_event = 0.0
        self.columns: list[AnswerField] = [AnswerField(c.name, c.role, c.type_text, c.source)
                                           for c in typed.columns]

    def __enter__(self) -> QueryAnswer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # an answer dropped unread: its Ctrl-C handler goes, its reading ends
        try:
            self._finish()
        except Exception:
            pass

    @property
    def notes(self) -> Notes:
        """How the reading went (ReadNotes.to_json): rows read, matched, undecodable values by
        kind, cut values, whether the figures are exact, stopped (interrupted, cancelled, failed,
        output closed: close() before its end), values that did not fit their Arrow column
        (misfits, by column)."""
        notes = self._typed.notes
        return notes.to_json() if notes is not None else {}

    def _take(self, reader: str) -> None:
        if self._read_by is not None:
            raise Error(f"this answer was read already (by {self._read_by}): an answer is read once; "
                        "run the query again, or keep to_arrow()'s table")
        self._read_by = reader

    def _blobs(self) -> BlobReading:
        from cqlsh_ext.output.spellings import blob_reading

        return blob_reading(self._settings)

    # ------------------------------------------------------------ the reading

    @property
    def _pressed(self) -> bool:
        ctrl_c = self._reading.ctrl_c
        return ctrl_c is not None and ctrl_c.pressed

    def _batches(self, collect: bool = False) -> Generator[AnswerBatch, None, None]:
        """The answer's batches as the reader takes them: the rows of a resumed page given out
        before left out, each position noted, progress told; close() ends them at once, and so
        does Ctrl-C, but for a reader that `collect`s them (to_arrow): the reading then stops at
        its next page and what it read is kept. Ended, the reading is finished (_finish); a reading
        that failed then raises Error, its one line (after the rows it read: nothing is silently
        short)."""
        skip = self._reading.skip
        batches = iter(self._typed)
        try:
            while (batch := self._pull(batches)) is not None:
                if skip:
                    if len(batch) <= skip:
                        skip -= len(batch)
                        continue
                    batch, skip = _tail(batch, skip, len(self._typed.columns)), 0
                if self._ends_now(collect):
                    return
                yield batch
                self._event()
                if self._ends_now(collect):
                    return
            self._complete = not self._pressed and not self._closed and self._failed is None
        finally:
            self._finish()
        if self._failed is not None:
            raise Error(f"the reading failed after {self._given:,} rows: {self._failed}")

    @property
    def _failed(self) -> str | None:
        """The error the reading ended with (its notes' one line), None when it did not fail."""
        notes = self._typed.notes
        return notes.error if notes is not None and notes.error else None

    def _pull(self, batches: Iterator[AnswerBatch]) -> AnswerBatch | None:
        """The typed answer's next batch, read in this thread; None at its end, or once closed."""
        with self._reading_here() as still_open:
            return next(batches, None) if still_open else None

    @contextmanager
    def _reading_here(self) -> Iterator[bool]:
        """Around a read of the typed answer in this thread (its next batch, the sample its schema
        is read from); yields whether the answer is still open. A generator is closed only by the
        thread that runs it (from another, it raises "generator already executing"): close() from
        another thread meanwhile stops the reading instead, which ends here (close, _finish)."""
        with self._lock:
            self._readers += 1
            still_open = not self._closed
        try:
            yield still_open
        finally:
            with self._lock:
                self._readers -= 1

    def _ends_now(self, collect: bool) -> bool:
        """Whether the batches end here: close(); Ctrl-C, but for a collecting reader, whose
        reading is stopped instead (at its next page: a scan's own Ctrl-C may have stopped it)."""
        if self._closed:
            return True
        if not self._pressed:
            return False
        if not collect:
            return True
        stop = self._reading.stop
        if stop is not None:
            stop.set()
        return False

    def _gave(self, batch: AnswerBatch, rows: int) -> None:
        """`rows` of `batch`'s rows were given out: where the next one is."""
        self._given += rows
        positions = batch.positions
        if positions is not None and rows:
            state, index = positions[rows - 1]
            self._next = (state, index + 1)

    def _finish(self) -> None:
        """The reading ended (its end, close(), Ctrl-C, an error): closed, the notes said, the
        Ctrl-C handler gone, the owner closed, the last progress event. Once, in whichever thread
        ends it (the typed answer closed under the lock: no read of it starts meanwhile)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            self._typed.close()
        notes = self._typed.notes
        if notes is not None:
            if self._pressed:  # Ctrl-C (its stop of the reading is an interruption, not a cancellation)
                notes.interrupted, notes.cancelled = True, False
            elif not self._complete and not notes.error:  # close(), or its reader let go of it
                notes.output_closed, notes.closed_by = True, "at close()" if self._closed else ""
                if self._closed:  # (close()'s stop of a reading in another thread: no cancellation)
                    notes.cancelled = False
        ctrl_c = self._reading.ctrl_c
        if ctrl_c is not None:
            ctrl_c.restore()
        owner = self._reading.owner
        if owner is not None:
            owner.close()
        self._event(final=True)

    def _event(self, final: bool = False) -> None:
        progress = self._reading.progress
        if progress is None:
            return
        evented = self._reading.evented
        if not final and (evented is not None and evented()):
            return  # the reading tells its own progress
        now = time.monotonic()
        if not final and now - self._last_event < EVENT_SECONDS:
            return
        self._last_event = now
        notes = self.notes
        event: dict[str, Any] = {"reading": self._reading.label, "rows": notes.get("rows_read", 0),
                                 "matched": notes.get("matched", 0), "done": None}
        if final:
            stopped = notes.get("stopped")
            event["done"] = 1.0 if stopped is None and self._complete else None
            event["stopped"] = stopped if stopped is not None or self._complete else "output closed"
        progress(event)

    def close(self) -> None:
        """End the reading now: no further row is given (not even the rest of a batch); its notes
        say how far it got (stopped: output closed, exact: False), `paging_state` where to go on.
        From any thread: while another thread reads the answer (to_arrow(), to_pandas(), a loop
        over its rows or batches), its reading is stopped and ends in that thread at its next
        batch, whose call returns what was read before, raising nothing; the notes are final once
        it has returned."""
        with self._lock:
            self._closed = True
            elsewhere = self._readers > 0
            if elsewhere:
                stop = self._reading.stop
                if stop is not None:  # the reading's own stop: it ends at its next page
                    stop.set()
                notes = self._typed.notes
                if notes is not None:
                    notes.output_closed, notes.closed_by = True, "at close()"
        if not elsewhere:
            self._finish()

    @property
    def paging_state(self) -> bytes | None:
        """Where this answer's reading stopped (close(), Ctrl-C, an error), as bytes to give
        `db.query(statement, params, paging_state=...)`, on this connection or another, in this
        process or another: it answers the rest, exactly (the table unchanged). None when the
        answer was read to its end. Error for an answer that cannot be gone on with (groups and
        aggregates, a sort, a whole table read by token ranges at once: why)."""
        if self._complete:
            return None
        if self._reading.why_not is not None:
            raise Error(f"this answer cannot be gone on with: {self._reading.why_not}")
        state, index = self._next
        total = self._reading.given + self._reading.skip + self._given
        return encode_state(self._reading.identity, state, index, total - index)

    def _kinds(self) -> tuple[Kind, ...]:
        """The answer's columns' Arrow kinds, fixed (its leading sample read ahead where a kind
        is read from values): what its parts and projections are typed by (TypedAnswer.fix)."""
        with self._reading_here():
            return tuple(c.fixed for c in self._typed.fixed(self._blobs()))

    # ------------------------------------------------------------ rows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.records()

    def records(self, details: bool = False) -> Iterator[dict[str, Any]]:
        """The rows as dicts (see the class doc): to_arrow()'s rows, a column's value as the table
        holds it (a payload, a path's value, an aggregate, a group's key: the table's Python
        value), but a CQL column's, which is the driver's (exact where pyarrow's Python values are
        not: a time's nanoseconds, a timestamp or a date outside Python's years) where it holds no
        blob (one that does, the table's: its blobs decoded, as `_drivers` says); `details`: every
        column of the table (a blob's label, kind, note, stored bytes and confidence; a value's
        note), else the answer's columns alone. Where the answer has a column of the payloads,
        pyarrow reads it (the `api` extra). An answer that names a column twice raises Error,
        read by nothing (a dict holds one value a name: to_arrow() keeps both)."""
        from cqlsh_ext.payload.columns import name_said_twice

        twice = name_said_twice(self._typed.columns)
        if twice is not None:
            raise Error(twice)
        self._take("iteration")
        return self._records(details)

    def _records(self, details: bool) -> Iterator[dict[str, Any]]:
        from cqlsh_ext.payload.columns import CQL

        typed = self._typed
        columns = typed.columns
        # What each answer column gives a row: a CQL column's value read as the driver made it
        # (None: none), and the table's fields read from its Arrow batch.
        plan: list[tuple[int | None, list[str]]] = []
        #: A CQL column holding blobs (the table's value) by name: its index, for the driver's value
        #: where pyarrow has no Python one.
        held: dict[str, int] = {}
        arrow: ArrowBatches | None = None
        if not details and all(_drivers(c) for c in columns):
            plan = [(i, []) for i in range(len(columns))]
        else:
            self.schema  # noqa: B018 - the kinds fixed (the leading sample read) before the first row
            arrow = self._arrow_batches()
            for i, column in enumerate(arrow.columns):
                names = [name for name, _ in column.fields()]
                if _drivers(column):
                    plan.append((i, names[1:] if details else []))
                else:
                    plan.append((None, names if details else names[:1]))
                    if column.role == CQL:
                        held[column.name] = i
        wanted = [name for _, names in plan for name in names]
        batches = self._batches()
        try:
            for batch in batches:
                if not len(batch):
                    continue
                values = batch.columns(len(columns))
                cql = {at: values[at].values() for at, _ in plan if at is not None}
                table = _table_rows(arrow.convert(batch).select(wanted),
                                    {name: values[i] for name, i in held.items()}) \
                    if arrow is not None and wanted else None
                for k in range(len(batch)):
                    if self._closed or self._pressed:
                        return
                    row: dict[str, Any] = {}
                    for (at, names), column in zip(plan, columns, strict=True):
                        if at is not None:
                            row[column.name] = cql[at][k]
                        for name in names:
                            row[name] = table[k][name] if table is not None else None
                    self._gave_row(batch, k)
                    yield row
        finally:
            batches.close()

    def _gave_row(self, batch: AnswerBatch, k: int) -> None:
        """Row `k` of `batch` was given out: where the next one is."""
        self._given += 1
        if batch.positions is not None:
            state, index = batch.positions[k]
            self._next = (state, index + 1)

    # ------------------------------------------------------------ Arrow, pandas, polars

    def _arrow_batches(self) -> ArrowBatches:
        """The answer's Arrow batches (render.arrow_batches), made once."""
        if self._arrow is None:
            need("pyarrow")
            from cqlsh_ext.render.arrow_batches import ArrowBatches

            self._arrow = ArrowBatches(self._typed, self._blobs())
        return self._arrow

    @property
    def schema(self) -> pyarrow.Schema:
        """The answer's pyarrow.Schema, before any row is given (its first rows may be read ahead
        to fix the kinds read from values: payload.columns)."""
        if self._table is not None:
            return self._table.schema
        with self._reading_here():
            schema: pyarrow.Schema = self._arrow_batches().schema
        return schema

    def _record_batches(self, collect: bool = False) -> Iterator[pyarrow.RecordBatch]:
        """The answer's batches as record batches: the first as the reading gives it (a stream's
        first rows in hand before a page size's worth is converted), then the rest of the call's
        page size's worth, then at least the page size each where more rows come (a payload
        filter's pages, each a few matches, joined: coalesced)."""
        from cqlsh_ext.render.arrow_batches import coalesced

        arrow = self._arrow_batches()
        batches = self._batches(collect)
        try:
            converted = ((batch, arrow.convert(batch)) for batch in batches if len(batch))
            first = next(converted, None)
            if first is None:
                return
            self._gave(first[0], len(first[0]))
            yield first[1]
            rows = self._reading.batch_rows
            # the first batch counts toward the first page size's worth: the batches after it keep
            # to the pages' bounds (the rest of that worth, then a page size each)
            joined = itertools.chain(itertools.islice(coalesced(converted, max(0, rows - len(first[0]))), 1),
                                     coalesced(converted, rows))
            for sources, record in joined:
                for batch in sources:
                    self._gave(batch, len(batch))
                yield record
        finally:
            batches.close()

    def to_reader(self) -> pyarrow.RecordBatchReader:
        """The answer as a pyarrow.RecordBatchReader: its schema first, then a batch per page as
        the reading gives them (memory holds a page, not the answer). Closed half-read (close(),
        `with`), or dropped, it ends the reading there (notes: stopped, output closed)."""
        import pyarrow as pa

        if self._table is not None:
            reader: pa.RecordBatchReader = self._table.to_reader()
            return reader
        schema = self.schema
        self._take("to_reader()")
        # (a reader of batches keeps them when closed, until it is dropped; one of its stream lets
        # go of it when closed: the batches' generator ends there, and the reading with it)
        batches = pa.RecordBatchReader.from_batches(schema, self._record_batches())
        return pa.RecordBatchReader.from_stream(batches)

    def to_arrow(self) -> pyarrow.Table:
        """The whole answer as a pyarrow.Table, in the types COPY TO Parquet writes (a blob column
        as NAME, NAME:label, NAME:kind, NAME:note, NAME:stored, NAME:confidence; a path's value
        with NAME:note).
        Ctrl-C ends the reading and keeps the rows read (notes: stopped). Held: asking again
        gives the same table."""
        if self._table is not None:
            return self._table
        import pyarrow as pa

        schema = self.schema
        self._take("to_arrow()")
        self._table = pa.Table.from_batches(list(self._record_batches(collect=True)), schema=schema)
        return self._table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The Arrow C stream interface (DuckDB, polars, pyarrow read the answer through it): the
        stream of to_reader(), or the table to_arrow() made."""
        stream: object = self.to_reader().__arrow_c_stream__(requested_schema)
        return stream

    def to_pandas(self, **options: Any) -> pandas.DataFrame:
        """The answer as a pandas.DataFrame (through to_arrow()), losing no value: every column in
        a pyarrow-backed dtype (pandas.ArrowDtype: nullable integers, exact decimals, dates,
        timestamps, lists, maps and structs as they are), but a uuid column, whose values are
        uuid.UUID objects (pandas has no dtype for Arrow's uuid type: inside a list or a struct
        a UUID is its 16 bytes), and JSON text, a string (docs/api.md's table). `options` go to
        pyarrow's Table.to_pandas; a `types_mapper` of its own (None: NumPy's dtypes, pyarrow's
        default) takes the table with the extension types as pandas can take them too (pyarrow's
        to_pandas converts no extension type inside a list, a map or a struct)."""
        import pyarrow as pa

        pd = need("pandas")
        table = self.to_arrow()
        table = table.cast(pa.schema([_for_pandas(f) for f in table.schema], metadata=table.schema.metadata))
        if "types_mapper" not in options:
            options["types_mapper"] = lambda t: None if isinstance(t, pa.BaseExtensionType) \
                else pd.ArrowDtype(t)
        frame: pandas.DataFrame = table.to_pandas(**options)
        for at, field in enumerate(table.schema):
            if isinstance(field.type, pa.BaseExtensionType):
                # a uuid column: its uuid.UUID objects (pyarrow before 26 gives their 16 bytes here)
                frame.isetitem(at, pd.Series(table.column(at).to_pylist(), index=frame.index, dtype=object))
        return frame

    def to_polars(self, **options: Any) -> polars.DataFrame:
        """The answer as a polars.DataFrame (through to_arrow(), no copy per value: polars keeps
        the Arrow types); `options` go to polars.from_arrow."""
        pl = need("polars")
        frame: polars.DataFrame = pl.from_arrow(self.to_arrow(), **options)
        return frame


def _for_pandas(field: pyarrow.Field) -> pyarrow.Field:
    """A column's field as pandas takes it losing nothing: an Arrow extension type (a uuid) its
    storage (16 bytes) wherever pandas' ArrowDtype cannot hold it (inside a list, a map or a
    struct), a uuid column itself kept (its values become uuid.UUID objects)."""
    import pyarrow as pa

    if isinstance(field.type, pa.BaseExtensionType) and field.type.extension_name == "arrow.uuid":
        return field
    return field.with_type(_storage(field.type))


def _storage(kind: pyarrow.DataType) -> pyarrow.DataType:
    """`kind` with each extension type in it its storage, a fixed-size binary a binary."""
    import pyarrow as pa

    def leaf(found: pyarrow.DataType) -> pyarrow.DataType:
        if isinstance(found, pa.BaseExtensionType):
            return _storage(found.storage_type)
        if pa.types.is_fixed_size_binary(found):  # a UUID's bytes (pandas shows none in a list)
            return pa.binary()
        return found

    return _retyped(kind, leaf)


def _retyped(kind: pyarrow.DataType, leaf: Callable[[pyarrow.DataType], pyarrow.DataType]
             ) -> pyarrow.DataType:
    """`kind` with each type that holds no other (a list's, a map's, a struct's) as `leaf` makes it."""
    import pyarrow as pa

    if pa.types.is_fixed_size_list(kind):
        return pa.list_(kind.value_field.with_type(_retyped(kind.value_type, leaf)), kind.list_size)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(kind.value_field.with_type(_retyped(kind.value_type, leaf)))
    if pa.types.is_map(kind):
        return pa.map_(kind.key_field.with_type(_retyped(kind.key_type, leaf)),
                       kind.item_field.with_type(_retyped(kind.item_type, leaf)))
    if pa.types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        return pa.struct([f.with_type(_retyped(f.type, leaf)) for f in fields])
    return leaf(kind)


def _drivers(column: AnswerColumn) -> bool:
    """Whether a row gives `column`'s value as the driver read it: a CQL column's that holds no
    blob (a blob inside a map, a tuple or a UDT is decoded, so the row gives the table's value, as
    for a blob column)."""
    from cqlsh_ext.cql.types import from_driver
    from cqlsh_ext.payload.columns import CQL

    return column.role == CQL and (column.cql_type is None or not from_driver(column.cql_type).holds())


def _table_rows(converted: Any, held: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A batch's rows as the table holds them (`converted`, an Arrow batch: to_pylist()); a
    value pyarrow has no Python value for (a timestamp past year 9999 in a UDT beside a blob) in a
    CQL column of `held` (name: its values as read) is the driver's, its blobs as stored, as a CQL
    column's value is where it holds no blob; elsewhere pyarrow's OverflowError is raised."""
    try:
        rows: list[dict[str, Any]] = converted.to_pylist()
        return rows
    except OverflowError:
        if not held:
            raise
    names = list(converted.schema.names)
    columns = [converted.column(name) for name in names]
    drivers: dict[str, list[Any]] = {}
    rows = []
    for k in range(converted.num_rows):
        row: dict[str, Any] = {}
        for name, column in zip(names, columns, strict=True):
            try:
                row[name] = column[k].as_py()
            except OverflowError:
                if name not in held:
                    raise
                if name not in drivers:
                    drivers[name] = held[name].values()
                row[name] = drivers[name][k]
        rows.append(row)
    return rows


def _tail(batch: AnswerBatch, skip: int, width: int) -> AnswerBatch:
    """A batch without its first `skip` rows (a resumed page's rows given out before)."""
    from cqlsh_ext.reading.typed import AnswerBatch

    positions = batch.positions
    kept = [positions[i] for i in range(skip, len(batch))] if positions is not None else None
    return AnswerBatch(columns=[c[skip:len(batch)] for c in batch.columns(width)], positions=kept)


# ------------------------------------------------------------ paging states

#: A paging state's first bytes: what it is, and its layout's version.
STATE_MAGIC = b"cqlsh-ext/paging\x01"
_STATE_HEAD = struct.Struct(">16sQIB")


def identity(statement: str, params: object) -> bytes:
    """What a paging state belongs to: the statement as written and its parameters' values."""
    return hashlib.sha256(f"{statement.strip()}\x00{_canonical(params)}".encode("utf-8", "surrogatepass")
                          ).digest()[:16]


def _canonical(value: object) -> str:
    """A value's text the same in every process (a set's order is not)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(v) for v in value)) + "}"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    if type(value) is int and value.bit_length() > _PLAIN_BITS:  # repr() refuses past 4,300 digits
        return f"int:{value:x}"
    return repr(value)


#: An int of at most this many bits has fewer digits than Python's repr() converts.
_PLAIN_BITS = 14_000


def encode_state(owner: bytes, state: bytes | None, index: int, given: int) -> bytes:
    """A paging state: whose it is, the driver's paging state of the page the next row is on (None:
    the first page), that row's index among the page's rows, the rows given out before the page."""
    head = _STATE_HEAD.pack(owner, given, index, 0 if state is None else 1)
    return STATE_MAGIC + head + (state or b"")


@dataclass(frozen=True)
class Resume:
    """A paging state read back (encode_state's parts)."""

    state: bytes | None
    skip: int
    given: int


#: Where an answer not gone on with (no paging state given) starts: decode_state's answer to None.
FROM_START = Resume(None, 0, 0)


def decode_state(owner: bytes, token: bytes | None) -> Resume:
    """A paging state of this statement and these parameters, read (None: FROM_START); Error for
    any other."""
    if token is None:
        return FROM_START
    if not isinstance(token, (bytes, bytearray)) or not bytes(token).startswith(STATE_MAGIC) \
            or len(token) < len(STATE_MAGIC) + _STATE_HEAD.size:
        raise Error("paging_state: not a paging state of cqlsh_ext (answer.paging_state gives one)")
    whose, given, index, has_state = _STATE_HEAD.unpack_from(token, len(STATE_MAGIC))
    if whose != owner:
        raise Error("paging_state: this paging state is another statement's (or other parameters'): "
                    "go on with the statement and parameters it came from")
    rest = bytes(token[len(STATE_MAGIC) + _STATE_HEAD.size:])
    return Resume(rest if has_state else None, index, given)

