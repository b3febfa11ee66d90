"""`cqlsh-ext spark` COMPRESSION STATS in local mode against the shell's worker-process scan, same
table, same run.

Uses bench/stats.py's table (snappy-compressed JSON order records, loaded once) and alternates:
  shell    cqlsh-ext -e "COMPRESSION STATS PARALLEL n SELECT data FROM t" (n worker processes)
  spark    cqlsh-ext spark --master local[n] -e "COMPRESSION STATS SELECT data FROM t"
For each: rows/s over the scan (the figure the report prints: from the statement's start, after
Spark is up) and over the process's wall time (Spark's start-up included). From Spark's event log
it takes the per-task figures (executor run time, rows per task-second), from which the rate of a
cluster of E executor cores is E x that, on paper, while the server keeps up.

    .venv/bin/python bench/spark_scan.py [--rows 1000000] [--repeat 2] [--cores 2] [--query]
                                         [--port 25042 | --host H --port P]

With --query it measures a payload query instead (QUERY: a GROUP BY of the records' status),
Spark mode's rows per task-second against the shell reading the same table in one stream
(CQLSH_EXT_SCAN_WORKERS=1; its one-row run of the statement taken out as start-up).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import devcassandra  # noqa: E402
import stats as stats_bench  # noqa: E402  (bench/stats.py: the table and its loader)

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
TABLE = f"{stats_bench.KEYSPACE}.{stats_bench.TABLE}"


def _run(cmd: list[str], env: dict[str, str]) -> tuple[dict, float]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:2]} failed: {proc.stderr[-2000:]}")
    doc = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    if not doc["complete"]:
        raise RuntimeError(f"incomplete scan: {doc.get('error')}")
    return doc, wall


def connection(host: str, port: int) -> list[str]:
    return [host, str(port), "-u", "cassandra", "-p", "cassandra", "--insecure-password-without-warning",
            "--request-timeout", "60"]


def shell_run(host: str, port: int, workers: int, env: dict[str, str]) -> tuple[dict, float]:
    return _run([CQLSH_EXT, *connection(host, port), "--output-format", "json", "-e",
                 f"COMPRESSION STATS PARALLEL {workers} SELECT data FROM {TABLE}"], env)


def spark_run(host: str, port: int, cores: int, events: Path, env: dict[str, str]) -> tuple[dict, float]:
    return _run([CQLSH_EXT, "spark", "--master", f"local[{cores}]", "--conf", "spark.eventLog.enabled=true",
                 "--conf", f"spark.eventLog.dir={events}", *connection(host, port), "-e",
                 f"COMPRESSION STATS JSON SELECT data FROM {TABLE}"], env)


QUERY = f"SELECT data.status, count(*) FROM {TABLE} GROUP BY data.status ALLOW FILTERING CONFIRM"


def query_runs(args: argparse.Namespace, host: str, env: dict[str, str], events: Path) -> int:
    """--query: the payload query by the shell in one stream and by Spark, alternating."""
    def shell(statement: str) -> tuple[float, str]:
        started = time.perf_counter()
        proc = subprocess.run([CQLSH_EXT, *connection(host, args.port), "--output-format", "json", "-e",
                               statement], capture_output=True, text=True, timeout=3600,
                              env={**env, "CQLSH_EXT_SCAN_WORKERS": "1"})
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        return time.perf_counter() - started, proc.stdout

    shell_rates, task_rates, answers = [], [], set()
    one_row = QUERY.replace(" GROUP BY", " WHERE id = 1 GROUP BY")
    for rnd in range(args.repeat):
        for kind in ("shell", "spark") if rnd % 2 == 0 else ("spark", "shell"):
            if kind == "shell":
                whole, out = shell(QUERY)
                start_up, _ = shell(one_row)
                shell_rates.append(args.rows / (whole - start_up))
                answers.add(out)
                print(f"round {rnd + 1}: shell {whole:.1f} s ({start_up:.1f} s start-up), "
                      f"{shell_rates[-1]:,.0f} rows/s", flush=True)
                continue
            proc = subprocess.run([CQLSH_EXT, "spark", "--master", f"local[{args.cores}]", "--conf",
                                   "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={events}",
                                   *connection(host, args.port), "--output-format", "json", "-e", QUERY],
                                  capture_output=True, text=True, env=env, timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-2000:])
            app_id = proc.stderr.split("Spark ", 1)[1].split(",", 1)[0]
            tasks, run_s = task_figures(events, app_id)
            task_rates.append(args.rows / run_s)
            answers.add(proc.stdout)
            print(f"round {rnd + 1}: spark {tasks} tasks, {run_s:.1f} s of task time, "
                  f"{task_rates[-1]:,.0f} rows per task-second", flush=True)
    if len({tuple(sorted(a.splitlines())) for a in answers}) != 1:
        raise RuntimeError(f"the shell and Spark answered differently: {answers}")
    shell_rate, task_rate = statistics.median(shell_rates), statistics.median(task_rates)
    print(f"\n{args.rows:,} rows, {QUERY}")
    print(f"  shell, one stream           {shell_rate:>10,.0f} rows/s (start-up taken out)")
    print(f"  spark, per task-second      {task_rate:>10,.0f} rows/s = {task_rate / shell_rate:.2f} x "
          "the shell's stream")
    return 0


def task_figures(events: Path, app_id: str) -> tuple[int, float]:
    """(tasks, summed executor run time in seconds) of the application's event log."""
    (log,) = [p for p in events.iterdir() if p.name.startswith(app_id)]
    tasks, run_ms = 0, 0
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerTaskEnd":
            tasks += 1
            run_ms += event["Task Metrics"]["Executor Run Time"]
    return tasks, run_ms / 1000


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                   help="worker processes of the shell and local[n] of Spark (default: the CPUs)")
    p.add_argument("--host", default=None, help="use a running server instead of starting one")
    p.add_argument("--port", type=int, default=25042)
    p.add_argument("--query", action="store_true", help="a payload query (QUERY) instead of STATS")
    args = p.parse_args()

    host = args.host or "127.0.0.1"
    if args.host is None:
        instance = devcassandra.Instance(devcassandra.Config(
            directory=ROOT / ".cache" / "bench-cassandra-stats", native_port=args.port, storage_port=25000,
            jmx_port=25199, cluster_name="cqlsh-ext bench"))
        if instance.is_running():
            instance.wait_for_cql()
        else:
            print(f"starting Cassandra on {host}:{args.port} ...", flush=True)
            instance.start(die_with_parent=True)
    cluster, session = stats_bench._session(host, args.port)
    try:
        stats_bench.load(session, args.rows)
    finally:
        cluster.shutdown()
    figures: dict[str, list[tuple[float, float]]] = {"shell": [], "spark": []}
    per_task: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        events = Path(home) / "events"
        events.mkdir()
        env = {**os.environ, "HOME": home}
        if args.query:
            return query_runs(args, host, env, events)
        for rnd in range(args.repeat):
            order = ("shell", "spark") if rnd % 2 == 0 else ("spark", "shell")
            line = [f"round {rnd + 1}:"]
            for kind in order:
                if kind == "shell":
                    doc, wall = shell_run(host, args.port, args.cores, env)
                else:
                    doc, wall = spark_run(host, args.port, args.cores, events, env)
                    tasks, run_s = task_figures(events, doc["scan"].split()[1].rstrip(","))
                    per_task.append(doc["rows"] / run_s)
                    line.append(f"({tasks} tasks, {run_s:,.1f} s of task time)")
                if doc["rows"] != args.rows:
                    raise RuntimeError(f"{kind} scanned {doc['rows']:,} rows of {args.rows:,}")
                scan, whole = doc["rows"] / doc["elapsed_s"], doc["rows"] / wall
                figures[kind].append((scan, whole))
                line.append(f"{kind} {scan:,.0f} rows/s scanning, {whole:,.0f} with start-up ({wall:,.1f} s)")
            print(" ".join(line), flush=True)
    shell_scan = statistics.median(s for s, _ in figures["shell"])
    spark_scan = statistics.median(s for s, _ in figures["spark"])
    spark_whole = statistics.median(w for _, w in figures["spark"])
    startup = statistics.median(args.rows / w - args.rows / s for s, w in figures["spark"])
    task_rate = statistics.median(per_task)
    print()
    print(f"{args.rows:,} rows, {args.cores} cores (of {os.cpu_count()}), medians of {args.repeat} rounds:")
    print(f"  shell, {args.cores} worker processes      {shell_scan:>10,.0f} rows/s")
    print(f"  spark, local[{args.cores}]                {spark_scan:>10,.0f} rows/s scanning "
          f"({spark_scan / shell_scan:.2f} x the shell), {spark_whole:,.0f} rows/s with start-up")
    print(f"  spark, per task-second            {task_rate:>10,.0f} rows/s (E executor cores: E x this, "
          "on paper, while the cluster serves the reads)")
    print(f"  Spark's start-up here (JVM, jars, session): {startup:.1f} s")
    print(f"  executor cores that match the shell's {args.cores} processes: {shell_scan / task_rate:.1f}")
    for cores in (8, 32, 128):
        cluster_rate = cores * task_rate
        if cluster_rate <= shell_scan:
            continue
        rows = startup / (1 / shell_scan - 1 / cluster_rate)
        print(f"  {cores:>4} executor cores: faster than this machine's shell from about {rows:,.0f} rows; "
              f"1e9 rows in {1e9 / cluster_rate / 3600:.1f} h (shell: {1e9 / shell_scan / 3600:.1f} h)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
