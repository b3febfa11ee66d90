"""Issue 72's terminal goal: `PAGING OFF; SELECT id, data FROM display` over 20,000 rows of 4 KB
snappy JSON, shown decoded by cqlsh-ext in at most 0.8x the wall time of stock cqlsh showing the
same rows as hex, output to a pipe and in tmux.

    .venv/bin/python bench/terminal.py --host 127.0.0.1 --port 9042
        [--rows 20000] [--repeat 7] [--where pipe tmux] [--before CHECKOUT-OR-BINARY]
        [--after CHECKOUT-OR-BINARY] [--stock STOCK-CQLSH] [--tmux-size 200x50] [--instructions]

The table is bench/goals.py's `display` (keyspace bench_readers: bench/render.py's article
profile, snappy JSON of 3.5-4.5 KB, about 1.5 to 1), loaded with --rows rows unless a previous run
left it so. The sides, whole processes of `-e STATEMENT` (each with its own HOME, no pager):
stock cqlsh (the pinned one beside this interpreter unless --stock), cqlsh-ext from this tree
("after", or --after's) and, with --before, another cqlsh-ext (a checkout with its .venv, or a
binary).
Each round runs every side once per destination, in an order turned by one each round so machine
noise hits every side alike:
- pipe: stdout a pipe this script reads to the end (as `| cat > /dev/null` would; its reading
  is this process's CPU, not the side's), the bytes written counted;
- tmux: stdout the pane of a detached tmux session (its own server, socket bench-terminal-PID,
  --tmux-size columns x lines, colours on: cqlsh colours a terminal's output), the process run
  and measured by a small runner in the pane; the tmux server's CPU in the run is reported
  beside it (it is neither side's, but a side that writes more makes it work more).
Each run's wall time, CPU (user + sys from wait4: its reaped children included, so cqlsh's
`tput colors` too) and peak memory; the same statement on one row (`WHERE id = 0`) once a round
and side in the pipe: start-up, connection and imports. Prints the medians with their spreads
(min-max), the ratios to stock (the goal: wall at most 0.8x), the load average at the start and
the end. With --instructions, each side once more in the pipe under callgrind (every process it
starts, whole runs, start-up included, and the one-row run apart): instructions do not move with
the machine's load (bench/goals_instructions.py says what they are not).
Figures only: nothing is asserted but that every run succeeds and says `(N rows)`; a run that
fails (under load the server's one answer to stock cqlsh's PAGING OFF read can fail: ReadFailure)
is run again, at most three times in all, and each failure is printed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readers import CQLSH_EXT, KEYSPACE, binary_of, session_for  # noqa: E402

#: The goal: cqlsh-ext's wall time at most this share of stock cqlsh's.
LIMIT = 0.8
DISPLAY_TABLE = "display"
STATEMENT = f"PAGING OFF; SELECT id, data FROM {DISPLAY_TABLE}"
ONE_ROW = f"PAGING OFF; SELECT id, data FROM {DISPLAY_TABLE} WHERE id = 0"
WHERE = ("pipe", "tmux")

#: Runs a side in a tmux pane: its command (and environment) from a JSON file, its figures to another.
RUNNER = r'''
import json, os, subprocess, sys, time
spec = json.load(open(sys.argv[1]))
started = time.perf_counter()
proc = subprocess.Popen(spec["cmd"], env=spec["env"])
_pid, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - started
done = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_kb": usage.ru_maxrss,
        "status": os.waitstatus_to_exitcode(status)}
with open(spec["out"] + ".part", "w") as out:
    json.dump(done, out)
os.rename(spec["out"] + ".part", spec["out"])
'''


def load_display(session: Any, rows: int) -> None:
    """bench/render.py's 4 KB snappy JSON documents (its article profile) in bench_readers.display,
    unless a previous run left them (bench/readers.py's marker)."""
    from cassandra.concurrent import execute_concurrent_with_args
    from render import documents, encode

    marker = f"{DISPLAY_TABLE} (snappy article)"
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = %s", (marker,)).one()
    if done is not None and done.rows == rows:
        print(f"{KEYSPACE}.{DISPLAY_TABLE}: {rows:,} rows already loaded", flush=True)
        return
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{DISPLAY_TABLE}")
    session.execute(f"CREATE TABLE {KEYSPACE}.{DISPLAY_TABLE} (id int PRIMARY KEY, data blob)")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{DISPLAY_TABLE} (id, data) VALUES (?, ?)")
    blobs = [encode(doc, "snappy") for doc in documents("article", rows)]
    execute_concurrent_with_args(session, insert, list(enumerate(blobs)), concurrency=64,
                                 raise_on_first_error=True)
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES (%s, %s)", (marker, rows))
    print(f"loaded {KEYSPACE}.{DISPLAY_TABLE}: {rows:,} rows", flush=True)


def stock_cqlsh(asked: str | None) -> list[str]:
    """Stock cqlsh: the one asked, else the pinned cqlsh beside this interpreter, else cqlsh-ext -d
    none (cqlsh's own printing: blobs as hex)."""
    if asked:
        return [asked]
    pinned = Path(sys.executable).parent / "cqlsh"
    return [str(pinned)] if pinned.exists() else [CQLSH_EXT, "-d", "none"]


@dataclass
class Run:
    wall: float
    cpu: float
    rss_kb: int
    written: int = 0
    #: The tmux server's CPU during a run in tmux.
    tmux_cpu: float = 0.0


@dataclass
class Side:
    name: str
    cmd: list[str]
    runs: dict[str, list[Run]] = field(default_factory=lambda: {where: [] for where in WHERE})
    one_row: list[Run] = field(default_factory=list)
    #: Runs that failed and were run again (a server's ReadFailure or timeout under load), with why.
    failed: list[str] = field(default_factory=list)

    def measured(self, run: Callable[[], Run], tries: int = 3) -> Run:
        """`run()`, again after a failure (at most `tries` in all), each failure noted."""
        for attempt in range(tries):
            try:
                return run()
            except RuntimeError as error:
                self.failed.append(str(error)[-160:])
                if attempt == tries - 1:
                    raise
        raise AssertionError("unreachable")


def side_command(binary: list[str], host: str, port: int, statement: str) -> list[str]:
    # (long timeouts: a loaded machine, or callgrind, slows the connection and the reads 50 times)
    return [binary[0], host, str(port), "-u", "cassandra", "-p", "cassandra", "-k", KEYSPACE,
            "--connect-timeout", "600", "--request-timeout", "600", *binary[1:], "-e", statement]


def side_env(home: str) -> dict[str, str]:
    env = {**os.environ, "HOME": home, "PAGER": ""}
    env.pop("CQLSH_EXT_NATIVE", None)
    return env


def in_pipe(cmd: list[str], env: dict[str, str], rows: int | None) -> Run:
    """`cmd` writing into a pipe read here to the end; its rusage from wait4. `rows`: the row
    count its closing line must say (None: not checked)."""
    tail = b""
    written = 0
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while chunk := os.read(fd, 1 << 20):
        written += len(chunk)
        tail = (tail + chunk)[-256:]
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode})")
    if rows is not None and f"({rows} rows)".encode() not in tail:
        raise RuntimeError(f"{cmd[0]}: no ({rows} rows) at the end: {tail[-120:]!r}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, written)


class Tmux:
    """A detached tmux server of our own (its socket named after this process), one session kept
    open so the server stays; each run a new window of its size."""

    def __init__(self, size: str, work: str) -> None:
        self.socket = f"bench-terminal-{os.getpid()}"
        self.work = work
        columns, lines = size.split("x")
        self._tmux("new-session", "-d", "-s", "keep", "-x", columns, "-y", lines, "cat")
        self.pid = int(self._tmux("display-message", "-p", "-t", "keep", "#{pid}").strip())
        self.runs = 0

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True).stdout

    def server_cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run(self, cmd: list[str], env: dict[str, str], timeout: float = 900) -> Run:
        self.runs += 1
        spec, out = f"{self.work}/tmux-{self.runs}.json", f"{self.work}/tmux-{self.runs}.out.json"
        Path(spec).write_text(json.dumps({"cmd": cmd, "env": env, "out": out}))
        before = self.server_cpu()
        self._tmux("new-window", "-d", "-t", "keep", f"{sys.executable} -c {shlex_quote(RUNNER)} {spec}")
        deadline = time.monotonic() + timeout
        while not Path(out).exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no figures from tmux after {timeout:.0f} s: {cmd[-1]!r}")
            time.sleep(0.05)
        tmux_cpu = self.server_cpu() - before
        done = json.loads(Path(out).read_text())
        if done["status"] != 0:
            raise RuntimeError(f"{cmd[0]} failed in tmux ({done['status']})")
        return Run(done["wall"], done["cpu"], done["rss_kb"], tmux_cpu=tmux_cpu)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)
        Path(f"/tmp/tmux-{os.getuid()}/{self.socket}").unlink(missing_ok=True)


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


