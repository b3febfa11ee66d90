"""The smaller ones of the loads' exactness (docs/load.md), against the real server: pandas.NA inside
a document is a null; a key given twice in a pandas JSON text is refused as JSON Lines refuses it; a
key column of the wrong sort is one reason for the column, not one a row; a timestamp key without a
time zone is taken as UTC and the preview says so. Stored documents are read back with zstandard and
json (the producers' own)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
import zstandard
from shell_runner import ext


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("load_smaller")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def documents(session: Any, table: str) -> dict[Any, Any]:
    return {r[0]: json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(r[1]))
            for r in session.execute(f"SELECT * FROM {table}")}


def test_pandas_na_inside_a_document_is_a_null(session, db) -> None:
    session.execute("CREATE TABLE na (id int PRIMARY KEY, data blob)")
    frame = pd.DataFrame({"id": [1], "data": [{"a": pd.NA, "b": [1, pd.NA], "c": {"d": pd.NaT}}]})
    result = db.write("na", frame, encode={"data": "zstd>json"}, confirm=True)
    assert result.written == 1, result.text
    assert documents(session, "na") == {1: {"a": None, "b": [1, None], "c": {"d": None}}}


def test_a_key_given_twice_in_a_pandas_json_text_is_refused(session, db) -> None:
    session.execute("CREATE TABLE twice (id int PRIMARY KEY, data blob)")
    frame = pd.DataFrame({"id": [1, 2], "data": ['{"a": 1, "a": 2}', '{"a": 1, "b": {"c": 2}}']})
    result = db.write("twice", frame, encode={"data": "zstd>json"}, confirm=True)
    assert (result.written, sum(result.refused.values())) == (1, 1), result.text
    assert '"a" given twice in one object' in result.text, result.text
    assert documents(session, "twice") == {2: {"a": 1, "b": {"c": 2}}}


def test_a_key_column_of_the_wrong_sort_is_one_reason_not_one_a_row(session, db) -> None:
    session.execute("CREATE TABLE sorts (id int PRIMARY KEY, data blob)")
    frame = pd.DataFrame({"id": [i + 0.5 for i in range(20)], "data": [{"i": i} for i in range(20)]})
    result = db.write("sorts", frame, encode={"data": "zstd>json"})
    assert result.refused == {"id: no int (a float, not an integer)": 20}, result.text
    assert "id: 0.5 is no int" in result.text, result.text  # the first rows named, with their values


def test_a_timestamp_key_without_a_zone_is_taken_as_utc_and_said(cassandra, ks, session, tmp_path) -> None:
    session.execute("CREATE TABLE times (ts timestamp PRIMARY KEY, data blob)")
    path = tmp_path / "times.jsonl"
    path.write_text('{"ts": "2024-01-02T03:04:05", "data": {"i": 1}}\n'
                    '{"ts": "2024-01-02T05:04:05+02:00", "data": {"i": 2}}\n')
    statement = f"COPY times (ts, data) FROM '{path}' WITH ENCODE data = 'zstd>json'"
    run = ext(cassandra, tmp_path, "-e", statement, keyspace=ks, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 row: a timestamp key given without a time zone, taken as UTC" in run.stdout, run.stdout
    run = ext(cassandra, tmp_path, "-e", statement + " CONFIRM", keyspace=ks, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    # both are 03:04:05 UTC: the same key, the first written
    assert documents(session, "times") == {datetime.datetime(2024, 1, 2, 3, 4, 5): {"i": 1}}


def test_a_json_number_into_a_text_column_is_refused_not_its_text(cassandra, ks, session, tmp_path) -> None:
    """A JSON Lines number is kept as its text for the keys' reading: a text column still refuses it."""
    session.execute("CREATE TABLE notes (id int PRIMARY KEY, data blob, note text)")
    path = tmp_path / "notes.jsonl"
    path.write_text('{"id": 1, "data": {"i": 1}, "note": 5}\n{"id": 2, "data": {"i": 2}, "note": "5"}\n')
    statement = f"COPY notes (id, data, note) FROM '{path}' WITH ENCODE data = 'zstd>json' CONFIRM"
    run = ext(cassandra, tmp_path, "-e", statement, keyspace=ks, timeout=300)
    assert "note: 5 is not text" in run.stdout, run.stdout + run.stderr
    assert [(r.id, r.note) for r in session.execute("SELECT id, note FROM notes")] == [(2, "5")]
