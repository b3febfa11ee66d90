"""The value engine's invariant (cqlsh_ext.payload.engine): a page of one column's values decoded
together gives, value by value, what full detection (unwrap) gives alone: label and text, kind,
tree, bytes and reason; and so do the page API (read_page: kinds, paths) and STATS' measures
(measure). Checked over mixed pages drawn from the producers' corpora (the fuzzing
seeds, written by the real producer libraries; the codec producers' containers; the order
documents of tools/orders.py), in orders Hypothesis draws, with values corrupted after a
column's chain is remembered, and in adversarial orders: a value that starts like the
remembered chain's values but is another format, earlier in detection order."""

from __future__ import annotations

import json
import sys
from itertools import permutations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP, RULED_OUT_HEADER, DecodeError
from cqlsh_ext.output.display import label_of
from cqlsh_ext.payload.engine import ValueEngine, measure
from cqlsh_ext.payload.pages import ReadRequest
from cqlsh_ext.payload.paths import CUT, MISSING, read_path
from cqlsh_ext.payload.unwrap import unwrap, walk
from cqlsh_ext.payload.view import QUIET_REASONS, RECORD, TEXT, BlobView
from tests.codecs.codec_producers import PRODUCERS, json_doc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from orders import rows as order_rows  # noqa: E402

CORPUS = ROOT / "tests" / "fuzzing" / "corpus"


def _pool() -> list[bytes]:
    seeds = [p.read_bytes() for p in sorted(CORPUS.rglob("*")) if p.is_file()]
    payloads = [json_doc(600, 1), json_doc(3000, 2), b"The quick brown fox jumps over the lazy dog. " * 4,
                *[p.read_bytes() for p in sorted((CORPUS / "payload").rglob("*")) if p.is_file()][:12]]
    contained = [make(p) for _name, make, _label, _codec, _auto in PRODUCERS for p in payloads[:4]]
    orders = [row["data"] for row, _doc in order_rows(60, seed=5)]
    values = seeds + contained + orders
    return [v for i, v in enumerate(values) if v not in values[:i]]


POOL = _pool()
CAPS = [DEFAULT_CAP, 64 << 10, 300]


def shown(view: BlobView) -> tuple[Any, ...]:
    """Everything a user or a query can read of a view: the label (chain, cut), the text, the
    kind, the tree, the bytes, the reason and the error's account."""
    return (view.kind, view.label, label_of(view) if view.layers else None, view.text, view.clean, view.data,
            view.reason, None if view.error is None else (type(view.error).__name__, str(view.error)),
            view.payload_format, repr(view.tree), view.object_class, view.stream_format,
            view.tree_input_size, view.payload_size, view.measured_size,
            [(layer.label, layer.input_size, layer.output_size, layer.truncated, layer.declared_size,
              layer.reading) for layer in view.layers])


def check_page(values: list[bytes], cap: int = DEFAULT_CAP, engine: ValueEngine | None = None) -> None:
    engine = engine or ValueEngine("auto", cap)
    got = engine.views(values)
    for value, view in zip(values, got, strict=True):
        assert shown(view) == shown(unwrap(value, "auto", cap)), value[:40]


def corrupt(value: bytes, at: int, byte: int) -> bytes:
    if not value:
        return value
    at %= len(value)
    return value[:at] + bytes([byte]) + value[at + 1:]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=30), st.sampled_from(CAPS))
def test_a_mixed_page_decodes_as_each_value_alone(values: list[bytes], cap: int) -> None:
    check_page(values, cap)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255),
                          st.sampled_from(["flip", "cut", "tail"])), min_size=1, max_size=8))
def test_values_that_break_a_remembered_chain_are_detected_in_full(
        values: list[bytes], changes: list[tuple[int, int, str]]) -> None:
    # The column remembers the chains of the intact values first; then each is changed: a byte
    # replaced (a corrupt block, a checksum that no longer holds), the value cut short, or bytes
    # added after it (trailing data a container must refuse).
    engine = ValueEngine()
    engine.views(values)
    changed = []
    for value, (at, byte, how) in zip(values, changes, strict=False):
        if how == "flip":
            changed.append(corrupt(value, at, byte))
        elif how == "cut":
            changed.append(value[: at % max(len(value), 1)])
        else:
            changed.append(value + bytes([byte]) * (1 + at % 7))
    check_page(changed + values, engine=engine)
    check_contents(changed + values, engine=engine)
    check_measures(changed + values, engine=engine)


