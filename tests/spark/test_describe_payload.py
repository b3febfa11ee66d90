"""`cqlsh-ext spark` DESCRIBE PAYLOAD in local mode against the test Cassandra: every figure of
the report (encodings, paths, counts, distinct-count sketches, top values, map places, a WHERE's
filter) equals the shell's ALL, read in one stream and by worker processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, isolated_env

from cqlsh_ext.payload import native

from .conftest import DESCRIBES, json_lines, run_spark

pytestmark = pytest.mark.spark


def shell_report(cassandra, home: Path, statement: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-e", statement], cwd=home, capture_output=True,
                          text=True, timeout=300, env={**isolated_env(home), **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def figures(doc: dict) -> dict:
    """A report less how it was read (Spark's application, the time it took)."""
    return {k: v for k, v in doc.items() if k != "reading"}


def spark_reports(runs) -> list[dict]:
    """The `runs` fixture's DESCRIBE PAYLOAD reports: DESCRIBE's, then DESCRIBES' (its file's order)."""
    reports = [doc for doc in json_lines(runs.spark.stdout) if "describe" in doc]
    assert len(reports) == 1 + len(DESCRIBES), runs.spark.stdout
    return reports


@pytest.fixture(scope="module")
def shell_reports(cassandra, shell_runs) -> tuple[list[dict], list[dict]]:
    """The shell's ALL of DESCRIBES on `runs`' table, read in one stream and by two worker processes."""
    single, workers = [], []
    for text in DESCRIBES:
        statement = f"{text.format(t=shell_runs.table.qualified)} ALL JSON"
        single.append(shell_report(cassandra, shell_runs.home, statement))
        workers.append(shell_report(cassandra, shell_runs.home, statement, {"CQLSH_EXT_SCAN_WORKERS": "2"}))
    return single, workers


def test_spark_s_report_equals_the_shell_s_every_row(runs, shell_reports):
    """DESCRIBES, run by `runs` (its own run until it was one of `runs`' statements: a Spark start
    saved), on Spark 3.5 (the connector) and Spark 4 (cqlsh-ext's data source)."""
    on_spark = spark_reports(runs)[1:]
    single, workers = shell_reports
    for spark, shell, parallel in zip(on_spark, single, workers, strict=True):
        assert spark["reading"]["scan"].startswith("Spark local-")
        assert "2 worker processes" in parallel["reading"]["scan"]
        assert figures(spark) == figures(shell) == figures(parallel)
    data, extra, where = on_spark
    assert data["rows_read"] == 400 and [p["place"] for p in extra["places"]] == ["extra['z']"]
    # The blob column reached the core as the connector's Arrow (a map of blobs is Python's).
    note = " tasks (the native core read the blobs of 400 rows from Arrow)" if native.available() \
        else " tasks"
    assert data["reading"]["scan"].endswith(note) and where["reading"]["scan"].endswith(note)
    assert extra["reading"]["scan"].endswith(" tasks")
    assert 0 < where["where"]["rows_matched"] < 400
    # Counted one by one or by the HyperLogLog, the distinct counts merged across tasks are the same.
    paths = {p["path"]: p for p in data["places"][0]["paths"]}
    assert paths["data.order"]["distinct_exact"] is False and paths["data.order"]["distinct"] > 64


def test_spark_mode_refuses_what_is_the_shell_s(cassandra, tmp_path):
    for statement, message in (("DESCRIBE PAYLOAD ks.t.data SAMPLE 10", "SAMPLE is the shell's"),
                               ("DESCRIBE TABLE ks.t", "other DESCRIBE statements are the shell's")):
        proc = run_spark(cassandra, tmp_path, ["-e", statement])
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_on_either_spark_the_report_is_the_shell_s(runs):
    """The `runs` fixture's DESCRIBE PAYLOAD, on Spark 3.5 (the connector) and Spark 4 (cqlsh-ext's
    data source): the shell's ALL, figure for figure."""
    spark = spark_reports(runs)[0]
    shell = json.loads(runs.shell_describe.stdout)
    assert spark["reading"]["scan"].startswith("Spark local-") and shell["reading"]["mode"] == "all"
    assert figures(spark) == figures(shell)
    assert 0 < spark["where"]["rows_matched"] < len(runs.table.values)
