"""The per-row evaluator on values encoded with the real libraries, against the truth computed
from the generator's Python objects (cqlsh_ext.query.evaluate)."""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import namedtuple
from typing import Any

import cbor2
import msgpack
import pytest
import zstandard
from orders import MISSING, rows, take

from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import QueryError, Schema, parse

SCHEMA = Schema({"pk": "text", "ck": "int", "data": "blob", "m": "map<text,blob>", "u": "frozen<wrap>"},
                ["pk"], {"wrap": {"payload": "blob", "n": "int"}})
def num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


TRUTH = {
    "data.status = 'FAILED'": lambda d: take(d, ("status",)) == "FAILED",
    "data.status != 'FAILED'": lambda d: isinstance(take(d, ("status",)), str) and d["status"] != "FAILED",
    "data.status IN ('NEW', 'PAID')": lambda d: take(d, ("status",)) in ("NEW", "PAID"),
    "data.status IS NULL": lambda d: take(d, ("status",)) is MISSING,
    "data.status IS NOT NULL": lambda d: take(d, ("status",)) is not MISSING,
    "data.status LIKE 'F%'": lambda d: isinstance(take(d, ("status",)), str) and d["status"].startswith("F"),
    "data.status LIKE '_AID'": lambda d: take(d, ("status",)) == "PAID",
    "data.n > 50": lambda d: d["n"] > 50,
    "data.n <= 10.5": lambda d: d["n"] <= 10.5,
    "data.n = 300000000000000000000": lambda d: d["n"] == 3 * 10**20,
    "data.customer.tier = 'gold'": lambda d: take(d, ("customer", "tier")) == "gold",
    "data.customer.tier IS NULL": lambda d: take(d, ("customer", "tier")) in (MISSING, None),
    "data.items[1].sku = 'S1'": lambda d: take(d, ("items", 1, "sku")) == "S1",
    "data.tags CONTAINS 'b'": lambda d: "b" in d["tags"],
    "data.\"order-id\" >= 'ORD-2024000100'": lambda d: d["order-id"] >= "ORD-2024000100",
    "data LIKE '%ORD-20240000_7%'": lambda d: re.search("ORD-20240000.7", d["order-id"]) is not None,
    "data.status = 7": lambda d: take(d, ("status",)) == 7 and not isinstance(d["status"], bool),
}


@pytest.mark.parametrize("condition", list(TRUTH))
def test_filters_match_the_generators_truth(condition: str):
    plan = parse(f"SELECT ck, data.status FROM t WHERE {condition} ALLOW FILTERING", SCHEMA)
    assert plan is not None
    evaluator = Evaluator(plan, Decoding())
    undecodable = 0
    for row, doc in rows():
        result = evaluator.evaluate(row)
        expected = doc is not None and bool(TRUTH[condition](doc))
        assert result.matched == expected, (condition, doc)
        undecodable += result.undecodable
        if result.matched:
            status = take(doc, ("status",))
            assert result.values == (row["ck"], None if status is MISSING else status)
    assert undecodable == 20  # the random values, counted, never matched


def test_projection_gives_none_for_missing_and_undecodable():
    plan = parse("SELECT data.customer.name, data.items[0].sku, data.n FROM t", SCHEMA)
    assert plan is not None
    evaluator = Evaluator(plan, Decoding())
    for row, doc in rows(60):
        result = evaluator.evaluate(row)
        assert result.matched
        if doc is None:
            assert result.values == (None, None, None) and result.undecodable == 1
            continue
        expected = [take(doc, s) for s in (("customer", "name"), ("items", 0, "sku"), ("n",))]
        assert list(result.values) == [None if v is MISSING else v for v in expected]
        assert type(result.values[2]) is type(doc["n"])  # big ints exact, floats floats


