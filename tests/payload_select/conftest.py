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


#: The pages-in table's rows: a few partitions of ten rows.
PAGES_ROWS = 40


def load_pages_table(cassandra, keyspace: str) -> str:
    """The table pages in is checked on (its qualified name, in a new keyspace named after
    `keyspace`): four partitions (pk) of ten rows (ck); blobs the core reads (gzip, plain JSON) and
    hands back (bzip2, xz), null and empty; a text column and a list with nulls and empty values."""
    import bz2
    import gzip
    import json
    import lzma

    ks = cassandra.create_keyspace(keyspace)
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, note text, tags list<text>, data blob, "
                    "PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, note, tags, data) VALUES (?, ?, ?, ?, ?)")
    packs = [lambda d: gzip.compress(d, mtime=0), bz2.compress, lzma.compress, lambda d: d]
    for k in range(PAGES_ROWS):
        doc = json.dumps({"status": ["NEW", "PAID", "FAILED"][k % 3], "n": k}).encode()
        data = None if k % 7 == 0 else b"" if k % 11 == 0 else packs[k % 4](doc)
        note = None if k % 5 == 0 else "" if k % 6 == 0 else f"note {k}"
        tags = None if k % 4 == 0 else [] if k % 9 == 0 else [f"t{k}", "", "x"]
        session.execute(insert, (k % 4, k, note, tags, data))
    session.shutdown()
    return f"{ks}.t"


@pytest.fixture(scope="package")
def pages_table(cassandra) -> str:
    return load_pages_table(cassandra, "pqpages")


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
