"""Every value the server can hold, through every door, on the real server: timestamps at int64's
ends, in year 0 and year 10000, at the last millisecond of year 9999 (which the driver read a
millisecond off), dates at CQL's ends (0 and 2**32 - 1 days), times of a day or more (the server
keeps any int64 of nanoseconds; the driver's Time raised) and durations at their ends; read by the
API's rows and Arrow tables, a payload query and a scan, MCP's query, the shell's table, its JSON
output and its Parquet export. The oracle comes apart from the code under test: the
server's own integers (`blobAsBigint(timestampAsBlob(ts))`, read by the driver as bigint) and
pyarrow's conversion of them. After each such reading the next one on the same connection
succeeds at once (the driver's reading used to raise in the connection's thread, leaving it
defunct for a while)."""

from __future__ import annotations

import datetime
import gzip
import json
from pathlib import Path

import pytest
from mcp_server.harness import McpServer, write_credentials
from shell_runner import CQLSH_EXT, STOCK_CQLSH, ext, run, table_rows

pytestmark = pytest.mark.server

pa = pytest.importorskip("pyarrow")

#: k -> the timestamp's milliseconds: int64's ends, year 0, 10000-01-01 (the first past 9999), a
#: day in year 10000, the last and the first datetime, a microsecond count written as milliseconds,
#: the millisecond before the epoch, an ordinary one.
TIMESTAMPS = {1: -2**63, 2: 2**63 - 1, 3: -62167219200000, 4: 253402300800000,
              5: 253402300800000 + 15_768_000_123, 6: 253402300799999, 7: -62135596800000,
              8: 1_700_000_000_123_000, 9: -1, 10: 1_700_000_000_123}
#: k -> the date as CQL stores it (days, 2**31 the epoch): CQL's ends, the first and last date
#: Python has, the day after.
DATES = {1: 0, 2: 2**32 - 1, 3: 2**31 - 719162, 4: 2**31 + 2932896, 5: 2**31 + 2932897, 6: 2**31}
#: Times (nanoseconds since midnight: the server keeps any int64, blobAsTime writes them) and
#: durations (months, days, nanoseconds) at their ends.
TIMES = {1: 0, 2: 86_399_999_999_999, 3: 86_400_000_000_000, 4: 2**63 - 1, 5: -1}
DAY_NANOS = 86_400_000_000_000
DURATIONS = {1: "2147483647mo2147483647d9223372036854775807ns",
             2: "-2147483647mo2147483647d9223372036854775807ns"}
DURATION_PARTS = {1: (2**31 - 1, 2**31 - 1, 2**63 - 1), 2: (-(2**31 - 1), -(2**31 - 1), -(2**63 - 1))}
KEYS = sorted(TIMESTAMPS)


@pytest.fixture(scope="module")
def table(cassandra) -> str:
    """ks.t of TIMESTAMPS (and the other columns' ends on the first rows): a timestamp column, in a
    list and in a UDT too; `data` each row's {"n": k} in gzip."""
    ks = cassandra.create_keyspace("extremes")
    session = cassandra.session(ks)
    session.execute("CREATE TYPE stamp (at timestamp, day date)")
    session.execute("CREATE TABLE t (k int PRIMARY KEY, ts timestamp, d date, tm time, du duration, "
                    "lt list<timestamp>, st frozen<stamp>, data blob)")
    for k, millis in TIMESTAMPS.items():
        day = DATES.get(k, 2**31)
        data = gzip.compress(json.dumps({"n": k}).encode()).hex()
        extra = f", blobAsTime(bigintAsBlob({TIMES[k]}))" if k in TIMES else ", null"
        extra += f", {DURATIONS[k]}" if k in DURATIONS else ", null"
        session.execute(f"INSERT INTO t (k, ts, d, tm, du, lt, st, data) VALUES ({k}, {millis}, {day}"
                        f"{extra}, [{millis}, 0], {{at: {millis}, day: {day}}}, 0x{data})")
    session.shutdown()
    return f"{ks}.t"


