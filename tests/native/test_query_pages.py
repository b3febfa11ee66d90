"""Payload queries' page answers on the native core against the Python evaluator: the same
statements over the same pages, one Answer per road fed page by page (Answer.add_page: the core
evaluates the conditions and sums the groups of a page in one call, the Python evaluator row by
row), compared after every page: the rows given (values with exact types, the blobs' views),
the counts (read, matched, undecodable by kind, cut), the paths no value had, the groups' results
and the rows held for DISTINCT and ORDER BY. The counts go to the run's summary."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest

from cqlsh_ext.codecs.base import Container
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Schema, parse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts, same  # noqa: E402
from fuzzing.page_diff import answer_shown  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")

SCHEMA = Schema({"pk": "text", "ck": "int", "data": "blob", "m": "map<text,blob>"}, ["pk"])

#: Statements over the order table's documents (tools/orders.py: order-id, n as an int, a big int
#: or a float, status a string or a number, customer, items, tags), and its random values.
STATEMENTS = [
    "SELECT ck FROM t WHERE data.status = 'FAILED' ALLOW FILTERING",
    "SELECT ck, data.n FROM t WHERE data.status = 'FAILED' AND data.n > 900 ALLOW FILTERING",
    "SELECT ck, data.status FROM t WHERE data.n >= 12.5 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.n < 100.25 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.n <= 0.1 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.n != 7 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.n = 41.5 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.n > 100000000000000000000 ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.status IN ('NEW', 'PAID', 7) ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.status LIKE 'F%' ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.\"order-id\" LIKE '%0_5' ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.tags CONTAINS 'b' ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.customer.tier IS NULL ALLOW FILTERING",
    "SELECT ck FROM t WHERE data.customer IS NOT NULL AND data.customer.tier = 'gold' ALLOW FILTERING",
    "SELECT ck FROM t WHERE data IS UNDECODABLE ALLOW FILTERING",
    "SELECT ck, data.items FROM t WHERE data IS NOT UNDECODABLE ALLOW FILTERING",
    "SELECT ck, data.customer, data.items[0].sku, data.stauts FROM t WHERE data.\"order-id\" IS NOT NULL "
    "ALLOW FILTERING",
    "SELECT ck, data, data.status FROM t WHERE data.status = 'PAID' ALLOW FILTERING",
    "SELECT * FROM t WHERE data.n > 500 ALLOW FILTERING",
    "SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING",
    "SELECT data.status, count(*), count(data.n), min(data.n), max(data.n), sum(data.n), avg(data.n) "
    "FROM t GROUP BY data.status ALLOW FILTERING",
    "SELECT data.customer.name, min(data.status), max(data.\"order-id\"), sum(data.status) FROM t "
    "GROUP BY data.customer.name ALLOW FILTERING",
    "SELECT count(*), sum(data.n), avg(data.n) FROM t WHERE data.status = 'NEW' ALLOW FILTERING",
    "SELECT data.customer.tier, data.status, count(*) FROM t GROUP BY data.customer.tier, data.status "
    "ALLOW FILTERING",
    "SELECT DISTINCT data.status FROM t ALLOW FILTERING",
    "SELECT ck, data.n FROM t WHERE data.n > 10 ORDER BY data.n DESC ALLOW FILTERING",
    "SELECT ck, m['a'].status FROM t WHERE m['a'].status = 'PAID' ALLOW FILTERING",
    "SELECT m['a'].status, count(*) FROM t GROUP BY m['a'].status ALLOW FILTERING",
]


def answers(statement: str, pages: list[list[tuple[Any, ...]]], counts: Counts) -> None:
    """One Answer per road, fed the same pages, compared after each."""
    plan = parse(statement, SCHEMA)
    assert plan is not None, statement
    core, python = Evaluator(plan, Decoding()), Evaluator(plan, Decoding())
    python._core = False
    for read in python.places.values():
        read.engine.native = False
    got, want = Answer(plan), Answer(plan)
    names = ["pk", "ck", "data", "m"]
    for n, page in enumerate(pages):
        rows_got = got.add_page(core, names, page)
        rows_want = want.add_page(python, names, page)
        counts.compared += len(page)
        where = f"{statement[:70]}, page {n}"
        counts.differences += [f"{where}: {d}" for d in differences(got, want, rows_got, rows_want)]
    if core._core is False:
        counts.differences.append(f"{statement[:70]}: the core did not run the plan")
    final = differences(got, want, got.final(), want.final())
    counts.differences += [f"{statement[:70]}: final: {d}" for d in final]


def _row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # (a view the core's reading made carries what a reader reads of one: fuzzing.page_diff.answer_shown)
    return tuple(answer_shown(v) if hasattr(v, "kind") and hasattr(v, "layers") else v for v in row)


def differences(got: Answer, want: Answer, rows_got: list[Any], rows_want: list[Any]) -> list[str]:
    out = []
    a, b = got.counts, want.counts
    for name in ("read", "matched", "undecodable", "cut", "kinds"):
        if getattr(a, name) != getattr(b, name):
            out.append(f"{name}: {getattr(a, name)} != {getattr(b, name)}")
    if a.paths.found != b.paths.found or a.paths.never_found() != b.paths.never_found():
        out.append(f"paths: {a.paths.found} {a.paths.never_found()} != "
                   f"{b.paths.found} {b.paths.never_found()}")
    if not same([_row(r) for r in rows_got], [_row(r) for r in rows_want]):
        out.append(f"rows: {rows_got!r:.300} != {rows_want!r:.300}")
    if got.groups is not None and want.groups is not None:
        if not same(got.groups.results(), want.groups.results()):
            out.append(f"groups: {got.groups.results()!r:.300} != {want.groups.results()!r:.300}")
        if got.skipped() != want.skipped():
            out.append(f"skipped: {got.skipped()} != {want.skipped()}")
    if got.buffer is not None and want.buffer is not None and not same(got.buffer.rows, want.buffer.rows):
        out.append("buffered rows differ")
    return out


def pages_of(values: list[bytes | None], size: int = 50, seed: int = 3) -> list[list[tuple[Any, ...]]]:
    rng = random.Random(seed)
    rows = [(f"p{i % 7}", i, value, {"a": rng.choice(values), "b": value} if i % 3 else None)
            for i, value in enumerate(values)]
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def differential(values: list[bytes | None], size: int = 50) -> Counts:
    counts = Counts()
    pages = pages_of(values, size)
    for statement in STATEMENTS:
        answers(statement, pages, counts)
    return counts


def assert_same(name: str, counts: Counts) -> None:
    record(f"queries: {name}", counts)
    assert not counts.differences, (f"{len(counts.differences)} differences:\n"
                                    + "\n".join(counts.differences[:30]))


def test_queries_over_the_order_table() -> None:
    values: list[bytes | None] = list(corpora.orders(900))
    values[5:8] = [None, None, b"\x00\x01"]
    assert_same("order table", differential(values))


def test_queries_over_producers_edges_and_mutated_values() -> None:
    rng = random.Random(29)
    docs = [json.dumps({"status": s, "n": n, "customer": {"name": c, "tier": t}, "tags": ["a", "b"][:k],
                        "items": [{"sku": "S1"}] * k, "order-id": f"ORD-{i:05d}"}).encode()
            for i, (s, n, c, t, k) in enumerate(
                [("PAID", 1, "Ada", None, 1), ("FAILED", 2.5, "Bob", "gold", 2),
                 ("NEW", -7, "Ada", "gold", 0), ("PAID", 10**30, "Cy", "silver", 1),
                 ("PAID", True, "Ada", None, 2), ("NEW", "12", "Ab", 3, 1),
                 ("FAILED", 1e300, "Ada", None, 0), ("NEW", 0.1, "Bob", None, 2), (7, 41.5, None, None, 1)])]
    values: list[bytes | None] = []
    for doc in docs:
        values += [bytes(make(doc)) for _name, make, label, _c, _a in corpora.PRODUCERS
                   if label in corpora.NATIVE_LABELS]
        values.append(msgpack.packb(json.loads(doc), use_bin_type=True) if b"10000000000" not in doc else doc)
    values += corpora.edges(values[:40], rng, per_value=3) + corpora.hostile()
    values += [corpora.mutate(v, rng) for v in corpora.orders(150, seed=4)]
    rng.shuffle(values)
    assert_same("producers, edges, mutated", differential(values, size=37))


def test_the_comparison_sees_a_difference() -> None:
    """differences() is no check that cannot fail: a changed group or row is seen."""
    plan = parse("SELECT data.status, count(*) FROM t GROUP BY data.status ALLOW FILTERING", SCHEMA)
    assert plan is not None
    pages = pages_of(list(corpora.orders(60)))
    a, b = Answer(plan), Answer(plan)
    for page in pages:
        a.add_page(Evaluator(plan, Decoding()), ["pk", "ck", "data", "m"], page)
        b.add_page(Evaluator(plan, Decoding()), ["pk", "ck", "data", "m"], page)
    assert differences(a, b, [], []) == []
    b.counts.matched += 1
    assert b.groups is not None
    next(iter(b.groups.groups.values()))[0].count += 1
    assert len(differences(a, b, [], [(1,)])) == 3


def test_needles_never_reject_a_value_that_holds_the_string_escaped() -> None:
    """The core skips parsing a JSON text that cannot hold a condition's string verbatim; a string
    spelt with escapes (\\u0046AILED, a quote or slash in the needle, escapes elsewhere in the
    text) is still found: the same rows as the Python evaluator, over enough pages for the paths
    to be known (a needle applies from the page after its path was first seen)."""
    texts = [
        '{"status": "FAILED", "n": 1}',
        '{"status": "\\u0046AILED", "n": 2}',
        '{"status": "PAID", "note": "say \\"FAILED\\" later", "n": 3}',
        '{"status": "FAIL\\u0045D", "n": 4}',
        '{"status": "NEW", "note": "back\\\\slash", "n": 5}',
        '{"status": "a/b", "n": 6}',
        '{"status": "a\\/b", "n": 7}',
        '{"status": "say \\"hi\\"", "n": 8}',
        '{"status": "PAID", "n": 9}',
    ]
    values: list[bytes | None] = [t.encode() for t in texts] * 12
    statements = [
        "SELECT ck, data.n FROM t WHERE data.status = 'FAILED' ALLOW FILTERING",
        "SELECT ck FROM t WHERE data.status IN ('FAILED', 'a/b') ALLOW FILTERING",
        "SELECT ck FROM t WHERE data.status = 'say \"hi\"' ALLOW FILTERING",
        "SELECT ck FROM t WHERE data.status LIKE 'FAI%ED' ALLOW FILTERING",
        "SELECT data.status, count(*) FROM t WHERE data.status = 'FAILED' GROUP BY data.status "
        "ALLOW FILTERING",
    ]
    counts = Counts()
    pages = pages_of(values, size=9)
    for statement in statements:
        answers(statement, pages, counts)
    assert_same("needles and escapes", counts)


def test_a_query_page_with_one_lacked_value(lacked_container: Container) -> None:
    # The same through a payload query: the row holding the lacked value is evaluated in Python
    # (its document matches), the others on the core, and the answers are the Python evaluator's.
    doc = json.dumps({"status": "FAILED", "n": 950, "customer": {"name": "Ada"}}).encode()
    values = corpora.orders(60)
    values.insert(23, b"XOR1" + bytes(b ^ 0x5A for b in doc))
    rows = [("p0", i, value, None) for i, value in enumerate(values)]
    counts = Counts()
    for statement in ("SELECT ck, data.n FROM t WHERE data.status = 'FAILED' AND data.n > 900 "
                      "ALLOW FILTERING",
                      "SELECT data.status, count(*), max(data.n) FROM t GROUP BY data.status "
                      "ALLOW FILTERING"):
        answers(statement, [rows[:30], rows[30:]], counts)
    assert not counts.differences, "\n".join(counts.differences[:20])
