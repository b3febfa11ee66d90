"""The driver's reading of CQL timestamps and times (cqlsh_ext.upstream.time_values): a timestamp
against pyarrow's own conversion of the same milliseconds (the datetime exactly wherever one
exists, the integer of milliseconds everywhere else, for every signed 64-bit value), a time the
driver's Time where it takes the nanoseconds, else their integer; read so by the driver's own row
parser in a column, a list and a UDT; in the shell after cqlsh's hooks, with cqlsh's warning. No
server: the values' bytes as the server sends them."""

from __future__ import annotations

import datetime
import json
import struct
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlsh_ext.upstream import seams, time_values

pa = pytest.importorskip("pyarrow")

seams.import_cqlshmain(None)  # the driver loaded as every front end loads it: the reading installed

#: Milliseconds at and around the ends: int64's, year 0, the first and last datetime, year 10000,
#: a value in microseconds written as milliseconds, the epoch and a millisecond before it.
EDGES = [-2**63, -2**63 + 1, 2**63 - 1, -62167219200000, -62135596800001, -62135596800000,
         -62135596799999, 253402300799998, 253402300799999, 253402300800000, 1_700_000_000_123_000,
         -1, 0, 1, 1_700_000_000_123]


def pyarrow_value(millis: int) -> datetime.datetime | int:
    """pyarrow's datetime of `millis` (naive UTC, as the driver gives), or `millis` where it has none."""
    try:
        value = pa.scalar(millis, pa.timestamp("ms")).as_py()
    except (OverflowError, ValueError):
        return millis
    assert isinstance(value, datetime.datetime)
    return value


def cell(millis: int) -> bytes:
    return struct.pack(">q", millis)


@pytest.mark.parametrize("millis", EDGES)
def test_the_edges_read_as_pyarrow_converts_them(millis: int) -> None:
    value = time_values.timestamp_value(cell(millis))
    assert type(value) is type(pyarrow_value(millis)) and value == pyarrow_value(millis)


@given(st.integers(min_value=-2**63, max_value=2**63 - 1))
def test_every_int64_reads_as_pyarrow_converts_it(millis: int) -> None:
    value = time_values.timestamp_value(cell(millis))
    assert type(value) is type(pyarrow_value(millis)) and value == pyarrow_value(millis)


def test_the_driver_s_float_reading_was_a_millisecond_off_at_year_9999() -> None:
    # What the driver's own reading gives (seconds as a float): the reason for this module.
    from cassandra.util import datetime_from_timestamp

    assert datetime_from_timestamp(253402300799999 / 1000.0).microsecond == 998993
    assert time_values.timestamp_value(cell(253402300799999)).microsecond == 999000


@pytest.mark.parametrize("nanos", [0, 86_399_999_999_999, -1, 86_400_000_000_000, 2**63 - 1, -2**63])
def test_a_time_is_the_driver_s_time_where_it_takes_it_else_its_nanoseconds(nanos: int) -> None:
    from cassandra.util import Time

    try:
        driver_own: Time | None = Time(nanos)
    except ValueError:  # "value must be less than number of nanoseconds in a day": raised in the
        driver_own = None  # connection's thread, it left the connection defunct
    value = time_values.time_value(cell(nanos))
    # (a negative count the driver's Time takes, and spells as a time that is not: -1:59:59.999999999)
    assert value == (nanos if driver_own is None or nanos < 0 else driver_own)
    assert (value if isinstance(value, int) else value.nanosecond_time) == nanos


def rows_section(rows: list[list[bytes | None]]) -> bytes:
    """A RESULT rows section (protocol v4/v5) of these cells: a length each (-1 null), then its bytes."""
    out = b""
    for row in rows:
        for value in row:
            out += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    return out


