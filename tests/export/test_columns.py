"""export.columns.is_plain: which decoded values are written as they are, and which go through
machine_value, which meters them against the value's budget."""

from __future__ import annotations

import pickle
from typing import Any

from cqlsh_ext.export.columns import is_plain
from cqlsh_ext.payload.budget import Budget
from cqlsh_ext.query.evaluate import Settings, decode


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
    decoded = decode(pickle.dumps(node, protocol=4), Settings(), None)
    assert decoded.state == "ok"
    assert not is_plain(decoded.tree, Budget.for_cap(4 << 20).nodes)


def test_a_tree_within_the_budget_s_nodes_is_plain():
    nodes = Budget.for_cap(4 << 20).nodes
    assert is_plain([{"i": i} for i in range(nodes // 3)], nodes)
