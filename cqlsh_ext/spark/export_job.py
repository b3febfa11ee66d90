"""COPY (SELECT ...) TO 'dir' WITH FORMAT = 'parquet' on Spark: the shell's export schema
(cqlsh_ext.render.parquet_columns and arrow_types) written by Spark's own Parquet writer, a directory of
part files, for tables one machine cannot read in time (docs/export.md, "On Spark").

The answer is found as Spark mode's SELECT finds it (query_job.answer_parts: each task fills
a part of the Answer), then handed on as a DataFrame, so the rows never gather on the driver
(unless LIMIT, an aggregate, DISTINCT or ORDER BY make the answer the driver's anyway):

1. every task's answer rows are split into the export's columns and their kinds read; the kinds
   merge over all partitions into the lattice's join, the schema the shell's file ends with;
2. the rows are converted to those kinds, then to what Spark takes (datetimes, dates, Decimals,
   dicts for maps), and written with `DataFrame.write.parquet`.

Spark reads the table once: the found rows are persisted (memory and disk) between the two passes.
Spark has no time-of-day type: a CQL time is its nanoseconds of the day (bigint) here.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from functools import partial
from typing import Any

from cqlsh_ext.export.parse import LABEL, ExportStatement
from cqlsh_ext.render.arrow_types import (
    Bool,
    Dec,
    Float,
    Int,
    Json,
    Kind,
    Leaf,
    List,
    Map,
    Null,
    Str,
    Struct,
    compile_kind,
    merge,
    settled,
    value_kind,
)
from cqlsh_ext.spark.session import SparkError, TaskProgress, java_error

Row = tuple[Any, ...]
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)


def _as_the_driver_reads(roles: Sequence[str], rows: Iterable[Row]) -> list[Row]:
    """The connector gives a null collection column as an empty one; the Python driver (the
    shell) as None, which is what Cassandra stores for both. Inside a frozen collection an empty
    one is a value, and stays."""
    from cqlsh_ext.render.parquet_columns import CQL

    cql = [i for i, role in enumerate(roles) if role == CQL]
    out = []
    for row in rows:
        if any(isinstance(row[i], (list, dict, set, tuple)) and not row[i] for i in cql):
            row = tuple(None if i in cql and isinstance(v, (list, dict, set, tuple)) and not v else v
                        for i, v in enumerate(row))
        out.append(row)
    return out


def _splitter(roles: Sequence[str], settings: Any, places: Sequence[Any]) -> Any:
    from cqlsh_ext.render.parquet_columns import Splitter

    return Splitter(roles, settings, places, settings.cap)


def partition_kinds(seeds: Sequence[Kind], inferred: Sequence[bool], roles: Sequence[str], settings: Any,
                    places: Sequence[Any], rows: Iterable[Row]) -> Iterator[list[Kind]]:
    """One task: the kinds of its rows' export columns (the seeds where the kind is not read)."""
    rows = _as_the_driver_reads(roles, rows)
    columns = _splitter(roles, settings, places).split(rows)
    kinds = list(seeds)
    for i, values in enumerate(columns):
        if inferred[i]:
            for value in values:
                kinds[i] = merge(kinds[i], value_kind(value, seeds[i]))
    yield kinds


def merge_kinds(a: list[Kind], b: list[Kind]) -> list[Kind]:
    return [merge(x, y) for x, y in zip(a, b, strict=True)]


def partition_rows(kinds: Sequence[Kind], roles: Sequence[str], settings: Any, places: Sequence[Any],
                   written: Any, rows: Iterable[Row]) -> Iterator[Row]:
    """One task: its rows converted to the kinds, then to Spark's values."""
    rows = _as_the_driver_reads(roles, rows)
    splitter = _splitter(roles, settings, places)
    columns = splitter.split(rows)
    converters = [compile_kind(k, splitter.cql_json) for k in kinds]
    out = [[spark_value(kind, convert(v)) for v in values]
           for kind, convert, values in zip(kinds, converters, columns, strict=True)]
    written.add(len(rows))
    yield from zip(*out, strict=True) if out else iter(())


def spark_value(kind: Kind, value: Any) -> Any:
    """A value converted for Arrow (cqlsh_ext.render.arrow_types) as Spark's Python rows take it."""
    if value is None:
        return None
    if isinstance(kind, (Int, Dec)) and (isinstance(kind, Dec) or kind.bits > 64):
        return Decimal(value)
    if isinstance(kind, List):
        return [spark_value(kind.item, v) for v in value]
    if isinstance(kind, Map):
        return {spark_value(kind.key, k): spark_value(kind.value, v) for k, v in value}
    if isinstance(kind, Struct):
        return {name: spark_value(k, value.get(name)) for name, k in kind.fields}
    if isinstance(kind, Leaf):
        if kind.name == "timestamp":
            return _EPOCH + datetime.timedelta(milliseconds=value)
        if kind.name == "date":
            return _EPOCH_DATE + datetime.timedelta(days=value)
        if kind.name == "binary":
            return bytearray(value)
    return value


