"""Default COMPRESSION STATS on a table of the skewed shape bench/stats_bare.py measures (JSON
documents from 100 B to 200 KB, a Pareto tail: the small ones raw snappy, zstd or plain JSON, the
large ones gzip), with zstd frames whose content another container or a stream may start (a zstd
frame holding gzip, one holding a JSON array, one holding zstd) and frames carrying a checksum:
every figure equals what the producers' own libraries say of the values the test wrote, and the
values sized from their headers are the ones the documented rule names (docs/insight-scale.md:
a zstd frame whose first literal starts nothing recognisable, a gzip value whose first inflated
bytes do not), so a zstd frame holding gzip is labelled zstd>gzip, never zstd."""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

import cramjam
import pytest
import zstandard
from cassandra.concurrent import execute_concurrent_with_args

from cqlsh_ext.codecs import registry
from cqlsh_ext.demo.records import documents

from .conftest import cqlsh_ext, json_docs

ZSTD, GZIP, SNAPPY = registry.ZSTD.label, registry.GZIP.label, registry.SNAPPY_RAW.label
#: bench/readers.py's shape, smaller: the documents past TAIL_FROM are gzip.
SKEW_MIN, SKEW_MAX, SKEW_ALPHA, TAIL_FROM = 100, 200_000, 1.1, 4096


@dataclass
class Written:
    stored: bytes
    #: the chain the test built it with ("" for plain JSON), and its innermost payload's size as
    #: the producers' libraries decompress it
    chain: str
    size: int
    #: sized from its header by the documented rule (docs/insight-scale.md)
    from_header: bool


def _document(rng: random.Random, i: int, size: int, text: str) -> bytes:
    doc = {"order-id": f"ORD-{i:08d}", "n": rng.randrange(1000), "items": [{"qty": j} for j in range(3)]}
    room = size - len(json.dumps(doc)) - 12
    if room > 0:
        start = rng.randrange(0, len(text) - room)
        doc["note"] = text[start:start + room]
    return json.dumps(doc).encode()


def _written(rng: random.Random, count: int) -> list[Written]:
    text = "".join(documents(200, seed=5))
    while len(text) < SKEW_MAX:
        text += text
    plain = zstandard.ZstdCompressor(level=3)
    checked = zstandard.ZstdCompressor(level=3, write_checksum=True)
    out = []
    for i in range(count):
        size = min(SKEW_MAX, int(SKEW_MIN / (1.0 - rng.random()) ** (1.0 / SKEW_ALPHA)))
        doc = _document(rng, i, size, text)
        how = "gzip" if len(doc) > TAIL_FROM else ("snappy", "zstd", "json", "odd zstd")[i % 4]
        if how == "gzip":
            stored = gzip.compress(doc, mtime=0)
            out.append(Written(stored, GZIP, len(gzip.decompress(stored)), True))
        elif how == "snappy":
            stored = bytes(cramjam.snappy.compress_raw(doc))
            out.append(Written(stored, SNAPPY, len(bytes(cramjam.snappy.decompress_raw(stored))), False))
        elif how == "zstd":
            stored = plain.compress(doc)
            out.append(Written(stored, ZSTD, len(zstandard.decompress(stored)), True))
        elif how == "json":
            out.append(Written(doc, "", len(doc), False))
        else:  # a frame whose first byte may start something else, or carrying a checksum: decoded
            out.append(_odd_zstd(i // 4 % 4, doc, plain, checked))
    return out


def _odd_zstd(kind: int, doc: bytes, plain: zstandard.ZstdCompressor,
              checked: zstandard.ZstdCompressor) -> Written:
    if kind == 0:  # gzip inside zstd: the first literal is 0x1f, gzip's magic
        stored = plain.compress(gzip.compress(doc, mtime=0))
        return Written(stored, f"{ZSTD}>{GZIP}", len(gzip.decompress(zstandard.decompress(stored))), False)
    if kind == 1:  # zstd inside zstd
        stored = plain.compress(plain.compress(doc))
        return Written(stored, f"{ZSTD}>{ZSTD}", len(zstandard.decompress(zstandard.decompress(stored))),
                       False)
    if kind == 2:  # a JSON array: '[' may start a skippable zstd frame, so the frame is decoded
        stored = plain.compress(b"[" + doc + b"]")
        return Written(stored, ZSTD, len(zstandard.decompress(stored)), False)
    stored = checked.compress(doc)  # a checksum is checked only by decompressing
    return Written(stored, ZSTD, len(zstandard.decompress(stored)), False)


@pytest.fixture(scope="module")
def skewed_table(cassandra) -> tuple[str, list[Written]]:
    ks = cassandra.create_keyspace("stats_skewed")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    written = _written(random.Random(17), 1600)
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, [(i // 10, i, w.stored) for i, w in enumerate(written)],
                                 concurrency=64, raise_on_first_error=True)
    session.shutdown()
    return ks, written


def test_default_stats_equals_the_producers_figures(cassandra, skewed_table, tmp_path: Path) -> None:
    ks, written = skewed_table
    out = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS JSON SELECT data FROM {ks}.t")
    (doc,) = json_docs(out.stdout)
    assert doc["complete"] and doc["error"] is None and doc["rows"] == len(written)
    (col,) = doc["columns"]
    chains: dict[str, list[int]] = {}
    for w in written:
        entry = chains.setdefault(w.chain or "not compressed", [0, 0, 0])
        entry[0] += 1
        entry[1] += len(w.stored)
        entry[2] += w.size
    got = {c["chain"]: [c["values"], c["stored_bytes"], c["decompressed_bytes"]] for c in col["by_chain"]}
    assert got == chains
    assert got[f"{ZSTD}>{GZIP}"][0] > 0
    assert col["stored_bytes"] == sum(len(w.stored) for w in written)
    assert col["decompressed_bytes"] == sum(w.size for w in written)
    compressed = [w for w in written if w.chain]
    headers = sum(w.from_header for w in written)
    validated = {"decoded": len(compressed) - headers, "headers": headers, "cut": 0, "failed": 0}
    assert col["validated"] == validated
    assert col["sized_from_headers"] == headers
