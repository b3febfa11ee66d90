"""A server that never answers, and a server that goes away during a session and comes back."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import devcassandra
import pexpect
import pytest

from .conftest import write_credentials
from .proxy import SilentServer
from .terminal import TIMEOUT, Term, printed


def _messages(text: str) -> list[str]:
    """The messages on a terminal: a message wider than the screen wraps at words, its later rows
    indented under it (common.text.message)."""
    messages: list[str] = []
    for line in text.splitlines():
        if line.startswith("    ") and messages:
            messages[-1] += " " + line.strip()
        elif line.strip():
            messages.append(line.strip())
    return messages


def test_connection_timeout_is_one_line(tmp_path: Path):
    with SilentServer() as server:
        t = Term(["127.0.0.1", str(server.port), "--connect-timeout", "2"], tmp_path)
        try:
            t.expect(rf"Connection error: timed out connecting to 127\.0\.0\.1:{server.port} after 2 s "
                     r"\(--connect-timeout\): check [^\n]*\n")
            t.child.expect(pexpect.EOF, timeout=TIMEOUT)
            t.child.wait()
            # The message names the 2 s timeout; a hang would fail the expects above (no clock here).
            assert t.child.exitstatus == 1
            assert len(_messages(t.text)) == 1, t.text
        finally:
            t.close()


def test_a_mistyped_host_is_one_line(tmp_path: Path):
    # The real resolver's failure (.invalid never resolves), in the interactive shell.
    t = Term(["nosuchhost.invalid"], tmp_path)
    try:
        t.expect(r"Connection error: the host name in nosuchhost\.invalid:9042 does not resolve [^\n]*\n")
        t.child.expect(pexpect.EOF, timeout=TIMEOUT)
        t.child.wait()
        assert t.child.exitstatus == 1
        assert len(_messages(t.text)) == 1, t.text
    finally:
        t.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devcassandra.Instance]:
    """A Cassandra of this test's own: stopping it must not disturb the shared one."""
    config = devcassandra.Config(directory=tmp_path_factory.mktemp("restart-cassandra"),
                                 native_port=_free_port(), storage_port=_free_port(), jmx_port=_free_port(),
                                 cluster_name="cqlsh-ext restart test", heap="512M")
    instance = devcassandra.Instance(config)
    instance.start(timeout=180, die_with_parent=True)
    try:
        yield instance
    finally:
        instance.stop()


@pytest.mark.server
def test_server_stopped_and_restarted_during_a_session(own_server: devcassandra.Instance, tmp_path: Path):
    config = own_server.config
    write_credentials(tmp_path, config.username or "", config.password or "")
    t = Term([config.host, str(config.native_port)], tmp_path)
    try:
        t.prompt()
        t.run("SELECT cluster_name FROM system.local;")
        own_server.stop()
        start = len(t.text)
        t.run("SELECT cluster_name FROM system.local;", until=r"NoHostAvailable[^\n]*\n")
        t.prompt()
        # One message between the statement and the next prompt, and the shell is still there.
        report = t.text[start:].split("system.local;", 2)[-1]
        said = _messages("\n".join(printed(report)))
        assert len(said) == 1, report
        own_server.start(timeout=180, die_with_parent=True, move_internal_ports=True)
        # Back: the driver reconnects within seconds (the shell shortens its back-off).
        deadline = time.monotonic() + 60
        while True:
            out = t.run("SELECT cluster_name FROM system.local;",
                        until=r"\(1 rows\)|NoHostAvailable[^\n]*\n|OperationTimedOut[^\n]*\n")
            if "(1 rows)" in out:
                break
            assert time.monotonic() < deadline, "the shell did not get the server back within 60 s"
            t.prompt()
            time.sleep(1)  # a person retrying, not a synchronisation
        assert "cqlsh-ext restart test" in out
        assert t.exit() == 0
    finally:
        t.close()
