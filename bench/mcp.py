"""`cqlsh-ext mcp`, driven by the MCP SDK's own client over stdio, on the demo data:

  first answer   from starting the server (the client spawns it) to the first tool answer
                 (list_keyspaces), against the shell's `-e` of the same statement from its start
  100 rows       `query` of a 100-row SELECT on a running server, against `cqlsh-ext -e` with the
                 same statement (a process per statement: what a script pays), and the answer's bytes
  memory         the server's peak resident set (VmHWM) after 100 and after --calls calls of a mix
                 of tools (rows, a payload GROUP BY, DESCRIBE TABLE, INSPECT, the refused write)
  answer bytes   the default answer (10,000-byte cap) of a 100-row query of the demo's compressed JSON,
                 whole documents and four paths, measured on the message line the client received
  after cancel   a payload scan of a 60,000-row table cancelled after a second: the time from the
                 cancellation to the next call's answer, against that call on an idle server
  CPU a row      (--per-row) `query`'s CPU a row on a running server, the whole server process
                 (its threads' CPU time, the SDK, the event loop and the answer's bytes included,
                 its reaped children's too) between a call of SMALL_CALL (10) rows and one of as
                 many rows as one answer of --per-row-bytes holds (at most 1,000): the difference
                 over the rows between, so a call's own start (parsing, planning, the request) is
                 not counted as rows; against the Python API's `db.query(...).records()` of the
                 same two statements (LIMIT 10, LIMIT N) in a process of its own (getrusage,
                 children included, around each call), measured the same way; the calls
                 alternating, in one run: the whole blob (a plain SELECT) and a payload query's
                 paths with the blob; with
                 --before, another checkout's tree's two readers in the same rounds; with --after,
                 the "after" side's readers are a tree's too (`git archive` of a commit, or of the
                 commit with one's own diff applied), not this checkout's, whose other files may
                 hold others' uncommitted work

Medians of --repeat rounds. Figures only: nothing is asserted. `--show` prints one real call and its
answer (abridged) for each of: a call stopped by its time limit (plain rows, GROUP BY, COMPRESSION
STATS, DESCRIBE PAYLOAD), the cap and max_bytes, a value cut inside the answer, a cursor walk and
refused cursors, the output schemas' spellings and describe_payload's JSON Schema.

    .venv/bin/python bench/mcp.py [--repeat 5] [--calls 1000] [--show] [--host H --port P]
        [--per-row [--per-row-only] [--per-row-bytes N] [--before TREE] [--after TREE]
         [--figures-json PATH]]

--figures-json: --per-row's figures written to PATH as JSON too (bench/goals.py reads them): {"rows":
{statement: rows}, "figures": {statement: {side: {"mcp": [us a row, ...], "api": [...]}}}}, a list
per reader of its rounds.

Without --host it starts (and afterwards stops) its own Cassandra from tools/devcassandra.py on
free ports, its data kept in .cache/bench-cassandra-mcp, and loads the demo keyspace there once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


def _server_pids() -> list[int]:
    """The `cqlsh-ext mcp` processes the clients spawned: our children."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp" in cmdline:
            found.append(int(entry.name))
    return found


