"""The Python API's Arrow stream (issue 72's goals): the first batch in hand before 20 % of the
read's time, and the peak memory of a stream read to the end flat in the table's size.

    .venv/bin/python bench/api_stream.py --host 127.0.0.1 --port 9042 [--repeat 3]
        [--small 44000] [--large 440000] [--big-rows 1000]

Tables (keyspace bench_stream, loaded once, kept for later runs): `small` and `large`, --small and
--large rows of ~1 KB order documents (snappy JSON, one in six random bytes: tools/orders.py's
generator), and `big`, --big-rows documents of ~1 MB each (about 1 GB decompressed, zstd).

Each side is a whole process reading `SELECT pk, ck, data FROM t` (the whole blob, no path: the
statement users type) with `db.query(...).to_reader()`, dropping each batch once counted: its wall
and CPU time to the first batch and to the end (time.perf_counter, getrusage with children), and
its peak RSS (wait4). Prints medians of --repeat rounds with their spread, the first batch's share
of the read, and the large table's peak RSS against the small one's. Nothing is asserted but that
every run reads every row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from readers import run_process, session_for  # noqa: E402

KEYSPACE = "bench_stream"

#: One reading: connect, to_reader(), the moments of its first batch and its end, as JSON.
READ = r'''
import json, resource, sys, time
import cqlsh_ext
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
host, port, table = sys.argv[1:4]
with cqlsh_ext.connect(host, int(port), username="cassandra", password="cassandra") as db:
    started, started_cpu = time.perf_counter(), cpu()
    reader = db.query(f"SELECT pk, ck, data FROM {table}").to_reader()
    rows = batches = 0
    first = first_cpu = None
    for batch in reader:
        if first is None:
            first, first_cpu = time.perf_counter() - started, cpu() - started_cpu
        rows += batch.num_rows
        batches += 1
        del batch
    print(json.dumps({"rows": rows, "batches": batches, "first": first, "first_cpu": first_cpu,
                      "end": time.perf_counter() - started, "end_cpu": cpu() - started_cpu}))
'''


def load(session: Any, table: str, rows: int, big: bool) -> None:
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = %s", (table,)).one()
    if done is not None and done.rows == rows:
        print(f"{KEYSPACE}.{table}: {rows:,} rows already loaded", flush=True)
        return
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{table}")
    session.execute(f"CREATE TABLE {KEYSPACE}.{table} (pk text, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{table} (pk, ck, data) VALUES (?, ?, ?)")
    if big:
        import zstandard
        from orders import rows as order_rows

        docs = [doc for _row, doc in order_rows(64) if doc is not None]
        padding = "x" * 1000

        def value(i: int) -> bytes:
            doc = {**docs[i % len(docs)], "lines": [{"n": j, "text": padding} for j in range(1000)]}
            return zstandard.compress(json.dumps(doc).encode(), 3)

        data = ((f"p{i % 50}", i, value(i)) for i in range(rows))
    else:
        from orders import rows as order_rows

        made = order_rows(rows, partitions=max(1, rows // 2000))
        data = ((r["pk"], r["ck"], r["data"]) for r, _doc in made)
    chunk: list[Any] = []
    for row in data:
        chunk.append(row)
        if len(chunk) >= 2000:
            execute_concurrent_with_args(session, insert, chunk, concurrency=64, raise_on_first_error=True)
            chunk = []
    if chunk:
        execute_concurrent_with_args(session, insert, chunk, concurrency=64, raise_on_first_error=True)
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES (%s, %s)", (table, rows))
    print(f"{KEYSPACE}.{table}: {rows:,} rows loaded", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", type=int, default=44_000)
    parser.add_argument("--large", type=int, default=440_000)
    parser.add_argument("--big-rows", type=int, default=1_000)
    args = parser.parse_args()
    session = session_for(args.host, args.port)
    tables = {"small": args.small, "large": args.large, "big": args.big_rows}
    for name, rows in tables.items():
        load(session, name, rows, name == "big")
    session.cluster.shutdown()
    start_load = os.getloadavg()
    env = {**os.environ, "CQLSH_EXT_SCAN_WORKERS": "1"}
    found: dict[str, list[tuple[dict[str, Any], int]]] = {name: [] for name in tables}
    for _round in range(args.repeat):
        for name, rows in tables.items():
            command = [sys.executable, "-c", READ, args.host, str(args.port), f"{KEYSPACE}.{name}"]
            run = run_process(command, env)
            doc = json.loads(run.out.strip().splitlines()[0])
            if doc["rows"] != rows:
                raise SystemExit(f"{name}: {doc['rows']:,} rows read of {rows:,}")
            found[name].append((doc, run.rss_kb))
    print(f"\n{'table':<7} {'rows':>9} {'batches':>8} {'first batch s (spread)':>24} {'end s':>8} "
          f"{'first/end wall':>15} {'first/end CPU':>14} {'peak MB (spread)':>18}")
    peaks: dict[str, float] = {}
    for name, runs in found.items():
        firsts = sorted(doc["first"] for doc, _rss in runs)
        ends = sorted(doc["end"] for doc, _rss in runs)
        share = statistics.median(doc["first"] / doc["end"] for doc, _rss in runs)
        cpu_share = statistics.median(doc["first_cpu"] / doc["end_cpu"] for doc, _rss in runs)
        rss = sorted(r / 1024 for _doc, r in runs)
        peaks[name] = statistics.median(rss)
        print(f"{name:<7} {tables[name]:>9,} {runs[0][0]['batches']:>8,} "
              f"{statistics.median(firsts):>10.3f} ({firsts[0]:.3f}-{firsts[-1]:.3f}) "
              f"{statistics.median(ends):>8.2f} "
              f"{share:>15.3f} {cpu_share:>14.3f} {peaks[name]:>8.0f} ({rss[0]:.0f}-{rss[-1]:.0f})")
    print(f"\npeak RSS, large / small: {peaks['large'] / peaks['small']:.2f}x (goal: at most 1.2x); "
          f"the first batch's share of the read: goal at most 0.2")
    print(f"load average {start_load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
