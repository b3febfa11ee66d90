"""A load (COPY ... FROM decoded documents, docs/load.md) against a hand-written script that does the
same, in one run: client CPU a row, both whole processes.

    .venv/bin/python bench/load.py --host 127.0.0.1 --port 9042 [--rows 44000] [--repeat 3]
        [--engines native python]

The documents: tools/orders.py's order table (bench/readers.py's `orders`, ten rows a partition, in
six encodings: snappy JSON, zstd MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR, random bytes),
exported once with `COPY (SELECT * FROM bench_readers.orders) TO 'orders.jsonl'` (each value its
label and its document), then loaded into an empty twin table, truncated before every run, by:

- hand: the script a person writes for it: each line read with orjson, each document written as its
  label says with the producers' libraries (orjson, python-snappy, zstandard with msgpack, gzip,
  lz4 with cbor2; random bytes as they are), each row a prepared INSERT sent with execute_async, at
  most 32 in flight (the load's own); nothing read first, nothing verified, nothing journaled;
- load: the real binary, `cqlsh-ext -e "COPY twin FROM 'orders.jsonl' CONFIRM"`: each value encoded
  by encode()'s writers and decoded back by the display's reading before it is sent, the rows read
  first (their old cells: what UNDO writes back), every row journaled (sealed, fsync'd), a
  partition's rows a request, at most 32 in flight.

Each side's CPU is user + sys of its whole process, its reaped children included (os.wait4's
getrusage), less the same side's run on the file's first row (start-up: imports, the connection);
a row's CPU is that over the rows less one. Medians of --repeat interleaved rounds. Prints CPU a
row for each side, load / hand (asked: at most 1.0), wall time and rows/s. Figures only: nothing is
asserted but that every run succeeds and writes every row.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))
from readers import CQLSH_EXT, Run, run_process, session_for  # noqa: E402  (one way to run and time a process)

KEYSPACE = "bench_load"
#: Requests in flight at most: the load's (cqlsh_ext.load.load_job.IN_FLIGHT), the hand script's too.
IN_FLIGHT = 32

HAND = r'''
import gzip, json, resource, sys, threading, time
import cbor2, lz4.frame, msgpack, orjson, snappy, zstandard
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster
host, port, path, table, in_flight = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"),
                  protocol_version=5)
session = cluster.connect()
insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
zstd = zstandard.ZstdCompressor(level=3)
def encode(value):
    if value is None:
        return None
    if isinstance(value, str):  # "0x...": bytes in no known format
        return bytes.fromhex(value[2:])
    label, payload = value["label"], value["payload"]
    if label == "zstd>msgpack":
        return zstd.compress(msgpack.packb(payload))
    if label == "lz4/frame>cbor":
        return lz4.frame.compress(cbor2.dumps(payload))
    text = orjson.dumps(payload)
    if label == "snappy>json":
        return snappy.compress(text)
    if label == "gzip>json":
        return gzip.compress(text, mtime=0)
    return text
slots = threading.Semaphore(in_flight)
failed = []
def done(_rows):
    slots.release()
def error(err):
    failed.append(err)
    slots.release()
n = 0
with open(path, "rb") as f:
    for line in f:
        row = orjson.loads(line)
        slots.acquire()
        future = session.execute_async(insert, (row["pk"], row["ck"], encode(row["data"])))
        future.add_callbacks(done, error)
        n += 1
for _ in range(in_flight):
    slots.acquire()
if failed:
    raise SystemExit(f"{len(failed)} writes failed: {failed[0]}")
print(json.dumps({"rows": n}))
cluster.shutdown()
'''


@dataclass
class Side:
    name: str
    full: list[Run] = field(default_factory=list)
    one: list[Run] = field(default_factory=list)

    def cpu_a_row(self, rows: int) -> float:
        return (statistics.median(r.cpu for r in self.full) - statistics.median(r.cpu for r in self.one)) / \
            (rows - 1)

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.full)


def count(session: Any, table: str) -> int:
    return int(session.execute(f"SELECT count(*) FROM {KEYSPACE}.{table}", timeout=120).one()[0])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--rows", type=int, default=44_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--engines", nargs="*", default=["native"], choices=["native", "python"])
    args = p.parse_args()

    import readers

    session = session_for(args.host, args.port)
    readers.load(session, "orders", args.rows)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    from orders import SCHEMA_CQL

    for table in ("hand", "loaded"):
        session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{table} {SCHEMA_CQL}")
    sides = [Side("hand"), *(Side(f"load ({engine})") for engine in args.engines)]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "PAGER": ""}
        shell = [CQLSH_EXT, args.host, str(args.port), "-u", "cassandra", "-p", "cassandra",
                 "--request-timeout", "120"]
        full = Path(home) / "orders.jsonl"
        run_process([*shell, "-e", f"COPY (SELECT * FROM {readers.KEYSPACE}.orders) TO '{full}'"], env)
        rows = sum(1 for _ in full.open())
        one = Path(home) / "one.jsonl"
        one.write_text(full.open().readline())
        for round_ in range(args.repeat):
            for side in sides:
                table = "hand" if side.name == "hand" else "loaded"
                for path, runs in ((full, side.full), (one, side.one)):
                    session.execute(f"TRUNCATE {KEYSPACE}.{table}", timeout=120)
                    if side.name == "hand":
                        cmd = [sys.executable, "-c", HAND, args.host, str(args.port), str(path),
                               f"{KEYSPACE}.{table}", str(IN_FLIGHT)]
                        runs.append(run_process(cmd, env))
                    else:
                        engine_env = dict(env)
                        if "python" in side.name:
                            engine_env["CQLSH_EXT_NATIVE"] = "0"
                        statement = f"COPY {KEYSPACE}.{table} FROM '{path}' CONFIRM"
                        runs.append(run_process([*shell, "-e", statement], engine_env))
                    expected = rows if path == full else 1
                    found = count(session, table)
                    if found != expected:
                        raise RuntimeError(f"{side.name}: {found} rows written, not {expected}")
            print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
    session.cluster.shutdown()
    hand = sides[0]
    hand_cpu = hand.cpu_a_row(rows)
    print()
    print(f"{rows:,} documents (tools/orders.py's six encodings), medians of {args.repeat} rounds")
    print(f"{'side':<16} {'CPU us/row':>10} {'x hand':>7} {'wall s':>7} {'rows/s':>9}")
    for side in sides:
        cpu = side.cpu_a_row(rows)
        print(f"{side.name:<16} {cpu * 1e6:>10.1f} {cpu / hand_cpu:>7.2f} {side.wall():>7.1f} "
              f"{rows / side.wall():>9,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
