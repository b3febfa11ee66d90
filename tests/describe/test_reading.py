"""How much DESCRIBE PAYLOAD reads when the statement does not say: every row of a table a full
read is cheap for, a sample of a larger one or on Amazon Keyspaces; what the statement says wins,
and a WHERE on columns reads the rows it names. The first line says which and why."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from cqlsh_ext.describe import run
from cqlsh_ext.describe.parse import DescribeError, DescribeStatement
from cqlsh_ext.scanning.sample import PROBED, SERVER_ESTIMATE
from cqlsh_ext.scanning.scan import TableSize


def context(keyspaces: bool = False) -> Any:
    """The little of a reading's context (reading.context.ReadContext) the choice reads."""
    return SimpleNamespace(keyspaces=SimpleNamespace(active=keyspaces))


def target(server_where: str = "") -> Any:
    plan = SimpleNamespace(server_where=server_where) if server_where else None
    return SimpleNamespace(plan=plan)


def choose(monkeypatch, size: Any, statement: DescribeStatement | None = None, keyspaces: bool = False,
           server_where: str = "") -> run.Choice:
    basis = SERVER_ESTIMATE if isinstance(size, TableSize) else PROBED
    monkeypatch.setattr(run, "_estimated_size", lambda _ctx, _target: (size, basis))
    return run.reading_for(context(keyspaces), target(server_where),
                           statement or DescribeStatement("ks", "t", "c"))


def test_a_small_table_is_read_whole_and_a_large_one_sampled(monkeypatch):
    small = TableSize(partitions=1000, mean_partition_bytes=4096, coverage=1.0)
    large = TableSize(partitions=10_000_000, mean_partition_bytes=4096, coverage=1.0)
    assert choose(monkeypatch, small) == run.Choice(
        "all", "the table is small: about 3.9 MiB, the server's estimate (system.size_estimates); SAMPLE n "
        "reads a sample")
    assert choose(monkeypatch, large) == run.Choice(
        "sample", "the table is about 38.1 GiB, the server's estimate (system.size_estimates): a sample of "
        f"{run.SAMPLE_ROWS:,} rows; ALL reads every row", run.SAMPLE_ROWS)
    assert choose(monkeypatch, 2011).why == (
        "the table is small: about 2,011 partitions, estimated from the partition keys found after 4 random "
        "places in the ring; SAMPLE n reads a sample")
    assert choose(monkeypatch, 500).mode == "all"  # partitions probed, no estimate
    assert choose(monkeypatch, run.FULL_READ_PARTITIONS + 1).mode == "sample"
    assert choose(monkeypatch, None).mode == "all"


def test_what_the_statement_says_wins(monkeypatch):
    large = TableSize(partitions=10_000_000, mean_partition_bytes=4096, coverage=1.0)
    every = DescribeStatement("ks", "t", "c", every_row=True)
    assert choose(monkeypatch, large, every) == run.Choice("all", "ALL")
    assert choose(monkeypatch, 10, DescribeStatement("ks", "t", "c", sample=700)) == \
        run.Choice("sample", "SAMPLE 700", 700)


def test_keyspaces_defaults_to_a_sample(monkeypatch):
    chosen = choose(monkeypatch, 10, keyspaces=True)
    assert chosen.mode == "sample" and "on Amazon Keyspaces every row read costs read capacity" in chosen.why


def test_a_where_on_columns_reads_its_rows_and_refuses_a_sample(monkeypatch):
    assert choose(monkeypatch, None, server_where="pk = 1").mode == "named"
    with pytest.raises(DescribeError, match="leave SAMPLE out"):
        choose(monkeypatch, None, DescribeStatement("ks", "t", "c", sample=5), server_where="pk = 1")
