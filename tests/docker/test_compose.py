"""docker-compose.yml brought up for real: Cassandra, the one-shot demo loader and the shell.

The public images it names (cassandra:5, and python:3.11-slim-bookworm under the Dockerfile) come
from registries these machines cannot reach: tools/docker/stand-ins makes local stand-ins with the
same names first (bin/test runs it through tools/docker/setup). The compose file itself runs
unchanged, with Debian bookworm's docker-compose 1.29 (Compose v2 is not in Debian's packages).
Each run has its own project name and host port, and ends with `down -v`.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pytest
from docker_fixtures import docker  # noqa: F401  (fixtures)
from dockerlib import ENABLED, SETUP_HINT, run

ROOT = Path(__file__).resolve().parents[2]
SHELL_IMAGE = "cqlsh-ext:local"  # what the compose file's build: . makes

pytestmark = pytest.mark.skipif(
    not ENABLED, reason="Docker tests are on with CI=true or CQLSH_EXT_DOCKER_TESTS=1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    compose: list[str]
    env: dict[str, str]
    project: str
    timings: dict[str, float] = field(default_factory=dict)

    def __call__(self, *args: str, timeout: float = 300,
                 check: bool = True) -> subprocess.CompletedProcess[str]:
        return run([*self.compose, *args], timeout=timeout, check=check, env=self.env, cwd=ROOT)

    def timed(self, step: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        start = time.monotonic()
        proc = self(*args, timeout=timeout)
        self.timings[step] = time.monotonic() - start
        return proc

    def leftovers(self) -> list[str]:
        label = f"label=com.docker.compose.project={self.project}"
        found = []
        for kind in (["ps", "-a"], ["volume", "ls"], ["network", "ls"]):
            out = run(["docker", *kind, "-q", "--filter", label]).stdout.split()
            found += [f"{kind[0]} {item}" for item in out]
        return found


@pytest.fixture(scope="module")
def stack(docker: str) -> Iterator[Stack]:
    tool = shutil.which("docker-compose")
    if tool is None:
        pytest.fail(f"Docker tests are on, but docker-compose is not installed: {SETUP_HINT}", pytrace=False)
    for image in ("cassandra:5", "python:3.11-slim-bookworm"):
        if subprocess.run([docker, "image", "inspect", image], capture_output=True).returncode != 0:
            pytest.fail(f"no {image} stand-in in the local engine: run tools/docker/stand-ins", pytrace=False)
    # The shell's image, built as the compose file's `build: .` would, but with host networking
    # (this engine has no default bridge for RUN steps); compose then finds it and does not rebuild.
    start = time.monotonic()
    run([docker, "build", "--quiet", "--network", "host", "--tag", SHELL_IMAGE, str(ROOT)], timeout=1200)
    project = f"cqlshext{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CQLSH_EXT_COMPOSE_PORT": str(_free_port()), "COMPOSE_PROJECT_NAME": project}
    s = Stack([tool, "--project-name", project], env, project,
              {"build the shell image": time.monotonic() - start})
    try:
        yield s
    finally:
        s("--profile", "mcp", "down", "-v", "--remove-orphans", check=False)


def test_first_run_starts_cassandra_loads_the_demo_and_decodes(stack: Stack):
    out = stack.timed("first run: start, healthy, load, query", "run", "--rm", "shell", "-e",
                      "SELECT name, data FROM compression_demo.blob_formats WHERE name = 'gzip'").stdout
    assert '[gzip] {"orderId":"ORD-' in out and "(1 rows)" in out
    logs = stack("logs", "--no-color", "demo-data").stdout
    assert "compression_demo.blob_formats: 20 rows" in logs


def test_second_run_finds_the_demo_loaded(stack: Stack):
    out = stack.timed("second run", "run", "--rm", "shell", "-e",
                      "SELECT name, data FROM compression_demo.blob_formats WHERE name IN ('snappy raw', "
                      "'zstd dictionary', 'zlib preset dictionary')").stdout
    assert "snappy raw" in out
    # The demo's dictionaries, named by the shell service as bin/demo names them: decoded, not hex.
    # (cqlsh pads each column to its widest value: the spaces around the bar vary)
    assert re.search(r'zstd dictionary\s*\|\s*\[zstd\] \{"orderId":"ORD-', out), out
    assert re.search(r'zlib preset dictionary\s*\|\s*\[zlib\] \{"orderId":"ORD-', out), out
    logs = stack("logs", "--no-color", "demo-data").stdout
    assert "demo data already loaded" in logs
    assert logs.count("blob_formats: 20 rows") == 1  # loaded once, not twice


def test_interactive_shell_in_a_terminal(stack: Stack):
    start = time.monotonic()
    child = pexpect.spawn(stack.compose[0], [*stack.compose[1:], "run", "--rm", "shell"], env=stack.env,
                          cwd=str(ROOT), encoding="utf-8", timeout=120, dimensions=(40, 160))
    try:
        child.expect(r"cqlsh:compression_demo>")
        stack.timings["interactive: prompt"] = time.monotonic() - start
        child.sendline("SELECT name FROM blob_formats WHERE name = 'zstd';")
        child.expect(r"\(1 rows\)")
        child.sendline("EXIT")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_the_mcp_service_serves_over_http_with_its_token(stack: Stack):
    """`docker compose --profile mcp up -d mcp`: cqlsh-ext mcp --http beside the stack's Cassandra,
    published on loopback; the SDK's HTTP client reaches it with the token, and is refused without."""
    import secrets

    import httpx2
    from mcp_server.harness import HttpClient

    token = secrets.token_urlsafe(32)
    port = _free_port()
    stack.env.update({"CQLSH_EXT_MCP_TOKEN": token, "CQLSH_EXT_MCP_PORT": str(port)})
    stack.timed("mcp service up, healthy", "--profile", "mcp", "up", "-d", "mcp", timeout=600)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                break
        except httpx2.HTTPError:
            pass
        assert time.monotonic() < deadline, stack("logs", "--no-color", "mcp", check=False).stdout
        time.sleep(1)
    with HttpClient(url, {"Authorization": f"Bearer {token}"}, True, None) as client:
        tables = client.call("list_tables", keyspace="compression_demo").data
        assert [row["table_name"] for row in tables["rows"]] == [
            "blob_formats", "nested_blobs", "table_with_compressed_json", "table_with_uncompressed_json"]
        answer = client.call("query", statement="SELECT data.status, count(*) FROM "
                                                "table_with_compressed_json GROUP BY data.status "
                                                "ALLOW FILTERING").data
        assert sum(row["count"] for row in answer["rows"]) == 2000
    refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401
    assert token not in stack("logs", "--no-color", "mcp").stdout
    stack("--profile", "mcp", "stop", "mcp")


def test_down_leaves_nothing_behind(stack: Stack, capsys: pytest.CaptureFixture[str]):
    stack.timed("down -v", "--profile", "mcp", "down", "-v", "--remove-orphans")
    assert stack.leftovers() == []
    with capsys.disabled():
        print("\n[compose] " + ", ".join(f"{step} {seconds:.1f}s" for step, seconds in stack.timings.items()))