def _server_pid() -> int:
    """The `cqlsh-ext mcp` process the client spawned: our child."""
    found = _server_pids()
    if not found:
        raise RuntimeError("the server process was not found")
    return found[0]


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

    mix = [("query", {"statement": HUNDRED, "max_bytes": 1 << 20}),
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
                    result = await client.call_tool("query", {"statement": HUNDRED, "max_bytes": 1 << 20})
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


#: Runs argv[2:], its standard output copied to the client and to the file argv[1] as it comes:
#: the protocol's wire, each answer's message line as the client reads it.
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
#: The table a cancelled scan and the stopped calls read: rows of the demo's documents, snappy.
BIG, BIG_ROWS = "bench_mcp_big", 60_000


def fill_big(host: str, port: int) -> None:
    """BIG.t, BIG_ROWS rows (once): an id and a snappy JSON document of 1-8 KB."""
    import snappy
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.concurrent import execute_concurrent_with_args

    from cqlsh_ext.demo.records import documents

    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    session = cluster.connect()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {BIG} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {BIG}.t (id int PRIMARY KEY, data blob)")
    if session.execute(f"SELECT id FROM {BIG}.t WHERE id = {BIG_ROWS - 1}").one() is None:
        print(f"loading {BIG_ROWS:,} rows into {BIG}.t ...", flush=True)
        docs = [snappy.compress(d.encode()) for d in documents(500, seed=56)]
        insert = session.prepare(f"INSERT INTO {BIG}.t (id, data) VALUES (?, ?)")
        execute_concurrent_with_args(session, insert, [(i, docs[i % len(docs)]) for i in range(BIG_ROWS)],
                                     concurrency=64, raise_on_first_error=True)
    cluster.shutdown()


class Wire:
    """The SDK's client over stdio on `cqlsh-ext mcp ARGS`, the wire copied to a file: `line()` is the
    last message the client received."""

    def __init__(self, host: str, port: int, home: str, *args: str) -> None:
        from mcp import StdioServerParameters

        self.path = Path(home) / f"wire-{os.getpid()}-{id(self)}.bin"
        argv = ["-c", TEE, str(self.path), CQLSH_EXT, "mcp", host, str(port), *args]
        self.params = StdioServerParameters(command=sys.executable, args=argv, env=_env(home))

    def client(self) -> Any:
        from mcp import Client
        from mcp.client.stdio import stdio_client

        return Client(stdio_client(self.params, errlog=open(os.devnull, "w")), mode="legacy", cache=None)

    def line(self) -> bytes:
        return self.path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]


def _data(result: Any) -> Any:
    return json.loads(result.content[0].text) if not result.is_error else {"error": result.content[0].text}


def _abridged(value: Any, items: int = 3, chars: int = 160) -> Any:
    """An answer for reading: lists to their first `items`, strings to `chars` characters."""
    if isinstance(value, list):
        return [_abridged(v, items, chars) for v in value[:items]] + ([f"... {len(value) - items} more"]
                                                                       if len(value) > items else [])
    if isinstance(value, dict):
        return {k: _abridged(v, items, chars) for k, v in value.items()}
    if isinstance(value, str) and len(value) > chars:
        return value[:chars] + "..."
    return value


