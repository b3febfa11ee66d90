"""The native core answers every value it does not hand back exactly as the Python engine does
(tests/fuzzing/native_diff.py compares kind, label, sizes, cut, text, tree with exact types, path
values, hits and deepest misses): over the producers' corpora, edge cases per container, nested
chains, hostile values, generated JSON, MessagePack, CBOR and texts, and mutated values. Each
test counts the values compared, handed back and different (0); the totals are printed at the
end of the run."""

from __future__ import annotations

import json
import math
import random
import string
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cbor2
import msgpack
import pytest
import snappy
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
from fuzzing.native_diff import CAPS, Counts, both, check, compare  # noqa: E402

from .conftest import record  # noqa: E402

pytestmark = pytest.mark.usefixtures("native_core")
DEFAULT_CAP = CAPS[0]


def assert_same(name: str, counts: Counts) -> None:
    record(name, counts)
    assert not counts.differences, (f"{len(counts.differences)} differences:\n"
                                    + "\n".join(counts.differences[:30]))


def pages(values: list[bytes], size: int = 64) -> list[list[bytes]]:
    return [values[i:i + size] for i in range(0, len(values), size)]


def run(values: list[bytes], caps: tuple[int, ...] = CAPS,
        paths: list[tuple[str | int, ...]] | None = None) -> Counts:
    total = Counts()
    for page in pages(values):
        total.add(check(page, caps, corpora.PATHS if paths is None else paths))
    return total


def test_the_fuzzing_seeds() -> None:
    assert_same("fuzzing seeds", run(corpora.seeds()))


def test_every_producer_over_every_payload() -> None:
    assert_same("producers x payloads", run(corpora.produced(), (DEFAULT_CAP, 64 << 10, 300, 7)))


def test_the_order_table(built_ins_detected: None) -> None:
    values = corpora.orders(1200)
    counts = run(values, (DEFAULT_CAP, 300))
    assert_same("order table", counts)
    # The common road is the core's: every order document is answered (its random values too).
    page = compare(values[:400], DEFAULT_CAP, corpora.PATHS)
    assert page.handed_back == 0


def test_the_demo_data() -> None:
    assert_same("demo data", run(corpora.demo(), (DEFAULT_CAP, 1000, 40)))


def test_nested_chains() -> None:
    assert_same("nested chains", run(corpora.nested()))


def test_edge_cases_of_each_container() -> None:
    rng = random.Random(29)
    doc = json.dumps({"status": "PAID", "customer": {"name": "Ada"}, "items": [{"sku": "S1"}],
                      "note": "x" * 300}).encode()
    values = [bytes(make(doc)) for _name, make, label, _codec, _auto in corpora.PRODUCERS
              if label in corpora.NATIVE_LABELS]
    values += [bytes(make(msgpack.packb({"status": "NEW", "n": list(range(40))})))
               for _name, make, label, _codec, _auto in corpora.PRODUCERS if label in corpora.NATIVE_LABELS]
    assert_same("container edge cases", run(corpora.edges(values, rng), (DEFAULT_CAP, 2000, 300, 64, 7)))


def test_empty_short_and_text_values() -> None:
    values = [b"", b"a", b"\x00", b"{}", b"[1]", b"abcde", b"\xd9\xd9\xf7\x01", b"\xd9\xd9\xf7\x61a",
              b"\x80\x02K\x01.", b"\x05\x00\x00\x00\x00", b"hello world", b"  {\"a\": 1}  ", b"\t[1,2]\n",
              b"\xef\xbb\xbf{\"a\": 1}", ("é" * 20).encode(), ("é" * 16).encode(), b"\xff\xfeh\x00i\x00" * 4,
              b"a\x00" * 12, b"text with\ttab and\nnew line", b"\x1b[31mred\x1b[0m and more",
              b"\xc2\x85" * 20,
              b"x" * 9, b"x" * 10, b"\x7f" * 12, b"ok \x01 " + b"y" * 200]
    assert_same("empty, short and text values", run(values))


def test_hostile_values() -> None:
    assert_same("hostile values", run(corpora.hostile(), (DEFAULT_CAP, 1 << 20)))


# ------------------------------------------------------------------------------ generated values
# Trees come from a seeded generator (Hypothesis' recursive dictionaries with colliding keys spend
# most of their time rejecting draws); Hypothesis draws the seeds, the caps and the variants.

_WORDS = ["a", "b", "id", "status", "näme", "ключ", "键", "😀", "", " ", "tab\t", "nl\n", "\x85", "\u00a0",
          "x" * 40]


