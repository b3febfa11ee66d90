"""IS UNDECODABLE and IS NOT UNDECODABLE: the values no reading can read (no known format, a format
that fails, a binary payload) listed by a condition on the blob itself, and given a group of their
own by GROUP BY (cqlsh_ext.query). Values written by the real libraries; what each one is comes from
how the test made it, not from cqlsh-ext."""

from __future__ import annotations

import gzip
import json
import pickle
import random

import msgpack
import pytest
import zstandard
from orders import rows

from cqlsh_ext.payload.paths import UNDECODABLE_GROUP
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Column, Path, Predicate, QueryError, Schema, parse
from cqlsh_ext.query.groups import Groups, sort_key, specs
from cqlsh_ext.query.recognize import names_payload

SCHEMA = Schema({"pk": "text", "ck": "int", "data": "blob", "m": "map<text,blob>", "u": "frozen<wrap>",
                 "name": "text"}, ["pk"], {"wrap": {"payload": "blob", "n": "int"}})

DOC = json.dumps({"status": "NEW", "n": 3}).encode()
_rng = random.Random(3)
#: (what it is, the stored value): the first four are undecodable.
VALUES = [
    ("no known format", bytes([0x9F, 0x00]) + _rng.randbytes(60)),
    ("a format that fails", gzip.compress(DOC * 40, mtime=0)[:30]),
    ("a binary payload", gzip.compress(b"\x89PNG\r\n\x1a\n" + _rng.randbytes(200), mtime=0)),
    ("a PNG stored bare: no known format either", b"\x89PNG\r\n\x1a\n" + _rng.randbytes(200)),
    ("text", DOC),
    ("compressed text", zstandard.ZstdCompressor().compress(DOC)),
    ("a record", gzip.compress(msgpack.packb({"status": "PAID", "n": 4}), mtime=0)),
    ("null", None),
]
UNDECODABLE = {name for name, _ in VALUES[:4]}


def plan(text: str):
    found = parse(text, SCHEMA)
    assert found is not None
    return found


@pytest.mark.parametrize(("where", "ref", "op"), [
    ("data IS UNDECODABLE", Column("data"), "IS UNDECODABLE"),
    ("data is not undecodable", Column("data"), "IS NOT UNDECODABLE"),
    ("m['k'] IS UNDECODABLE", Path("m", "k", (), "m['k']"), "IS UNDECODABLE"),
    ("u.payload IS NOT UNDECODABLE", Path("u", "payload", (), "u.payload"), "IS NOT UNDECODABLE"),
])
def test_the_condition_is_said_of_a_blob(where, ref, op):
    p = plan(f"SELECT ck FROM t WHERE pk = 'a' AND {where}")
    assert p.predicates == [Predicate(ref, op)]
    assert p.server_where == "pk = 'a'"
    column = ref.name if isinstance(ref, Column) else ref.column
    assert p.server_statement == f"SELECT ck, {column} FROM t WHERE pk = 'a'"
    assert names_payload(f"SELECT ck FROM t WHERE {where} ALLOW FILTERING", SCHEMA)


@pytest.mark.parametrize(("text", "message"), [
    ("SELECT ck FROM t WHERE data.status IS UNDECODABLE ALLOW FILTERING",
     "IS UNDECODABLE is said of a blob (data), not of a path inside it (data.status)"),
    ("SELECT ck FROM t WHERE data IS NULL ALLOW FILTERING", None),  # CQL's own: the server's to refuse
    ("SELECT ck FROM t WHERE data = 0x00 ALLOW FILTERING", None),
])
def test_what_is_and_is_not_the_condition(text, message):
    if message is None:
        assert parse(text, SCHEMA) is None and not names_payload(text, SCHEMA)
        return
    with pytest.raises(QueryError) as refused:
        parse(text, SCHEMA)
    assert str(refused.value) == message


