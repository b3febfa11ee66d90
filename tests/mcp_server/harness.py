"""`cqlsh-ext mcp` driven by the MCP SDK's own client over stdio, as an assistant drives it, from
synchronous tests: the client runs in an event loop of its own (anyio's blocking portal), each call
is a Future (cancelled: the client cancels the call, `notifications/cancelled`).

Every byte the server writes is kept for the tests to read: its standard output (the protocol's
wire, copied as it passes by a small tee between client and server) and its standard error (its
log): `written()`.

`revision` picks the protocol's revision the client speaks, as a client of it does: None (the
SDK's client in its legacy mode: the initialize handshake, offering the newest handshake revision),
"2025-06-18" (the same, offering that revision), or "2026-07-28" (the SDK's default mode:
`server/discover`, then the stateless requests of the revision the server names).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shell_runner import CQLSH_EXT, isolated_env
from shell_runner import run as run_binary

#: Runs argv[2:], its standard output copied to the client and to the file argv[1] as it comes.
TEE = """
import subprocess, sys
with open(sys.argv[1], "wb") as log:
    proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE)
    for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):
        log.write(chunk)  # the copy first: what the client has received, the test can read
        log.flush()
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    sys.exit(proc.wait())
"""


@dataclass(frozen=True)
class Framed:
    """A data answer's text block as the server frames it: the summary's line, the answer's JSON
    (one line), the notes (a line each), the summary's line again."""

    summary: dict[str, Any]
    data: Any
    notes: list[str]


def framed(text: str) -> Framed:
    """The text block read (Framed); its first and last lines must be one summary, of the answer
    its JSON line holds (its rows or values, truncated, cursor), computed here from that JSON."""
    lines = text.split("\n")
    assert len(lines) >= 3, text[:200]
    first, last = json.loads(lines[0]), json.loads(lines[-1])
    assert first == last and list(first) == ["summary"], (lines[0], lines[-1])
    data = json.loads(lines[1])
    summary = first["summary"]
    count = data.get("count")
    assert summary == {"rows": count if isinstance(count, int) else None, "exact": summary["exact"],
                       "truncated": data.get("truncated", False), "cursor": data.get("cursor")}, summary
    if data.get("truncated") or data.get("stopped"):
        assert summary["exact"] is False
    return Framed(summary, data, lines[2:-1])


def answer_json(text: str) -> Any:
    """The answer's JSON in its text block (framed)."""
    return framed(text).data


@dataclass
class Result:
    """A tool's answer as the client received it."""

    texts: list[str]
    structured: Any
    is_error: bool
    #: Its resource_link blocks (an export's file).
    links: list[Any] = field(default_factory=list)

    @property
    def data(self) -> Any:
        """The answer's JSON, from its one text block (framed by its summary, which must parse),
        checked equal to the structured content."""
        assert not self.is_error, self.texts
        assert len(self.texts) == 1, self.texts
        parsed = answer_json(self.texts[0])
        assert parsed == self.structured
        return parsed

    @property
    def error(self) -> str:
        assert self.is_error, self.texts
        assert self.structured is None
        return self.texts[0]


#: The revisions the tests speak: the one before structured tools' every change (2025-06-18) and
#: the current, stateless one (2026-07-28).
REVISIONS = ("2025-06-18", "2026-07-28")


@contextmanager
def speaking(revision: str | None) -> Iterator[str]:
    """The SDK's Client `mode` for `revision` (the module's docstring), while it connects: a
    handshake revision is offered in its initialize (the SDK offers its newest one otherwise)."""
    from unittest import mock

    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    if revision is None:
        yield "legacy"
    elif revision in HANDSHAKE_PROTOCOL_VERSIONS:
        with mock.patch("mcp.client.session.LATEST_HANDSHAKE_VERSION", revision):
            yield "legacy"
    else:
        yield "auto"


