"""Issue 63's goals (item 3, "Under the floor") in one run on both tables, before and after: every
bulk reader's client CPU a row against the ratio its goal names, the tree as it was when the issue
was filed (--before) beside the tree this script runs from, then the per-phase figures.

    .venv/bin/python bench/goals.py --host 127.0.0.1 --port 9042 --before /work/wt/before
        [--skewed-rows 300000] [--orders-rows 44000] [--display-rows 20000] [--repeat 3]
        [--phases-repeat 1] [--stock STOCK-CQLSH] [--tables skewed orders]

The tables are bench/readers.py's (keyspace bench_readers; loaded once, skipped when a previous
run left them complete): `skewed`, 300,000 order documents of skewed sizes (a gzip JSON tail), and
`orders`, 44,000 small order documents in six encodings; and `display`, --display-rows rows of
4 KB snappy JSON (bench/render.py's article profile).

The sides, in --repeat interleaved rounds (before and after swap places every round):
- the anchors, each a whole process measured around its scan (bench/readers.py): the bare scan
  (`tuple_factory`, fetch 5,000), the floor (every value decompressed with the producers' C
  libraries), the script (the floor, then each payload parsed), and the user's export script
  (bench/export_floor.py's USER_EXPORT: decompress, parse, `pyarrow.Table.from_pylist` written,
  or orjson lines), to Parquet and to JSON Lines;
- each reader, the real binary `cqlsh-ext -e STATEMENT` (bench/readers.py's STATEMENTS, one
  process: CQLSH_EXT_SCAN_WORKERS=1), after and before: its CPU (getrusage through wait4, user +
  sys, children included) and wall time less those of the same statement on the first partition
  (start-up, connection, imports), its peak memory;
- the display, bench/terminal.py's goal: `PAGING OFF; SELECT id, data FROM display` printed whole
  into a pipe by each binary and by stock cqlsh (the pinned cqlsh beside this interpreter, else
  `cqlsh-ext -d none`), whole processes: wall time (the goal) and CPU.

Prints the goals' table: reader, table, goal, before and after (CPU us a row, median of the
rounds with their spread min-max, and the ratio the goal names: x bare, x floor, x the user's
script, x stock cqlsh), whether after meets it; the peak memory of the exports (flat in the
table's size: compare the two tables); the one-stream wall rows/s of STATS and the filter against
the bare scan's (the verdict "noise" where the first partition's runs spread by more than half the
table's own read: the orders table reads in less time than start-up varies); the load average at
the start and the end. Then bench/phases.py's per-phase
figures of every reader on both tables (the tree this script runs from only: its timers wrap this
tree's functions). Figures only: nothing is asserted but that every run succeeds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import phases  # noqa: E402
from export_floor import SCRIPT_FORMATS, user_script  # noqa: E402
from readers import (  # noqa: E402
    CQLSH_EXT,
    SUFFIXES,
    Run,
    bare,
    binary_of,
    load,
    session_for,
    shell_run,
    statement,
)
from terminal import LIMIT as DISPLAY_LIMIT  # noqa: E402
from terminal import STATEMENT as DISPLAY_STATEMENT  # noqa: E402
from terminal import in_pipe, load_display, side_command, side_env, stock_cqlsh  # noqa: E402


@dataclass(frozen=True)
class Goal:
    """A reader's goal: its CPU a row at most `limit` times `against`'s (`wall`: its rows a second
    at least `limit` times the bare scan's)."""

    reader: str
    label: str
    against: str
    limit: float
    wall: bool = False


GOALS = (
    Goal("filter", "filter", "floor", 1.0),
    Goal("group", "GROUP BY", "floor", 1.0),
    Goal("stats-decode-all", "STATS DECODE ALL", "floor", 1.0),
    Goal("stats", "default STATS", "bare", 1.0),
    Goal("copy-parquet", "COPY Parquet, blob", "script parquet", 0.7),
    Goal("copy-jsonl", "COPY JSON Lines, blob", "script jsonl", 0.7),
    Goal("copy-parquet-blob", "COPY Parquet, the blob alone", "script parquet", 0.7),
    Goal("copy-jsonl-blob", "COPY JSON Lines, the blob alone", "script jsonl", 0.7),
    Goal("copy-parquet-blob", "COPY Parquet, the blob alone", "copy-parquet", 1.1),
    Goal("copy-jsonl-blob", "COPY JSON Lines, the blob alone", "copy-jsonl", 1.1),
    Goal("copy", "COPY Parquet, paths", "floor", 1.0),
    Goal("describe", "DESCRIBE PAYLOAD ALL", "floor", 3.0),
    Goal("stats", "default STATS, wall", "bare", 0.9, wall=True),
    Goal("filter", "filter, wall", "bare", 0.9, wall=True),
)
#: The readers run (each goal's once).
READERS = tuple(dict.fromkeys(goal.reader for goal in GOALS))
ANCHORS = ("bare", "floor", "script", *(f"script {fmt}" for fmt in SCRIPT_FORMATS))
SIDES = ("before", "after")
#: A wall goal's verdict is "noise" when the first partition's runs (start-up, connection) spread by
#: more than this share of the table's own wall time: on a small table the read is shorter than
#: the start-up's variation, and a rate a second says nothing.
WALL_NOISE = 0.5


@dataclass
class Runs:
    """A reader's runs on one side: the full table's and the first partition's."""

    full: list[Run] = field(default_factory=list)
    one: list[Run] = field(default_factory=list)
    failed: str = ""

    def cpu_rounds(self) -> list[float]:
        partition = statistics.median(r.cpu for r in self.one)
        return sorted(r.cpu - partition for r in self.full)

    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.full) - statistics.median(r.cpu for r in self.one)

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.full) - statistics.median(r.wall for r in self.one)

    def peak_mb(self) -> float:
        return max(r.rss_kb for r in self.full) / 1024