def _scalar(rng: random.Random, keys: bool = False) -> object:
    kind = rng.randrange(8 if not keys else 6)
    if kind == 0:
        return rng.choice(_WORDS)
    if kind == 1:
        return rng.choice([0, 1, -1, 2**31, 2**63 - 1, 2**63, 2**64 - 1, -(2**63), -(2**64),
                           rng.randrange(-999, 999)])
    if kind == 2:
        return rng.choice([True, False])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1.0, 0.5, 1e300, -2.5e-308, float("inf"), float("nan"), rng.random()])
    if kind == 4:
        return None
    if kind == 5:
        return "".join(rng.choice("abcXYZ019 -_.") for _ in range(rng.randrange(12)))
    if kind == 6:
        return rng.randbytes(rng.randrange(6))
    return 2**70 + rng.randrange(1000)


def _tree(rng: random.Random, depth: int = 0, *, string_keys: bool = False) -> object:
    if depth > 3 or rng.random() < 0.35:
        return _scalar(rng)
    if rng.random() < 0.5:
        return [_tree(rng, depth + 1, string_keys=string_keys) for _ in range(rng.randrange(5))]
    out: dict[object, object] = {}
    for _ in range(rng.randrange(6)):
        key = rng.choice(_WORDS) if string_keys or rng.random() < 0.6 else _scalar(rng, keys=True)
        out[key] = _tree(rng, depth + 1, string_keys=string_keys)
    return out


_JSON_EDITS = ["-0", "1E400", "-1e-400", "12345678901234567890123", "-98765432109876543210", "1.5e+3", "01",
               "1.",
               "-", "NaN", "-Infinity", "Infinity", "\"\\ud800\"", "\"\\ud83d\\ude00\"", "\"\\udc00\"",
               "\"\\u00e9\\n\\t\\/\"", "\"a\x01\"", "true ", "nul", "1e5", "[]", "{}", "\"\\x\"", "1" * 4400]


def json_page(rng: random.Random) -> list[bytes]:
    values = []
    for _ in range(rng.randint(1, 8)):
        tree = _tree(rng, string_keys=True)
        if isinstance(tree, dict) or rng.random() < 0.5:
            tree = {"a": tree, "b": {"c": rng.random()}}
        try:
            text = json.dumps(tree, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]),
                              default=lambda b: b.hex())
        except (TypeError, ValueError):
            continue
        edit = rng.randrange(10)
        if edit == 0:
            text = "[" + rng.choice(_JSON_EDITS) + "]"
        elif edit == 1:
            text = '{"a": 1, "a": 2, "b": {"c": 3, "c": [4]}}'
        elif edit == 2:
            depth = rng.choice([250, 255, 256, 257, 300])
            text = "[" * depth + "]" * depth
        elif edit == 3:
            text += rng.choice([" ", "\n", "x", ",", "]", "\t\r"])
        elif edit == 4:
            text = rng.choice([" ", "\n\t", "\u00a0", "\ufeff"]) + text
        data = text.encode("utf-8", "surrogatepass")
        values.append(bytes(snappy.compress(data)) if rng.random() < 0.4 else data)
    return values


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False), st.sampled_from(CAPS[:4]))
def test_generated_json(rnd: random.Random, cap: int) -> None:
    paths: list[tuple[str | int, ...]] = [("a",), (0,), ("b", "c"), ("a", 0), ("a", -1), ()]
    assert_same("generated JSON", both(json_page(rnd), cap, paths))


def record_page(rng: random.Random) -> list[bytes]:
    values = []
    for _ in range(rng.randint(1, 8)):
        tree = _tree(rng)
        if not isinstance(tree, (dict, list)) or not tree:
            tree = [tree, "x", "y"] if rng.random() < 0.5 else {"k": tree, 1: "one"}
        how = rng.choice(["msgpack", "cbor", "cbor", "cbor-described"])
        try:
            data = msgpack.packb(tree) if how == "msgpack" else cbor2.dumps(tree)
        except (TypeError, ValueError, OverflowError, cbor2.CBOREncodeError):
            continue
        if how == "cbor-described":
            data = b"\xd9\xd9\xf7" + data
        if rng.random() < 0.3:
            data = zstandard.ZstdCompressor().compress(data)
        values.append(bytes(data))
    return values or [b"\x90"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False), st.sampled_from(CAPS[:3]))
