"""JSON read fast and exactly: json_container reads with orjson where orjson gives what the
standard library's json.loads gives, and with json.loads everywhere else: integers past 64 bits
(orjson would make them floats), NaN, Infinity, 1e400 and lone surrogates (orjson refuses them,
json.loads reads them), nesting past orjson's depth; duplicate keys and key order as json.loads
has them. Then a query over tools/orders.py's documents, which hold 10**20-sized integers on
purpose, against their truth."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload import budget
from cqlsh_ext.payload.json_text import json_container
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Schema, parse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import orders  # noqa: E402


def exactly(value: Any) -> list[Any]:
    """The value as a flat list of tokens with every scalar's type spelt out (1, 1.0 and True are
    equal in Python), walked without recursion (values nest a thousand levels deep here)."""
    out: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(("dict", len(node)))
            for k, v in reversed(list(node.items())):
                stack.extend((v, ("key", k)))
        elif isinstance(node, list):
            out.append(("list", len(node)))
            stack.extend(reversed(node))
        elif isinstance(node, tuple) and node[:1] == ("key",):
            out.append(node)
        else:
            out.append((type(node).__name__, repr(node)))
    return out


def nesting(text: str) -> int:
    """How deep the text's brackets nest outside its strings (a walk of its characters)."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def same_as_json_loads(text: str) -> None:
    """json_container reads what json.loads reads, but for nesting past the value's budget
    (budget.JSON_DEPTH levels: json.loads' own limit depends on the caller's stack)."""
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError):
        expected = None
    if not isinstance(expected, (dict, list)) or nesting(text) > budget.JSON_DEPTH:
        expected = None
    assert exactly(json_container(text)) == exactly(expected)


EDGES = [
    "[18446744073709551616]", "[18446744073709551615]", "[-9223372036854775808]", "[-9223372036854775809]",
    '{"n": 100000000000000000000, "m": -100000000000000000000}', "[1e400]", "[-1e400]", "[1e-400]",
    "[NaN]", '{"a": Infinity}', "[-Infinity]", '["\\ud800"]', '{"\\udfff": 1}', '["\\ud83d\\ude00"]',
    '{"a": 1, "b": 2, "a": 3}', '{"b": {"x": 1, "x": [2]}, "a": 0, "b": null}', "[1.0, 1, -0, -0.0, 1E2]",
    "[0.1000000000000000055511151231257827, 1.7976931348623157e308, 2.4703282292062328e-324]",
    "[12345678901234567.5, 1234567890123456789.0]", '  {"a" : [ ] }  ', '{"a": 1} x', "[1,]", '{"a":\x01"x"}',
    "\u00a0{}", '{"é": "\\u00e9\\n\\/"}', "[" * 1100 + "]" * 1100, "[" * 200 + "]" * 200,
    # Nesting json.loads refuses (the interpreter's recursion limit) and orjson reads (to 1,024);
    # about the value's budget (budget.JSON_DEPTH, 512), brackets in strings not counted.
    *("[" * depth + "]" * depth for depth in (256, 257, 511, 512, 513, 600, 990, 1000, 1010, 1023, 1024)),
    '["[[[[", ' + "[" * 510 + "]" * 510 + "]", '["]]]]", ' + "[" * 510 + "]" * 510 + "]",
    '{"a": ' * 1000 + "1" + "}" * 1000, '["[[[[", ' + "[" * 1001 + "]" * 1001 + "]",
    "[" + ", ".join(["[[1], {}]"] * 400) + "]",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_literals_read_as_json_loads_reads_them(text: str) -> None:
    same_as_json_loads(text)


scalars = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30), st.integers(-(2**64), 2**64),
    st.text(max_size=12), st.sampled_from(["\ud800", "\udc00x"]),
)
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=6), inner, max_size=5)), max_leaves=30)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.lists(documents, max_size=4),
                st.dictionaries(st.text(max_size=5), documents, max_size=4)),
       st.booleans(), st.booleans())
def test_documents_read_as_json_loads_reads_them(doc: Any, ascii_only: bool, indent: bool) -> None:
    same_as_json_loads(json.dumps(doc, ensure_ascii=ascii_only, indent=2 if indent else None))


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.from_regex(r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,3})?",
                                        fullmatch=True), st.sampled_from(["NaN", "Infinity", "-Infinity"])),
                min_size=1, max_size=6))
def test_number_literals_read_as_json_loads_reads_them(literals: list[str]) -> None:
    same_as_json_loads("[" + ", ".join(literals) + "]")


SCHEMA = Schema({"pk": "text", "ck": "int", "data": "blob"}, ["pk"])


@pytest.mark.parametrize("page", [True, False])
def test_paths_of_the_order_documents_are_their_truth(page: bool) -> None:
    # Every encoding of tools/orders.py, big integers (10**20 times the row's number) included:
    # each value read is the document's, of the same type.
    data = orders.rows(600, seed=11)
    plan = parse("SELECT ck, data.n, data.status, data.customer.tier, data.items[1].sku FROM t", SCHEMA)
    assert plan is not None
    answer, evaluator = Answer(plan), Evaluator(plan, Decoding(cap=DEFAULT_CAP))
    names = ["pk", "ck", "data"]
    rows = [(r["pk"], r["ck"], r["data"]) for r, _doc in data]
    found = answer.add_page(evaluator, names, rows) if page else \
        [row for r in rows for row in answer.add(evaluator, dict(zip(names, r, strict=True)))]
    steps = [("n",), ("status",), ("customer", "tier"), ("items", 1, "sku")]
    assert len(found) == len(data)
    for (row, doc), got in zip(data, found, strict=True):
        taken = [orders.MISSING if doc is None else orders.take(doc, s) for s in steps]
        want = tuple(None if v is orders.MISSING else v for v in taken)
        assert got[0] == row["ck"]
        assert exactly(list(got[1:])) == exactly(list(want))
    assert any(isinstance(doc.get("n"), int) and doc["n"] >= 10**20 for _r, doc in data if doc)
    assert answer.counts.undecodable == sum(doc is None for _r, doc in data)
