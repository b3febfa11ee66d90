"""The order table of tools/orders.py on the real server, and a reading context on a driver session
of its own (no shell: what a front end other than the shell builds)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from orders import rows, write_table

from cqlsh_ext.reading.context import ReadContext

#: Rows in the test table: several token ranges and pages, one in six of random bytes.
COUNT = 300


@dataclass
class Orders:
    ks: str
    rows: list[tuple[dict[str, Any], dict[str, Any] | None]]

    @property
    def name(self) -> str:
        return f"{self.ks}.orders"


@pytest.fixture(scope="package")
def orders(cassandra) -> Orders:
    ks = cassandra.create_keyspace("reading")
    session = cassandra.session(ks)
    data = rows(COUNT)
    write_table(session, data)
    session.shutdown()
    return Orders(ks, data)


@dataclass
class Said:
    """What a reading said besides its answer: errors and messages, one line each."""

    errors: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


@pytest.fixture
def said() -> Said:
    return Said()


@pytest.fixture(scope="package")
def session(cassandra, orders: Orders) -> Iterator[Any]:
    """A driver session of these tests' own, in the orders' keyspace (configured by execution
    profiles, as a front end's own session is: not cqlsh's)."""
    session = cassandra.session(orders.ks)
    yield session
    session.shutdown()


@pytest.fixture
def ctx(cassandra, session: Any, orders: Orders, said: Said) -> ReadContext:
    """A context on that session: nobody to ask, errors and messages kept, a stop of its own."""
    from cassandra import ConsistencyLevel

    from cqlsh_ext.settings import Settings

    return ReadContext(session=session, cluster=session.cluster, host=cassandra.host, keyspace=orders.ks,
                       consistency=ConsistencyLevel.ONE, serial_consistency=ConsistencyLevel.SERIAL,
                       settings=Settings(), page_size=100, say=said.messages.append, error=said.errors.append)
