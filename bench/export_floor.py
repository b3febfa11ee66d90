"""COPY (SELECT ...) TO against the floor, in one run: client CPU a row of each export against a bare
driver scan and against the floor, a bare scan that also decompresses every value with the
producers' own C libraries (python-snappy, zstandard, zlib, lz4: what any client reading these
values must at least do), on bench/readers.py's tables.

    .venv/bin/python bench/export_floor.py --host 127.0.0.1 --port 9042
        [--orders-rows 44000] [--skewed-rows 300000] [--repeat 3] [--engines native python]
        [--before OTHER/cqlsh-ext] [--formats parquet jsonl csv]

The exports (each a whole process, `cqlsh-ext -e`, one worker; its CPU, children included, less that
of the same statement on one partition, as bench/readers.py measures a reader):
- `whole`: the whole payload column and two paths of the orders table,
  COPY (SELECT pk, ck, data.status, data.n, data FROM orders) TO 'f'
- `paths`: paths only, COPY (SELECT pk, ck, data.status, data.n FROM t) TO 'f', on the orders and
  the skewed tables;
- `filtered`: bench/export.py's statement, paths and a payload condition (a scan by token ranges).

The user's export script (USER_EXPORT: the scan, each value decompressed and parsed, pyarrow's
`Table.from_pylist` written, or orjson lines), for each whole export's format it writes (Parquet,
JSON Lines), in the same rounds.

Prints per export, format, engine and binary: CPU microseconds a row, its ratio to the bare scan,
to the floor and, for a whole export, to the user's script of its format (the goals: the whole
payload column at most 0.7 times the script, paths only at most the floor), and the peak memory.
Medians of --repeat interleaved rounds; the load average at the
start and the end (a shared machine: CPU, not wall time, is the figure). Nothing is asserted but
that every run succeeds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readers import (  # noqa: E402
    CQLSH_EXT,
    FIRST_PARTITION,
    KEYSPACE,
    Run,
    bare,
    load,
    run_process,
    session_for,
    shell_run,
)

#: A bare scan that decompresses every value with the producers' libraries, by its container's
#: signature (a value of none is plain JSON, snappy's raw block, or random bytes: tried in turn).
FLOOR = r'''
import gzip, json, resource, sys, time, zlib
import lz4.frame, snappy, zstandard
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement, tuple_factory
host, port, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                  protocol_version=5)
session = cluster.connect()
session.row_factory = tuple_factory
zstd = zstandard.ZstdDecompressor()
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def decompressed(value):
    head = value[:4]
    if head == b"\x28\xb5\x2f\xfd":
        return zstd.decompress(value)
    if head[:2] == b"\x1f\x8b":
        return zlib.decompress(value, 31)
    if head == b"\x04\x22\x4d\x18":
        return lz4.frame.decompress(value)
    if head[:1] in (b"{", b"["):
        return value
    try:
        return snappy.decompress(value)
    except Exception:
        return value
c0, w0 = cpu(), time.perf_counter()
n = total = 0
for row in session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table}", fetch_size=5000)):
    total += len(decompressed(row[2]))
    n += 1
print(json.dumps({"rows": n, "cpu": cpu() - c0, "wall": time.perf_counter() - w0, "bytes": total}))
cluster.shutdown()
'''

#: The user's export script: the bare scan, every value decompressed and parsed as the user's
#: script does (bench/query_scan.py's MAGIC_DOCUMENT: the container by its first bytes, then orjson,
#: msgpack or cbor2), each row {pk, ck, data.status, data.n, data} (the document; None for a value
#: that does not read), then per 5,000 rows either `pyarrow.Table.from_pylist` written by one
#: ParquetWriter (the document as its JSON text, status a string, n a float: the orders table mixes
#: types at those places, which from_pylist refuses) or orjson lines (`default=str`, a big integer
#: by json.dumps). Its CPU and wall time are measured around the scan and the writing.
USER_EXPORT = r"""
import json, resource, sys, time
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement, tuple_factory
host, port, table, fmt, path, where = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                  protocol_version=5)
session = cluster.connect()
session.row_factory = tuple_factory
DOCUMENT
import pyarrow, pyarrow.parquet
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def text(value):
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, default=str)
def line(row):
    try:
        return orjson.dumps(row, default=str)
    except TypeError:
        return json.dumps(row, default=str).encode()
