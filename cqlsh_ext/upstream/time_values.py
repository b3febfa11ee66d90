"""The driver's reading of CQL timestamps and times, exact for every value the server can hold.

A CQL timestamp is a signed 64-bit count of milliseconds since 1970-01-01 UTC. cassandra-driver
3.30.1 reads it through a float of seconds (`ms / 1000.0`, its Cython `DesDateType` and
`DateType.deserialize` alike): past about year 2100 the float's error reaches the microseconds
(253402300799999, 9999-12-31 23:59:59.999, reads as 23:59:59.998993), and a value past year 9999
or before year 1 (a producer that wrote microseconds as milliseconds) raises inside the
connection's reader thread, where the driver makes the connection defunct: the query fails with
"DriverException: Failed decoding result column", and the next fails too, until it reconnects.
cqlsh's main() swaps in its own reading (`insert_driver_hooks`: the integer of milliseconds where
a datetime raises), still through the float. A CQL time is a signed 64-bit count of nanoseconds
that the server keeps whatever it is (`blobAsTime` writes any): the driver's `Time` refuses one of
a day or more, raising there too.

Here a timestamp is read with integers alone: the datetime (naive, in UTC, as the driver gives
it; a whole number of milliseconds) where Python's datetime holds it (years 1 to 9999), else the
integer of milliseconds since the epoch, cqlsh's own spelling of such a value; a time is the
driver's `Time` where it takes the value, else the integer of nanoseconds. Neither raises, so no
value leaves a connection defunct. In the shell with decompression off (`-d none`, DECOMPRESS
NONE: what stock cqlsh prints, byte for byte) a timestamp is read as cqlsh reads it, through its
float (`read_as_stock`): 9999-12-31 23:59:59.999 is then 23:59:59.998993, as stock cqlsh shows it.
Installed once a process, before any connection reads
(`install`, from seams.import_cqlshmain); in the shell cqlsh's main() installs its own reading of
timestamps first and this one goes back in right after (`after_cqlsh_hooks`), keeping cqlsh's
warning for a timestamp read as an integer.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from typing import Any

from cassandra.util import Time  # (the driver is loaded before this module: seams.import_cqlshmain)

__all__ = ["after_cqlsh_hooks", "install", "read_as_stock", "time_value", "timestamp_value"]

_EPOCH = datetime.datetime(1970, 1, 1)
_DELTA = datetime.timedelta
#: Nanoseconds in a day: the driver's Time holds fewer.
DAY_NANOS = 86_400_000_000_000

#: Called with a timestamp's bytes and the protocol version when it is read as an integer: cqlsh's
#: own reading in the shell (it warns once that such timestamps are shown in milliseconds); none in
#: a program (the API's rows say so in its documentation, not on stderr).
_on_integer: list[Callable[[bytes, int], Any]] = []
#: The driver's Cython readers install() took away, by name (cqlsh's hooks delete one themselves).
_taken: dict[str, Any] = {}
#: Whether timestamps are read as stock cqlsh reads them (read_as_stock).
_as_stock: list[bool] = [False]


def read_as_stock(stock: bool) -> None:
    """Read timestamps as cqlsh's own reading does (its float of seconds: `-d none` prints what
    stock cqlsh prints), or exactly (the default). Only in the shell, where cqlsh's reading is."""
    _as_stock[0] = stock


def timestamp_value(byts: bytes, protocol_version: int = 5) -> datetime.datetime | int:
    """A timestamp's 8 bytes: its datetime exactly, or its milliseconds since the epoch (int) where
    no datetime holds it (see the module doc)."""
    if _as_stock[0] and _on_integer:
        return _on_integer[0](byts, protocol_version)
    millis = int.from_bytes(byts, "big", signed=True)
    try:
        # (integers only: timedelta(days, seconds, microseconds, milliseconds); OverflowError
        # exactly outside 0001-01-01 00:00:00.000 .. 9999-12-31 23:59:59.999)
        return _EPOCH + _DELTA(0, 0, 0, millis)
    except OverflowError:
        for warn in _on_integer:
            warn(byts, protocol_version)
        return millis


def time_value(byts: bytes, protocol_version: int = 5) -> Time | int:
    """A time's 8 bytes: the driver's Time, or its nanoseconds (int) where Time does not hold them:
    a day or more, which it refuses, and fewer than none, which it takes and shows as a time that
    is not (-2 ns as -1:59:59.999999998; stock cqlsh's, read_as_stock)."""
    nanos = int.from_bytes(byts, "big", signed=True)
    return Time(nanos) if nanos < DAY_NANOS and (nanos >= 0 or _as_stock[0]) else nanos


def install() -> None:
    """The driver reads every timestamp with timestamp_value and every time with time_value: the
    type classes' own readings replaced, and their Cython readers taken away, so the driver's row
    parser reads them through those (its generic reader, as for a type it has no reader of its
    own for): in a column, and inside a collection, a tuple or a UDT."""
    from cassandra import cqltypes

    cqltypes.DateType.deserialize = staticmethod(timestamp_value)
    cqltypes.TimeType.deserialize = staticmethod(time_value)
    try:
        from cassandra import deserializers
    except ImportError:  # a driver without its Cython extensions reads through the classes alone
        return
    for name in ("DesDateType", "DesTimeType"):
        if hasattr(deserializers, name):
            _taken[name] = getattr(deserializers, name)
            delattr(deserializers, name)


def after_cqlsh_hooks(cqlsh_hooks: Callable[[], None]) -> Callable[[], None]:
    """cqlshmain.insert_driver_hooks as cqlsh's main() calls it: cqlsh's hooks, then these readings
    in place of cqlsh's, cqlsh's own reading called for a timestamp read as an integer (its
    warning, once, as stock cqlsh gives it). Wrapped: its source is cqlsh's (seams.COPIED)."""

    @functools.wraps(cqlsh_hooks)
    def insert_driver_hooks() -> None:
        from cassandra import cqltypes

        taken = _taken.get("DesDateType")
        if taken is not None:
            # cqlsh's hooks take that Cython reader away themselves (a `del`: it must be there)
            from cassandra import deserializers

            deserializers.DesDateType = taken
        cqlsh_hooks()
        cqlsh_reading = cqltypes.DateType.deserialize
        if cqlsh_reading is not timestamp_value:
            _on_integer[:] = [cqlsh_reading]
        install()

    return insert_driver_hooks