def test_numbers_compare_as_written_and_integers_exactly():
    plan = parse("SELECT ck FROM t WHERE data.v = 0.1 ALLOW FILTERING", SCHEMA)
    assert plan is not None
    ev = Evaluator(plan, Decoding())
    assert ev.evaluate({"data": b'{"v": 0.1}'}).matched  # the document's 0.1 is the statement's
    assert not ev.evaluate({"data": b'{"v": 0.10000000000000002}'}).matched  # the next double
    plan = parse("SELECT ck FROM t WHERE data.v = 0.5 ALLOW FILTERING", SCHEMA)
    assert plan is not None
    ev = Evaluator(plan, Decoding())
    assert ev.evaluate({"data": b'{"v": 0.5}'}).matched
    plan = parse("SELECT ck FROM t WHERE data.v = 12345678901234567891 ALLOW FILTERING", SCHEMA)
    assert plan is not None
    ev = Evaluator(plan, Decoding())
    assert ev.evaluate({"data": b'{"v": 12345678901234567891}'}).matched
    assert not ev.evaluate({"data": b'{"v": 12345678901234567890}'}).matched
    assert not ev.evaluate({"data": b'{"v": "12345678901234567891"}'}).matched  # a string: no match
    plan = parse("SELECT ck FROM t WHERE data.v = true ALLOW FILTERING", SCHEMA)
    assert plan is not None
    ev = Evaluator(plan, Decoding())
    assert ev.evaluate({"data": b'{"v": true}'}).matched
    assert not ev.evaluate({"data": b'{"v": 1}'}).matched  # booleans are not numbers


def test_map_values_and_udt_fields_hold_blobs():
    plan = parse("SELECT m['k'].status, u.payload.status FROM t WHERE u.payload.n > 1 ALLOW FILTERING",
                 SCHEMA)
    assert plan is not None
    ev = Evaluator(plan, Decoding())
    Wrap = namedtuple("Wrap", "payload n")
    row = {"m": {"k": zstandard.compress(b'{"status": "A"}')},
           "u": Wrap(gzip.compress(msgpack.packb({"status": "B", "n": 2})), 5)}
    assert ev.evaluate(row).values == ("A", "B")
    row["u"] = {"payload": b'{"status": "B", "n": 1}', "n": 5}
    assert not ev.evaluate(row).matched
    row = {"m": None, "u": None}
    assert not ev.evaluate(row).matched


def test_tagged_values_stand_for_their_value_in_paths():
    data = cbor2.dumps({"a": cbor2.CBORTag(4000, {"b": 3})})
    plan = parse("SELECT data.a.b FROM t WHERE data.a.b = 3 ALLOW FILTERING", SCHEMA)
    assert plan is not None
    assert Evaluator(plan, Decoding()).evaluate({"data": data}).values == (3,)


def test_a_value_cut_by_the_budget_never_matches_and_counts():
    big = gzip.compress(json.dumps({"status": "OK", "pad": ["x" * 50] * 400}).encode())
    plan = parse("SELECT data.status FROM t WHERE data.status = 'OK' ALLOW FILTERING", SCHEMA)
    assert plan is not None
    assert Evaluator(plan, Decoding()).evaluate({"data": big}).matched
    result = Evaluator(plan, Decoding(cap=256)).evaluate({"data": big})
    assert not result.matched and result.cut == 1


def test_column_settings_decode_the_way_the_display_does():
    value = zstandard.compress(msgpack.packb({"status": "S"}))
    plan = parse("SELECT data.status FROM ks.t", SCHEMA)
    assert plan is not None
    # A column setting names the place (DECODE ks.t.data ...): it decodes the value; one for
    # another column or table changes nothing.
    setting = Decoding(settings={"ks.t.data": "zstd>msgpack"})
    assert Evaluator(plan, setting).evaluate({"data": value}).values == ("S",)
    evaluator = Evaluator(plan, setting)
    evaluator.evaluate({"data": value})
    assert [read.engine.spec for read in evaluator.places.values()] == ["zstd>msgpack"]
    other = Evaluator(plan, Decoding(settings={"ks.other.data": "snappy"}))
    other.evaluate({"data": value})
    assert [read.engine.spec for read in other.places.values()] == [None]
    assert Evaluator(plan, Decoding(mode="zstd")).evaluate({"data": value}).values == ("S",)


