"""A statement's answer in parts on the real server (docs/api.md, "Partitions"): descriptors that
pickle, read in four processes by examples/partitioned_read.py, whose joined table and summed
notes are one read's exactly; aggregates refused saying how to combine; and the polars source,
whose pushed-down reading equals the same filter in polars after a full read."""

from __future__ import annotations

import logging
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest

import cqlsh_ext

from .conftest import Orders

pytestmark = pytest.mark.server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def example(cassandra) -> Any:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import partitioned_read

        yield partitioned_read
    finally:
        sys.path.remove(str(EXAMPLES))


def connect_args(cassandra, cqlshrc: str) -> dict[str, Any]:
    return {"host": cassandra.host, "port": cassandra.port, "username": cassandra.username,
            "password": cassandra.password, "cqlshrc": cqlshrc}


def ordered(table: Any) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda row: (row["pk"], row["ck"]))


@pytest.mark.parametrize("statement", [
    "SELECT pk, ck, data.status, data.customer.name, data FROM {t} WHERE data.status IN ('PAID', 'NEW') "
    "ALLOW FILTERING",  # payload conditions over the whole table
    "SELECT pk, ck, data.n, data.tags FROM {t}",  # paths of every row
    "SELECT pk, ck FROM {t} WHERE ck > 10 ALLOW FILTERING",  # as written, but for the ring's slices
])
def test_four_processes_read_what_one_read_does(cassandra, db, orders: Orders, cqlshrc: str, example,
                                               statement: str):
    text = statement.format(t=orders.name)
    whole_answer = db.query(text)
    whole = whole_answer.to_arrow()
    notes = whole_answer.notes
    parts = db.partitions(text, 4)
    assert [p.index for p in parts] == [0, 1, 2, 3]
    assert pickle.loads(pickle.dumps(parts)) == parts  # plain values: they go to other processes
    table, summed = example.read_parallel(text, connect_args(cassandra, cqlshrc), 4)
    assert table.schema == whole.schema
    assert ordered(table) == ordered(whole)
    for name in ("rows_read", "matched", "undecodable", "cut", "undecodable_by_kind"):
        assert summed[name] == notes[name], name
    assert summed["stopped"] is None


def test_each_part_is_an_answer_of_its_own(db, orders: Orders):
    parts = db.partitions(f"SELECT pk, ck, data.status FROM {orders.name} WHERE data.status = ? "
                          "ALLOW FILTERING", 3, ["PAID"])
    seen: list[tuple[str, int]] = []
    for part in parts:
        with cqlsh_ext.read_partition(part, db) as answer:
            seen += [(row["pk"], row["ck"]) for row in answer]
            assert answer.notes["stopped"] is None
    truth = [(row["pk"], row["ck"]) for row in db.query(
        f"SELECT pk, ck FROM {orders.name} WHERE data.status = 'PAID' ALLOW FILTERING")]
    assert sorted(seen) == sorted(truth) and len(seen) == len(set(seen))


def test_a_where_naming_partitions_is_one_part_and_aggregates_are_refused(db, orders: Orders):
    (one,) = db.partitions(f"SELECT pk, ck FROM {orders.name} WHERE pk = 'p1'", 4)
    assert one.ranges is None
    with pytest.raises(cqlsh_ext.Error, match=r"^partitions: aggregates and GROUP BY are counted over every "
                                              r"row: read the rows they read by parts"):
        db.partitions(f"SELECT data.status, count(*) FROM {orders.name} GROUP BY data.status "
                      "ALLOW FILTERING", 4)
    with pytest.raises(cqlsh_ext.Error, match=r"^partitions: a LIMIT is of the whole answer"):
        db.partitions(f"SELECT pk FROM {orders.name} LIMIT 5", 4)
    with pytest.raises(cqlsh_ext.Error, match=r"^read_partition takes a Partition of db.partitions, "
                                              r"not str$"):
        cqlsh_ext.read_partition("SELECT 1", db)  # type: ignore[arg-type]


def test_the_polars_source_pushes_down_and_equals_a_full_read_filtered(db, orders: Orders, caplog):
    import polars as pl

    frame = cqlsh_ext.scan(db, f"SELECT pk, ck, data.status, data.customer.name, data.customer.tier "
                               f"FROM {orders.name}")
    assert frame.collect_schema()["ck"] == pl.Int32
    predicate = (pl.col("data.customer.name").is_in(["C1", "C2", "C3"]) & (pl.col("ck") > 10)
                 & (pl.col("data.customer.tier") != "gold") & pl.col("pk").str.ends_with("1").not_())
    with caplog.at_level(logging.DEBUG, logger="cqlsh_ext.scan"):
        pushed = frame.filter(predicate).select("pk", "ck", "data.customer.name").collect()
    sent = [record.getMessage() for record in caplog.records if record.name == "cqlsh_ext.scan"]
    assert len(sent) == 1
    assert "SELECT pk, ck, data.customer.name, data.customer.tier FROM" in sent[0]
    assert "data.customer.name IN (?, ?, ?)" in sent[0] and "ck > ?" in sent[0]
    assert "data.customer.tier != ?" in sent[0] and "ends_with" not in sent[0]
    full = frame.collect()  # the full read, nothing pushed
    expected = full.filter(predicate).select("pk", "ck", "data.customer.name")
    assert pushed.sort("pk", "ck").equals(expected.sort("pk", "ck")) and pushed.height > 0
    from_query = db.query(f"SELECT pk, ck, data.status, data.customer.name, data.customer.tier "
                          f"FROM {orders.name}").to_polars()
    assert full.sort("pk", "ck").equals(from_query.sort("pk", "ck"))
    assert frame.head(5).collect().height == 5
