"""Tables whose truth the tests know, on the real server, and the shell run against them.

`docs`: ROWS rows, one per partition, `data blob` in ten encodings by real producers (snappy,
zstd, LZ4 frame, gzip; JSON, MessagePack, CBOR, plain text, a binary payload, bytes in no known
format, a truncated gzip stream, and a value the output cap cuts), some null; the documents have
fields that are sometimes missing, mixed types, nested lists and a map keyed by dates. `extra
map<text, blob>`: a `meta` key, or a date key. The expected figures are computed here from the
generator (`truth`), by a walk of the documents written for the tests, not by cqlsh_ext.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cbor2
import lz4.frame
import msgpack
import pytest
import snappy
import zstandard
from shell_runner import CQLSH_EXT, Run, isolated_env

ROWS = 3000
STATUSES = ["NEW", "PAID", "SHIPPED", "CANCELLED"]
#: Row i's encoding is ENCODINGS[i % 10]; every 50th row from 7 on is cut instead, every 31st null.
ENCODINGS = ["snappy-json", "snappy-json", "zstd-msgpack", "json", "lz4-cbor", "gzip-json", "text",
             "binary", "unknown", "failed"]
#: (kind, label, cut) each encoding is reported as (the engine's vocabulary, payload/view.py: a value
#: undecoded has no label, a failed one's format is in its reason).
REPORTED = {
    "snappy-json": ("text", "snappy>json", False), "zstd-msgpack": ("record", "zstd>msgpack", False),
    "json": ("text", "json", False), "lz4-cbor": ("record", "lz4/frame>cbor", False),
    "gzip-json": ("text", "gzip>json", False), "text": ("text", "snappy>text", False),
    "binary": ("binary", "gzip>binary", False), "unknown": ("unknown", "", False),
    "failed": ("failed", "", False),
    "cut": ("text", "zstd>text", True),
}
#: The output cap the shell runs with: the `cut` values decode to more.
CAP = 64 * 1024
DATE_KEY = re.compile(r"\d{4}-\d{2}-\d{2}")


def encoding(i: int) -> str | None:
    if i % 31 == 0:
        return None
    if i % 50 == 7:
        return "cut"
    return ENCODINGS[i % 10]


def document(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    doc: dict[str, Any] = {"id": f"ORD-{i:06d}", "status": STATUSES[rng.randrange(4)],
                           "amount": i + 0.25 if i % 3 == 0 else i % 500}
    if i % 7:
        doc["customer"] = {"name": f"c{i % 13}"}
        if i % 5:
            doc["customer"]["tier"] = rng.choice(["gold", "silver"])
    doc["items"] = [{"sku": f"S{rng.randrange(100)}", "qty": rng.randrange(1, 5),
                     "tags": rng.sample(["red", "blue", "new"], rng.randrange(3))}
                    for _ in range(rng.randrange(4))]
    doc["matrix"] = [[i % 3, 1], [2]] if i % 2 else []
    doc["byDay"] = {f"2024-01-{rng.randrange(1, 29):02d}": rng.randrange(10)
                    for _ in range(rng.randrange(1, 4))}
    if i % 6 == 0:
        doc["note"] = None
    return doc


def stored(i: int) -> bytes | None:
    """Row i's blob, written by the producers' own libraries."""
    how = encoding(i)
    if how is None:
        return None
    doc = document(i)
    text = json.dumps(doc).encode()
    rng = random.Random(-i)
    if how == "snappy-json":
        return snappy.compress(text)
    if how == "zstd-msgpack":
        return zstandard.compress(msgpack.packb(doc))
    if how == "json":
        return text
    if how == "lz4-cbor":
        return lz4.frame.compress(cbor2.dumps(doc))
    if how == "gzip-json":
        return gzip.compress(text, mtime=0)
    if how == "text":
        return snappy.compress(f"order {i} was {doc['status']} and nothing more to say".encode())
    if how == "binary":
        return gzip.compress(rng.randbytes(300), mtime=0)
    if how == "unknown":
        return bytes([0x9F, 0x00]) + rng.randbytes(40)
    if how == "failed":
        return gzip.compress(text, mtime=0)[:-9]
    return zstandard.compress(json.dumps({"big": "x" * (2 * CAP)}).encode())  # cut


def extra(i: int) -> dict[str, bytes] | None:
    if i % 4 == 0:
        return {"meta": snappy.compress(json.dumps({"v": i % 3}).encode())}
    if i % 4 == 1:
        return {f"2024-02-{i % 28 + 1:02d}": zstandard.compress(json.dumps({"n": i}).encode())}
    return None


@dataclass
class PathTruth:
    present: int = 0
    seen: int = 0
    types: Counter[str] = field(default_factory=Counter)
    values: Counter[Any] = field(default_factory=Counter)


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {int: "integer", float: "float", str: "string", type(None): "null", dict: "record",
            list: "list"}[type(value)]


def truth(docs: list[dict[str, Any]], root: str = "data") -> dict[str, PathTruth]:
    """Every path of the documents, as the report spells it: presence (documents that have it),
    occurrences, types and scalar values; a list's elements are `[]`, date keys `*`."""
    paths: dict[str, PathTruth] = defaultdict(PathTruth)

    def walk(path: str, value: Any, found: set[str]) -> None:
        found.add(path)
        entry = paths[path]
        entry.seen += 1
        entry.types[type_name(value)] += 1
        if isinstance(value, dict):
            for key, child in value.items():
                walk(f"{path}.*" if DATE_KEY.fullmatch(key) else f"{path}.{key}", child, found)
        elif isinstance(value, list):
            for child in value:
                walk(f"{path}[]", child, found)
        else:
            entry.values[(type_name(value), value)] += 1

    for doc in docs:
        found: set[str] = set()
        walk(root, doc, found)
        for path in found:
            paths[path].present += 1
    return dict(paths)


@dataclass
class Docs:
    ks: str
    table: str = "docs"

    @property
    def name(self) -> str:
        return f"{self.ks}.{self.table}"

    @staticmethod
    def described(rows: range | list[int] = range(ROWS)) -> list[dict[str, Any]]:
        """The documents a report of the rows describes structurally (JSON and records)."""
        return [document(i) for i in rows if encoding(i) in
                ("snappy-json", "zstd-msgpack", "json", "lz4-cbor", "gzip-json")]


@pytest.fixture(scope="package")
def docs(cassandra) -> Docs:
    from cassandra.concurrent import execute_concurrent_with_args

    ks = cassandra.create_keyspace("describe")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int PRIMARY KEY, data blob, extra map<text, blob>)")
    insert = session.prepare("INSERT INTO docs (pk, data, extra) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, [(i, stored(i), extra(i)) for i in range(ROWS)],
                                 concurrency=32, raise_on_first_error=True)
    session.shutdown()
    return Docs(ks)


def shell(cassandra, home: Path, statement: str, *flags: str, env: dict[str, str] | None = None) -> Run:
    """cqlsh-ext -e STATEMENT against the test server, with the tests' output cap."""
    args = [*cassandra.cqlsh_args, "--max-output-size", str(CAP), *flags, "-e", statement]
    proc = subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, timeout=600,
                          env={**isolated_env(home), **(env or {})})
    return Run(proc.returncode, proc.stdout, proc.stderr, None)


def report(cassandra, home: Path, statement: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON document of a DESCRIBE PAYLOAD statement (JSON is added)."""
    out = shell(cassandra, home, f"{statement} JSON", env=env)
    assert out.returncode == 0 and out.stdout.strip(), out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path