def answers(host: str, port: int, home: str, repeat: int, show: bool) -> None:
    """The answer bytes, the time to the next answer after a cancelled scan, and (--show) the calls."""
    import anyio

    med = statistics.median
    orders = f"{KEYSPACE}.table_with_compressed_json"
    shown: list[tuple[str, str, dict[str, Any], Any]] = []

    def said(title: str, tool: str, arguments: dict[str, Any], result: Any) -> Any:
        data = _data(result)
        shown.append((title, tool, arguments, data))
        return data

    async def measure() -> None:
        wire = Wire(host, port, home)
        async with wire.client() as client:
            for statement in (f"SELECT * FROM {orders}",
                              f"SELECT id, data.orderId, data.status, data.customer.name FROM {orders}"):
                sizes, counts = [], []
                for _ in range(repeat):
                    result = await client.call_tool("query", {"statement": statement})
                    sizes.append(len(wire.line()))
                    counts.append(result.structured_content["count"])
                print(f"default answer of `{statement}` (limit 100): {med(sizes):,.0f} bytes as received, "
                      f"{med(counts):.0f} rows, cut: {result.structured_content['cut'] is not None}")
            if show:
                said("the default cap (10,000 bytes as received), cut with a cursor", "query",
                     {"statement": f"SELECT * FROM {orders}"},
                     await client.call_tool("query", {"statement": f"SELECT * FROM {orders}"}))
                shown[-1] = (*shown[-1][:3], {**shown[-1][3], "bytes_received": len(wire.line())})
                args = {"statement": f"SELECT id, data FROM {orders}", "max_bytes": 4096}
                data = said("max_bytes 4096: a row larger than the answer even with its values cut", "query",
                            args, await client.call_tool("query", args))
                data["bytes_received"] = len(wire.line())
                args = {"statement": f"SELECT id, data FROM {KEYSPACE}.table_with_uncompressed_json LIMIT 3",
                        "max_bytes": 2048}
                data = said("max_bytes 2048: the first row's values cut harder, the cuts said", "query", args,
                            await client.call_tool("query", args))
                data["bytes_received"] = len(wire.line())
                args = {"statement": f"SELECT id, data FROM {KEYSPACE}.table_with_uncompressed_json LIMIT 2"}
                said("long values cut inside the answer", "query", args,
                     await client.call_tool("query", args))
                walk = {"statement": f"SELECT id, data.status FROM {orders}", "limit": 80}
                first = said("a cursor walk: the first answer", "query", walk,
                             await client.call_tool("query", walk))
                rows = len(first["rows"])
                cursor = first.get("cursor")
                while cursor:
                    result = await client.call_tool("query", {**walk, "cursor": cursor})
                    data = _data(result)
                    rows += len(data["rows"])
                    if "cursor" not in data:
                        said("... and the last", "query", {**walk, "cursor": cursor}, result)
                    cursor = data.get("cursor")
                print(f"cursor walk of {walk['statement']}: {rows} rows in all")
                other = {"statement": f"SELECT id FROM {orders}", "cursor": first["cursor"]}
                said("a cursor given with another statement", "query", other,
                     await client.call_tool("query", other))
                tampered = first["cursor"][:-4] + ("AAAA" if not first["cursor"].endswith("AAAA") else "BBBB")
                args = {**walk, "cursor": tampered}
                said("a cursor altered", "query", args, await client.call_tool("query", args))
                args = {"statement": f"SELECT data.status, count(*) FROM {orders} GROUP BY data.status "
                                     "ALLOW FILTERING", "limit": 2}
                said("GROUP BY cut: no cursor, and why", "query", args, await client.call_tool("query", args))
                args = {"statement": f"SELECT name, data FROM {KEYSPACE}.blob_formats WHERE name IN "
                                     "('zstd', 'raw deflate', 'brotli')"}
                said("spellings: a blob decoded, values no detection reads", "query", args,
                     await client.call_tool("query", args))
                args = {"statement": f"SELECT data.status, count(*) FROM {KEYSPACE}.blob_formats GROUP BY "
                                     "data.status ALLOW FILTERING"}
                said("spellings: the undecodable group", "query", args, await client.call_tool("query", args))
                args = {"column": f"{orders}.data", "json_schema": True}
                said("describe_payload as JSON Schema", "describe_payload", args,
                     await client.call_tool("describe_payload", args))
                tools = (await client.list_tools()).tools
                query_tool = next(t for t in tools if t.name == "query")
                shown.append(("query's outputSchema (its $defs: how values are spelt)", "tools/list", {},
                              query_tool.output_schema["$defs"]))

    async def cancelled() -> None:
        wire = Wire(host, port, home)
        scan = {"statement": f"SELECT id FROM {BIG}.t WHERE data.status = 'NO SUCH STATUS' ALLOW FILTERING"}
        async with wire.client() as client:
            await client.call_tool("list_keyspaces", {})
            idle, after = [], []
            for _ in range(repeat):
                started = time.perf_counter()
                await client.call_tool("list_tables", {"keyspace": BIG})
                idle.append(time.perf_counter() - started)
            for _ in range(repeat):
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "query", scan)
                    await anyio.sleep(1.0)
                    group.cancel_scope.cancel()  # the client cancels: notifications/cancelled
                started = time.perf_counter()
                result = await client.call_tool("list_tables", {"keyspace": BIG})
                after.append(time.perf_counter() - started)
                assert not result.is_error
            print(f"after a cancelled scan: the next answer in {med(after) * 1000:.0f} ms (list_tables; "
                  f"on an idle server {med(idle) * 1000:.0f} ms; {os.getloadavg()[0]:.1f} load)")

    async def stopped() -> None:
        plain = {"statement": f"SELECT id FROM {BIG}.t", "limit": 10_000, "max_bytes": 1 << 20}
        async with Wire(host, port, home, "--time-limit", "0.3").client() as client:
            await client.call_tool("list_keyspaces", {})
            data = said("plain rows stopped by the time limit (0.3 s), with a cursor", "query", plain,
                        await client.call_tool("query", plain))
            if "cursor" in data:
                args = {**plain, "cursor": data["cursor"]}
                said("... continued with its cursor", "query", args, await client.call_tool("query", args))
        wire = Wire(host, port, home, "--time-limit", "2")
        async with wire.client() as client:
            for title, tool, args in (
                    ("GROUP BY stopped by the time limit", "query",
                     {"statement": f"SELECT data.status, count(*) FROM {BIG}.t GROUP BY data.status "
                                   "ALLOW FILTERING CONFIRM"}),
                    ("COMPRESSION STATS stopped by the time limit", "compression_stats",
                     {"table": f"{BIG}.t"}),
                    ("DESCRIBE PAYLOAD stopped by the time limit", "describe_payload",
                     {"column": f"{BIG}.t.data", "sample": 50_000})):
                said(title, tool, args, await client.call_tool(tool, args))

    anyio.run(measure)
    anyio.run(cancelled)
    if show:
        anyio.run(stopped)
        for title, tool, arguments, data in shown:
            shown_answer = json.dumps(_abridged(data), indent=1)
            print(f"\n### {title}\n{tool} {json.dumps(arguments)}\n-> {shown_answer}")


