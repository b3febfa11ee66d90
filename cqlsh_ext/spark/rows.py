"""A Spark task's rows as the shell reads them: the connector's Arrow batches handed on a page at a
time (the shell's aggregates and the value engine work per page: COMPRESSION STATS, SELECT,
DESCRIBE PAYLOAD) as payload.arrow_rows.ArrowRows, read as the server's page is: a blob column's
cells by the native core from the batch's buffers, the other columns a reader asks for made the
Python driver's values (Arrow's to_pylist, then driver_value); and the one job of the reports
(`merged_on_spark`: COMPRESSION STATS, DESCRIBE PAYLOAD), each task filling a part of the
report's aggregate, merged on the driver."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType, from_driver
from cqlsh_ext.payload.arrow_rows import ArrowRows

#: Rows handed on at once in a task (the engine decodes a page's blobs together).
PAGE_ROWS = 1000


def driver_value(value: Any, cqltype: CqlType) -> Any:
    """A value as Arrow gives it (a map as (key, value) pairs, a UDT or tuple as a dict of fields)
    in the form the Python driver gives it, which the shell's aggregate and output read
    (cqltypes.extractor, output.spellings): a scalar as _SCALARS makes it."""
    if value is None or cqltype.is_blob:
        return value
    kind, subs = cqltype.kind, cqltype.params
    if not subs:
        scalar = _SCALARS.get(cqltype.name)
        return value if scalar is None else scalar(value)
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


def _time(value: Any) -> Any:
    """A time of day: its nanoseconds since midnight, as the connector and cqlsh_ext's data source
    (datasource_arrow.plain_type) give it."""
    from cassandra.util import Time

    return Time(value)


_DURATION_UNITS = {"y": (12, 0, 0), "mo": (1, 0, 0), "w": (0, 7, 0), "d": (0, 1, 0),
                   "h": (0, 0, 3_600_000_000_000), "m": (0, 0, 60_000_000_000), "s": (0, 0, 1_000_000_000),
                   "ms": (0, 0, 1_000_000), "us": (0, 0, 1_000), "\u00b5s": (0, 0, 1_000), "ns": (0, 0, 1)}
_DURATION_PART = re.compile(r"(\d+)(mo|ms|us|\u00b5s|ns|y|w|d|h|m|s)", re.IGNORECASE)


def _duration(value: Any) -> Any:
    """A duration: the connector's text (the Java driver's CqlDuration.toString, `1mo2d3s123ns`,
    `-` before a negative one), or the data source's struct of months, days and nanoseconds."""
    from cassandra.util import Duration

    if isinstance(value, Mapping):
        return Duration(int(value["months"]), int(value["days"]), int(value["nanoseconds"]))
    text = str(value).strip()
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("-")
    parts = _DURATION_PART.findall(body)
    if "".join(n + u for n, u in parts) != body or not parts:
        raise ValueError(f"not a CQL duration: {text!r}")
    months = days = nanos = 0
    for number, unit in parts:
        m, d, n = _DURATION_UNITS[unit.lower()]
        months, days, nanos = months + int(number) * m, days + int(number) * d, nanos + int(number) * n
    return Duration(sign * months, sign * days, sign * nanos)


def _inet(value: Any) -> Any:
    """An address as the driver spells it (socket.inet_ntop: `::1`), where Java spelt an IPv6
    one in full (`0:0:0:0:0:0:0:1`)."""
    import socket

    text = str(value)
    if ":" not in text:
        return text
    return socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, text.split("%")[0]))


def _decimal(value: Any) -> Any:
    """A decimal: the data source gives its exact text (Arrow's decimal128 holds too few digits)."""
    from decimal import Decimal

    return value if isinstance(value, Decimal) else Decimal(str(value))


def _varint(value: Any) -> Any:
    """A varint: the connector's decimal(38, 0), or the data source's exact text."""
    from decimal import Decimal

    return int(value) if isinstance(value, int | Decimal) else int(str(value))


#: The scalars whose Spark value is not the driver's, by CQL type name.
_SCALARS: dict[str, Callable[[Any], Any]] = {
    "time": _time, "duration": _duration, "inet": _inet, "decimal": _decimal, "varint": _varint}


def arrow_pages(batches: Iterable[Any], types: Sequence[Any]) -> Iterator[ArrowRows]:
    """Each Arrow batch's rows, PAGE_ROWS at a time (slices of the batch: no buffer copied), as
    ArrowRows whose values are the driver's (driver_value: the columns of a type with parameters,
    and the scalars Spark holds otherwise); a collection column that is not frozen is null where
    Spark gives it empty: Cassandra keeps no empty one, and the driver reads it as null."""
    from functools import partial

    cqltypes = [from_driver(t) for t in types]
    converters = [partial(_top_value, cqltype=t, nullable_empty=_unfrozen_collection(d, t))
                  if t.params or t.name in _SCALARS else None
                  for d, t in zip(types, cqltypes, strict=True)]
    for batch in batches:
        yield from ArrowRows.pages(batch, converters, PAGE_ROWS)


