"""Fixtures of the MCP server's tests against the real Cassandra: a login of their own (its password
is what no byte written may hold) and the demo keyspace, loaded once for the session with the demo's
zstd and zlib dictionaries written beside it (as `bin/demo` loads it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from shell_runner import load_demo

from .harness import McpServer, write_credentials

#: The assistant's login: a role of its own, with a password no output may contain.
ASSISTANT, ASSISTANT_PASSWORD = "mcp_assistant", "Mcp-Assist-Pa55word-4417!"


@dataclass(frozen=True)
class Demo:
    keyspace: str
    #: The demo's dictionaries (demo.zstd-dict, demo.zlib-dict), for --dictionary.
    dictionaries: Path
    #: The connection arguments of the server (the login is in HOME's credentials file).
    conn: tuple[str, ...]

    @property
    def dictionary_args(self) -> list[str]:
        return [arg for name in ("demo.zstd-dict", "demo.zlib-dict")
                for arg in ("--dictionary", str(self.dictionaries / name))]


@pytest.fixture(scope="session")
def assistant_login(cassandra) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    session = cassandra.session()
    session.execute(f"CREATE ROLE IF NOT EXISTS {ASSISTANT} WITH PASSWORD = '{ASSISTANT_PASSWORD}' "
                    "AND LOGIN = true")
    session.shutdown()
    return ASSISTANT, ASSISTANT_PASSWORD


@pytest.fixture(scope="session")
def demo(cassandra, tmp_path_factory: pytest.TempPathFactory) -> Demo:  # type: ignore[no-untyped-def]
    """The demo keyspace (cqlsh-ext demo load, 200 documents per JSON table) and its dictionaries."""
    keyspace = f"mcp_assist_{os.getpid()}"
    dictionaries = tmp_path_factory.mktemp("demo-dictionaries")
    load_demo(cassandra, keyspace, 200, tmp_path_factory.mktemp("demo-home"),
              "--dictionaries", str(dictionaries))
    return Demo(keyspace, dictionaries, (cassandra.host, str(cassandra.port)))


@pytest.fixture
def assistant_home(tmp_path: Path, assistant_login: tuple[str, str]) -> Path:
    """A HOME whose ~/.cassandra/credentials log in as the assistant."""
    write_credentials(tmp_path, *assistant_login)
    return tmp_path


@pytest.fixture
def serve(demo: Demo, assistant_home: Path) -> Iterator:  # type: ignore[type-arg]
    """serve(*args) -> a started McpServer on the demo's Cassandra (closed after the test)."""
    started: list[McpServer] = []

    def start(*args: str, home: Path | None = None, env: dict[str, str] | None = None) -> McpServer:
        server = McpServer([*demo.conn, *args], home or assistant_home, env=env)
        started.append(server.__enter__())
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)
