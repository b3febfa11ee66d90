"""DESCRIBE PAYLOAD's page answers on the native core against the Python road: the same pages
described by two Descriptions, one whose places' engines run on the core (each page of a place
decoded, walked and sketched in one call, the partial merged), one on the Python engine alone
(each value's view walked), compared after every page, figure by figure: each place's values,
encodings and reasons, and each path's counts, types, string and list lengths, numbers' range
(with their types), its values' counts or distinct estimate, a folded map's key kinds and keys.
The counts go to the run's summary."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import cbor2
import msgpack
import pytest
from cassandra import cqltypes

from cqlsh_ext.describe.description import Description
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.places import Decoding, Engines, ValuePlace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")

CAP = 4 << 20
MAP_TYPE = cqltypes.lookup_casstype("MapType(UTF8Type, BytesType)")


class PythonEngines(Engines):
    """Engines that run on the Python engine alone."""

    def __call__(self, place: ValuePlace | None) -> ValueEngine:
        engine = super().__call__(place)
        engine.native = False
        return engine


def figures(description: Description) -> dict[str, Any]:
    """Every figure a report reads, by place and path."""
    out: dict[str, Any] = {}
    for name, place in sorted(description.places.items()):
        s = place.structure
        keys = None if place.keys is None else (place.keys.most_common(), place.keys.distinct())
        out[name] = {"values": place.values, "encodings": place.encodings, "reasons": place.reasons,
                     "key_kinds": place.key_kinds, "keys": keys,
                     "walked": s.values, "untracked": s.untracked, "unfinished": s.unfinished,
                     "too_deep": s.too_deep}
        for path, depth, _step, node in s.walk(name):
            out[f"{name} {path} {depth}"] = {
                "present": node.present, "seen": node.seen, "types": node.types,
                "key_kinds": node.key_kinds,
                "strings": (node.strings, node.str_min, node.str_max, node.str_total),
                "lists": (node.lists, node.list_min, node.list_max, node.list_total),
                "range": (repr(node.low), repr(node.high)),
                "values": None if node.values is None else (node.values.most_common(),
                                                            node.values.distinct()),
                "keys": None if node.keys is None else (node.keys.most_common(), node.keys.distinct()),
            }
    return out


def differential(cells: list[Any], column_type: Any = cqltypes.BytesType, size: int = 40) -> Counts:
    counts = Counts()
    core = Description("q", "c", Decoding(cap=CAP))
    python = Description("q", "c", Decoding(cap=CAP))
    python.engines = PythonEngines(python.decoding)
    for d in (core, python):
        d.set_columns(["k", "c"], [cqltypes.Int32Type, column_type])
    for n, start in enumerate(range(0, len(cells), size)):
        rows = [(i, cell) for i, cell in enumerate(cells[start:start + size])]
        core.add_rows(rows)
        python.add_rows(rows)
        counts.compared += len(rows)
        got, want = figures(core), figures(python)
        if got != want:
            for key in sorted(set(got) | set(want)):
                if got.get(key) != want.get(key):
                    counts.differences.append(
                        f"page {n}, {key}: {got.get(key)!r:.300} != {want.get(key)!r:.300}")
    if not any(engine.native for engine in core.engines._by_place.values()):
        counts.differences.append("the core did not describe")
    return counts


def assert_same(name: str, counts: Counts) -> None:
    record(f"describe: {name}", counts)
    assert not counts.differences, (f"{len(counts.differences)} differences:\n"
                                    + "\n".join(counts.differences[:30]))


def documents(rng: random.Random, count: int) -> list[Any]:
    """Trees with what DESCRIBE counts: fields and data keys (dates, numbers, ids, UUIDs, e-mail
    addresses, long keys), lists of leaves and of records, numbers of every kind, long strings."""
    out = []
    for i in range(count):
        doc: dict[str, Any] = {
            "id": i, "status": rng.choice(["NEW", "PAID", None, 7, True, 2.5]),
            "n": rng.choice([i, -i, i * 10**20, i + 0.5, -0.0, 0, 1.0, 10**30]),
            "tags": rng.sample(["a", "b", "c", 1, None], rng.randrange(4)),
            "items": [{"sku": f"S{j}", "qty": j, "price": j * 1.25} for j in range(rng.randrange(3))],
            "by_day": {f"2024-0{rng.randrange(1, 9)}-1{rng.randrange(10)}": rng.randrange(9)
                       for _ in range(rng.randrange(3))},
            "by_id": {rng.choice(["ORD-12345", "a@b.com", "123", "1.5", "deadbeef0", "x" * 70,
                                  "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "12:30", "2024/01/02",
                                  "2024-01-02T10:00:00.5+01:00"]): 1},
            "note": "x" * rng.choice([0, 5, 120]) + str(i % 90),
        }
        if rng.random() < 0.2:
            doc["deep"] = {"a": {"b": {"c": [[[i]]]}}}
        out.append(doc)
    return out


def packed(doc: Any) -> bytes:
    """MessagePack, or CBOR where an integer is past 64 bits (MessagePack has none)."""
    try:
        return bytes(msgpack.packb(doc))
    except OverflowError:
        return bytes(cbor2.dumps(doc))


def test_describe_over_the_order_table() -> None:
    assert_same("order table", differential(list(corpora.orders(1200))))


def test_describe_over_documents_in_every_encoding() -> None:
    rng = random.Random(17)
    docs = documents(rng, 300)
    cells: list[Any] = []
    for k, doc in enumerate(docs):
        text = json.dumps(doc).encode()
        encoders = [lambda d: json.dumps(d).encode(), packed, cbor2.dumps]
        produced = [bytes(make(text)) for _n, make, label, _c, _a in corpora.PRODUCERS
                    if label in corpora.NATIVE_LABELS]
        cells.append(encoders[k % 3](doc) if k % 4 else produced[k % len(produced)])
    cells += [None, b"", b"\x00\x01\x02", rng.randbytes(300)] + corpora.hostile()
    rng.shuffle(cells)
    assert_same("documents in every encoding", differential(cells))


def test_describe_a_map_of_blobs() -> None:
    rng = random.Random(5)
    docs = documents(rng, 120)
    cells = [{"a": json.dumps(d).encode(), "2024-01-0" + str(i % 9): packed(d)} for i, d in enumerate(docs)]
    assert_same("a map of blobs", differential(cells, MAP_TYPE, size=25))


def test_the_comparison_sees_a_difference() -> None:
    core = Description("q", "c", Decoding(cap=CAP))
    core.set_columns(["k", "c"], [cqltypes.Int32Type, cqltypes.BytesType])
    core.add_rows([(i, v) for i, v in enumerate(corpora.orders(30))])
    before = figures(core)
    next(iter(core.places.values())).structure.root.children["status"].seen += 1
    assert figures(core) != before


def test_equal_numbers_of_other_types_keep_the_first_as_the_bound() -> None:
    """min and max keep the first of equal numbers (1 and 1.0, 0 and -0.0): the range shows the
    type the first value had, on both roads, however the pages split."""
    values = [json.dumps({"v": v, "w": w}).encode() for v, w in
              [(1, 2.0), (1.0, 2), (1.0, 2), (1, 2.0), (-0.0, 0), (0, -0.0)]]
    for size in (2, 4, 6):
        assert_same("equal bounds", differential(values, size=size))


def test_a_value_the_core_lacks_is_described_by_the_python_engine(lacked_container: Any) -> None:
    # The value the core hands back is read by the Python engine in payload/native.py (its view)
    # and counted with the page: the figures are the Python road's.
    doc = json.dumps({"status": "PAID", "customer": {"name": "Ada"}, "n": 3}).encode()
    cells: list[Any] = corpora.orders(60)
    cells.insert(23, b"XOR1" + bytes(b ^ 0x5A for b in doc))
    counts = differential(cells)
    assert_same("one value the core lacks", counts)
