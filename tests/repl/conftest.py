"""Fixtures for the interactive front end and output format tests (see terminal.py)."""

from __future__ import annotations

import datetime
import gzip
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from shell_runner import load_demo

from .terminal import Term

ORDER_DOC = {"order": 1042, "items": [{"sku": "SKU-1", "qty": 2, "price": 19.99}], "note": "ring twice"}


def write_credentials(home: Path, username: str, password: str) -> None:
    """~/.cassandra/credentials, which cqlsh reads by default: no -p on command lines."""
    directory = home / ".cassandra"
    directory.mkdir(parents=True, exist_ok=True)
    creds = directory / "credentials"
    creds.write_text(f"[plain_text_auth]\nusername = {username}\npassword = {password}\n")
    os.chmod(creds, 0o600)


@pytest.fixture
def home(tmp_path: Path, cassandra) -> Path:
    home = tmp_path / "home"
    write_credentials(home, cassandra.username, cassandra.password)
    return home


@pytest.fixture(scope="module")
def demo_ks(cassandra, tmp_path_factory) -> str:
    """The demo keyspace, loaded by `cqlsh-ext demo load` as a user does (fewer rows)."""
    name = f"demo_{os.getpid()}"
    load_demo(cassandra, name, 120, tmp_path_factory.mktemp("demo-home"))
    return name


@pytest.fixture(scope="session")
def repl_ks(cassandra) -> str:
    """A keyspace with 60 `orders` (ints, text, a gzip-compressed JSON blob, a plain blob) and
    an empty `notes` table for tests that write.

    Its name ends in random letters, so no other keyspace shares a prefix with it: the
    completion test types part of it.
    """
    name = f"repl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    s = cassandra.session()
    s.execute(f"CREATE KEYSPACE {name} WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute(f"CREATE TABLE {name}.orders (id int PRIMARY KEY, customer text, placed timestamp, "
              "payload blob, raw blob, tags set<text>)")
    insert = s.prepare(f"INSERT INTO {name}.orders (id, customer, placed, payload, raw, tags) "
                       "VALUES (?, ?, ?, ?, ?, ?)")
    s.execute(f"CREATE TABLE {name}.notes (id int PRIMARY KEY, body text)")
    placed = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
    for i in range(1, 61):
        doc = dict(ORDER_DOC, order=1000 + i)
        s.execute(insert, (i, f"customer-{i:02d}", placed,
                           gzip.compress(json.dumps(doc).encode(), mtime=0), bytes([i, 0, 255]), {"a", "b"}))
    s.shutdown()
    return name


@pytest.fixture
def term(home: Path, cassandra) -> Iterator[Callable[..., Term]]:
    """Start cqlsh-ext in a pseudo-terminal: term(*extra_args, env=..., rows=..., cols=...)."""
    started: list[Term] = []

    def start(*args: str, env: dict[str, str] | None = None, rows: int = 40, cols: int = 160,
              host: str | None = None, port: int | None = None, at: Path | None = None) -> Term:
        conn = [host or cassandra.host, str(port or cassandra.port)]
        t = Term([*conn, *args], at or home, env=env, rows=rows, cols=cols)
        started.append(t)
        return t

    yield start
    for t in started:
        t.close()
