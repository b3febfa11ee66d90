"""The order table of tools/orders.py on the real server (the payload-query tests' table, in a
keyspace of its own), exported by the real binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.payload_select.conftest import Orders, load_orders, load_pages_table


@pytest.fixture(scope="package")
def orders(cassandra) -> Orders:
    return load_orders(cassandra, "ex")


@pytest.fixture(scope="package")
def pages_table(cassandra) -> str:
    """The payload queries' pages-in table (tests/payload_select), in a keyspace of its own."""
    return load_pages_table(cassandra, "expages")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path
