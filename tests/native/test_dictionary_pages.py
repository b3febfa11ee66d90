"""Values written with dictionaries (python-zstandard's trained dictionary, zlib's zdict, a raw-content
dictionary bare and in RFC 9842 dcz values) on both roads: the core hands every frame naming a
dictionary back, and every dcz value and every frame libzstd refuses (the store is the Python side's), so
each value's answer, its page's answer and STATS' page answer are the Python engine's, with the
dictionaries loaded and without, for whole, cut, mutated and nested values."""

from __future__ import annotations

import gzip
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from dictionary_values import make  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402
from fuzzing.page_diff import differential  # noqa: E402

from cqlsh_ext.codecs import dictionaries  # noqa: E402
from cqlsh_ext.codecs.base import DEFAULT_CAP  # noqa: E402
from cqlsh_ext.payload.engine import ValueEngine  # noqa: E402

from .test_differential import assert_same as assert_same_values  # noqa: E402
from .test_differential import run  # noqa: E402
from .test_engine_pages import PATHS, assert_same  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")


@pytest.fixture(autouse=True)
def empty_store() -> Iterator[None]:
    dictionaries.install(dictionaries.Store())
    yield
    dictionaries.install(dictionaries.Store())


def _values(tmp_path: Path) -> tuple[list[bytes], list[str]]:
    made = make(tmp_path)
    rng = random.Random(50)
    written = made.zstd_values[:40] + made.zlib_values[:40] + made.raw_values[:30] + made.dcz_values[:30]
    values = list(written)
    values += [gzip.compress(v, mtime=0) for v in written[::8]]  # a dictionary frame inside gzip
    values += [v[: rng.randrange(1, len(v))] for v in written[::5]]  # cut short
    values += [v[:40] for v in made.dcz_values[:3]]  # a bare dcz header: a dcz value that fails
    values += [corpora.mutate(v, rng) for v in written for _ in range(2)]
    values += corpora.orders(40)  # values without a dictionary, on the core, between them
    rng.shuffle(values)
    return values, [str(made.zstd_file), str(made.zlib_file), str(made.raw_file)]


def test_dictionary_values_on_both_roads(tmp_path: Path) -> None:
    values, files = _values(tmp_path)
    total = Counts()
    for loaded in (False, True):
        dictionaries.load(files if loaded else [])
        counts = run(values, (DEFAULT_CAP, 1000, 40))
        assert counts.handed_back > 0  # the dictionary frames: read by the Python side
        total.add(counts)
        pages = differential(values, (DEFAULT_CAP, 300), PATHS, size=48)
        assert_same(f"dictionary values' pages (store {'loaded' if loaded else 'empty'})", pages)
    assert_same_values("dictionary values", total)


def test_the_store_decides_what_a_dictionary_value_reads_as(tmp_path: Path) -> None:
    made = make(tmp_path)
    for road in (True, False):
        engine = ValueEngine("auto", DEFAULT_CAP)
        engine.native = road
        dictionaries.load([])
        missing = [engine.view(v).reason for v in (made.zstd_values[0], made.zlib_values[0])]
        assert missing == [f"zstd frame needs dictionary ID {made.zstd_id}",
                           f"zlib stream needs a preset dictionary (DICTID 0x{made.zlib_id:08x})"], road
        dictionaries.load([str(made.zstd_file), str(made.zlib_file)])
        views = [engine.view(v) for v in (made.zstd_values[1], made.zlib_values[1])]
        assert [(v.label, v.reason) for v in views] == [("zstd>json", None), ("zlib>json", None)], road
        dictionaries.load([])
        missing = [engine.view(v).reason for v in (made.raw_values[0], made.dcz_values[0])]
        assert missing[0] == "zstd frame needs a dictionary (none named in the frame)", road
        assert missing[1].startswith("dcz value needs the dictionary with SHA-256 "), road
        dictionaries.load([str(made.raw_file)])
        views = [engine.view(v) for v in (made.raw_values[1], made.dcz_values[1])]
        assert [(v.label, v.text) for v in views] == [("zstd>json", made.docs[1].decode()),
                                                       ("dcz>json", made.docs[1].decode())], road
