"""A user's Spark 4 job: a table read through cqlsh-ext's data source (cqlsh_ext.spark.datasource) in
local mode. tests/spark/test_datasource.py runs it with pyspark 4 and checks what it writes into OUT
(result.json, frame.arrow, stored.arrow, types.arrow) against the server, the producers and the
Python API.

    python datasource_job.py HOST PORT USER PASSWORD KEYSPACE.TABLE KEYSPACE.TYPES SPLIT_SIZE_MB OUT
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path


def explained(frame) -> str:
    """The frame's plan as explain("formatted") prints it (the pushed filters among it)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        frame.explain("formatted")
    return out.getvalue()


def write_arrow(table, path: Path) -> None:
    import pyarrow as pa

    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def main(host: str, port: str, user: str, password: str, table: str, types: str, split_mb: str,
         out: Path) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors: this interpreter
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from cqlsh_ext.spark.datasource import register

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.showConsoleProgress", "false")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(out / "events"))
             .config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.compress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    def read(**options: str):  # (a DataFrameReader keeps each option set on it: one a read)
        options.setdefault("table", table)
        return spark.read.format("cqlsh_ext").options(host=host, port=port, username=user,
                                                      password=password, **options).load()

    frame = read(columns="id, data.status, data.amount, data")
    paid = frame.filter(F.col("`data.status`") == "PAID")
    gold = frame.filter((F.col("data.customer.tier") == "gold") & (F.col("`data.amount`") > 200))
    few = frame.filter(F.col("id") < 50)  # an ordinary column's filter: Spark's own
    seven = read(partitions="7")
    sized = read(split_size_mb=split_mb)
    result = {
        "partitions": frame.rdd.getNumPartitions(),
        "count": frame.count(),
        "paid_ids": sorted(row.id for row in paid.select("id").collect()),
        "gold_ids": sorted(row.id for row in gold.select("id").collect()),
        "few": few.count(),
        "plans": {"paid": explained(paid), "gold": explained(gold), "few": explained(few)},
        "seven": [seven.rdd.getNumPartitions(), seven.count()],
        "sized": [sized.rdd.getNumPartitions(), sized.count()],
    }
    from cqlsh_ext.spark.session import java_error

    try:  # a mistyped option: what the user reads of it (cqlsh-ext spark's one line from Spark's error)
        read(tabel="x")
    except Exception as err:
        result["mistyped"] = java_error(err)
    # Options out of their ranges, and a statement's parts where names are due: what load() says
    # (the frame's columns where it takes them: nothing is read, nothing counted).
    result["refused"] = {}
    for case, options in {"partitions": {"partitions": "1000000"},
                          "min_partitions": {"min_partitions": str(10 ** 9)},
                          "split_size_mb": {"split_size_mb": "1e-12"},
                          "columns": {"columns": f"* FROM {types} --"},
                          "table": {"table": f"{table} WHERE id = 1"}}.items():
        try:
            result["refused"][case] = f"taken: {', '.join(read(**options).columns)}"
        except Exception as err:
            result["refused"][case] = java_error(err)
    try:  # a timestamp past Spark's (microseconds): what the user reads of it
        result["far"] = f"read: {read(table=types.rsplit('.', 1)[0] + '.far').collect()}"
    except Exception as err:
        result["far"] = java_error(err)
    write_arrow(frame.toArrow(), out / "frame.arrow")
    write_arrow(read(blobs="stored").select("id", "data").toArrow(), out / "stored.arrow")
    types_frame = read(table=types)
    result["types"] = [types_frame.count(), types_frame.filter(F.col("tm") > 0).count()]
    write_arrow(types_frame.toArrow(), out / "types.arrow")
    (out / "result.json").write_text(json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    host, port, user, password, table, types, split_mb, out = sys.argv[1:]
    main(host, port, user, password, table, types, split_mb, Path(out))
