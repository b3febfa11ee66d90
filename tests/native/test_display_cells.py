"""The display's cells from the native core (output.display.BlobDisplay.prepare: one core call a
page, a clean text or a value in no known format shown as it comes) against the Python engine's
views, cell by cell: the same text, coloured and plain, the same width, in scripts (whole) and
in a terminal's cells of several widths; over the corpora, the order table and hostile values."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from cqlsh_ext.output.display import BlobDisplay, CoreRaw, CoreText
from cqlsh_ext.payload.places import ValuePlace
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.upstream import seams

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")
PLACE = ValuePlace("ks", "t", "data")


def _display(width: int | None, python: bool) -> BlobDisplay:
    display = BlobDisplay(DisplaySettings(max_field_width=width), width is not None, False)
    if python:
        display._engine(PLACE).native = False  # the Python engine alone: the reference
    return display


def compare(values: list[bytes], counts: Counts) -> None:
    for width in (None, 8, 40, 200):
        for colored in (False, True):
            colormap = seams.value_colormap(colored)
            core, python = _display(width, False), _display(width, True)
            core.prepare(PLACE, values)
            python.prepare(PLACE, values)
            on_core = sum(isinstance(cell, (CoreText, CoreRaw)) for _value, cell in core._prepared[PLACE])
            counts.handed_back += len(values) - on_core
            for i, value in enumerate(values):
                got, want = core(value, colormap, place=PLACE), python(value, colormap, place=PLACE)
                counts.compared += 1
                if (got.strval, got.coloredval, got.displaywidth) != (want.strval, want.coloredval,
                                                                       want.displaywidth):
                    counts.differences.append(f"width {width}, colored {colored}, value {i} "
                                              f"({value[:12].hex()}): {got.strval!r:.160} != {want.strval!r:.160}")


def run(name: str, values: list[bytes], size: int = 50) -> Counts:
    counts = Counts()
    for start in range(0, len(values), size):
        compare(values[start:start + size], counts)
    record(name, counts)
    assert not counts.differences, "\n".join(counts.differences[:20])
    return counts


def test_the_order_table_and_demo_data() -> None:
    counts = run("display cells: orders, demo", corpora.orders(300) + corpora.demo())
    assert counts.handed_back < counts.compared  # most cells are the core's


def test_seeds_producers_and_texts() -> None:
    texts = [b"plain text with a \\ backslash and more words", "ünïcödé wide 表 text here".encode() * 3,
             b'{"a": 1,\n "b": [1, 2]}', b"tab\there and some more words", b"x" * 400]
    run("display cells: seeds, producers, texts", corpora.seeds() + corpora.produced()[::2] + texts)


def test_edges_and_hostile_values() -> None:
    run("display cells: edges, hostile",
        corpora.edges(corpora.orders(12, seed=6), random.Random(2), per_value=3) + corpora.hostile())