def spark_type(kind: Kind) -> Any:
    from pyspark.sql import types as T

    if isinstance(kind, (Null, Str, Json)):
        return T.StringType()
    if isinstance(kind, Bool):
        return T.BooleanType()
    if isinstance(kind, Int):
        return T.LongType() if kind.bits <= 64 else T.DecimalType(38, 0)
    if isinstance(kind, Float):
        return T.DoubleType()
    if isinstance(kind, Dec):
        return T.DecimalType(38, kind.scale)
    if isinstance(kind, List):
        return T.ArrayType(spark_type(kind.item), True)
    if isinstance(kind, Map):
        return T.MapType(spark_type(kind.key), spark_type(kind.value), True)
    if isinstance(kind, Struct):
        return T.StructType([T.StructField(name, spark_type(k), True) for name, k in kind.fields])
    leaves = {
        "int8": T.ByteType(), "int16": T.ShortType(), "int32": T.IntegerType(), "int64": T.LongType(),
        "float32": T.FloatType(), "float64": T.DoubleType(), "bool": T.BooleanType(),
        "binary": T.BinaryType(), "timestamp": T.TimestampType(), "date": T.DateType(),
        "time": T.LongType(),  # Spark has no time of day: nanoseconds since midnight
        "duration": T.StructType([T.StructField("months", T.IntegerType(), True),
                                  T.StructField("days", T.IntegerType(), True),
                                  T.StructField("nanoseconds", T.LongType(), True)]),
    }
    return leaves.get(kind.name, T.StringType())


def run(spark: Any, session: Any, stmt: Any, settings: Any) -> None:
    """`stmt`: spark.parse.ExportStatementOnSpark (the parsed COPY, the table it reads)."""
    import dataclasses

    from cqlsh_ext.payload.places import ValuePlace
    from cqlsh_ext.render.parquet_columns import columns, roles
    from cqlsh_ext.spark.query_job import answer_parts, columns_read, plan_query

    export: ExportStatement = stmt.export
    ks, meta, plan, evaluator_settings, answer, types = plan_query(
        session, settings, stmt.keyspace, stmt.table, export.query, LABEL,
        f"{LABEL}: COPY ( ... ) takes a SELECT ... FROM [keyspace.]table", "the COPY", plain=True)
    display = settings.display
    if export.raw is not None:
        display = dataclasses.replace(display, raw_blobs=export.raw)
    header = answer.header()
    places = [ValuePlace(ks, meta.name, name) for name in header]
    export_columns = columns(header, types)
    column_roles = roles(types)
    seeds = [c.seed for c in export_columns]
    inferred = [c.inferred for c in export_columns]
    names = columns_read(plan, meta)
    context = spark.sparkContext
    rows_read = context.accumulator(0)
    written = context.accumulator(0)
    label = f"COPY (SELECT ...) FROM {ks}.{meta.name} on Spark"
    try:
        from pyspark import StorageLevel

        tasks = answer_parts(spark, session, ks, meta.name, names, answer, evaluator_settings, rows_read)
        tasks.persist(StorageLevel.MEMORY_AND_DISK)
        with TaskProgress(spark, label, rows_read):
            parts = tasks.map(lambda found: found[0]).collect()
        for part in parts:
            answer.merge(part)
        if answer.streamed and plan.limit is None:
            rows = tasks.flatMap(lambda found: found[1])
        else:
            kept = answer.final() if not answer.streamed else \
                [r for found in tasks.map(lambda found: found[1]).collect() for r in found][:plan.limit]
            rows = context.parallelize(kept, 1)
        kinds = rows.mapPartitions(partial(partition_kinds, seeds, inferred, column_roles, display, places)) \
            .fold(list(seeds), merge_kinds)
        kinds = [settled(k) for k in kinds]
        from pyspark.sql import types as T

        spark_schema = T.StructType([T.StructField(c.name, spark_type(k), True)
                                     for c, k in zip(export_columns, kinds, strict=True)])
        converted = rows.mapPartitions(partial(partition_rows, kinds, column_roles, display, places, written))
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        frame_out = spark.createDataFrame(converted, spark_schema, verifySchema=False)
        frame_out.write.mode("overwrite" if export.overwrite else "errorifexists") \
            .option("compression", export.codec or "zstd").parquet(export.path)
        tasks.unpersist()
    except Exception as err:
        text = java_error(err)
        if "already exists" in text:
            raise SparkError(f"{LABEL}: {export.path} exists: add WITH OVERWRITE = true to replace it") \
                from None
        raise SparkError(f"{LABEL}: writing {export.path} on Spark failed: {text}") from None
    from cqlsh_ext.reading.typed import ReadNotes
    from cqlsh_ext.render.closing import closing_parts

    how = f"Spark {context.applicationId}, master {context.master}"
    reading = ReadNotes(answer, how=how, emitted=written.value)
    codec = export.codec or "zstd"
    print(f"{LABEL}: {written.value:,} rows written to {export.path} (Parquet part files by Spark, {codec}); "
          + ", ".join(closing_parts(reading)))
    sys.stdout.flush()