def test_the_driver_s_row_parser_reads_a_column_a_list_and_a_udt_through_it() -> None:
    from cassandra import cqltypes

    from cqlsh_ext.payload.server_rows import ServerRows

    udt = cqltypes.UserType.make_udt_class("ks", "stamp", ["name", "at"],
                                           [cqltypes.UTF8Type, cqltypes.DateType])
    types = [cqltypes.DateType, cqltypes.ListType.apply_parameters([cqltypes.DateType]), udt,
             cqltypes.TimeType]
    rows = []
    for millis in EDGES:
        listed = struct.pack(">i", 2) + b"".join(struct.pack(">i", 8) + cell(m) for m in (millis, 0))
        fields = struct.pack(">i", 1) + b"e" + struct.pack(">i", 8) + cell(millis)
        rows.append([cell(millis), listed, fields, cell(millis * 1_000_000 % 2**63)])
    page = ServerRows(rows_section(rows), len(rows), types, 5)
    made = page.rows()  # the driver's Cython parser where the core and its Cython run, else from_binary
    assert [row[0] for row in made] == [pyarrow_value(m) for m in EDGES]
    assert [list(row[1]) for row in made] == [[pyarrow_value(m), pyarrow_value(0)] for m in EDGES]
    assert [row[2].at for row in made] == [pyarrow_value(m) for m in EDGES]
    assert [r[3] if isinstance(r[3], int) else r[3].nanosecond_time for r in made] == \
        [millis * 1_000_000 % 2**63 for millis in EDGES]
    driver_own = [[t.from_binary(c, 5) for t, c in zip(types, row, strict=True)] for row in rows]
    assert [r[0] for r in driver_own] == [row[0] for row in made]


SHELL_HOOKS = """
import json, struct, warnings
from cqlsh_ext.upstream import seams, time_values
cqlshmain = seams.import_cqlshmain(None)
from cassandra import cqltypes, deserializers
with warnings.catch_warnings(record=True) as api_said:
    warnings.simplefilter("always")
    api = cqltypes.DateType.from_binary(struct.pack(">q", 2**63 - 1), 5)
cqlshmain.insert_driver_hooks()  # as cqlsh's main() calls it, first thing
with warnings.catch_warnings(record=True) as shell_said:
    warnings.simplefilter("always")
    shell = [cqltypes.DateType.from_binary(struct.pack(">q", m), 5) for m in (2**63 - 1, 253402300799999)]
print(json.dumps({
    "ours": cqltypes.DateType.deserialize is time_values.timestamp_value
            and cqltypes.TimeType.deserialize is time_values.time_value,
    "cython_reader": hasattr(deserializers, "DesDateType") or hasattr(deserializers, "DesTimeType"),
    "reader": type(deserializers.find_deserializer(cqltypes.DateType)).__name__,
    "empty_values": cqltypes.CassandraType.support_empty_values,
    "api": [api, [str(w.message) for w in api_said]],
    "shell": [shell[0], shell[1].isoformat(),
              [(type(w.message).__name__, str(w.message)) for w in shell_said]],
}))
"""


def test_in_the_shell_it_goes_in_after_cqlsh_s_hooks_with_cqlsh_s_warning() -> None:
    """cqlsh's main() runs its driver hooks first (its own float reading of timestamps, the Cython
    reader deleted, empty values): ours is put back after them, cqlsh's other hooks kept, and a
    value read as an integer warns as stock cqlsh warns; a program (no main()) is not warned."""
    out = subprocess.run([sys.executable, "-c", SHELL_HOOKS], capture_output=True, text=True, check=True)
    said = json.loads(out.stdout)
    assert said["ours"] is True and said["cython_reader"] is False and said["reader"] == "GenericDeserializer"
    assert said["empty_values"] is True  # cqlsh's own hook, kept
    assert said["api"] == [2**63 - 1, []]
    warning = ("DateOverFlowWarning", "Some timestamps are larger than Python datetime can represent. "
                                      "Timestamps are displayed in milliseconds from epoch.")
    assert said["shell"] == [2**63 - 1, "9999-12-31T23:59:59.999000", [list(warning)]]
