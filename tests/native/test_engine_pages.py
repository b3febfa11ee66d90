"""The engine's page API on the native core against the same engine on Python alone: read_page()
and measure_page() of the same pages, the PageRead compared field by field and value by value (kinds,
cut, rejected, each path's column with exact types, found and missed, texts, trees, views) and
each measure, over the corpora the core's differential uses, with paths, texts, views and needle
tests asked. The counts (values compared, differences) go to the run's summary."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import msgpack
import pytest

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.insight.stats import SPEC as STATS_SPEC
from cqlsh_ext.payload import native
from cqlsh_ext.payload.engine import ValueEngine, measure_rows
from cqlsh_ext.payload.measures import MeasuredPlace
from cqlsh_ext.payload.pages import Lazy, ReadRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import Counts  # noqa: E402
from fuzzing.page_diff import compare_pages, differential  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")

#: Paths of the corpora's records and documents: keys, indexes, the value itself, and misses.
PATHS: list[tuple[str | int, ...]] = [*corpora.PATHS, ()]




def assert_same(name: str, counts: Counts) -> None:
    record(f"pages: {name}", counts)
    assert not counts.differences, (f"{len(counts.differences)} differences:\n"
                                    + "\n".join(counts.differences[:30]))


CAPS = (DEFAULT_CAP, 300, 7)


def test_pages_of_the_fuzzing_seeds() -> None:
    assert_same("fuzzing seeds", differential(corpora.seeds(), CAPS, PATHS))


def test_pages_of_every_producer_over_every_payload() -> None:
    assert_same("producers x payloads", differential(corpora.produced(), (DEFAULT_CAP, 300), PATHS))


def test_pages_of_the_order_table(built_ins_detected: None) -> None:
    values = corpora.orders(600)
    assert_same("order table", differential(values, (DEFAULT_CAP,), PATHS, size=100))
    # The common road is the core's: it answers every value of these pages itself.
    assert native.decode_page(values[:200], DEFAULT_CAP, PATHS).handed_back == []


def test_pages_of_the_demo_data_and_nested_chains() -> None:
    assert_same("demo data, nested chains", differential(corpora.demo() + corpora.nested(), CAPS, PATHS))


def test_pages_of_edge_cases_hostile_and_mutated_values() -> None:
    rng = random.Random(41)
    doc = json.dumps({"status": "PAID", "customer": {"name": "Ada"}, "items": [{"sku": "S1"}]}).encode()
    values = [bytes(make(doc)) for _name, make, label, _codec, _auto in corpora.PRODUCERS
              if label in corpora.NATIVE_LABELS]
    values += [bytes(make(msgpack.packb({"status": "NEW", "customer": {"nom": "x"}})))
               for _name, make, label, _codec, _auto in corpora.PRODUCERS if label in corpora.NATIVE_LABELS]
    edges = corpora.edges(values, rng)
    mutated = [corpora.mutate(v, rng) for v in corpora.orders(200, seed=9) for _ in range(2)]
    values = edges + corpora.hostile() + mutated
    rng.shuffle(values)
    assert_same("edges, hostile, mutated", differential(values, (DEFAULT_CAP, 2000, 64), PATHS))


def test_pages_of_zstd_frames_sound_and_flipped_in_their_first_block() -> None:
    """COMPRESSION STATS sizes a zstd frame unseen where its first literal (codecs.zstd_first,
    zstd_first.rs) says nothing recognisable starts its content: both engines read that literal
    alike, on sound frames (JSON objects and arrays, a frame holding gzip, binary, one byte
    repeated) and on frames with bytes flipped in their headers, literals' section and table."""
    import gzip

    import zstandard

    rng = random.Random(53)
    docs = [json.dumps({"n": i, "status": "PAID", "note": "x" * (i % 300)}).encode() for i in range(40)]
    contents = [*docs, b"[" + b",".join(docs) + b"]", gzip.compress(docs[0], mtime=0), rng.randbytes(700),
                b"\x1f" * 500, bytes(rng.choices(b"ab[{", k=3000))]
    sound = [zstandard.ZstdCompressor(level=level).compress(content)
             for content in contents for level in (1, 3, 19)]
    flipped = []
    for frame in sound * 4:
        changed = bytearray(frame)
        at = rng.randrange(4, min(len(changed), 40))
        changed[at] ^= 1 << rng.randrange(8)
        flipped.append(bytes(changed))
    values = sound + flipped
    rng.shuffle(values)
    assert_same("zstd frames, sound and flipped", differential(values, (DEFAULT_CAP, 300), PATHS))


