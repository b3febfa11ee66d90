"""COMPRESSION STATS throughput against a bare cassandra-driver paged scan of the same column.

Loads a 100,000-row table of snappy-compressed JSON order records (the demo records, raw snappy as
Java's Snappy.compress writes them) once, or with --skewed a table of skewed sizes (JSON documents
from 100 B to 1 MB before compression, a Pareto tail: most values small, most bytes in a few large
ones), then alternates in the same run:
  bare     cassandra-driver: SELECT data FROM t, fetch_size 5000, every row's value touched
  stats    the real binary: cqlsh-ext -e "COMPRESSION STATS [PARALLEL n] SELECT data FROM t"
           (its own rows/s over the scan and aggregation, and the process wall time with start-up)
and prints the medians and the ratio stats / bare (target >= 0.8).

    .venv/bin/python bench/stats.py [--rows 100000] [--skewed] [--repeat 3] [--parallel 0 4 ...]
                                    [--port 25042 | --host H --port P]

Without --host it starts (and afterwards stops) its own Cassandra from tools/devcassandra.py on
ports 25042/25000/25199 in .cache/bench-cassandra-stats, unless one is already running there.
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import devcassandra  # noqa: E402

KEYSPACE = "bench_stats"
#: The table measured: the 4 KB order table, or with --skewed the table of skewed sizes.
TABLE = "orders"
SKEWED = "skewed"
#: The skewed table's sizes: 100 B up, a Pareto tail of this index, cut at 1 MB (median about
#: 190 B, mean about 1 KB, a value in 2,000 past 100 KB).
SKEW_MIN, SKEW_MAX, SKEW_ALPHA = 100, 1 << 20, 1.1
CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")


def _session(host: str, port: int):  # type: ignore[no-untyped-def]
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy

    profile = ExecutionProfile(
        load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"), request_timeout=60
    )
    cluster = Cluster(
        [host],
        port=port,
        auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        protocol_version=5,
    )
    return cluster, cluster.connect()


def skewed_blobs(count: int, seed: int = 7) -> list[bytes]:
    """`count` snappy-compressed JSON documents of skewed sizes: {"id", "doc"}, doc a run of the
    demo's order documents as one JSON string, cut to the drawn size."""
    import random

    import cramjam

    from cqlsh_ext.demo.records import documents

    rng = random.Random(seed)
    text = "".join(documents(400, seed=11))
    while len(text) < SKEW_MAX:
        text += text
    out = []
    for i in range(count):
        size = min(SKEW_MAX, int(SKEW_MIN / (1.0 - rng.random()) ** (1.0 / SKEW_ALPHA)))
        start = rng.randrange(0, len(text) - size)
        doc = json.dumps({"id": i, "doc": text[start:start + max(0, size - 20)]})
        out.append(bytes(cramjam.snappy.compress_raw(doc.encode())))
    return out


def load(session, rows: int) -> None:  # type: ignore[no-untyped-def]
    """Create and fill the table unless a previous run left it complete (a marker row says so)."""
    import cramjam
    from cassandra.concurrent import execute_concurrent_with_args

    from cqlsh_ext.demo.records import documents

    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{TABLE} (id int PRIMARY KEY, data blob)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = '{TABLE}'").one()
    if done is not None and done.rows == rows:
        print(f"table {KEYSPACE}.{TABLE}: {rows:,} rows already loaded")
        return
    session.execute(f"TRUNCATE {KEYSPACE}.{TABLE}")
    if TABLE == SKEWED:  # 20,000 distinct sizes and documents, cycled
        blobs = skewed_blobs(20_000)
    else:  # 5,000 distinct documents in the article's size mix, cycled: enough variety for the codec.
        blobs = [bytes(cramjam.snappy.compress_raw(d.encode())) for d in documents(5000, seed=11)]
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{TABLE} (id, data) VALUES (?, ?)")
    started = time.perf_counter()
    step = 10_000
    for start in range(0, rows, step):
        args = [(i, blobs[i % len(blobs)]) for i in range(start, min(rows, start + step))]
        execute_concurrent_with_args(session, insert, args, concurrency=64, raise_on_first_error=True)
        print(f"\rloading {min(rows, start + step):,}/{rows:,} rows", end="", flush=True)
    print(f"\rloaded {rows:,} rows in {time.perf_counter() - started:.0f} s")
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES ('{TABLE}', {rows})")


def bare_scan(session) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    from cassandra.query import SimpleStatement

    started = time.perf_counter()
    n = 0
    total = 0
    for row in session.execute(SimpleStatement(f"SELECT data FROM {KEYSPACE}.{TABLE}", fetch_size=5000)):
        total += len(row.data)
        n += 1
    return n, time.perf_counter() - started


