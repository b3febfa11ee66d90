"""`cqlsh-ext mcp`, driven by the MCP SDK's own client over stdio, on the demo data:

  first answer   from starting the server (the client spawns it) to the first tool answer
                 (list_keyspaces), against the shell's `-e` of the same statement from its start
  100 rows       `query` of a 100-row SELECT on a running server, against `cqlsh-ext -e` with the
                 same statement (a process per statement: what a script pays), and the answer's bytes
  memory         the server's peak resident set (VmHWM) after 100 and after --calls calls of a mix
                 of tools (rows, a payload GROUP BY, DESCRIBE TABLE, INSPECT, the refused write)

Medians of --repeat rounds. Figures only: nothing is asserted.

    .venv/bin/python bench/mcp.py [--repeat 5] [--calls 1000] [--host H --port P]

Without --host it starts (and afterwards stops) its own Cassandra from tools/devcassandra.py on
free ports, its data kept in .cache/bench-cassandra-mcp, and loads the demo keyspace there once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This file's own folder leaves the path: `import mcp` must find the SDK, not this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import devcassandra  # noqa: E402

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "compression_demo"
#: 100 rows, each a few paths of a decoded order (whole orders, about 3 KB each, pass the answer's cap).
HUNDRED = (f"SELECT id, data.orderId, data.status, data.customer, data.payment FROM "
           f"{KEYSPACE}.table_with_compressed_json LIMIT 100")
FIRST = "SELECT keyspace_name FROM system_schema.keyspaces"


def start_server() -> tuple[devcassandra.Instance, int]:
    directory = ROOT / ".cache" / "bench-cassandra-mcp"
    for attempt in range(3):
        native, storage, jmx = devcassandra.free_ports(3)
        instance = devcassandra.Instance(devcassandra.Config(directory=directory, native_port=native,
                                                             storage_port=storage, jmx_port=jmx,
                                                             cluster_name="cqlsh-ext bench"))
        if instance.is_running():
            raise SystemExit(f"a Cassandra already runs in {directory}: stop it (bin/dev-cassandra stop "
                             f"--dir {directory}) or give --host and --port")
        print(f"starting Cassandra on 127.0.0.1:{native} ...", flush=True)
        try:
            instance.start(die_with_parent=True)
            return instance, native
        except devcassandra.PortsInUse:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CQLSH_", "CQL_")) or k == "CQLSH_EXT_NATIVE"}
    env["HOME"] = home
    return env


def _credentials(home: str) -> None:
    directory = Path(home) / ".cassandra"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "credentials").write_text("[plain_text_auth]\nusername = cassandra\npassword = cassandra\n")
    os.chmod(directory / "credentials", 0o600)


def shell_seconds(host: str, port: int, statement: str, home: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run([CQLSH_EXT, host, str(port), "--output-format", "json", "-e", statement],
                          capture_output=True, text=True, env=_env(home), timeout=300)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return took


def _server_pid() -> int:
    """The `cqlsh-ext mcp` process the client spawned: our child."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp" in cmdline:
            return int(entry.name)
    raise RuntimeError("the server process was not found")


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def run(host: str, port: int, repeat: int, calls: int) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = tempfile.mkdtemp(prefix="bench-mcp-")
    _credentials(home)
    params = StdioServerParameters(command=CQLSH_EXT, args=["mcp", host, str(port)], env=_env(home))
    med = statistics.median

    async def first_answer() -> float:
        started = time.perf_counter()
        with open(os.devnull, "w") as errors:
            async with Client(stdio_client(params, errlog=errors), mode="legacy", cache=None) as client:
                result = await client.call_tool("list_keyspaces", {})
                took = time.perf_counter() - started
                assert not result.is_error, result.content
        return took

    firsts = [anyio.run(first_answer) for _ in range(repeat)]
    shells = [shell_seconds(host, port, FIRST, home) for _ in range(repeat)]
    print(f"first answer from start: server {med(firsts):.2f} s (list_keyspaces); the shell's -e of the "
          f"same SELECT {med(shells):.2f} s")

    mix = [("query", {"statement": HUNDRED}),
           ("list_tables", {"keyspace": KEYSPACE}),
           ("query", {"statement": f"SELECT data.status, count(*) FROM {KEYSPACE}.table_with_compressed_json"
                                   " GROUP BY data.status ALLOW FILTERING"}),
           ("describe_table", {"table": f"{KEYSPACE}.blob_formats"}),
           ("inspect_value", {"statement": f"SELECT data FROM {KEYSPACE}.blob_formats WHERE name = 'zstd'"}),
           ("query", {"statement": f"DELETE FROM {KEYSPACE}.blob_formats WHERE name = 'zstd'"})]

    async def warm() -> None:
        with open(os.devnull, "w") as errors:
            async with Client(stdio_client(params, errlog=errors), mode="legacy", cache=None) as client:
                await client.call_tool("list_keyspaces", {})
                hundred, sizes = [], []
                for _ in range(repeat * 4):
                    started = time.perf_counter()
                    result = await client.call_tool("query", {"statement": HUNDRED})
                    hundred.append(time.perf_counter() - started)
                    assert result.structured_content["count"] == 100, result.content[0].text[-300:]
                    sizes.append(len(result.content[0].text.encode()))
                script = [shell_seconds(host, port, HUNDRED, home) for _ in range(repeat)]
                print(f"100-row query: server {med(hundred) * 1000:.0f} ms a call (answer "
                      f"{med(sizes) / 1024:.0f} KiB); the shell's -e {med(script) * 1000:.0f} ms "
                      f"({med(script) / med(hundred):.1f} x)")
                pid = _server_pid()
                peaks = {}
                started = time.perf_counter()
                for i in range(calls):
                    tool, arguments = mix[i % len(mix)]
                    result = await client.call_tool(tool, arguments)
                    if result.is_error != (i % len(mix) == len(mix) - 1):
                        raise RuntimeError(f"{tool}: {result.content[0].text[-300:]}")
                    if i + 1 in (100, calls):
                        peaks[i + 1] = _peak_kib(pid)
                took = time.perf_counter() - started
                print(f"memory: peak resident set {peaks[100] / 1024:.0f} MiB after 100 calls, "
                      f"{peaks[calls] / 1024:.0f} MiB after {calls:,} ({calls / took:.0f} calls/s over "
                      "the mix)")

    anyio.run(warm)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--host", default=None,
                   help="use a running server (the demo data loaded if missing) instead of starting one")
    p.add_argument("--port", type=int, default=9042, help="the running server's CQL port (with --host)")
    args = p.parse_args()
    instance = None
    host, port = args.host or "127.0.0.1", args.port
    if args.host is None:
        instance, port = start_server()
    try:
        with tempfile.TemporaryDirectory() as home:
            _credentials(home)
            subprocess.run([CQLSH_EXT, "demo", "load", "--if-missing", host, str(port)], env=_env(home),
                           check=True, timeout=600)
        run(host, port, args.repeat, max(100, args.calls))
    finally:
        if instance is not None:
            instance.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
