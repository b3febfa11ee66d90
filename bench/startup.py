#!/usr/bin/env python3
"""Start-up time of cqlsh-ext against stock cqlsh, for -e and for the interactive shell.

    .venv/bin/python bench/startup.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--runs N]
    .venv/bin/python bench/startup.py --cpu [--before DIR] [--callgrind N] [--runs N] ...

--cpu: the CPU of a one-row `-e` statement to its answer and exit (user + system of the whole
process, getrusage of the children), interleaved runs, medians with their spread; with --callgrind N
also its instructions (valgrind --tool=callgrind, N runs each, the median): what a shared machine's
load does not move. The sides: stock cqlsh as this environment has it (the driver imports numpy where
it is installed, as here), stock cqlsh as a plain `pip install cqlsh` has it (numpy hidden from it),
cqlsh-ext, and with --before DIR another tree's cqlsh-ext (DIR first on PYTHONPATH: a `git archive`
of an earlier commit, byte-compiled). The goal: cqlsh-ext at most stock cqlsh's CPU.

-e: wall time of `-e "SELECT release_version FROM system.local"` until the process exits.
interactive: wall time from spawning in a pseudo-terminal until the prompt is drawn (then Ctrl-D).
Runs alternate between the programs so load changes hit both; the median is reported with the
difference to stock cqlsh (target: within 5 %).

--latency-ms N puts a proxy in front of the server that delays every packet by N ms each way, as a
server across a network does. The interactive shell builds its prompt (~70 ms of CPU, mostly
prompt_toolkit's import) while it waits for the server: Cassandra's password check (~80 ms per
connection) or the network hides it; a local server without authentication hides nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent
TARGET = 0.05


class LatencyProxy:
    """Forwards 127.0.0.1:<port> to the server, each chunk `delay` seconds late, in order."""

    def __init__(self, host: str, port: int, delay: float) -> None:
        self.target, self.delay = (host, port), delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self.server.accept()
            upstream = socket.create_connection(self.target)
            for src, dst in ((client, upstream), (upstream, client)):
                pending: queue.Queue[tuple[float, bytes]] = queue.Queue()
                threading.Thread(target=self._read, args=(src, pending), daemon=True).start()
                threading.Thread(target=self._write, args=(dst, pending), daemon=True).start()

    def _read(self, src: socket.socket, pending: queue.Queue[tuple[float, bytes]]) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            pending.put((time.monotonic() + self.delay, data))
            if not data:
                return

    def _write(self, dst: socket.socket, pending: queue.Queue[tuple[float, bytes]]) -> None:
        while True:
            due, data = pending.get()
            time.sleep(max(0.0, due - time.monotonic()))
            if not data:
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)
                return
            with contextlib.suppress(OSError):
                dst.sendall(data)


def time_e(program: list[str], conn: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([*program, *conn, "-e", "SELECT release_version FROM system.local"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def time_prompt(program: list[str], conn: list[str], env: dict[str, str]) -> float:
    import pexpect

    t0 = time.perf_counter()
    child = pexpect.spawn(program[0], [*program[1:], *conn], env=env, encoding="utf-8",
                          dimensions=(40, 120), timeout=60)
    child.expect("cqlsh>")
    elapsed = time.perf_counter() - t0
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


#: Stock cqlsh as a plain `pip install cqlsh` runs it: the driver finds no numpy (this environment's
#: test and api extras install it; the driver then imports it at every start).
STOCK_WITHOUT_NUMPY = ("import sys; sys.modules['numpy'] = None; sys.argv[0] = 'cqlsh'\n"
                       "from cqlshlib.__main__ import main\nsys.exit(main())")


def cpu_sides(before: str | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each side of --cpu: its command and what it adds to the environment."""
    python = str(BIN / "python")
    sides = {"stock cqlsh (numpy here)": ([str(BIN / "cqlsh")], {}),
             "stock cqlsh (no numpy)": ([python, "-c", STOCK_WITHOUT_NUMPY], {}),
             "cqlsh-ext": ([python, "-m", "cqlsh_ext"], {})}
    if before:
        sides["cqlsh-ext before"] = ([python, "-m", "cqlsh_ext"], {"PYTHONPATH": before})
    return sides


