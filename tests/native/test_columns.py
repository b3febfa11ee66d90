"""A page's answer as columns (payload.native.page_columns): the core's PageColumns against the
Python engine's plain lists (the reference: the same mapping, payload.native.column_value), value
for value, over the corpora (values the core hands back filled by the Python engine); the same
columns imported by pyarrow through the Arrow C data interface (`__arrow_c_array__`,
`__arrow_c_stream__`), typed as documented (one type for a path of one kind, a dense union for a
path of mixed kinds, JSON text for objects and arrays)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.payload import native
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.pages import ReadRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402
from fuzzing.page_diff import compare_columns  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")
pa = pytest.importorskip("pyarrow")

PATHS = [*corpora.PATHS, ("customer",), ("items",), ()]


def compare(values: list[bytes], cap: int) -> Counts:
    counts = Counts()
    compare_columns(values, cap, PATHS, counts)
    return counts


def run(values: list[bytes], caps: tuple[int, ...] = (4 << 20, 300), size: int = 64) -> Counts:
    total = Counts()
    for cap in caps:
        for start in range(0, len(values), size):
            total.add(compare(values[start:start + size], cap))
    return total


def assert_same(name: str, counts: Counts) -> None:
    record(name, counts)
    shown = "\n".join(counts.differences[:30])
    assert not counts.differences, f"{len(counts.differences)} differences:\n{shown}"


def test_the_order_table() -> None:
    assert_same("columns: order table", run(corpora.orders(600)))


def test_the_seeds_producers_and_nested_chains() -> None:
    counts = run(corpora.seeds() + corpora.produced()[::3] + corpora.nested())
    assert counts.handed_back > 0  # filled by the Python engine
    assert_same("columns: seeds, producers, nested", counts)


def test_edges_and_hostile_values() -> None:
    import random

    values = corpora.edges(corpora.orders(12, seed=4), random.Random(8), per_value=3) + corpora.hostile()
    assert_same("columns: edges, hostile", run(values, (4 << 20, 1000)))


def test_a_path_is_typed_by_what_its_values_hold() -> None:
    docs = [{"n": 1, "s": "a", "o": {"k": [1, 2.5, None]}}, {"n": 2, "s": "b", "o": [True, "x"]},
            {"n": 2.5, "s": None, "o": 3}, {"n": 10**30}]
    values = [json.dumps(doc).encode() for doc in docs] + [b"\x00" * 40]  # the last no known format
    got = native.page_columns(ValueEngine(), values, ReadRequest([("s",), ("n",), ("o",), ("nope",)]))
    batch = pa.record_batch(got)
    assert batch.schema.field("s").type == pa.string()
    assert batch.column("s").to_pylist() == ["a", "b", None, None, None]
    n = batch.schema.field("n").type
    assert pa.types.is_union(n) and n.mode == "dense"
    assert [n.field(i).name for i in range(n.num_fields)] == ["null", "int64", "float64", "big_integer"]
    assert batch.column("n").to_pylist() == [1, 2, 2.5, str(10**30), None]
    assert batch.column("o").to_pylist()[:2] == ['{"k": [1, 2.5, null]}', '[true, "x"]']
    assert batch.schema.field("nope").type == pa.null()
    assert batch.column("kind").to_pylist() == ["text", "text", "text", "text", "unknown"]
    assert batch.column("label").to_pylist() == ["json"] * 4 + [""]
    # a stream of one batch
    reader = pa.RecordBatchReader.from_stream(got)
    assert reader.read_all().num_rows == 5


def test_a_lacked_value_is_filled_by_the_python_engine(lacked_container: Any) -> None:
    doc = json.dumps({"status": "PAID", "n": 3}).encode()
    values = corpora.orders(20)
    values.insert(5, b"XOR1" + bytes(b ^ 0x5A for b in doc))
    got = native.page_columns(ValueEngine(), values, ReadRequest([("status",), ("n",)]))
    assert 5 in got.handed_back
    batch = pa.record_batch(got)
    assert batch.column("label")[5].as_py() == "zstd/test-xor>json"
    assert (batch.column("status")[5].as_py(), batch.column("n")[5].as_py()) == ("PAID", 3)
    assert_same("columns: one lacked value", compare(values, 4 << 20))