#: --per-row's goal: `query`'s CPU a row at most this many times the API's.
GOAL = 1.5
#: --per-row's two calls: SMALL_CALL rows, and as many as one answer holds, at most LARGE_CALL.
SMALL_CALL, LARGE_CALL = 10, 1000
#: The statements --per-row reads (the demo's compressed orders, ~3 KB each): the whole blob, a
#: payload query's paths with the blob (the plain road, the blob read with its paths), and paths
#: alone (the one whose 1,000 rows fit an answer of 1 MiB: a whole order is some 7 KB as JSON).
PER_ROW = (f"SELECT id, data FROM {KEYSPACE}.table_with_compressed_json",
           f"SELECT id, data.status, data.customer, data FROM {KEYSPACE}.table_with_compressed_json",
           f"SELECT id, data.status, data.customer FROM {KEYSPACE}.table_with_compressed_json")

#: The Python API's side of --per-row: a process of its own, connected once, reading each statement
#: it is given on stdin (`db.query(statement).records()`, every row taken) and answering the rows
#: and its CPU for the call (getrusage, children included) as one JSON line.
API_ROWS = r'''
import json, resource, sys
import cqlsh_ext
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
host, port = sys.argv[1:3]
with cqlsh_ext.connect(host, int(port), username="cassandra", password="cassandra") as db:
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        started = cpu()
        rows = sum(1 for _row in db.query(line.strip()).records())
        print(json.dumps({"rows": rows, "cpu": cpu() - started}), flush=True)
'''


