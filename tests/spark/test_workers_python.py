"""A user's own Spark 4 job reading through cqlsh-ext's data source, PYSPARK_PYTHON unset, on a
machine whose `python3` (Spark's default for its Python workers) has no cqlsh_ext: the source's
workers run the job's interpreter, as `cqlsh-ext spark`'s do; an interpreter the user chose
without cqlsh_ext is refused in one line naming PYSPARK_PYTHON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import make_table, spark_env

pytestmark = pytest.mark.spark

JOB = r'''
import json, os, sys
from pyspark.sql import SparkSession
from cqlsh_ext.spark.datasource import register

host, port, user, password, table, bare = sys.argv[1:]
said = {}
spark = SparkSession.builder.master("local[2]").config("spark.ui.showConsoleProgress", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
register(spark)
try:
    said["count"] = (spark.read.format("cqlsh_ext").options(host=host, port=port, username=user,
                     password=password, table=table).load().count())
except Exception as err:
    said["count"] = [line for line in str(err).splitlines() if "Error" in line][-1:]
spark.stop()
os.environ["PYSPARK_PYTHON"] = bare  # the user's choice, without cqlsh_ext
spark = SparkSession.builder.master("local[2]").getOrCreate()
try:
    register(spark)
    said["chosen"] = "registered"
except Exception as err:
    said["chosen"] = str(err)
spark.stop()
print(json.dumps(said))
'''


def test_a_users_job_without_pyspark_python(cassandra, tmp_path: Path):
    table = make_table(cassandra, 20)
    bare = getattr(sys, "_base_executable", sys.executable)  # this Python without .venv's packages
    assert subprocess.run([bare, "-c", "import cqlsh_ext"], cwd=tmp_path, capture_output=True).returncode != 0
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").symlink_to(bare)  # what Spark's default `python3` finds first
    env = spark_env(tmp_path, "4")
    env.pop("PYSPARK_PYTHON", None)
    env["PATH"] = os.pathsep.join([str(shims), env.get("PATH", "")])
    job = tmp_path / "job.py"
    job.write_text(JOB)
    proc = subprocess.run([sys.executable, str(job), cassandra.host, str(cassandra.port), cassandra.username,
                           cassandra.password, table.qualified, bare], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = json.loads(proc.stdout.splitlines()[-1])
    # (before: ModuleNotFoundError: No module named 'cqlsh_ext', from Spark's python3)
    assert said["count"] == 20
    assert said["chosen"] == (f"cqlsh_ext: Spark's Python workers run {bare!r} (PYSPARK_PYTHON), which has "
                              f"no cqlsh_ext: set PYSPARK_PYTHON to one that has ({sys.executable!r} has) "
                              "before the Spark session starts")
