"""COMPRESSION TRIAL's parts that need no server: which columns and variants it takes, the values
it peels, the report's arithmetic and layout, the file reading and `cqlsh-ext trial`'s statement."""

from __future__ import annotations

import gzip
import math

import cramjam
import pytest
import zstandard

from cqlsh_ext.codecs.base import CODEC_TRIAL, DEFAULT_CAP
from cqlsh_ext.common.text import fit
from cqlsh_ext.demo.records import documents
from cqlsh_ext.insight.trial import cli as trial_cli
from cqlsh_ext.insight.trial.latency import (
    MAX_TABLE_NAME,
    NOT_DECODABLE,
    OVER_CAP,
    TrialRefused,
    Value,
    build_variants,
    column_kind,
    decode_micros,
    table_name,
    take_value,
    units,
    variant_names,
)
from cqlsh_ext.insight.trial.report import Phase, TrialReport, VariantResult
from cqlsh_ext.insight.value_files import read_values
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.scanning.capacity import Pricing

DOCS = [d.encode() for d in documents(8, seed=3)]


def test_columns_taken_are_blob_and_text():
    assert column_kind("blob") == "blob"
    assert [column_kind(t) for t in ("text", "varchar", "ascii")] == ["text"] * 3
    assert [column_kind(t) for t in ("int", "list<blob>", "frozen<map<text, blob>>", "uuid")] == [None] * 4


def test_default_variants_and_the_baseline():
    assert variant_names(None, True) == ["stored", "uncompressed", *CODEC_TRIAL]
    # Values stored uncompressed: "stored" would measure the uncompressed variant twice.
    assert variant_names(None, False) == ["uncompressed", *CODEC_TRIAL]
    given = ["zstd:1", "LZ4", "zstd:1", "Stored"]
    assert variant_names(given, True) == ["uncompressed", "zstd:1", "LZ4", "stored"]