writer = None
out = open(path, "wb") if fmt == "jsonl" else None
def flush(rows):
    global writer
    if fmt == "jsonl":
        out.write(b"".join(line(row) + b"\n" for row in rows))
        return
    for row in rows:
        doc = row["data"]
        row["data.status"] = None if row["data.status"] is None else str(row["data.status"])
        n = row["data.n"]
        row["data.n"] = float(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else None
        row["data"] = None if doc is None else text(doc)
    batch = pyarrow.Table.from_pylist(rows, schema=writer.schema if writer is not None else None)
    if writer is None:
        writer = pyarrow.parquet.ParquetWriter(path, batch.schema)
    writer.write_table(batch)
c0, w0 = cpu(), time.perf_counter()
n = 0
rows = []
for pk, ck, value in session.execute(SimpleStatement(f"SELECT pk, ck, data FROM {table}{where}",
                                                     fetch_size=5000)):
    doc = document(value)
    got = doc if isinstance(doc, dict) else {}
    rows.append({"pk": pk, "ck": ck, "data.status": got.get("status"), "data.n": got.get("n"), "data": doc})
    n += 1
    if len(rows) == 5000:
        flush(rows)
        rows = []
flush(rows)
if writer is not None:
    writer.close()
if out is not None:
    out.close()
print(json.dumps({"rows": n, "cpu": cpu() - c0, "wall": time.perf_counter() - w0}))
cluster.shutdown()
"""


def user_export_code() -> str:
    """USER_EXPORT whole: its payload() the magic-byte reader bench/query_scan.py's script uses."""
    from query_scan import MAGIC_DOCUMENT

    return USER_EXPORT.replace("DOCUMENT", MAGIC_DOCUMENT)


def user_export(host: str, port: int, table: str, fmt: str, path: str, where: str = "") -> tuple[int, Run]:
    """The user's export script (USER_EXPORT) of `table` to `path` in `fmt` ('parquet', 'jsonl'):
    its rows and its CPU and wall time (the scan and the writing, start-up left out), peak memory.
    `where`: a WHERE clause (' WHERE pk = 0': the first partition, whose run's figures a caller takes
    from the whole table's, as the shell's one-partition run is: pyarrow's first table and writer)."""
    run = run_process([sys.executable, "-c", user_export_code(), host, str(port), f"{KEYSPACE}.{table}", fmt,
                       path, where], dict(os.environ))
    Path(path).unlink(missing_ok=True)
    doc = json.loads(next(line for line in reversed(run.out.splitlines()) if line.startswith('{"rows"')))
    return doc["rows"], Run(doc["cpu"], doc["wall"], run.rss_kb)


def user_script(host: str, port: int, table: str, fmt: str, path: str) -> tuple[int, Run]:
    """The user's export script of the whole table less its run on the first partition (pyarrow's
    first table and writer, the first values), as a reader's one-partition run is taken out."""
    n, whole = user_export(host, port, table, fmt, path)
    _n, one = user_export(host, port, table, fmt, path, f" WHERE pk = {FIRST_PARTITION[table]}")
    return n, Run(whole.cpu - one.cpu, whole.wall - one.wall, whole.rss_kb)


EXTENSIONS = {"parquet": "parquet", "jsonl": "jsonl", "csv": "csv"}
#: The formats the user's export script writes.
SCRIPT_FORMATS = ("parquet", "jsonl")
#: export -> (table, statement, the same on one partition): {t} the table, {f} the file.
EXPORTS = {
    "whole orders": ("orders", "COPY (SELECT pk, ck, data.status, data.n, data FROM {t}) TO '{f}'",
                     "COPY (SELECT pk, ck, data.status, data.n, data FROM {t} WHERE pk = 'p0') TO '{f}'"),
    "paths orders": ("orders", "COPY (SELECT pk, ck, data.status, data.n FROM {t}) TO '{f}'",
                     "COPY (SELECT pk, ck, data.status, data.n FROM {t} WHERE pk = 'p0') TO '{f}'"),
    "paths skewed": ("skewed", "COPY (SELECT pk, ck, data.status, data.n FROM {t}) TO '{f}'",
                     "COPY (SELECT pk, ck, data.status, data.n FROM {t} WHERE pk = 0) TO '{f}'"),
    # bench/export.py's statement: a payload condition, so a scan by token ranges (rows, not columns).
    "filtered orders": ("orders", "COPY (SELECT ck, data.status, data.n, data.customer.name, data.items "
                                  "FROM {t} WHERE data.\"order-id\" IS NOT NULL ALLOW FILTERING) TO '{f}'",
                        "COPY (SELECT ck, data.status, data.n, data.customer.name, data.items FROM {t} "
                        "WHERE pk = 'p0' AND data.\"order-id\" IS NOT NULL ALLOW FILTERING) TO '{f}'"),
}


def floor(host: str, port: int, table: str) -> tuple[int, Run]:
    proc = subprocess.run([sys.executable, "-c", FLOOR, host, str(port), f"{KEYSPACE}.{table}"],
                          capture_output=True, text=True, check=True)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["rows"], Run(doc["cpu"], doc["wall"], 0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--orders-rows", type=int, default=44_000)
    p.add_argument("--skewed-rows", type=int, default=300_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--exports", nargs="*", default=list(EXPORTS)[:3], choices=list(EXPORTS))
    p.add_argument("--formats", nargs="*", default=["parquet"], choices=list(EXTENSIONS))
    p.add_argument("--engines", nargs="*", default=["native"], choices=["native", "python"])
    p.add_argument("--before", help="another cqlsh-ext binary, measured alongside")
    args = p.parse_args()

    session = session_for(args.host, args.port)
    tables = sorted({EXPORTS[e][0] for e in args.exports})
    rows_of = {"skewed": args.skewed_rows, "orders": args.orders_rows}
    for table in tables:
        load(session, table, rows_of[table])
    session.cluster.shutdown()

    binaries = {"after": CQLSH_EXT, **({"before": args.before} if args.before else {})}
    sides = [(export, fmt, engine, label) for export in args.exports for fmt in args.formats
             for engine in args.engines for label in binaries]
    runs: dict[tuple[str, str, str, str], tuple[list[Run], list[Run]]] = {s: ([], []) for s in sides}
    # the user's export script, beside each whole export's format it can write
    scripts = [f for f in args.formats if f in SCRIPT_FORMATS] if any(
        e.startswith("whole") for e in args.exports) else []
    bases: dict[str, dict[str, list[tuple[int, Run]]]] = {
        t: {"bare": [], "floor": [], **{f"script {f}": [] for f in scripts}} for t in tables}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as home:
        for round_ in range(args.repeat):
            for table in tables:
                bases[table]["bare"].append(bare(args.host, args.port, table))
                bases[table]["floor"].append(floor(args.host, args.port, table))
                for fmt in scripts:
                    target = str(Path(home) / f"script.{EXTENSIONS[fmt]}")
                    got = user_script(args.host, args.port, table, fmt, target)
                    bases[table][f"script {fmt}"].append(got)
            for side in sides:
                export, fmt, engine, label = side
                table, full, one = EXPORTS[export]
                target = str(Path(home) / f"out.{EXTENSIONS[fmt]}")
                for statement, kept in zip((full, one), runs[side], strict=True):
                    text = statement.format(t=table, f=target)
                    kept.append(shell_run(binaries[label], args.host, args.port, text, engine, "1", home))
                    Path(target).unlink(missing_ok=True)
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
    load_after = os.getloadavg()

    print(f"\nload average (1, 5, 15 min): {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
          f"at the start, {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} at the end")
    print(f"{'export':<16} {'format':<8} {'engine':<7} {'binary':<7} {'CPU us/row':>10} {'x bare':>7} "
          f"{'x floor':>8} {'x script':>9} {'peak MB':>8}")
    figures = {}
    script_cpu: dict[tuple[str, str], float] = {}
    for table in tables:
        n = bases[table]["bare"][0][0]
        bare_cpu = statistics.median(r.cpu for _n, r in bases[table]["bare"])
        floor_cpu = statistics.median(r.cpu for _n, r in bases[table]["floor"])
        figures[table] = (n, bare_cpu, floor_cpu)
        print(f"{'bare ' + table:<16} {'':<8} {'':<7} {'':<7} {bare_cpu / n * 1e6:>10.2f} {1:>7.2f} "
              f"{bare_cpu / floor_cpu:>8.2f}")
        print(f"{'floor ' + table:<16} {'':<8} {'':<7} {'':<7} {floor_cpu / n * 1e6:>10.2f} "
              f"{floor_cpu / bare_cpu:>7.2f} {1:>8.2f}")
        for fmt in scripts:
            script_runs = [run for _n, run in bases[table][f"script {fmt}"]]
            script_cpu[(table, fmt)] = cpu = statistics.median(run.cpu for run in script_runs)
            print(f"{'script ' + table:<16} {fmt:<8} {'':<7} {'':<7} {cpu / n * 1e6:>10.2f} "
                  f"{cpu / bare_cpu:>7.2f} {cpu / floor_cpu:>8.2f} {1:>9.2f} "
                  f"{max(run.rss_kb for run in script_runs) / 1024:>8.0f}")
    for side in sides:
        export, fmt, engine, label = side
        n, bare_cpu, floor_cpu = figures[EXPORTS[export][0]]
        full, one = runs[side]
        cpu = statistics.median(r.cpu for r in full) - statistics.median(r.cpu for r in one)
        peak = max(r.rss_kb for r in full) / 1024
        by_script = script_cpu.get((EXPORTS[export][0], fmt)) if export.startswith("whole") else None
        against = f"{cpu / by_script:>9.2f}" if by_script else f"{'':>9}"
        print(f"{export:<16} {fmt:<8} {engine:<7} {label:<7} {cpu / n * 1e6:>10.2f} {cpu / bare_cpu:>7.2f} "
              f"{cpu / floor_cpu:>8.2f} {against} {peak:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
