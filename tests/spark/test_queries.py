"""`cqlsh-ext spark` SELECT with payload paths, conditions, LIKE, aggregates and GROUP BY: the same
answers as the shell's, and as the generator's records say (tests/spark/conftest.py)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from cqlsh_ext.payload import native

from .conftest import QUERIES, STATUSES, TYPED_ROWS, json_lines, order

pytestmark = pytest.mark.spark


def _spark_answers(runs) -> dict[frozenset, list[dict]]:
    """The Spark run's answer rows by their columns (each query's are its own)."""
    out: dict[frozenset, list[dict]] = {}
    for doc in json_lines(runs.spark.stdout):
        if doc.get("command") != "COMPRESSION STATS":
            out.setdefault(frozenset(doc), []).append(doc)
    return out


def _decodable(runs) -> dict[int, dict]:
    """Rows whose blob is a JSON order (not null, not random bytes): their records."""
    return {i: order(i) for i, v in runs.table.values.items() if v is not None and i % 23}


def _same(spark_rows: list[dict], shell_rows: list[dict]) -> None:
    key = repr
    assert sorted(spark_rows, key=key) == sorted(shell_rows, key=key)


def test_group_by_aggregates(runs):
    shell = json_lines(runs.shell_queries["groups"].stdout)
    spark = _spark_answers(runs)[frozenset(shell[0])]
    assert spark == shell  # grouped answers come sorted by key, in both
    records = _decodable(runs).values()
    by_status = {json.dumps(row["data.status"]): row for row in spark}
    for status in STATUSES:
        mine = [r for r in records if r["status"] == status]
        group = by_status[json.dumps(status)]
        assert group["count"] == len(mine)
        assert group["sum(data.amount)"] == sum(r["amount"] for r in mine)
        assert group["min(data.customer.name)"] == min(r["customer"]["name"] for r in mine)
    nulls = sum(v is None for v in runs.table.values.values())
    assert by_status["null"]["count"] == nulls
    # The random bytes: undecodable, a group of their own, not null's.
    undecodable = len(runs.table.values) - len(records) - nulls
    assert by_status['{"$undecodable": true}']["count"] == undecodable


def test_the_undecodable_rows_are_listed(runs):
    shell = json_lines(runs.shell_queries["undecodable"].stdout)
    spark = _spark_answers(runs)[frozenset({"id"})]
    _same(spark, shell)
    random_bytes = sorted(i for i, v in runs.table.values.items() if v is not None and not i % 23)
    assert sorted(row["id"] for row in spark) == random_bytes and random_bytes


def test_payload_filter(runs):
    shell = json_lines(runs.shell_queries["filter"].stdout)
    spark = _spark_answers(runs)[frozenset({"data.order", "data.amount"})]
    _same(spark, shell)
    truth = [{"data.order": r["order"], "data.amount": r["amount"]} for r in _decodable(runs).values()
             if r["customer"]["tier"] == "gold" and r["amount"] > 200]
    _same(spark, truth)
    assert truth


def test_like_on_the_decoded_blob(runs):
    shell = json_lines(runs.shell_queries["like"].stdout)
    assert _spark_answers(runs)[frozenset({"count"})] == shell
    assert shell == [{"count": Counter(r["status"] for r in _decodable(runs).values())["PAID"]}]


def test_a_path_into_a_map_of_blobs(runs):
    shell = json_lines(runs.shell_queries["nested"].stdout)
    spark = _spark_answers(runs)[frozenset({"id", "extra['z']"})]
    _same(spark, shell)
    assert sorted(row["id"] for row in spark) == [i for i in sorted(runs.table.values) if i % 3 == 0]


def test_the_spark_job_said_so(runs):
    closing = [line for line in runs.spark.stderr.splitlines() if line.startswith("payload query: ")]
    assert len(closing) == len(QUERIES)  # (one a query)
    assert all(", Spark local-" in line and "master local[2]" in line for line in closing)
    # The blob column reached the core as the connector's Arrow: not the path into a map of blobs,
    # nor LIKE on the bare blob (a plan the Python evaluator runs).
    from_arrow = [line for line in closing
                  if line.endswith(f"tasks (the native core read the blobs of {len(runs.table.values)} rows "
                                   "from Arrow)")]
    assert len(from_arrow) == (3 if native.available() else 0)


def test_cql_values_beside_the_payload_are_the_drivers(runs, cassandra):
    """A decimal, a varint, a time of day, a duration, an IPv6 address and collections left empty,
    selected beside a payload path: each row as the shell prints it, and as the driver reads it
    (before: the connector's duration text and the data source's decimal text crashed the run
    (exit 70), a time was its nanoseconds on 3.5 and cut to microseconds on 4, `::1` was
    `0:0:0:0:0:0:0:1`, an empty list `[]` where the driver reads null, a varint past 38 digits null
    on 4)."""
    from decimal import Decimal

    def answer(stdout: str) -> dict[int, dict]:
        rows = [json.loads(line, parse_float=Decimal) for line in stdout.splitlines() if line.startswith("{")]
        return {row["id"]: row for row in rows if "data.status" in row and "tm" in row}

    shell = answer(runs.shell_queries["typed"].stdout)
    spark = answer(runs.spark.stdout)
    # The oracle: the driver's values of what was written, as the shell spells them.
    session = cassandra.session(runs.table.keyspace)
    driver = {row.id: row for row in session.execute("SELECT id, d, v, tm, du, ip, l, m FROM typed")}
    session.shutdown()
    assert sorted(shell) == [i for i, row in TYPED_ROWS.items() if row[-1] == "PAID"]
    for i, row in shell.items():
        assert row["d"] == driver[i].d and row["v"] == driver[i].v and row["ip"] == driver[i].ip
        assert row["l"] == driver[i].l and row["m"] == (driver[i].m and dict(driver[i].m))
    assert shell[1]["tm"] == "10:00:00.123456789" and shell[1]["du"] == "1mo2d3s123ns"
    assert shell[1]["l"] is None and shell[1]["m"] is None  # (written empty: Cassandra keeps none)
    if runs.version == "3.5":
        # The connector reads a decimal as Spark's decimal(38, 18) and a varint as decimal(38, 0):
        # what does not fit is lost in the JVM (docs/spark.md, "Spark 3.5 or Spark 4").
        for name in ("d", "v"):
            del shell[1][name], spark[1][name]
    assert spark == shell
