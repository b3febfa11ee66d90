"""The number rule at every door (docs/queries.md, "Numbers"): a statement's `737.26`, `<= 9.99`,
`IN (3.7, 7.4)`, `= 0.1`, `> 1e300` find the documents that say so, the same rows in the Python API
(written and bound), its Arrow answer, the shell's JSON output, COPY (SELECT ...) TO a file, MCP's
query tool and the polars source, on the real server.

The oracle is computed apart from the code under test, with the standard library alone: each
document's number as `json.loads` reads it; a float compared with `float(literal text)` in
PostgreSQL's float8 order (NaN above every number, equal to NaN), an integer with
`Decimal(literal text)` exactly. For the short decimals a person writes, that is the decimal text
against the decimal text, which the test checks too."""

from __future__ import annotations

import gzip
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import snappy
import zstandard
from shell_runner import ext

#: The numbers the documents hold, as written in them: a person's prices and totals, the edges
#: of the doubles, integers past 64 bits, NaN and the infinities as Python's json writes them.
WRITTEN = ["737.26", "9.99", "9.98", "10.00", "10", "3.7", "7.4", "0.1", "0.10000000000000002",
           "0.30000000000000004", "1e300", "1E301", "NaN", "Infinity", "-Infinity", "12", "737",
           "-0.0", "0", "12345678901234567891", "2.5e-3", "1e400", "-737.26", "99999999999999999.5"]
#: The conditions asked, as a person writes them (op, the literals' texts).
CONDITIONS = [("=", ["737.26"]), ("<=", ["9.99"]), ("IN", ["3.7", "7.4"]), ("=", ["0.1"]),
              (">", ["1e300"]), ("!=", ["3.7"]), ("<", ["0"]), (">=", ["10"]), ("=", ["12"]),
              ("=", ["0.3"]), ("=", ["12345678901234567891"]), ("<", ["-737.26"]),
              ("=", ["99999999999999999.5"]), (">=", ["1e400"])]
CONTAINERS = ("text", "snappy", "zstd", "gzip")


def _encoded(container: str, text: str) -> bytes:
    raw = text.encode()
    if container == "snappy":
        return snappy.compress(raw)
    if container == "zstd":
        return zstandard.ZstdCompressor().compress(raw)
    if container == "gzip":
        return gzip.compress(raw)
    return raw


def _float8_order(a: float, b: float) -> int:
    """PostgreSQL's float8 comparison, written out: NaN above every number, equal to NaN."""
    key_a, key_b = ((1, 0.0) if a != a else (0, a)), ((1, 0.0) if b != b else (0, b))
    return (key_a > key_b) - (key_a < key_b)


