"""Insight building blocks without a server: the streaming median, CRC-32C, hex input, and that
what STATS counts of a value (the engine's measure) agrees with its view and the display's chain.
(Buckets and capacity units: tests/scanning/test_capacity.py.)"""

from __future__ import annotations

import random
import statistics
import sys
import tracemalloc

import pytest

from cqlsh_ext.codecs.checks import crc32c
from cqlsh_ext.codecs.snappy.framed import snappy_mask
from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import samples
from cqlsh_ext.insight.stats import SPEC, ColumnStats, StreamingMedian
from cqlsh_ext.insight.value_files import as_hex
from cqlsh_ext.payload.engine import ValueEngine, measure
from cqlsh_ext.payload.measures import PlaceMeasures
from cqlsh_ext.payload.unwrap import unwrap
from cqlsh_ext.scanning import capacity

DOC = next(documents(1, seed=7))


def test_streaming_median_exact_then_histogram():
    rng = random.Random(3)
    values = [rng.lognormvariate(0.8, 0.5) for _ in range(StreamingMedian.EXACT_VALUES)]
    m = StreamingMedian()
    for v in values:
        m.add(v)
    assert m.exact and m.median() == statistics.median(values)
    more = [rng.lognormvariate(0.8, 0.5) for _ in range(40_000)]
    for v in more:
        m.add(v)
    assert not m.exact
    true = statistics.median(values + more)
    assert abs(m.median() - true) / true < 0.001  # bins are 0.1 % wide


def test_memory_stays_flat():
    """A column's state does not grow with the number of values (no list of all values)."""
    rng = random.Random(5)
    col = ColumnStats("data")

    def feed(n: int) -> None:
        for _ in range(n):
            stored = rng.randint(100, 5000)
            page = PlaceMeasures.empty(SPEC)
            page.add(("compressed", "snappy", int(stored * rng.uniform(1.2, 3.0)), True, None), stored, SPEC,
                     col.ratios.exact)
            col.merge_page(page)

    feed(20_000)  # past the exact median buffer: from here on only histogram bins are added
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    feed(60_000)  # a list of every value would add ~2 MB here
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    assert grown < 256 * 1024, f"state grew by {grown} bytes over 60,000 values"
    assert col.values == 80_000


def test_crc32c_and_mask():
    # RFC 3720 (iSCSI) check value for "123456789", and the snappy framing format's mask.
    assert crc32c(b"123456789") == 0xE3069283
    c = 0xE3069283
    assert snappy_mask(c) == ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def test_hex_input_as_cqlsh_prints_it():
    assert as_hex(b"0x1f8b08\n") == bytes.fromhex("1f8b08")
    assert as_hex(b"0xdeadbeef (no compression detected)") == bytes.fromhex("deadbeef")
    assert as_hex(b"0x") == b""
    assert as_hex(b"\x1f\x8b\x08") is None
    assert as_hex(b"0xzz") is None
    with pytest.raises(ValueError):
        as_hex(b"0xabc")


def quick(value: bytes, from_headers: bool = False) -> tuple:
    """What STATS counts of one value, by an engine of its own."""
    return ValueEngine().measure(value, from_headers)


def test_what_stats_counts_agrees_with_the_view_and_the_display():
    values = [s.data for s in samples(DOC)] + [b"", b"\x01\x02", b"plain text value", bytes(range(256))]
    for value in values:
        view = unwrap(value, "auto", 4 << 20)
        status, chain, size, exact, reason = quick(value)
        assert (status, chain, size, exact) == measure(view)[:4]
        # The display adds what it read the payload as ([text], [msgpack]); the chain is the same.
        peeled = ">".join(layer.label for layer in view.layers if not layer.reading)
        assert chain == ">".join(view.chain) == peeled


