"""`cqlsh-ext spark` on Spark 3.5 (the Cassandra connector) and on Spark 4 (cqlsh-ext's own data
source, cqlsh_ext.spark.datasource): the same statement on bench/stats.py's table, alternating
the two, same run, same server.

For each run it prints the wall time (noisy on a shared machine), the CPU time of the whole
process tree (the JVM and Spark's Python workers included: this process is their subreaper, so
every descendant is waited for and counted: getrusage(RUSAGE_CHILDREN)), and from Spark's event
log the tasks' executor run time; then each Spark's median with its spread, and Spark 4's CPU over
Spark 3.5's round by round (median and spread). Spark 4 runs with .cache/spark4-site (bin/setup
--spark) first on PYTHONPATH.

    .venv/bin/python bench/spark_versions.py --host 127.0.0.1 --port P [--rows 100000] [--repeat 2]
                                             [--cores 2] [--query] [--before PATH] [--figures-json F]

--before PATH: another tree's two runs too in the same rounds (PATH its PYTHONPATH: a checkout, or
a `git archive` tree then its native core's directory), each Spark on that tree's cqlsh-ext, its
Spark 4 over its own Spark 3.5. --figures-json F: each run's figures written to F as JSON too
(bench/goals.py reads them: {"rows": N, "runs": {"after"|"before": {"3.5"|"4": [{"cpu": s, "wall":
s, "task_s": s}, ...]}}}).

A running server is needed (--host/--port: the test server, bin/dev-cassandra): the tree's CPU is
counted by waiting for every child, which a server started here would be.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import spark_scan  # noqa: E402  (bench/spark_scan.py: the connection, the event log's figures)
import stats as stats_bench  # noqa: E402  (bench/stats.py: the table and its loader)

SPARK4_SITE = ROOT / ".cache" / "spark4-site"
STATS = f"COMPRESSION STATS JSON SELECT data FROM {spark_scan.TABLE}"
#: The event log as one plain file (Spark 4's default: rolled, zstd).
EVENT_LOG = ("spark.eventLog.enabled=true", "spark.eventLog.rolling.enabled=false",
             "spark.eventLog.compress=false")


def _tree_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _reap() -> None:
    """Wait for every descendant left (the JVM and the Python workers outlive the program a moment)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def run(version: str, args: argparse.Namespace, events: Path, env: dict[str, str],
        tree: str | None = None) -> dict:
    """One `cqlsh-ext spark` run of the statement on Spark `version`, on this tree's cqlsh-ext or
    on `tree`'s (a PYTHONPATH put first)."""
    statement = spark_scan.QUERY if args.query else STATS
    conf = [part for setting in (*EVENT_LOG, f"spark.eventLog.dir={events}") for part in ("--conf", setting)]
    command = [spark_scan.CQLSH_EXT, "spark", "--master", f"local[{args.cores}]", *conf,
               *spark_scan.connection(args.host, args.port), "--output-format", "json", "-e", statement]
    if version == "4":
        env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(SPARK4_SITE), env.get("PYTHONPATH")]))}
    if tree is not None:
        # PYTHONSAFEPATH: the working directory is not put before the tree
        env = {**env, "PYTHONSAFEPATH": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))}
    cpu, started = _tree_cpu(), time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=7200)
    wall = time.perf_counter() - started
    _reap()
    cpu = _tree_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"Spark {version} failed: {proc.stderr[-2000:]}")
    said = proc.stderr if args.query else [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    app_id = said.split("Spark ", 1)[1].split(",", 1)[0]
    tasks, run_s = spark_scan.task_figures(events, app_id)
    answer = proc.stdout if args.query else json.dumps(
        {k: v for k, v in json.loads(said).items() if k not in ("elapsed_s", "rows_per_s", "scan")})
    return {"wall": wall, "cpu": cpu, "tasks": tasks, "task_s": run_s, "answer": answer}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--query", action="store_true", help="a payload query (spark_scan.QUERY) instead of STATS")
    p.add_argument("--before", help="another tree's PYTHONPATH: its two runs too, in the same rounds")
    p.add_argument("--figures-json", help="each run's figures written to this file as JSON too")
    args = p.parse_args()
    if not (SPARK4_SITE / "pyspark").is_dir():
        print(f"no pyspark 4 in {SPARK4_SITE}: bin/setup --spark installs it", file=sys.stderr)
        return 2
    cluster, session = stats_bench._session(args.host, args.port)
    try:
        stats_bench.load(session, args.rows)
    finally:
        cluster.shutdown()
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back here
    trees: dict[str, str | None] = {"after": None}
    if args.before:  # a tree, or a PYTHONPATH of several (a `git archive` tree, its core's directory)
        trees["before"] = os.pathsep.join(str(Path(part).resolve()) for part in args.before.split(os.pathsep))
    figures: dict[str, dict[str, list[dict]]] = {tree: {"3.5": [], "4": []} for tree in trees}
    sides = [(tree, version) for tree in trees for version in ("3.5", "4")]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home}
        for rnd in range(args.repeat):
            for tree, version in sides if rnd % 2 == 0 else sides[::-1]:
                events = Path(home) / f"events-{rnd}-{tree}-{version}"
                events.mkdir()
                one = run(version, args, events, env, trees[tree])
                figures[tree][version].append(one)
                print(f"round {rnd + 1}: {tree}, Spark {version}: {one['wall']:.1f} s wall, "
                      f"{one['cpu']:.1f} s CPU (tree), {one['tasks']} tasks, "
                      f"{one['task_s']:.1f} s of task time", flush=True)
    answers = {one["answer"] for versions in figures.values() for runs in versions.values() for one in runs}
    if len(answers) != 1:
        raise RuntimeError(f"the Sparks answered differently: {answers}")
    print(f"\n{args.rows:,} rows, {'the payload query' if args.query else 'COMPRESSION STATS'}, "
          f"local[{args.cores}], medians of {args.repeat} rounds (answers equal):")
    for tree, versions in figures.items():
        base = {k: statistics.median(one[k] for one in versions["3.5"]) for k in ("wall", "cpu", "task_s")}
        for version, runs in versions.items():
            med = {k: statistics.median(one[k] for one in runs) for k in ("wall", "cpu", "task_s")}
            cpus = [one["cpu"] for one in runs]
            print(f"  {tree:<6} Spark {version:<4} CPU {med['cpu']:7.1f} s (spread {min(cpus):.1f}-"
                  f"{max(cpus):.1f}; {med['cpu'] / base['cpu']:.2f} x 3.5's), task time "
                  f"{med['task_s']:6.1f} s ({args.rows / med['task_s']:,.0f} rows per task-second), "
                  f"wall {med['wall']:6.1f} s")
        # Each round's own ratio (its two runs side by side): the spread the machine's noise leaves.
        ratios = [four["cpu"] / old["cpu"] for four, old in zip(versions["4"], versions["3.5"], strict=True)]
        print(f"  {tree:<6} Spark 4 / Spark 3.5 CPU, round by round: {', '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {statistics.median(ratios):.2f}, spread {min(ratios):.2f}-{max(ratios):.2f})")
    if args.figures_json:
        kept = ("cpu", "wall", "task_s")
        Path(args.figures_json).write_text(json.dumps({"rows": args.rows, "runs": {
            tree: {version: [{k: one[k] for k in kept} for one in runs] for version, runs in versions.items()}
            for tree, versions in figures.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
