"""COMPRESSION ADVISE and SETTINGS through the real binary, HELP, completion, and Ctrl-C on a long scan."""

from __future__ import annotations

import json
import math
import re
import signal
import statistics
import subprocess
import sys
import zlib

import brotli
import cramjam
import lz4.block
import pexpect
import pytest
import zstandard
from scanning.test_capacity import expected_bucket
from shell_runner import CQLSH_EXT, isolated_env, said_lines

from cqlsh_ext.demo.records import documents

from .conftest import cqlsh_ext, json_docs

BUCKETS = ["<= 1 KB", "1-4 KB", "4-20 KB", "20-67 KB", "67 KB-1 MB", "> 1 MB"]


def _gzip(level: int):
    def compress(p: bytes) -> bytes:
        obj = zlib.compressobj(level, zlib.DEFLATED, 31)
        return obj.compress(p) + obj.flush()

    return compress


# The codecs ADVISE must measure, recomputed here with the libraries' own calls.
REFERENCE = {
    "snappy": lambda p: bytes(cramjam.snappy.compress_raw(p)),
    "lz4": lz4.block.compress,
    "lz4hc 9": lambda p: lz4.block.compress(p, mode="high_compression", compression=9),
    **{f"zstd {lv}": zstandard.ZstdCompressor(level=lv).compress for lv in (-1, 1, 3, 9, 19)},
    **{f"gzip {lv}": _gzip(lv) for lv in (1, 6, 9)},
    **{f"brotli {q}": (lambda p, q=q: brotli.compress(p, quality=q)) for q in (1, 6, 11)},
}


#: The tests' sessions read at cqlsh's default consistency, ONE: Keyspaces bills half a read unit there.
AT_ONE = 0.5


def capacity(sizes: list[int]) -> tuple[int, float]:
    """(write units, read units at ONE) for each size as one row."""
    return (sum(max(1, math.ceil(s / 1024)) for s in sizes),
            AT_ONE * sum(max(1, math.ceil(s / 4096)) for s in sizes))


def test_advise(cassandra, insight, home):
    out = cqlsh_ext(
        cassandra, home, f"COMPRESSION ADVISE JSON SAMPLE 40 SELECT data FROM {insight.ks}.advise_src"
    )
    (doc,) = json_docs(out.stdout)
    assert doc["complete"] and doc["rows"] == 40
    (col,) = doc["columns"]
    payloads = insight.advise_payloads
    total = sum(map(len, payloads))
    stored = [len(zlib_gzip) for zlib_gzip in (_stored_gzip(p) for p in payloads)]
    assert (col["values"], col["payload_bytes"], col["stored_bytes"]) == (40, total, sum(stored))
    assert col["stored_ratio"] == round(total / sum(stored), 4)
    assert col["current"] == {"gzip": 40} and col["skipped"] == {}
    unc_wcu, unc_rcu = capacity([len(p) for p in payloads])
    assert (
        col["uncompressed"]["keyspaces"]["wcu"] == unc_wcu
        and col["uncompressed"]["keyspaces"]["rcu"] == unc_rcu
    )
    assert col["uncompressed"]["buckets"] == {
        b: sum(expected_bucket(len(p)) == b for p in payloads) for b in BUCKETS
    }
    codecs = {c["codec"]: c for c in col["codecs"]}
    assert set(REFERENCE) | {"zstd 3 + dict"} == set(codecs)
    for name, compress in REFERENCE.items():
        sizes = [len(compress(p)) for p in payloads]
        c = codecs[name]
        assert c["compressed_bytes"] == sum(sizes), name
        assert c["ratio"] == round(total / sum(sizes), 4), name
        assert c["buckets"] == {b: sum(expected_bucket(s) == b for s in sizes) for b in BUCKETS}, name
        wcu, rcu = capacity(sizes)
        assert (c["keyspaces"]["wcu"], c["keyspaces"]["rcu"]) == (wcu, rcu), name
        assert c["wcu_saving_vs_uncompressed"] == round(1 - wcu / unc_wcu, 4)
        assert c["wcu_saving_vs_stored"] == round(1 - wcu / capacity(stored)[0], 4)
    for c in codecs.values():
        for side in ("compress_mb_s", "decompress_mb_s"):
            speed = c[side]
            assert speed["runs"] >= 1 and 0 < speed["min"] <= speed["median"] <= speed["max"], (
                c["codec"],
                speed,
            )
    dict_codec = codecs["zstd 3 + dict"]
    assert dict_codec["ratio"] == round(total / dict_codec["compressed_bytes"], 4)
    assert "other half of the sample" in dict_codec["note"]
    # The recommendation follows its stated rule on the figures it reports. On Cassandra the user
    # pays in storage: the smallest of the codecs fast enough for a request path, a dictionary only
    # when it saves 10 % of the stored bytes more than the best codec without one.
    assert doc["pricing"] == {**doc["pricing"], "keyspaces": False, "consistency": "ONE"}
    fast = [
        c
        for c in codecs.values()
        if c["compress_mb_s"]["median"] >= 50 and c["decompress_mb_s"]["median"] >= 200
    ] or list(codecs.values())

    def rank(c: dict) -> tuple:
        return round(1 - c["compressed_bytes"] / sum(stored), 4), c["decompress_mb_s"]["median"]

    best = max((c for c in fast if not c["dictionary"]), key=rank)
    with_dict = max((c for c in fast if c["dictionary"]), key=rank, default=None)
    if with_dict is not None and rank(with_dict)[0] - rank(best)[0] >= 0.1:
        best = with_dict
    assert col["recommendation"]["codec"] == best["codec"]
    saved = 100 * (1 - best["compressed_bytes"] / sum(stored))
    assert col["recommendation"]["text"].startswith(
        f"{best['codec']} saves {saved:.0f} % of storage against what is stored now (gzip)"
    )
    assert doc["verdicts"] == {"data": f"Verdict: {col['recommendation']['text']}."}