def test_page_path_equals_value_path():
    """Stats.add_rows, a page at a time, gives what each value measured alone and counted one by
    one gives."""
    import cramjam
    from cassandra import cqltypes

    from cqlsh_ext.insight.stats import Stats

    same = [bytes(cramjam.snappy.compress_raw(d.encode())) for d in documents(300, seed=2)]
    mixed = [s.data for s in samples(DOC)] + [None, None] + same[:50]
    pages = [same[:100], same[100:300], mixed, [None], []]
    stats = Stats("q")
    stats.set_columns(["data"], [cqltypes.BytesType])
    reference = ColumnStats("data")
    before, after = capacity.Capacity(), capacity.Capacity()
    for page in pages:
        stats.add_rows([(v,) for v in page])
        for v in page:
            one = PlaceMeasures.empty(SPEC)
            if v is None:
                one.nulls += 1
                before.add(0)
                after.add(0)
            else:
                measured = quick(v)
                one.add(measured, len(v), SPEC, reference.ratios.exact)
                before.add(measured[2])
                after.add(len(v))
            reference.merge_page(one)
    assert stats.columns["data"].to_json() == reference.to_json()
    assert (stats.before, stats.after) == (before, after)
    assert stats.rows == sum(map(len, pages))


@pytest.mark.parametrize("from_headers", [False, True])
def test_the_page_measure_is_the_value_measure_in_any_order(from_headers):
    # A column's engine remembers containers by first byte: over the producers' corpora, mixed and
    # in pairs that share a first byte but not a container, its answers are each value's alone.
    from itertools import permutations

    from tests.payload.test_engine import PAIRS, POOL

    rng = random.Random(4)
    pages = [rng.sample(POOL, min(len(POOL), 40)) for _ in range(20)]
    pages += [list(p) for first, second in PAIRS[:150] for p in permutations((first, second, first))]
    engine = ValueEngine()
    for page in pages:
        assert [engine.measure(v, from_headers) for v in page] == [quick(v, from_headers) for v in page]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_report_text_wraps_evenly_under_its_text():
    from cqlsh_ext.common.text import fit

    # The ragged wrap: a comma far back made a short row ("point read,").
    advice = ("  - a read of one partition (median 1,201 B) decompresses a whole 16 KiB chunk: "
              "chunk_length_in_kb = 4 reads and decompresses about 4x fewer bytes per point read, for a "
              "ratio of 1.23 instead of 1.44 on this sample (and 4x more chunk offsets in memory)")
    out = list(fit([advice], 80))
    assert out == ["  - a read of one partition (median 1,201 B) decompresses a whole 16 KiB chunk:",
                   "    chunk_length_in_kb = 4 reads and decompresses about 4x fewer bytes per point",
                   "    read, for a ratio of 1.23 instead of 1.44 on this sample (and 4x more chunk",
                   "    offsets in memory)"]  # under the bullet's text
    # `key  text`: the text continues under itself.
    row = "  blob bytes               stored 1.2 MiB  decompressed 3.3 MiB, 100 % of stored bytes compressed"
    assert list(fit([row], 80)) == [
        "  blob bytes               stored 1.2 MiB  decompressed 3.3 MiB, 100 % of stored",
        "                           bytes compressed"]
    # Too little room under the gap: four columns in from the start instead.
    assert list(fit(["  Tab" + " " * 60 + "complete: keywords, keyspaces, tables"], 80)) == [
        "  Tab" + " " * 60 + "complete:", "      keywords, keyspaces, tables"]


