"""`cqlsh-ext spark` COMPRESSION STATS in local mode against the test Cassandra: the figures are the
shell's exact scan's (single stream and worker processes) and the producers' truth, and a Spark job
really ran (its application's event log)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from cqlsh_ext.payload import native
from cqlsh_ext.scanning.plan import STREAMS

from .conftest import CODECS, json_lines

pytestmark = pytest.mark.spark

#: What differs between two runs of the same scan: timing and how it was read.
RUN_FIELDS = ("elapsed_s", "rows_per_s", "scan")


def _figures(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in RUN_FIELDS}


def _spark_stats(runs) -> list[dict]:
    """The run's reports of the orders and the demo's tables (the one of the dictionaries' table
    is test_dictionaries')."""
    return [doc for doc in json_lines(runs.spark.stdout) if doc.get("command") == "COMPRESSION STATS"
            and runs.dictionaries.qualified not in doc["query"]]


def test_figures_equal_the_shells_exact_scans(runs):
    spark, spark_all, spark_nested = _spark_stats(runs)
    single, workers, shell_all, shell_nested = json_lines(runs.shell_stats.stdout)
    assert single["scan"] == f"{STREAMS} parallel streams" and workers["scan"] == "2 worker processes"
    assert _figures(spark) == _figures(single) == _figures(workers)
    assert _figures(spark_all) == _figures(shell_all)
    assert spark_all["query"].startswith("SELECT") and spark_all["complete"]
    assert _figures(spark_nested) == _figures(shell_nested)
    assert [c["column"] for c in spark_nested["columns"]] == [
        "attached.content", "by_codec[value]", "history[]", "pair[1]"]


def test_figures_are_the_producers(runs):
    table = runs.table
    spark, *_ = _spark_stats(runs)
    data = next(c for c in spark["columns"] if c["column"] == "data")
    present = [v for v in table.values.values() if v is not None]
    assert spark["rows"] == len(table.values)
    assert (data["values"], data["nulls"]) == (len(present), len(table.values) - len(present))
    assert data["stored_bytes"] == sum(map(len, present))
    # Random bytes are in no known format (undecodable, as a payload query counts them); plain
    # JSON is text that is not compressed.
    expected = Counter(
        "no known format" if i % 23 == 0
        else "not compressed" if CODECS[i % len(CODECS)] == "plain" else CODECS[i % len(CODECS)]
        for i, v in table.values.items() if v is not None)
    assert data["by_codec"] == dict(expected)


def test_a_spark_job_really_ran(runs):
    spark, *_ = _spark_stats(runs)
    app_id = spark["scan"].split()[1].rstrip(",")
    assert spark["scan"].startswith("Spark local-") and "master local[2]" in spark["scan"]
    (log,) = [p for p in runs.events.iterdir() if p.name.startswith(app_id)]
    kinds = [json.loads(line)["Event"] for line in log.read_text().splitlines()]
    tasks = int(spark["scan"].rsplit(", ", 1)[1].split()[0])
    assert kinds.count("SparkListenerTaskEnd") >= tasks >= 1
    assert "SparkListenerApplicationEnd" in kinds


def test_the_core_read_the_connector_s_arrow_blobs(runs):
    """The tasks handed the native core the blob column as Arrow (payload.arrow_rows): every
    row's cell, as the scan line says; the nested table's blobs sit in containers (Python's)."""
    spark, spark_all, spark_nested = _spark_stats(runs)
    rows = len(runs.table.values)
    note = f" tasks (the native core read the blobs of {rows} rows from Arrow)" if native.available() \
        else " tasks"
    assert spark["scan"].endswith(note) and spark_all["scan"].endswith(note)
    assert spark_nested["scan"].endswith(" tasks")