def test_decoding_off_refuses_paths():
    plan = parse("SELECT data.a FROM t", SCHEMA)
    assert plan is not None
    with pytest.raises(QueryError, match="decoding is off"):
        Evaluator(plan, Decoding(mode="none"))


def test_decoding_off_reads_a_plan_of_columns():
    """A plan that reads no payload (its columns alone: a partition's, Spark's stored blobs) runs
    with decoding off, each row kept; one with a path, a condition or a group is refused."""
    stored = zstandard.ZstdCompressor().compress(b'{"a": 1}')
    for text in ("SELECT pk, data FROM t", "SELECT * FROM t"):
        plan = parse(text, SCHEMA, plain=True)
        assert plan is not None
        result = Evaluator(plan, Decoding(mode="none")).evaluate({"pk": "p", "ck": 1, "data": stored})
        assert result.matched and not result.undecodable
    for text in ("SELECT pk FROM t WHERE data.a = 1 ALLOW FILTERING",
                 "SELECT count(*) FROM t ALLOW FILTERING",
                 "SELECT data.a, count(*) FROM t GROUP BY data.a ALLOW FILTERING"):
        plan = parse(text, SCHEMA, plain=True)
        assert plan is not None
        with pytest.raises(QueryError, match="decoding is off"):
            Evaluator(plan, Decoding(mode="none"))


def test_random_bytes_are_undecodable():
    plan = parse("SELECT data.a FROM t WHERE data.a IS NULL ALLOW FILTERING", SCHEMA)
    assert plan is not None
    result = Evaluator(plan, Decoding()).evaluate({"data": os.urandom(64)})
    assert not result.matched and result.undecodable == 1


def test_an_evaluator_pickles_and_still_matches():
    # Worker processes and Spark executors may receive one pickled.
    import pickle

    plan = parse("SELECT ck FROM t WHERE data.status LIKE 'F%' AND data.n > 1 ALLOW FILTERING", SCHEMA)
    assert plan is not None
    evaluator = pickle.loads(pickle.dumps(Evaluator(plan, Decoding())))
    for row, doc in rows(60):
        expected = doc is not None and TRUTH["data.status LIKE 'F%'"](doc) and doc["n"] > 1
        assert evaluator.evaluate(row).matched == expected


def test_paths_no_value_had_are_known_with_the_nearest_keys_in_parts_that_merge():
    import pickle

    from cqlsh_ext.query.answer import Answer

    plan = parse('SELECT ck, data.stauts, data.customer.nmae, data.status, data.items[7].sku FROM t', SCHEMA)
    assert plan is not None
    evaluator = Evaluator(plan, Decoding())
    data = rows(60)
    parts = [Answer(plan), Answer(plan)]  # as two workers fill them
    for i, (row, _doc) in enumerate(data):
        parts[i % 2].add(evaluator, row)
    total = Answer(plan)
    for part in parts:
        total.merge(pickle.loads(pickle.dumps(part)))  # parts travel between processes
    missing = {path: (nearest, seen) for path, nearest, seen in total.counts.paths.never_found()}
    # data.status: most documents have it (a few do not, and random bytes have nothing): not named.
    assert set(missing) == {"data.stauts", "data.customer.nmae", "data.items[7].sku"}
    assert missing["data.stauts"][0] == ["status"]
    assert "order-id" in missing["data.stauts"][1]  # every key seen at that level
    assert missing["data.customer.nmae"] == (["name"], ["name", "tier"])  # where the walks got furthest
    assert missing["data.items[7].sku"] == ([], [])  # a list index: no keys to offer


def test_a_path_no_decodable_value_was_read_for_is_not_named():
    from cqlsh_ext.query.answer import Answer

    plan = parse("SELECT ck, data.stauts FROM t", SCHEMA)
    assert plan is not None
    answer = Answer(plan)
    evaluator = Evaluator(plan, Decoding())
    for row in ({"pk": "p", "ck": 1, "data": None}, {"pk": "p", "ck": 2, "data": os.urandom(40)}):
        answer.add(evaluator, row)
    assert answer.counts.paths.never_found() == []  # no value to have it: nothing to say