@pytest.fixture(scope="module")
def oracle(cassandra, table: str) -> dict[int, dict[str, int]]:
    """The server's own integers of each row: the timestamp's milliseconds, the date's days since
    the epoch, the time's nanoseconds (blob casts, read by the driver as bigint and int)."""
    session = cassandra.session()
    try:
        rows = session.execute(f"SELECT k, blobAsBigint(timestampAsBlob(ts)) AS ms, "
                               f"blobAsInt(dateAsBlob(d)) AS days, blobAsBigint(timeAsBlob(tm)) AS ns "
                               f"FROM {table}")
        found = {row.k: {"ms": row.ms, "days": (row.days & 0xFFFFFFFF) - 2**31, "ns": row.ns} for row in rows}
    finally:
        session.shutdown()
    assert {k: v["ms"] for k, v in found.items()} == TIMESTAMPS  # the table holds what was written
    return found


def as_datetime(millis: int) -> datetime.datetime | None:
    """pyarrow's datetime of `millis` (UTC), None where it has none."""
    try:
        value: datetime.datetime = pa.scalar(millis, pa.timestamp("ms", tz="UTC")).as_py()
    except (OverflowError, ValueError):
        return None
    return value


def row_value(millis: int) -> datetime.datetime | int:
    """The API's row value: the naive UTC datetime where there is one, else the milliseconds."""
    value = as_datetime(millis)
    return millis if value is None else value.replace(tzinfo=None)


def json_value(millis: int) -> str | int:
    """The JSON spelling (the shell's JSON, MCP): ISO-8601 in UTC to the millisecond, else the integer."""
    value = as_datetime(millis)
    return millis if value is None else value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def date_text(days: int) -> str:
    """A date as cqlsh prints it (the driver's Date): ISO where Python has the date, else its days."""
    try:
        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=days)).isoformat()
    except OverflowError:
        return str(days)


def test_rows_hold_every_value_exactly_and_the_next_query_succeeds_at_once(db, table: str, oracle) -> None:
    rows = {row["k"]: row for row in db.query(f"SELECT k, ts, d, tm, du, lt, st FROM {table}")}
    assert sorted(rows) == KEYS
    for k, row in rows.items():
        want = row_value(oracle[k]["ms"])
        assert type(row["ts"]) is type(want) and row["ts"] == want, k
        assert list(row["lt"]) == [want, row_value(0)] and row["st"].at == want, k
        assert row["d"].days_from_epoch == row["st"].day.days_from_epoch == oracle[k]["days"], k
        if k in TIMES:  # the driver's Time where it takes the nanoseconds, else their integer
            assert oracle[k]["ns"] == TIMES[k]
            time = row["tm"]
            held = 0 <= TIMES[k] < DAY_NANOS
            assert (time.nanosecond_time if held else time) == TIMES[k], k
            assert isinstance(time, int) is not held, k
        if k in DURATIONS:
            du = row["du"]
            assert (du.months, du.days, du.nanoseconds) == DURATION_PARTS[k]
    # The same connection, at once: a statement, then a value the driver decodes in its own thread.
    assert sorted(r["k"] for r in db.query(f"SELECT k FROM {table}")) == KEYS
    cast = list(db.query("SELECT blobAsTimestamp(0x7fffffffffffffff) AS ts FROM system.local"))
    assert cast == [{"ts": 2**63 - 1}]
    assert len(list(db.query("SELECT release_version FROM system.local"))) == 1


