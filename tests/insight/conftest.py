"""Data for the insight tests, written by real producers into the real Cassandra.

Every value is kept with what the test knows about it independently of cqlsh-ext: the bytes
stored, the payload given to the producer (or what the standard library decodes), the chain the
producer implies and the status. The tests recompute every figure from these.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cramjam
import lz4.block
import lz4.frame
import pytest
import zstandard
from java_producers import java_produce_many
from shell_runner import CQLSH_EXT, Run, run

from cqlsh_ext.codecs import registry
from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import java_string

COMPRESSED, STORED, FAILED = "compressed", "not compressed", "failed"
#: A value read as no known format (random bytes): STATS counts it apart from readable stored text.
NO_FORMAT = "unknown"
#: How STATS spells each status where a chain would be.
STATUS_WORDS = {STORED: STORED, NO_FORMAT: "no known format", FAILED: FAILED}


@dataclass
class Value:
    key: int
    stored: bytes | None
    #: Decompressed payload size (the declared size for a value cut at the output cap).
    size: int
    chain: str
    status: str
    exact: bool = True
    producer: str = ""


# Java producer -> chain (labels from the registry, so a renamed container label stays one place).
JAVA_CHAINS = {
    "snappy_raw": registry.SNAPPY_RAW.label,
    "snappy_xerial": registry.SNAPPY_XERIAL.label,
    "snappy_framed": registry.SNAPPY_FRAMED.label,
    "lz4_java_block": registry.LZ4_JAVA.label,
    "lz4_frame": registry.LZ4_FRAME.label,
    "zstd": registry.ZSTD.label,
    "gzip": registry.GZIP.label,
    "zlib": registry.ZLIB.label,
    "gzip_java_string": f"{registry.GZIP.label}>java",
    "gzip_java_object": f"{registry.GZIP.label}>java",
    "java_string": "java",
}

PY_PRODUCERS: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "py_snappy_framed": (lambda p: bytes(cramjam.snappy.compress(p)), registry.SNAPPY_FRAMED.label),
    "py_lz4_frame": (lz4.frame.compress, registry.LZ4_FRAME.label),
    "py_lz4_block": (lz4.block.compress, registry.LZ4_LE.label),
    "py_zstd": (zstandard.ZstdCompressor().compress, registry.ZSTD.label),
    "py_zstd_checksum": (zstandard.ZstdCompressor(write_checksum=True).compress, registry.ZSTD.label),
    "py_gzip": (lambda p: gzip.compress(p, mtime=0), registry.GZIP.label),
    "py_zlib": (zlib.compress, registry.ZLIB.label),
    "py_bz2": (bz2.compress, registry.BZIP2.label),
    "py_xz": (lzma.compress, registry.XZ.label),
}


def java_value(key: int, producer: str, stored: bytes, payload: bytes) -> Value:
    chain = JAVA_CHAINS[producer]
    if producer == "java_string":
        return Value(key, stored, len(stored), chain, STORED, producer=producer)
    if producer.startswith("gzip_java"):
        size = len(gzip.decompress(stored))  # the serialized stream under the gzip layer
        if producer == "gzip_java_string":
            assert size == 7 + len(payload)  # TC_STRING: magic, version, tag, u16 length, UTF-8
        return Value(key, stored, size, chain, COMPRESSED, producer=producer)
    return Value(key, stored, len(payload), chain, COMPRESSED, producer=producer)


def build_orders() -> list[Value]:
    docs = [d.encode() for d in documents(300, seed=21)]
    values: list[Value] = []
    key = 0

    def add(v: Value) -> None:
        nonlocal key
        values.append(v)
        key += 1

    for d in docs:  # the Keyspaces article's case: Java's Snappy.compress layout, from Python
        add(
            Value(
                key,
                bytes(cramjam.snappy.compress_raw(d)),
                len(d),
                registry.SNAPPY_RAW.label,
                COMPRESSED,
                producer="py_snappy",
            )
        )
    java_payloads = docs[::15]
    for payload, outputs in zip(java_payloads, java_produce_many(java_payloads), strict=True):
        for producer, stored in sorted(outputs.items()):
            add(java_value(key, producer, stored, payload))
    for d in docs[1:100:10]:
        for name, (produce, chain) in PY_PRODUCERS.items():
            add(Value(key, produce(d), len(d), chain, COMPRESSED, producer=name))
    for d in docs[2:100:10]:
        add(Value(key, d, len(d), "", STORED, producer="plain json"))
    for _ in range(5):
        add(Value(key, None, 0, "", "null"))
    cut = gzip.compress(docs[3], mtime=0)
    add(Value(key, cut[: len(cut) // 3], len(cut) // 3, "", FAILED, producer="truncated gzip"))
    add(Value(key, cut[: len(cut) // 2], len(cut) // 2, "", FAILED, producer="truncated gzip"))
    zdict = zstandard.train_dictionary(2048, [d[:400] for d in docs[:60]])
    with_dict = zstandard.ZstdCompressor(dict_data=zdict).compress(docs[4])
    add(Value(key, with_dict, len(with_dict), "", FAILED, producer="zstd with dictionary"))
    # Sizes around the 1 MB row quota, and one value over the 4 MiB output cap.
    big = (docs[5] * (1_250_000 // len(docs[5]) + 1))[:1_250_000]
    add(
        Value(
            key,
            zstandard.ZstdCompressor().compress(big),
            len(big),
            registry.ZSTD.label,
            COMPRESSED,
            producer="zstd 1.25 MB",
        )
    )
    near = bytes(random_bytes(960_000, 9))
    add(Value(key, near, len(near), "", NO_FORMAT, producer="random 960 KB"))
    zeros = 5 << 20
    add(
        Value(
            key,
            zstandard.ZstdCompressor().compress(bytes(zeros)),
            zeros,
            registry.ZSTD.label,
            COMPRESSED,
            exact=False,
            producer="zstd 5 MiB of zeros",
        )
    )
    return values


def random_bytes(n: int, seed: int) -> bytes:
    import random

    return random.Random(seed).randbytes(n)


def build_formats(doc: str) -> dict[str, tuple[bytes, bytes]]:
    """name -> (stored value, the payload under the compression layers) for one document."""
    payload = doc.encode()
    out = {
        f"java {k}": (v, gzip.decompress(v) if k.startswith("gzip") else payload if k != "java_string" else v)
        for k, v in java_produce_many([payload])[0].items()
    }
    for name, (produce, _chain) in PY_PRODUCERS.items():
        out[name] = (produce(payload), payload)
    out["py_snappy"] = (bytes(cramjam.snappy.compress_raw(payload)), payload)
    out["py_gzip_java_string"] = (gzip.compress(java_string(doc), mtime=0), java_string(doc))
    return out


@dataclass
class InsightData:
    ks: str
    orders: list[Value]
    formats: dict[str, tuple[bytes, bytes]]
    formats_doc: str
    advise_payloads: list[bytes]
    settings_rows: list[tuple[int, int, bytes]]
    big_rows: int


@pytest.fixture(scope="session")
def insight(cassandra) -> InsightData:
    ks = cassandra.create_keyspace("insight")
    s = cassandra.session(ks)
    from cassandra.concurrent import execute_concurrent_with_args

    def fill(insert: str, args: list[tuple]) -> None:
        prepared = s.prepare(insert)
        execute_concurrent_with_args(s, prepared, args, concurrency=32, raise_on_first_error=True)

    s.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    orders = build_orders()
    fill("INSERT INTO orders (id, data) VALUES (?, ?)", [(v.key, v.stored) for v in orders])

    doc = next(documents(1, seed=7))
    formats = build_formats(doc)
    s.execute("CREATE TABLE formats (name text PRIMARY KEY, data blob)")
    fill("INSERT INTO formats (name, data) VALUES (?, ?)", [(k, v[0]) for k, v in formats.items()])

    advise_payloads = [d.encode() for d in documents(40, seed=31)]
    s.execute("CREATE TABLE advise_src (id int PRIMARY KEY, data blob)")
    fill(
        "INSERT INTO advise_src (id, data) VALUES (?, ?)",
        [(i, gzip.compress(p, mtime=0)) for i, p in enumerate(advise_payloads)],
    )

    s.execute(
        "CREATE TABLE settings_t (pk int, ck int, data blob, PRIMARY KEY (pk, ck)) WITH compression = "
        "{'class': 'ZstdCompressor', 'compression_level': 5, 'chunk_length_in_kb': 64}"
    )
    setting_docs = [d.encode() for d in documents(150, seed=41)]
    settings_rows = [
        (i // 5, i % 5, bytes(cramjam.snappy.compress_raw(d))) for i, d in enumerate(setting_docs)
    ]
    fill("INSERT INTO settings_t (pk, ck, data) VALUES (?, ?, ?)", settings_rows)

    # A scan that takes a few seconds, for Ctrl-C: gzip -9 of 60 KB documents decodes slowly.
    bulky = json.dumps([json.loads(d) for d in documents(40, seed=51)]).encode()[:60_000]
    assert len(bulky) == 60_000
    stored = zlib.compressobj(9, zlib.DEFLATED, 31)
    blob = stored.compress(bulky) + stored.flush()
    big_rows = 8000
    s.execute("CREATE TABLE bulky (id int PRIMARY KEY, data blob)")
    fill("INSERT INTO bulky (id, data) VALUES (?, ?)", [(i, blob) for i in range(big_rows)])
    s.shutdown()
    return InsightData(ks, orders, formats, doc, advise_payloads, settings_rows, big_rows)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def cqlsh_ext(cassandra, home: Path, statement: str, *flags: str, ok: bool = True) -> Run:
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, *flags, "-e", statement], home, timeout=180)
    if ok:
        assert result.returncode == 0, result.stderr
    return result


@dataclass
class Screen:
    """What a statement run with -e in a terminal wrote (`lines`, escape sequences removed) and
    what the terminal shows (`rows`, a terminal emulator's)."""

    lines: list[str]
    rows: list[str]
    cols: int

    @property
    def text(self) -> str:
        return "\n".join(self.rows)

    def widest(self) -> str:
        return max(self.lines, key=len, default="")


def on_screen(cassandra, home: Path, statement: str, cols: int, *flags: str) -> Screen:
    """`statement` run by the binary with -e in a terminal `cols` columns wide (and tall enough
    to keep every line): the reports are laid out for it, as a person at that terminal sees them."""
    import re

    from repl.terminal import _ESCAPES, Term

    term = Term([*cassandra.cqlsh_args, *flags, "-e", statement], home, rows=1500, cols=cols)
    try:
        status = term.finish(timeout=300)
    finally:
        term.close()
    assert status == 0, term.tail()
    rows = term.display()
    while rows and not rows[-1]:
        rows.pop()
    # Lines as written: a carriage return starts one again (the progress line redraws itself).
    return Screen(re.split(r"[\r\n]", _ESCAPES.sub("", term.raw)), rows, cols)


def json_docs(stdout: str) -> list[dict]:
    """The JSON documents on stdout (cqlsh prints its version warning on stdout before them)."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