def _stored_gzip(p: bytes) -> bytes:
    import gzip

    return gzip.compress(p, mtime=0)


def test_advise_text(cassandra, insight, home):
    out = cqlsh_ext(
        cassandra, home, f"COMPRESSION ADVISE SAMPLE 20 SELECT data FROM {insight.ks}.advise_src"
    ).stdout
    assert "COMPRESSION ADVISE: sample of 20 rows" in out and "Column data: 20 values" in out
    snappy = next(line for line in out.splitlines() if line.strip().startswith("snappy "))
    sizes = [len(cramjam.snappy.compress_raw(p)) for p in _first_sample(cassandra, insight, 20)]
    payload = sum(map(len, _first_sample(cassandra, insight, 20)))
    assert f"{payload / sum(sizes):.2f}" in snappy
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("COMPRESSION ADVISE: "))
    assert lines[title + 1].startswith("Verdict: ") and "values per size bucket:" in out
    # Speeds whose runs differ by more than ±25 % are said to be noisy, before the figures, with
    # the largest ± the table shows: whatever this machine measured now.
    noise = max(int(n) for n in re.findall(r"±(\d+) %", out))
    noisy = [line for line in lines if line.startswith("  NOISY SPEEDS: ")]
    # (A printed ±25 is 24.5-25.5 measured: either side of the line, so only its note is checked.)
    assert bool(noisy) == (noise > 25) or noise == 25, (noise, noisy)
    if noisy:
        assert f"up to ±{noise} %" in noisy[0]
        legend = next(i for i, line in enumerate(lines) if line.startswith("  speeds in MB/s"))
        assert lines.index(noisy[0]) < legend


def _first_sample(cassandra, insight, n: int) -> list[bytes]:
    """The payloads of the first n rows in the server's order, as the command reads them."""
    import gzip

    s = cassandra.session(insight.ks)
    rows = list(s.execute(f"SELECT data FROM advise_src LIMIT {n}"))
    s.shutdown()
    return [gzip.decompress(r.data) for r in rows]


def _row_bytes(pk: int, ck: int, data: bytes) -> bytes:
    return pk.to_bytes(4, "big", signed=True) + ck.to_bytes(4, "big", signed=True) + data


def _chunked(rows: list[bytes], chunk: int, level: int) -> float:
    joined = b"".join(rows)
    cctx = zstandard.ZstdCompressor(level=level)
    pieces = [joined[i : i + chunk] for i in range(0, len(joined), chunk)]
    return len(joined) / sum(len(cctx.compress(p)) for p in pieces)