def test_generated_msgpack_and_cbor(rnd: random.Random, cap: int) -> None:
    paths: list[tuple[str | int, ...]] = [(0,), (1,), ("a",), (0, 0), ("k",), ("status", 0)]
    assert_same("generated MessagePack and CBOR", both(record_page(rnd), cap, paths))


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    alphabet = st.sampled_from(["a", " ", "\t", "\n", "\r", "\x00", "\x01", "\x1f", "\x7f", "\x85", "\xa0",
                                "é", "€", "😀", "\u2028", "\ufeff", "{", "[", "\"", ":", ","])
    text = draw(st.text(alphabet, max_size=60)) + draw(st.text(string.ascii_letters, max_size=200))
    data = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["stored", "snappy", "zstd", "cut"]))
    if how == "snappy":
        return bytes(snappy.compress(data))
    if how == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    if how == "cut":
        return data[:draw(st.integers(0, max(len(data), 1)))]
    return data


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts(), min_size=1, max_size=8), st.sampled_from([DEFAULT_CAP, 40, 33, 32, 31, 11, 10, 9]))
def test_generated_texts(values: list[bytes], cap: int) -> None:
    assert_same("generated texts", both(values, cap, [("a",), ()]))


_POOL = corpora.seeds() + corpora.produced(native_only=True)[::3] + corpora.orders(60, seed=9)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_POOL), min_size=1, max_size=12), st.randoms(use_true_random=False),
       st.sampled_from(CAPS))
def test_mutated_values(values: list[bytes], rnd: random.Random, cap: int) -> None:
    mutated = [corpora.mutate(v, rnd) for v in values]
    assert_same("mutated values", both(mutated + values, cap, corpora.PATHS))


def test_paths_and_their_deepest_misses() -> None:
    docs = [{"a": {"b": {"c": 1}}}, {"a": {"b": 2}}, {"a": [1, 2]}, {"x": {f"k{i}": i for i in range(300)}},
            {"a": {"b": {"d": 1, "e": 2}}}, [{"a": 1}], "plain", {"a": {"b": {"c": None}}}, {"a": 1.5}]
    values = [json.dumps(d).encode() if not isinstance(d, str) else d.encode() * 5 for d in docs]
    values.append(msgpack.packb({1: "one", 2: {"c": 3}, "a": {"b": {}}}))
    paths: list[tuple[str | int, ...]] = [("a", "b", "c"), ("a", "b", "z"), ("x", "k5"), ("x", "nope"),
                                          ("a", 1), ("a", -1), ("a", 5), (2, "c"), (1,), ("zz", "yy")]
    total = Counts()
    for start in range(len(values)):  # the page order matters to the misses noted
        order = values[start:] + values[:start]
        total.add(both(order, DEFAULT_CAP, paths))
    assert_same("paths and misses", total)


@pytest.mark.sweep
def test_a_long_differential_sweep() -> None:
    """Many more mutated values (left out of bin/test --fast: a few minutes)."""
    rng = random.Random(97)
    pool = corpora.seeds() + corpora.produced() + corpora.orders(400) + corpora.nested()
    total = Counts()
    for _ in range(400):
        page = [corpora.mutate(rng.choice(pool), rng) for _ in range(32)]
        total.add(both(page, rng.choice(CAPS), corpora.PATHS))
    assert_same("long sweep (mutated)", total)


def test_math_is_exact_for_floats() -> None:
    # Floats come back bit for bit as Python reads them: correctly rounded, signed zero, inf.
    values = [json.dumps([x]).encode() for x in (0.1, -0.0, 1e308, 5e-324, 2.2250738585072014e-308,
                                                   123456789.123456789, math.pi)]
    values.append(b"[1.7976931348623159e308, 4.9406564584124654e-324, 0.30000000000000004]")
    assert_same("floats", both(values, DEFAULT_CAP, [(0,)]))


