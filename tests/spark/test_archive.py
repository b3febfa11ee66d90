"""A Spark job whose executors run cqlsh_ext from an environment packed with venv-pack and shipped
with `--archives` (spark.archives), as docs/spark.md tells people to run it on a cluster: not the
driver's site-packages."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from conftest import REPO_ROOT

from .conftest import spark_env

pytestmark = pytest.mark.spark

JOB = r'''
import json, os, sys
from pyspark import SparkFiles
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[2]").getOrCreate()
# Local mode unpacks archives under SparkFiles' root (on a cluster: each executor's working
# directory, where PYSPARK_PYTHON=./environment/bin/python finds it).
spark.sparkContext.pythonExec = os.path.join(SparkFiles.getRootDirectory(), "environment", "bin", "python")
from cqlsh_ext.spark.udf import decoded

values = json.loads(sys.argv[1])
frame = spark.createDataFrame([(i, bytes.fromhex(v)) for i, v in enumerate(values)], "id int, data binary")

def where(_):
    import sys, cqlsh_ext
    yield sys.executable, cqlsh_ext.__file__

print(json.dumps({
    "root": os.path.realpath(SparkFiles.getRootDirectory()),
    "executors": sorted(set(spark.sparkContext.parallelize(range(4), 2).mapPartitions(where).collect())),
    "rows": [r.asDict() for r in frame.select("id", decoded("data").alias("d")).select("id", "d.*")
             .collect()],
}))
spark.stop()
'''


def _executor_requirements() -> list[str]:
    """The [spark] extra less what the executors do not need (pyspark comes with Spark's workers)."""
    text = (REPO_ROOT / "pyproject.toml").read_text()
    block = re.search(r"^spark = \[(.*?)^\]", text, re.S | re.M)
    assert block is not None
    requirements = re.findall(r'^\s*"([^"]+)"', block.group(1), re.M)
    return [r for r in requirements if not r.startswith(("pyspark", "venv-pack", "setuptools"))]


def test_executors_run_cqlsh_ext_from_a_packed_environment(tmp_path: Path):
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, str(REPO_ROOT), *_executor_requirements()], check=True, timeout=900)
    archive = tmp_path / "env.tar.gz"
    venv_pack = str(Path(sys.executable).parent / "venv-pack")
    subprocess.run([venv_pack, "-q", "-p", str(env_dir), "-o", str(archive)], check=True, timeout=600)
    job = tmp_path / "job.py"
    job.write_text(JOB)
    payloads = [json.dumps({"n": i}).encode() for i in range(6)]
    values = [zstandard.ZstdCompressor().compress(p) for p in payloads] + [b"plain text value"]
    env = {**spark_env(tmp_path), "PYSPARK_PYTHON": "/nonexistent/python",  # never the driver's
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run([str(Path(sys.executable).parent / "spark-submit"), "--master", "local[2]",
                           "--conf", f"spark.archives={archive}#environment", str(job),
                           json.dumps([v.hex() for v in values])],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (doc,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    unpacked = os.path.join(doc["root"], "environment")
    for executable, module in doc["executors"]:
        assert os.path.realpath(os.path.dirname(os.path.dirname(executable))) == unpacked
        assert os.path.realpath(module).startswith(unpacked + os.sep)
        assert not os.path.realpath(module).startswith(str(REPO_ROOT))
    rows = sorted(doc["rows"], key=lambda r: r["id"])
    assert rows == [
        *({"id": i, "text": p.decode(), "label": "zstd", "stored_bytes": len(v), "decompressed_bytes": len(p)}
          for i, (p, v) in enumerate(zip(payloads, values, strict=False))),
        {"id": 6, "text": "plain text value", "label": "not compressed", "stored_bytes": 16,
         "decompressed_bytes": 16},
    ]
