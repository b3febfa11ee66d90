"""Values for the differential tests, written by the producers' libraries: the fuzzing seeds,
every container producer over JSON, text, MessagePack, CBOR and random payloads, the order table
(tools/orders.py), the demo data (cqlsh_ext.demo), nested chains, and edge cases per container
(cut short, a byte changed, bytes after, empty and short values), plus the hostile values."""

from __future__ import annotations

import gzip
import json
import random
import sys
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import cbor2
import lz4.block
import lz4.frame
import msgpack
import snappy
import zstandard

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzzing" / "corpus"
for extra in (ROOT / "tools", ROOT):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from orders import rows as order_rows  # noqa: E402

from tests.codecs.codec_producers import PRODUCERS, json_doc  # noqa: E402

#: Paths the differential pages read: keys of the records and documents above, an index, a miss.
PATHS: list[tuple[str | int, ...]] = [("status",), ("customer", "name"), ("items", 0, "sku"), ("n",),
                                      ("id",), (0,), (0, "name"), ("k", 2, "z"), ("order-id",), ("nope",)]

#: Producers whose containers the core decodes (the others hand their values back).
NATIVE_LABELS = {"snappy", "snappy/framed", "snappy/hadoop", "snappy/xerial", "lz4/frame", "lz4/legacy",
                 "lz4/LZ4Block", "lz4/block", "lz4/block-be", "lz4/hadoop", "zstd", "gzip", "zlib"}


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted(CORPUS.rglob("*")) if p.is_file()]


@cache
def payloads() -> list[bytes]:
    record = {"id": 7, "status": "PAID", "customer": {"name": "Ada", "tier": None},
              "items": [{"sku": "S1", "qty": 2}, {"sku": "S2", "price": 9.5}], "k": [1, 2, {"z": "y"}]}
    listed = [{"name": "a", "n": 1}, {"name": "b", "n": -2.25}]
    return [
        json_doc(600, 1), json_doc(3000, 2), json.dumps(record).encode(),
        json.dumps(listed, indent=2).encode(), b"The quick brown fox jumps over the lazy dog. " * 4,
        "déjà vu, naïve café — ünïcödé text".encode() * 2,
        msgpack.packb(record), msgpack.packb(listed), cbor2.dumps(record), cbor2.dumps(listed),
        *thrift_structs(), random.Random(3).randbytes(300), b"", b"x",
    ]


def thrift_structs() -> list[bytes]:
    """Thrift structs thriftpy2 writes (binary, compact): record formats the core hands back."""
    import thriftpy2
    from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
    from thriftpy2.utils import serialize

    shop = thriftpy2.load(str(ROOT / "tests" / "payload" / "thrift" / "orders.thrift"))
    order = shop.Order(id=7, customer="Ada", items=[shop.Item("S1", 2, 9.5)], paid=True, status=2)
    return [serialize(order, factory) for factory in (TBinaryProtocolFactory(), TCompactProtocolFactory())]


def produced(native_only: bool = False) -> list[bytes]:
    """Every container producer over every payload (and the corpus' payload seeds)."""
    out = []
    for _name, make, label, _codec, _auto in PRODUCERS:
        if native_only and label not in NATIVE_LABELS:
            continue
        for payload in [*payloads(), *[p.read_bytes() for p in sorted((CORPUS / "payload").rglob("*"))
                                       if p.is_file()]]:
            out.append(bytes(make(payload)))
    return out


def orders(count: int, seed: int = 5) -> list[bytes]:
    return [row["data"] for row, _doc in order_rows(count, seed=seed)]


def demo(count: int = 6) -> list[bytes]:
    from cqlsh_ext.demo.records import documents
    from cqlsh_ext.demo.samples import samples

    return [sample.data for document in documents(count) for sample in samples(document)]


#: Containers the nested chains stack (each takes the bytes of the one inside).
WRAPPERS: list[tuple[str, Callable[[bytes], bytes]]] = [
    ("gzip", lambda d: gzip.compress(d, mtime=0)),
    ("zstd", lambda d: zstandard.ZstdCompressor().compress(d)),
    ("lz4/frame", lz4.frame.compress),
    ("zlib", zlib.compress),
    ("snappy", snappy.compress),
    ("lz4/block", lz4.block.compress),
]


def nested(depth: int = 5) -> list[bytes]:
    """Chains of containers, up to `depth` deep (the walk follows four)."""
    rng = random.Random(11)
    out = []
    payloads = (json.dumps({"status": "NEW", "n": 1}).encode() * 3, msgpack.packb({"status": "x", "n": 2}))
    for payload in payloads:
        for _ in range(40):
            data = payload
            for _level in range(rng.randint(2, depth)):
                data = rng.choice(WRAPPERS)[1](data)
            out.append(data)
    return out


def edges(values: list[bytes], rng: random.Random, per_value: int = 12) -> list[bytes]:
    """Each value cut short, with a byte changed, with bytes after it, and its first bytes."""
    out = []
    for value in values:
        n = len(value)
        for cut in sorted({0, 1, 5, 6, 9, 10, 17, n // 2, n - 5, n - 4, n - 1}):
            if 0 <= cut < n:
                out.append(value[:cut])
        for _ in range(per_value):
            if n:
                at = rng.randrange(n)
                out.append(value[:at] + bytes([value[at] ^ rng.randint(1, 255)]) + value[at + 1:])
        out += [value + b"\x00", value + b"\x00" * 8, value + value[:16], value + b"garbage!"]
    return out


def hostile() -> list[bytes]:
    from tests.codecs.hostile_values import values

    return [value for _name, value, mode in values() if mode == "auto"]


def mutate(value: bytes, rng: random.Random) -> bytes:
    """A few random edits: a byte changed, cut, bytes inserted or appended, a boundary value."""
    data = bytearray(value)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        if op == 0 and data:
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
        elif op == 1:
            data = data[:rng.randint(0, len(data))]
        elif op == 2:
            data += rng.randbytes(rng.randint(1, 8))
        elif op == 3:
            at = rng.randint(0, len(data))
            data[at:at] = rng.randbytes(rng.randint(1, 4))
        elif op == 4 and data:
            data[rng.randrange(len(data))] = rng.choice([0, 0xFF, 0x7F, 0x80, 1])
        elif op == 5 and len(data) > 2:
            at = rng.randrange(len(data))
            del data[at:at + rng.randint(1, 4)]
    return bytes(data)