def cpu_of(command: list[str], env: dict[str, str]) -> float:
    """User + system seconds of the whole process (getrusage of the children, around it)."""
    import resource

    start = resource.getrusage(resource.RUSAGE_CHILDREN)
    # From HOME: `python -m` puts its working directory first on the path (a checkout's would win).
    subprocess.run(command, env=env, cwd=env["HOME"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    return end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime


def instructions_of(command: list[str], env: dict[str, str]) -> int:
    """Instructions of the whole process and its threads (valgrind --tool=callgrind)."""
    import re

    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                          env=env, cwd=env["HOME"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True)
    return int(re.findall(r"refs:\s+([\d,]+)", proc.stderr)[-1].replace(",", ""))


def cpu_goal(args: argparse.Namespace, conn: list[str], env: dict[str, str]) -> int:
    """--cpu: each side's CPU (and instructions) to a one-row answer, against stock cqlsh's."""
    statement = ["-e", "SELECT release_version FROM system.local"]
    sides = cpu_sides(args.before)
    runs = {name: ([*command, *conn, *statement], {**env, **extra})
            for name, (command, extra) in sides.items()}
    for command, side_env in runs.values():  # warm-up: page cache, .pyc files
        cpu_of(command, side_env)
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.runs):
        for name, (command, side_env) in runs.items():
            cpu[name].append(cpu_of(command, side_env))
    counted: dict[str, list[int]] = {name: [] for name in runs}
    for _ in range(args.callgrind):
        for name, (command, side_env) in runs.items():
            counted[name].append(instructions_of(command, side_env))
    stock = statistics.median(cpu["stock cqlsh (no numpy)"])
    print(f"CPU to a one-row answer, whole process, median of {args.runs} interleaved runs (min-max)"
          + (f"; instructions, median of {args.callgrind}" if args.callgrind else ""))
    for name in runs:
        line = (f"  {name:<26} {statistics.median(cpu[name]) * 1000:6.0f} ms "
                f"({min(cpu[name]) * 1000:.0f}-{max(cpu[name]) * 1000:.0f})  "
                f"{statistics.median(cpu[name]) / stock:.2f}x stock (no numpy)")
        if counted[name]:
            ir = statistics.median(counted[name])
            base = statistics.median(counted["stock cqlsh (no numpy)"])
            line += f"  {ir / 1e6:7.0f} M instructions  {ir / base:.2f}x"
        print(line)
    after = statistics.median(counted["cqlsh-ext"] or cpu["cqlsh-ext"])
    stock_measure = statistics.median(counted["stock cqlsh (no numpy)"] or cpu["stock cqlsh (no numpy)"])
    print("goal: cqlsh-ext at most stock cqlsh (no numpy):", "met" if after <= stock_measure else "not met")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="9042")
    parser.add_argument("-u", "--user", default="cassandra")
    parser.add_argument("-p", "--password", default="cassandra")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="delay every packet by this much each way (a proxy in between)")
    parser.add_argument("--cpu", action="store_true", help="the CPU to a one-row answer (see above)")
    parser.add_argument("--before", help="--cpu: another tree's cqlsh_ext (its directory) beside this one's")
    parser.add_argument("--callgrind", type=int, default=0, help="--cpu: instructions too, of N runs each")
    args = parser.parse_args()
    if args.latency_ms:
        proxy = LatencyProxy(args.host, int(args.port), args.latency_ms / 1000)
        args.host, args.port = "127.0.0.1", str(proxy.port)
        print(f"through a proxy adding {args.latency_ms:g} ms each way")

    home = tempfile.mkdtemp(prefix="cqlsh-ext-bench-")
    # Credentials from a file: a -p on the command line makes both print a warning.
    Path(home, ".cassandra").mkdir()
    creds = Path(home, ".cassandra", "credentials")
    creds.write_text(f"[plain_text_auth]\nusername = {args.user}\npassword = {args.password}\n")
    os.chmod(creds, 0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CQLSH_", "CQL_"))}
    env.update(HOME=home, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    conn = [args.host, args.port]
    if args.cpu:
        return cpu_goal(args, conn, env)

    programs = {
        "cqlsh": [str(BIN / "cqlsh")],
        "cqlsh-ext": [str(BIN / "cqlsh-ext")],
        "cqlsh-ext --classic": [str(BIN / "cqlsh-ext"), "--classic"],
    }
    failed = False
    for label, measure, names in (("-e", time_e, ("cqlsh", "cqlsh-ext")),
                                  ("interactive", time_prompt, tuple(programs))):
        samples: dict[str, list[float]] = {name: [] for name in names}
        for name in names:  # warm-up: page cache, .pyc files
            measure(programs[name], conn, env)
        for _ in range(args.runs):
            for name in names:
                samples[name].append(measure(programs[name], conn, env))
        base = statistics.median(samples["cqlsh"])
        print(f"{label}: median of {args.runs} runs")
        for name in names:
            med = statistics.median(samples[name])
            diff = (med - base) / base
            mark = "" if name == "cqlsh" else f"  {diff:+.1%}"
            print(f"  {name:<22} {med * 1000:7.0f} ms{mark}")
            if name == "cqlsh-ext" and diff > TARGET:
                failed = True
    print("target: cqlsh-ext within +5 % of cqlsh:", "not met" if failed else "met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