def test_settings(cassandra, insight, home):
    doc = json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION SETTINGS JSON {insight.ks}.settings_t").stdout)[
        0
    ]
    assert doc["compression"] == {
        "chunk_length_in_kb": "64",
        "class": "org.apache.cassandra.io.compress.ZstdCompressor",
        "compression_level": "5",
    }
    s = cassandra.session(insight.ks)
    ordered = [(r.pk, r.ck, r.data) for r in s.execute("SELECT pk, ck, data FROM settings_t")]
    s.shutdown()
    assert sorted(ordered) == sorted(insight.settings_rows)
    sizes = [8 + len(d) for _, _, d in ordered]
    parts: dict[int, int] = {}
    for pk, _ck, d in ordered:
        parts[pk] = parts.get(pk, 0) + 8 + len(d)
    sample = doc["sample"]
    assert (sample["rows"], sample["partitions"], sample["rows_per_partition_median"]) == (150, 30, 5)
    assert sample["row_bytes_median"] == statistics.median(sizes) and sample["row_bytes_max"] == max(sizes)
    assert sample["partition_bytes_median"] == statistics.median(parts.values())
    assert sample["partition_bytes_max"] == max(parts.values())
    blobs = [d for _, _, d in ordered]
    payloads = [bytes(cramjam.snappy.decompress_raw(d)) for d in blobs]
    assert (sample["blob_values"], sample["blob_stored_bytes"], sample["blob_decompressed_bytes"]) == (
        150,
        sum(map(len, blobs)),
        sum(map(len, payloads)),
    )
    assert sample["blob_client_compressed_share"] == 1.0 and sample["blob_codecs"] == {"snappy": 150}
    stored_rows = [_row_bytes(*r) for r in ordered]
    plain_rows = [_row_bytes(pk, ck, p) for (pk, ck, _), p in zip(ordered, payloads, strict=True)]
    kb = 4
    while kb * 1024 < statistics.median(parts.values()):
        kb *= 2
    measured = doc["measured_ratio"]
    assert measured == {
        "ZstdCompressor, 64 KiB chunks, as stored": pytest.approx(_chunked(stored_rows, 64 << 10, 5)),
        f"ZstdCompressor, {kb} KiB chunks, as stored": pytest.approx(_chunked(stored_rows, kb << 10, 5)),
        "ZstdCompressor, 64 KiB chunks, blobs decompressed": pytest.approx(_chunked(plain_rows, 64 << 10, 5)),
    }
    assert any(f"chunk_length_in_kb = {kb} " in a and f"{64 // kb}x fewer bytes" in a for a in doc["advice"])
    # The verdict is the trade: what the smaller chunks buy and what they cost.
    buys = (f"set chunk_length_in_kb = {kb}: faster point reads, each decompressing a {kb} KiB chunk "
            "instead of 64 KiB")
    assert buys in doc["verdict"], doc["verdict"]
    costs = r"(for about \d+ % more disk \(storage ratio|at no storage cost \(ratio) "
    assert re.search(costs, doc["verdict"]), doc["verdict"]

    small = json_docs(
        cqlsh_ext(cassandra, home, f"COMPRESSION SETTINGS JSON SAMPLE 12 {insight.ks}.settings_t").stdout
    )
    assert small[0]["sample"]["rows"] == 12
    # 12 rows of 5-row partitions: the third partition is cut by the LIMIT and left out of the sizes.
    assert small[0]["sample"]["rows_per_partition_median"] == 5

    text = cqlsh_ext(cassandra, home, f"COMPRESSION SETTINGS {insight.ks}.settings_t").stdout
    assert "chunk_length_in_kb  64" in text and "Advice:" in text
    missing = cqlsh_ext(cassandra, home, f"COMPRESSION SETTINGS {insight.ks}.nope", ok=False)
    assert missing.returncode != 0 and "not found" in missing.stderr


def test_stats_and_advise_take_a_table_name(cassandra, insight, home):
    # A table named alone is a whole-table SELECT of its blob columns (pk and ck are not read).
    table = f"{insight.ks}.settings_t"
    by_name = json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {table}").stdout)[0]
    select = f"SELECT data FROM {table}"
    by_select = json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {select}").stdout)[0]
    assert by_name["query"] == select
    assert by_name["rows"] == by_select["rows"] == len(insight.settings_rows)
    assert by_name["columns"] == by_select["columns"]
    advice = cqlsh_ext(cassandra, home, "COMPRESSION ADVISE SAMPLE 10 settings_t", "-k", insight.ks).stdout
    assert "COMPRESSION ADVISE: sample of 10 rows" in advice and "Column data: 10 values" in advice
    missing = cqlsh_ext(cassandra, home, f"COMPRESSION STATS {insight.ks}.nope", ok=False)
    assert f"COMPRESSION STATS: table {insight.ks}.nope not found" in missing.stderr


