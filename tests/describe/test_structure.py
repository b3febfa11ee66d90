"""describe.structure: the paths of a place's trees, as a user reads them in the report: presence,
types, lengths, ranges, values, data keys folded; bounded against hostile values; merging exactly."""

from __future__ import annotations

import pickle
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.describe.structure import MAX_DEPTH, MAX_PATHS, MAX_VISITS, Structure, data_kind
from cqlsh_ext.payload.formats.tree import Cut, Tagged


def described(trees: list[Any]) -> Structure:
    structure = Structure()
    for tree in trees:
        structure.add(tree)
    return structure


def figures(structure: Structure, name: str = "data") -> dict[str, dict[str, Any]]:
    """What the report reads of each path."""
    out = {}
    for path, _depth, _step, node in structure.walk(name):
        values = node.values
        out[path] = {
            "present": node.present, "seen": node.seen, "types": dict(node.types),
            "strings": (node.strings, node.str_min, node.str_max, node.str_total),
            "lists": (node.lists, node.list_min, node.list_max, node.list_total),
            "range": (node.low, node.high),
            "values": None if values is None else (values.exact, values.distinct(),
                                                   repr(values.most_common())),
            "keys": (dict(node.key_kinds), node.keys.distinct() if node.keys is not None else None),
        }
    return out


def test_presence_types_lengths_and_values_of_known_documents():
    docs = [
        {"status": "PAID", "n": 1, "items": [{"sku": "a", "qty": 1}, {"sku": "b"}], "note": None},
        {"status": "NEW", "n": 2.5, "items": [], "customer": {"tier": "gold"}},
        {"status": "PAID", "n": 7, "items": [{"sku": "c", "qty": 3}], "customer": {}},
        {"status": "PAID", "n": "seven", "items": [[1, 2], [3]]},
    ]
    got = figures(described(docs))
    assert got["data"]["present"] == 4 and got["data"]["types"] == {"record": 4}
    assert got["data.status"]["present"] == 4
    assert got["data.status"]["values"] == (True, 2, repr([("PAID", 3), ("NEW", 1)]))
    assert got["data.status"]["strings"] == (4, 3, 4, 15)
    assert got["data.n"]["types"] == {"integer": 2, "float": 1, "string": 1}
    assert got["data.n"]["range"] == (1, 7)
    # Lengths 2, 0, 1, 2; the elements of all lists together, present in the 3 values with any.
    assert got["data.items"]["lists"] == (4, 0, 2, 5)
    assert (got["data.items[]"]["present"], got["data.items[]"]["seen"]) == (3, 5)
    assert got["data.items[]"]["types"] == {"record": 3, "list": 2}
    assert (got["data.items[].sku"]["present"], got["data.items[].sku"]["seen"]) == (2, 3)
    assert (got["data.items[].qty"]["present"], got["data.items[].qty"]["seen"]) == (2, 2)
    assert got["data.items[][]"]["seen"] == 3 and got["data.items[][]"]["range"] == (1, 3)
    assert got["data.note"]["types"] == {"null": 1} and got["data.note"]["present"] == 1
    assert got["data.customer"]["present"] == 2 and got["data.customer.tier"]["present"] == 1
    assert list(got) == ["data", "data.items", "data.items[]", "data.items[].qty", "data.items[].sku",
                         "data.items[][]", "data.n", "data.status", "data.customer", "data.customer.tier",
                         "data.note"]  # by presence, then by name


def test_keys_that_are_data_fold_into_one_entry():
    docs = [{"byDay": {f"2024-01-{d:02d}": d for d in range(1, 1 + k)}, "byId": {f"ORD-{k}0000": 1},
             "bySku": {"1234": 1, "sku-7": 2}, "byUser": {"ann@example.com": 1, 7: 2}} for k in range(1, 11)]
    got = figures(described(docs))
    assert got["data.byDay.*"]["present"] == 10 and got["data.byDay.*"]["seen"] == 55
    assert got["data.byDay.*"]["keys"] == ({"dates": 55}, 10)
    assert got["data.byDay.*"]["range"] == (1, 10)
    assert got["data.byId.*"]["keys"] == ({"ids": 10}, 10)
    assert got["data.bySku.*"]["keys"] == ({"numbers": 10}, 1)
    assert got["data.bySku.\"sku-7\""]["seen"] == 10  # a name with a digit: still a name
    assert got["data.byUser.*"]["keys"] == ({"addresses": 10, "keys that are not text": 10}, 2)
    assert not any(path.startswith("data.byDay.\"2024") for path in got)


