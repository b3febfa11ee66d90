"""Arrow pages (payload.arrow_rows.ArrowRows: a Spark task's batch from the Cassandra connector):
a blob column's cells read by the native core from the batch's buffers (cqlsh_ext_native's
ArrowBinary) give COMPRESSION STATS, a payload query and DESCRIBE PAYLOAD exactly the answers the
same rows give as a list of tuples of bytes, over values the core reads, hands back (bzip2, xz:
the Python engine's), finds corrupt, null or empty, in a slice of a batch at a non-zero offset,
binary and large_binary; buffers that do not hold their cells are refused in one line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import sys
from pathlib import Path
from typing import Any

import pyarrow
import pytest
from cassandra.cqltypes import BytesType, Int32Type, UTF8Type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.describe.description import Description
from cqlsh_ext.insight.stats import Stats
from cqlsh_ext.payload import native
from cqlsh_ext.payload.arrow_rows import ArrowRows
from cqlsh_ext.payload.places import Decoding
from cqlsh_ext.query.answer import Answer
from cqlsh_ext.query.evaluate import Evaluator
from cqlsh_ext.query.grammar import Schema, parse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fuzzing.native_diff import same  # noqa: E402
from fuzzing.page_diff import shown  # noqa: E402

from .test_describe_pages import figures  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")

NAMES = ["k", "note", "data"]
TYPES = [Int32Type, UTF8Type, BytesType]


def _doc(status: str, n: int) -> bytes:
    return f'{{"status": "{status}", "n": {n}, "items": [1, 2]}}'.encode()


#: The blob column: read by the core (gzip, raw JSON), handed back (bzip2, xz), null, empty,
#: corrupt (a gzip header and garbage), plain bytes.
BLOBS = [gzip.compress(_doc("NEW", 3), mtime=0), bz2.compress(_doc("NEW", 5)), None, b"",
         lzma.compress(_doc("PAID", 7)), b"plain bytes", gzip.compress(_doc("PAID", 2), mtime=0),
         _doc("NEW", 11), b"\x1f\x8b\x08\x00" + b"\xff" * 20, None]
NOTES = ["caf\u00e9", None, "", "n", None, "t", "", "z", "c", None]
#: Rows before the slice the tests read (its offset in the batch's buffers).
SKIPPED = 3


def _batch(blobs: list[bytes | None], notes: list[str | None], large: bool = False) -> Any:
    """A batch of SKIPPED filler rows then the rows, sliced to the rows (offset SKIPPED)."""
    blob_type = pyarrow.large_binary() if large else pyarrow.binary()
    filler = [b"\x00skipped"] * SKIPPED
    batch = pyarrow.RecordBatch.from_arrays(
        [pyarrow.array(range(-SKIPPED, len(blobs)), pyarrow.int32()),
         pyarrow.array([None] * SKIPPED + notes, pyarrow.string()),
         pyarrow.array(filler + blobs, blob_type)], names=NAMES)
    sliced = batch.slice(SKIPPED)
    assert sliced.column(2).offset == SKIPPED
    return sliced


def _pair(blobs: list[bytes | None], notes: list[str | None], large: bool = False
          ) -> tuple[ArrowRows, list[tuple[Any, ...]]]:
    """The same rows as an Arrow page and as the driver's tuples of bytes."""
    rows = list(zip(range(len(blobs)), notes, blobs, strict=True))
    return ArrowRows(_batch(blobs, notes, large), [None, None, None]), rows


def _stats(rows: Any) -> dict[str, Any]:
    stats = Stats("SELECT k, note, data FROM t")
    stats.set_columns(NAMES, TYPES)
    stats.add_rows(rows)
    stats.finish()
    return {k: v for k, v in stats.to_json().items() if k not in ("elapsed_s", "rows_per_s")}


def _described(rows: Any) -> dict[str, Any]:
    description = Description("SELECT k, note, data FROM t", "data", Decoding(cap=4 << 20))
    description.set_columns(NAMES, TYPES)
    description.add_rows(rows)
    return {"figures": figures(description), "nulls": description.nulls, "read": description.read}


@pytest.mark.parametrize("large", [False, True], ids=["binary", "large_binary"])
def test_stats_and_describe_of_an_arrow_page_equal_those_of_its_rows(large: bool) -> None:
    page, rows = _pair(BLOBS, NOTES, large)
    before = native.arrow_cells()
    assert _stats(page) == _stats(rows)
    assert native.arrow_cells() - before == len(BLOBS)  # the core read the blob column from Arrow
    report = _stats(page)
    chains = {entry["chain"] for column in report["columns"] for entry in column["by_chain"]}
    assert any(c.startswith("bzip2") for c in chains) and any(c.startswith("xz") for c in chains)
    before = native.arrow_cells()
    assert _described(page) == _described(rows)
    assert native.arrow_cells() - before == len(BLOBS)


QUERIES = [
    "SELECT k, note, data.status FROM t WHERE data.status = 'NEW' ALLOW FILTERING",
    "SELECT * FROM t WHERE data.n > 1 ALLOW FILTERING",
    "SELECT data.status, count(*), sum(data.n), min(data.n) FROM t GROUP BY data.status ALLOW FILTERING",
    "SELECT k, note FROM t WHERE data IS UNDECODABLE ALLOW FILTERING",
    "SELECT k, note.a, data.status FROM t WHERE data.n > 1 ALLOW FILTERING",
]


@pytest.mark.parametrize("statement", QUERIES,
                         ids=["filter", "star", "group-by", "undecodable", "a-text-column's-path"])
