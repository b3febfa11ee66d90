"""The order table of tools/orders.py on the real server, and the shell run against it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from orders import rows, write_table
from shell_runner import CQLSH_EXT, Run, isolated_env, run

#: Rows in the test table: enough for several token ranges and pages, small enough to load fast.
COUNT = 600


@dataclass
class Orders:
    ks: str
    table: str
    rows: list[tuple[dict[str, Any], dict[str, Any] | None]]

    @property
    def name(self) -> str:
        return f"{self.ks}.{self.table}"


def load_orders(cassandra, keyspace: str, count: int = COUNT) -> Orders:
    """`count` rows of tools/orders.py in a new keyspace named after `keyspace` (table `orders`)."""
    ks = cassandra.create_keyspace(keyspace)
    session = cassandra.session(ks)
    data = rows(count)
    write_table(session, data)
    session.shutdown()
    return Orders(ks, "orders", data)


@pytest.fixture(scope="package")
def orders(cassandra) -> Orders:
    return load_orders(cassandra, "pq")


def shell(cassandra, home: Path, statement: str, *flags: str, stdin: str | None = None,
          env: dict[str, str] | None = None) -> Run:
    """cqlsh-ext -e STATEMENT (or reading `stdin`) against the test server; `env` adds variables."""
    args = [*cassandra.cqlsh_args, *flags]
    if stdin is None:
        args += ["-e", statement]
    if not env:
        return run(CQLSH_EXT, args, home, stdin=stdin)
    proc = subprocess.run([CQLSH_EXT, *args], input=stdin, capture_output=True, text=True, timeout=300,
                          env={**isolated_env(home), **env})
    return Run(proc.returncode, proc.stdout, proc.stderr, None)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path