def test_what_looks_like_data():
    for key, kind in [("2024-05-01", "dates"), ("2024-05-01T10:00:00Z", "dates"), ("12:30", "dates"),
                      ("42", "numbers"), ("-3.5", "numbers"),
                      ("123e4567-e89b-12d3-a456-426614174000", "UUIDs"), ("deadbeef01", "hex ids"),
                      ("ORD-2024000123", "ids"), ("user_12345", "ids"), ("a@b.io", "addresses"),
                      ("k" * 65, "long keys"), (7, "keys that are not text"),
                      (b"k", "keys that are not text")]:
        assert data_kind(key) == kind, key
    for name in ("status", "orderId", "item1", "v2", "sha256", "address2", "x-y", "", "deadbeef"):
        assert data_kind(name) is None, name


def test_a_tagged_value_stands_for_its_value_and_a_cut_is_reported():
    structure = Structure()
    assert structure.add({"when": Tagged("1", 1700000000), "rest": Cut("over 100 nodes")}) is True
    assert structure.add({"when": 5}) is False
    got = figures(structure)
    assert got["data.when"]["types"] == {"integer": 2} and got["data.when"]["range"] == (5, 1700000000)
    assert got["data.rest"]["types"] == {"cut": 1}


def test_a_graph_of_shared_parts_is_walked_within_the_visit_bound():
    # A pickle's memo shares each level's list ten times: 13 objects, 10**12 elements to walk. The
    # walk stops at MAX_VISITS nodes and says so; its paths are all there.
    node: Any = {"leaf": 1}
    for _ in range(12):
        node = [node] * 10
    from cqlsh_ext.payload.engine import ValueEngine

    tree = ValueEngine().view(pickle.dumps({"a": node}, protocol=4)).tree
    structure = Structure()
    started = time.process_time()
    structure.add(tree)
    assert time.process_time() - started < 5
    assert structure.unfinished == 1
    assert sum(n.seen for _, _, _, n in structure.walk("data")) == MAX_VISITS
    assert max(depth for _, depth, _, _ in structure.walk("data")) == MAX_DEPTH  # 12 levels of []


def test_a_graph_of_shared_maps_is_bounded_by_the_paths_tracked():
    # 10**12 paths in 70 maps: paths past MAX_PATHS are counted (each a visit), not walked into.
    node: Any = {"leaf": 1}
    for _ in range(12):
        node = {f"k{j}": node for j in range(10)}
    from cqlsh_ext.payload.engine import ValueEngine

    tree = ValueEngine().view(pickle.dumps({"a": node}, protocol=4)).tree
    structure = Structure()
    started = time.process_time()
    structure.add(tree)
    assert time.process_time() - started < 5
    assert structure.paths == MAX_PATHS and structure.untracked > 0


def test_too_many_paths_are_counted_not_tracked():
    wide = {f"field_{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676)}": i
            for i in range(3 * MAX_PATHS)}
    structure = described([wide])
    assert structure.paths == MAX_PATHS
    assert structure.untracked == 3 * MAX_PATHS - (MAX_PATHS - 1)  # the root is a path too


def test_nesting_past_the_depth_bound_is_counted():
    deep: Any = "bottom"
    for _ in range(MAX_DEPTH + 20):
        deep = {"d": deep}
    structure = described([deep, {"d": 1}])
    assert structure.too_deep == 1
    assert max(depth for _, depth, _, _ in structure.walk("data")) == MAX_DEPTH


JSON_LIKE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
              st.sampled_from(["a", "b", "PAID", ""])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["x", "y", "2024-01-01", "7", "z"]), inner,
                                            max_size=3)),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSON_LIKE, max_size=12), st.lists(st.integers(0, 2), max_size=12))
def test_parts_merged_give_the_figures_of_one_structure(trees, parts):
    whole = described(trees)
    split: list[list[Any]] = [[], [], []]
    for k, tree in enumerate(trees):
        split[parts[k] if k < len(parts) else 0].append(tree)
    merged = Structure()
    for part in reversed(split):
        merged.merge(described(part))
    assert figures(merged) == figures(whole)
    assert (merged.values, merged.paths) == (whole.values, whole.paths)