@pytest.mark.parametrize(("name", "says"), [
    ("lz4hc 9", "ADVISE's names are not chains: a level is written <codec>:N"),
    ("zstd 3 + dict", "a dictionary cannot be written"),
    ("zstd>msgpack", "a variant is a chain of codecs only"),
    ("text", "a variant is a chain of codecs only"),
    ("lz4/legacy", "the legacy frame is not written here"),
    ("zstd:99", "zstd levels are"),
    ("nonsense", "unknown step 'nonsense'"),
])
def test_variants_encode_cannot_write_are_refused(name, says):
    with pytest.raises(TrialRefused) as refused:
        variant_names([name], True)
    assert says in str(refused.value) and f"variant {name!r}" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_values_are_peeled_under_their_last_compression_layer():
    doc = DOCS[0]
    text = take_value(doc.decode(), ValueEngine())
    assert isinstance(text, Value) and text.stored == text.payload == doc and text.layers == ()
    zipped = gzip.compress(doc, mtime=0)
    peeled = take_value(zipped, ValueEngine())
    assert isinstance(peeled, Value) and peeled.stored == zipped and peeled.payload == doc
    assert [f.codec for f in peeled.layers] == ["gzip"]
    twice = zstandard.ZstdCompressor().compress(zipped)  # gzip inside zstd: both layers peeled
    peeled = take_value(twice, ValueEngine())
    assert isinstance(peeled, Value) and peeled.payload == doc
    assert [f.codec for f in peeled.layers] == ["zstd", "gzip"]
    assert take_value(doc, ValueEngine()) == Value(doc, doc)  # a plain blob is its own payload
    assert take_value(zipped[: len(zipped) // 2], ValueEngine()) == NOT_DECODABLE
    assert take_value(zstandard.ZstdCompressor().compress(bytes(5 << 20)), ValueEngine()) == OVER_CAP


def test_variants_are_what_the_producers_write():
    values = [take_value(bytes(cramjam.snappy.compress_raw(d)), ValueEngine()) for d in DOCS]
    assert all(isinstance(v, Value) for v in values)
    stored, plain, zstd1 = build_variants(["stored", "uncompressed", "zstd:1"], values, DEFAULT_CAP)
    assert plain.values == DOCS and plain.layers == [()] * len(DOCS)
    assert stored.values == [bytes(cramjam.snappy.compress_raw(d)) for d in DOCS]
    assert zstd1.values == [zstandard.ZstdCompressor(level=1).compress(d) for d in DOCS]
    assert decode_micros(plain, DEFAULT_CAP) is None
    assert (decode_micros(zstd1, DEFAULT_CAP) or 0) > 0


def test_units_per_value_priced_at_a_consistency():
    sizes = [10, 1024, 1025, 4096, 4097, 9000]
    values = [bytes(n) for n in sizes]
    wcu = sum(max(1, math.ceil(n / 1024)) for n in sizes)
    rcu = sum(max(1, math.ceil(n / 4096)) for n in sizes)
    assert units(values) == (wcu, rcu)  # read units counted at LOCAL_QUORUM, priced by the report
    assert Pricing("LOCAL_QUORUM").reads(rcu) == rcu
    assert Pricing("LOCAL_ONE").reads(rcu) == Pricing("ONE").reads(rcu) == rcu / 2


def test_scratch_table_names():
    taken: set[str] = set()
    names = [table_name("a1b2c3", v, taken) for v in ("uncompressed", "zstd:3", "zstd_3", "lz4/LZ4Block",
                                                     "gzip:9>" * 12 + "zstd")]
    assert names[:4] == ["cqlshext_trial_a1b2c3_uncompressed", "cqlshext_trial_a1b2c3_zstd_3",
                         "cqlshext_trial_a1b2c3_zstd_3_2", "cqlshext_trial_a1b2c3_lz4_lz4block"]
    assert len(set(names)) == 5 and all(len(n) <= MAX_TABLE_NAME and n.isidentifier() for n in names)


def test_values_from_files(tmp_path):
    folder = tmp_path / "values"
    (folder / "deeper").mkdir(parents=True)
    (folder / "b.bin").write_bytes(DOCS[1])
    (folder / "a.hex").write_text("0x" + DOCS[0].hex() + "\n")
    (folder / "deeper" / "c.bin").write_bytes(DOCS[2])
    assert read_values(str(folder), 10) == [DOCS[0], DOCS[1], DOCS[2]]  # name order, hex read
    assert read_values(str(folder), 2) == [DOCS[0], DOCS[1]]
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"0x{d.hex()}\n\n" for d in DOCS[:4]))
    assert read_values(str(lines), 10) == DOCS[:4]
    one = tmp_path / "one.bin"
    one.write_bytes(DOCS[5])
    assert read_values(str(one), 10) == [DOCS[5]]
    mixed = tmp_path / "mixed.txt"
    mixed.write_text(f"0x{DOCS[0].hex()}\nnot a value\n")
    with pytest.raises(ValueError, match=r"mixed.txt: line 2 is not a 0x\.\.\. hex value"):
        read_values(str(mixed), 10)
    with pytest.raises(ValueError, match="odd number of hex digits"):
        (folder / "bad.hex").write_text("0xabc")
        read_values(str(folder), 10)


def test_the_command_line_is_the_shell_statement():
    args = trial_cli.shell_args(["it's here/", "--into", "Scratch", "--codecs", "zstd:1, lz4", "--rows", "50",
                                 "--keep", "--json", "127.0.0.1", "9042", "-u", "cassandra"])
    assert args[:4] == ["127.0.0.1", "9042", "-u", "cassandra"] and args[4] == "-e"
    assert args[5] == ("COMPRESSION TRIAL FROM 'it''s here/' CODECS 'zstd:1', 'lz4' ROWS 50 "
                       'INTO "Scratch" KEEP JSON')
    with pytest.raises(SystemExit):
        trial_cli.shell_args(["values/", "--into", "ks", "-e", "SELECT 1"])
    with pytest.raises(SystemExit):
        trial_cli.shell_args(["values/"])  # --into is required


