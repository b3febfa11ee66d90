#!/usr/bin/env python3
"""Display and start-up of cqlsh-ext against stock cqlsh 6.2, measured side by side in one run.

    .venv/bin/python bench/render.py [--host H --port P] [--rows 2000] [--repeat 7]

Without --port it starts its own Cassandra (tools/devcassandra.py, ports 24042/24000/24199) and
stops it afterwards. Prints:
- display: wall time of `-e "SELECT data FROM ..."` over ROWS rows of ~4 KB records (see
  documents() and PROFILES): snappy JSON, article-like (ratio ~1.5, as the Keyspaces article
  measured) and repetitive (~2.7); the same JSON stored uncompressed; the records as MessagePack.
  cqlsh-ext decodes them, stock cqlsh prints hex. Target <= 0.8 (snappy JSON, article). Also the
  per-row part: each run minus the same binary's run of the one-row statement (`WHERE id = 0`) in
  the same round, so start-up and connection are taken out.
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


#: CPU seconds (user + sys, from wait4) of each timed run, by command, appended by timed().
CPU: dict[tuple[str, ...], list[float]] = {}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """A whole run's wall time and output size; its CPU goes to CPU."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{cmd[-1]!r} failed")
        CPU.setdefault(tuple(cmd), []).append(usage.ru_utime + usage.ru_stime)
        return wall, out.tell()


def compare(label: str, args: list[str], repeat: int, env: dict[str, str], binaries: dict[str, str],
            one_row: list[str] | None = None) -> None:
    """Whole runs of `args` by each binary, alternating; with `one_row` (the same statement on one
    row), also the per-row part: each run minus its binary's one-row run in the same round."""
    whole: dict[str, list[float]] = {name: [] for name in binaries}
    rows: dict[str, list[float]] = {name: [] for name in binaries}
    sizes: dict[str, int] = {}
    for binary in binaries.values():  # warm the page cache and the server
        timed([binary, *args], env)
    for rnd in range(repeat):
        for name, binary in binaries.items() if rnd % 2 == 0 else reversed(binaries.items()):
            t, sizes[name] = timed([binary, *args], env)
            whole[name].append(t)
            if one_row is not None:
                rows[name].append(t - timed([binary, *one_row], env)[0])
    stock = statistics.median(whole["cqlsh"])
    for name in binaries:
        if name == "cqlsh":
            continue
        mo = statistics.median(whole[name])
        line = (f"{label:<22} {name} {mo:7.3f} s ({min(whole[name]):.3f}-{max(whole[name]):.3f})  "
                f"cqlsh {stock:7.3f} s ({min(whole['cqlsh']):.3f}-{max(whole['cqlsh']):.3f})  "
                f"ratio {mo / stock:5.3f}  output {sizes[name] / 1e6:.1f} MB vs "
                f"{sizes['cqlsh'] / 1e6:.1f} MB")
        if one_row is not None:
            ours, theirs = statistics.median(rows[name]), statistics.median(rows["cqlsh"])
            line += f"\n{'':<22} per-row part (one-row run taken out): {ours:.3f} s vs {theirs:.3f} s, " \
                    f"ratio {ours / theirs:5.3f}"
        cpu = {side: statistics.median(CPU[(path, *args)]) for side, path in (("ours", binaries[name]),
                                                                              ("stock", binaries["cqlsh"]))}
        line += f"\n{'':<22} CPU (user + sys): {cpu['ours']:.3f} s vs {cpu['stock']:.3f} s, " \
                f"ratio {cpu['ours'] / cpu['stock']:5.3f}"
        print(line, flush=True)


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
    parser.add_argument("--before", help="another cqlsh-ext binary to measure alongside (a checkout "
                                         "before a change)")
    parser.add_argument("--cqlsh-ext", dest="ours", default=CQLSH_EXT, help="the cqlsh-ext binary to measure")
    parser.add_argument("--cqlsh", dest="stock", default=STOCK,
                        help="stock cqlsh to measure against (best from the same environment)")
    parser.add_argument("--profiles", nargs="+", default=list(PROFILES), choices=list(PROFILES))
    parser.add_argument("--no-decode", action="store_true", help="skip bench/decode.py's table")
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
            profile: load(args.host, args.port, args.rows, profile) for profile in args.profiles
        }
        binaries = {"cqlsh-ext": args.ours, "cqlsh": args.stock}
        if args.before:
            binaries = {"cqlsh-ext before": args.before, **binaries}
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "HOME": home}
            conn = [args.host, str(args.port), "-u", "cassandra", "-p", "cassandra"]
            for profile, table in tables.items():
                compare(f"display, {profile}", [*conn, "-e", f"SELECT data FROM {table}"], args.repeat, env,
                        binaries, [*conn, "-e", f"SELECT data FROM {table} WHERE id = 0"])
            compare(
                "start-up", [*conn, "-e", "SELECT release_version FROM system.local"], args.repeat * 2, env,
                binaries
            )
    finally:
        if instance is not None:
            instance.stop()
    if not args.no_decode:
        print()
        subprocess.run([sys.executable, str(REPO / "bench" / "decode.py")], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