def _by_lead() -> list[tuple[bytes, bytes]]:
    """Pairs of pool values with the same first byte whose outer containers differ (or one of
    them has none): each is what a column whose chain the other set would meet."""
    def outer(value: bytes) -> str:
        found = registry.decode_auto(value) if len(value) >= registry.MIN_AUTO_LENGTH else None
        return found[0].label if found else ""

    pairs = []
    leads: dict[int, list[bytes]] = {}
    for value in POOL:
        try:
            label = outer(value)
        except Exception:
            label = "error"
        for other in leads.get(value[0] if value else -1, []):
            if outer_of.get(other) != label:
                pairs.append((other, value))
        outer_of[value] = label
        if value:
            leads.setdefault(value[0], []).append(value)
    return pairs


outer_of: dict[bytes, str] = {}
PAIRS = _by_lead()


def test_the_pool_has_adversarial_pairs() -> None:
    # What the next test walks through: values sharing a first byte with another container.
    assert len(PAIRS) >= 20


@pytest.mark.parametrize("first, second", PAIRS[:400])
def test_a_value_like_the_remembered_chain_but_another_format(first: bytes, second: bytes) -> None:
    for page in permutations((first, second, first, second)):
        check_page(list(page))


def _snappy_with_lead(lead: int) -> bytes:
    """A real snappy block whose first byte (its length's varint) is `lead` (< 0x80)."""
    import snappy

    return bytes(snappy.compress(bytes(range(97, 97 + 26)) * (lead // 26) + b"a" * (lead % 26)))


@pytest.mark.parametrize("lead", sorted({fmt.magic[0] for fmt in registry.all_containers()
                                         if fmt.magic and fmt.magic[0] < 0x80 and fmt.grade in "AB"}))
def test_a_signature_after_a_remembered_signature_less_chain(lead: int) -> None:
    # snappy's first byte is its length: a column of snappy values of that length remembers snappy
    # for a byte that also starts a signature (zstd's, zlib's, LZ4's ...); the signed value that
    # follows is the signed format, as detection says, not snappy.
    signed = [make(json_doc(2000, 3)) for _name, make, _label, _codec, _auto in PRODUCERS]
    snappy_value = _snappy_with_lead(lead)
    assert snappy_value[0] == lead
    check_page([snappy_value, snappy_value, *[v for v in signed if v[:1] == bytes([lead])], snappy_value])


def test_the_engine_remembers_and_uses_a_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not only equal: the remembered chain is what decodes the column's next values (raw snappy
    # blocks of different lengths, so different first bytes), full detection only the first.
    import snappy

    values = [bytes(snappy.compress(json.dumps({"n": i, "pad": "y" * (200 + i)}).encode()))
              for i in range(20)]
    taken = []
    real_known, real_auto = registry.decode_known, registry.decode_auto
    monkeypatch.setattr(registry, "decode_known", lambda *a: taken.append("known") or real_known(*a))
    monkeypatch.setattr(registry, "decode_auto", lambda *a: taken.append("auto") or real_auto(*a))
    views = ValueEngine().views(values)
    assert taken == ["auto"] + ["known"] * 19
    monkeypatch.undo()
    assert [shown(v) for v in views] == [shown(unwrap(v, "auto", DEFAULT_CAP)) for v in values]


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.one_of(st.binary(min_size=6, max_size=80), st.sampled_from(POOL)),
       st.sampled_from(registry.all_containers()))
def test_decode_known_is_detection_or_nothing(data: bytes, fmt: Any) -> None:
    found = registry.decode_known(fmt, data)
    if found is not None:
        assert found == registry.decode_auto(data)


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(st.binary(min_size=0, max_size=600))
def test_ruled_out_only_what_the_trial_refuses(data: bytes) -> None:
    for fmt in registry.detection_order()["trial"]:
        if fmt.ruled_out(data):
            assert fmt.trial(data, DEFAULT_CAP) is None, fmt


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(st.one_of(st.binary(min_size=0, max_size=600), st.sampled_from(POOL)),
       st.randoms(use_true_random=False))
def test_ruled_out_reads_only_the_header_and_the_length(data: bytes, rnd: Any) -> None:
    # Detection keeps each value's ruled-out formats by its header and length (registry.decode_auto):
    # another value with the same header and length must get the same answer from every format.
    other = data[:RULED_OUT_HEADER] + rnd.randbytes(max(0, len(data) - RULED_OUT_HEADER))
    order = registry.detection_order()
    for fmt in {*order["trial"], *order["trial_zero"]}:
        assert fmt.ruled_out(data) == fmt.ruled_out(other), fmt


def test_detection_with_kept_answers_is_detection_without(monkeypatch: pytest.MonkeyPatch) -> None:
    # The producers' values, then the same again (kept answers taken), against detection with
    # nothing kept: the same container and the same bytes, or the same error.
    def detected(data: bytes) -> Any:
        try:
            found = registry.decode_auto(data)
        except DecodeError as err:
            return "error", str(err)
        return None if found is None else (found[0].label, found[1])

    values = [v for v in POOL if len(v) >= registry.MIN_AUTO_LENGTH]
    kept = [detected(v) for v in values] + [detected(v) for v in values]
    fresh = []
    for value in values * 2:
        monkeypatch.setattr(registry, "_LIVE", {})
        fresh.append(detected(value))
    assert kept == fresh
    assert any(k is None for k in kept) and any(k is not None for k in kept)


#: Paths the page API reads in the test: keys the order documents have, one they lack, deeper ones.
PATHS = (("status",), ("customer", "name"), ("items", 0, "sku"), ("nothere",), ())


def query_reading(view: BlobView) -> tuple[Any, ...]:
    """What a query reads of a view: its kind, whether the cap cut it, its text, and the value at
    each of PATHS (read in the view's tree, or its text for the path of no steps)."""
    if view.cut or view.kind not in (TEXT, RECORD):
        return view.kind, view.cut, view.text if view.kind == TEXT else None, None
    tree = view.tree
    values = []
    for steps in PATHS:
        if not steps:
            values.append(repr(view.text if tree is None and view.kind == TEXT else tree))
        else:
            found = read_path(tree, steps)[0]
            values.append(found if found is MISSING or found is CUT else repr(found))
    return view.kind, False, view.text if view.kind == TEXT else None, tuple(values)


def page_reading(engine: ValueEngine, values: list[bytes]) -> list[tuple[Any, ...]]:
    page = engine.read_page(values, ReadRequest(PATHS, text=True))
    out = []
    for i in range(len(values)):
        if page.columns[0][i] is None and (page.cut[i] or page.kinds[i] not in (TEXT, RECORD)):
            out.append((page.kinds[i], page.cut[i], page.texts[i], None))
            continue
        row = []
        for column in page.columns:
            found = column[i]
            row.append(found if found is MISSING or found is CUT else repr(found))
        out.append((page.kinds[i], page.cut[i], page.texts[i], tuple(row)))
    return out


def check_contents(values: list[bytes], cap: int = DEFAULT_CAP, engine: ValueEngine | None = None,
                   mode: str = "auto") -> None:
    engine = engine or ValueEngine(mode, cap)
    for value, got in zip(values, page_reading(engine, values), strict=True):
        assert got == query_reading(unwrap(value, mode, cap)), value[:40]


def check_measures(values: list[bytes], cap: int = DEFAULT_CAP, engine: ValueEngine | None = None) -> None:
    engine = engine or ValueEngine("auto", cap)
    for value, got in zip(values, engine.measure_many(values), strict=True):
        # What the walk peels, and for a value with no container the kind its reading finds: a
        # full view measures the same; its reading may say more where peeling said nothing or only
        # that it recognised nothing (a stream's object its reader could not read).
        full = measure(unwrap(value, "auto", cap))
        assert full[:4] == got[:4] and (full[4] == got[4] or got[4] in (None, *QUIET_REASONS)), value[:40]
        peeled = measure(walk(value, "auto", cap))
        if peeled[0] in ("compressed", "failed"):
            assert got == peeled, value[:40]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=30), st.sampled_from(CAPS),
       st.sampled_from(["auto", "snappy", "zstd"]))
def test_what_a_query_reads_of_a_mixed_page_is_what_it_reads_of_each_value(values: list[bytes], cap: int,
                                                                           mode: str) -> None:
    check_contents(values, cap, mode=mode)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=30), st.sampled_from(CAPS))
def test_what_stats_counts_of_a_mixed_page_is_what_it_counts_of_each_value(values: list[bytes],
                                                                          cap: int) -> None:
    check_measures(values, cap)


@pytest.mark.parametrize("first, second", PAIRS[:400])
def test_what_a_query_reads_in_adversarial_orders(first: bytes, second: bytes) -> None:
    for page in permutations((first, second, first, second)):
        check_contents(list(page))
        check_measures(list(page))
