"""Spark 4's Python data source `cqlsh_ext` (cqlsh_ext.spark.datasource) in a user's job, pyspark 4
in local mode against the test Cassandra (tests/spark/datasource_job.py): the table in several
partitions (the connector's floor, 1 + 2 x 2 cores), every row once (counts exact against the server),
payload predicates pushed and shown in the plan, the rows the API's for the same statement, the
stored bytes the producers', and the password nowhere in what Spark shows or logs."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from size_estimates import record_estimates

import cqlsh_ext
from cqlsh_ext.payload.arrow_types import is_json_text

from .conftest import Table, make_table, order, spark_env

pytestmark = pytest.mark.spark

JOB = Path(__file__).with_name("datasource_job.py")
COLUMNS = "id, data.status, data.amount, data"
#: A table of the CQL types Spark has no Arrow type of its own for (uuid, a JSON text of mixed
#: payloads, a map of blobs all null), and others the source converts (timestamp, time, varint).
TYPES = ("CREATE TABLE types (id int PRIMARY KEY, u uuid, t timestamp, d decimal, v varint, tm time, "
         "dt date, f double, ip inet, tags list<text>, doc blob, m map<text, blob>, pair tuple<int, blob>)")


@dataclass
class Job:
    table: Table
    result: dict
    #: The table's size by the server's estimate (bytes, the whole ring).
    estimated: float
    frame: pa.Table
    stored: pa.Table
    types: pa.Table
    said: str  # the job's stdout and stderr, and Spark's event log
    password: str


def _read(path: Path) -> pa.Table:
    with pa.OSFile(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


@pytest.fixture(scope="module")
def job(cassandra, tmp_path_factory) -> Job:
    home = tmp_path_factory.mktemp("spark4-source")
    table = make_table(cassandra, 400)
    # A role of its own, with a password no other text has: where Spark shows it, the test sees it.
    user, password = f"reader_{secrets.token_hex(4)}", f"pw-{secrets.token_hex(12)}"
    session = cassandra.session()
    session.execute(f"CREATE ROLE {user} WITH PASSWORD = '{password}' AND LOGIN = true")
    session.shutdown()
    _make_types(cassandra, table.keyspace)
    record_estimates(cassandra, table.keyspace, home)
    estimated = _estimated_bytes(cassandra, table)
    out = home / "out"
    (out / "events").mkdir(parents=True)
    # A split size that makes the estimate 9.5 splits: 10 partitions, more than the floor's 5.
    split_mb = str(estimated / 9.5 / 2 ** 20)
    proc = subprocess.run([sys.executable, str(JOB), cassandra.host, str(cassandra.port), user, password,
                           table.qualified, f"{table.keyspace}.types", split_mb, str(out)], cwd=home,
                          env=spark_env(home, "4"),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = "".join(p.read_text() for p in (out / "events").iterdir())
    return Job(table, json.loads((out / "result.json").read_text()), estimated, _read(out / "frame.arrow"),
               _read(out / "stored.arrow"), _read(out / "types.arrow"), proc.stdout + proc.stderr + events,
               password)


def _make_types(cassandra, keyspace: str) -> None:
    import datetime
    import gzip
    import uuid
    from decimal import Decimal

    import zstandard

    session = cassandra.session(keyspace)
    session.execute(TYPES)
    # A timestamp Cassandra holds (milliseconds) past Spark's (microseconds: about 294,000 years).
    session.execute("CREATE TABLE far (id int PRIMARY KEY, ts timestamp)")
    session.execute("INSERT INTO far (id, ts) VALUES (1, 9999999999999999)")
    insert = session.prepare("INSERT INTO types (id, u, t, d, v, tm, dt, f, ip, tags, doc, m, pair) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    utc = datetime.timezone.utc
    docs = [zstandard.ZstdCompressor().compress(b'{"a": 1, "b": "x"}'), gzip.compress(b"[1, 2]", mtime=0),
            b"plain text, not JSON"]
    for i, doc in enumerate(docs):
        moment = datetime.datetime(2024, 5, 1, 12, 30, i, tzinfo=utc)
        session.execute(insert, (i, uuid.UUID(int=i * 7919 + 1), moment,
                                 Decimal(f"{i}.25"), 10 ** 30 + i, datetime.time(10, i, 0, 123456),
                                 datetime.date(2024, 5, 2 + i), 1.5 * i, f"10.0.0.{i}", ["a", str(i)], doc,
                                 None, (i, gzip.compress(b"seven", mtime=0))))
    session.shutdown()


def _estimated_bytes(cassandra, table: Table) -> float:
    """The table's size as the node estimates it (system.size_estimates: its ranges' partitions
    times their mean size), scaled to the whole Murmur3 ring from the share its ranges cover."""
    session = cassandra.session()
    rows = list(session.execute(
        "SELECT range_start, range_end, partitions_count, mean_partition_size FROM system.size_estimates "
        "WHERE keyspace_name = %s AND table_name = %s", (table.keyspace, table.name)))
    session.shutdown()
    size = sum(r.partitions_count * r.mean_partition_size for r in rows)
    covered = sum((int(r.range_end) - int(r.range_start)) % 2 ** 64 or 2 ** 64 for r in rows)
    assert size > 0 and covered > 0, rows
    return size * 2 ** 64 / covered


def _decodable(table: Table) -> dict[int, dict]:
    """The generator's records of the rows whose blob is a JSON order (not null, not random bytes)."""
    return {i: order(i) for i, v in table.values.items() if v is not None and i % 23}