@pytest.mark.parametrize(("statement", "expected"), [
    ("COMPRESSION", "COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [keyspace.]table"),
])
def test_a_malformed_command_says_what_was_expected_with_an_example(cassandra, insight, home, statement,
                                                                    expected):
    # COMPRESSION with no statement: each one's form and an example (a statement word mistyped,
    # COMPRESSION STAT, is one line: tests/test_shell.py's mistyped words).
    result = cqlsh_ext(cassandra, home, statement, "-k", insight.ks, ok=False)
    assert result.returncode != 0
    word = statement.split()[0]
    assert f"Improper {word} command" in result.stderr
    assert expected in result.stderr, result.stderr
    example = result.stderr.split("For example:\n", 1)[1].splitlines()[0].strip()
    assert example.startswith(word), result.stderr
    assert f"HELP {word}" in result.stderr


def test_a_malformed_declared_statement_says_its_form_in_one_line(cassandra, insight, home):
    # INSPECT and COMPRESSION STATS, ADVISE, SETTINGS and TRIAL are read from their features' declarations
    # (insight/declared.py), not by cqlsh's grammar: a refusal is one line, its form and an example.
    result = cqlsh_ext(cassandra, home, "COMPRESSION SETTINGS SELECT data FROM orders", "-k", insight.ks,
                       ok=False)
    assert result.returncode != 0
    said = said_lines(result.stderr)
    assert said == ["COMPRESSION SETTINGS: 'data' is no argument of it: COMPRESSION SETTINGS [JSON] "
                    "[SAMPLE n] [keyspace.]table, e.g. COMPRESSION SETTINGS ks.t;"], result.stderr
    zero = cqlsh_ext(cassandra, home, "COMPRESSION SETTINGS SAMPLE 0 orders", "-k", insight.ks, ok=False)
    assert zero.returncode != 0
    said = said_lines(zero.stderr)
    assert said == ["COMPRESSION SETTINGS: sample is at least 1, not 0"], zero.stderr
    sampled = cqlsh_ext(cassandra, home, "COMPRESSION ADVISE SAMPLE orders", "-k", insight.ks, ok=False)
    assert sampled.returncode != 0
    assert said_lines(sampled.stderr) == [
        "COMPRESSION ADVISE: sample takes a whole number (values per column (default 300)), not 'orders'"
    ], sampled.stderr
    inspected = cqlsh_ext(cassandra, home, "INSPECT orders", "-k", insight.ks, ok=False)
    assert inspected.returncode != 0
    assert said_lines(inspected.stderr) == [
        "INSPECT: 'orders' is no SELECT: INSPECT [JSON] <SELECT statement>, e.g. INSPECT SELECT data FROM "
        "ks.t WHERE id = 42;"], inspected.stderr
    bare = cqlsh_ext(cassandra, home, "COMPRESSION STATS", "-k", insight.ks, ok=False)
    assert bare.returncode != 0
    assert said_lines(bare.stderr) == ["COMPRESSION STATS: table is required (keyspace.table)"], bare.stderr
    trial = cqlsh_ext(cassandra, home, "COMPRESSION TRIAL", "-k", insight.ks, ok=False)
    assert trial.returncode != 0
    assert said_lines(trial.stderr) == [
        "COMPRESSION TRIAL: column is required (keyspace.table.column whose values are measured)"
    ], trial.stderr
    column = cqlsh_ext(cassandra, home, "COMPRESSION ADVISE orders column = data", "-k", insight.ks, ok=False)
    assert column.returncode != 0
    assert said_lines(column.stderr) == [
        "COMPRESSION ADVISE: 'column' is no argument of it: COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT "
        "statement> | [keyspace.]table [SAVE DICTIONARY 'file'], e.g. COMPRESSION ADVISE SELECT data "
        "FROM ks.t LIMIT 500;"], column.stderr


def test_help(cassandra, home):
    out = cqlsh_ext(cassandra, home, "HELP").stdout
    assert "INSPECT" in out and "COMPRESSION" in out
    assert "INSPECT [cqlsh-ext]" in cqlsh_ext(cassandra, home, "HELP INSPECT").stdout
    assert "COMPRESSION ADVISE [JSON] [SAMPLE n]" in cqlsh_ext(cassandra, home, "HELP COMPRESSION").stdout
    assert "RESUME 'journal' [CONFIRM]" in cqlsh_ext(cassandra, home, "HELP REWRITE").stdout