def test_a_page_with_values_handed_back_before_the_first_hit() -> None:
    """Values the core hands back (a serialization stream, UTF-16 text), rejected ones and misses
    before the first value that has a path: the hits and misses are counted in the page's order."""
    import pickle

    stream = b"\xac\xed\x00\x05t\x00\x05hello"  # a Java serialization stream holding one string
    utf16 = '{"status": "PAID", "customer": {"name": "Ada"}}'.encode("utf-16")
    plain = [json.dumps({"customer": {"nom": f"n{i}", "id": i}}).encode() for i in range(5)]
    had = json.dumps({"status": "PAID", "customer": {"name": "Ada"}}).encode()
    other = json.dumps({"status": "NEW", "customer": {"name": "Bob"}}).encode()
    pages = [
        [plain[0], utf16, plain[1], had, plain[2]],
        [other, plain[3], stream, had, pickle.dumps({"status": "PAID"}), plain[4]],
        [utf16, other, plain[0]],
    ]
    counts = differential([v for page in pages for v in page], CAPS, PATHS, size=5)
    assert counts.compared > 0
    assert native.decode_page([utf16, stream], DEFAULT_CAP).handed_back == [0, 1]
    assert_same("handed back, rejected, misses", counts)


def test_the_comparison_sees_a_difference() -> None:
    """compare_pages is no check that cannot fail: a page with one value changed differs."""
    values = corpora.orders(20)
    engine = ValueEngine("auto", DEFAULT_CAP)
    want = ValueEngine("auto", DEFAULT_CAP)
    want.native = False
    got = engine.read_page(values, ReadRequest(PATHS, text=True))
    expected = want.read_page(values, ReadRequest(PATHS, text=True))
    counts = Counts()
    compare_pages(values, got, expected, counts, "same", PATHS)
    assert counts.differences == []
    got.columns[0][3] = "changed"
    got.kinds[5] = "binary"
    compare_pages(values, got, expected, counts, "changed", PATHS)
    assert len(counts.differences) == 2


def test_lazy_items_are_made_once_and_read_like_a_list() -> None:
    made: list[int] = []
    column = Lazy(4, lambda i: made.append(i) or i * 10)
    assert column[1] == 10 and column[-1] == 30 and column[1] == 10
    assert made == [1, 3]
    assert column == [0, 10, 20, 30] and [0, 10, 20, 30] == column
    assert column[1:3] == [10, 20] and bool(Lazy(0, lambda i: i)) is False


def test_the_core_runs_only_in_plain_auto_mode_and_when_on() -> None:
    import os
    import subprocess

    values = corpora.orders(20)
    for engine in (ValueEngine("snappy", DEFAULT_CAP), ValueEngine("auto", DEFAULT_CAP, spec="snappy")):
        engine.read_page(values, ReadRequest(PATHS))
        assert engine.native is False  # -d CODEC, a column setting: the Python engine alone
    engine = ValueEngine("auto", DEFAULT_CAP)
    measure_rows([(v,) for v in values], [MeasuredPlace(column=0)], [engine], STATS_SPEC)
    assert engine.native is True
    code = ("from cqlsh_ext.payload.engine import ValueEngine\n"
            "from cqlsh_ext.payload.pages import ReadRequest\n"
            "engine = ValueEngine()\n"
            "engine.read_page([b'{\"a\": 1}'], ReadRequest([('a',)]))\nprint(engine.native)")
    for setting, expected in (("0", "False"), ("1", "True")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, native.ENV: setting}).stdout.strip()
        assert out == expected, setting


def test_a_values_answer_depends_on_the_value_only() -> None:
    """Two differences a differential fuzz of the engines found on the Python side: a failed zstd
    frame left the process's decompressor in a state that gave the next failing frame the first
    one's reason; and with views asked under a cap below the default, a view's JSON was parsed
    after the value's budget had been left (under the default node limit). Each value's answer,
    on both roads and in any order, is the value's alone."""
    first = bytes.fromhex("28b52ffd54084100007b2261225120317d")
    second = bytes.fromhex("28b52ffd20084a00007b2261223a20317d")
    alone = [ValueEngine("auto", DEFAULT_CAP).view(v).reason for v in (first, second)]
    assert alone == ["zstd: Data corruption detected", "zstd: Destination buffer is too small"]
    for order in ([first, second], [second, first], [first, second, first, second]):
        engine = ValueEngine("auto", DEFAULT_CAP)
        assert [engine.view(v).reason for v in order] == [alone[0] if v == first else alone[1] for v in order]
    # 1,002 nodes: past the node limit of the cap of 300 bytes (1,000), within the default one
    many = b'{"a":[' + b"1," * 1000 + b'1]}'
    counts = differential([many, many, b'{"a": 1}'], (300,), PATHS, size=3)
    assert_same("one value's answer", counts)
    for views in (True, False):
        python = ValueEngine("auto", 300)
        python.native = False
        page = python.read_page([many], ReadRequest([("a",)], views=views))
        assert page.columns[0] == [None] and page.cut == [True]  # past its budget: cut, not read
