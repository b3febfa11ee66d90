"""A Spark task's rows as the shell reads them: the connector's Arrow batches handed on a page at a
time (the shell's aggregates and the value engine work per page: COMPRESSION STATS, SELECT,
DESCRIBE PAYLOAD) as payload.arrow_rows.ArrowRows, read as the server's page is: a blob column's
cells by the native core from the batch's buffers, the other columns a reader asks for made the
Python driver's values (Arrow's to_pylist, then driver_value)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType, from_driver
from cqlsh_ext.payload.arrow_rows import ArrowRows

#: Rows handed on at once in a task (the engine decodes a page's blobs together).
PAGE_ROWS = 1000


def driver_value(value: Any, cqltype: CqlType) -> Any:
    """A value as Arrow gives it (a map as (key, value) pairs, a UDT or tuple as a dict of fields)
    in the form the Python driver gives it, which the shell's aggregate reads (cqltypes.extractor)."""
    if value is None or cqltype.is_blob:
        return value
    kind, subs = cqltype.kind, cqltype.params
    if kind in SEQUENCES and subs:
        return [driver_value(v, subs[0]) for v in value]
    if kind == "map" and len(subs) == 2:
        return {driver_value(k, subs[0]): driver_value(v, subs[1]) for k, v in value}
    if kind == UDT:  # fields by name, as the driver's object has them
        from types import SimpleNamespace

        return SimpleNamespace(**{f: driver_value(value.get(f), sub)
                                  for f, sub in zip(cqltype.fields or (), subs, strict=False)})
    if kind == "tuple" and isinstance(value, dict):  # a struct of fields "0", "1", ...
        return tuple(driver_value(v, sub) for v, sub in zip(value.values(), subs, strict=False))
    return value


def arrow_pages(batches: Iterable[Any], types: Sequence[Any]) -> Iterator[ArrowRows]:
    """Each Arrow batch's rows, PAGE_ROWS at a time (slices of the batch: no buffer copied), as
    ArrowRows whose values are the driver's (only columns of a type with parameters need
    converting: a scalar is the same value either way)."""
    from functools import partial

    cqltypes = [from_driver(t) for t in types]
    converters = [partial(driver_value, cqltype=t) if t.params else None for t in cqltypes]
    for batch in batches:
        yield from ArrowRows.pages(batch, converters, PAGE_ROWS)


class CoreCounts:
    """What a task counts as it reads: its rows (`rows_read`, a Spark accumulator: the progress
    line), and the blobs the native core read from the batches' Arrow buffers (`from_arrow`, an
    accumulator the job's closing line shows: payload.running.arrow_cells)."""

    def __init__(self, rows_read: Any, from_arrow: Any) -> None:
        self.rows_read = rows_read
        self.from_arrow = from_arrow

    def counted(self, pages: Iterable[ArrowRows]) -> Iterator[ArrowRows]:
        """`pages`, each page's rows and the core's Arrow cells added once it has been read."""
        from cqlsh_ext.payload.running import arrow_cells

        for page in pages:
            before = arrow_cells()
            yield page
            self.rows_read.add(len(page))
            self.from_arrow.add(arrow_cells() - before)


def from_arrow_note(cells: int) -> str:
    """The job's words on the blob cells the core read from Arrow ('' for none): after its tasks."""
    return f" (the native core read the blobs of {cells:,} rows from Arrow)" if cells else ""


#: The one column of what a task yields: its part, pickled (read back with pickle.loads(row.part)).
PART_SCHEMA = "part binary"


def filled_part(part: Any, names: Sequence[str], types: Sequence[Any], counts: CoreCounts,
                batches: Iterable[Any]) -> Iterator[Any]:
    """One Spark task (in an executor) of an Aggregate-like reader (COMPRESSION STATS, DESCRIBE
    PAYLOAD): its rows, Arrow batch by batch, into `part` (`set_columns`, then `add_rows` a page
    at a time: an ArrowRows), `counts` counting them; yields one Arrow batch holding the filled
    part, pickled (PART_SCHEMA)."""
    import pickle

    import pyarrow

    part.set_columns(names, types)
    for page in counts.counted(arrow_pages(batches, types)):
        part.add_rows(page)
    yield pyarrow.RecordBatch.from_pydict({"part": [pickle.dumps(part)]})


Task = Callable[[Iterable[Any]], Iterator[Any]]


def with_dictionaries(task: Task) -> Task:
    """`task` carrying the driver's dictionaries (codecs.dictionaries, loaded from the settings) to
    the executor that runs it, which loads them before reading its rows."""
    from functools import partial

    from cqlsh_ext.codecs import dictionaries

    return partial(_loaded_then, dictionaries.STORE.all(), task)


def _loaded_then(entries: list[Any], task: Task, batches: Iterable[Any]) -> Iterator[Any]:
    from cqlsh_ext.codecs import dictionaries

    dictionaries.ensure(entries)
    return task(batches)
