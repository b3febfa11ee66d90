"""The order table of tools/orders.py on the real server, exported by the real binary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from orders import rows, write_table

#: Rows in the test table: several token ranges and server pages, small enough to load fast.
COUNT = 600


@dataclass
class Orders:
    ks: str
    table: str
    rows: list[tuple[dict[str, Any], dict[str, Any] | None]]

    @property
    def name(self) -> str:
        return f"{self.ks}.{self.table}"


@pytest.fixture(scope="package")
def orders(cassandra) -> Orders:
    ks = cassandra.create_keyspace("ex")
    session = cassandra.session(ks)
    data = rows(COUNT)
    write_table(session, data)
    session.shutdown()
    return Orders(ks, "orders", data)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path
