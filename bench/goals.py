"""The speed goals (round five) in one run on both tables, before and after: every bulk reader's
client CPU a row against the ratio its goal names, the terminal's display against stock cqlsh, the
API stream's first batch, the tree as it was before the round (--before) beside the tree this
script runs from, then the per-phase figures.

    .venv/bin/python bench/goals.py --host 127.0.0.1 --port 9042 --before /work/wt/before
        [--before-path DIR[:DIR]] [--skewed-rows 300000] [--orders-rows 44000]
        [--display-rows 20000] [--repeat 3] [--phases-repeat 1] [--stock STOCK-CQLSH]
        [--tables skewed orders] [--no-door-goals] [--callgrind N]

--before is a checkout with its .venv (its cqlsh-ext is run) or a cqlsh-ext to run; --before-path
is the PYTHONPATH its Python API is imported from for the stream's first batch (default: --before
when it is a directory; without either, the first batch is measured after only). A tree made by
`git archive` has no .venv: build its native core into a directory of its own (pip install
--target DIR ./native) and put that directory first in both.

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
  sys, children included) and wall time less those of the same statement over a copy of the
  table's first SMALL_ROWS (200) rows (`TABLE_small`, loaded once): the statement's own start
  (start-up, connection, the imports its plan makes lazily, the plan) taken out, a row's figure
  that difference over the rows between; its peak memory;
- the display, bench/terminal.py's goal: `PAGING OFF; SELECT id, data FROM display` printed whole
  into a pipe by each binary and by stock cqlsh (the pinned cqlsh beside this interpreter, else
  `cqlsh-ext -d none`), whole processes: wall time (the goal) and CPU.

The goals: a payload filter and a GROUP BY (the small documents of the orders table above all) at
most the floor, and at most 0.7 of the script (the floor's magic-byte reading, then orjson: what a
user writes for the same question); default STATS at most a bare scan, STATS DECODE ALL at most 0.6
of the floor, DESCRIBE PAYLOAD ALL at most 3.0 of it; exports of the whole blob at most 0.5 of the
user's export script; the display's CPU at most 0.8 of stock cqlsh's; the stream's first batch in
hand before 20 % of the read's CPU (bench/api_stream.py's reading, `SELECT pk, ck, data` of the
orders table into `to_reader()`); the one-stream wall of the filter and STATS at least 0.9 of the
bare scan's rows a second.

Then round six's goals of the doors, each by its own script against the same before tree:
start-up's CPU to a one-row answer at most stock cqlsh's (bench/startup.py --cpu, instructions
with --callgrind N) and MCP's `query` at most 1.5x the Python API's CPU a row (bench/mcp.py
--per-row-only). The polars source's flat memory is held by tests/api/test_polars_memory.py.

Prints the goals' table: reader, table, goal, before and after (CPU us a row, median of the
rounds with their spread min-max, and the ratio the goal names: x bare, x floor, x the user's
script, x stock cqlsh, with its spread: each round's figure against the anchor's median), whether
after meets it; the peak memory of the exports (flat in the
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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import phases  # noqa: E402
from api_stream import READ as STREAM_READ  # noqa: E402
from export_floor import SCRIPT_FORMATS, user_script  # noqa: E402
from readers import (  # noqa: E402
    CQLSH_EXT,
    KEYSPACE,
    STATEMENTS,
    SUFFIXES,
    Run,
    bare,
    binary_of,
    load,
    run_process,
    session_for,
    shell_run,
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
    Goal("filter", "filter, x the script", "script", 0.7),
    Goal("group", "GROUP BY, x the script", "script", 0.7),
    Goal("stats-decode-all", "STATS DECODE ALL", "floor", 0.6),
    Goal("stats", "default STATS", "bare", 1.0),
    Goal("copy-parquet-blob", "COPY Parquet, the blob alone", "script parquet", 0.5),
    Goal("copy-jsonl-blob", "COPY JSON Lines, the blob alone", "script jsonl", 0.5),
    # the whole blob with two paths: last round's goal, for the record
    Goal("copy-parquet", "COPY Parquet, blob", "script parquet", 0.7),
    Goal("copy-jsonl", "COPY JSON Lines, blob", "script jsonl", 0.7),
    Goal("copy-parquet-blob", "COPY Parquet, the blob alone", "copy-parquet", 1.1),
    Goal("copy-jsonl-blob", "COPY JSON Lines, the blob alone", "copy-jsonl", 1.1),
    Goal("copy", "COPY Parquet, paths", "floor", 1.0),
    Goal("describe", "DESCRIBE PAYLOAD ALL", "floor", 3.0),
    Goal("stats", "default STATS, wall", "bare", 0.9, wall=True),
    Goal("filter", "filter, wall", "bare", 0.9, wall=True),
)
#: The stream's first batch in hand before this share of the whole read's CPU (the orders table).
FIRST_BATCH_SHARE = 0.2
#: The rows of each table's small copy (TABLE_small), whose read of the same statement is taken
#: from the full table's: what remains is the rows', the statement's own start left out.
SMALL_ROWS = 200


def small_table(table: str) -> str:
    return f"{table}_small"


def load_small_copy(session: Any, table: str) -> None:
    """{table}_small: the table's first SMALL_ROWS rows, its schema (once: kept while complete)."""
    from cassandra.concurrent import execute_concurrent_with_args

    small = small_table(table)
    existing = session.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s "
                               "AND table_name = %s", (KEYSPACE, small)).one()
    if existing is not None and session.execute(
            f"SELECT count(*) FROM {KEYSPACE}.{small}").one()[0] == SMALL_ROWS:
        return
    described = session.execute("SELECT * FROM system_schema.columns WHERE keyspace_name = %s "
                                "AND table_name = %s", (KEYSPACE, table))
    kind_order = {"partition_key": 0, "clustering": 1}
    columns = sorted(described, key=lambda c: (kind_order.get(c.kind, 2), c.position))
    keys = [c for c in columns if c.kind in ("partition_key", "clustering")]
    partition = ", ".join(c.column_name for c in keys if c.kind == "partition_key")
    clustering = [c.column_name for c in keys if c.kind == "clustering"]
    primary = ", ".join([f"({partition})", *clustering])
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{small}")
    session.execute(f"CREATE TABLE {KEYSPACE}.{small} ("
                    + ", ".join(f"{c.column_name} {c.type}" for c in columns)
                    + f", PRIMARY KEY ({primary}))")
    names = [c.column_name for c in columns]
    rows = list(session.execute(f"SELECT {', '.join(names)} FROM {KEYSPACE}.{table} LIMIT {SMALL_ROWS}"))
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{small} ({', '.join(names)}) "
                             f"VALUES ({', '.join('?' * len(names))})")
    execute_concurrent_with_args(session, insert, [tuple(r) for r in rows], concurrency=32,
                                 raise_on_first_error=True)


