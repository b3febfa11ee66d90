"""DESCRIBE PAYLOAD ... ALL against a plain scan of the same rows, in the same run on the same server.

Loads the demo's order table (the demo records, snappy-compressed JSON orders in the compression
article's size mix, as `cqlsh-ext demo load` writes them; 5,000 distinct documents cycled) once,
then alternates, round by round:
  bare      cassandra-driver: SELECT data FROM t, fetch_size 5000, every value touched, nothing decoded
  script    the same scan, each value decompressed (python-snappy) and parsed (json.loads): what a
            user's script pays to read the values at all
  describe  the real binary: cqlsh-ext -e "DESCRIBE PAYLOAD ks.t.data ALL JSON", in the shell's
            process (CQLSH_EXT_SCAN_WORKERS=1) and over worker processes (=--workers)
and prints, per side, the medians of its rows/s (describe: over the reading the report times, and
over the whole process with start-up) and of its CPU seconds (describe: the process and its
workers), with the ratios to the bare scan. Figures only: nothing is asserted.

    .venv/bin/python bench/describe.py [--rows 100000] [--repeat 3] [--workers 2]
                                       [--host H --port P]

Without --host it starts (and afterwards stops) its own Cassandra from tools/devcassandra.py on
free ports, its data kept in .cache/bench-cassandra-describe for the next run.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import devcassandra  # noqa: E402

KEYSPACE, TABLE = "bench_describe", "orders"
CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")


def _session(host: str, port: int):  # type: ignore[no-untyped-def]
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy

    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"),
                               request_timeout=60)
    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, protocol_version=5)
    return cluster, cluster.connect()


def load(session, rows: int) -> None:  # type: ignore[no-untyped-def]
    """Create and fill the table unless a previous run left it complete (a marker row says so)."""
    import cramjam
    from cassandra.concurrent import execute_concurrent_with_args

    from cqlsh_ext.demo.records import documents

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{TABLE} (id int PRIMARY KEY, data blob)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, rows int)")
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.loaded WHERE name = 'orders'").one()
    if done is not None and done.rows == rows:
        print(f"table {KEYSPACE}.{TABLE}: {rows:,} rows already loaded")
        return
    session.execute(f"TRUNCATE {KEYSPACE}.{TABLE}")
    blobs = [bytes(cramjam.snappy.compress_raw(d.encode())) for d in documents(5000, seed=11)]
    insert = session.prepare(f"INSERT INTO {KEYSPACE}.{TABLE} (id, data) VALUES (?, ?)")
    started = time.perf_counter()
    for start in range(0, rows, 10_000):
        args = [(i, blobs[i % len(blobs)]) for i in range(start, min(rows, start + 10_000))]
        execute_concurrent_with_args(session, insert, args, concurrency=64, raise_on_first_error=True)
        print(f"\rloading {min(rows, start + 10_000):,}/{rows:,} rows", end="", flush=True)
    print(f"\rloaded {rows:,} rows in {time.perf_counter() - started:.0f} s")
    session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, rows) VALUES ('orders', {rows})")


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scan(session, decode: bool) -> tuple[int, float, float]:  # type: ignore[no-untyped-def]
    """(rows, wall seconds, CPU seconds) of the plain scan, values decoded or only touched."""
    import snappy
    from cassandra.query import SimpleStatement

    started, cpu = time.perf_counter(), _cpu_self()
    n = total = 0
    for row in session.execute(SimpleStatement(f"SELECT data FROM {KEYSPACE}.{TABLE}", fetch_size=5000)):
        if decode:
            total += len(json.loads(snappy.decompress(row.data)))
        else:
            total += len(row.data)
        n += 1
    return n, time.perf_counter() - started, _cpu_self() - cpu


def describe(host: str, port: int, workers: int, home: str) -> tuple[int, float, float, float, dict]:
    """(rows, the reading's seconds, process wall seconds, CPU seconds of the process and its
    workers, the report) of DESCRIBE PAYLOAD ... ALL JSON."""
    cmd = [CQLSH_EXT, host, str(port), "-u", "cassandra", "-p", "cassandra", "--request-timeout", "60",
           "-e", f"DESCRIBE PAYLOAD {KEYSPACE}.{TABLE}.data ALL JSON"]
    env = {**os.environ, "HOME": home, "CQLSH_EXT_SCAN_WORKERS": str(workers)}
    started, cpu = time.perf_counter(), _cpu_children()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    wall, cpu = time.perf_counter() - started, _cpu_children() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"cqlsh-ext failed: {proc.stderr}")
    doc = json.loads(proc.stdout)
    if doc["interrupted"] or doc["error"]:
        raise RuntimeError(f"incomplete reading: {doc['error']}")
    return doc["rows_read"], doc["reading"]["seconds"], wall, cpu, doc


def start_server() -> tuple[devcassandra.Instance, int]:
    """Our own Cassandra on free ports (picked again if one is taken before it binds them)."""
    directory = ROOT / ".cache" / "bench-cassandra-describe"
    for attempt in range(3):
        native, storage, jmx = devcassandra.free_ports(3)
        instance = devcassandra.Instance(devcassandra.Config(directory=directory, native_port=native,
                                                             storage_port=storage, jmx_port=jmx,
                                                             cluster_name="cqlsh-ext bench"))
        if instance.is_running():
            raise SystemExit(f"a Cassandra already runs in {directory}: stop it (bin/dev-cassandra stop "
                             f"--dir {directory}) or give --host and --port")
        print(f"starting Cassandra on 127.0.0.1:{native} ...", flush=True)
        try:
            instance.start(die_with_parent=True)
            return instance, native
        except devcassandra.PortsInUse:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=2, help="worker processes of the second describe side")
    p.add_argument("--host", default=None, help="use a running server instead of starting one")
    p.add_argument("--port", type=int, default=9042, help="the running server's CQL port (with --host)")
    args = p.parse_args()

    instance = None
    host, port = args.host or "127.0.0.1", args.port
    if args.host is None:
        instance, port = start_server()
    cluster, session = _session(host, port)
    sides = ["bare", "script", "describe, 1 process", f"describe, {args.workers} worker processes"]
    rates: dict[str, list[float]] = {side: [] for side in sides}
    whole: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    paired: dict[str, list[float]] = {}
    report = None
    try:
        load(session, args.rows)
        scan(session, decode=False)  # warms the server's caches for everyone
        with tempfile.TemporaryDirectory() as home:
            for rnd in range(args.repeat):
                n, wall, cpu = scan(session, decode=False)
                bare = n / wall
                rates["bare"].append(bare)
                cpus["bare"].append(cpu)
                n_script, wall, cpu = scan(session, decode=True)
                rates["script"].append(n_script / wall)
                cpus["script"].append(cpu)
                line = [f"round {rnd + 1}: bare {bare:,.0f} rows/s", f"script {n_script / wall:,.0f}"]
                for side, workers in ((sides[2], 1), (sides[3], args.workers)):
                    rows, reading, wall, cpu, report = describe(host, port, workers, home)
                    if rows != n:
                        raise RuntimeError(f"{side} read {rows} rows, the bare scan {n}")
                    rates[side].append(rows / reading)
                    whole.setdefault(side, []).append(rows / wall)
                    cpus[side].append(cpu)
                    paired.setdefault(side, []).append(rows / reading / bare)
                    line.append(f"{side} {rows / reading:,.0f} ({rows / wall:,.0f} with start-up)")
                print("; ".join(line), flush=True)
    finally:
        cluster.shutdown()
        if instance is not None:
            instance.stop()
    med = statistics.median
    print(f"\n{args.rows:,} rows, medians of {args.repeat} rounds (rows/s; CPU seconds):")
    bare_rate, bare_cpu = med(rates["bare"]), med(cpus["bare"])
    for side in sides:
        text = f"  {side:<30} {med(rates[side]):>9,.0f} rows/s  {med(rates[side]) / bare_rate:5.2f} x bare"
        if side in whole:
            text += f"  ({med(whole[side]):,.0f} rows/s with start-up; paired ratio {med(paired[side]):.2f})"
        text += f"; CPU {med(cpus[side]):.2f} s = {med(cpus[side]) / bare_cpu:.1f} x bare"
        print(text)
    if report is not None:
        data = report["places"][0]
        print(f"\nthe report: {len(data['paths'])} paths, "
              + ", ".join(f"{e['label']} {e['count']:,}" for e in data["encodings"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