COMPLETE = r"""
import json, sys
from cassandra.auth import PlainTextAuthProvider
from cqlsh_ext.upstream import seams
cqlshmain = seams.import_cqlshmain(None)
from cqlsh_ext.shell.completion import register_grammar
register_grammar()
from cqlshlib import cql3handling
cqlshmain.setup_cqlruleset(cql3handling)
host, port, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
conn = cqlshmain.Shell(host, port, auth_provider=PlainTextAuthProvider("cassandra", "cassandra"), tty=False,
                       encoding="utf-8")
cases = json.loads(sys.argv[4])
print(json.dumps([cqlshmain.cqlruleset.cql_complete(b.replace("KS", ks), p, cassandra_conn=conn,
                                                     startsymbol="cqlshCommand") for b, p in cases]))
"""


def test_completion(cassandra, insight, home):
    cases = [
        ("", "INS"),
        ("", "COMPR"),
        ("COMPRESSION ", ""),
        ("COMPRESSION STATS ", ""),
        ("COMPRESSION SETTINGS KS.", "sett"),
        ("INSPECT SELECT data FROM KS.", "ord"),
        ("COMPRESSION ADVISE SAMPLE 10 SELECT data FROM KS.orders ", ""),
        ("COMPRESSION TRIAL KS.settings_t.", ""),
        ("COMPRESSION TRIAL KS.settings_t.data INTO ", "ins"),
        # REWRITE: cqlsh's rule completes it (rewrite.command reads it: cqlsh never parses it).
        ("COMPRESSION REWRITE KS.settings_t.data AS 'zstd' ", ""),
        ("COMPRESSION REWRITE RESUME 'a.jsonl' ", ""),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", COMPLETE, cassandra.host, str(cassandra.port), insight.ks, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        env=isolated_env(home),
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "INSPECT" in got[0]
    assert got[1] == ["COMPRESSION "]
    assert set(got[2]) == {"STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE"}
    assert {"SELECT", "JSON", "PARALLEL"} <= set(got[3])
    assert got[4] == ["settings_t "] or got[4] == ["settings_t"]
    assert [c.strip() for c in got[5]] == ["orders"]
    assert {"WHERE", "LIMIT"} <= {c.strip() for c in got[6]}
    assert [c.strip() for c in got[7]] == ["data"]  # the blob column; pk and ck are ints
    assert insight.ks in [c.strip() for c in got[8]]
    assert {"WHERE", "ALLOW", "PACE", "ALL", "CONFIRM"} <= {c.strip() for c in got[9]}
    assert "CONFIRM" in [c.strip() for c in got[10]]


def test_ctrl_c_stops_a_long_scan_and_reports(cassandra, insight, home):
    child = pexpect.spawn(
        CQLSH_EXT,
        [*cassandra.cqlsh_args, "-e", f"COMPRESSION STATS PARALLEL 1 SELECT data FROM {insight.ks}.bulky"],
        env=isolated_env(home),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 200),
    )
    # The progress line with rows counted: the scan is under way (it reads "0 rows" while the first
    # page is on its way, and Ctrl-C then would find nothing read yet).
    child.expect(r"[1-9][\d,]* rows, [\d,]+ rows/s")
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert "INTERRUPTED: the figures cover the rows scanned before Ctrl-C." in out, out[-2000:]
    rows = int(out.split("COMPRESSION STATS: ", 1)[1].split(" rows", 1)[0].replace(",", ""))
    assert 0 < rows < insight.big_rows
    assert f"Column data: {rows:,} values" in out
    wcu = next(line for line in out.splitlines() if line.strip().startswith("write units (WCU)"))
    per_row_before = math.ceil(60_000 / 1024)
    assert f"{rows * per_row_before:,}" in wcu


@pytest.fixture(scope="module")
def demo(cassandra, tmp_path_factory) -> tuple[str, list[bytes]]:
    """(keyspace, the documents) of the demo keyspace as `cqlsh-ext demo load` writes it: the same
    JSON documents as text (table_with_uncompressed_json) and snappy-compressed (its twin); and a
    table with neither a blob nor a text column outside its primary key."""
    name, rows = "demo_text", 120
    home = tmp_path_factory.mktemp("demo-home")
    proc = subprocess.run([CQLSH_EXT, "demo", "load", "-k", name, "--rows", str(rows), cassandra.host,
                           str(cassandra.port), "-u", cassandra.username, "-p", cassandra.password],
                          capture_output=True, text=True, timeout=300, env=isolated_env(home))
    assert proc.returncode == 0, proc.stderr
    session = cassandra.session(name)
    session.execute("CREATE TABLE IF NOT EXISTS keys_only (name text PRIMARY KEY, n int)")
    session.shutdown()
    return name, [d.encode() for d in documents(rows)]