def test_ctrl_c_while_measuring_keeps_what_was_measured():
    # KeyboardInterrupt is what Ctrl-C raises in the measuring loop (the terminal test in
    # tests/repl/test_progress.py presses it); here it comes with the third codec's step.
    from cqlsh_ext.insight.advise import Advice, AdviseSample

    sample = AdviseSample(40, "auto", 1 << 20)
    for doc in documents(40, seed=3):
        sample.add("data", doc.encode())
        sample.add("other", doc.encode())
    steps: list[tuple[str, float]] = []

    def step(what: str, done: float) -> None:
        steps.append((what, done))
        if len(steps) == 3:
            raise KeyboardInterrupt

    columns = sample.advise(budget=0.01, repetitions=1, step=step)
    first, second = columns
    assert first.interrupted and len(first.results) == 2
    assert steps[0][0].startswith("data: ") and steps[0][1] == 0.0 and "(1 of " in steps[0][0]
    total = int(steps[0][0].split(" of ")[1].rstrip(")"))
    assert f"interrupted while measuring (Ctrl-C): 2 of {total} codecs measured" in first.notes
    assert first.recommendation and first.recommended is not None  # from the two measured
    # The verdict says what it rests on, and claims nothing of the codecs not measured.
    assert first.verdict(False).startswith(f"Verdict, from the 2 of {total} codecs measured: ")
    said = " ".join(first.opening(False) + [str(line) for line in first.render()])
    assert "every codec " not in said and "no codec " not in said and "any codec " not in said
    assert second.interrupted and not second.results
    assert second.recommendation == "not measured: interrupted (Ctrl-C)"
    advice = Advice("SELECT data, other FROM t", columns, 40)
    doc = advice.to_json()
    assert (doc["complete"], doc["interrupted"], doc["interrupted_while"]) == (False, True, "measuring")
    assert any("INTERRUPTED while measuring" in line for line in advice.render())


def test_noisy_speeds_are_said_before_the_figures_and_an_interruption_before_the_verdict():
    from cqlsh_ext.insight.advise import NOISY, Advice, ColumnAdvice
    from cqlsh_ext.insight.recompress import Result, Speed

    def column(runs: list[float]) -> ColumnAdvice:
        col = ColumnAdvice("data", 2, 200, [100, 100], [60, 60], {"gzip": 2}, {})
        col.results = [Result("zstd 3", "zstd", [40, 40], Speed(runs), Speed([500.0, 510.0]))]
        col.recommendation, col.recommended = "zstd 3 saves 33 % of the stored bytes", "zstd 3"
        return col

    quiet = Advice("SELECT data FROM t", [column([100.0, 104.0, 98.0])], 2)
    assert quiet.noise < NOISY and not any("NOISY" in str(line) for line in quiet.render())
    busy = Advice("SELECT data FROM t", [column([20.0, 100.0, 364.0])], 2, interrupted=True)
    lines = [str(line) for line in busy.render()]
    assert round(busy.noise) == 172 and busy.to_json()["speeds_noisy"] is True
    heads = ("  INTERRUPTED", "Verdict", "  NOISY SPEEDS")
    said = [i for i, line in enumerate(lines) if line.startswith(heads)]
    assert [lines[i].split(":")[0].strip() for i in said] == ["INTERRUPTED", "Verdict", "NOISY SPEEDS"], lines
    assert "up to ±172 %" in lines[said[2]]


def test_advise_counts_the_rows_its_report_shows_and_stops_when_asked():
    # A codec measured with a trained dictionary too is a row of its own: a step of its own
    # ('zstd 3 + dict (7 of 15)' where the line said 'of 14' for 15 rows).
    from cqlsh_ext.insight.advise import AdviseSample

    sample = AdviseSample(40, "auto", 1 << 20)
    for doc in documents(40, seed=3):
        sample.add("data", doc.encode())
    steps: list[str] = []
    (column,) = sample.advise(budget=0.01, repetitions=1, step=lambda what, done: steps.append(what))
    assert [what.split(" (")[0] for what in steps] == [r.name for r in column.results]
    assert steps[-1].endswith(f"({len(column.results)} of {len(column.results)})")
    # Ctrl-C's flag (stop) is asked between codecs: once it is set, nothing more is measured.
    asked = iter([False, False, True])
    (stopped,) = sample.advise(budget=0.01, repetitions=1, stop=lambda: next(asked, True))
    assert stopped.interrupted and 0 < len(stopped.results) < len(column.results)
    assert any(note.startswith("interrupted while measuring (Ctrl-C): ") for note in stopped.notes)