def _process_cpu(pid: int) -> float:
    """A process's CPU seconds so far, its reaped children's included: its threads' time on a CPU
    in nanoseconds (/proc/PID/task/*/schedstat; /proc/PID/stat's utime and stime count clock ticks,
    10 ms, some 70 us a row of a 1 MiB answer), its children's from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    children = sum(int(fields[i]) for i in (13, 14)) / os.sysconf("SC_CLK_TCK")
    threads = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            threads += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):  # a thread that ended meanwhile (its time is not counted:
            continue                      # the call's figure is low, an outlier the median leaves)
    return threads / 1e9 + children


#: cqlsh-ext's command line run from another checkout's tree (--before): `python -P -c RUN_CLI ARGS`
#: with PYTHONPATH naming it (-P: the working directory's tree is not put before it).
RUN_CLI = "import sys; from cqlsh_ext.cli import run; sys.argv[0] = 'cqlsh-ext'; sys.exit(run())"


class RowsSide:
    """One tree's two readers of --per-row: its `cqlsh-ext mcp` (spawned by the SDK's client) and its
    Python API in a process of its own (API_ROWS), both with `pythonpath` (None: this tree's)."""

    def __init__(self, name: str, pythonpath: str | None, host: str, port: int, home: str) -> None:
        from mcp import StdioServerParameters

        self.name = name
        env = _env(home)
        python = [sys.executable]
        if pythonpath is not None:
            env["PYTHONPATH"], python = pythonpath, [sys.executable, "-P"]
        cli = [*python, "-c", RUN_CLI] if pythonpath is not None else [CQLSH_EXT]
        self.params = StdioServerParameters(command=cli[0], args=[*cli[1:], "mcp", host, str(port)], env=env)
        self.api = subprocess.Popen([*python, "-c", API_ROWS, host, str(port)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True, env=env)
        assert self.api.stdout is not None
        if "ready" not in json.loads(self.api.stdout.readline()):
            raise RuntimeError(f"{name}: the API's process did not connect")
        self.pid = 0

    def api_call(self, statement: str) -> tuple[int, float]:
        """The API's records() of `statement`: (rows, CPU seconds)."""
        assert self.api.stdin is not None and self.api.stdout is not None
        self.api.stdin.write(statement + "\n")
        self.api.stdin.flush()
        done = json.loads(self.api.stdout.readline())
        return done["rows"], done["cpu"]

    def close(self) -> None:
        assert self.api.stdin is not None
        self.api.stdin.close()
        self.api.wait(timeout=60)


def per_row(host: str, port: int, repeat: int, answer_bytes: int, before: str | None = None,
            after: str | None = None, figures_json: str | None = None) -> None:
    """`query`'s CPU a row against the Python API's, the calls alternating (the module doc); with
    `before` (a checkout's tree), that tree's two readers too, in the same rounds; `after`: the
    after side's tree (None: this checkout's); `figures_json`: the figures written there too."""
    from contextlib import AsyncExitStack

    import anyio
    from mcp import Client
    from mcp.client.stdio import stdio_client

    home = tempfile.mkdtemp(prefix="bench-mcp-rows-")
    _credentials(home)
    sides = [RowsSide("after", None if after is None else str(Path(after).resolve()), host, port, home)]
    if before is not None:
        # a tree, or a PYTHONPATH of several (a `git archive` tree, then its native core's directory)
        resolved = os.pathsep.join(str(Path(part).resolve()) for part in before.split(os.pathsep))
        sides.append(RowsSide("before", resolved, host, port, home))
    figures: dict[tuple[str, str, str], list[float]] = {}
    call_rows: dict[str, int] = {}

    async def measure() -> None:
        async with AsyncExitStack() as stack:
            errors = stack.enter_context(open(os.devnull, "w"))
            clients = []
            for side in sides:
                known = set(_server_pids())
                client = await stack.enter_async_context(
                    Client(stdio_client(side.params, errlog=errors), mode="legacy", cache=None))
                await client.call_tool("list_keyspaces", {})
                side.pid = (set(_server_pids()) - known).pop()
                clients.append(client)
            for statement in PER_ROW:
                arguments = {"statement": statement, "limit": LARGE_CALL, "max_bytes": answer_bytes}
                result = await clients[0].call_tool("query", arguments)  # the count a call answers
                rows = result.structured_content["count"]
                sizes = (SMALL_CALL, rows)
                call_rows[statement] = rows
                readers = [(side, client, reader) for side, client in zip(sides, clients, strict=True)
                           for reader in ("mcp", "api")]
                for round_ in range(repeat + 1):  # (the first round warms every reader, not counted)
                    turn = round_ % len(readers)
                    for side, client, reader in readers[turn:] + readers[:turn]:
                        spent: list[float] = []
                        for size in sizes:
                            if reader == "api":
                                got, cpu = side.api_call(f"{statement} LIMIT {size}")
                            else:
                                started = _process_cpu(side.pid)
                                result = await client.call_tool("query", {**arguments, "limit": size})
                                cpu = _process_cpu(side.pid) - started
                                got = result.structured_content["count"]
                            if got != size:
                                raise RuntimeError(f"{side.name} {reader}: {got} rows, not {size}: "
                                                   f"{statement}")
                            spent.append(cpu)
                        if round_:
                            figures.setdefault((statement, side.name, reader), []).append(
                                (spent[1] - spent[0]) / (rows - SMALL_CALL) * 1e6)
                print(f"  {statement} (calls of {SMALL_CALL} and {rows} rows)", flush=True)

    try:
        anyio.run(measure)
    finally:
        for side in sides:
            side.close()
    med = statistics.median
    print(f"\nCPU a row (us; a row of the larger call beyond the {SMALL_CALL}-row one, the whole server "
          f"process; medians of {repeat} rounds, the readers' order turned each round, spread min-max; "
          f"load average {os.getloadavg()[0]:.1f}; {answer_bytes:,} bytes an answer)")
    for statement in PER_ROW:
        print(statement)
        for side in sides:
            mcp = sorted(figures[(statement, side.name, "mcp")])
            api = sorted(figures[(statement, side.name, "api")])
            ratio = med(mcp) / med(api)
            print(f"  {side.name:<7} MCP query {med(mcp):.1f} ({mcp[0]:.1f}-{mcp[-1]:.1f}), the API's "
                  f"records() {med(api):.1f} ({api[0]:.1f}-{api[-1]:.1f}): {ratio:.2f} x "
                  f"({'met' if ratio <= GOAL else 'not met'}: at most {GOAL}x the API's, issue 100)")
    if figures_json:
        found: dict[str, dict[str, dict[str, list[float]]]] = {}
        for (statement, side_name, reader), values in figures.items():
            found.setdefault(statement, {}).setdefault(side_name, {})[reader] = values
        Path(figures_json).write_text(json.dumps({"rows": call_rows, "figures": found}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--show", action="store_true", help="print a real call and answer for each behaviour")
    p.add_argument("--answers-only", action="store_true", help="only the answers' figures (and --show)")
    p.add_argument("--host", default=None,
                   help="use a running server (the demo data loaded if missing) instead of starting one")
    p.add_argument("--port", type=int, default=9042, help="the running server's CQL port (with --host)")
    p.add_argument("--per-row", action="store_true", help="also `query`'s CPU a row against the API's")
    p.add_argument("--per-row-only", action="store_true", help="only --per-row's figures")
    p.add_argument("--per-row-bytes", type=int, default=1 << 20, help="the answers' max_bytes (--per-row)")
    p.add_argument("--before", help="with --per-row: another checkout's tree, its readers measured too")
    p.add_argument("--after", help="with --per-row: the after side's tree (default: this checkout's)")
    p.add_argument("--figures-json", help="with --per-row: its figures written to this file as JSON too")
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
        if args.per_row or args.per_row_only:
            per_row(host, port, args.repeat, args.per_row_bytes, args.before, args.after, args.figures_json)
            if args.per_row_only:
                return 0
        fill_big(host, port)
        if not args.answers_only:
            run(host, port, args.repeat, max(100, args.calls))
        with tempfile.TemporaryDirectory() as home:
            _credentials(home)
            answers(host, port, home, args.repeat, args.show)
    finally:
        if instance is not None:
            instance.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
