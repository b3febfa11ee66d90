"""COMPRESSION REWRITE's scan alone: a rewrite that writes nothing (every value already in the
target chain, or null), each a whole process of the real binary, with the driver's rows
(`CQLSH_EXT_PAGES_IN=0`) and with pages in (the default), interleaved; and the driver's side of
the same SELECT in this process (its rows made, or its pages kept whole and counted).

    .venv/bin/python bench/rewrite_scan.py --port PORT [--host 127.0.0.1] [--rows 60000] [--repeat 5]

The table (`bench_rewrite.docs`, made once: a marker row says it is complete): small JSON order
documents compressed with zstd (the target), one row in 20 null. Client CPU a row: getrusage of
the children (user + sys) of a `cqlsh-ext -e "COMPRESSION REWRITE ... AS 'zstd' CONFIRM"`, less
that of the same statement on an empty twin table (start-up, the schema, the ring cut); the
median of --repeat rounds with the lowest and highest. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "bench_rewrite"
ROWS_A_PARTITION = 100


def session_for(host: str, port: int) -> Any:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                      protocol_version=5)
    return cluster.connect()


def document(i: int) -> bytes:
    import zstandard

    doc = {"order": i, "status": ("NEW", "PAID", "SHIPPED", "FAILED")[i % 4], "n": i % 997,
           "items": [{"sku": f"S{i % 50}", "qty": 1 + i % 3}], "note": "leave at the door" * (i % 3)}
    return zstandard.ZstdCompressor(level=3).compress(json.dumps(doc).encode())


def load(session: Any, rows: int) -> None:
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.empty (pk int, ck int, data blob, "
                    "PRIMARY KEY (pk, ck))")
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = 'docs'").one()
    if done is not None and done.rows == rows:
        return
    session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.docs")
    session.execute(f"CREATE TABLE {KEYSPACE}.docs (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.docs (pk, ck, data) VALUES (?, ?, ?)")
    values = [document(i) for i in range(1000)]
    args = [(i // ROWS_A_PARTITION, i, None if i % 20 == 0 else values[i % 1000]) for i in range(rows)]
    for at in range(0, rows, 5000):
        execute_concurrent_with_args(session, insert, args[at:at + 5000], concurrency=64,
                                     raise_on_first_error=True)
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES ('docs', {rows})")


def shell(args: argparse.Namespace, table: str, pages_in: bool) -> float:
    """CPU seconds (user + sys, the children) of the rewrite of `table`, which writes nothing."""
    env = {k: v for k, v in os.environ.items() if k != "CQLSH_EXT_PAGES_IN"}
    if not pages_in:
        env["CQLSH_EXT_PAGES_IN"] = "0"
    env["HOME"] = args.home
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([CQLSH_EXT, args.host, str(args.port), "-u", "cassandra", "-p", "cassandra",
                           "--insecure-password-without-warning", "-e",
                           f"COMPRESSION REWRITE {KEYSPACE}.{table}.data AS 'zstd' CONFIRM"],
                          capture_output=True, text=True, env=env, timeout=3600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or ": 0 rows rewritten" not in done.stdout:
        sys.exit(f"{table}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def driver_scan(session: Any, pages_in: bool) -> tuple[int, float]:
    """The rewrite's SELECT (keys, blob, TTL) at fetch 5,000, its pages counted: CPU seconds."""
    from cassandra.query import SimpleStatement

    from cqlsh_ext.scanning.scan import execute_tuples

    statement = SimpleStatement(f"SELECT pk, ck, data, TTL(data) FROM {KEYSPACE}.docs", fetch_size=5000)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = usage.ru_utime + usage.ru_stime
    fut = execute_tuples(session, statement, pages_in=pages_in)
    rows = 0
    while True:
        rows += len(fut.result().current_rows)
        if not fut.has_more_pages:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            return rows, usage.ru_utime + usage.ru_stime - started
        fut.start_fetching_next_page()


def spread(figures: list[float]) -> str:
    figures = sorted(figures)
    return f"{statistics.median(figures):6.2f} ({figures[0]:.2f}-{figures[-1]:.2f})"


def main() -> int:
    import tempfile

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rows", type=int, default=60_000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    session = session_for(args.host, args.port)
    load(session, args.rows)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as home:
        args.home = home
        whole: dict[bool, list[float]] = {False: [], True: []}
        driver: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.repeat):
            for pages_in in (False, True):
                start_up = shell(args, "empty", pages_in)
                whole[pages_in].append((shell(args, "docs", pages_in) - start_up) / args.rows * 1e6)
                rows, spent = driver_scan(session, pages_in)
                driver[pages_in].append(spent / rows * 1e6)
    load_after = os.getloadavg()
    session.cluster.shutdown()
    print(f"{KEYSPACE}.docs, {args.rows:,} rows (1 in 20 null, the others zstd already); "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load_before[0]:.1f} at the "
          f"start, {load_after[0]:.1f} at the end; client CPU us a row, median of {args.repeat} "
          "(lowest-highest)")
    for name, runs in (("REWRITE AS 'zstd' (writes nothing)", whole), ("its SELECT, pages counted", driver)):
        print(f"{name:<36} driver rows {spread(runs[False])}   pages in {spread(runs[True])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
