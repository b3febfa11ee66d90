"""Test-only start-up hooks for cqlsh-ext runs (put on PYTHONPATH by tests/keyspaces).

CQLSH_EXT_TEST_CLOCK_SKEW_SECONDS=N  cassandra-sigv4 signs with a clock N seconds off (the product
                                     code is untouched: the signer's own `datetime` is shifted)
CQLSH_EXT_TEST_MP_START=spawn        multiprocessing start method (COPY workers), as on macOS/Windows
"""

import datetime as _datetime
import os

_skew = float(os.environ.get("CQLSH_EXT_TEST_CLOCK_SKEW_SECONDS") or 0)
if _skew:
    import cassandra_sigv4.auth as _sigv4

    class _SkewedDatetime(_datetime.datetime):
        @classmethod
        def utcnow(cls) -> _datetime.datetime:  # type: ignore[override]
            return _datetime.datetime.utcnow() + _datetime.timedelta(seconds=_skew)

    _sigv4.datetime = _SkewedDatetime

_start = os.environ.get("CQLSH_EXT_TEST_MP_START")
if _start:
    import multiprocessing

    multiprocessing.set_start_method(_start, force=True)
