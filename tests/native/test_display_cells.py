"""The display's cells from the native core (output.display.BlobDisplay.prepare: one core call a
page, a clean text or a value in no known format shown as it comes) against the Python engine's
views, cell by cell (tests/fuzzing/page_diff.py's compare_cells: the same text, coloured and
plain, the same width, in scripts and in terminal cells of several widths); and the cells of an
answer's blob column the core read (the views of its held reading, payload.held_views: a payload
query's blobs in the terminal), in the table and in EXPAND; over the corpora, the order table and
hostile values."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402
from fuzzing.page_diff import compare_cells  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")


def run(name: str, values: list[bytes], size: int = 50) -> Counts:
    counts = Counts()
    for start in range(0, len(values), size):
        compare_cells(values[start:start + size], counts)
    record(name, counts)
    assert not counts.differences, "\n".join(counts.differences[:20])
    return counts


def test_the_order_table_and_demo_data() -> None:
    counts = run("display cells: orders, demo", corpora.orders(300) + corpora.demo())
    assert counts.handed_back < counts.compared / 2  # most cells are the core's


def test_seeds_producers_and_texts() -> None:
    texts = [b"plain text with a \\ backslash and more words", "ünïcödé wide 表 text here".encode() * 3,
             b'{"a": 1,\n "b": [1, 2]}', b"tab\there and some more words", b"x" * 400]
    run("display cells: seeds, producers, texts", corpora.seeds() + corpora.produced()[::2] + texts)


def test_edges_and_hostile_values() -> None:
    run("display cells: edges, hostile",
        corpora.edges(corpora.orders(12, seed=6), random.Random(2), per_value=3) + corpora.hostile())


def test_a_value_the_core_lacks_is_the_python_engines_cell(lacked_container: object) -> None:
    doc = b'{"status": "PAID", "customer": {"name": "Ada"}, "n": 3}'
    values = corpora.orders(30)
    values.insert(11, b"XOR1" + bytes(b ^ 0x5A for b in doc))
    counts = run("display cells: one value the core lacks", values)
    assert counts.handed_back >= 1
