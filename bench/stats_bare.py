"""Issue 100's goal for the default COMPRESSION STATS alone: at most a bare scan of the skewed table
(bench/readers.py's), in client CPU and in instructions, before and after in one run.

    .venv/bin/python bench/stats_bare.py --host 127.0.0.1 --port 9042 --before CHECKOUT-OR-BINARY
        [--skewed-rows 100000] [--repeat 5] [--callgrind]

bench/goals.py measures every reader's goal (minutes a round); this measures the one goal, with
the same sides and the same arithmetic: in --repeat interleaved rounds (before and after swap
places every round), the bare scan (bench/readers.py's BARE, a whole process measured around its
scan) and `cqlsh-ext -e "COMPRESSION STATS CONFIRM SELECT data FROM skewed"` of each tree (one
process: CQLSH_EXT_SCAN_WORKERS=1, the native engine), its CPU (getrusage through wait4, user +
sys, children included) less that of the same statement on the first partition (start-up,
connection, imports). Prints CPU us a row (median of the rounds, spread min-max) and the ratio to
the bare scan's. With --callgrind, then counts each side once more in instructions
(bench/goals_instructions.py's way: the full table's process less the first partition's, every
process under callgrind; about 50 times each process's CPU).

--before is a checkout with its .venv (its cqlsh-ext is run) or a cqlsh-ext to run. The table is
loaded once (bench/readers.py's load; skipped when a previous run left it complete).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goals import SIDES, Runs, spread  # noqa: E402
from goals_instructions import anchor_cmds, per_row, shell_cmd  # noqa: E402
from readers import (  # noqa: E402
    CQLSH_EXT,
    Run,
    bare,
    binary_of,
    load,
    session_for,
    shell_env,
    shell_run,
    statement,
)

TABLE = "skewed"
READER = "stats"


def cpu_rounds(host: str, port: int, binaries: dict[str, str], repeat: int, home: str,
               ) -> tuple[list[tuple[int, Run]], dict[str, Runs]]:
    anchor: list[tuple[int, Run]] = []
    runs = {side: Runs() for side in SIDES}
    for round_ in range(repeat):
        order = SIDES if round_ % 2 == 0 else SIDES[::-1]
        anchor.append(bare(host, port, TABLE))
        for side in order:
            for whole, into in ((True, runs[side].full), (False, runs[side].one)):
                into.append(shell_run(binaries[side], host, port, statement(READER, TABLE, whole, ""),
                                      "native", "1", home))
        print(f"round {round_ + 1} of {repeat} done", file=sys.stderr, flush=True)
    return anchor, runs


def instructions(host: str, port: int, binaries: dict[str, str], rows: int, home: str) -> dict[str, float]:
    env = shell_env(home, "native", "1")
    target = f"{home}/out"
    counted = {"bare": per_row(*anchor_cmds("bare", host, port, TABLE, target), env, home, rows, target)}
    for side in SIDES:
        counted[side] = per_row(
            [binaries[side], *shell_cmd(host, port, statement(READER, TABLE, True, ""))[1:]],
            [binaries[side], *shell_cmd(host, port, statement(READER, TABLE, False, ""))[1:]],
            env, home, rows, target)
    return counted


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--before", required=True,
                   help="the tree before the change: a checkout with its .venv, or its cqlsh-ext")
    p.add_argument("--skewed-rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--callgrind", action="store_true", help="count instructions too (valgrind)")
    args = p.parse_args()
    binaries = {"before": binary_of(args.before), "after": CQLSH_EXT}
    session = session_for(args.host, args.port)
    load(session, TABLE, args.skewed_rows)
    session.cluster.shutdown()
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as home:
        anchor, runs = cpu_rounds(args.host, args.port, binaries, args.repeat, home)
        load_end = os.getloadavg()
        rows = anchor[0][0]
        bare_cpu = sorted(run.cpu for _, run in anchor)
        bare_median = statistics.median(bare_cpu)
        print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {TABLE}, {rows:,} rows; before "
              f"{binaries['before']}, after {CQLSH_EXT}; medians of {args.repeat} rounds (spread min-max), "
              "client CPU us a row (getrusage, children included); load average "
              f"{load_start[0]:.1f} at the start, {load_end[0]:.1f} at the end")
        print(f"  {'bare scan':<16} {bare_median / rows * 1e6:>8.2f} {spread(bare_cpu, rows):>16}")
        for side in SIDES:
            print(f"  {'STATS ' + side:<16} {runs[side].cpu() / rows * 1e6:>8.2f} "
                  f"{spread(runs[side].cpu_rounds(), rows):>16}  x bare {runs[side].cpu() / bare_median:.2f}")
        if args.callgrind:
            counted = instructions(args.host, args.port, binaries, rows, home)
            print("\ninstructions a row (callgrind; the full table's process less the first partition's):")
            for side, figure in counted.items():
                label = "bare scan" if side == "bare" else f"STATS {side}"
                ratio = "" if side == "bare" else f"  x bare {figure / counted['bare']:.2f}"
                print(f"  {label:<16} {figure:>10,.0f}{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
