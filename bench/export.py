"""COPY (SELECT ...) TO a Parquet file at table scale, against the same scan whose answer goes
nowhere, in the same run on the same server; and the peak memory of the export as the table grows.

    .venv/bin/python bench/export.py --host 127.0.0.1 --port 9042 [--rows 400000]
        [--memory 100000 400000 1000000] [--repeat 3] [--workers 2] [--before OTHER/.venv/bin/cqlsh-ext]

Tables of the order documents of tools/orders.py (keyspace bench_export, one partition per 10
rows), loaded once per size. Per run, whole processes (start-up, connection, scan):

- scan:   SELECT count(data.status), count(data.n), count(data.customer.name), count(data.items)
          FROM t WHERE data."order-id" IS NOT NULL ALLOW FILTERING CONFIRM
          (every row read and decoded, the same paths taken, nothing printed but one row);
- export: COPY (SELECT ck, data.status, data.n, data.customer.name, data.items FROM t
          WHERE data."order-id" IS NOT NULL ALLOW FILTERING CONFIRM) TO 'x.parquet'.

Prints rows/s of each and the ratio export / scan (the goal is at least 0.8), medians of --repeat
interleaved runs (with --before BIN, the same two by another cqlsh-ext, a checkout before a change,
in the same rounds) with the same worker processes forced (CQLSH_EXT_SCAN_WORKERS: the server's size
estimate of a new table lags); then the peak resident memory (largest process: the shell or a
worker) of the export at each --memory size. The file is read back: its row count must be the
truth, or the benchmark stops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from orders import SCHEMA_CQL, rows  # noqa: E402

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "bench_export"
WHERE = "data.\"order-id\" IS NOT NULL"
PATHS = "data.status, data.n, data.customer.name, data.items"

#: Runs a command and reports the peak RSS of its largest process (the shell or a worker it waited for).
_RSS = ("import resource, subprocess, sys\n"
        "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(code)\n")


def connect(args: argparse.Namespace) -> tuple[Any, Any]:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    auth = PlainTextAuthProvider(args.user, args.password)
    cluster = Cluster([args.host], port=args.port, auth_provider=auth)
    session = cluster.connect()
    session.default_timeout = 120
    return cluster, session


def load(session: Any, table: str, count: int) -> int:
    """The table of `count` rows (written once, in batches: a marker row in bench_export.loaded
    says it is complete); the truth: rows the export holds."""
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY)")
    name = table.split(".")[1]
    existing = session.execute(f"SELECT name FROM {KEYSPACE}.loaded WHERE name = %s", (name,)).one()
    step = 20_000
    truth = 0
    if not existing:
        session.execute(f"CREATE TABLE IF NOT EXISTS {table} {SCHEMA_CQL}")
    insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
    started = time.perf_counter()
    for start in range(0, count, step):
        data = rows(min(step, count - start), seed=start, partitions=1)
        truth += sum(doc is not None for _row, doc in data)
        if existing:
            continue
        params = [(f"p{(start + i) // 10}", start + i, r["data"]) for i, (r, _doc) in enumerate(data)]
        execute_concurrent_with_args(session, insert, params, concurrency=64, raise_on_first_error=True)
        elapsed = time.perf_counter() - started
        print(f"\r  loading {table}: {start + len(data):,}/{count:,} rows, {elapsed:.0f} s",
              end="", file=sys.stderr, flush=True)
    if not existing:
        session.execute(f"INSERT INTO {KEYSPACE}.loaded (name) VALUES (%s)", (name,))
        print(file=sys.stderr)
    return truth


def shell_args(args: argparse.Namespace, statement: str, binary: str = CQLSH_EXT) -> list[str]:
    return [binary, args.host, str(args.port), "-u", args.user, "-p", args.password,
            "--request-timeout", "300", "-e", statement]


def timed(args: argparse.Namespace, statement: str, binary: str = CQLSH_EXT) -> tuple[float, str]:
    env = {**os.environ, "CQLSH_EXT_SCAN_WORKERS": args.workers}
    started = time.perf_counter()
    out = subprocess.run(shell_args(args, statement, binary), capture_output=True, text=True, check=True,
                         timeout=3600, env=env)
    return time.perf_counter() - started, out.stdout


def export_statement(table: str, target: Path) -> str:
    return (f"COPY (SELECT ck, {PATHS} FROM {table} WHERE {WHERE} ALLOW FILTERING CONFIRM) "
            f"TO '{target}' WITH OVERWRITE = true")


def written(target: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(target).metadata.num_rows)


def throughput(args: argparse.Namespace, session: Any, directory: Path) -> int:
    count = args.rows
    table = f"{KEYSPACE}.orders_{count}"
    truth = load(session, table, count)
    target = directory / "bench.parquet"
    counts = ", ".join(f"count({p.strip()})" for p in PATHS.split(","))
    scan = f"SELECT {counts} FROM {table} WHERE {WHERE} ALLOW FILTERING CONFIRM"
    binaries = {"": CQLSH_EXT, **({"before ": args.before} if args.before else {})}
    times: dict[str, list[float]] = {f"{side}{what}": [] for side in binaries for what in ("scan", "export")}
    for _ in range(args.repeat):  # interleaved, so drift hits every side alike
        for side, binary in binaries.items():
            seconds, _out = timed(args, scan, binary)
            times[f"{side}scan"].append(seconds)
            seconds, out = timed(args, export_statement(table, target), binary)
            if written(target) != truth:
                print(f"the export wrote {written(target)} rows, the truth is {truth}: {out}",
                      file=sys.stderr)
                return 1
            times[f"{side}export"].append(seconds)
    print(f"{count:,} rows, {truth:,} exported ({args.workers} worker processes):")
    for side in binaries:
        base = statistics.median(times[f"{side}scan"])
        for what in ("scan", "export"):
            runs = times[f"{side}{what}"]
            median = statistics.median(runs)
            print(f"  {side + what:<14} {median:7.2f} s  {count / median:9,.0f} rows/s  "
                  f"ratio {base / median:.2f}  (runs: {', '.join(f'{t:.2f}' for t in runs)})")
    return 0


def memory(args: argparse.Namespace, session: Any, directory: Path) -> None:
    print("peak memory of the export (largest process):")
    for count in args.memory:
        table = f"{KEYSPACE}.orders_{count}"
        truth = load(session, table, count)
        target = directory / f"memory_{count}.parquet"
        env = {**os.environ, "CQLSH_EXT_SCAN_WORKERS": args.workers}
        out = subprocess.run([sys.executable, "-c", _RSS, *shell_args(args, export_statement(table, target))],
                             capture_output=True, text=True, check=True, timeout=3600, env=env)
        assert written(target) == truth
        print(f"  {count:>9,} rows: {int(out.stdout.split()[-1]) / 1024:6.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--user", default="cassandra")
    parser.add_argument("--password", default="cassandra")
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--memory", type=int, nargs="*", default=[100_000, 400_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default=str(os.cpu_count() or 1), help="worker processes to force")
    parser.add_argument("--before", help="another cqlsh-ext binary to measure alongside (a checkout "
                                         "before a change)")
    args = parser.parse_args()
    cluster, session = connect(args)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-export-") as directory:
            code = throughput(args, session, Path(directory))
            if code == 0 and args.memory:
                memory(args, session, Path(directory))
    finally:
        cluster.shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
