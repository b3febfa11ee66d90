"""A payload query at table scale: a filtered whole-table scan and a GROUP BY over order documents
in mixed containers and formats (tools/orders.py) by cqlsh-ext, against the scripts a user would
write today and a bare driver scan, in the same run on the same server.

    .venv/bin/python bench/query_scan.py --host 127.0.0.1 --port 9042 [--rows 40000 400000]
                                         [--repeat 3] [--before OTHER/.venv/bin/cqlsh-ext]

The sides, each a whole process (start-up, connection, scan), in one process unless said:
- bare driver scan: `SELECT ck, data` paged (fetch_size 5000) with `tuple_factory`, nothing
  decoded: the floor;
- script, try each codec: each decompressor in turn, then json.loads / MessagePack / CBOR, the
  question answered in Python;
- script, magic bytes + orjson: the container chosen by its first bytes, orjson for JSON, the
  payload's first byte choosing MessagePack or CBOR;
- cqlsh-ext, in its own process (CQLSH_EXT_SCAN_WORKERS=1: token ranges read a few streams at a
  time) and with worker processes forced (CQLSH_EXT_SCAN_WORKERS=--workers);
- with --before BIN: the same two of another cqlsh-ext (a checkout before a change), interleaved.

Start-up is taken out: each side also runs a one-row statement (the same statement on one row)
in each round, and a side's time is its median full run less its median one-row run. Prints, per
size and statement, wall time and CPU time (the process and its workers: steadier than wall time
on a shared machine) so measured, rows/s, and the ratios cqlsh-ext / each script (goals: at most
0.7 of the try-each script, at most 1.0 of the magic-byte one) and rows/s / the bare scan's (goal:
at least 0.85). Loads a table per size once (keyspace bench_query, one partition per 10 rows).
Every side must give the same answer as tools/orders.py's truth: a mismatch stops the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from orders import SCHEMA_CQL, rows  # noqa: E402

CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
KEYSPACE = "bench_query"
FILTER = "data.status = 'FAILED' AND data.n > 900"
#: The one-row statements' restriction (start-up, connection, one value decoded).
ONE_ROW = "pk = 'p0' AND ck = 0"

#: Shared by the scripts: connect, page through `SELECT ck, data` (or one row), answer `mode`.
_SCRIPT_HEAD = r'''
import json, sys
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement

host, port, user, password, table, mode, one = sys.argv[1:8]
cluster = Cluster([host], port=int(port), auth_provider=PlainTextAuthProvider(user, password))
session = cluster.connect()
query = f"SELECT ck, data FROM {table}" + (" WHERE pk = 'p0' AND ck = 0" if one == "1" else "")
result = session.execute(SimpleStatement(query, fetch_size=5000), timeout=300)
'''

_SCRIPT_TAIL = r'''
found = 0
groups = {}
for row in result:
    doc = document(row.data)
    if not isinstance(doc, dict):
        doc = None
    if mode == "filter":
        n = doc.get("n") if doc else None
        if doc and doc.get("status") == "FAILED" and isinstance(n, (int, float)) and not isinstance(n, bool) \
                and n > 900:
            found += 1
    else:
        key = doc.get("status") if doc else None
        groups[json.dumps(key)] = groups.get(json.dumps(key), 0) + 1
print(found if mode == "filter" else json.dumps(sorted(groups.items())))
cluster.shutdown()
'''

#: What people write today: each codec tried in turn, then each parser.
TRY_EACH_SCRIPT = _SCRIPT_HEAD + r'''
import gzip
import cbor2, lz4.frame, msgpack, snappy, zstandard
zstd = zstandard.ZstdDecompressor()
decompressors = [snappy.decompress, zstd.decompress, gzip.decompress, lz4.frame.decompress]
parsers = [json.loads, msgpack.unpackb, cbor2.loads]

def document(value):
    data = value
    for decompress in decompressors:
        try:
            data = decompress(value)
            break
        except Exception:
            pass
    for parse in parsers:
        try:
            return parse(data)
        except Exception:
            pass
    return None
''' + _SCRIPT_TAIL

#: A careful script: the container by its magic bytes, orjson for JSON, the payload's first byte
#: choosing MessagePack (a fixmap) or CBOR (a map).
#: The magic-byte script's reading of one value (`document(value)`), also counted by
#: bench/engine_instructions.py.
MAGIC_DOCUMENT = r'''
import gzip, zlib
import cbor2, lz4.frame, msgpack, orjson, snappy, zstandard
zstd = zstandard.ZstdDecompressor()

def payload(data):
    if data[:1] == b"{":
        return orjson.loads(data)
    if 0x80 <= data[0] <= 0x8f:
        return msgpack.unpackb(data)
    if 0xa0 <= data[0] <= 0xbf:
        return cbor2.loads(data)
    return None

def document(value):
    try:
        if value[:4] == b"\x28\xb5\x2f\xfd":
            return payload(zstd.decompress(value))
        if value[:4] == b"\x04\x22\x4d\x18":
            return payload(lz4.frame.decompress(value))
        if value[:2] == b"\x1f\x8b":
            return payload(zlib.decompress(value, 31))
        if value[:1] == b"{":
            try:
                return orjson.loads(value)
            except Exception:
                pass
        return payload(snappy.decompress(value))
    except Exception:
        return None
'''
MAGIC_SCRIPT = _SCRIPT_HEAD + MAGIC_DOCUMENT + _SCRIPT_TAIL


def magic_document() -> Callable[[bytes], Any]:
    """The script's reading of one value (MAGIC_DOCUMENT's `document`), for the benches that run
    its loop in process: the same text the script runs."""
    script: dict[str, Any] = {}
    exec(MAGIC_DOCUMENT, script)
    return script["document"]


#: The floor: the rows read and nothing decoded.
BARE_SCRIPT = _SCRIPT_HEAD.replace("session = cluster.connect()", """session = cluster.connect()
from cassandra.query import tuple_factory
session.row_factory = tuple_factory""") + r'''
n = total = 0
for row in result:
    n += 1
    total += len(row[1])
print(n)
cluster.shutdown()
'''

SCRIPTS = {"bare driver scan": BARE_SCRIPT, "script: try each codec": TRY_EACH_SCRIPT,
           "script: magic bytes + orjson": MAGIC_SCRIPT}


def connect(args: argparse.Namespace) -> Any:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    auth = PlainTextAuthProvider(args.user, args.password)
    cluster = Cluster([args.host], port=args.port, auth_provider=auth)
    return cluster, cluster.connect()


def load(session: Any, table: str, count: int) -> tuple[int, list[tuple[Any, int]]]:
    """The table of `count` rows (written once); the truth: how many match FILTER, and the
    GROUP BY data.status groups (a missing status and an undecodable value both group as null)."""
    from cassandra.concurrent import execute_concurrent_with_args

    data = rows(count, seed=count, partitions=max(1, count // 10))
    matched = 0
    groups: Counter[str] = Counter()
    for _row, doc in data:
        n = doc.get("n") if doc else None
        if doc and doc.get("status") == "FAILED" and isinstance(n, (int, float)) and n > 900:
            matched += 1
        groups[json.dumps(doc.get("status") if doc else None)] += 1
    truth = (matched, sorted(groups.items()))
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


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[tuple[float, float], str]:
    """((wall seconds, CPU seconds of the process and its children), stdout)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    out, err = proc.communicate(timeout=1800)
    wall = time.perf_counter() - started
    # wait4 through Popen already reaped it: the children's rusage holds it now, with its workers.
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:2]} failed: {err[-2000:]}")
    return (wall, _children_cpu()), out