def test_arrow_holds_every_int64_and_every_date(db, table: str, oracle) -> None:
    whole = db.query(f"SELECT k, ts, d, tm, du, lt, st FROM {table}").to_arrow()
    assert whole.schema.field("ts").type == pa.timestamp("ms", tz="UTC")
    assert whole.schema.field("d").type == pa.date32()
    keys = whole.column("k").to_pylist()
    ms = dict(zip(keys, whole.column("ts").cast(pa.int64()).to_pylist(), strict=True))
    days = dict(zip(keys, whole.column("d").cast(pa.int32()).to_pylist(), strict=True))
    listed = dict(zip(keys, whole.column("lt").cast(pa.list_(pa.int64())).to_pylist(), strict=True))
    stamps = whole.column("st").combine_chunks()
    at = dict(zip(keys, stamps.field("at").cast(pa.int64()).to_pylist(), strict=True))
    ns = dict(zip(keys, whole.column("tm").cast(pa.int64()).to_pylist(), strict=True))
    du = dict(zip(keys, whole.column("du").to_pylist(), strict=True))
    for k in KEYS:
        assert ms[k] == at[k] == oracle[k]["ms"] and listed[k] == [oracle[k]["ms"], 0], k
        assert days[k] == oracle[k]["days"], k
        if k in TIMES:
            assert ns[k] == oracle[k]["ns"]
        if k in DURATIONS:
            assert (du[k]["months"], du[k]["days"], du[k]["nanoseconds"]) == DURATION_PARTS[k]
    # A payload query's reading (the server's pages, a path read) and a payload filter's (a scan).
    for statement in (f"SELECT k, ts, d, data.n FROM {table}",
                      f"SELECT k, ts, d, data.n FROM {table} WHERE data.n >= 1 ALLOW FILTERING"):
        read = db.query(statement).to_arrow()
        got = {k: (t, d, n) for k, t, d, n in zip(read.column("k").to_pylist(),
                                                  read.column("ts").cast(pa.int64()).to_pylist(),
                                                  read.column("d").cast(pa.int32()).to_pylist(),
                                                  read.column("data.n").to_pylist(), strict=True)}
        assert got == {k: (oracle[k]["ms"], oracle[k]["days"], k) for k in KEYS}, statement
        rows = {row["k"]: row["ts"] for row in db.query(statement)}
        assert rows == {k: row_value(oracle[k]["ms"]) for k in KEYS}, statement
    polars = db.query(f"SELECT k, ts FROM {table}").to_polars()
    assert dict(zip(polars["k"].to_list(), polars["ts"].cast(int).to_list(), strict=True)) == TIMESTAMPS


@pytest.fixture
def superuser_home(cassandra, tmp_path: Path) -> Path:
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    return tmp_path


def test_mcp_and_the_shell_s_json_spell_every_value_exactly(cassandra, table: str, oracle,
                                                            superuser_home: Path) -> None:
    statement = f"SELECT k, ts, d, tm, lt, st FROM {table}"
    want = {k: {"ts": json_value(oracle[k]["ms"]), "d": date_text(oracle[k]["days"]),
                "tm": None if oracle[k]["ns"] is None else time_text(oracle[k]["ns"]),
                "lt": [json_value(oracle[k]["ms"]), json_value(0)],
                "st": {"at": json_value(oracle[k]["ms"]), "day": date_text(oracle[k]["days"])}} for k in KEYS}
    with McpServer([cassandra.host, str(cassandra.port)], superuser_home) as server:
        answer = server.call("query", statement=statement).data
        assert {row.pop("k"): row for row in answer["rows"]} == want
        again = server.call("query", statement=f"SELECT k FROM {table}").data  # the same connection
        assert sorted(row["k"] for row in again["rows"]) == KEYS
        scan = server.call("query", statement=f"SELECT k, ts, data.n FROM {table} WHERE data.n >= 1 "
                                              "ALLOW FILTERING").data  # a payload filter's scan
        assert {row["k"]: (row["ts"], row["data.n"]) for row in scan["rows"]} == \
            {k: (want[k]["ts"], k) for k in KEYS}
    shell = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "--output-format", "json", "-e", statement],
                superuser_home)
    assert shell.returncode == 0, shell.stderr
    lines = [json.loads(line) for line in shell.stdout.splitlines() if line.strip()]
    assert {row.pop("k"): row for row in lines} == want


def time_text(nanos: int) -> str | int:
    """A time as JSON spells it: the driver's Time's text where it holds the nanoseconds (0 to a
    day), else the integer (a negative count too: the driver's Time takes -1 and spells it
    -1:59:59.999999999, a time that is not)."""
    from cassandra.util import Time

    return str(Time(nanos)) if 0 <= nanos < DAY_NANOS else nanos


def table_text(millis: int) -> str:
    """A timestamp as cqlsh's table prints it (its default format, in UTC), else its milliseconds."""
    value = as_datetime(millis)
    return str(millis) if value is None else value.strftime("%Y-%m-%d %H:%M:%S.%f%z")


