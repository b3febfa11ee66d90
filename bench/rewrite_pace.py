"""COMPRESSION REWRITE held against its PACE: rows and write units a second at several paces and
unpaced, on a server of yours, each a whole process of the real binary; CPU (the process and its
children, getrusage) beside wall time, since this machine is shared.

    .venv/bin/python bench/rewrite_pace.py --port PORT [--host 127.0.0.1] [--paces 100 200 400 800 0]
        [--table compression_demo.table_with_compressed_json.data] [--targets 'zstd:3' gzip:6]

Each run rewrites every row of the column (the table the demo loads, by default), alternating
between the two targets so every run has every row to write, then prints per run: rows, write
units (Amazon Keyspaces' terms, 1 per started KB of a row), seconds, rows a second, units a second
(against the PACE), the busiest second's units, and the CPU seconds it took. Every run is undone at
the end, the last first (UNDO of each journal), so the table ends as it started but for the writes'
timestamps.
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
_CLOSING = re.compile(r"([\d,]+) rows? rewritten.*?([\d,]+) write units in ([\d.,]+) s: ([\d,]+) a second "
                      r"\((?:PACE [\d,]+|no PACE); the busiest second ([\d,]+)\)", re.S)


def shell(args: argparse.Namespace, statement: str) -> tuple[str, float, float]:
    """The statement's output, its wall seconds and CPU seconds (user + system, children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([CQLSH_EXT, args.host, str(args.port), "-u", args.user, "-p", args.password,
                           "--insecure-password-without-warning", "-e", statement], capture_output=True,
                          text=True, timeout=3600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{statement}: exit {done.returncode}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", default="cassandra")
    parser.add_argument("--password", default="cassandra")
    parser.add_argument("--table", default="compression_demo.table_with_compressed_json.data")
    parser.add_argument("--paces", type=int, nargs="+", default=[100, 200, 400, 800, 0])
    parser.add_argument("--targets", nargs=2, default=["zstd:3", "gzip:6"])
    args = parser.parse_args()
    print(f"{'PACE':>6} {'rows':>7} {'units':>7} {'seconds':>8} {'rows/s':>8} {'units/s':>8} "
          f"{'busiest':>8} {'CPU s':>7}")
    journals: list[str] = []
    for i, pace in enumerate(args.paces):
        target = args.targets[i % 2]
        tail = f" PACE {pace}" if pace else ""
        out, wall, cpu = shell(args, f"COMPRESSION REWRITE {args.table} AS '{target}'{tail} CONFIRM")
        found = _CLOSING.search(out)
        if found is None:
            sys.exit(f"no closing line in:\n{out}")
        rows, units, seconds, rate, busiest = (float(g.replace(",", "")) for g in found.groups())
        journals += [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Journal: ")][:1]
        shown = str(pace) if pace else "none"
        per_second = rows / seconds if seconds else 0.0  # (nothing to rewrite: the column was there)
        print(f"{shown:>6} {rows:>7,.0f} {units:>7,.0f} {seconds:>8.1f} {per_second:>8,.0f} "
              f"{rate:>8,.0f} {busiest:>8,.0f} {cpu:>7.1f}   (wall of the process {wall:.1f} s)")
    for journal in reversed(journals):
        shell(args, f"UNDO '{journal}' CONFIRM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
