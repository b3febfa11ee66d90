"""Accumulators and their merges (cqlsh_ext.query.groups): split rows into parts, aggregate each,
merge, and the answer is the one pass's, in any order."""

from __future__ import annotations

import pickle
import random
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from orders import MISSING, rows, take

from cqlsh_ext.payload.paths import UNDECODABLE_GROUP
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import QueryError, parse
from cqlsh_ext.query.groups import Accumulator, AggSpec, Groups, RowBuffer, specs
from tests.query.test_evaluate import SCHEMA

SPECS = (AggSpec("count", True), AggSpec("count"), AggSpec("min"), AggSpec("max"), AggSpec("sum"),
         AggSpec("avg"))


def feed(groups: Groups, items: list[tuple[tuple[Any, ...], Any]]) -> Groups:
    for key, value in items:
        groups.add(key, [None] + [value] * (len(groups.specs) - 1))
    return groups


def test_sum_of_integers_stays_exact_and_avg_is_a_float():
    acc = Accumulator("sum")
    for v in (10**30, 1, -5):
        acc.add(v)
    assert acc.result() == 10**30 - 4 and type(acc.result()) is int
    acc.add(0.5)
    assert acc.result() == float(10**30 - 4 + Fraction(1, 2)) and type(acc.result()) is float
    acc = Accumulator("sum")
    acc.add(Decimal("0.1"))
    acc.add(2)
    assert acc.result() == Decimal("2.1")
    avg = Accumulator("avg")
    for v in (1, 2):
        avg.add(v)
    assert avg.result() == 1.5
    assert Accumulator("avg").result() is None and Accumulator("sum").result() is None


def test_not_numbers_are_skipped_and_counted():
    acc = Accumulator("sum")
    for v in (1, "x", True, None, [1], 2):
        acc.add(v)
    assert acc.result() == 3 and acc.skipped == 3  # None is not counted: it is null
    mn = Accumulator("min")
    for v in ("b", "a"):
        mn.add(v)
    assert mn.result() == "a"  # strings when no number
    mn.add(5)
    assert mn.result() == 5


def test_nan_and_the_infinities_are_numbers_in_postgresql_s_order():
    """The oracle: PostgreSQL's float8 aggregates (sum/avg NaN with a NaN or both infinities,
    max NaN once read, min NaN only alone), written out by hand, not by the code under test."""
    nan, inf = float("nan"), float("inf")
    cases = [([1.5, nan, 2], {"sum": "nan", "avg": "nan", "min": 1.5, "max": "nan"}),
             ([1.5, inf, 2], {"sum": inf, "avg": inf, "min": 1.5, "max": inf}),
             ([1.5, -inf, inf], {"sum": "nan", "avg": "nan", "min": -inf, "max": inf}),
             ([nan, nan], {"sum": "nan", "avg": "nan", "min": "nan", "max": "nan"}),
             ([-inf, 3], {"sum": -inf, "avg": -inf, "min": -inf, "max": 3})]
    for values, expected in cases:
        for func, want in expected.items():
            whole, merged = Accumulator(func), Accumulator(func)
            parts = [Accumulator(func) for _ in values]
            for value, part in zip(values, parts, strict=True):
                whole.add(value)
                part.add(value)
            for part in reversed(parts):  # merged in another order, as from workers
                merged.merge(pickle.loads(pickle.dumps(part)))
            for got in (whole.result(), merged.result()):
                if want == "nan":
                    assert isinstance(got, float) and got != got, (values, func, got)
                else:
                    assert got == want, (values, func, got)
            assert whole.skipped == 0


def test_nan_values_are_one_group_sorted_after_every_number():
    nan = float("nan")
    groups = feed(Groups(SPECS), [((nan,), 1), ((float("nan"),), 2), ((float("inf"),), 3), ((2,), 4),
                                  ((-float("inf"),), 5), (("a",), 6), ((None,), 7)])
    keys = [key[0] for key, _results in groups.results()]
    assert keys[:4] == [None, -float("inf"), 2, float("inf")]
    assert keys[4] != keys[4] and keys[5] == "a"  # one NaN group, between the numbers and strings
    assert [results[0] for _key, results in groups.results()] == [1, 1, 1, 1, 2, 1]


def test_count_star_counts_rows_and_count_counts_values():
    groups = feed(Groups(SPECS), [((), 1), ((), None), ((), "x")])
    assert groups.results() == [((), (3, 2, 1, 1, 1, 1.0))]
    assert Groups(SPECS).results() == [((), (0, 0, None, None, None, None))]


def one_pass_and_parts(items: list[tuple[tuple[Any, ...], Any]], parts: int) -> tuple[Groups, Groups]:
    whole = feed(Groups(SPECS), items)
    pieces = [feed(Groups(SPECS), items[i::parts]) for i in range(parts)]
    merged = Groups(SPECS)
    for piece in pieces:
        merged.merge(pickle.loads(pickle.dumps(piece)))  # as from a worker process
    return whole, merged


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_merging_parts_gives_the_one_pass_on_evaluated_rows(parts: int):
    plan = parse("SELECT data.status, count(*), min(data.n), max(data.n), sum(data.n), avg(data.n) "
                 "FROM t GROUP BY data.status ALLOW FILTERING", SCHEMA)
    assert plan is not None
    evaluator = Evaluator(plan, Decoding())
    data = rows(200)
    results = [evaluator.evaluate(row) for row, _ in data]
    whole = Groups(specs(plan))
    for r in results:
        whole.add(r.key, r.inputs)
    merged = Groups(specs(plan))
    for i in range(parts):
        part = Groups(specs(plan))
        for r in results[i::parts]:
            part.add(r.key, r.inputs)
        merged.merge(pickle.loads(pickle.dumps(part)))
    assert merged.results() == whole.results()
    # and the truth from the generator
    truth: dict[Any, list[Any]] = {}
    for _, doc in data:
        if doc is None:  # the generator's random bytes: undecodable, a group of their own, last
            truth.setdefault((UNDECODABLE_GROUP,), []).append(None)
            continue
        status = take(doc, ("status",))
        key = None if status is MISSING or status is None else status
        truth.setdefault((key,), []).append(doc["n"])
    expected = []
    decodable = sorted((k for k in truth if k[0] is not UNDECODABLE_GROUP),
                       key=lambda k: (k[0] is not None, isinstance(k[0], str), k[0]))
    for key in [*decodable, (UNDECODABLE_GROUP,)]:
        ns = [n for n in truth[key] if n is not None]
        total = sum(Fraction(n) for n in ns)
        is_float = any(isinstance(n, float) for n in ns)
        expected.append((key, (len(truth[key]), min(ns, default=None), max(ns, default=None),
                               (float(total) if is_float else int(total)) if ns else None,
                               float(total / len(ns)) if ns else None)))
    assert whole.results() == expected


