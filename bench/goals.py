"""The speed goals (rounds five to seven) in one run, before and after: every bulk reader's client
CPU a row against the ratio its goal names, the terminal's display against stock cqlsh, the API
stream's first batch, the tree as it was before the round (--before) beside the tree this script
runs from, then the per-phase figures, the doors' goals, and issue 111's goals in one table.

    .venv/bin/python bench/goals.py --host 127.0.0.1 --port 9042 --before /work/wt/before
        [--before-path DIR[:DIR]] [--skewed-rows 300000] [--orders-rows 44000]
        [--display-rows 20000] [--repeat 3] [--phases-repeat 1] [--stock STOCK-CQLSH]
        [--tables skewed orders] [--no-door-goals] [--callgrind N]
        [--no-issue-111] [--load-rows 10000] [--load-repeat N] [--spark-rows 50000]
        [--spark-repeat 2] [--first-demo [--cassandra-lib DIR]]

Issue 111's goals (round seven) against its start, a4d3dd0, in one command (docs/performance.md,
"How to run the goals of issue 111"; about 15 minutes on 2 quiet cores without --first-demo, which
adds two fresh trees' first bin/demo, each building the native core):

    mkdir -p /work/before-a4d3dd0 && git archive a4d3dd0 | tar -x -C /work/before-a4d3dd0
    cd /work/before-a4d3dd0 && PATH=$OLDPWD/.venv/bin:$PATH MATURIN_NO_INSTALL_RUST=1 \
        $OLDPWD/.venv/bin/python -m pip install --no-deps --no-build-isolation --target .native-site ./native
    cd - && .venv/bin/python bench/goals.py --host 127.0.0.1 --port PORT --before /work/before-a4d3dd0 \
        --before-path /work/before-a4d3dd0/.native-site:/work/before-a4d3dd0 --tables orders \
        --repeat 3 --phases-repeat 1 --load-rows 10000 --load-repeat 2 --spark-rows 50000 \
        --spark-repeat 2 --first-demo

--before is a checkout with its .venv (its cqlsh-ext is run), a cqlsh-ext to run, or a tree without
.venv (a `git archive` tree: its cqlsh-ext is run by this interpreter with --before-path as its
PYTHONPATH, readers.binary_of); --before-path is the PYTHONPATH the before tree is imported from:
its cqlsh-ext there, its Python API for the stream's first batch, the doors' goals and the loads,
its Spark 4 reader (default: --before when it is a directory; without either, the first batch is
measured after only and the doors' goals are not run). A tree made by `git archive` has no native
core: build it into a directory of its own (pip install --target DIR ./native, above) and put that
directory first on --before-path.

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
--per-row-only: the whole server process's CPU, issue 111's goal 4). The polars source's flat
memory is held by tests/api/test_polars_memory.py.

Then issue 111's goals (--no-issue-111 leaves them out), each by its own script with the same
before tree, in one table at the end: goal, bound, before and after (the figure, the ratio, each
round's figure against the anchor's median as the spread), met or not, or "not run: why":
1. loads over --load-rows existing rows (every row overwritten), COPY FROM and db.write, at most
   1.0x a hand loader that reads each row before writing it and 1.2x the plain one (bench/load.py
   --existing --parts, --load-repeat rounds);
2. Spark 4's data source at most 1.0x Spark 3.5's connector, the CPU of the process tree for the
   same GROUP BY on --spark-rows rows, each tree's Spark 4 over its own Spark 3.5
   (bench/spark_versions.py --query, --spark-repeat rounds of four runs; only where bin/setup
   --test --spark installed .cache/spark and .cache/spark4-site);
3. DESCRIBE PAYLOAD ALL at most 3.0x the floor and the blob's JSON Lines at most 0.5x the user's
   script, beyond the statement's start (the readers' rounds above);
4. MCP's `query` at most 1.5x the API's CPU a row, the whole server process (bench/mcp.py above);
5. with --first-demo, the first bin/demo on a fresh clone of this tree's commit and on a copy of
   --before within 4 minutes to the first answer, and the time to the native core installed (wall
   and CPU with children; bench/first_demo.py; 127.0.0.1:9042 must be free);
6. (the readers measured beyond the statement's own start: the table above.)
Under it, each goal not met with its remaining cost by part: the loads' row by part (bench/load.py
--parts: the stored rows read, the encode-and-verify, the journal's sealed lines, the writes, the
driver's threads, the rest) beside the hand loaders'; Spark 4's CPU beyond Spark 3.5's, the tasks'
run time and the rest; MCP's row beyond the API's; the demo's answer and build; a reader's phases
are bench/phases.py's table above.

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
from load import HAND_READING  # noqa: E402
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
    tree_pythonpath,
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
#: Issue 111's goal 3 among GOALS: (reader, against, limit) of DESCRIBE PAYLOAD ALL against the floor
#: and the blob's JSON Lines against the user's script.
ISSUE_111_READERS = (("describe", "floor", 3.0), ("copy-jsonl-blob", "script jsonl", 0.5))
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
    p.add_argument("--issue-111", action=argparse.BooleanOptionalAction, default=True,
                   help="issue 111's goals after the others (bench/load.py, bench/spark_versions.py, with "
                   "--first-demo bench/first_demo.py), all in one table at the end")
    p.add_argument("--load-rows", type=int, default=10_000,
                   help="goal 1: the existing rows a load overwrites")
    p.add_argument("--load-repeat", type=int, help="goal 1's rounds (default: --repeat)")
    p.add_argument("--spark-rows", type=int, default=50_000, help="goal 2: the Spark GROUP BY's rows")
    p.add_argument("--spark-repeat", type=int, default=2, help="goal 2's rounds (four Spark runs each)")
    p.add_argument("--first-demo", action="store_true",
                   help="goal 5: the first bin/demo on a fresh clone and on a copy of --before (minutes: "
                   "each builds the native core; needs 127.0.0.1:9042 free)")
    p.add_argument("--cassandra-lib", help="--first-demo: Cassandra's jars from here, not downloaded")
    args = p.parse_args()

    started = time.perf_counter()
    before_path = args.before_path or (args.before if Path(args.before).is_dir() else None)
    if before_path:  # every script imports a `git archive` tree with its own entry points first
        before_path = tree_pythonpath(Path(args.before), before_path)
    binaries = {"before": binary_of(args.before, before_path), "after": CQLSH_EXT}
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
    goals = Issue111()
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
            short: dict[str, str] = dict.fromkeys(SIDES, "failed")
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
                    short[side] = (f"{cpu / n * 1e6:.2f} us {ratios[side]:.2f}x "
                                   f"({rounds[0] / against_cpu:.2f}-{rounds[-1] / against_cpu:.2f})")
            if "after" in ratios:
                met = ratios["after"] >= goal.limit if goal.wall else ratios["after"] <= goal.limit
                verdict = "noise" if noisy else "met" if met else "not"
            else:
                verdict = "?"
            bound = f"{'at least ' if goal.wall else ''}{goal.limit:.1f}x {goal.against}"
            if (goal.reader, goal.against, goal.limit) in ISSUE_111_READERS:
                goals.lines.append(GoalLine(3, f"{goal.label}, x {goal.against}, {table} (beyond its start)",
                                            f"{goal.limit:.1f}x", short["before"], short["after"], verdict))
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
    with tempfile.TemporaryDirectory() as scratch:
        doors = bool(args.door_goals and before_path)
        mcp_found = door_goals(args.host, args.port, before_path or "", args.repeat, args.callgrind,
                               Path(scratch)) if doors else None
        if args.issue_111:
            if doors:
                mcp_goals(goals, mcp_found)
            else:
                goals.not_run(4, "MCP `query`, the server process, x the API", "1.5x",
                              "--no-door-goals, or no --before-path")
            load_goals(goals, args.host, args.port, before_path, args.load_rows,
                       args.load_repeat or args.repeat, Path(scratch))
            spark_goals(goals, args.host, args.port, before_path, args.spark_rows, args.spark_repeat,
                        Path(scratch))
            if args.first_demo:
                demo_goals(goals, args.before if Path(args.before).is_dir() else None, args.cassandra_lib,
                           Path(scratch))
            else:
                goals.not_run(5, "the first bin/demo, a fresh clone, to the first answer", "240 s",
                              "opt-in (--first-demo: it clones and builds)")
            print_issue_111(goals)
    print(f"\nthe whole run took {time.perf_counter() - started:.0f} s")
    return 0


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def resolved_path(pythonpath: str) -> str:
    """A PYTHONPATH of one or several directories, each made absolute."""
    return os.pathsep.join(str(Path(part).resolve()) for part in pythonpath.split(os.pathsep))


def script_run(title: str, script: str, options: list[str], figures: Path) -> dict[str, Any] | None:
    """bench/`script` run with `options` and --figures-json `figures`, its output printed as it prints
    it (under `title`); its figures, or None when it failed (said in one line)."""
    import json

    command = [sys.executable, str(HERE / script), *options, "--figures-json", str(figures)]
    print(f"\n{title}: bench/{script} {' '.join(options)}", flush=True)
    done = subprocess.run(command, check=False)
    if done.returncode or not figures.exists():
        print(f"  (it failed: exit {done.returncode})", flush=True)
        return None
    found: dict[str, Any] = json.loads(figures.read_text())
    return found


def door_goals(host: str, port: int, before_path: str, repeat: int, callgrind: int,
               scratch: Path) -> dict[str, Any] | None:
    """Round six's goals measured by their own scripts, each with the same before tree, printed as
    they print them: start-up's CPU to a one-row answer against stock cqlsh (bench/startup.py
    --cpu, instructions too with --callgrind) and MCP's `query` CPU a row against the Python API's,
    the whole server process (bench/mcp.py --per-row-only: issue 111's goal 4), whose figures are
    returned for the goals' table. The polars source's memory is a test's (the peak resident set at
    two table sizes: tests/api/test_polars_memory.py), a ratio that needs no before."""
    before = resolved_path(before_path)
    command = [sys.executable, str(HERE / "startup.py"), "--cpu", "--host", host, "--port", str(port),
               "--runs", str(max(5, 2 * repeat + 1)), "--before", before,
               *(["--callgrind", str(callgrind)] if callgrind else [])]
    print(f"\nstart-up's CPU to a one-row answer, at most stock cqlsh's: bench/startup.py "
          f"{' '.join(command[3:])}", flush=True)
    done = subprocess.run(command, check=False)
    if done.returncode:
        print(f"  (it failed: exit {done.returncode})", flush=True)
    return script_run("MCP `query`'s CPU a row, the whole server process, at most 1.5x the API's (issue 111)",
                      "mcp.py", ["--per-row-only", "--host", host, "--port", str(port),
                                 "--repeat", str(repeat), "--before", before], scratch / "mcp.json")


# ----------------------------------------------------------------------------- issue 111's goals

@dataclass
class GoalLine:
    """A line of issue 111's table: the goal, its bound, each side's figure with its spread, the
    verdict (met, not, noise, or "not run: why")."""

    number: int
    goal: str
    bound: str
    before: str
    after: str
    verdict: str


@dataclass
class Issue111:
    """Issue 111's goals as measured in this run, and each missed goal's remaining cost by part."""

    lines: list[GoalLine] = field(default_factory=list)
    #: each missed goal's number and a line of its remaining cost
    parts: list[tuple[int, str]] = field(default_factory=list)

    def not_run(self, number: int, goal: str, bound: str, why: str) -> None:
        self.lines.append(GoalLine(number, goal, bound, "", "", f"not run: {why}"))

    def missed(self, number: int) -> bool:
        return any(line.number == number and line.verdict == "not" for line in self.lines)


def ratio_cell(rounds: list[float], against: float, unit: str = "us") -> str:
    """A side's figure: its median and the ratio to `against` with the rounds' spread (each round's
    figure against the anchor's median)."""
    median = statistics.median(rounds)
    return (f"{median:.1f} {unit} {median / against:.2f}x "
            f"({min(rounds) / against:.2f}-{max(rounds) / against:.2f})")


#: Issue 111's loads: each side of bench/load.py against its two hand loaders and the bound.
LOAD_SIDES = ("COPY FROM", "db.write")
LOAD_BOUNDS = ((HAND_READING, "the hand loader reading each row first", 1.0),
               ("hand", "the plain hand loader", 1.2))


def load_goals(goals: Issue111, host: str, port: int, before_path: str | None, rows: int, repeat: int,
               scratch: Path) -> None:
    """Goal 1: bench/load.py --existing --parts (a load over as many existing rows, every row
    overwritten; after the rounds, COPY FROM's row by part), before and after in its rounds."""
    options = ["--host", host, "--port", str(port), "--rows", str(rows), "--repeat", str(repeat),
               "--existing", "--parts", *(["--before", resolved_path(before_path)] if before_path else [])]
    found = script_run("Loads over existing rows (issue 111, goal 1)", "load.py", options,
                       scratch / "load.json")
    if found is None:
        for load in LOAD_SIDES:
            goals.not_run(1, f"{load} over existing rows", "", "bench/load.py failed (above)")
        return
    sides = found["sides"]
    for load in LOAD_SIDES:
        for anchor, named, bound in LOAD_BOUNDS:
            against = statistics.median(sides[anchor])
            cells = {side: ratio_cell(sides[f"{load} ({engine})"], against) if f"{load} ({engine})" in sides
                     else "" for side, engine in (("before", "before"), ("after", "native"))}
            ratio = statistics.median(sides[f"{load} (native)"]) / against
            goals.lines.append(GoalLine(1, f"{load}, {found['rows']:,} existing rows, x {named}",
                                        f"{bound:.1f}x", cells["before"], cells["after"],
                                        "met" if ratio <= bound else "not"))
    if goals.missed(1) and found.get("parts"):
        parts = {part: statistics.median(values) for part, values in found["parts"].items()}
        whole = sum(parts.values())
        hand = statistics.median(sides["hand"])
        reading = statistics.median(sides[HAND_READING])
        copy = statistics.median(sides["COPY FROM (native)"])
        goals.parts.append((1,
            f"goal 1, the loads: COPY FROM's row {copy:.1f} us against the plain hand loader's {hand:.1f} "
            f"({copy - hand:+.1f} us) and the reading one's {reading:.1f} ({copy - reading:+.1f} us); "
            f"its row by part (bench/load.py --parts, the timers' run: {whole:.1f} us a row):"))
        goals.parts.extend((1, f"  {part:<38} {us:>8.1f} us {us / whole:>6.0%}")
                           for part, us in parts.items())
        goals.parts.append((1, "  (db.write runs the same pass: load.load_job's; its figures above)"))
    elif goals.missed(1):
        goals.parts.append((1, "goal 1, the loads: no split (bench/load.py --parts failed: above)"))


def spark_goals(goals: Issue111, host: str, port: int, before_path: str | None, rows: int, repeat: int,
                scratch: Path) -> None:
    """Goal 2: bench/spark_versions.py --query (the GROUP BY), Spark 4's data source against Spark
    3.5's connector, each tree's own; only where bin/setup --spark installed both."""
    goal, bound = "Spark 4's GROUP BY, CPU of the process tree, x Spark 3.5's", "1.0x"
    missing = [str(path.relative_to(ROOT)) for path in (ROOT / ".cache" / "spark",
                                                       ROOT / ".cache" / "spark4-site") if not path.is_dir()]
    if missing:
        goals.not_run(2, goal, bound,
                      f"no {' and no '.join(missing)} (bin/setup --test --spark installs them)")
        return
    options = ["--host", host, "--port", str(port), "--rows", str(rows), "--repeat", str(repeat), "--query",
               *(["--before", resolved_path(before_path)] if before_path else [])]
    found = script_run("Spark 4 against Spark 3.5 (issue 111, goal 2)", "spark_versions.py", options,
                       scratch / "spark.json")
    if found is None:
        goals.not_run(2, goal, bound, "bench/spark_versions.py failed (above)")
        return
    cells: dict[str, str] = {"before": "", "after": ""}
    ratios: dict[str, float] = {}
    for tree, versions in found["runs"].items():
        round_ratios = sorted(four["cpu"] / old["cpu"] for four, old in zip(versions["4"], versions["3.5"],
                                                                              strict=True))
        ratios[tree] = statistics.median(round_ratios)
        four_cpu = statistics.median(one["cpu"] for one in versions["4"])
        cells[tree] = f"{four_cpu:.1f} s {ratios[tree]:.2f}x ({round_ratios[0]:.2f}-{round_ratios[-1]:.2f})"
    goals.lines.append(GoalLine(2, f"{goal}, {found['rows']:,} rows", bound, cells["before"], cells["after"],
                                "met" if ratios["after"] <= 1.0 else "not"))
    if goals.missed(2):
        versions = found["runs"]["after"]
        med = {(v, k): statistics.median(one[k] for one in versions[v]) for v in ("4", "3.5")
               for k in ("cpu", "task_s")}
        beyond = med[("4", "cpu")] - med[("3.5", "cpu")]
        goals.parts.append((2,
            f"goal 2, Spark 4: {beyond:+.1f} s of the tree's CPU beyond Spark 3.5's ({med[('4', 'cpu')]:.1f} "
            f"against {med[('3.5', 'cpu')]:.1f} s: the JVMs, the driver, the Python workers); the tasks' "
            f"run time (the executors' wall in the tasks, Spark's event log: the reading and the answer) "
            f"{med[('4', 'task_s')]:.1f} against {med[('3.5', 'task_s')]:.1f} s, the rest of the tree's "
            "CPU its start and its driver (bench/spark_scan.py splits a run further)"))


def mcp_goals(goals: Issue111, found: dict[str, Any] | None) -> None:
    """Goal 4 from bench/mcp.py --per-row-only's figures: MCP's `query` CPU a row, the whole server
    process, against the API's records(), each statement."""
    goal, bound = "MCP `query`, the server process, x the API", "1.5x"
    if found is None:
        goals.not_run(4, goal, bound, "bench/mcp.py failed or was not run (above)")
        return
    for statement, sides in found["figures"].items():
        shown = statement.split(" FROM ")[0].removeprefix("SELECT ")
        cells = {side: "" for side in SIDES}
        ratios = {}
        for side, readers in sides.items():
            api = statistics.median(readers["api"])
            cells[side] = ratio_cell(readers["mcp"], api)
            ratios[side] = statistics.median(readers["mcp"]) / api
        goals.lines.append(GoalLine(4, f"{goal}: {shown} ({found['rows'][statement]:,} a call)", bound,
                                    cells["before"], cells["after"],
                                    "met" if ratios["after"] <= 1.5 else "not"))
        if ratios["after"] > 1.5:
            mcp = statistics.median(sides["after"]["mcp"])
            api = statistics.median(sides["after"]["api"])
            goals.parts.append((4,
                f"goal 4, MCP `query` of {shown}: {mcp:.1f} us a row against the API's {api:.1f} "
                f"({mcp - api:+.1f} us a row beyond it: the answer's layout and its bytes on stdio, the SDK "
                "and its event loop; bench/mcp.py does not split it further: py-spy on the server does, "
                "docs/performance.md's MCP row)"))


def demo_goals(goals: Issue111, before: str | None, cassandra_lib: str | None, scratch: Path) -> None:
    """Goal 5: bench/first_demo.py, the first bin/demo on a fresh clone of this tree's commit and on a
    copy of the before tree."""
    goal, bound = "the first bin/demo, a fresh clone, to the first answer", "240 s"
    options = [*(["--before", before] if before else []),
               *(["--cassandra-lib", cassandra_lib] if cassandra_lib else [])]
    found = script_run("The first bin/demo (issue 111, goal 5)", "first_demo.py", options,
                       scratch / "demo.json")
    if found is None:
        goals.not_run(5, goal, bound, "bench/first_demo.py failed or was refused (above)")
        return
    sides = found["sides"]

    def cell(side: str, at: str) -> str:
        if side not in sides:
            return ""
        one = sides[side]
        if at == "core" and not one["core_installed"]:
            return "not installed"
        mark = "<= " if at == "core" and not one["core_in_background"] else ""
        return f"{mark}{one[at + '_s']:.0f} s (CPU {one[at + '_cpu']:.0f} s)"

    answer = sides["after"]["answer_s"]
    goals.lines.append(GoalLine(5, goal, bound, cell("before", "answer"), cell("after", "answer"),
                                "met" if answer <= 240 else "not"))
    goals.lines.append(GoalLine(5, "the first bin/demo, to the native core installed", "",
                                cell("before", "core"), cell("after", "core"), ""))
    if answer > 240:
        one = sides["after"]
        goals.parts.append((5,
            f"goal 5, the first bin/demo: {answer:.0f} s to the first answer (CPU "
            f"{one['answer_cpu']:.0f} s of the install, the load and the shell, with the core's build "
            f"beside it), the core installed at "
            f"{one['core_s']:.0f} s (CPU {one['core_cpu']:.0f} s); the server's own CPU "
            f"{one['server_cpu'] or 0:.0f} s apart; the first answer's wall by stage: "
            + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in one["stages"].items())))


def print_issue_111(goals: Issue111) -> None:
    print(f"\nissue 111's goals (round seven), before and after in this run; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'#':<2} {'goal':<74} {'at most':<8} {'before (spread)':<30} {'after (spread)':<30} met")
    for line in sorted(goals.lines, key=lambda one: one.number):
        print(f"{line.number:<2} {line.goal:<74} {line.bound:<8} {line.before:<30} {line.after:<30} "
              f"{line.verdict}")
    if goals.parts:
        print("\nthe goals not met, their remaining cost by part:")
        for _number, text in sorted(goals.parts, key=lambda part: part[0]):  # (stable: a goal's lines kept)
            print(text)


if __name__ == "__main__":
    sys.exit(main())