def test_several_partitions_every_row_once(job, cassandra):
    session = cassandra.session()
    server = session.execute(f"SELECT count(*) FROM {job.table.qualified}").one()[0]
    session.shutdown()
    assert job.result["partitions"] == 5  # local[2]: 1 + 2 x 2, the connector's floor
    assert job.result["count"] == server == len(job.table.values)
    assert sorted(job.frame.column("id").to_pylist()) == sorted(job.table.values)
    assert job.result["seven"] == [7, len(job.table.values)]  # `partitions` asked: exactly that many


def test_partitions_by_the_size_estimate(job):
    """The connector's rule: the server's estimate of the table over split_size_mb, when that is
    more than the floor (the job's split size: the estimate over 9.5)."""
    assert job.estimated > 0
    assert job.result["sized"] == [10, len(job.table.values)]


def test_filters_are_exact_and_sparks_own_on_spark_4_3(job):
    """Spark 4.3 keeps the read planned with one query's pushed filters for the frame's later
    queries (test_notebook.py): the source takes no filter there, and Spark applies each."""
    records = _decodable(job.table)
    assert job.result["paid_ids"] == sorted(i for i, r in records.items() if r["status"] == "PAID")
    assert job.result["gold_ids"] == sorted(i for i, r in records.items()
                                            if r["customer"]["tier"] == "gold" and r["amount"] > 200)
    plans = job.result["plans"]
    assert re.search(r"Condition : .*data\.status.* = PAID", plans["paid"]), plans["paid"]
    assert re.search(r"Condition : .*customer.*tier.* = gold", plans["gold"]), plans["gold"]
    assert re.search(r"Condition : .*\bid#\d+ < 50", plans["few"])
    for plan in plans.values():
        assert "PushedFilters: [" not in plan or "PushedFilters: []" in plan, plan
    assert job.result["few"] == 50


def test_the_rows_are_the_apis(job, cassandra):
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password) as db:
        api = db.query(f"SELECT {COLUMNS} FROM {job.table.qualified}").to_arrow()
    assert job.frame.column_names == api.column_names
    by_id = {row["id"]: row for row in api.to_pylist()}
    spark = {row["id"]: row for row in job.frame.to_pylist()}
    assert spark == by_id
    # The decoded documents are the producers' (a blob's struct; null for null and random bytes).
    records = _decodable(job.table)
    assert {i: row["data"] and row["data"]["status"] for i, row in spark.items()} == \
        {i: records[i]["status"] if i in records else None for i in job.table.values}


def test_stored_blobs_are_the_producers_bytes(job):
    assert job.stored.schema.field("data").type == pa.binary()
    assert dict(zip(job.stored.column("id").to_pylist(), job.stored.column("data").to_pylist(),
                    strict=True)) == job.table.values