def test_phase_percentiles_are_ordered_and_failures_counted():
    phase = Phase()
    for micros in [900, 1000, 1100, 1200, 5000, 250_000] * 50:
        phase.record(micros)
    phase.timed_out = 2
    phase.fail("overloaded (7 tries)")
    phase.retry("throttled")
    phase.seconds = 2.0
    latency = phase.latency_ms()
    assert [latency[k] for k in ("median", "p95", "p99", "p99_9", "max")] == sorted(latency.values())
    assert latency["max"] == pytest.approx(250, rel=1e-3)
    assert latency["median"] == pytest.approx(1.1, rel=1e-2)
    assert phase.failures == 3 and phase.ops_per_second == 150
    assert phase.to_json()["retried"] == {"throttled": 1}
    assert Phase().latency_ms()["p99"] is None and Phase().ops_per_second is None


def _result(name: str, sizes: list[int], micros: int, payload: int) -> VariantResult:
    result = VariantResult(name, f"t_{name}", len(sizes), sum(sizes), payload,
                           *units([bytes(n) for n in sizes]))
    for phase in (result.writes, result.reads):
        for _ in sizes:
            phase.record(micros)
        phase.seconds = 1.0
    return result


def test_a_trial_stopped_during_its_writes_reports_what_it_measured_and_no_more():
    # Ctrl-C in round 2 of 10 of the writes: no read was made. The report said "1,000 values, 5
    # variants", a latency verdict "(10 rounds)", a footer on 10 rounds and a reads table of dashes.
    variants = []
    for name, size, micros in (("uncompressed", 5000, 2000), ("zstd", 1250, 1500)):
        result = VariantResult(name, f"t_{name}", 1000, 1000 * size, 1000 * 5000,
                               *units([bytes(size)] * 1000))
        for index in range(2):  # rounds 1 and 2 of the writes, 50 operations each
            result.writes.start_round(index)
            for op in range(50):
                result.writes.record(micros + 37 * op)
            result.writes.add_seconds(0.5)
        variants.append(result)
    report = TrialReport("ks.t.data", "blob", "scratch", 16, "ONE", variants, rounds=10, warmup_rows=50,
                         interrupted=True)
    assert report.measured() == \
        "200 of the 2,000 writes and none of the 2,000 reads measured, in 2 of 10 rounds"
    lines = list(fit(report.render(), 80))
    text = "\n".join(lines)
    said = " ".join(text.split())
    # Said first, before the verdict that rests on it.
    assert said.index("INTERRUPTED (Ctrl-C): 200 of the 2,000 writes and none of the 2,000 reads measured, "
                      "in 2 of 10 rounds") < said.index("Verdict:")
    assert "10 rounds)" not in said and "(2 rounds)" in said and "reads not measured" in said
    assert "2 of 10 rounds run after a warm-up" in said
    assert "Reads: none measured (Ctrl-C came before them)" in said and "Reads (ms)" not in text
    assert "Writes (ms)" in text
    assert not [row for row in lines if row and not row.strip()]  # no change row of blanks in a table
    assert "100 operations per variant and phase" in said  # what was measured, not the 1,000 planned
    doc = report.to_json()["trial"]
    assert doc["rounds_run"] == 2 and not doc["complete"]


def test_report_changes_against_uncompressed_and_fits_80_columns():
    payload = 40 * 5000
    report = TrialReport("ks.t.data", "blob", "scratch", 16, "LOCAL_QUORUM", [
        _result("uncompressed", [5000] * 40, 2000, payload),
        _result("zstd", [1250] * 40, 1000, payload),
    ], rounds=4, warmup_rows=40, keyspaces=True, error="Unavailable: not enough replicas",
        units_estimate={"wcu": 123.0, "rcu": 45.0})
    report.variants[1].writes.timed_out = 3
    report.variants[1].reads.retry("throttled")
    doc = report.to_json()
    zstd = doc["variants"][1]
    assert zstd["change"]["stored_bytes_mean"] == -0.75 and zstd["change"]["wcu_per_row"] == -0.6
    assert zstd["change"]["writes"]["median"] == -0.5 and zstd["change"]["reads"]["ops_per_s"] == 0
    assert doc["variants"][0]["change"] is None and not doc["trial"]["complete"]
    lines = list(fit(report.render(), 80))
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    assert "STOPPED BY AN ERROR: Unavailable: not enough replicas" in text
    assert "FAILED: zstd writes: 3 timed out" in text and "retried: zstd reads: 1 (throttled 1)" in text
    assert "-75 %" in text and "-50 %" in text
    assert "123 write, 45 read" in " ".join(text.split())
