"""The order table of tools/orders.py on the real server, and a connection of the Python API's to
it (cqlsh_ext.connect, as a program makes it: no shell)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.payload_select.conftest import Orders, load_orders

#: Rows in the test table: several pages, one in six of random bytes.
COUNT = 120


@pytest.fixture(scope="package")
def orders(cassandra) -> Orders:
    return load_orders(cassandra, "api", COUNT)


@pytest.fixture(scope="package")
def cqlshrc(tmp_path_factory) -> str:
    """An empty cqlshrc: the tests' settings are their arguments alone."""
    path = Path(tmp_path_factory.mktemp("api")) / "cqlshrc"
    path.write_text("")
    return str(path)


@pytest.fixture(scope="package")
def db(cassandra, orders: Orders, cqlshrc: str) -> Iterator[Any]:
    import cqlsh_ext

    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, cqlshrc=cqlshrc) as database:
        yield database
