"""COMPRESSION STATS over a whole table on Spark: the executors build the shell's aggregate.

Each Spark partition (a set of token ranges the connector reads) is scanned by one task into a fresh
`insight.stats.Stats`, exactly as a worker process of the shell's exact scan does (an Aggregate,
scanning/aggregate.py): `fresh()`, `set_columns(names, types)` with the column types the Python
driver reports for the same SELECT, `add_rows(rows)` page by page. The driver merges the tasks'
Stats (`merge`) and prints the shell's own report (`render`, `to_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from cqlsh_ext.cql.types import SEQUENCES, UDT, CqlType, from_driver
from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.spark.parse import StatsStatement
from cqlsh_ext.spark.session import SparkError, TaskProgress, java_error

#: Rows handed to Stats.add_rows at once in a task (its column-wise fast path works per page).
PAGE_ROWS = 1000


def table_meta(session: Any, keyspace: str | None, table: str) -> tuple[str, Any]:
    ks = keyspace or session.keyspace
    if not ks:
        raise SparkError(f"name the table as keyspace.table (or give -k KEYSPACE): {table}")
    meta = session.cluster.metadata.keyspaces.get(ks)
    if meta is None or table not in meta.tables:
        raise SparkError(f"table {ks}.{table} not found")
    return ks, meta.tables[table]


def stats_query(session: Any, stmt: StatsStatement, ks: str, meta: Any) -> str:
    """The SELECT the shell scans for this statement (a table named alone: its payload columns,
    cql.types.table_payload_columns)."""
    if stmt.select is not None:
        return stmt.select
    from cassandra.metadata import protect_name

    from cqlsh_ext.cql.types import table_payload_columns, udts_of

    columns = table_payload_columns(meta, udts_of(session.cluster.metadata.keyspaces.get(ks)))
    if not columns:
        raise SparkError(f"{ks}.{stmt.table} has no blob column and no text column outside its primary key")
    table = f"{protect_name(ks)}.{protect_name(stmt.table)}"
    return f"SELECT {', '.join(map(protect_name, columns))} FROM {table}"


def result_columns(session: Any, query: str) -> tuple[list[str], list[Any]]:
    """The result's column names and driver types, as the shell sees them (one row read)."""
    from cassandra.query import SimpleStatement

    try:
        result = session.execute(SimpleStatement(f"{query} LIMIT 1", fetch_size=1))
    except Exception as err:
        from cqlsh_ext.scanning.scan import error_text

        raise SparkError(error_text(err)) from None
    return list(result.column_names), list(result.column_types)


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


def scan_partition(template: Stats, names: Sequence[str], types: Sequence[Any], rows_read: Any,
                   batches: Iterable[Any]) -> Iterator[Any]:
    """One Spark task (in an executor): its rows, Arrow batch by batch, into a fresh Stats; yields
    one Arrow batch holding the pickled Stats."""
    import pickle

    import pyarrow

    stats = template.fresh()
    stats.set_columns(names, types)
    cqltypes = [from_driver(t) for t in types]
    nested = [i for i, t in enumerate(cqltypes) if not t.is_blob]
    for batch in batches:
        columns = [batch.column(i).to_pylist() for i in range(len(names))]
        for i in nested:
            columns[i] = [driver_value(v, cqltypes[i]) for v in columns[i]]
        rows = list(zip(*columns, strict=True))
        for start in range(0, len(rows), PAGE_ROWS):
            stats.add_rows(rows[start:start + PAGE_ROWS])
        rows_read.add(len(rows))
    yield pyarrow.RecordBatch.from_pydict({"stats": [pickle.dumps(stats)]})


def read_table(spark: Any, ks: str, table: str, names: Sequence[str]) -> Any:
    """The table through the connector, its columns in the result's order."""
    from pyspark.sql import functions

    frame = spark.read.format("org.apache.spark.sql.cassandra").options(keyspace=ks, table=table).load()
    return frame.select(*[functions.col(f"`{n}`") for n in names])


def run(spark: Any, session: Any, stmt: StatsStatement, mode: str, cap: int, pricing: Any = None) -> Stats:
    import pickle
    from functools import partial

    ks, meta = table_meta(session, stmt.keyspace, stmt.table)
    query = stats_query(session, stmt, ks, meta)
    names, types = result_columns(session, query)
    stats = Stats(query, mode, cap, from_headers=not stmt.decode_all, pricing=pricing)
    stats.set_columns(names, types)
    if not stats.has_payloads:
        raise SparkError("the result has no blob or text column")
    rows_read = spark.sparkContext.accumulator(0)
    context = spark.sparkContext
    try:
        frame = read_table(spark, ks, stmt.table, names)
        # Rows cross from the JVM to Python as Arrow batches (mapInArrow), not row by row.
        tasks = frame.mapInArrow(partial(scan_partition, stats, names, types, rows_read), "stats binary")
        with TaskProgress(spark, f"COMPRESSION STATS {ks}.{stmt.table} on Spark", rows_read):
            partials = [pickle.loads(row.stats) for row in tasks.collect()]
    except Exception as err:
        raise SparkError(f"reading {ks}.{stmt.table} through the Spark connector failed: "
                         f"{java_error(err)}") from None
    for part in partials:
        stats.merge(part)
    stats.scan = f"Spark {context.applicationId}, master {context.master}, {len(partials)} tasks"
    stats.finish()
    return stats