def test_a_query_of_an_arrow_page_equals_the_query_of_its_rows(statement: str) -> None:
    """The answer and counts, the blobs handed back among the rows (a value the Python engine
    reads: its Python value, bytes, evaluated in the room)."""
    plan = parse(statement, Schema({"k": "int", "note": "text", "data": "blob"}, ["k"]))
    assert plan is not None
    page, rows = _pair(BLOBS, NOTES)
    results = []
    before = native.arrow_cells()
    for source in (page, rows):
        evaluator, answer = Evaluator(plan, Decoding()), Answer(plan)
        got = answer.add_page(evaluator, NAMES, source) + answer.final()
        assert evaluator.on_core
        c = answer.counts
        results.append(([tuple(shown(v) if hasattr(v, "layers") else v for v in row) for row in got],
                        (c.read, c.matched, c.undecodable, c.cut, dict(c.kinds))))
    if "note." not in statement:  # (a text column's path: the core refuses the page, Python reads it)
        assert native.arrow_cells() - before == len(BLOBS)
    assert same(results[0][0], results[1][0]), results
    assert results[0][1] == results[1][1]
    assert results[0][0] and results[0][1][0] == len(BLOBS)


VALUES = st.one_of(
    st.none(), st.binary(max_size=12),
    st.builds(lambda n: gzip.compress(_doc("NEW", n), mtime=0), st.integers(0, 9)),
    st.builds(lambda n: bz2.compress(_doc("PAID", n)), st.integers(0, 9)),
    st.builds(lambda n: _doc("NEW", n), st.integers(0, 9)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blobs=st.lists(VALUES, min_size=1, max_size=12))
def test_any_arrow_page_measures_and_describes_as_its_rows(blobs: list[bytes | None]) -> None:
    notes = [None] * len(blobs)
    page, rows = _pair(blobs, notes)
    assert _stats(page) == _stats(rows)
    assert _described(page) == _described(rows)


def _mutated(offsets: list[int], data: bytes = b"abcd", large: bool = False) -> Any:
    """A batch of a binary array whose offsets are rewritten after pyarrow checked them (its
    buffers are shared with a bytearray): what a careless producer's buffers may hold."""
    fmt = "q" if large else "i"
    held = bytearray(struct.pack(f"<{len(offsets)}{fmt}", *range(len(offsets))))
    kind = pyarrow.large_binary() if large else pyarrow.binary()
    array = pyarrow.Array.from_buffers(kind, len(offsets) - 1,
                                       [None, pyarrow.py_buffer(held), pyarrow.py_buffer(data)])
    batch = pyarrow.RecordBatch.from_arrays([array], names=["data"])
    held[:] = struct.pack(f"<{len(offsets)}{fmt}", *offsets)
    return batch


@pytest.mark.parametrize(("offsets", "large", "message"), [
    ([0, 2, 9], False, "offset 2 (9) is past the data's 4 bytes"),
    ([0, 2, 9], True, "offset 2 (9) is past the data's 4 bytes"),
    ([0, 3, 1], False, "offset 2 (1) is below offset 1 (3)"),
    ([-1, 3, 4], False, "offset 0 is negative (-1)"),
], ids=["past-data", "past-data-large", "decreasing", "negative"])
def test_malformed_buffers_are_refused_in_one_line(offsets: list[int], large: bool, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        native.arrow_binary(ArrowRows(_mutated(offsets, large=large), [None]), 0)
    assert str(refused.value) == f"a malformed Arrow binary array: {message}"


def test_buffers_spoilt_after_they_were_checked_are_refused_by_the_call() -> None:
    """The cells are checked again as each call reads them: a one-line ValueError, never a panic."""
    from cqlsh_ext.describe.sketch import EXACT, LONG_TEXT, P
    from cqlsh_ext.describe.structure import LONG_KEY, MAX_PATHS
    from cqlsh_ext.payload_select.keys import MAX_DEPTH, MAX_VISITS

    held = bytearray(struct.pack("<3i", 0, 2, 4))
    array = pyarrow.Array.from_buffers(pyarrow.binary(), 2,
                                       [None, pyarrow.py_buffer(held), pyarrow.py_buffer(b"abcd")])
    binary = native.arrow_binary(ArrowRows(pyarrow.RecordBatch.from_arrays([array], names=["d"]), [None]), 0)
    core = native.module()
    panics = core.panics()  # type: ignore[attr-defined]
    held[:] = struct.pack("<3i", 0, 2, 400)
    request = core.DescribeRequest(binary, cap=1 << 20, max_paths=MAX_PATHS, max_visits=MAX_VISITS,
                                   max_depth=MAX_DEPTH, exact=EXACT, long_text=LONG_TEXT,
                                   long_key=LONG_KEY, p=P)
    with pytest.raises(ValueError) as refused:
        core.describe_page(request)
    assert str(refused.value) == "a malformed Arrow binary array: offset 2 (400) is past the data's 4 bytes"
    assert core.panics() == panics  # type: ignore[attr-defined]


def test_an_array_not_binary_is_no_arrow_column() -> None:
    batch = pyarrow.RecordBatch.from_arrays([pyarrow.array(["text"]), pyarrow.array([b"x"])],
                                            names=["a", "b"])
    page = ArrowRows(batch, [None, None])
    assert native.arrow_binary(page, 0) is None and native.arrow_binary(page, 1) is not None
    assert native.arrow_binary([("text", b"x")], 1) is None
    with pytest.raises(ValueError, match=r"^ArrowBinary: an array of string, not binary or large_binary$"):
        native.module().ArrowBinary(batch.column(0))
