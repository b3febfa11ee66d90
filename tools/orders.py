"""Order documents in mixed containers and formats: the table that the payload-query tests,
`bench/query_scan.py` and the Spark tests read, and the truth to compare their answers with.

Each row is `{"pk", "ck", "data"}` with `data` one document encoded by a real producer library,
in turn: snappy JSON, zstd MessagePack, plain JSON, gzip JSON, LZ4-frame CBOR, random bytes (no
document: never matches, counted as undecodable). `rows(count, seed)` gives (row, document or
None); `take(document, steps)` walks a document as a path does (MISSING when absent).
"""

from __future__ import annotations

import gzip
import json
import random
from typing import Any

import cbor2
import lz4.frame
import msgpack
import snappy
import zstandard

SCHEMA_CQL = "(pk text, ck int, data blob, PRIMARY KEY (pk, ck))"
PARTITIONS = 5
STATUSES = ["NEW", "PAID", "FAILED", "Failed"]
ENCODINGS = ["snappy-json", "zstd-msgpack", "json", "gzip-json", "lz4-cbor", "random"]
MISSING = object()


def document(rng: random.Random, i: int, big: bool) -> dict[str, Any]:
    """`big`: integers past 64 bits (JSON and CBOR hold them; MessagePack does not)."""
    doc: dict[str, Any] = {"order-id": f"ORD-2024{i:06d}",
                           "n": rng.choice([i, i * (10**20 if big else 10**12), i + 0.5])}
    if rng.random() < 0.8:
        doc["status"] = rng.choice(STATUSES) if rng.random() < 0.9 else 7  # a type mismatch
    if rng.random() < 0.7:
        doc["customer"] = {"name": f"C{i % 7}", "tier": rng.choice(["gold", "silver", None])}
    doc["items"] = [{"sku": f"S{j}"} for j in range(rng.randrange(3))]
    doc["tags"] = rng.sample(["a", "b", "c"], rng.randrange(4))
    return doc


def encode(doc: dict[str, Any], how: str, rng: random.Random) -> bytes:
    text = json.dumps(doc).encode()
    if how == "snappy-json":
        return snappy.compress(text)
    if how == "zstd-msgpack":
        return zstandard.compress(msgpack.packb(doc))
    if how == "json":
        return text
    if how == "gzip-json":
        return gzip.compress(text)
    if how == "lz4-cbor":
        return lz4.frame.compress(cbor2.dumps(doc))
    return bytes([0x9F, 0x00]) + rng.randbytes(40)


def rows(count: int = 120, seed: int = 23,
         partitions: int = PARTITIONS) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """`partitions`: how many partition keys the rows spread over (p0, p1, ...)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        how = ENCODINGS[i % len(ENCODINGS)]
        doc = document(rng, i, how != "zstd-msgpack")
        out.append(({"pk": f"p{i % partitions}", "ck": i, "data": encode(doc, how, rng)},
                    None if how == "random" else doc))
    return out


def take(doc: Any, steps: tuple[Any, ...]) -> Any:
    for key in steps:
        if isinstance(doc, dict):
            doc = doc.get(key, MISSING)
        elif isinstance(doc, list) and isinstance(key, int) and -len(doc) <= key < len(doc):
            doc = doc[key]
        else:
            return MISSING
    return doc




def write_table(session: Any, data: list[tuple[dict[str, Any], dict[str, Any] | None]],
                table: str = "orders") -> None:
    """CREATE TABLE `table` (SCHEMA_CQL) in the session's keyspace and write `data` (rows())."""
    from cassandra.concurrent import execute_concurrent_with_args

    session.execute(f"CREATE TABLE {table} {SCHEMA_CQL}")
    insert = session.prepare(f"INSERT INTO {table} (pk, ck, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, [(r["pk"], r["ck"], r["data"]) for r, _doc in data],
                                 concurrency=32, raise_on_first_error=True)
