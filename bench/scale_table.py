"""Load the scale benchmark's table: 1,000,000 rows of mixed compressed values, about 1-2 GB.

    .venv/bin/python bench/scale_table.py --host 127.0.0.1 --port 9042 [--rows 1000000]

Table bench_scale.records (pk int, ck int, data blob, PRIMARY KEY (pk, ck)):
  - one row per partition, except one wide partition (pk = -1) holding --wide rows;
  - values from the demo's order generator (cqlsh_ext.demo.records), in every Keyspaces size bucket:
    mostly 1-4 KB documents, some smaller and larger ones, and a tail of 70 KB to 1.3 MB batches;
  - codecs mixed as applications mix them: raw snappy, zstd, LZ4 frame, gzip (the large tail), and
    plain uncompressed JSON for small values.
A marker row in bench_scale.loaded makes a second run with the same parameters a no-op.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEYSPACE, TABLE = "bench_scale", "records"
#: Distinct documents generated; rows cycle through them under different codecs.
POOL = 6000


def connect(host: str, port: int, user: str, password: str) -> tuple[Any, Any]:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.query import tuple_factory

    profile = ExecutionProfile(request_timeout=120, row_factory=tuple_factory)
    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider(user, password),
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, protocol_version=5)
    return cluster, cluster.connect()


def payloads(seed: int) -> tuple[list[bytes], list[bytes]]:
    """(documents, large batches) as UTF-8 JSON."""
    from cqlsh_ext.demo.records import documents

    docs = [d.encode() for d in documents(POOL, seed=seed)]
    rng = random.Random(seed)
    large = []
    for target in (70_000, 150_000, 400_000, 900_000, 1_300_000):
        for _ in range(4):
            batch: list[Any] = []
            size = 2
            while size < target:
                doc = rng.choice(docs)
                batch.append(json.loads(doc))
                size += len(doc) + 1
            large.append(json.dumps(batch, separators=(",", ":")).encode())
    return docs, large


def compressors() -> dict[str, Any]:
    import cramjam
    import lz4.frame
    import zstandard

    zc = zstandard.ZstdCompressor(level=3)
    return {
        "snappy": lambda b: bytes(cramjam.snappy.compress_raw(b)),
        "zstd": zc.compress,
        "lz4": lambda b: lz4.frame.compress(b),
        "gzip": lambda b: gzip.compress(b, 6, mtime=0),
        "plain": lambda b: b,
    }


def value_for(i: int, docs: list[bytes], large: list[bytes], codecs: dict[str, Any],
              rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.002:  # the large tail: gzip, as batch exports are
        return codecs["gzip"](large[i % len(large)])
    doc = docs[i % len(docs)]
    if len(doc) < 1024 and roll < 0.30:
        return doc  # small values stored plain: compression only above a size threshold
    name = "snappy" if roll < 0.55 else "zstd" if roll < 0.80 else "lz4" if roll < 0.92 else "gzip"
    return codecs[name](doc)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("-u", "--user", default="cassandra")
    p.add_argument("-p", "--password", default="cassandra")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--wide", type=int, default=20_000, help="rows in the one wide partition")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()

    from cassandra.concurrent import execute_concurrent_with_args

    cluster, session = connect(args.host, args.port, args.user, args.password)
    try:
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{TABLE} "
                        "(pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
        session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.loaded (name text PRIMARY KEY, spec text)")
        spec = f"rows={args.rows} wide={args.wide} seed={args.seed}"
        done = session.execute(f"SELECT spec FROM {KEYSPACE}.loaded WHERE name = 'records'").one()
        if done is not None and done[0] == spec:
            print(f"{KEYSPACE}.{TABLE}: already loaded ({spec})")
            return 0
        session.execute(f"TRUNCATE {KEYSPACE}.{TABLE}")
        started = time.perf_counter()
        docs, large = payloads(args.seed)
        codecs = compressors()
        rng = random.Random(args.seed)
        print(f"generated {len(docs):,} documents and {len(large)} large batches in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
        insert = session.prepare(f"INSERT INTO {KEYSPACE}.{TABLE} (pk, ck, data) VALUES (?, ?, ?)")
        stored = 0
        step = 5000
        narrow = args.rows - args.wide
        for start in range(0, args.rows, step):
            batch = []
            for i in range(start, min(args.rows, start + step)):
                key = (i, 0) if i < narrow else (-1, i - narrow)
                value = value_for(i, docs, large, codecs, rng)
                stored += len(value)
                batch.append((*key, value))
            execute_concurrent_with_args(session, insert, batch, concurrency=48, raise_on_first_error=True)
            elapsed = time.perf_counter() - started
            print(f"\rloaded {min(args.rows, start + step):,}/{args.rows:,} rows, "
                  f"{stored / 1e9:.2f} GB, {elapsed:.0f} s", end="", flush=True)
        session.execute(f"INSERT INTO {KEYSPACE}.loaded (name, spec) VALUES ('records', %s)", (spec,))
        elapsed = time.perf_counter() - started
        print(f"\nloaded {args.rows:,} rows ({stored / 1e9:.2f} GB stored) in {elapsed:.0f} s")
    finally:
        cluster.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
