"""COMPRESSION TRIAL's noise, on recorded latencies: a change inside the rounds' spread is no
measurable difference, a variant slowed on purpose is reported slower, and the report says so in
its verdict, its summary lines and its tables."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from cqlsh_ext.common.text import fit
from cqlsh_ext.insight.trial import noise
from cqlsh_ext.insight.trial.report import Phase, TrialReport, VariantResult

ROUNDS, PER_ROUND = 10, 100


def _latencies(rng: random.Random, round_factor: float, slower: float) -> list[int]:
    """One round's latencies (us): log-normal around 2 ms, the round's own conditions
    (`round_factor`: a slow round slows every variant in it) and the variant's (`slower`)."""
    return [round(2000 * round_factor * slower * rng.lognormvariate(0, 0.5)) for _ in range(PER_ROUND)]


def _phases(slower: float, seed: int) -> tuple[Phase, Phase]:
    """(uncompressed, variant) as a trial records them, round by round; rounds differ a lot from
    one another (a compaction, a GC pause), as on a loaded machine."""
    rng = random.Random(seed)
    base, variant = Phase(), Phase()
    for r in range(ROUNDS):
        conditions = rng.choice([0.5, 1.0, 1.0, 3.0])
        for phase, factor in ((base, 1.0), (variant, slower)):
            phase.start_round(r)
            latencies = _latencies(rng, conditions, factor)
            for micros in latencies:
                phase.record(micros)
            phase.add_seconds(sum(latencies) / 1e6 / 16)  # 16 requests in flight
    return base, variant


def test_the_same_latencies_give_no_measurable_difference():
    base, variant = _phases(1.0, seed=1)
    found = variant.against(base)
    for key in ("ops_per_s", "median", "p95", "p99"):
        d = found[key]
        assert d.rounds == ROUNDS and d.low is not None and d.high is not None, key
        assert d.low < 0 < d.high and d.outcome == noise.SAME, (key, d)
    assert found["p99"].text().startswith("no measurable difference (")


@pytest.mark.parametrize("seed", range(5))
def test_a_variant_slowed_on_purpose_is_reported_slower(seed):
    base, variant = _phases(1.5, seed=seed)  # every operation 50 % slower
    found = variant.against(base)
    for key in ("median", "p95", "p99"):
        assert found[key].outcome == noise.HIGHER, (key, found[key])
    assert found["ops_per_s"].outcome == noise.LOWER
    assert found["ops_per_s"].low < 1 / 1.5 - 1 < found["ops_per_s"].high


@pytest.mark.parametrize("conditions", [(1.0,), (0.5, 1.0, 1.0, 3.0)])
def test_the_intervals_hold_the_true_change_95_times_in_100(conditions):
    # 200 trials of a variant 50 % slower, rounds alike or very unlike (a compaction, a GC pause):
    # each percentile's interval holds the true change about 95 % of the time.
    truth, trials = 0.5, 200
    held = dict.fromkeys((50.0, 95.0, 99.0), 0)
    for seed in range(trials):
        rng = random.Random(seed)
        base, variant = [], []
        for _ in range(ROUNDS):
            factor = rng.choice(conditions)
            base.append(_latencies(rng, factor, 1.0))
            variant.append(_latencies(rng, factor, 1.5))
        for pct in held:
            d = noise.latency_difference(variant, base, pct, 1.0, 1.0)
            held[pct] += d.low is not None and d.high is not None and d.low <= truth <= d.high
    assert all(0.9 <= n / trials <= 0.99 for n in held.values()), held


def test_the_interval_is_the_rounds_paired_changes_mean_and_spread():
    base, variant = _phases(1.2, seed=7)
    d = noise.latency_difference(variant.rounds, base.rounds, 50.0, variant.latency_ms()["median"],
                                 base.latency_ms()["median"])
    # Recomputed here: per round, the log of the variant's median over uncompressed's (nearest rank).
    logs = [math.log(sorted(v)[49] / sorted(b)[49]) for v, b in zip(variant.rounds, base.rounds, strict=True)]
    half = noise.t_quantile(ROUNDS - 1) * statistics.stdev(logs) / math.sqrt(ROUNDS)
    mean = statistics.fmean(logs)
    assert d.change == pytest.approx(math.exp(mean) - 1)
    assert d.low == pytest.approx(math.exp(mean - half) - 1)
    assert d.high == pytest.approx(math.exp(mean + half) - 1)
    assert d.overall == pytest.approx(variant.latency_ms()["median"] / base.latency_ms()["median"] - 1)


