"""Every COMPRESSION report fits the terminal, whatever the figures in it: STATS (exact and
sampled), ADVISE, SETTINGS and TRIAL rendered from figures Hypothesis draws (counts up to billions,
sizes up to terabytes, long chains and reasons, noisy latencies), laid out at 80 and 140 columns
by the one fitting function, in Unicode and in ASCII. No line is wider than the terminal."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.common.text import fit
from cqlsh_ext.insight.advise import Advice, ColumnAdvice, recommend
from cqlsh_ext.insight.recompress import Result, Speed
from cqlsh_ext.insight.sampled import SampledStats
from cqlsh_ext.insight.stats import SPEC, ColumnStats, Stats
from cqlsh_ext.insight.table_settings import TableSettings, advise
from cqlsh_ext.insight.trial.report import TrialReport, VariantResult
from cqlsh_ext.insight.view_measures import COMPRESSED, FAILED, STORED
from cqlsh_ext.payload.measures import PlaceMeasures
from cqlsh_ext.payload.view import UNKNOWN as NO_FORMAT
from cqlsh_ext.scanning.capacity import Pricing
from cqlsh_ext.scanning.ring import ring_for
from cqlsh_ext.scanning.sample import SamplePlan

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
WIDTHS = (80, 140)

_size = st.one_of(st.integers(0, 2000), st.integers(0, 10**7), st.integers(0, 10**13))
_count = st.one_of(st.integers(0, 50), st.integers(0, 10**10))
_chain = st.sampled_from(["snappy", "zstd>msgpack", "gzip>java>text", "lz4/frame", "snappy/framed>json",
                          "zstd>gzip>zstd>lz4/block>snappy/xerial>avro", "text"])
_reason = st.text(alphabet="abcdefghijklmnopqrstuvwxyz :()-0123456789", min_size=1, max_size=120)
_pricing = st.builds(Pricing, st.sampled_from(["ONE", "LOCAL_ONE", "LOCAL_QUORUM", "QUORUM"]), st.booleans())


def _fits(lines: list) -> None:
    for width in WIDTHS:
        for unicode in (True, False):
            for line in fit(lines, width, unicode):
                assert len(line) <= width, (width, line)


@st.composite
def stats(draw: st.DrawFn) -> Stats:
    s = Stats("SELECT data FROM ks.t", pricing=draw(_pricing))
    for name in draw(st.lists(st.sampled_from(["data", "col[]", "col[key]", "a_very_long_column_name" * 3]),
                              min_size=1, max_size=3, unique=True)):
        col = s.columns[name] = ColumnStats(name, text=draw(st.booleans()))
        for _ in range(draw(st.integers(1, 12))):
            status = draw(st.sampled_from([COMPRESSED, STORED, NO_FORMAT, FAILED]))
            stored = draw(_size) + (status == COMPRESSED)  # a compressed value holds a byte at least
            page = PlaceMeasures.empty(SPEC)
            page.add((status, draw(_chain) if status in (COMPRESSED, STORED) else "",
                      draw(_size) if status == COMPRESSED else stored, draw(st.booleans()),
                      draw(_reason) if status != COMPRESSED else None), stored, SPEC, col.ratios.exact)
            col.merge_page(page)
        col.values += draw(_count)  # counts as large as a big table's
        col.nulls = draw(_count)
    for _ in range(draw(st.integers(1, 8))):
        s.before.add(draw(_size))
        s.after.add(draw(_size))
    s.rows = draw(_count)
    s.elapsed = draw(st.floats(0, 10**6))
    s.retried = draw(st.dictionaries(_reason, st.integers(1, 10**6), max_size=3))
    s.interrupted = draw(st.booleans())
    return s


@SETTINGS
@given(stats())
def test_stats_fits(s):
    _fits(s.render())


@SETTINGS
@given(stats(), st.integers(2, 40), st.integers(1024, 1 << 24), st.randoms(use_true_random=False))
def test_sampled_stats_fits(s, slices, population, rng):
    sampler = SampledStats(s, ring_for("org.apache.cassandra.dht.Murmur3Partitioner"), population,
                           SamplePlan(), rng.randrange(10**9), "system.size_estimates")
    snapshot = s.snapshot()
    sampler.done = [{k: round(v * rng.uniform(0, 2)) for k, v in snapshot.items()} for _ in range(slices)]
    for side in ("stored", "decompressed"):
        totals = [float(sum(v for k, v in d.items() if k[0] == side)) for d in sampler.done]
        setattr(sampler, f"_{side}", totals)
    sampler.stopped = "interval within +-1 %"
    _fits(sampler.render())


@st.composite
def advice(draw: st.DrawFn) -> Advice:
    columns = []
    for name in draw(st.lists(st.sampled_from(["data", "payload_with_a_long_name_indeed"]), min_size=1,
                              max_size=2, unique=True)):
        n = draw(st.integers(1, 30))
        payload = [draw(_size) for _ in range(n)]
        stored = [draw(_size) for _ in range(n)]
        col = ColumnAdvice(name, n, sum(payload), payload, stored, {draw(_chain): n}, {},
                           pricing=draw(_pricing))
        names = ["snappy", "lz4", "lz4hc 9", "zstd -1", "zstd 3", "zstd 3 + dict", "zstd 19", "gzip 9",
                 "brotli 11"]
        for codec in draw(st.lists(st.sampled_from(names), min_size=1, max_size=9, unique=True)):
            speeds = st.lists(st.floats(0.01, 10**5), min_size=1, max_size=7)
            sizes = [draw(st.integers(1, 10**9)) for _ in range(n)]
            col.results.append(Result(codec, codec.split()[0], sizes, Speed(draw(speeds)),
                                      Speed(draw(speeds)), None, "dict" in codec))
        col.recommended, col.recommendation, col.reasons = recommend(col)
        col.notes = draw(st.lists(_reason, max_size=2))
        columns.append(col)
    return Advice("SELECT data FROM ks.t", columns, draw(_count), draw(st.floats(0, 10**5)))


@SETTINGS
@given(advice())
def test_advise_fits(a):
    _fits(a.render())


@SETTINGS
@given(st.integers(0, 10**9), st.lists(st.integers(0, 10**12), min_size=1, max_size=30), st.booleans(),
       _pricing, st.sampled_from(["LZ4Compressor", "org.apache.cassandra.io.compress.ZstdCompressor", ""]))
def test_settings_fit(rows, sizes, off, pricing, compressor):
    t = TableSettings("a_keyspace_with_a_long_name", "and_a_table_with_one_too",
                      {"class": compressor, "chunk_length_in_kb": "16", "enabled": str(not off).lower()}, {})
    t.sample_rows, t.row_sizes, t.partition_sizes = rows, sizes, sizes
    t.rows_per_partition = [1] * len(sizes)
    t.partitions = len(sizes)
    t.blob_values, t.blob_stored, t.blob_decompressed = rows, sum(sizes), 3 * sum(sizes)
    t.blob_compressed_stored = sum(sizes) // 2
    t.codecs = {"snappy": rows, "zstd>msgpack": 3}
    t.measured = {f"{compressor}, 16 KiB chunks, as stored": 1.44,
                  f"{compressor}, 4 KiB chunks, as stored": 1.2}
    t.estimate = {"partitions": rows, "mean_partition_size": max(sizes)}
    advise(t, pricing)
    _fits(t.render())


@st.composite
def trials(draw: st.DrawFn) -> TrialReport:
    rng = random.Random(draw(st.integers(0, 10**6)))
    rounds = draw(st.integers(1, 10))
    per_round = draw(st.integers(1, 60))
    variants = []
    codecs = st.sampled_from(["stored", "zstd", "lz4", "snappy", "gzip:9>zstd:19", "lz4/block"])
    for name in ["uncompressed", *draw(st.lists(codecs, max_size=5, unique=True))]:
        values = rounds * per_round
        v = VariantResult(name, f"cqlshext_trial_abc123_{name}", values, draw(_size), draw(_size),
                          draw(st.integers(0, 10**9)), draw(st.integers(0, 10**9)))
        scale = draw(st.sampled_from([1, 1000, 10**6, 10**9]))
        for phase in (v.writes, v.reads):
            for r in range(rounds):
                phase.start_round(r)
                for _ in range(per_round):
                    phase.record(max(1, round(scale * rng.lognormvariate(0, 1))))
                phase.add_seconds(rng.uniform(0.001, 10**4))
            phase.timed_out = draw(st.integers(0, 10**6))
            if draw(st.booleans()):
                phase.fail(draw(_reason))
                phase.retry(draw(_reason))
        v.decode_us = draw(st.one_of(st.none(), st.floats(0, 10**7)))
        variants.append(v)
    report = TrialReport("a_keyspace.a_table_with_a_long_name.a_column", "blob", "scratch", 16,
                         draw(st.sampled_from(["ONE", "LOCAL_QUORUM"])), variants, rounds=rounds,
                         warmup_rows=50, keyspaces=draw(st.booleans()), kept=draw(st.booleans()),
                         elapsed=draw(st.floats(0, 10**6)), interrupted=draw(st.booleans()))
    report.sample = {"text": draw(_reason)}
    report.notes = draw(st.lists(_reason, max_size=2))
    report.units_estimate = {"wcu": draw(st.floats(0, 10**12)), "rcu": draw(st.floats(0, 10**12))}
    return report


@SETTINGS
@given(trials())
def test_trial_fits(report):
    _fits(report.render())