def stats_run(host: str, port: int, parallel: int | None, home: str,
              binary: str = CQLSH_EXT) -> tuple[int, float, float]:
    """(rows, seconds the command reports for scan + aggregation, process wall seconds)."""
    option = f"PARALLEL {parallel} " if parallel else ""
    cmd = [
        binary,
        host,
        str(port),
        "-u",
        "cassandra",
        "-p",
        "cassandra",
        "--request-timeout",
        "60",
        "--output-format",
        "json",
        "-e",
        f"COMPRESSION STATS {option}SELECT data FROM {KEYSPACE}.{TABLE}",
    ]
    env = {**os.environ, "HOME": home}
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"cqlsh-ext failed: {proc.stderr}")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    if not doc["complete"]:
        raise RuntimeError(f"incomplete scan: {doc.get('error')}")
    return doc["rows"], doc["elapsed_s"], wall


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skewed", action="store_true", help="the table of skewed sizes (100 B to 1 MB)")
    p.add_argument("--host", default=None, help="use a running server instead of starting one")
    p.add_argument("--port", type=int, default=25042)
    p.add_argument(
        "--parallel",
        type=int,
        nargs="*",
        default=[0, 4],
        help="PARALLEL values to measure (0 = the command's default, one stream)",
    )
    p.add_argument("--before", help="another cqlsh-ext binary to measure alongside (a checkout "
                                    "before a change)")
    args = p.parse_args()
    global TABLE
    if args.skewed:
        TABLE = SKEWED
    binaries = {"": CQLSH_EXT}
    if args.before:
        binaries = {"before, ": args.before, **binaries}

    instance = None
    host = args.host or "127.0.0.1"
    if args.host is None:
        cfg = devcassandra.Config(
            directory=ROOT / ".cache" / "bench-cassandra-stats",
            native_port=args.port,
            storage_port=25000,
            jmx_port=25199,
            cluster_name="cqlsh-ext bench",
        )
        instance = devcassandra.Instance(cfg)
        if instance.is_running():
            instance.wait_for_cql()
            instance = None  # someone else's run: leave it running
        else:
            print(f"starting Cassandra on {host}:{args.port} ...", flush=True)
            instance.start(die_with_parent=True)
    cluster, session = _session(host, args.port)
    try:
        load(session, args.rows)
        # Settle: a flush-free first scan warms the server's caches and the JIT for everyone.
        bare_scan(session)
        results: dict[str, list[float]] = {"bare": []}
        walls: dict[str, list[float]] = {}
        paired: dict[str, list[float]] = {}
        with tempfile.TemporaryDirectory() as home:
            for rnd in range(args.repeat):
                # Each round brackets the cqlsh-ext runs with two bare scans and compares with their
                # mean: the machine's load drifts (other jobs share it), a paired ratio cancels that.
                n, secs = bare_scan(session)
                first = n / secs
                rates: dict[str, tuple[float, float]] = {}
                # Alternate the order of the variants: none always runs right after a bare scan.
                variants = [(b, par) for b in binaries for par in args.parallel]
                for which, par in variants if rnd % 2 == 0 else list(reversed(variants)):
                    key = which + (f"PARALLEL {par}" if par else "default (one stream)")
                    rows, secs, wall = stats_run(host, args.port, par or None, home, binaries[which])
                    if rows != n:
                        raise RuntimeError(f"{key} scanned {rows} rows, the bare scan {n}")
                    rates[key] = (rows / secs, rows / wall)
                n, secs = bare_scan(session)
                base = (first + n / secs) / 2
                results["bare"].append(base)
                line = [f"round {rnd + 1}: bare {first:,.0f} / {n / secs:,.0f} rows/s"]
                for key, (rate, wall) in rates.items():
                    results.setdefault(key, []).append(rate)
                    walls.setdefault(key, []).append(wall)
                    paired.setdefault(key, []).append(rate / base)
                    line.append(f"{key} {rate:,.0f} rows/s = {rate / base:.2f} x ({wall:,.0f} with start-up)")
                print("; ".join(line), flush=True)
        bare = statistics.median(results["bare"])
        print()
        print(f"{KEYSPACE}.{TABLE}: {args.rows:,} rows, {os.cpu_count()} CPUs, "
              f"medians of {args.repeat} rounds:")
        print(f"  bare cassandra-driver paged scan (fetch_size 5000)      {bare:>8,.0f} rows/s")
        for key, values in results.items():
            if key == "bare":
                continue
            med, wall, ratio = (
                statistics.median(values),
                statistics.median(walls[key]),
                statistics.median(paired[key]),
            )
            print(
                f"  COMPRESSION STATS, {key:<30} {med:>8,.0f} rows/s = {ratio:.2f} x bare "
                f"(paired per round; process incl. start-up {wall:,.0f} rows/s = {wall / bare:.2f} x)"
            )
    finally:
        cluster.shutdown()
        if instance is not None:
            instance.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