def _unfrozen_collection(driver_type: Any, cqltype: CqlType) -> bool:
    return cqltype.kind in ("list", "set", "map") and str(getattr(driver_type, "typename", "")) != "frozen"


def _top_value(value: Any, cqltype: CqlType, nullable_empty: bool) -> Any:
    if nullable_empty and value is not None and not len(value):
        return None
    return driver_value(value, cqltype)


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


def filled_part(template: Any, evaluator_settings: Any, names: Sequence[str], types: Sequence[Any],
                counts: CoreCounts, batches: Iterable[Any]) -> Iterator[Any]:
    """One Spark task (in an executor) of an Aggregate-like reader (COMPRESSION STATS' Stats,
    DESCRIBE PAYLOAD's Description): its rows, Arrow batch by batch, into a fresh part of
    `template` (`set_columns`, then `add_rows` a page at a time: an ArrowRows), `counts` counting
    them; yields one Arrow batch holding the filled part, pickled (PART_SCHEMA)."""
    import pickle

    import pyarrow

    part = template.fresh()
    if evaluator_settings is not None:  # a WHERE's payload conditions (DESCRIBE PAYLOAD's)
        from cqlsh_ext.query.evaluate import Evaluator

        # Made here, not shipped (as Spark's SELECT makes its own: spark/query_job.py).
        part.evaluator = Evaluator(*evaluator_settings)
    part.set_columns(names, types)
    for page in counts.counted(arrow_pages(batches, types)):
        part.add_rows(page)
    yield pyarrow.RecordBatch.from_pydict({"part": [pickle.dumps(part)]})


def merged_on_spark(spark: Any, template: Any, ks: str, table: str, names: Sequence[str],
                    types: Sequence[Any], label: str, evaluator_settings: Any = None) -> str:
    """The Aggregate-like reader `template` filled by Spark, the one job of COMPRESSION STATS and
    DESCRIBE PAYLOAD: ks.table's columns `names` read (read_table), each task filling a fresh part
    (filled_part), the parts merged into `template` on the driver; `label` on the progress line.
    Returns how Spark read the table (the report's scan line)."""
    import pickle
    from functools import partial

    from cqlsh_ext.spark.session import TaskProgress, read_failed

    context = spark.sparkContext
    rows_read, from_arrow = context.accumulator(0), context.accumulator(0)
    try:
        frame = read_table(spark, ks, table, names)
        # Rows cross from the JVM to Python as Arrow batches (mapInArrow), not row by row.
        counts = CoreCounts(rows_read, from_arrow)
        task = partial(filled_part, template, evaluator_settings, names, types, counts)
        tasks = frame.mapInArrow(with_dictionaries(task), PART_SCHEMA)
        with TaskProgress(spark, label, rows_read):
            parts = [pickle.loads(row.part) for row in tasks.collect()]
    except Exception as err:
        raise read_failed(spark, f"{ks}.{table}", err) from None
    for part in parts:
        template.merge(part)
    return spark_how(context, len(parts), from_arrow.value)


def spark_how(context: Any, tasks: int, cells: int) -> str:
    """How Spark read a table, as a job's report or closing line says it: its application, master,
    tasks and the blob cells the native core read from Arrow."""
    return f"Spark {context.applicationId}, master {context.master}, {tasks} tasks{from_arrow_note(cells)}"


def read_table(spark: Any, ks: str, table: str, names: Sequence[str]) -> Any:
    """The table's columns `names`, in that order, blobs as their stored bytes: through the
    connector (Spark 3.5), or cqlsh-ext's data source (Spark 4: spark/datasource.py, `blobs` =
    `stored`, connected with the command's arguments: cli.py registered it)."""
    from pyspark.sql import functions

    from cqlsh_ext.spark.session import on_spark4

    if on_spark4(spark):
        from cqlsh_ext.query.grammar import quote
        from cqlsh_ext.spark.datasource import NAME

        frame = spark.read.format(NAME).options(table=f"{quote(ks)}.{quote(table)}", blobs="stored",
                                                columns=", ".join(quote(n) for n in names)).load()
    else:
        frame = spark.read.format("org.apache.spark.sql.cassandra").options(keyspace=ks, table=table).load()
    return frame.select(*[functions.col(f"`{n}`") for n in names])


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
