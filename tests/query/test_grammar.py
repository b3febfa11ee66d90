"""The payload statement parser: every construct, every one-line error (cqlsh_ext.query.grammar)."""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal

import pytest

from cqlsh_ext.query.grammar import Column, Path, Predicate, QueryError, Schema, parse

SCHEMA = Schema(
    {"pk": "text", "ck": "int", "data": "blob", "m": "map<text, blob>", "u": "frozen<wrap>",
     "name": "text", "Mixed": "text"},
    partition_key=["pk"], udts={"wrap": {"payload": "blob", "n": "int"}})


def plan(text: str):
    result = parse(text, SCHEMA)
    assert result is not None
    return result


def test_imports_neither_cqlsh_nor_the_driver():
    code = ("import sys, cqlsh_ext.query.grammar, cqlsh_ext.query.evaluate, cqlsh_ext.query.groups;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cqlshlib', 'cassandra')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_projection_of_columns_and_paths():
    p = plan("SELECT pk, data.status, data.customer.name, data.items[0].sku, data.\"order-id\", "
             "m['k'].status, u.payload.status FROM ks.t WHERE pk = 'k1'")
    assert [i.name for i in p.items] == ["pk", "data.status", "data.customer.name", "data.items[0].sku",
                                         'data."order-id"', "m['k'].status", "u.payload.status"]
    assert p.items[3].ref == Path("data", None, ("items", 0, "sku"), "data.items[0].sku")
    assert p.items[4].ref == Path("data", None, ("order-id",), 'data."order-id"')
    assert p.items[5].ref == Path("m", "k", ("status",), "m['k'].status")
    assert p.items[6].ref == Path("u", "payload", ("status",), "u.payload.status")
    assert (p.keyspace, p.table) == ("ks", "t")
    assert p.server_statement == "SELECT pk, data, m, u FROM ks.t WHERE pk = 'k1'"
    assert p.restricts_partitions and not p.predicates


def test_keys_are_case_sensitive_and_star_mixes():
    p = plan("SELECT *, data.Status FROM t")
    assert p.items[1].ref == Path("data", None, ("Status",), "data.Status")
    assert p.server_statement == "SELECT * FROM t"


def test_a_projection_only_query_keeps_its_limit_on_the_server():
    p = plan("SELECT data.a FROM t LIMIT 10")
    assert p.server_statement == "SELECT data FROM t LIMIT 10" and p.limit == 10
    assert not p.reads_beyond_partitions


def test_not_a_payload_query():
    for text in ("SELECT * FROM t", "SELECT pk, data FROM t WHERE pk = 'a'",
                 "INSERT INTO t (pk) VALUES ('a')",
                 "SELECT count(*) FROM t", "SELECT name FROM t WHERE name = 'x' ALLOW FILTERING"):
        assert parse(text, SCHEMA) is None, text


def test_where_splits_the_ordinary_part_from_payload_conditions():
    p = plan("SELECT pk FROM t WHERE pk = 'hot' AND ck > 3 AND data.customer.tier = 'gold' LIMIT 5")
    assert p.server_where == "pk = 'hot' AND ck > 3"
    assert p.predicates == [Predicate(Path("data", None, ("customer", "tier"), "data.customer.tier"), "=",
                                      ("gold",))]
    assert p.restricts_partitions  # needs no ALLOW FILTERING
    assert p.server_statement == "SELECT pk, data FROM t WHERE pk = 'hot' AND ck > 3"  # LIMIT decided here
    assert p.limit == 5


def test_a_payload_condition_written_again_is_one_condition():
    # A chain of the same condition (issue 83's 20,000 `data.a = 1`) is read and evaluated once; a
    # condition that differs in a token is another (`true` is not `1`); ordinary conditions and
    # markers stay as written, each.
    chain = " AND ".join(["data.a = 1"] * 20_000)
    p = plan(f"SELECT pk FROM t WHERE pk = 'a' AND {chain} AND data.a = true AND data.a=1 AND ck = 1 "
             "AND ck = 1")
    assert p.predicates == [Predicate(Path("data", None, ("a",), "data.a"), "=", (1,)),
                            Predicate(Path("data", None, ("a",), "data.a"), "=", (True,))]
    assert p.server_where == "pk = 'a' AND ck = 1 AND ck = 1"
    marked = parse("SELECT pk FROM t WHERE pk = 'a' AND data.a = ? AND data.a = ?", SCHEMA, markers=True)
    assert marked is not None and len(marked.predicates) == 2 and len(marked.markers) == 2


@pytest.mark.parametrize(("cond", "op", "values"), [
    ("data.a = 1", "=", (1,)), ("data.a != 'x'", "!=", ("x",)), ("data.a <> 'x'", "!=", ("x",)),
    ("data.a < 1.5", "<", (Decimal("1.5"),)), ("data.a <= -2", "<=", (-2,)),
    ("data.a > 1e3", ">", (Decimal("1e3"),)), ("data.a >= 123456789012345678901234567890", ">=",
                                                 (123456789012345678901234567890,)),
    ("data.a IN ('x', 2, true)", "IN", ("x", 2, True)), ("data.a LIKE 'A%_'", "LIKE", ("A%_",)),
    ("data.a IS NULL", "IS NULL", ()), ("data.a IS NOT NULL", "IS NOT NULL", ()),
    ("data.tags CONTAINS 'x'", "CONTAINS", ("x",)), ("data.a = 'it''s'", "=", ("it's",)),
    ("data.a = $$it's$$", "=", ("it's",)), ("data.a = false", "=", (False,)), ("data.a = null", "=", (None,)),
])
def test_operators_and_literals(cond: str, op: str, values: tuple[object, ...]):
    p = plan(f"SELECT pk FROM t WHERE pk = 'a' AND {cond}")
    assert (p.predicates[0].op, p.predicates[0].values) == (op, values)
    assert all(type(a) is type(b) for a, b in zip(p.predicates[0].values, values, strict=True))


def test_like_on_a_bare_blob_column():
    p = plan("SELECT pk FROM t WHERE data LIKE '%ORD-2024%' ALLOW FILTERING")
    assert p.predicates == [Predicate(Column("data"), "LIKE", ("%ORD-2024%",))]
    assert p.server_statement == "SELECT pk, data FROM t ALLOW FILTERING"


def test_aggregates_group_by_order_distinct_confirm():
    p = plan("SELECT data.status, count(*), min(data.n), max(data.n), sum(data.n), avg(data.n) FROM ks.t "
             "GROUP BY data.status ALLOW FILTERING CONFIRM;")
    assert [i.name for i in p.items] == ["data.status", "count", "min(data.n)", "max(data.n)",
                                         "sum(data.n)", "avg(data.n)"]
    assert [i.func for i in p.items[1:]] == ["count", "min", "max", "sum", "avg"]
    # count(*) is named as Cassandra names it, however typed; what was typed is kept.
    typed = plan("SELECT COUNT(*), Count(data.n) FROM t WHERE data.a = 1 ALLOW FILTERING")
    assert [(i.name, i.written) for i in typed.items] == [("count", "COUNT(*)"),
                                                          ("Count(data.n)", "Count(data.n)")]
    assert p.group_by == [Path("data", None, ("status",), "data.status")]
    assert p.allow_filtering and p.confirm and p.aggregates
    assert p.server_statement == "SELECT data FROM ks.t ALLOW FILTERING"
    p = plan("SELECT DISTINCT data.status FROM t WHERE pk = 'a' ORDER BY data.status DESC LIMIT 3")
    assert p.distinct and p.order_by == [(Path("data", None, ("status",), "data.status"), True)]
    assert p.server_statement == "SELECT data FROM t WHERE pk = 'a'"
    p = plan("SELECT count(*) FROM t WHERE data.a = 1 ALLOW FILTERING")
    assert p.server_statement == "SELECT data FROM t ALLOW FILTERING"


def test_allow_filtering_is_required_past_the_named_partitions():
    with pytest.raises(QueryError, match="ALLOW FILTERING"):
        parse("SELECT pk FROM t WHERE data.a = 1", SCHEMA)
    with pytest.raises(QueryError, match="ALLOW FILTERING"):
        parse("SELECT count(*) FROM t WHERE data.a = 1", SCHEMA)
    assert plan("SELECT pk FROM t WHERE pk IN ('a', 'b') AND data.a = 1").restricts_partitions
    assert plan("SELECT pk FROM t WHERE data.a = 1 AND pk = 'a'").restricts_partitions


def test_quoted_names_are_quoted_again_for_the_server():
    s = Schema({"Key": "text", "Data": "blob"}, ["Key"])
    p = parse('SELECT "Key", "Data".a FROM t WHERE "Key" = \'x\'', s)
    assert p is not None and p.server_statement == 'SELECT "Key", "Data" FROM t WHERE "Key" = \'x\''


@pytest.mark.parametrize(("text", "message"), [
    ("SELECT ck.a FROM t", "ck is int, neither a blob nor text"),
    ("SELECT data.a FROM t WHERE data.t CONTAINS KEY 'x' ALLOW FILTERING",
     "CONTAINS KEY is not an operator of payload queries: a path takes =, !=,"),
    ("SELECT u.n.a FROM t", "u.n is int, not a blob"),
    ("SELECT u.nope.a FROM t", "u has no field nope"),
    ("SELECT m.a FROM t", "m is a map of blobs"),
    ("SELECT m[1].a FROM t", "a key of m is a quoted string"),
    ("SELECT data.[0] FROM t", "bad path"),
    ("SELECT data['x'] FROM t", "an index is [n]"),
    ("SELECT nope.a FROM t", "unknown column nope"),
    ("SELECT upper(data.a) FROM t", "unknown function upper"),
    ("SELECT sum(*) FROM t", "only count(*)"),
    ("SELECT data.a, count(*) FROM t ALLOW FILTERING", "needs GROUP BY"),
    ("SELECT data.a, data.b, count(*) FROM t GROUP BY data.a ALLOW FILTERING", "neither aggregated"),
    ("SELECT count(*) FROM t GROUP BY pk ALLOW FILTERING", "GROUP BY takes paths"),
    ("SELECT data.a FROM t GROUP BY data.a ALLOW FILTERING", "GROUP BY needs an aggregate"),
    ("SELECT pk FROM t WHERE data.a = 1 OR pk = 'x' ALLOW FILTERING", "OR is not supported"),
    ("SELECT pk FROM t WHERE data.a ~ 1 ALLOW FILTERING", "unexpected character"),
    ("SELECT pk FROM t WHERE data.a = ALLOW FILTERING", "expected a literal"),
    ("SELECT pk FROM t WHERE data NOT LIKE 'x' ALLOW FILTERING", "only LIKE"),
    ("SELECT pk FROM t WHERE data.a LIKE 3 ALLOW FILTERING", "LIKE takes a string"),
    ("SELECT data.a FROM t LIMIT 0", "LIMIT takes a positive integer"),
    ("SELECT data.a AS x FROM t", "AS is not supported"),
    ("SELECT data.a FROM t CONFIRM", "CONFIRM comes after ALLOW FILTERING"),
    ("SELECT DISTINCT count(*) FROM t WHERE data.a = 1 ALLOW FILTERING", "DISTINCT and aggregates"),
    ("SELECT data.a FROM t junk", "unexpected 'junk'"),
])
def test_errors_are_one_line(text: str, message: str):
    with pytest.raises(QueryError, match=re.escape(message)) as err:
        parse(text, SCHEMA)
    assert "\n" not in str(err.value)
