"""A notebook's pattern on one Spark frame (tests/spark/notebook_job.py): count, a filtered count,
count again, groupBy, self-joins, isnan, each answer equal to an oracle computed from the bytes the
server stores, decoded with the producers' own libraries (not cqlsh-ext's), on the road docs/spark.md
gives each Spark: Spark 4 through cqlsh-ext's data source, Spark 3.5 through the Spark Cassandra
Connector and `cqlsh_ext.spark.udf.decoded`. Spark 4.3 keeps the read it planned for a scan with
pushed filters on the frame's source and reads later scans of the frame with it: a source that
took the filters answered the count after the filtered count with the filtered count. The table
is written once for both."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import zstandard

from .conftest import CODECS, spark_env, stored

pytestmark = pytest.mark.spark

JOB = Path(__file__).with_name("notebook_job.py")
ROWS = 3000


def score(i: int) -> float:
    return math.nan if i % 7 == 0 else i / 4


def producers_record(i: int, blob: bytes | None) -> dict | None:
    """Row i's document read back with the library of the producer that wrote it (None: a null,
    or bytes that are no document)."""
    if blob is None:
        return None
    codec = CODECS[i % len(CODECS)]
    try:
        payload = {"snappy": lambda b: bytes(cramjam.snappy.decompress_raw(b)),
                   "zstd": lambda b: zstandard.ZstdDecompressor().decompress(b),
                   "gzip": gzip.decompress, "lz4": lz4.frame.decompress, "plain": bytes}[codec](blob)
        record = json.loads(payload)
    except Exception:
        return None
    return record if isinstance(record, dict) else None


@pytest.fixture(scope="module")
def table(cassandra) -> tuple[str, dict[int, dict | None], dict[int, float]]:
    """The orders table, and the oracle's input: each row's record as its producer reads it, its score."""
    keyspace = cassandra.create_keyspace("notebook")
    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob, score double)")
    insert = session.prepare("INSERT INTO orders (id, data, score) VALUES (?, ?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i, stored(i), score(i)))
    # The oracle's input: what the server stores, read back.
    rows = list(session.execute("SELECT id, data, score FROM orders"))
    session.shutdown()
    records = {row.id: producers_record(row.id, row.data) for row in rows}
    scores = {row.id: row.score for row in rows}
    return f"{keyspace}.orders", records, scores


@pytest.fixture(scope="module", params=["4", "3.5"])
def answers(request, cassandra, table, tmp_path_factory) -> tuple[dict, dict[int, dict | None],
                                                                   dict[int, float]]:
    spark = request.param
    name, records, scores = table
    home = tmp_path_factory.mktemp(f"spark{spark}-notebook")
    out = home / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, str(JOB), cassandra.host, str(cassandra.port), cassandra.username,
                           cassandra.password, name, str(out), spark], cwd=home,
                          env=spark_env(home, spark), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads((out / "answers.json").read_text())), records, scores


def test_each_query_of_a_notebook_is_the_oracles(answers):
    got, records, scores = answers
    gold = sum(1 for r in records.values() if r and r["customer"]["tier"] == "gold")
    paid = sum(1 for r in records.values() if r and r["status"] == "PAID")
    assert 0 < gold < ROWS and 0 < paid < ROWS
    assert got == {
        "count": ROWS,
        "gold": gold,
        "count again": ROWS,  # (was the gold count: the filtered scan's read kept on the frame)
        "by status": dict(Counter(r["status"] if r else "" for r in records.values())),
        "self-join": ROWS,
        "join with gold": gold,
        "isnan": sum(1 for s in scores.values() if math.isnan(s)),
        "paid": paid,
        "count last": ROWS,
    }