def test_a_mistyped_option_is_one_line(job):
    # (Spark's own error is a Java stack around the Python one: cqlsh-ext spark says its line alone)
    assert job.result["mistyped"].startswith("cqlsh_ext: unknown option 'tabel' (options: table, ")


def test_options_out_of_range_are_refused_before_any_reading(job):
    """Each refused in one line when the frame is made (before: taken, and a partition count of
    a million or 10^9, or a split size of 1e-12 MB, ran Spark's driver out of heap or for minutes)."""
    table = job.table.qualified
    assert job.result["refused"]["partitions"] == \
        "cqlsh_ext: partitions takes a whole number from 1 to 10,000, not '1000000'"
    assert job.result["refused"]["min_partitions"] == \
        "cqlsh_ext: min_partitions takes a whole number from 1 to 10,000, not '1000000000'"
    assert re.fullmatch(rf"cqlsh_ext: split_size_mb 1e-12 cuts {table} \(about [0-9.e-]+ MB by the server's "
                        r"estimate\) into more than 10,000 partitions: take at least [0-9.e-]+",
                        job.result["refused"]["split_size_mb"])


def test_columns_and_table_read_the_table_named_and_nothing_else(job):
    """A statement's text in `columns` read another table (before: `* FROM ks.types --` made the
    types table's frame); a clause in `table` was pasted after FROM."""
    types = f"{job.table.keyspace}.types"
    assert job.result["refused"]["columns"] == (
        "cqlsh_ext: columns takes the table's columns and payload paths (the table option names the table), "
        f"not '* FROM {types} --'")
    assert job.result["refused"]["table"] == ("cqlsh_ext: table takes keyspace.table (CQL names), "
                                              f"not '{job.table.qualified} WHERE id = 1'")


def test_types_spark_has_not_are_converted(job, cassandra):
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password) as db:
        api = db.query(f"SELECT * FROM {job.table.keyspace}.types").to_arrow()
    assert job.types.column_names == api.column_names
    # What Spark has no type for is in the API's answer (a JSON text inside the map of blobs all
    # null, a uuid), and comes as documented: a uuid column as its text, the rest as they are.
    assert is_json_text(api.schema.field("m").type.item_type.field("payload"))  # a string, marked
    assert "arrow.uuid" in str(api.schema.field("u").type)
    assert job.types.schema.field("u").type == pa.string()
    spark = {row["id"]: row for row in job.types.to_pylist()}
    assert sorted(spark) == [0, 1, 2]
    # A time of day as its nanoseconds, to the last (the API's time64[ns]; Spark's TIME keeps
    # microseconds, and Spark 4.3 refuses a frame holding it).
    assert job.types.schema.field("tm").type == pa.int64()
    times = api.column("tm").cast(pa.int64()).to_pylist()
    nanos = dict(zip(api.column("id").to_pylist(), times, strict=True))
    assert nanos[1] == (10 * 3600 + 60) * 10 ** 9 + 123456 * 1000
    for row in api.to_pylist():
        assert spark[row["id"]] == {**row, "u": str(row["u"]), "tm": nanos[row["id"]]}


def test_a_frame_with_a_time_column_is_counted_and_filtered(job):
    """Before: every query of the frame failed, `[UNSUPPORTED_TIME_TYPE] The data type TIME is not
    supported` (Spark 4.3): the source gave Spark its TIME type."""
    assert job.result["types"] == [3, 3]


def test_the_password_is_nowhere(job):
    assert job.password not in job.said
    assert "BatchScan cqlsh_ext" in job.said  # (the event log holds the plans the password is not in)


def test_a_value_spark_cannot_hold_is_named_in_one_line(job):
    """A timestamp past Spark's: the column and the value named (before: Spark's first line alone,
    "An exception was thrown from the Python worker:", the reason left out)."""
    assert job.result["far"] == (
        "cqlsh_ext: column ts holds a value Spark's timestamp[us, tz=UTC] cannot hold (Casting from "
        "timestamp[ms, tz=UTC] to timestamp[us, tz=UTC] would result in out of bounds timestamp: "
        "9999999999999999)")
