#!/usr/bin/env python3
"""Start-up time of cqlsh-ext against stock cqlsh, for -e and for the interactive shell.

    .venv/bin/python bench/startup.py [--host H] [--port P] [-u USER] [-p PASSWORD] [--runs N]

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="9042")
    parser.add_argument("-u", "--user", default="cassandra")
    parser.add_argument("-p", "--password", default="cassandra")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="delay every packet by this much each way (a proxy in between)")
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