def test_the_number_of_groups_is_bounded():
    groups = Groups(SPECS, max_groups=3)
    feed(groups, [((i,), i) for i in range(3)])
    with pytest.raises(QueryError, match="more than 3 groups"):
        groups.add((4,), [None] * 6)


def test_distinct_and_order_by_buffer_is_bounded_and_sorted():
    buf = RowBuffer(max_rows=4, distinct=True)
    for row in [("b", 2), ("a", 1), ("b", 2), (None, 3), ("a", 1.0)]:
        buf.add(row)
    assert buf.sorted([(0, False)]) == [(None, 3), ("a", 1), ("b", 2)]
    assert buf.sorted([(1, True)], limit=2) == [(None, 3), ("b", 2)]
    with pytest.raises(QueryError, match="more than 4 rows"):
        for i in range(5):
            buf.add(("c", i))


values = st.one_of(st.none(), st.integers(min_value=-10**25, max_value=10**25),
                   st.floats(allow_nan=True, allow_infinity=False),
                   st.decimals(allow_nan=False, allow_infinity=False, places=3),
                   st.text(max_size=3), st.booleans())


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.tuples(st.tuples(st.sampled_from(["a", "b", None])), values), max_size=40),
       seed=st.integers(0, 2**32), parts=st.integers(1, 5))
def test_merge_is_order_independent(items: list[tuple[tuple[Any, ...], Any]], seed: int, parts: int):
    whole, merged = one_pass_and_parts(items, parts)
    assert merged.results() == whole.results()
    shuffled = list(items)
    random.Random(seed).shuffle(shuffled)
    again, _ = one_pass_and_parts(shuffled, 1)
    assert repr(again.results()) == repr(whole.results())


def test_group_by_over_no_row_gives_no_row():
    # An aggregate without GROUP BY gives one row when no row is read (count 0), as CQL does; with
    # GROUP BY it gives none. The answer took the first for the second and raised IndexError
    # (a payload query stopped by Ctrl-C before its first row, or a WHERE nothing matches).
    from cqlsh_ext.query.answer import Answer

    for text, expected in (("SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING", []),
                           ("SELECT count(*), max(data.n) FROM t ALLOW FILTERING", [(0, None)])):
        plan = parse(text, SCHEMA)
        assert plan is not None
        assert Answer(plan).final() == expected, text


def _answer(text: str, blobs: list[bytes]) -> list[tuple[Any, ...]]:
    from cqlsh_ext.query.answer import Answer

    plan = parse(text, SCHEMA)
    assert plan is not None
    evaluator, answer = Evaluator(plan, Decoding()), Answer(plan)
    for ck, blob in enumerate(blobs):
        answer.add(evaluator, {"pk": "p", "ck": ck, "data": blob, "m": None, "u": None})
    return answer.final()


def test_group_by_a_record_groups_equal_records_and_prints_them():
    # A GROUP BY path whose values are objects raised "unhashable type: 'dict'".
    import json

    docs = [{"c": {"tier": "gold", "n": 1}}, {"c": {"tier": "gold", "n": 1}}, {"c": [1, 2]}, {"c": "x"}]
    rows = _answer("SELECT data.c, count(*) FROM t GROUP BY data.c ALLOW FILTERING",
                   [json.dumps(d).encode() for d in docs])
    assert sorted(rows, key=repr) == sorted([({"tier": "gold", "n": 1}, 2), ([1, 2], 1), ("x", 1)], key=repr)


def test_distinct_order_by_and_group_by_of_a_record_of_shared_parts_end():
    # 888 bytes of pickle whose memo shares each of 12 levels ten times (10**12 paths): sort keys
    # were repr(), which writes every path; DISTINCT hung. Now the text is the budget's, and the
    # value past it is kept as its own row and group.
    import json

    node: Any = {"leaf": 1}
    for _ in range(12):
        node = {f"k{j}": node for j in range(10)}
    blobs = [pickle.dumps({"a": node}, protocol=4), json.dumps({"a": {"x": 1}}).encode(),
             json.dumps({"a": {"x": 1}}).encode()]
    assert len(_answer("SELECT DISTINCT data.a FROM t ALLOW FILTERING", blobs)) == 2
    ordered = _answer("SELECT ck, data.a FROM t ORDER BY data.a ALLOW FILTERING", blobs)
    assert [ck for ck, _ in ordered] == [1, 2, 0]  # the value past the budget sorts last
    grouped = _answer("SELECT data.a, count(*) FROM t GROUP BY data.a ALLOW FILTERING", blobs)
    assert sorted(count for _, count in grouped) == [1, 2]