_CPU_SEEN = [0.0]


def _children_cpu() -> float:
    """CPU seconds of the children reaped since the last call."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _CPU_SEEN[0] = total - _CPU_SEEN[0], total
    return spent


def statements(table: str, where: str = "") -> dict[str, str]:
    """The filtered scan and the GROUP BY; with `where`, the same on the rows it names."""
    restrict = f"{where} AND " if where else ""
    group_where = f" WHERE {where}" if where else ""
    return {"filter": f"SELECT ck FROM {table} WHERE {restrict}{FILTER} ALLOW FILTERING",
            "group": f"SELECT data.status, count(*) FROM {table}{group_where} GROUP BY data.status "
                     "ALLOW FILTERING"}


def ours(binary: str, args: argparse.Namespace, statement: str, env: dict[str, str] | None,
         mode: str) -> tuple[tuple[float, float], Any]:
    seconds, out = timed([binary, args.host, str(args.port), "-u", args.user, "-p", args.password,
                          "--request-timeout", "300", "--output-format", "json", "-e", statement], env)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if mode == "filter":
        return seconds, len(lines)
    # The undecodable values have a group of their own (the scripts cannot tell them from a
    # missing status): counted with the nulls, as the truth and the scripts count them.
    groups: Counter[str] = Counter()
    for line in lines:
        key = line["data.status"]
        undecodable = isinstance(key, dict) and key.get("$undecodable")
        groups[json.dumps(None if undecodable else key)] += line["count(*)"]
    return seconds, sorted(groups.items())


def script(name: str, args: argparse.Namespace, table: str, mode: str,
           one: bool) -> tuple[tuple[float, float], Any]:
    seconds, out = timed([sys.executable, "-c", SCRIPTS[name], args.host, str(args.port), args.user,
                          args.password, table, mode, "1" if one else "0"])
    answer = json.loads(out)
    return seconds, [tuple(pair) for pair in answer] if isinstance(answer, list) else answer


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
    parser.add_argument("--before", help="another cqlsh-ext binary to measure alongside (a checkout "
                                         "before a change)")
    parser.add_argument("--modes", nargs="+", default=["filter", "group"], choices=["filter", "group"])
    parser.add_argument("--no-partition", action="store_true", help="skip the one-partition figure")
    args = parser.parse_args()
    cluster, session = connect(args)
    binaries = {"cqlsh-ext": CQLSH_EXT}
    if args.before:
        binaries = {"cqlsh-ext before": args.before, **binaries}
    forced = {"CQLSH_EXT_SCAN_WORKERS": args.workers}
    # "In one process" said, not left to the size estimate (which appears minutes after a load).
    alone = {"CQLSH_EXT_SCAN_WORKERS": "1"}
    print(f"{os.cpu_count()} CPUs; {args.repeat} rounds; each side's median full run less its median "
          "one-row run", flush=True)
    for count in args.rows:
        table = f"{KEYSPACE}.orders_{count}"
        matched, groups = load(session, table, count)
        full, one_row = statements(table), statements(table, ONE_ROW)
        truth = {"filter": matched, "group": groups}
        for mode in args.modes:
            sides = [*SCRIPTS] + [f"{b}{w}" for b in binaries for w in ("", " workers")]
            runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            firsts: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            for rnd in range(args.repeat):  # interleaved (order turned each round): drift hits all alike
                for side in sides if rnd % 2 == 0 else list(reversed(sides)):
                    if side in SCRIPTS:
                        whole, answer = script(side, args, table, mode, False)
                        first, _ = script(side, args, table, mode, True)
                        expected = count if side == "bare driver scan" else truth[mode]
                    else:
                        binary = binaries[side.removesuffix(" workers")]
                        env = forced if side.endswith("workers") else alone
                        whole, answer = ours(binary, args, full[mode], env, mode)
                        first, _ = ours(binary, args, one_row[mode], env, mode)
                        expected = truth[mode]
                    if answer != expected:
                        print(f"{side} answered {answer}, the truth is {expected}", file=sys.stderr)
                        return 1
                    runs[side].append(whole)
                    firsts[side].append(first)
            print(f"{count:,} rows, {mode}: "
                  f"{'SELECT ck ... WHERE ' + FILTER if mode == 'filter' else 'GROUP BY data.status'}")
            for k, what in ((0, "wall"), (1, "CPU")):
                # Start-up taken out: the median full run less the median one-row run of the side.
                net = {side: statistics.median(r[k] for r in runs[side])
                       - statistics.median(r[k] for r in firsts[side]) for side in sides}
                bare = net["bare driver scan"]
                print(f"  {what} seconds (start-up taken out):")
                for side in sides:
                    line = (f"    {side:<30} {net[side]:7.2f} s  {count / net[side]:9,.0f} rows/s"
                            f" = {bare / net[side]:5.2f} x bare  (start-up "
                            f"{statistics.median(r[k] for r in firsts[side]):.2f} s; full runs "
                            f"{', '.join(f'{r[k]:.2f}' for r in runs[side])})")
                    if side not in SCRIPTS:
                        line += "\n    " + " " * 30 + "   = " + ", ".join(
                            f"{net[side] / net[name]:.2f} of {name.split(': ')[1]}"
                            for name in ("script: try each codec", "script: magic bytes + orjson"))
                    print(line, flush=True)
    if not args.no_partition:
        table = f"{KEYSPACE}.orders_{args.rows[0]}"
        plain = f"SELECT ck, data FROM {table} WHERE pk = 'p7'"
        path = f"SELECT ck, data.status FROM {table} WHERE pk = 'p7'"
        times: dict[str, list[float]] = {plain: [], path: []}
        for _ in range(max(5, args.repeat)):
            for statement in times:
                times[statement].append(ours(CQLSH_EXT, args, statement, None, "filter")[0][0])
        a, b = statistics.median(times[plain]), statistics.median(times[path])
        print(f"one partition: plain SELECT {a:.3f} s, path SELECT {b:.3f} s, "
              f"extra {b - a:+.3f} s ({b / a:.2f}x)")
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