def stream_read(host: str, port: int, path: str, rows: int) -> dict[str, Any]:
    """bench/api_stream.py's reading of the orders table (`SELECT pk, ck, data` into to_reader()),
    the API imported from `path` (a tree's PYTHONPATH): its first batch's and its end's moments."""
    import json

    env = {**os.environ, "CQLSH_EXT_SCAN_WORKERS": "1", "PYTHONPATH": path}
    # -P: the API from `path` alone, never from the working directory
    run = run_process([sys.executable, "-P", "-c", STREAM_READ, host, str(port), f"{KEYSPACE}.orders"], env)
    doc: dict[str, Any] = json.loads(run.out.strip().splitlines()[0])
    if doc["rows"] != rows:
        raise SystemExit(f"the stream read {doc['rows']:,} rows of {rows:,}")
    return doc


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
    """A reader's runs on one side: the full table's and its small copy's (SMALL_ROWS rows). Its
    figures are the full table's beyond the small copy's, scaled to the whole table's rows (the
    anchors' figures are of the whole table): (full - small) * rows / (rows - SMALL_ROWS)."""

    full: list[Run] = field(default_factory=list)
    one: list[Run] = field(default_factory=list)
    failed: str = ""
    rows: int = 0

    def _scale(self) -> float:
        return self.rows / (self.rows - SMALL_ROWS)

    def cpu_rounds(self) -> list[float]:
        small = statistics.median(r.cpu for r in self.one)
        return sorted((r.cpu - small) * self._scale() for r in self.full)

    def cpu(self) -> float:
        return (statistics.median(r.cpu for r in self.full)
                - statistics.median(r.cpu for r in self.one)) * self._scale()

    def wall(self) -> float:
        return (statistics.median(r.wall for r in self.full)
                - statistics.median(r.wall for r in self.one)) * self._scale()

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
    p.add_argument("--before-path", help="the PYTHONPATH the before tree's API is imported from (the "
                   "stream's first batch; default: --before when it is a directory)")
    p.add_argument("--skewed-rows", type=int, default=300_000)
    p.add_argument("--orders-rows", type=int, default=44_000)
    p.add_argument("--display-rows", type=int, default=20_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--phases-repeat", type=int, default=1, help="bench/phases.py's rounds a table (0: none)")
    p.add_argument("--tables", nargs="*", default=["skewed", "orders"], choices=["skewed", "orders"])
    p.add_argument("--door-goals", action=argparse.BooleanOptionalAction, default=True,
                   help="round six's start-up and MCP goals after the readers' (bench/startup.py, "
                   "bench/mcp.py), against --before-path's tree")
    p.add_argument("--callgrind", type=int, default=0,
                   help="the start-up goal's instructions too, of N runs each")
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
        load_small_copy(session, table)
    load_display(session, args.display_rows)
    session.cluster.shutdown()

    load_start = os.getloadavg()
    anchors: dict[tuple[str, str], list[tuple[int, Run]]] = {(t, a): [] for t in args.tables for a in ANCHORS}
    runs: dict[tuple[str, str, str], Runs] = {(t, r, s): Runs(rows=rows_of[t]) for t in args.tables
                                              for r in READERS for s in SIDES}
    display: dict[str, list[Any]] = {"before": [], "after": [], "stock": []}
    display_cmd = {"before": [binaries["before"]], "after": [CQLSH_EXT], "stock": stock}
    before_path = args.before_path or (args.before if Path(args.before).is_dir() else None)
    stream_paths = {"before": before_path, "after": str(Path(__file__).resolve().parents[1])}
    first_batch: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES if stream_paths[side]}
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
                            for read, into in ((table, kept.full), (small_table(table), kept.one)):
                                text = STATEMENTS[reader][0].format(t=read, f=target)
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
            if "orders" in args.tables:
                for side in (s for s in order if s in first_batch):
                    first_batch[side].append(stream_read(args.host, args.port, stream_paths[side] or "",
                                                         rows_of["orders"]))
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

    print(f"\n{'goal':<24} {'table':<7} {'at most':<18} {'before (spread)':>22} {'x (spread)':>18} "
          f"{'after (spread)':>22} {'x (spread)':>18} {'met':<5}{'peak MB b/a':>11}")
    for goal in GOALS:
        for table in args.tables:
            n, bare_cpu, bare_wall = figures[(table, "bare")]
            cells = []
            ratios: dict[str, float] = {}
            noisy = False
            for side in SIDES:
                side_runs = runs[(table, goal.reader, side)]
                if side_runs.failed:
                    cells.append(f"{'failed':>22} {'':>18}")
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
                    cells.append(f"{rate:>22} {ratios[side]:>18.2f}")
                else:
                    cpu = side_runs.cpu()
                    # an anchor, or another reader of the same side (the blob alone against the
                    # same export with paths added)
                    against_cpu = figures[(table, goal.against)][1] if (table, goal.against) in figures \
                        else runs[(table, goal.against, side)].cpu()
                    ratios[side] = cpu / against_cpu
                    # the rows cost less than the small copy's runs spread: no figure to tell
                    noisy = noisy or (side == "after" and cpu <= 0)
                    rounds = side_runs.cpu_rounds()
                    cells.append(f"{cpu / n * 1e6:>8.2f} {spread(rounds, n):>13} {ratios[side]:>6.2f} "
                                 f"{f'({rounds[0] / against_cpu:.2f}-{rounds[-1] / against_cpu:.2f})':>11}")
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
    for what in ("cpu", "wall"):  # the goal is CPU's (a shared machine's wall time swings); wall beside
        stock_figures = sorted(getattr(r, what) for r in display["stock"])
        display_cells = []
        for side in SIDES:
            values = sorted(getattr(r, what) for r in display[side])
            display_cells.append(f"{statistics.median(values):>8.3f} s ({values[0]:.3f}-{values[-1]:.3f}) "
                                 f"{statistics.median(values) / statistics.median(stock_figures):>6.2f}")
        after_display = statistics.median(getattr(r, what) for r in display["after"]) \
            / statistics.median(stock_figures)
        print(f"{f'display, {what}, pipe':<24} {'display':<7} {f'{DISPLAY_LIMIT:.1f}x stock cqlsh':<18} "
              f"{display_cells[0]} {display_cells[1]} "
              f"{'met' if after_display <= DISPLAY_LIMIT else 'not':<5}")
    stock_name = " ".join([Path(stock[0]).name, *stock[1:]])
    cpus = sorted(r.cpu for r in display["stock"])
    print(f"  (the display: `{DISPLAY_STATEMENT}` over {args.display_rows:,} rows into a pipe, whole "
          f"processes; stock cqlsh, {stock_name}: CPU {statistics.median(cpus):.3f} s ({cpus[0]:.3f}-"
          f"{cpus[-1]:.3f}); bench/terminal.py measures it in tmux too)")
    for side, found in first_batch.items():
        shares = sorted(doc["first_cpu"] / doc["end_cpu"] for doc in found)
        firsts = sorted(doc["first_cpu"] for doc in found)
        share = statistics.median(shares)
        print(f"{f'first batch, {side}':<24} {'orders':<7} {'at most 0.2 of read':<18} "
              f"{statistics.median(firsts):>8.3f} s CPU ({firsts[0]:.3f}-{firsts[-1]:.3f}), "
              f"{share:.2f} of the read's CPU ({shares[0]:.2f}-{shares[-1]:.2f}) "
              f"{'met' if share <= FIRST_BATCH_SHARE else 'not'}")
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
    if args.door_goals and before_path:
        door_goals(args.host, args.port, before_path, args.repeat, args.callgrind)
    print(f"\nthe whole run took {time.perf_counter() - started:.0f} s")
    return 0


