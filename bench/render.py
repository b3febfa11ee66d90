#!/usr/bin/env python3
"""Display and start-up of cqlsh-ext against stock cqlsh 6.2, measured side by side in one run.

    .venv/bin/python bench/render.py [--host H --port P] [--rows 2000] [--repeat 7]

Without --port it starts its own Cassandra (tools/devcassandra.py, ports 24042/24000/24199) and
stops it afterwards. Prints:
- display: wall time of `-e "SELECT data FROM ..."` over ROWS rows of ~4 KB records (see
  documents() and PROFILES): snappy JSON, article-like (ratio ~1.5, as the Keyspaces article
  measured) and repetitive (~2.7); the same JSON stored uncompressed; the records as MessagePack.
  cqlsh-ext decodes them, stock cqlsh prints hex. Target <= 1.0.
- start-up: time to the first result of `-e "SELECT release_version FROM system.local"`.
  Target ratio <= 1.05.
- decode path: bench/decode.py's table (our detect+decode against the bare library call).
Runs alternate between the two binaries so machine noise hits both alike; medians are reported
with the spread (min-max) so the noise is visible.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO))

BIN = Path(sys.executable).parent
CQLSH_EXT, STOCK = str(BIN / "cqlsh-ext"), str(BIN / "cqlsh")


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=True)
    return time.perf_counter() - start, len(proc.stdout)


def compare(label: str, args: list[str], repeat: int, env: dict[str, str]) -> None:
    ours, stock, sizes = [], [], {}
    timed([CQLSH_EXT, *args], env)  # warm the page cache and the server
    timed([STOCK, *args], env)
    for _ in range(repeat):
        t, sizes["cqlsh-ext"] = timed([CQLSH_EXT, *args], env)
        ours.append(t)
        t, sizes["cqlsh"] = timed([STOCK, *args], env)
        stock.append(t)
    mo, ms = statistics.median(ours), statistics.median(stock)
    print(
        f"{label:<22} cqlsh-ext {mo:7.3f} s ({min(ours):.3f}-{max(ours):.3f})  "
        f"cqlsh {ms:7.3f} s ({min(stock):.3f}-{max(stock):.3f})  ratio {mo / ms:5.3f}  "
        f"output {sizes['cqlsh-ext'] / 1e6:.1f} MB vs {sizes['cqlsh'] / 1e6:.1f} MB"
    )


def documents(profile: str, rows: int) -> list[bytes]:
    """~4 KB JSON order records (3.5-4.5 KB).

    repetitive: forty near-identical line items; snappy shrinks them about 2.7x.
    article: line items with serial numbers, hashes and free-text reviews; snappy shrinks them about
    1.5x, the ratio the Amazon Keyspaces compression article measured on its JSON (1.53).
    """
    import base64
    import json
    import random

    from cqlsh_ext.demo.records import order

    rng = random.Random(3)
    words = [
        f"{rng.choice('bcdfghklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{i}" for i in range(400)
    ]
    docs: list[bytes] = []
    while len(docs) < rows:
        doc = order(rng, len(docs))
        items = []
        while len(json.dumps(doc | {"items": items}, separators=(",", ":"))) < rng.randint(3500, 4300):
            item = {
                "sku": f"SKU-{rng.randint(10000, 99999)}",
                "quantity": rng.randint(1, 4),
                "unitPrice": round(rng.uniform(3, 400), 2),
            }
            if profile == "repetitive":
                item["name"] = "Trail running shoes"
            else:
                item["serial"] = base64.b32encode(rng.randbytes(5)).decode()
                item["sha"] = rng.randbytes(8).hex()
                item["review"] = " ".join(rng.choice(words) for _ in range(rng.randint(4, 12)))
            items.append(item)
        doc["items"] = items
        docs.append(json.dumps(doc, separators=(",", ":")).encode())
    return docs


#: Table -> (kind of records, how each is stored). snappy: compressed JSON (what the article
#: stores); plain: the JSON bytes as they are (shown as [text]); msgpack: the record packed with
#: MessagePack, uncompressed (shown as [msgpack]).
PROFILES = {
    "article": ("article", "snappy"),
    "repetitive": ("repetitive", "snappy"),
    "plain_json": ("article", "plain"),
    "msgpack": ("article", "msgpack"),
}


def encode(doc: bytes, how: str) -> bytes:
    import json

    import cramjam
    import msgpack

    if how == "snappy":
        return bytes(cramjam.snappy.compress_raw(doc))
    if how == "msgpack":
        return bytes(msgpack.packb(json.loads(doc)))
    return doc


def load(host: str, port: int, rows: int, profile: str) -> str:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.concurrent import execute_concurrent_with_args

    kind, how = PROFILES[profile]
    docs = documents(kind, rows)
    blobs = [encode(d, how) for d in docs]
    table = f"bench.render_{profile}"
    cluster = Cluster([host], port=port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS bench WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute(f"DROP TABLE IF EXISTS {table}")
    session.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob)")
    insert = session.prepare(f"INSERT INTO {table} (id, data) VALUES (?, ?)")
    execute_concurrent_with_args(session, insert, list(enumerate(blobs)))
    cluster.shutdown()
    ratio = sum(map(len, docs)) / sum(map(len, blobs))
    print(
        f"{profile}: {rows} rows, mean {statistics.mean(map(len, docs)) / 1024:.1f} KiB JSON, "
        f"stored {how}, ratio {ratio:.2f}"
    )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    import devcassandra

    instance = None
    if args.port is None:
        instance = devcassandra.Instance(
            devcassandra.Config(
                directory=REPO / ".cache" / "bench-cassandra",
                native_port=24042,
                storage_port=24000,
                jmx_port=24199,
            )
        )
        instance.start()
        args.port = 24042
    try:
        tables = {
            profile: load(args.host, args.port, args.rows, profile) for profile in PROFILES
        }
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "HOME": home}
            conn = [args.host, str(args.port), "-u", "cassandra", "-p", "cassandra"]
            for profile, table in tables.items():
                compare(f"display, {profile}", [*conn, "-e", f"SELECT data FROM {table}"], args.repeat, env)
            compare(
                "start-up", [*conn, "-e", "SELECT release_version FROM system.local"], args.repeat * 2, env
            )
    finally:
        if instance is not None:
            instance.stop()
    print()
    subprocess.run([sys.executable, str(REPO / "bench" / "decode.py")], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