def test_the_shell_s_table_prints_what_stock_cqlsh_prints_but_exact(cassandra, table: str, oracle,
                                                                    tmp_path: Path) -> None:
    """cqlsh's own behaviour kept: a timestamp no datetime holds is its milliseconds, with cqlsh's
    warning; a date no date holds, its days. The last millisecond of year 9999, which stock cqlsh
    prints as 23:59:59.998993 (the driver's float), is printed exactly."""
    statement = f"SELECT k, ts, d FROM {table}"
    ours = ext(cassandra, tmp_path, "-e", statement)
    assert ours.returncode == 0, ours.stderr
    printed = {int(k): (ts, d) for k, ts, d in table_rows(ours.stdout)}
    assert printed == {k: (table_text(oracle[k]["ms"]), date_text(oracle[k]["days"])) for k in KEYS}
    assert "DateOverFlowWarning: Some timestamps are larger than Python datetime can represent. " \
           "Timestamps are displayed in milliseconds from epoch." in ours.stderr
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path)
    assert stock.returncode == 0, stock.stderr
    theirs = {int(k): (ts, d) for k, ts, d in table_rows(stock.stdout)}
    assert theirs[6] == ("9999-12-31 23:59:59.998993+0000", "1970-01-01")  # the float's error
    assert printed[6] == ("9999-12-31 23:59:59.999000+0000", "1970-01-01")
    assert {k: v for k, v in printed.items() if k != 6} == {k: v for k, v in theirs.items() if k != 6}
    # A time of a day or more, which stock cqlsh cannot read (the driver's Time raises): its nanoseconds.
    times = ext(cassandra, tmp_path, "-e", f"SELECT k, tm FROM {table} WHERE k IN (1, 2, 3, 4, 5)")
    assert times.returncode == 0, times.stderr
    printed_times = {int(k): tm for k, tm in table_rows(times.stdout)}
    assert printed_times == {k: str(time_text(n)) for k, n in TIMES.items()}


