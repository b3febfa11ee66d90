"""A value cut at the output cap is said in every output format (docs/agents.md: never a shortened
answer without saying so): the table in its cell, JSON Lines in the value's object (`cut`), CSV,
whose field holds only the value, in one line on standard error once the result ends."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from shell_runner import ext, said_lines

#: The document's size, and the cap it is printed under: a quarter of it is kept.
DOCUMENT = 64 << 10


@pytest.fixture(scope="module")
def large(cassandra) -> str:  # type: ignore[no-untyped-def]
    ks = cassandra.create_keyspace("cut_values")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (p int PRIMARY KEY, data blob)")
    text = json.dumps({"items": ["y" * 50] * (DOCUMENT // 54)})
    session.execute("INSERT INTO docs (p, data) VALUES (1, %s)", (gzip.compress(text.encode()),))
    session.shutdown()
    return f"{ks}.docs"


def test_a_value_cut_at_the_cap_is_said_in_csv_as_in_json(cassandra, tmp_path: Path, large: str) -> None:
    cap = ["--max-output-size", "16KiB", "-e", f"SELECT data FROM {large}"]
    as_json = ext(cassandra, tmp_path, "--output-format", "json", *cap)
    (row,) = [json.loads(line) for line in as_json.checked_stdout().splitlines()]
    assert row["data"]["cut"].startswith("first 16.0 KiB of "), row["data"]["cut"]
    as_csv = ext(cassandra, tmp_path, "--output-format", "csv", *cap)
    kept = as_csv.checked_stdout().splitlines()[1]
    assert 0 < len(kept) < DOCUMENT  # the field holds what was kept, nothing else
    assert said_lines(as_csv.stderr) == [
        f"csv: 1 value cut at the output cap, its field holding what was kept (the first: "
        f"{row['data']['cut']}): --max-output-size SIZE keeps more"], as_csv.stderr