def test_the_comparison_sees_each_kind_of_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    # The comparison itself: a core answering one field wrong is caught, whichever field.
    from cqlsh_ext.payload import native

    values = [json.dumps({"a": [1, {"b": 2.0}]}).encode(),
              bytes(snappy.compress(b"plain text, not json " * 3))]
    real = native.decode_page

    def answered(page: Any, **changes: Any) -> Any:
        """The core's answer with some of its fields changed (the answer itself is read-only)."""
        fields = ("kinds", "labels", "stored", "decoded", "cut", "texts", "trees", "paths", "handed_back")
        return SimpleNamespace(**{**{name: getattr(page, name) for name in fields}, **changes})

    for field, wrong in [("labels", ["text", "snappy>text"]), ("kinds", b"\x00\x02"),
                         ("decoded", [0, 63]), ("texts", ['{"a": [1, {"b": 2}]}', None])]:
        monkeypatch.setattr(native, "decode_page",
                            lambda *a, _f=field, _w=wrong, **k: answered(real(*a, **k), **{_f: _w}))
        assert compare(values, DEFAULT_CAP, [("a",)]).differences, field
    # a tree of the right values but another type (1.0 for 1, a tuple for a list) differs too
    for tree in ({"a": [1.0, {"b": 2.0}]}, {"a": (1, {"b": 2.0})}, {"a": [1, {"b": 2}]}):
        monkeypatch.setattr(native, "decode_page", lambda *a, _t=tree, **k: answered(
            real(*a, **k), trees=[_t, None]))
        assert compare(values, DEFAULT_CAP).differences, tree


def test_concatenated_members_frames_and_budgets() -> None:
    import gzip
    import struct
    import zlib

    import lz4.frame

    doc = json.dumps({"status": "NEW", "n": 3, "tags": ["a"] * 20}).encode()
    skippable = struct.pack("<II", 0x184D2A53, 4) + b"meta"
    zstd = zstandard.ZstdCompressor().compress
    zstd_nosize = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True).compress
    values = [
        gzip.compress(doc) + gzip.compress(doc), gzip.compress(doc) + b"\x00" * 512,
        gzip.compress(doc) + b"trailing", gzip.compress(doc) + gzip.compress(doc)[:-3], zstd(doc) + zstd(doc),
        skippable + zstd(doc) + skippable,
        skippable, skippable + skippable, zstd(doc) + b"\x00", zstd_nosize(doc * 50) + zstd(doc),
        lz4.frame.compress(doc) + lz4.frame.compress(doc), skippable + lz4.frame.compress(doc),
        lz4.frame.compress(doc) + b"\x02\x21\x4c\x18" + struct.pack("<I", 3) + b"\x20ab",
        zlib.compress(doc) + b"extra", zlib.compress(doc, 9)[:-1],
        # JSON past the node budget: more values than nodes are not parsed (shown as text)
        json.dumps(list(range(3000))).encode(), json.dumps([[1]] * 1200).encode(),
        json.dumps({"a": [0] * 1500}).encode(),
        msgpack.packb(list(range(2000))), cbor2.dumps(list(range(2000))),
    ]
    values += [zstd(v) for v in values[-5:]]
    caps = (DEFAULT_CAP, 64 << 10, len(doc), len(doc) + 1, 2 * len(doc), 2 * len(doc) - 1, 300, 41)
    assert_same("concatenations and budgets", run(values, caps))


def test_json_paths_read_without_building_the_rest() -> None:
    # The core reads a JSON text's paths as it validates it, building only the values found:
    # duplicate keys (the last value, at the first key's place), escaped keys, negative indexes,
    # paths through scalars and lists, the text itself, and a value it cannot build elsewhere.
    values = [b'{"a": {"b": 1}, "a": {"c": 2}, "z": 0}', b'{"st\\u0061tus": "x", "status": "y", "q": []}',
              b'{"a": [10, {"b": [1, 2]}, 30], "k": "\\ud800 lone, not read"}',
              b'[{"a": 1}, {"a": 2}, "s"]',
              b'{"a": 1, "a": {"b": {"c": "deep"}}, "b": 2, "a": {"b": {"c": "last"}}}',
              json.dumps({f"k{i}": i for i in range(250)} | {"k3": "dup"}).encode(),
              b'  {"a": {"b": "\\u00e9t\\u00e9"}, "n": -0, "f": 1E400}  ',
              b'{"a": null, "b": {"c": [[], {}]}}',
              b'[1, 2, 3] and then not JSON', b'"a JSON string is no container"']
    paths: list[tuple[str | int, ...]] = [("a",), ("a", "b"), ("a", "b", "c"), ("status",), ("a", -1),
                                          ("a", 1, "b", 0), (0, "a"), (-1,), (2,), ("k3",), ("k249",),
                                          ("k9999",), ("a", "c"), ("b", "c", 1), (), ("n",), ("f",), ("k",)]
    total = Counts()
    for start in range(len(values)):
        total.add(both(values[start:] + values[:start], DEFAULT_CAP, paths))
    assert_same("JSON paths without trees", total)
