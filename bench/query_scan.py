"""A payload query at table scale: a filtered whole-table scan of order documents in mixed
containers and formats (tools/orders.py) by cqlsh-ext, against the script a user would write
today (a paged driver scan, each codec tried in turn, then json.loads / MessagePack / CBOR, the
filter in Python, one process), in the same run on the same server.

    .venv/bin/python bench/query_scan.py --host 127.0.0.1 --port 9042 [--rows 40000 400000] [--repeat 3]

Loads a table per size once (keyspace bench_query, one partition per 10 rows) unless it is there.
Prints, per size: the seconds of each (whole processes: start-up, connection and scan), rows/s,
and the ratio cqlsh-ext / script (the goal is at most 0.7), with cqlsh-ext's default and with
worker processes forced (CQLSH_EXT_SCAN_WORKERS, as the server's size estimate of a new table
lags); then the extra time a path SELECT on one partition adds over the same plain SELECT.
Both sides must find the same rows: a mismatch stops the benchmark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from orders import SCHEMA_CQL, rows  # noqa: E402

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "bench_query"
FILTER = "data.status = 'FAILED'"

#: The user's script: what people write today to answer the same question.
USER_SCRIPT = r'''
import gzip, json, sys
import cbor2, lz4.frame, msgpack, snappy, zstandard
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement

host, port, user, password, table = sys.argv[1:6]
cluster = Cluster([host], port=int(port), auth_provider=PlainTextAuthProvider(user, password))
session = cluster.connect()
zstd = zstandard.ZstdDecompressor()
decompressors = [snappy.decompress, zstd.decompress, gzip.decompress, lz4.frame.decompress]
parsers = [json.loads, msgpack.unpackb, cbor2.loads]
found = 0
for row in session.execute(SimpleStatement(f"SELECT ck, data FROM {table}", fetch_size=5000), timeout=300):
    data = row.data
    for decompress in decompressors:
        try:
            data = decompress(row.data)
            break
        except Exception:
            pass
    doc = None
    for parse in parsers:
        try:
            doc = parse(data)
            break
        except Exception:
            pass
    if isinstance(doc, dict) and doc.get("status") == "FAILED":
        found += 1
print(found)
cluster.shutdown()
'''


def connect(args: argparse.Namespace) -> Any:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    auth = PlainTextAuthProvider(args.user, args.password)
    cluster = Cluster([args.host], port=args.port, auth_provider=auth)
    return cluster, cluster.connect()


def load(session: Any, table: str, count: int) -> int:
    """The table of `count` rows (written once); the truth: how many match FILTER."""
    from cassandra.concurrent import execute_concurrent_with_args

    data = rows(count, seed=count, partitions=max(1, count // 10))
    truth = sum(1 for _row, doc in data if doc is not None and doc.get("status") == "FAILED")
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    existing = session.execute("SELECT count(*) FROM system_schema.tables WHERE keyspace_name = %s "
                               "AND table_name = %s", (KEYSPACE, table.split(".")[1])).one()[0]
    if existing:
        return truth
    session.execute(f"CREATE TABLE {table} {SCHEMA_CQL}")
    insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
    params = [(r["pk"], r["ck"], r["data"]) for r, _doc in data]
    execute_concurrent_with_args(session, insert, params, concurrency=64)
    return truth


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=1800,
                         env={**os.environ, **(env or {})})
    return time.perf_counter() - started, out.stdout


def ours(args: argparse.Namespace, statement: str, env: dict[str, str] | None = None) -> tuple[float, int]:
    seconds, out = timed([CQLSH_EXT, args.host, str(args.port), "-u", args.user, "-p", args.password,
                          "--request-timeout", "300", "--output-format", "json", "-e", statement], env)
    return seconds, sum(1 for line in out.splitlines() if line.startswith("{"))


def script(args: argparse.Namespace, table: str) -> tuple[float, int]:
    seconds, out = timed([sys.executable, "-c", USER_SCRIPT, args.host, str(args.port), args.user,
                          args.password, table])
    return seconds, int(out.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--user", default="cassandra")
    parser.add_argument("--password", default="cassandra")
    parser.add_argument("--rows", type=int, nargs="+", default=[40000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default=str(os.cpu_count() or 1), help="worker processes to force")
    args = parser.parse_args()
    cluster, session = connect(args)
    for count in args.rows:
        table = f"{KEYSPACE}.orders_{count}"
        truth = load(session, table, count)
        statement = f"SELECT ck FROM {table} WHERE {FILTER} ALLOW FILTERING"
        results: dict[str, list[float]] = {"script": [], "cqlsh-ext": [], "cqlsh-ext workers": []}
        forced = {"CQLSH_EXT_SCAN_WORKERS": args.workers}
        for _ in range(args.repeat):  # interleaved, so drift hits every side alike
            for name in results:
                if name == "script":
                    seconds, found = script(args, table)
                else:
                    seconds, found = ours(args, statement, forced if name.endswith("workers") else None)
                if found != truth:
                    print(f"{name} found {found} rows, the truth is {truth}", file=sys.stderr)
                    return 1
                results[name].append(seconds)
        base = statistics.median(results["script"])
        print(f"{count:,} rows, {truth:,} match {FILTER}:")
        for name, times in results.items():
            median = statistics.median(times)
            print(f"  {name:<18} {median:7.2f} s  {count / median:9,.0f} rows/s  ratio {median / base:.2f}"
                  f"  (runs: {', '.join(f'{t:.2f}' for t in times)})")
    table = f"{KEYSPACE}.orders_{args.rows[0]}"
    plain = f"SELECT ck, data FROM {table} WHERE pk = 'p7'"
    path = f"SELECT ck, data.status FROM {table} WHERE pk = 'p7'"
    times: dict[str, list[float]] = {plain: [], path: []}
    for _ in range(max(5, args.repeat)):
        for statement in times:
            times[statement].append(ours(args, statement)[0])
    a, b = statistics.median(times[plain]), statistics.median(times[path])
    print(f"one partition: plain SELECT {a:.3f} s, path SELECT {b:.3f} s, "
          f"extra {b - a:+.3f} s ({b / a:.2f}x)")
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
