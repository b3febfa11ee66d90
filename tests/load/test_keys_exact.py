"""A load's keys are read as their text spells them (docs/load.md, "The statement": a key column),
against CQL's own parsing: each edge of each number type is INSERTed as a CQL literal into one table
and loaded from JSON Lines (a bare JSON number), CSV and a pandas frame into another, and the stored
keys' bytes (`<type>asblob(k)`, the server's own serialization) compared. A JSON Lines number was read
through a binary float before: `1.00000000000000000001` into a decimal key was written as 1.0,
overwriting the row there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from shell_runner import ext

#: Each number type's edges, as a CQL literal spells them (and a JSON number, and a CSV field).
EDGES: dict[str, list[str]] = {
    "int": ["-2147483648", "2147483647", "0", "-7"],
    "bigint": ["-9223372036854775808", "9223372036854775807", "9007199254740993"],
    "smallint": ["-32768", "32767"],
    "tinyint": ["-128", "127"],
    "varint": ["123456789012345678901234567890123456789", "-98765432109876543210987654321",
               "9007199254740993"],
    "decimal": ["1.00000000000000000001", "123456789012345678901234567890.5", "1e-400", "1E+5", "0.10",
                "-7.0700000000000000001", "3", "1.0"],
    # 9007199254740993: 2**53 + 1, no double holds it; 2.4703282292062328e-324: past half the
    # least double, rounded up to it
    "double": ["0.1", "1.7976931348623157e308", "2.4703282292062328e-324", "9007199254740993",
               "-1.25e-300", "1e-400"],
    # 1.00000017881393432617187499: just under the midpoint of two floats, which a double rounds to
    # (then to the even float: one place off); 3.4028235e38: the largest float
    "float": ["1.00000017881393432617187499", "3.4028235e38", "1.4e-45", "0.1", "16777217", "-2.5e-40"],
}
#: Names CQL reads for a float or a double (a CSV field's; JSON has no such number).
NAMES = ["NaN", "Infinity", "-Infinity"]


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_keys")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def shell(cassandra: Any, home: Path, ks: str, statement: str) -> str:
    run = ext(cassandra, home, "-e", statement, keyspace=ks, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def stored_keys(session: Any, table: str, cql_type: str) -> list[str]:
    """The table's keys as the server serializes them (hex), sorted."""
    return sorted(bytes(r[0]).hex() for r in session.execute(f"SELECT {cql_type}asblob(k) FROM {table}"))


def by_cql(session: Any, table: str, cql_type: str, literals: list[str]) -> list[str]:
    session.execute(f"CREATE TABLE {table} (k {cql_type} PRIMARY KEY, data blob)")
    for literal in literals:
        session.execute(f"INSERT INTO {table} (k, data) VALUES ({literal}, 0x00)")
    return stored_keys(session, table, cql_type)


@pytest.mark.parametrize("cql_type", list(EDGES))
def test_every_number_keys_edges_load_as_cql_reads_their_literals(cassandra, ks, session, db, tmp_path,
                                                                  cql_type) -> None:
    edges = EDGES[cql_type]
    names = NAMES if cql_type in ("float", "double") else []
    expected = by_cql(session, f"cql_{cql_type}", cql_type, edges)
    assert len(expected) == len(set(expected))
    # JSON Lines: the key a bare JSON number, as the literal spells it
    session.execute(f"CREATE TABLE jsonl_{cql_type} (k {cql_type} PRIMARY KEY, data blob)")
    path = tmp_path / "keys.jsonl"
    path.write_text("".join(f'{{"k": {edge}, "data": {{"i": {i}}}}}\n' for i, edge in enumerate(edges)))
    out = shell(cassandra, tmp_path, ks, f"COPY jsonl_{cql_type} (k, data) FROM '{path}' "
                "WITH ENCODE data = 'zstd>json' CONFIRM")
    assert f"{len(edges)} rows written ({len(edges)} new, 0 overwritten)" in out, out
    assert stored_keys(session, f"jsonl_{cql_type}", cql_type) == expected
    # CSV: the same texts, and CQL's names of NaN and the infinities
    expected_csv = by_cql(session, f"cqlcsv_{cql_type}", cql_type, edges + names)
    session.execute(f"CREATE TABLE csv_{cql_type} (k {cql_type} PRIMARY KEY, data blob)")
    path = tmp_path / "keys.csv"
    path.write_text("k,data\n" + "".join(f'{edge},"{{""i"": {i}}}"\n'
                                        for i, edge in enumerate(edges + names)))
    shell(cassandra, tmp_path, ks, f"COPY csv_{cql_type} (k, data) FROM '{path}' "
          "WITH ENCODE data = 'zstd>json' CONFIRM")
    assert stored_keys(session, f"csv_{cql_type}", cql_type) == expected_csv
    if cql_type in ("decimal", "varint"):  # a frame's exact numbers: Python's Decimal, int
        session.execute(f"CREATE TABLE frame_{cql_type} (k {cql_type} PRIMARY KEY, data blob)")
        keys = [Decimal(e) if cql_type == "decimal" else int(e) for e in edges]
        frame = pd.DataFrame({"k": pd.Series(keys, dtype=object),
                              "data": [{"i": i} for i in range(len(edges))]})
        result = db.write(f"frame_{cql_type}", frame, encode={"data": "zstd>json"}, confirm=True)
        assert result.written == len(edges), result.text
        assert stored_keys(session, f"frame_{cql_type}", cql_type) == expected


def test_a_decimal_key_past_a_doubles_digits_is_a_new_row_not_the_one_at_its_rounding(cassandra, ks, session,
                                                                                       tmp_path) -> None:
    session.execute("CREATE TABLE near (k decimal PRIMARY KEY, data blob)")
    session.execute("INSERT INTO near (k, data) VALUES (1.0, textasblob('{\"at\": \"1.0\"}'))")
    path = tmp_path / "near.jsonl"
    path.write_text('{"k": 1.00000000000000000001, "data": {"at": "1.00000000000000000001"}}\n')
    statement = f"COPY near (k, data) FROM '{path}' WITH ENCODE data = 'json'"
    preview = shell(cassandra, tmp_path, ks, statement)
    assert "read 1 row: 1 new, 0 overwritten" in preview, preview
    shell(cassandra, tmp_path, ks, statement + " CONFIRM")
    stored = {str(r.k): json.loads(r.data) for r in session.execute("SELECT k, data FROM near")}
    assert stored == {"1.0": {"at": "1.0"}, "1.00000000000000000001": {"at": "1.00000000000000000001"}}
