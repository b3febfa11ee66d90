"""to_pandas() on both pandas majors: bin/test runs this module on locks/main.txt (pandas 2.2, the newest
pyarrow) and again in its other-end pass (locks/other-end.txt: pandas 3, the oldest pyarrow supported).
Each column against the driver's reading of the same rows and the producers' own decoding of the
payload: text (a pyarrow-backed string on both majors, a null pd.NA, never pandas 3's NaN), timestamps
(milliseconds kept, past pandas' nanosecond range too), decimals, UUIDs (uuid.UUID objects on every
pyarrow), nested values, a row of nulls; and pandas 3's DataFrame.from_arrow reading the answer's
Arrow stream."""

from __future__ import annotations

import datetime
import gzip
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest

pytestmark = pytest.mark.server

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

UTC = datetime.timezone.utc
#: The payload, as its producer (gzip of json) wrote it.
DOCUMENT = {"name": "pump-7", "n": 7, "tags": ["hot", "wet"]}


@pytest.fixture(scope="module")
def table(cassandra, db) -> str:
    """Row 1: a value of each kind; row 2: nothing but its key (every other column null); row 3: an
    empty text, a timestamp in the year 3000 (past pandas' nanosecond range) and a decimal of scale 9."""
    ks = cassandra.create_keyspace("pdmajors")
    session = cassandra.session()
    try:
        session.execute(f"CREATE TYPE {ks}.point (x int, label text)")
        session.execute(f"CREATE TABLE {ks}.t (k int PRIMARY KEY, tx text, ts timestamp, de decimal, "
                        "id uuid, li list<text>, mp map<text, int>, pt frozen<point>, data blob)")
        session.execute(f"INSERT INTO {ks}.t (k, tx, ts, de, id, li, mp, pt, data) VALUES (1, 'naïve ✓', "
                        "'2024-02-23 02:16:41.123+0000', 12.345, 12345678-1234-5678-1234-567812345678, "
                        "['a', 'b'], {'x': 2, 'y': -1}, {x: 3, label: 'p'}, %s)",
                        (gzip.compress(json.dumps(DOCUMENT).encode()),))
        session.execute(f"INSERT INTO {ks}.t (k) VALUES (2)")
        session.execute(f"INSERT INTO {ks}.t (k, tx, ts, de) VALUES (3, '', '3000-01-01 00:00:00.001+0000', "
                        "0.000000001)")
    finally:
        session.shutdown()
    return f"{ks}.t"


def _driver_rows(cassandra, table: str) -> dict[int, Any]:
    session = cassandra.session()
    try:
        return {row.k: row for row in session.execute(f"SELECT * FROM {table}")}
    finally:
        session.shutdown()


def _by_key(frame: Any) -> dict[int, int]:
    return {int(k): i for i, k in enumerate(frame["k"].tolist())}


def test_to_pandas_keeps_every_value_on_this_pandas(cassandra, db, table: str) -> None:
    frame = db.query(f"SELECT k, tx, ts, de, id, li, mp, pt, data FROM {table}").to_pandas()
    truth = _driver_rows(cassandra, table)
    at = _by_key(frame)
    assert sorted(at) == [1, 2, 3]

    # text: pyarrow-backed on both majors (pandas 3's own `str` would make a null NaN)
    assert frame["tx"].dtype == pd.ArrowDtype(pa.string())
    assert frame["tx"].iloc[at[1]] == truth[1].tx == "naïve ✓"
    assert frame["tx"].iloc[at[3]] == "" and truth[3].tx == ""  # empty, not missing
    assert frame["tx"].iloc[at[2]] is pd.NA and truth[2].tx is None

    # timestamps: milliseconds, UTC, whatever unit pandas infers for datetimes of its own
    assert frame["ts"].dtype == pd.ArrowDtype(pa.timestamp("ms", tz="UTC"))
    for k in (1, 3):
        got = frame["ts"].iloc[at[k]]
        assert isinstance(got, pd.Timestamp) and got.to_pydatetime() == truth[k].ts.replace(tzinfo=UTC), k
    assert frame["ts"].iloc[at[3]].year == 3000 and frame["ts"].iloc[at[3]].microsecond == 1000
    assert frame["ts"].iloc[at[2]] is pd.NA

    # decimals: exact, at the sample's largest scale (9)
    assert frame["de"].dtype == pd.ArrowDtype(pa.decimal128(38, 9))
    assert frame["de"].iloc[at[1]] == truth[1].de == Decimal("12.345")
    assert frame["de"].iloc[at[3]] == truth[3].de == Decimal("1E-9")

    # UUIDs: uuid.UUID objects (pyarrow before 26 gives their 16 bytes: to_pandas makes them UUIDs)
    assert frame["id"].dtype == object
    assert frame["id"].iloc[at[1]] == truth[1].id and isinstance(frame["id"].iloc[at[1]], uuid.UUID)
    assert frame["id"].iloc[at[2]] is None

    # nested: a list, a map, a UDT, the payload's record
    assert list(frame["li"].iloc[at[1]]) == list(truth[1].li) == ["a", "b"]
    assert dict(frame["mp"].iloc[at[1]]) == dict(truth[1].mp) == {"x": 2, "y": -1}
    assert frame["pt"].iloc[at[1]] == {"x": truth[1].pt.x, "label": truth[1].pt.label}
    record = frame["data"].iloc[at[1]]
    produced = json.loads(gzip.decompress(truth[1].data))
    assert {"name": record["name"], "n": record["n"], "tags": list(record["tags"])} == produced
    assert frame["data:label"].iloc[at[1]] == "gzip>json"

    # a row of nulls: every column but the key missing, the key still an int64 (no float widening)
    assert frame["k"].dtype == pd.ArrowDtype(pa.int32())
    nulls = frame.iloc[at[2]]
    assert [name for name in frame.columns if name != "k" and not pd.isna(nulls[name])] == []


def test_pandas_3_reads_the_answers_arrow_stream_with_from_arrow(cassandra, db, table: str) -> None:
    # pandas 3's DataFrame.from_arrow takes any object with __arrow_c_stream__: the answer itself,
    # read batch by batch, in pandas' default dtypes (docs/api.md: to_pandas() loses no value).
    if not hasattr(pd.DataFrame, "from_arrow"):
        assert int(pd.__version__.split(".")[0]) < 3
        pytest.skip(f"pandas {pd.__version__} has no DataFrame.from_arrow (bin/test's other-end pass: "
                    "pandas 3)")
    answer = db.query(f"SELECT k, tx, ts, de FROM {table}")
    frame = pd.DataFrame.from_arrow(answer)
    truth = _driver_rows(cassandra, table)
    at = _by_key(frame)
    assert list(frame.columns) == ["k", "tx", "ts", "de", "de:note", "de:exact"] and sorted(at) == [1, 2, 3]
    assert frame["tx"].iloc[at[1]] == truth[1].tx and pd.isna(frame["tx"].iloc[at[2]])
    assert frame["ts"].iloc[at[3]].to_pydatetime() == truth[3].ts.replace(tzinfo=UTC)
    assert frame["de"].iloc[at[1]] == truth[1].de
    assert answer.notes["rows_read"] == 3  # read through the stream, once