def test_a_name_that_is_not_a_blob_is_cqls():
    text = "SELECT ck FROM t WHERE name IS UNDECODABLE ALLOW FILTERING"
    assert not names_payload(text, SCHEMA) and parse(text, SCHEMA) is None


@pytest.mark.parametrize("op", ["IS UNDECODABLE", "IS NOT UNDECODABLE"])
def test_the_values_listed_are_exactly_the_undecodable_ones(op):
    ev = Evaluator(plan(f"SELECT ck FROM t WHERE data {op} ALLOW FILTERING"), Decoding())
    listed = {name for name, value in VALUES if ev.evaluate({"ck": 1, "data": value}).matched}
    assert listed == (UNDECODABLE if op == "IS UNDECODABLE" else {n for n, _ in VALUES} - UNDECODABLE)
    # The page path (the column decoded column-wise) answers the same.
    ev.undecodable_kinds()
    found, undecodable, cut = ev.evaluate_page(["ck", "data"], [(k, v) for k, (_n, v) in enumerate(VALUES)])
    assert {VALUES[k][0] for k, _ in found} == listed
    assert (undecodable, cut) == (len(UNDECODABLE), 0)
    # Counted by kind, in the view's words: no known format, a format that failed, a binary payload.
    # A binary payload is one under a recognised container; a PNG stored as it is has no known format.
    assert ev.undecodable_kinds() == {"unknown": 2, "failed": 1, "binary": 1}


def test_a_cut_value_is_not_undecodable():
    zeros = zstandard.ZstdCompressor().compress(bytes(5 << 20))  # over the 4 MiB cap: cut
    ev = Evaluator(plan("SELECT ck FROM t WHERE data IS UNDECODABLE ALLOW FILTERING"), Decoding())
    result = ev.evaluate({"data": zeros})
    assert not result.matched and result.cut == 1


def test_in_a_map_and_a_udt():
    ev = Evaluator(plan("SELECT ck FROM t WHERE m['k'] IS UNDECODABLE AND u.payload IS NOT UNDECODABLE "
                        "ALLOW FILTERING"), Decoding())
    bad, good = VALUES[0][1], VALUES[4][1]
    assert ev.evaluate({"m": {"k": bad}, "u": {"payload": good, "n": 1}}).matched
    assert not ev.evaluate({"m": {"k": good}, "u": {"payload": good, "n": 1}}).matched
    assert not ev.evaluate({"m": {"j": bad}, "u": {"payload": bad, "n": 1}}).matched


def test_group_by_gives_undecodable_values_a_group_of_their_own():
    p = plan("SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING")
    ev = Evaluator(p, Decoding())
    groups = Groups(specs(p))
    for _row, value in [(None, v) for _n, v in VALUES]:
        result = ev.evaluate({"data": value})
        groups.add(result.key, result.inputs)
    # text and compressed text: NEW; the record: PAID; null: the null group; the rest: theirs.
    assert groups.results() == [((None,), (1,)), (("NEW",), (2,)), (("PAID",), (1,)),
                                ((UNDECODABLE_GROUP,), (len(UNDECODABLE),))]
    # The page path gives the same keys.
    page = Groups(specs(p))
    found, _u, _c = ev.evaluate_page(["data"], [(v,) for _n, v in VALUES])
    for _k, result in found:
        page.add(result.key, result.inputs)
    assert page.results() == groups.results()
    # One group across processes: the marker pickles to itself, and sorts after every value.
    assert pickle.loads(pickle.dumps(UNDECODABLE_GROUP)) is UNDECODABLE_GROUP
    assert sort_key(UNDECODABLE_GROUP) > max(sort_key(v) for v in (None, True, 3, "zz", {"a": 1}))


def test_the_generators_random_values_are_the_ones_listed():
    ev = Evaluator(plan("SELECT ck FROM t WHERE data IS UNDECODABLE ALLOW FILTERING"), Decoding())
    for row, doc in rows(120):
        assert ev.evaluate(row).matched == (doc is None)
