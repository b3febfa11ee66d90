"""payload.columns.is_plain: which decoded values are written as they are, and which go through
machine_value, which meters them against the value's budget."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.payload.columns import is_plain
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.view import RECORD


def test_a_parsed_record_is_plain_and_tags_bytes_and_infinities_are_not():
    budget = Budget.for_cap(4 << 20)
    assert is_plain({"a": [1, 2.5, "x", None, True], "b": {"c": []}}, budget.nodes)
    assert not is_plain({"a": b"\x00"}, budget.nodes)
    assert not is_plain([float("inf")], budget.nodes)
    assert not is_plain({1: "int key"}, budget.nodes)
    # A path's value is often a scalar itself: the same rules at the top.
    assert is_plain(7, budget.nodes) and is_plain(2.5, budget.nodes) and is_plain("x", budget.nodes)
    assert not is_plain(float("inf"), budget.nodes) and not is_plain(float("nan"), budget.nodes)
    # Under and past the 4,300 digits Python writes an integer in:
    assert is_plain(10**4000, budget.nodes) and not is_plain(10**5000, budget.nodes)


def test_a_record_of_shared_parts_is_not_plain_so_the_budget_meters_it():
    # A pickle's memo shares each level ten times: 70 nodes, 10**12 paths. Walked path by path it
    # would never end; past the budget's node count it is handed to machine_value.
    node: Any = {"leaf": 1}
    for _ in range(12):
        node = {f"k{j}": node for j in range(10)}
    view = ValueEngine().view(pickle.dumps(node, protocol=4))
    assert view.kind == RECORD and not view.cut
    assert not is_plain(view.tree, Budget.for_cap(4 << 20).nodes)


def test_a_tree_within_the_budget_s_nodes_is_plain():
    nodes = Budget.for_cap(4 << 20).nodes
    assert is_plain([{"i": i} for i in range(nodes // 3)], nodes)


def _plain_by_definition(value: Any, nodes: int) -> bool:
    """is_plain as first written: every node counted in document order, the budget checked at each
    list and record, the scalar rules of JSON."""
    left = nodes

    def plain(value: Any, depth: int) -> bool:
        nonlocal left
        left -= 1
        if type(value) is list or type(value) is dict:
            if depth > 32 or left < 0:
                return False
            if type(value) is list:
                return all(plain(v, depth + 1) for v in value)
            return all(type(k) is str and plain(v, depth + 1) for k, v in value.items())
        if value is None or type(value) in (str, bool):
            return True
        if type(value) is int:
            return value.bit_length() <= 14_000
        if type(value) is float:
            return value - value == 0
        return False

    return plain(value, 0)


_LEAVES = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.integers(), st.floats(),
                    st.binary(max_size=2), st.just(5000).map(lambda digits: 10**digits),
                    st.decimals(allow_nan=False))
_TREES = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.text(max_size=2), st.integers(0, 3)), inner, max_size=4)), max_leaves=40)


@given(_TREES, st.integers(0, 12))
@example({"a": "x", "b": []}, 2).via("a string counted before a list past the budget")
@example(["x", None, True, [1]], 4).via("the same in a list")
@settings(max_examples=400)
def test_is_plain_is_its_definition_whatever_the_value_and_the_budget(value, nodes):
    # The walk's loops count strings, nulls and booleans without a call: the same answer, also
    # where the node budget runs out part way (small budgets) and at the depth limit.
    assert is_plain(value, nodes) == _plain_by_definition(value, nodes)


def test_the_depth_limit_is_the_definition_s():
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    for depth in range(30, 40):
        value: Any = "x"
        for _ in range(depth):
            value = {"k": value}
        assert is_plain(value, 1000) == _plain_by_definition(value, 1000)
    assert not is_plain(deep, 1000) and not _plain_by_definition(deep, 1000)