#: Under callgrind a side reads 50 times slower and the driver's heartbeat (an idle connection's,
#: every 30 s) times out while a large answer is read ("Connection heartbeat timeout"): a
#: sitecustomize on PYTHONPATH turns it off for every side alike, once the driver's cluster module
#: is loaded (nothing else changes).
NO_HEARTBEAT = r'''
import importlib.abc, importlib.machinery, sys

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "cassandra.cluster":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            made = module.Cluster.__init__

            def init(self, *args, **kwargs):
                kwargs["idle_heartbeat_interval"] = 0
                made(self, *args, **kwargs)
            module.Cluster.__init__ = init
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Finder())
'''


def callgrind_instructions(cmd: list[str], env: dict[str, str], work: str, rows: int) -> int:
    """Instructions of `cmd` and every process it starts (valgrind's callgrind), output to a pipe,
    its closing line saying `rows` (a run that failed, a request that timed out, counts less)."""
    from goals_instructions import COLLECTED

    site = Path(work) / "no-heartbeat"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(NO_HEARTBEAT)
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))}
    log = f"{work}/callgrind.log"
    wrap = ["valgrind", "--tool=callgrind", "--trace-children=yes", f"--log-file={log}",
            f"--callgrind-out-file={work}/callgrind.%p.out"]
    in_pipe([*wrap, *cmd], env, rows)
    counts = [int(n) for _pid, n in COLLECTED.findall(Path(log).read_text())]
    if not counts:
        raise RuntimeError(f"no callgrind total for {cmd[0]}")
    return sum(counts)