def door_goals(host: str, port: int, before_path: str, repeat: int, callgrind: int) -> None:
    """Round six's goals measured by their own scripts, each with the same before tree, printed as
    they print them: start-up's CPU to a one-row answer against stock cqlsh (bench/startup.py
    --cpu, instructions too with --callgrind) and MCP's `query` CPU a row against the Python API's
    (bench/mcp.py --per-row-only). The polars source's memory is a test's (the peak resident set at
    two table sizes: tests/api/test_polars_memory.py), a ratio that needs no before."""
    here = Path(__file__).resolve().parent
    before = os.pathsep.join(str(Path(part).resolve()) for part in before_path.split(os.pathsep))
    runs = [
        ("start-up's CPU to a one-row answer, at most stock cqlsh's",
         [sys.executable, str(here / "startup.py"), "--cpu", "--host", host, "--port", str(port),
          "--runs", str(max(5, 2 * repeat + 1)), "--before", before,
          *(["--callgrind", str(callgrind)] if callgrind else [])]),
        ("MCP `query`'s CPU a row, at most 1.5x the API's (whole blob; paths with the blob)",
         [sys.executable, str(here / "mcp.py"), "--per-row-only", "--host", host, "--port", str(port),
          "--repeat", str(repeat), "--before", before]),
    ]
    for title, command in runs:
        print(f"\n{title}: bench/{Path(command[1]).name} {' '.join(command[2:])}", flush=True)
        done = subprocess.run(command, check=False)
        if done.returncode:
            print(f"  (it failed: exit {done.returncode})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