def spread(values: list[float], rows: int) -> str:
    return f"({values[0] / rows * 1e6:.2f}-{values[-1] / rows * 1e6:.2f})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--before", required=True,
                   help="the tree before the change: a checkout with its .venv, or its cqlsh-ext")
    p.add_argument("--skewed-rows", type=int, default=300_000)
    p.add_argument("--orders-rows", type=int, default=44_000)
    p.add_argument("--display-rows", type=int, default=20_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--phases-repeat", type=int, default=1, help="bench/phases.py's rounds a table (0: none)")
    p.add_argument("--tables", nargs="*", default=["skewed", "orders"], choices=["skewed", "orders"])
    p.add_argument("--stock", help="stock cqlsh (default: the pinned one beside this interpreter, else "
                   "cqlsh-ext -d none)")
    args = p.parse_args()

    started = time.perf_counter()
    binaries = {"before": binary_of(args.before), "after": CQLSH_EXT}
    for side, binary in binaries.items():
        if not Path(binary).exists():
            raise SystemExit(f"{side}: no {binary}")
    stock = stock_cqlsh(args.stock)
    rows_of = {"skewed": args.skewed_rows, "orders": args.orders_rows}
    session = session_for(args.host, args.port)
    for table in args.tables:
        load(session, table, rows_of[table])
    load_display(session, args.display_rows)
    session.cluster.shutdown()

    load_start = os.getloadavg()
    anchors: dict[tuple[str, str], list[tuple[int, Run]]] = {(t, a): [] for t in args.tables for a in ANCHORS}
    runs: dict[tuple[str, str, str], Runs] = {(t, r, s): Runs() for t in args.tables for r in READERS
                                              for s in SIDES}
    display: dict[str, list[Any]] = {"before": [], "after": [], "stock": []}
    display_cmd = {"before": [binaries["before"]], "after": [CQLSH_EXT], "stock": stock}
    with tempfile.TemporaryDirectory() as home:
        target = str(Path(home) / "out")
        for round_ in range(args.repeat):
            order = SIDES if round_ % 2 == 0 else SIDES[::-1]
            for table in args.tables:
                for anchor in ANCHORS:
                    if anchor.startswith("script "):
                        fmt = anchor.removeprefix("script ")
                        got = user_script(args.host, args.port, table, fmt, f"{target}.script.{fmt}")
                    else:
                        got = bare(args.host, args.port, table, anchor)
                    anchors[(table, anchor)].append(got)
                for reader in READERS:
                    for side in order:
                        kept = runs[(table, reader, side)]
                        if kept.failed:
                            continue
                        try:
                            for whole, into in ((True, kept.full), (False, kept.one)):
                                text = statement(reader, table, whole, target)
                                try:
                                    into.append(shell_run(binaries[side], args.host, args.port, text,
                                                          "native", "1", home))
                                finally:
                                    for suffix in SUFFIXES:
                                        Path(target + suffix).unlink(missing_ok=True)
                        except RuntimeError as error:
                            kept.failed = str(error)[:300]
            for side in (*order, "stock"):
                shown = side_command(display_cmd[side], args.host, args.port, DISPLAY_STATEMENT)
                display[side].append(in_pipe(shown, side_env(home), args.display_rows))
            print(f"round {round_ + 1} of {args.repeat} done ({time.perf_counter() - started:.0f} s)",
                  file=sys.stderr, flush=True)
    load_end = os.getloadavg()
    rounds_took = time.perf_counter() - started

    print(f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: before {binaries['before']}, "
          f"after {CQLSH_EXT}; medians of {args.repeat} rounds (spread min-max), client CPU us a row "
          "(getrusage, children included); load average (1, 5, 15 min) "
          f"{load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f} at the start, "
          f"{load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f} at the end; {os.cpu_count()} cores")
    figures: dict[tuple[str, str], tuple[int, float, float]] = {}
    print(f"\n{'anchor':<28} {'table':<8} {'rows':>8} {'CPU us/row (spread)':>24} {'x bare':>7} "
          f"{'rows/s':>9} {'peak MB':>8}")
    for (table, anchor), anchor_runs in anchors.items():
        n = anchor_runs[0][0]
        figures[(table, anchor)] = (n, statistics.median(r.cpu for _n, r in anchor_runs),
                                    statistics.median(r.wall for _n, r in anchor_runs))
    for (table, anchor), (n, cpu, wall) in figures.items():
        peak = max(r.rss_kb for _n, r in anchors[(table, anchor)]) / 1024
        cpus = sorted(r.cpu for _n, r in anchors[(table, anchor)])
        shown = f"{peak:.0f}" if peak else ""
        print(f"{anchor:<28} {table:<8} {n:>8,} {cpu / n * 1e6:>8.2f} {spread(cpus, n):>15} "
              f"{cpu / figures[(table, 'bare')][1]:>7.2f} {n / wall:>9,.0f} {shown:>8}")

    print(f"\n{'goal':<24} {'table':<7} {'at most':<18} {'before (spread)':>22} {'x':>6} "
          f"{'after (spread)':>22} {'x':>6} {'met':<5}{'peak MB b/a':>11}")
    for goal in GOALS:
        for table in args.tables:
            n, bare_cpu, bare_wall = figures[(table, "bare")]
            cells = []
            ratios: dict[str, float] = {}
            noisy = False
            for side in SIDES:
                side_runs = runs[(table, goal.reader, side)]
                if side_runs.failed:
                    cells.append(f"{'failed':>22} {'':>6}")
                    continue
                if goal.wall:
                    wall = side_runs.wall()
                    ratios[side] = bare_wall / wall
                    partition = statistics.median(o.wall for o in side_runs.one)
                    walls = sorted(r.wall - partition for r in side_runs.full)
                    ones = sorted(o.wall for o in side_runs.one)
                    # a full table read in less than the start-up's own spread: no rate to tell
                    noisy = noisy or walls[0] <= 0 or ones[-1] - ones[0] > WALL_NOISE * wall
                    rate = (f"{n / wall / 1000:.1f}k/s ({n / walls[-1] / 1000:.1f}-{n / walls[0] / 1000:.1f})"
                            if walls[0] > 0 else f"{n / wall / 1000:.1f}k/s (spread <= 0)")
                    cells.append(f"{rate:>22} {ratios[side]:>6.2f}")
                else:
                    cpu = side_runs.cpu()
                    # an anchor, or another reader of the same side (the blob alone against the
                    # same export with paths added)
                    against_cpu = figures[(table, goal.against)][1] if (table, goal.against) in figures \
                        else runs[(table, goal.against, side)].cpu()
                    ratios[side] = cpu / against_cpu
                    cells.append(f"{cpu / n * 1e6:>8.2f} {spread(side_runs.cpu_rounds(), n):>13} "
                                 f"{ratios[side]:>6.2f}")
            if "after" in ratios:
                met = ratios["after"] >= goal.limit if goal.wall else ratios["after"] <= goal.limit
                verdict = "noise" if noisy else "met" if met else "not"
            else:
                verdict = "?"
            bound = f"{'at least ' if goal.wall else ''}{goal.limit:.1f}x {goal.against}"
            sided = [runs[(table, goal.reader, s)] for s in SIDES]
            peaks = "/".join(f"{one.peak_mb():.0f}" if one.full else "-" for one in sided)
            print(f"{goal.label:<24} {table:<7} {bound:<18} {cells[0]} {cells[1]} {verdict:<5}"
                  f"{peaks if goal.reader.startswith('copy') else '':>11}")
    stock_walls = sorted(r.wall for r in display["stock"])
    display_cells = []
    for side in SIDES:
        walls = sorted(r.wall for r in display[side])
        wall = statistics.median(walls)
        display_cells.append(f"{wall:>8.3f} s ({walls[0]:.3f}-{walls[-1]:.3f}) "
                             f"{wall / statistics.median(stock_walls):>6.2f}")
    after_display = statistics.median(r.wall for r in display["after"]) / statistics.median(stock_walls)
    print(f"{'display, wall, pipe':<24} {'display':<7} {f'{DISPLAY_LIMIT:.1f}x stock cqlsh':<18} "
          f"{display_cells[0]} {display_cells[1]} {'met' if after_display <= DISPLAY_LIMIT else 'not':<5}")
    stock_name = " ".join([Path(stock[0]).name, *stock[1:]])
    cpus = {side: statistics.median(r.cpu for r in display[side]) for side in display}
    print(f"  (the display: `{DISPLAY_STATEMENT}` over {args.display_rows:,} rows into a pipe, whole "
          f"processes' wall time; stock cqlsh, {stock_name}: {statistics.median(stock_walls):.3f} s "
          f"({stock_walls[0]:.3f}-{stock_walls[-1]:.3f}); CPU before, after, stock: {cpus['before']:.3f}, "
          f"{cpus['after']:.3f}, {cpus['stock']:.3f} s; bench/terminal.py measures it in tmux too)")
    for (table, reader, side), kept in runs.items():
        if kept.failed:
            print(f"  {side} {reader} on {table} failed: {kept.failed}")
    print(f"\nthe rounds took {rounds_took:.0f} s", flush=True)

    if args.phases_repeat > 0:
        phase_start = os.getloadavg()
        with tempfile.TemporaryDirectory() as home:
            found = [phases.measure(args.host, args.port, table, list(phases.READERS), args.phases_repeat,
                                    home) for table in args.tables]
        phase_end = os.getloadavg()
        print(f"\nper phase, after only (bench/phases.py, {args.phases_repeat} round(s)); load average "
              f"{phase_start[0]:.1f} {phase_start[1]:.1f} {phase_start[2]:.1f} at the start, "
              f"{phase_end[0]:.1f} {phase_end[1]:.1f} {phase_end[2]:.1f} at the end")
        for table_phases in found:
            phases.report(table_phases, args.phases_repeat)
    print(f"\nthe whole run took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