def test_too_few_rounds_or_operations_give_no_interval():
    base, variant = Phase(), Phase()
    for r in range(2):  # two rounds: a t of 12.7 would call nothing measurable
        for phase in (base, variant):
            phase.start_round(r)
            for micros in range(1000, 1100):
                phase.record(micros * (2 if phase is variant else 1))
    d = variant.against(base)["median"]
    assert d.outcome == noise.UNKNOWN and d.low is None and d.change == pytest.approx(1.0, rel=0.01)
    assert d.text() == "+100 % (no interval)"
    small_base, small = _phases(1.0, seed=3)
    for phase in (small_base, small):
        phase.rounds = [r[:20] for r in phase.rounds]  # 20 operations a round: too few for a p99
    assert noise.latency_difference(small.rounds, small_base.rounds, 99.0, 5.0, 4.0).outcome == noise.UNKNOWN
    assert noise.latency_difference(small.rounds, small_base.rounds, 50.0, 5.0, 4.0).outcome != noise.UNKNOWN


def _variant(name: str, phases: tuple[Phase, Phase], size: int) -> VariantResult:
    n = ROUNDS * PER_ROUND
    v = VariantResult(name, f"t_{name}", n, size * n, 3000 * n, -(-size // 1024) * n, -(-size // 4096) * n)
    v.writes, v.reads = phases
    return v


def test_the_report_opens_with_its_verdict_and_a_summary_line_per_codec():
    base_w, same_w = _phases(1.0, seed=11)
    base_r, slow_r = _phases(1.5, seed=12)
    _, fast_r = _phases(1 / 1.5, seed=13)
    report = TrialReport("ks.t.data", "blob", "scratch", 16, "LOCAL_QUORUM", [
        _variant("uncompressed", (base_w, base_r), 3000),
        _variant("zstd", (same_w, slow_r), 900),
        _variant("lz4", (same_w, fast_r), 1400),
    ], rounds=ROUNDS, warmup_rows=50, keyspaces=True)
    # Keyspaces pays in units: zstd saves the most write units (1 WCU a row against 3), lz4 2.
    lines = list(fit(report.render(), 80))
    text = " ".join(" ".join(lines).split())
    # Read units do not move: 3,000 and 900 bytes are one 4 KB read unit each.
    assert lines[1].startswith("Verdict: zstd saves 67 % of write units and 70 % of storage, the most")
    assert "the most of the variants; latency against uncompressed: reads p50 +" in text
    zstd = next(line for line in lines if line.strip().startswith("zstd ") and "bytes" in line)
    assert "-70 % bytes, -67 % WCU" in zstd
    first = lines.index(next(x for x in lines if x.strip().startswith("lz4 ")))
    lz4 = " ".join(" ".join(lines[first:first + 3]).split())
    assert "reads p50 -" in lz4 and "writes" not in lz4.split(";")[1]  # writes: the same latencies
    doc = report.to_json()
    noisy = doc["variants"][1]["noise"]
    assert noisy["writes"]["p99"]["outcome"] == noise.SAME
    assert noisy["reads"]["p99"]["outcome"] == noise.HIGHER
    said = [lines[1], *(x for x in lines[2:4] if x.startswith("    "))]
    assert doc["trial"]["verdict"] == " ".join(" ".join(said).split())
    assert "p95" not in doc["trial"]["verdict"] and "p99 +" in doc["trial"]["verdict"]  # p50 and p99 only
    assert [len(r["latency_ms"]) for r in doc["variants"][0]["reads"]["rounds"]] == [3] * ROUNDS
    assert max(map(len, lines)) <= 80
    assert max(map(len, fit(report.render(), 140))) <= 140
