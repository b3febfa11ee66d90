"""The one worker policy of whole-table reads (COMPRESSION STATS, payload queries), without a
server: PARALLEL n first, then CQLSH_EXT_SCAN_WORKERS, then (without the native core) one process
per core from the size threshold, by the server's estimate."""

from __future__ import annotations

import os

import pytest

from cqlsh_ext.payload import native
from cqlsh_ext.scanning.plan import MAX_WORKERS, WORKERS_FROM_BYTES, WORKERS_VARIABLE, workers_for
from cqlsh_ext.scanning.scan import TableSize

BELOW = TableSize(partitions=1000, mean_partition_bytes=(WORKERS_FROM_BYTES - 1) // 1000, coverage=1.0)
FROM = TableSize(partitions=1000, mean_partition_bytes=-(-WORKERS_FROM_BYTES // 1000), coverage=1.0)
CORES = min(MAX_WORKERS, os.cpu_count() or 1)
# From the size threshold: one process per core without the native core; with it the shell's own
# process (the core decodes faster than the server sends, so workers only take the server's cores).
BIG = 1 if native.available() else CORES


def test_size_decides_without_parallel_or_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WORKERS_VARIABLE, raising=False)
    assert workers_for(None) == 1  # no estimate from the server: the shell's own process
    assert workers_for(BELOW) == 1
    assert workers_for(FROM) == BIG


def test_parallel_wins_then_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_VARIABLE, "3")
    assert workers_for(BELOW) == 3 and workers_for(None) == 3
    assert workers_for(FROM, asked=1) == 1 and workers_for(None, asked=4) == 4
    assert workers_for(FROM, asked=10_000) == MAX_WORKERS
    monkeypatch.setenv(WORKERS_VARIABLE, "1")
    assert workers_for(FROM) == 1
    monkeypatch.setenv(WORKERS_VARIABLE, "many")  # not a number: as if unset
    assert workers_for(FROM) == BIG and workers_for(BELOW) == 1