def test_stats_reports_a_text_column_as_stored_uncompressed(cassandra, demo, home):
    # The demo's question: what would compression save on the text table? STATS reports the text
    # column as its compressed twin's payload, stored uncompressed: stored = decompressed = the
    # documents' UTF-8 bytes, ratio 1.0, and the twin's "decompressed" capacity is its "stored".
    ks, docs = demo
    text_doc, twin = (json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {ks}.{table}").stdout)[0]
                      for table in ("table_with_uncompressed_json", "table_with_compressed_json"))
    assert text_doc["query"] == f"SELECT data FROM {ks}.table_with_uncompressed_json"
    (col,) = text_doc["columns"]
    (compressed,) = twin["columns"]
    total = sum(map(len, docs))
    assert (col["values"], col["stored_bytes"], col["decompressed_bytes"], col["ratio"]) == (
        len(docs), total, total, 1.0)
    assert compressed["decompressed_bytes"] == total and compressed["ratio"] > 2
    assert col["by_chain"] == [{"chain": "text (not compressed)", "status": "not compressed",
                                "values": len(docs), "stored_bytes": total, "decompressed_bytes": total,
                                "ratio": 1.0}]
    assert col["buckets"]["stored"] == col["buckets"]["decompressed"] == compressed["buckets"]["decompressed"]
    units = text_doc["keyspaces"]
    assert units["stored"] == units["decompressed"] == twin["keyspaces"]["decompressed"]
    assert units["wcu_saving"] == 0.0
    assert (units["stored"]["wcu"], units["stored"]["rcu"]) == capacity([len(d) for d in docs])
    assert units["consistency"] == "ONE"

    plain = f"{ks}.table_with_uncompressed_json"
    text = cqlsh_ext(cassandra, home, f"COMPRESSION STATS SELECT id, data FROM {plain}")
    assert "text (not compressed)" in text.stdout
    assert "a text column, stored uncompressed: COMPRESSION ADVISE says what codecs would save" in text.stdout
    sample = f"COMPRESSION STATS JSON SAMPLE 50 PERCENT SEED 1 SELECT data FROM {plain}"
    sampled = json_docs(cqlsh_ext(cassandra, home, sample).stdout)[0]
    assert sampled["estimates"]["ratio"]["estimate"] == 1.0 and sampled["sample"]["slices_read"] > 0


def test_advise_recompresses_a_text_column_like_its_compressed_twin(cassandra, demo, home):
    # Both tables hold the same documents under the same ids (the same order): ADVISE measures the
    # same payloads, so every codec gives the same bytes; only "stored now" differs.
    ks, _docs = demo
    text_doc, twin = (json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION ADVISE JSON SAMPLE 20 {ks}.{table}")
                                .stdout)[0]["columns"][0]
                      for table in ("table_with_uncompressed_json", "table_with_compressed_json"))
    assert text_doc["current"] == {"text": 20} and twin["current"] == {"snappy": 20}
    assert text_doc["payload_bytes"] == twin["payload_bytes"] == text_doc["stored_bytes"]
    assert text_doc["stored_ratio"] == 1.0
    sizes = {c["codec"]: c["compressed_bytes"] for c in text_doc["codecs"]}
    assert sizes == {c["codec"]: c["compressed_bytes"] for c in twin["codecs"]}
    assert sizes["snappy"] == twin["stored_bytes"]  # the twin is snappy of these bytes
    assert text_doc["recommendation"]["codec"] in sizes


def test_a_statement_without_blob_or_text_is_refused_saying_both(cassandra, demo, home):
    ks, _docs = demo
    for action in ("STATS", "ADVISE"):
        ids = f"SELECT id FROM {ks}.table_with_compressed_json"  # a timeuuid only
        out = cqlsh_ext(cassandra, home, f"COMPRESSION {action} {ids}", ok=False)
        assert f"COMPRESSION {action}: the result has no blob or text column" in out.stderr
        out = cqlsh_ext(cassandra, home, f"COMPRESSION {action} {ks}.keys_only", ok=False)
        assert (f"COMPRESSION {action}: {ks}.keys_only has no blob column and no text column outside its "
                "primary key") in out.stderr
