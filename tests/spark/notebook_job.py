"""A notebook's queries on one Spark frame, one after another: a count, a filtered count, the count
again, a groupBy, self-joins, isnan, another filter. The frame is read on the road docs/spark.md
gives each Spark: on Spark 4 cqlsh-ext's data source (`4`: the filters pushed to it); on Spark 3.5
the Spark Cassandra Connector, the blob decoded by `cqlsh_ext.spark.udf.decoded` and its text
parsed by Spark's from_json (`3.5`). tests/spark/test_notebook.py runs it with each pyspark and
checks each answer (OUT/answers.json) against an oracle of its own.

    python notebook_job.py HOST PORT USER PASSWORD KEYSPACE.TABLE OUT {4,3.5}
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(host: str, port: str, user: str, password: str, table: str, out: Path, road: str) -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the executors: this interpreter
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    if road == "3.5":
        from cqlsh_ext.spark.session import CONNECTOR, start
        from cqlsh_ext.spark.udf import decoded

        connector = {"connection.host": host, "connection.port": port, "auth.username": user,
                     "auth.password": password}
        spark = start("local[2]", {f"spark.cassandra.{k}": v for k, v in connector.items()}, [CONNECTOR])
        keyspace, name = table.split(".")
        raw = (spark.read.format("org.apache.spark.sql.cassandra").options(keyspace=keyspace, table=name)
               .load())
        shape = "status STRING, customer STRUCT<tier: STRING>"
        df = raw.select("id", "score", F.from_json(decoded("data")["text"], shape).alias("data"))
    else:
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
    host, port, user, password, table, out, road = sys.argv[1:]
    main(host, port, user, password, table, Path(out), road)
