"""A notebook's queries on one Spark 4 frame of cqlsh-ext's data source, one after another: a count,
a pushed filter's count, the count again, a groupBy, self-joins, isnan, another filter.
tests/spark/test_notebook.py runs it with pyspark 4 and checks each answer (OUT/answers.json)
against an oracle of its own.

    python notebook_job.py HOST PORT USER PASSWORD KEYSPACE.TABLE OUT
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(host: str, port: str, user: str, password: str, table: str, out: Path) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors: this interpreter
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from cqlsh_ext.spark.datasource import register

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    df = (spark.read.format("cqlsh_ext").options(host=host, port=port, username=user, password=password)
          .option("table", table).load())
    gold = F.col("data.customer.tier") == "gold"
    answers: list[tuple[str, object]] = [
        ("count", df.count()),
        ("gold", df.filter(gold).count()),
        ("count again", df.count()),
        ("by status", {row[0] or "": row[1] for row in df.groupBy(F.col("data.status")).count().collect()}),
        ("self-join", df.alias("a").join(df.alias("b"), "id").count()),
        ("join with gold", df.alias("a").join(df.filter(gold).alias("b"), "id").count()),
        ("isnan", df.filter(F.isnan("score")).count()),
        ("paid", df.filter(F.col("data.status") == "PAID").count()),
        ("count last", df.count()),
    ]
    (out / "answers.json").write_text(json.dumps(answers))
    spark.stop()


if __name__ == "__main__":
    host, port, user, password, table, out = sys.argv[1:]
    main(host, port, user, password, table, Path(out))
