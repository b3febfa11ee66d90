"""COPY (SELECT ...) TO 'dir' WITH FORMAT = 'parquet' on Spark: the shell's export schema
(payload.columns, payload.arrow_types) written by Spark's own Parquet writer, a directory of
part files, for tables one machine cannot read in time (docs/export.md, "On Spark").

The answer is found as Spark mode's SELECT finds it (query_job.answer_parts: each task fills
a part of the Answer), then handed on as a DataFrame, so the rows never gather on the driver
(unless LIMIT, an aggregate, DISTINCT or ORDER BY make the answer the driver's anyway):

1. the kinds are fixed from the answer's leading sample, as the shell fixes them: its first
   SAMPLE_ROWS rows in the partitions' order (the table's token order), `take` on the driver;
2. every task's rows become the export's columns in those kinds (payload.columns.arrow_arrays,
   through render.arrow_batches: a value that does not fit is null with its note), then what
   Spark takes (datetimes, dates, Decimals, dicts for maps), written with `DataFrame.write.parquet`.

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

from cqlsh_ext.common.text import plural
from cqlsh_ext.export.parse import LABEL, ExportStatement
from cqlsh_ext.payload.arrow_types import (
    Blob,
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
    arrow_type,
)
from cqlsh_ext.payload.columns import CQL, SAMPLE_ROWS, AnswerColumn
from cqlsh_ext.spark.session import SparkError, TaskProgress, java_error

Row = tuple[Any, ...]
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)


def _as_the_driver_reads(roles: Sequence[str], rows: Iterable[Row]) -> list[Row]:
    """The connector gives a null collection column as an empty one; the Python driver (the
    shell) as None, which is what Cassandra stores for both. Inside a frozen collection an empty
    one is a value, and stays."""
    cql = [i for i, role in enumerate(roles) if role == CQL]
    out = []
    for row in rows:
        if any(isinstance(row[i], (list, dict, set, tuple)) and not row[i] for i in cql):
            row = tuple(None if i in cql and isinstance(v, (list, dict, set, tuple)) and not v else v
                        for i, v in enumerate(row))
        out.append(row)
    return out


def _typed(columns: Sequence[AnswerColumn], places: Sequence[Any], rows: list[Row]) -> Any:
    """Rows of the answer as a TypedAnswer of one batch (what the shell's readers take)."""
    from cqlsh_ext.reading.typed import AnswerBatch, ReadNotes, TypedAnswer

    return TypedAnswer(columns, iter([AnswerBatch(rows)]), ReadNotes(None), places=places)


def fixed_columns(columns: Sequence[AnswerColumn], settings: Any, places: Sequence[Any],
                  sample: list[Row]) -> list[AnswerColumn]:
    """The columns with their kinds fixed from the answer's leading sample, as the shell fixes them."""
    from cqlsh_ext.output.spellings import blob_reading

    roles = [c.role for c in columns]
    return _typed(columns, places, _as_the_driver_reads(roles, sample)).fixed(blob_reading(settings))


def partition_rows(columns: Sequence[AnswerColumn], settings: Any, places: Sequence[Any], written: Any,
                   misfits: Any, rows: Iterable[Row]) -> Iterator[Row]:
    """One task: its rows as the export's columns in the fixed kinds (render.arrow_batches, as the
    shell's file is written), then Spark's values."""
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.render.arrow_batches import ArrowBatches

    roles = [c.role for c in columns]
    found = _as_the_driver_reads(roles, rows)
    if not found:
        return
    typed = _typed(columns, places, found)
    arrow = ArrowBatches(typed, blob_reading(settings))
    kinds = [kind for column in arrow.columns for _name, kind in column.fields()]
    for batch in typed:
        converted = arrow.convert(batch)
        values = [[spark_value(kind, v) for v in array.to_pylist()]
                  for kind, array in zip(kinds, converted.columns, strict=True)]
        yield from zip(*values, strict=True)
    written.add(len(found))
    misfits.add(sum(typed.notes.misfits.values()))


def spark_value(kind: Kind, value: Any) -> Any:
    """A value of an Arrow column of `kind` (pyarrow's to_pylist) as Spark's Python rows take it."""
    if value is None:
        return None
    if isinstance(kind, List):
        return [spark_value(kind.item, v) for v in value]
    if isinstance(kind, Map):
        return {spark_value(kind.key, k): spark_value(kind.value, v) for k, v in value}
    if isinstance(kind, Struct):
        return {name: spark_value(k, value.get(name)) for name, k in kind.fields}
    if isinstance(kind, Blob):
        return {**value, "payload": spark_value(kind.payload, value.get("payload")),
                "stored": None if value.get("stored") is None else bytearray(value["stored"])}
    if isinstance(kind, Leaf):
        if kind.name == "uuid":  # Spark has no uuid type: its text
            return str(value)
        if kind.name == "time":  # Spark has no time of day: nanoseconds since midnight
            seconds = (value.hour * 60 + value.minute) * 60 + value.second
            return seconds * 1_000_000_000 + value.microsecond * 1000
        if kind.name == "binary":
            return bytearray(value)
    if isinstance(value, Decimal) or isinstance(kind, Dec):
        return Decimal(value)
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
    if isinstance(kind, Blob):  # the struct's parts as the shell's Arrow declares them (arrow_type)
        import pyarrow as pa

        return T.StructType([
            T.StructField(part.name, spark_type(kind.payload) if part.name == "payload" else
                          T.BinaryType() if pa.types.is_binary(part.type) else T.StringType(), True)
            for part in arrow_type(kind)])
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
    from cqlsh_ext.reading.select import answer_columns
    from cqlsh_ext.spark.query_job import answer_parts, plan_query

    export: ExportStatement = stmt.export
    ks, meta, plan, evaluator_settings, answer, types, names = plan_query(
        session, settings, stmt.keyspace, stmt.table, export.query, LABEL,
        f"{LABEL}: COPY ( ... ) takes a SELECT ... FROM [keyspace.]table", "the COPY", plain=True)
    display = settings.display
    if export.raw is not None:
        display = dataclasses.replace(display, raw_blobs=export.raw)
    places = [ValuePlace(ks, meta.name, name) for name in answer.header()]
    export_columns = answer_columns(plan, answer, types)  # the shell's export's columns
    context = spark.sparkContext
    rows_read = context.accumulator(0)
    written = context.accumulator(0)
    misfits = context.accumulator(0)
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
        fixed = fixed_columns(export_columns, display, places, rows.take(SAMPLE_ROWS))
        from pyspark.sql import types as T

        spark_schema = T.StructType([T.StructField(name, spark_type(kind), True)
                                     for column in fixed for name, kind in column.fields()])
        converted = rows.mapPartitions(partial(partition_rows, fixed, display, places, written, misfits))
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
    parts = closing_parts(reading)
    if misfits.value:
        parts.append(f"{plural(misfits.value, 'value')} did not fit their column's type (null there, "
                     "with a note)")
    print(f"{LABEL}: {plural(written.value, 'row')} written to {export.path} (Parquet part files by Spark, "
          f"{codec}); " + ", ".join(parts))
    sys.stdout.flush()
