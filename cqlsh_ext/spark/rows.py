"""A Spark task's rows as the shell reads them: the connector's Arrow batches turned into the Python
driver's row tuples and values (driver_value), handed on a page at a time, since the shell's
aggregates and the value engine work per page (COMPRESSION STATS, SELECT, DESCRIBE PAYLOAD)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType, from_driver

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


def batch_rows(batches: Iterable[Any], names: Sequence[str], types: Sequence[Any]
               ) -> Iterator[list[tuple[Any, ...]]]:
    """Each Arrow batch's rows, as tuples of the driver's values (only columns of a type with
    parameters need converting: a scalar is the same value either way)."""
    cqltypes = [from_driver(t) for t in types]
    nested = [i for i, t in enumerate(cqltypes) if t.params]
    for batch in batches:
        columns = [batch.column(i).to_pylist() for i in range(len(names))]
        for i in nested:
            columns[i] = [driver_value(v, cqltypes[i]) for v in columns[i]]
        yield list(zip(*columns, strict=True))


def pages(rows: list[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    """`rows` PAGE_ROWS at a time."""
    for start in range(0, len(rows), PAGE_ROWS):
        yield rows[start:start + PAGE_ROWS]


#: The one column of what a task yields: its part, pickled (read back with pickle.loads(row.part)).
PART_SCHEMA = "part binary"


def filled_part(part: Any, names: Sequence[str], types: Sequence[Any], rows_read: Any,
                batches: Iterable[Any]) -> Iterator[Any]:
    """One Spark task (in an executor) of an Aggregate-like reader (COMPRESSION STATS, DESCRIBE
    PAYLOAD): its rows, Arrow batch by batch, into `part` (`set_columns`, then `add_rows` a page
    at a time), `rows_read` (a Spark accumulator) counting them; yields one Arrow batch holding
    the filled part, pickled (PART_SCHEMA)."""
    import pickle

    import pyarrow

    part.set_columns(names, types)
    for rows in batch_rows(batches, names, types):
        for page in pages(rows):
            part.add_rows(page)
        rows_read.add(len(rows))
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