def test_the_parquet_export_writes_every_value_exactly(cassandra, table: str, oracle, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    target = tmp_path / "extremes.parquet"
    done = ext(cassandra, tmp_path, "-e", f"COPY (SELECT k, ts, d, lt FROM {table}) TO '{target}'")
    assert done.returncode == 0, done.stderr
    written = pq.read_table(target)
    keys = written.column("k").to_pylist()
    assert dict(zip(keys, written.column("ts").cast(pa.int64()).to_pylist(), strict=True)) == TIMESTAMPS
    assert dict(zip(keys, written.column("d").cast(pa.int32()).to_pylist(), strict=True)) == \
        {k: oracle[k]["days"] for k in KEYS}


#: A stored JSON document with what no double or UTF-8 string holds: numbers past the double's range
#: and a lone surrogate's escape (valid JSON, no Unicode character).
BEYOND = r'{"n": 1e400, "m": -1e400, "s": "lone \ud800 here"}'


def test_a_document_past_the_double_and_unicode_reads_through_every_door(cassandra, db,
                                                                         tmp_path: Path) -> None:
    # Arrow's strings are UTF-8: the lone surrogate failed the whole read (the API's rows and
    # Arrow, the Parquet export). It is read as U+FFFD, said in the value's note; the numbers are
    # the double's infinities Arrow holds; the shell's JSON output keeps the stored text as it is.
    # (MCP's answers: tests/mcp_server/test_http.py.)
    import pyarrow.parquet as pq

    ks = cassandra.create_keyspace("beyond")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (k int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO t (k, data) VALUES (1, %s)", (BEYOND.encode(),))
    session.execute("INSERT INTO t (k, data) VALUES (2, %s)", (gzip.compress(BEYOND.encode()),))
    session.shutdown()
    read = {"n": float("inf"), "m": float("-inf"), "s": "lone \ufffd here"}
    said = "1 lone surrogate (no Unicode character) read as U+FFFD"

    assert {row["k"]: row["data"] for row in db.query(f"SELECT k, data FROM {ks}.t").records()} == \
        {1: read, 2: read}
    for table in (db.query(f"SELECT k, data FROM {ks}.t").to_arrow(),
                  _exported(cassandra, tmp_path, f"SELECT k, data FROM {ks}.t", pq)):
        assert table.column("data").to_pylist() == [read, read]
        assert table.column("data:note").to_pylist() == [said, said]
    assert db.query(f"SELECT k FROM {ks}.t").to_arrow().num_rows == 2  # the connection reads on

    shown = ext(cassandra, tmp_path, "--output-format", "json", "-e", f"SELECT k, data FROM {ks}.t")
    lines = [json.loads(line) for line in shown.checked_stdout().splitlines() if line.startswith("{")]
    assert [line["data"]["payload"] for line in lines] == [json.loads(BEYOND)] * 2
    assert shown.stdout.count(r'"s":"lone \ud800 here"') + shown.stdout.count(r'"s": "lone \ud800 here"') == 2
    # A path's string is printed with the document's escape, where UTF-8's strict encoding failed
    # the whole answer (the table and the JSON output alike).
    for output in ([], ["--output-format", "json"]):
        found = ext(cassandra, tmp_path, *output, "-e", f"SELECT k, data.s, data.n FROM {ks}.t")
        assert found.checked_stdout().count(r"lone \ud800 here") == 2, found.stdout
        if not output:  # the table's columns line up: the cell is as wide as the escape it shows
            bars = {line.rindex("|") for line in found.stdout.splitlines() if "|" in line}
            assert len(bars) == 1, found.stdout
    lines = [json.loads(line) for line in found.stdout.splitlines() if line.startswith("{")]
    assert sorted(lines, key=lambda line: line["k"]) == \
        [{"k": k, "data.s": "lone \ud800 here", "data.n": "Infinity"} for k in (1, 2)]
    # The paths' exports: the text files with the escape, as the shell prints it; Parquet U+FFFD, said.
    paths = f"SELECT k, data.s FROM {ks}.t"
    for suffix in ("jsonl", "csv"):
        target = tmp_path / f"paths.{suffix}"
        done = ext(cassandra, tmp_path, "-e", f"COPY ({paths}) TO '{target}'")
        assert done.returncode == 0, done.stderr
        assert target.read_text().count(r"lone \ud800 here") == 2
    assert [json.loads(line)["data.s"] for line in (tmp_path / "paths.jsonl").read_text().splitlines()] == \
        ["lone \ud800 here"] * 2
    written = _exported(cassandra, tmp_path, paths, pq)
    assert written.column("data.s").to_pylist() == ["lone \ufffd here"] * 2
    assert written.column("data.s:note").to_pylist() == [said, said]


def _exported(cassandra, home: Path, select: str, pq) -> object:  # type: ignore[no-untyped-def]
    target = home / f"beyond{len(list(home.glob('beyond*.parquet')))}.parquet"
    done = ext(cassandra, home, "-e", f"COPY ({select}) TO '{target}'")
    assert done.returncode == 0, done.stderr
    return pq.read_table(target)


def test_numbers_bound_and_written_take_the_shell_s_rule_at_the_api_s_door(cassandra, db) -> None:
    # A bound int past Python's 4,300 digits (a varint holds it) is bound, not refused in Python's
    # words; an exponent no decimal holds is one line, not decimal's InvalidOperation; an IN list of
    # 20,000 bound Decimals is answered (its markers read in linear time: 17 s of CPU before,
    # bench/bound_numbers.py).
    from decimal import Decimal

    import cqlsh_ext

    ks = cassandra.create_keyspace("bound_numbers")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (k int PRIMARY KEY, v varint, data blob)")
    long_int = 10 ** 4301 - 7
    session.execute(session.prepare("INSERT INTO t (k, v, data) VALUES (1, ?, ?)"), (long_int, b'{"n": 0.5}'))
    session.shutdown()
    rows = list(db.query(f"SELECT k FROM {ks}.t WHERE k = 1 AND v = ? ALLOW FILTERING", [long_int]).records())
    assert rows == [{"k": 1}]
    with pytest.raises(cqlsh_ext.Error) as refused:
        list(db.query(f"SELECT k FROM {ks}.t WHERE data.n = 1.5e999999999999999999999 "
                      "ALLOW FILTERING").records())
    assert str(refused.value) == ("payload query: the number 1.5e999999999999999999999: a payload condition "
                                  "compares numbers whose exponent a decimal holds")
    if _has("polars"):  # the polars source reads the statement as the API does: the same line
        with pytest.raises(cqlsh_ext.Error, match="exponent a decimal holds"):
            db.scan(f"SELECT k FROM {ks}.t WHERE data.n = 1.5e999999999999999999999 ALLOW FILTERING")
    keys = [Decimal(i) / 4 for i in range(20_000)]
    markers = ", ".join(["?"] * len(keys))
    found = db.query(f"SELECT k FROM {ks}.t WHERE data.n IN ({markers}) ALLOW FILTERING", keys)
    assert list(found.records()) == [{"k": 1}]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