def figures(runs: list[Run], attr: str) -> tuple[float, float, float]:
    values = sorted(getattr(r, attr) for r in runs)
    return statistics.median(values), values[0], values[-1]


def shown(runs: list[Run], attr: str) -> str:
    median, low, high = figures(runs, attr)
    return f"{median:.3f} ({low:.3f}-{high:.3f})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=20_000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--where", nargs="+", default=list(WHERE), choices=WHERE)
    p.add_argument("--before", help="cqlsh-ext before the change: a checkout with its .venv, or a binary")
    p.add_argument("--after", help="cqlsh-ext after it (default: this tree's): a checkout or a binary")
    p.add_argument("--stock", help="stock cqlsh (default: the pinned one beside this interpreter)")
    p.add_argument("--tmux-size", default="200x50", help="the tmux pane's COLUMNSxLINES")
    p.add_argument("--instructions", action="store_true", help="also count instructions (callgrind)")
    args = p.parse_args()
    # A run stopped with SIGTERM still ends its tmux server (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if "tmux" in args.where and shutil.which("tmux") is None:
        raise SystemExit("tmux is not on PATH (or leave it out: --where pipe)")

    session = session_for(args.host, args.port)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    load_display(session, args.rows)
    session.cluster.shutdown()

    after = binary_of(args.after) if args.after else CQLSH_EXT
    sides = [Side("stock", stock_cqlsh(args.stock)), Side("after", [after])]
    if args.before:
        sides.insert(1, Side("before", [binary_of(args.before)]))
    started = time.perf_counter()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as work:
        env = side_env(work)
        tmux = Tmux(args.tmux_size, work) if "tmux" in args.where else None
        try:
            for side in sides:  # warm the page cache, the server and each side's bytecode
                in_pipe(side_command(side.cmd, args.host, args.port, STATEMENT), env, args.rows)
            for round_ in range(args.repeat):
                turn = round_ % len(sides)
                for side in sides[turn:] + sides[:turn]:
                    cmd = side_command(side.cmd, args.host, args.port, STATEMENT)
                    for where in args.where:
                        run = partial(tmux.run, cmd, env) if tmux is not None and where == "tmux" else \
                            partial(in_pipe, cmd, env, args.rows)
                        side.runs[where].append(side.measured(run))
                    one_row = side_command(side.cmd, args.host, args.port, ONE_ROW)
                    side.one_row.append(side.measured(partial(in_pipe, one_row, env, 1)))
                print(f"round {round_ + 1} of {args.repeat} ({time.perf_counter() - started:.0f} s)",
                      file=sys.stderr, flush=True)
        finally:
            if tmux is not None:
                tmux.close()
        load_end = os.getloadavg()
        counted: dict[str, tuple[int, int]] = {}
        if args.instructions:
            for side in sides:
                full = side_command(side.cmd, args.host, args.port, STATEMENT)
                one = side_command(side.cmd, args.host, args.port, ONE_ROW)
                counted[side.name] = (callgrind_instructions(full, env, work, args.rows),
                                      callgrind_instructions(one, env, work, 1))

    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{STATEMENT}`, {args.rows:,} rows; "
          f"medians of {args.repeat} alternating rounds (spread min-max), seconds; load average (1, 5, 15 "
          f"min) {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f} at the start, "
          f"{load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f} at the end; {os.cpu_count()} cores")
    for side in sides:
        print(f"  {side.name}: {' '.join(side.cmd)}")
    stock = sides[0]
    for where in args.where:
        print(f"\n{where}" + (f" ({args.tmux_size})" if where == "tmux" else ""))
        extra = "written MB" if where == "pipe" else "tmux server CPU"
        print(f"{'side':<8} {'wall (spread)':>22} {'x stock':>8} {'CPU (spread)':>22} {'x stock':>8} "
              f"{'peak MB':>8} {extra:>16}")
        stock_wall = figures(stock.runs[where], "wall")[0]
        stock_cpu = figures(stock.runs[where], "cpu")[0]
        for side in sides:
            runs = side.runs[where]
            wall, cpu = figures(runs, "wall")[0], figures(runs, "cpu")[0]
            peak = max(r.rss_kb for r in runs) / 1024
            more = f"{runs[0].written / 1e6:>16.1f}" if where == "pipe" else f"{shown(runs, 'tmux_cpu'):>16}"
            verdict = ""
            if side.name != "stock":
                verdict = "  met" if wall / stock_wall <= LIMIT else "  not met"
            print(f"{side.name:<8} {shown(runs, 'wall'):>22} {wall / stock_wall:>8.2f} "
                  f"{shown(runs, 'cpu'):>22} {cpu / stock_cpu:>8.2f} {peak:>8.0f} {more}{verdict}")
    print("\none row (`... WHERE id = 0`, pipe): start-up, connection, imports")
    for side in sides:
        print(f"{side.name:<8} wall {shown(side.one_row, 'wall')}  CPU {shown(side.one_row, 'cpu')}")
    for side in sides:
        for why in side.failed:
            print(f"{side.name}: a run failed and was run again: {why}")
    if counted:
        print("\ninstructions (callgrind, whole processes, pipe; millions): all rows, one row, "
              "the difference")
        stock_rows = counted["stock"][0] - counted["stock"][1]
        for side in sides:
            whole, one = counted[side.name]
            print(f"{side.name:<8} {whole / 1e6:>10,.0f} {one / 1e6:>8,.0f} {(whole - one) / 1e6:>10,.0f}  "
                  f"x stock: whole {whole / counted['stock'][0]:.2f}, rows {(whole - one) / stock_rows:.2f}")
    print(f"\nthe run took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
