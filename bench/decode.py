"""Decode speed: the bare library call vs our detect+decode (registry.decode_auto / decode_named).

Prints one row per codec and value size (4 KB and 64 KB of JSON-like records): MB/s of
decompressed output for the bare call, for ours, and ours/bare. Each figure is the best of
several timed runs over 64 distinct values (so no single value stays hot in cache).

Then, per value (`per_value()`): a value's record read whole, by the bare library calls
(decompress, then orjson, or json.loads, MessagePack, CBOR) against what the shell reads of it
for a query: one value at a time as before the value engine (unwrap, then the JSON read) and
the engine once the column's chain is known (payload.engine: contents() of a page, then the
JSON read), for snappy JSON, zstd MessagePack, gzip JSON, LZ4-frame CBOR and plain JSON of
about 1 KB and 64 KB. Goal: the engine at most 1.3 x the bare call. Times are CPU time (steadier
than wall time on a shared machine).

    .venv/bin/python bench/decode.py [--quick] [--values-only]
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import random
import struct
import sys
import time
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cramjam  # noqa: E402
import lz4.block  # noqa: E402
import lz4.frame  # noqa: E402
import snappy  # noqa: E402
import zstandard  # noqa: E402

from cqlsh_ext.codecs import registry  # noqa: E402
from cqlsh_ext.codecs.base import DEFAULT_CAP  # noqa: E402
from cqlsh_ext.demo.samples import snappy_framed

try:
    import brotli
except ImportError:  # optional
    brotli = None

_FIRST = ["Ada", "Linus", "Grace", "Ken", "Barbara", "Dennis", "Frances", "Edsger", "Radia", "Guido"]
_LAST = ["Lovelace", "Torvalds", "Hopper", "Thompson", "Liskov", "Ritchie", "Allen", "Dijkstra"]
_CITIES = ["Seattle", "Austin", "Dublin", "Berlin", "Lyon", "Osaka", "Toronto", "Porto"]
_STATUS = ["PLACED", "PAID", "PICKING", "SHIPPED", "DELIVERED"]


def records(size: int, seed: int) -> bytes:
    """JSON-like bytes of exactly `size` bytes: order documents with ids, names, prices, events."""
    rng = random.Random(seed)
    docs = []
    total = 0
    while total < size:
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        doc = {
            "orderId": f"{rng.getrandbits(64):016x}",
            "customer": {
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@example.com",
                "city": rng.choice(_CITIES),
                "postalCode": str(rng.randint(10000, 99999)),
            },
            "items": [
                {
                    "sku": f"SKU-{rng.randint(10000, 99999)}",
                    "qty": rng.randint(1, 4),
                    "unitPrice": round(rng.uniform(3, 400), 2),
                }
                for _ in range(rng.randint(1, 4))
            ],
            "status": rng.choice(_STATUS),
            "placedAt": 1_700_000_000_000 + rng.randint(0, 10**10),
        }
        text = json.dumps(doc, separators=(",", ":"))
        docs.append(text)
        total += len(text) + 1
    return ("[" + ",".join(docs) + "]").encode()[:size]


_dctx = zstandard.ZstdDecompressor()

# name, producer, bare call, how we decode (None = auto, else the -d codec)
Case = tuple[str, Callable[[bytes], bytes], Callable[[bytes], object], "str | None"]
CASES: list[Case] = [
    ("snappy raw", snappy.compress, lambda c: bytes(cramjam.snappy.decompress_raw(c)), None),
    ("snappy raw (bare: Buffer, no bytes)", snappy.compress, cramjam.snappy.decompress_raw, None),
    ("snappy framed", snappy_framed, lambda c: bytes(cramjam.snappy.decompress(c)), None),
    ("lz4 frame", lz4.frame.compress, lz4.frame.decompress, None),
    ("lz4 block LE size", lz4.block.compress, lz4.block.decompress, None),
    (
        "lz4 block BE size",
        lambda d: struct.pack(">I", len(d)) + lz4.block.compress(d, store_size=False),
        lambda c: lz4.block.decompress(c[4:], uncompressed_size=struct.unpack_from(">I", c)[0]),
        None,
    ),
    ("zstd (content size)", zstandard.ZstdCompressor().compress, _dctx.decompress, None),
    (
        "zstd (no content size)",
        zstandard.ZstdCompressor(write_content_size=False).compress,
        lambda c: _dctx.decompressobj().decompress(c),  # max_output_size would allocate it
        None,
    ),
    ("gzip", gzip.compress, lambda c: zlib.decompress(c, 31), None),
    ("zlib", zlib.compress, zlib.decompress, None),
    ("bzip2", bz2.compress, bz2.decompress, None),
    ("xz", lzma.compress, lzma.decompress, None),
]
if brotli is not None:
    CASES.append(("brotli (-d brotli)", brotli.compress, brotli.decompress, "brotli"))


def best_rate(fn: Callable[[bytes], object], values: list[bytes], size: int, budget: float) -> float:
    """MB/s of output: best of timed passes over all values, within ~budget seconds."""
    best = float("inf")
    deadline = time.perf_counter() + budget
    runs = 0
    while runs < 5 or (time.perf_counter() < deadline and runs < 200):
        t0 = time.perf_counter()
        for v in values:
            fn(v)
        best = min(best, time.perf_counter() - t0)
        runs += 1
    return size * len(values) / best / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs (noisier)")
    ap.add_argument("--values-only", action="store_true", help="only the per-value table")
    args = ap.parse_args()
    if args.values_only:
        per_value(args.quick)
        return
    budget = 0.15 if args.quick else 0.6
    auto = registry.decode_auto
    named = registry.decode_named
    print(f"{'codec':38s} {'size':>6s} {'bare MB/s':>10s} {'ours MB/s':>10s} {'ratio':>6s}")
    for size in (4096, 65536):
        plain = [records(size, seed) for seed in range(64)]
        for name, produce, bare, codec in CASES:
            values = [produce(p) for p in plain]
            # correctness first: ours must give the same bytes
            for v, p in zip(values, plain, strict=True):
                got = auto(v) if codec is None else named(codec, v)
                assert got is not None and got[1].data == p, name
            if codec is None:

                def ours(v: bytes) -> object:
                    return auto(v, DEFAULT_CAP)
            else:

                def ours(v: bytes, c: str = codec) -> object:
                    return named(c, v, DEFAULT_CAP)

            # interleave to share machine noise; take the better of two rounds each
            b1 = best_rate(bare, values, size, budget)
            o1 = best_rate(ours, values, size, budget)
            b2 = best_rate(bare, values, size, budget)
            o2 = best_rate(ours, values, size, budget)
            b, o = max(b1, b2), max(o1, o2)
            print(f"{name:38s} {size // 1024:>4d}KB {b:10.0f} {o:10.0f} {o / b:6.2f}")
        print()
    page()
    print()
    per_value(args.quick)


def document(size: int, seed: int) -> bytes:
    """A JSON document of about `size` bytes: an object holding an array of order records (a
    record with string keys at the top, as stored records mostly are: a record format without a
    signature whose top level is an array pays a walk of the whole tree to be detected)."""
    rng = random.Random(seed)
    docs: list[str] = []
    total = 2
    while total < size:
        text = records(4096, rng.randrange(1 << 30)).decode()
        one = text[1:text.index("}},{") + 2] if "}},{" in text else '{"x": 1}'
        docs.append(one)
        total += len(one) + 1
    return ('{"page": ' + str(seed) + ', "records": [' + ",".join(docs) + "]}").encode()


def per_value(quick: bool = False) -> None:
    """Per value: the bare library calls against the shell's reading, one by one and the engine."""
    import msgpack
    import orjson
    from cbor2 import dumps as cbor_dumps
    from cbor2 import loads as cbor_loads

    from cqlsh_ext.payload.json_text import json_container
    from cqlsh_ext.payload.unwrap import unwrap
    from cqlsh_ext.payload.view import TEXT

    try:
        from cqlsh_ext.payload.engine import ValueEngine
    except ImportError:  # a checkout before the engine
        ValueEngine = None  # noqa: N806

    def as_msgpack(doc: bytes) -> bytes:
        return msgpack.packb(json.loads(doc))

    def as_cbor(doc: bytes) -> bytes:
        return cbor_dumps(json.loads(doc))

    zstd = zstandard.ZstdDecompressor()
    # name: (store a JSON document, bare decompress, bare parse, json.loads parse when JSON)
    kinds: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes], Callable[[bytes], object],
                           Callable[[bytes], object] | None]] = {
        "snappy JSON": (snappy.compress, lambda c: bytes(cramjam.snappy.decompress_raw(c)), orjson.loads,
                        json.loads),
        "zstd MessagePack": (lambda d: zstandard.compress(as_msgpack(d)), zstd.decompress, msgpack.unpackb,
                             None),
        "gzip JSON": (gzip.compress, lambda c: zlib.decompress(c, 31), orjson.loads, json.loads),
        "LZ4-frame CBOR": (lambda d: lz4.frame.compress(as_cbor(d)), lz4.frame.decompress, cbor_loads, None),
        "plain JSON": (lambda d: d, lambda c: c, orjson.loads, json.loads),
    }

    def bare_calls(stored: list[bytes], decompress: Callable[[bytes], bytes],
                   parse: Callable[[bytes], object]) -> None:
        for v in stored:
            parse(decompress(v))

    def one_by_one(stored: list[bytes]) -> None:
        """What a query read of each value before the value engine: the view, then its JSON."""
        for v in stored:
            view = unwrap(v, "auto", DEFAULT_CAP)
            if view.kind == TEXT:
                json_container(view.text)

    def engine_page(engine: Any, stored: list[bytes]) -> None:
        for kind, found in engine.contents(stored):
            if kind == TEXT:
                json_container(found)

    def cpu_best(fn: Callable[[], object], rounds: int) -> float:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        return best

    print("per value, microseconds of CPU (best of rounds over 64 values), ratio to the bare calls:")
    print(f"{'':18s} {'size':>6s} {'bare':>8s} {'json.loads':>10s} {'one by one':>10s} {'engine':>8s}"
          f" {'ratio':>6s}")
    for size in (1024, 65536):
        docs = [document(size, seed) for seed in range(64)]
        rounds = (5 if quick else 15) if size < 8192 else (3 if quick else 7)
        for name, (store, decompress, parse, json_parse) in kinds.items():
            stored = [store(d) for d in docs]
            per = 1e6 / len(stored)
            b = cpu_best(partial(bare_calls, stored, decompress, parse), rounds) * per
            j = None
            if json_parse is not None:
                j = cpu_best(partial(bare_calls, stored, decompress, json_parse), rounds) * per
            o = cpu_best(partial(one_by_one, stored), rounds) * per
            line = (f"{name:18s} {size // 1024:>4d}KB {b:8.1f} {'' if j is None else f'{j:10.1f}':>10s} "
                    f"{o:10.1f}")
            if ValueEngine is not None:
                engine = ValueEngine()
                engine.contents(stored)  # the column's chain is known
                e = cpu_best(partial(engine_page, engine, stored), rounds) * per
                line += f" {e:8.1f} {e / b:6.2f}"
            print(line, flush=True)


def page() -> None:
    """The shell's hot path: one page of 2,000 rows of ~4 KB snappy JSON, decoded for display."""
    rows = [snappy.compress(records(4096 - (i % 64), i)) for i in range(2000)]
    raw = cramjam.snappy.decompress_raw
    auto = registry.decode_auto

    def bare_page() -> None:
        for v in rows:
            bytes(raw(v))

    def our_page() -> None:
        for v in rows:
            auto(v, DEFAULT_CAP)

    def best(fn: Callable[[], None]) -> float:
        return min(_timed(fn) for _ in range(15)) * 1e3

    b, o = best(bare_page), best(our_page)
    print(f"page of 2,000 x ~4 KB snappy JSON rows: bare {b:.2f} ms, ours (detect+decode) {o:.2f} ms")


def _timed(fn: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
