"""`cqlsh-ext mcp` driven by the MCP SDK's own client over stdio, as an assistant drives it, from
synchronous tests: the client runs in an event loop of its own (anyio's blocking portal), each call
is a Future (cancelled: the client cancels the call, `notifications/cancelled`).

Every byte the server writes is kept for the tests to read: its standard output (the protocol's
wire, copied as it passes by a small tee between client and server) and its standard error (its
log): `written()`.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import Future
from dataclasses import dataclass
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
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        log.write(chunk)
        log.flush()
    sys.exit(proc.wait())
"""


@dataclass
class Result:
    """A tool's answer as the client received it."""

    texts: list[str]
    structured: Any
    is_error: bool

    @property
    def data(self) -> Any:
        """The answer's JSON, from its text (which must parse), checked equal to the structured content."""
        assert not self.is_error, self.texts
        parsed = json.loads(self.texts[0])
        assert parsed == self.structured
        return parsed

    @property
    def error(self) -> str:
        assert self.is_error, self.texts
        assert self.structured is None
        return self.texts[0]


class McpServer:
    """`cqlsh-ext mcp *args` with HOME `home` (or `command` *args: `docker run -i ... mcp`); use as a
    context manager."""

    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None,
                 mode: str = "legacy", command: list[str] | None = None) -> None:
        self.args = args
        self.command = command or [CQLSH_EXT, "mcp"]
        self.home = home
        self.env = {**isolated_env(home), **(env or {})}
        self.mode = mode
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
        self._client_cm = self.portal.wrap_async_context_manager(
            Client(stdio_client(params, errlog=self._errors), mode=self.mode, cache=None))
        try:
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
        return Result([block.text for block in result.content], result.structured_content, result.is_error)

    def written(self) -> bytes:
        """Every byte the server wrote so far: the protocol's and the log's."""
        return self.wire.read_bytes() + self.log.read_bytes()

    def logged(self) -> str:
        return self.log.read_text()


def shell_json(args: list[str], statement: str, home: Path) -> tuple[list[Any], list[str]]:
    """What `cqlsh-ext ARGS --output-format json -e STATEMENT` prints: its JSON lines, parsed, and
    its standard error's lines."""
    run = run_binary(CQLSH_EXT, [*args, "--output-format", "json", "-e", statement], home)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    return lines, [line for line in run.stderr.splitlines() if line.strip()]


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