def oracle(value: Any, op: str, literals: list[str]) -> bool:
    """Whether a document's number (as json.loads reads it) meets `op literals`, by the standard
    library alone."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    orders = [_float8_order(value, float(lit)) if isinstance(value, float)
              else (Decimal(value) > Decimal(lit)) - (Decimal(value) < Decimal(lit)) for lit in literals]
    if op == "IN":
        return 0 in orders
    return {"=": orders[0] == 0, "!=": orders[0] != 0, "<": orders[0] < 0, "<=": orders[0] <= 0,
            ">": orders[0] > 0, ">=": orders[0] >= 0}[op]


def condition_text(op: str, literals: list[str]) -> str:
    return f"IN ({', '.join(literals)})" if op == "IN" else f"{op} {literals[0]}"


def select(table: str, op: str, literals: list[str]) -> str:
    return f"SELECT ck FROM {table} WHERE data.total {condition_text(op, literals)} ALLOW FILTERING"


@pytest.fixture(scope="module")
def numbers_table(cassandra) -> tuple[str, dict[int, Any]]:
    """(ks.t, each row's ck -> the number its document holds, as json.loads reads it): every number
    of WRITTEN in every container, under `total`, and `price` holding the floats alone."""
    ks = cassandra.create_keyspace("numbers")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
    held: dict[int, Any] = {}
    ck = 0
    for container in CONTAINERS:
        for text in WRITTEN:
            as_float = text if any(c in text.lower() for c in ".ena") else text + ".0"  # price: floats
            document = f'{{"id": {ck}, "total": {text}, "price": {as_float}}}'
            held[ck] = json.loads(document)["total"]
            session.execute(insert, (ck % 3, ck, _encoded(container, document)))
            ck += 1
    session.shutdown()
    return f"{ks}.t", held


def expected_cks(held: dict[int, Any], op: str, literals: list[str]) -> set[int]:
    return {ck for ck, value in held.items() if oracle(value, op, literals)}


def test_the_oracle_is_the_written_decimal_for_the_numbers_a_person_writes() -> None:
    """For short decimals, the double rule is the decimal text against the decimal text: what a
    person reading the document and the statement expects."""
    short = ["737.26", "9.99", "9.98", "10.00", "3.7", "7.4", "0.1", "2.5e-3", "-737.26"]
    for text in short:
        for op, literals in CONDITIONS:
            if not all(len(lit) <= 8 and "e" not in lit for lit in literals):
                continue
            by_text = Decimal(text)
            as_written = {"=": any(by_text == Decimal(lit) for lit in literals),
                          "!=": by_text != Decimal(literals[0]), "<": by_text < Decimal(literals[0]),
                          "<=": by_text <= Decimal(literals[0]), ">": by_text > Decimal(literals[0]),
                          ">=": by_text >= Decimal(literals[0])}["=" if op == "IN" else op]
            assert oracle(json.loads(text), op, literals) == as_written, (text, op, literals)


def test_the_python_api_written_bound_and_arrow(cassandra, numbers_table, tmp_path) -> None:
    import cqlsh_ext

    table, held = numbers_table
    rc = tmp_path / "cqlshrc"
    rc.write_text("")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, cqlshrc=str(rc)) as db:
        for op, literals in CONDITIONS:
            want = expected_cks(held, op, literals)
            statement = select(table, op, literals)
            assert {row["ck"] for row in db.query(statement)} == want, statement
            assert set(db.query(statement).to_arrow().column("ck").to_pylist()) == want, statement
            markers = f"IN ({', '.join('?' for _ in literals)})" if op == "IN" else f"{op} ?"
            bound = [float(lit) if "." in lit or "e" in lit else int(lit) for lit in literals]
            if any(isinstance(b, float) and b in (float("inf"), float("-inf")) for b in bound):
                continue  # a bound parameter is a finite number (docs/api.md)
            got = {row["ck"] for row in db.query(
                f"SELECT ck FROM {table} WHERE data.total {markers} ALLOW FILTERING", bound)}
            assert got == want, (statement, bound)


def test_the_shell_and_its_export(cassandra, numbers_table, tmp_path) -> None:
    table, held = numbers_table
    for op, literals in CONDITIONS[:6]:
        want = expected_cks(held, op, literals)
        where = f"data.total {condition_text(op, literals)}"
        run = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                  f"SELECT ck FROM {table} WHERE {where} ALLOW FILTERING;")
        assert run.returncode == 0, run.stderr
        assert {json.loads(line)["ck"] for line in run.stdout.splitlines() if line.strip()} == want, where
        target = tmp_path / f"export-{len(os.listdir(tmp_path))}.jsonl"
        run = ext(cassandra, tmp_path, "-e",
                  f"COPY (SELECT ck FROM {table} WHERE {where} ALLOW FILTERING) TO '{target}';")
        assert run.returncode == 0, run.stderr
        assert {json.loads(line)["ck"] for line in target.read_text().splitlines()} == want, where


def test_mcp_s_query_tool(cassandra, numbers_table, tmp_path) -> None:
    from tests.mcp_server.harness import McpServer, write_credentials

    table, held = numbers_table
    home = tmp_path / "home"
    write_credentials(home, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port)], home) as server:
        for op, literals in CONDITIONS:
            want = expected_cks(held, op, literals)
            statement = select(table, op, literals)
            answer = server.call("query", statement=statement, limit=1000).data
            assert {row["ck"] for row in answer["rows"]} == want, statement


def test_the_polars_source_against_polars_over_the_full_read(cassandra, numbers_table,
                                                           tmp_path: Path) -> None:
    import polars as pl

    import cqlsh_ext

    table, _held = numbers_table
    rc = tmp_path / "cqlshrc"
    rc.write_text("")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, cqlshrc=str(rc)) as db:
        full = db.query(f"SELECT ck, data.price FROM {table}").to_polars()
        source = cqlsh_ext.scan(db, f"SELECT ck, data.price FROM {table}")
        price = pl.col("data.price")
        for predicate in (price == 737.26, price <= 9.99, price.is_in([3.7, 7.4]), price == 0.1,
                          price > 1e300, price != 3.7, price < 0.0, price >= 10.0):
            want = sorted(full.filter(predicate)["ck"].to_list())
            assert sorted(source.filter(predicate).collect()["ck"].to_list()) == want, str(predicate)