class McpServer:
    """`cqlsh-ext mcp *args` with HOME `home` (or `command` *args: `docker run -i ... mcp`); use as a
    context manager."""

    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None,
                 revision: str | None = None, command: list[str] | None = None) -> None:
        self.args = args
        self.command = command or [CQLSH_EXT, "mcp"]
        self.home = home
        self.env = {**isolated_env(home), **(env or {})}
        self.revision = revision
        home.mkdir(parents=True, exist_ok=True)
        self.wire = home / "mcp-stdout.bin"
        self.log = home / "mcp-stderr.log"

    def __enter__(self) -> McpServer:
        import anyio.from_thread
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        params = StdioServerParameters(command=sys.executable,
                                       args=["-c", TEE, str(self.wire), *self.command, *self.args],
                                       env=self.env)
        self._errors = open(self.log, "w")  # noqa: SIM115 - closed in __exit__
        try:
            with speaking(self.revision) as mode:
                self._client_cm = self.portal.wrap_async_context_manager(
                    Client(stdio_client(params, errlog=self._errors), mode=mode, cache=None))
                self.client = self._client_cm.__enter__()
        except Exception as err:
            self._portal_cm.__exit__(None, None, None)
            self._errors.close()
            raise AssertionError(f"cqlsh-ext mcp did not start ({err}); it said:\n{self.logged()}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._errors.close()

    def tools(self) -> list[Any]:
        return list(self.portal.call(self.client.list_tools).tools)

    def start(self, tool: str, **arguments: Any) -> Future[Result]:
        return self.portal.start_task_soon(self._call, tool, arguments)

    def call(self, tool: str, timeout: float = 180, **arguments: Any) -> Result:
        return self.start(tool, **arguments).result(timeout)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Result:
        result = await self.client.call_tool(tool, arguments)
        return Result([block.text for block in result.content if block.type == "text"],
                      result.structured_content, result.is_error,
                      [block for block in result.content if block.type == "resource_link"])

    def keyspaces(self) -> set[str]:
        """The keyspaces list_keyspaces lists, each cut answer's cursor followed: a test server reused
        by many runs holds more keyspaces than one answer's bytes."""
        answer = self.call("list_keyspaces").data
        names = {row["keyspace_name"] for row in answer["rows"]}
        for _ in range(100):
            if "cursor" not in answer:
                return names
            answer = self.call("list_keyspaces", cursor=answer["cursor"]).data
            names |= {row["keyspace_name"] for row in answer["rows"]}
        raise AssertionError("list_keyspaces: 100 answers and still a cursor")

    def written(self) -> bytes:
        """Every byte the server wrote so far: the protocol's and the log's."""
        return self.wire.read_bytes() + self.log.read_bytes()

    def logged(self) -> str:
        return self.log.read_text()


def shell_json(args: list[str], statement: str, home: Path) -> tuple[list[Any], list[str]]:
    """What `cqlsh-ext ARGS --output-format json -e STATEMENT` prints: its JSON lines, parsed, and
    what its standard error says, a line each (an error is a JSON object there, docs/agents.md:
    its message)."""
    run = run_binary(CQLSH_EXT, [*args, "--output-format", "json", "-e", statement], home)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    said = [str(json.loads(line)["message"]) if line.startswith("{") else line
            for line in run.stderr.splitlines() if line.strip()]
    return lines, said


def shell_text(args: list[str], statement: str, home: Path) -> str:
    run = run_binary(CQLSH_EXT, [*args, "--output-format", "json", "-e", statement], home)
    assert run.returncode == 0, run.stderr
    return run.stdout


def write_credentials(home: Path, username: str, password: str) -> Path:
    """~/.cassandra/credentials, as cqlsh reads it by default (mode 600)."""
    import os

    directory = home / ".cassandra"
    directory.mkdir(parents=True, exist_ok=True)
    creds = directory / "credentials"
    creds.write_text(f"[plain_text_auth]\nusername = {username}\npassword = {password}\n")
    os.chmod(creds, 0o600)
    return creds


def server_pid(parent: int | None = None, besides: frozenset[int] = frozenset()) -> int:
    """The pid of the `cqlsh-ext mcp` process this test process started (through the tee, or
    directly): a process whose command line runs cqlsh-ext's mcp, a child or grandchild of ours;
    `besides`: the servers started before it and still running (server_pids())."""
    found = [pid for pid in server_pids(parent) if pid not in besides]
    assert len(found) == 1, f"cqlsh-ext mcp processes found: {found}"
    return found[0]


def server_pids(parent: int | None = None) -> list[int]:
    """Every `cqlsh-ext mcp` process this test process started and still running (server_pid)."""
    import os

    ours = os.getpid() if parent is None else parent
    children: dict[int, list[int]] = {}
    commands: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    def serving(argv: list[str]) -> bool:  # the script run by its interpreter: [python,] cqlsh-ext mcp
        at = next((i for i, arg in enumerate(argv[:2]) if arg.endswith("cqlsh-ext")), None)
        return at is not None and argv[at + 1:at + 2] == ["mcp"]

    return [pid for child in children.get(ours, []) for pid in [child, *children.get(child, [])]
            if serving(commands.get(pid, []))]


def memory_kib(pid: int, field: str = "VmHWM") -> int:
    """A process's resident memory from /proc (VmHWM: its peak so far; VmRSS: now), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


class HttpMcpServer:
    """`cqlsh-ext mcp ... --http 127.0.0.1:PORT *args`, its log in HOME; `client(headers)` connects
    the SDK's Streamable HTTP client as an assistant on another host would (use as context managers)."""

    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None,
                 host: str = "127.0.0.1") -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1" if host == "0.0.0.0" else host, 0))
            self.port = int(s.getsockname()[1])
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = {**isolated_env(home), **(env or {})}
        self.args = [*args, "--http", f"{host}:{self.port}"]
        self.log = home / "mcp-http.log"
        self.url = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{self.port}/mcp"

    def __enter__(self) -> HttpMcpServer:
        import subprocess
        import time

        self._log = open(self.log, "w")  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen([CQLSH_EXT, "mcp", *self.args], stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 120
        while "serving MCP over Streamable HTTP" not in self.log.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise AssertionError(f"cqlsh-ext mcp --http did not start; it said:\n{self.log.read_text()}")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except Exception:  # noqa: BLE001 - it must go
            self.proc.kill()
        self._log.close()

    def client(self, headers: dict[str, str] | None = None, url: str | None = None,
               verify: Any = True, cert: Any = None, revision: str | None = None) -> HttpClient:
        return HttpClient(url or self.url, headers or {}, verify, cert, revision)


class HttpClient:
    """The SDK's client over Streamable HTTP, driven from synchronous tests (a blocking portal)."""

    def __init__(self, url: str, headers: dict[str, str], verify: Any, cert: Any,
                 revision: str | None = None) -> None:
        self.url, self.headers, self.verify, self.cert = url, headers, verify, cert
        self.revision = revision

    def __enter__(self) -> HttpClient:
        import anyio.from_thread
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        http = httpx2.AsyncClient(headers=self.headers, timeout=120, verify=self.verify, cert=self.cert)
        try:
            with speaking(self.revision) as mode:
                self._client_cm = self.portal.wrap_async_context_manager(
                    Client(streamable_http_client(self.url, http_client=http), mode=mode, cache=None))
                self.client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)

    def tools(self) -> list[Any]:
        return list(self.portal.call(self.client.list_tools).tools)

    def call(self, tool: str, **arguments: Any) -> Result:
        async def go() -> Result:
            result = await self.client.call_tool(tool, arguments)
            texts = [block.text for block in result.content if block.type == "text"]
            links = [block for block in result.content if block.type == "resource_link"]
            return Result(texts, result.structured_content, result.is_error, links)

        return self.portal.call(go)
