"""COMPRESSION STATS through the real binary, every figure recomputed from what the test wrote."""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter

import pytest
from scanning.test_capacity import expected_bucket

from cqlsh_ext.scanning.plan import STREAMS

from .conftest import COMPRESSED, FAILED, NO_FORMAT, STATUS_WORDS, cqlsh_ext, json_docs

BUCKETS = ["<= 1 KB", "1-4 KB", "4-20 KB", "20-67 KB", "67 KB-1 MB", "> 1 MB"]


def label(v) -> str:
    if v.status == COMPRESSED:
        return v.chain
    words = STATUS_WORDS[v.status]
    return f"{v.chain} ({words})" if v.chain else words


def expected(values) -> dict:
    """The STATS document for `values`, computed here from the producers' inputs."""
    present = [v for v in values if v.stored is not None]
    comp = [v for v in present if v.status == COMPRESSED]
    stored = sum(len(v.stored) for v in present)
    size = sum(v.size for v in present)
    chains: dict[str, list[int]] = {}
    for v in present:
        entry = chains.setdefault(label(v), [0, 0, 0])
        entry[0] += 1
        entry[1] += len(v.stored)
        entry[2] += v.size
    codecs = Counter(
        v.chain.split(">")[0].split("/")[0] if v.status == COMPRESSED else STATUS_WORDS[v.status]
        for v in present
    )

    def per_row(sizes: list[int]) -> dict:
        return {
            "rows": len(sizes),
            "wcu": sum(max(1, math.ceil(s / 1024)) for s in sizes),
            "rcu": sum(max(1, math.ceil(s / 4096)) for s in sizes),
            "near_quota": sum(1 for s in sizes if 0.9 * 1048576 <= s <= 1048576),
            "over_quota": sum(1 for s in sizes if s > 1048576),
            "largest": max(sizes),
        }

    rows_before = [v.size if v.stored is not None else 0 for v in values]
    rows_after = [len(v.stored) if v.stored is not None else 0 for v in values]
    return {
        "rows": len(values),
        "values": len(present),
        "nulls": len(values) - len(present),
        "stored_bytes": stored,
        "decompressed_bytes": size,
        "ratio": round(size / stored, 4),
        "median_ratio": round(statistics.median(v.size / len(v.stored) for v in comp), 4),
        "compressed": {
            "values": len(comp),
            "stored_bytes": sum(len(v.stored) for v in comp),
            "decompressed_bytes": sum(v.size for v in comp),
            "ratio": round(sum(v.size for v in comp) / sum(len(v.stored) for v in comp), 4),
        },
        "inexact_values": sum(1 for v in comp if not v.exact),
        "chains": chains,
        "codecs": dict(codecs),
        # The undecodable values say why (no known format, a format that failed); values read as
        # they are stored (text, a record, a Java stream) need no reason.
        "reasons": sum(1 for v in present if v.status in (NO_FORMAT, FAILED)),
        "buckets": {
            "decompressed": Counter(expected_bucket(v.size) for v in present),
            "stored": Counter(expected_bucket(len(v.stored)) for v in present),
        },
        "histogram": {
            "decompressed": log_bins(v.size for v in present),
            "stored": log_bins(len(v.stored) for v in present),
        },
        "before": per_row(rows_before),
        "after": per_row(rows_after),
        "present": present,
    }


def log_bins(sizes) -> list[int]:
    """Values per doubling of size: at most 64 B, then (64 B, 128 B], ... (512 KB, 1 MB], then over."""
    counts = [0] * 16
    for size in sizes:
        k = 0
        while k < 15 and size > 64 << k:
            k += 1
        counts[k] += 1
    return counts


def check(doc: dict, exp: dict, consistency: str = "ONE") -> None:
    assert doc["complete"] and not doc["interrupted"] and doc["error"] is None
    assert doc["rows"] == exp["rows"]
    (col,) = doc["columns"]
    assert col["column"] == "data"
    for key in (
        "values",
        "nulls",
        "stored_bytes",
        "decompressed_bytes",
        "ratio",
        "median_ratio",
        "compressed",
        "inexact_values",
    ):
        assert col[key] == exp[key], key
    assert col["median_exact"] is True
    got_chains = {
        c["chain"]: [c["values"], c["stored_bytes"], c["decompressed_bytes"]] for c in col["by_chain"]
    }
    assert got_chains == exp["chains"]
    for c in col["by_chain"]:
        assert c["ratio"] == round(c["decompressed_bytes"] / c["stored_bytes"], 4)
    assert col["by_codec"] == exp["codecs"]
    assert sum(col["reasons"].values()) == exp["reasons"]
    # Undecodable, as far as STATS can tell without reading payloads under a container: the values
    # in no known format and those a format failed on, in the view's words as a query counts them.
    unknown = sum(1 for v in exp["present"] if v.status == NO_FORMAT)
    failed = sum(1 for v in exp["present"] if v.status == FAILED)
    assert col["undecodable"] == {k: n for k, n in (("unknown", unknown), ("failed", failed)) if n}
    if unknown and failed:
        said = (f"; {unknown + failed:,} undecodable ({unknown:,} no known format, {failed:,} a format that "
                "failed), counted at their stored size")
        assert said in doc["verdict"]
    for side in ("decompressed", "stored"):
        assert col["buckets"][side] == {b: exp["buckets"][side].get(b, 0) for b in BUCKETS}, side
        assert col["histogram"][side] == exp["histogram"][side], side
    assert col["histogram"]["bounds"] == [64 * 2**k for k in range(15)]
    ks = doc["keyspaces"]
    # Read units priced at the session's consistency: cqlsh's ONE, half a strongly consistent read.
    assert ks["consistency"] == doc["pricing"]["consistency"] == consistency
    share = 0.5 if consistency in ("ONE", "LOCAL_ONE") else 1.0
    for side, key in (("decompressed", "before"), ("stored", "after")):
        got = {k: ks[side][k] for k in ("rows", "wcu", "rcu", "near_quota", "over_quota", "largest")}
        assert got == {**exp[key], "rcu": exp[key]["rcu"] * share}, side
        assert ks[side]["wcu_per_row"] == round(exp[key]["wcu"] / exp["rows"], 3)
    assert ks["wcu_saving"] == round(1 - exp["after"]["wcu"] / exp["before"]["wcu"], 4)
    assert ks["rcu_saving"] == round(1 - exp["after"]["rcu"] / exp["before"]["rcu"], 4)


@pytest.mark.parametrize("parallel", ["", "PARALLEL 4 "], ids=["one-stream", "worker-processes"])
def test_whole_table_json(cassandra, insight, home, parallel):
    out = cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {parallel}SELECT data FROM {insight.ks}.orders")
    (doc,) = json_docs(out.stdout)
    check(doc, expected(insight.orders))
    assert doc["scan"] == ("4 worker processes" if parallel else f"{STREAMS} parallel streams")
    # The data covers every bucket, both sides of the quota and the output cap.
    exp = expected(insight.orders)
    assert all(exp["buckets"]["decompressed"][b] for b in BUCKETS)
    assert exp["before"]["over_quota"] and exp["after"]["near_quota"] and exp["inexact_values"]


def test_output_format_json_and_samples(cassandra, insight, home):
    """--output-format json gives JSON without the keyword (and stdout holds nothing else);
    WHERE and LIMIT samples are scanned as one stream."""
    keys = [v.key for v in insight.orders[300:420]]
    where = ", ".join(map(str, keys))
    out = cqlsh_ext(
        cassandra,
        home,
        f"COMPRESSION STATS SELECT data FROM {insight.ks}.orders WHERE id IN ({where})",
        "--output-format",
        "json",
    )
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    (doc,) = json_docs(out.stdout)
    check(doc, expected(insight.orders[300:420]))
    assert doc["scan"] == "single stream"
    # CONSISTENCY changes how reads are priced, and the report says at which level.
    statement = f"COMPRESSION STATS JSON SELECT data FROM {insight.ks}.orders WHERE id IN ({where})"
    quorum = json_docs(cqlsh_ext(cassandra, home, f"CONSISTENCY LOCAL_QUORUM; {statement}").stdout)
    check(quorum[0], expected(insight.orders[300:420]), "LOCAL_QUORUM")

    limited = json_docs(
        cqlsh_ext(
            cassandra, home, f"COMPRESSION STATS JSON SELECT data FROM {insight.ks}.orders LIMIT 57"
        ).stdout
    )[0]
    assert limited["rows"] == 57 and limited["columns"][0]["values"] + limited["columns"][0]["nulls"] == 57


def test_text_report(cassandra, insight, home):
    out = cqlsh_ext(cassandra, home, f"COMPRESSION STATS SELECT data FROM {insight.ks}.orders").stdout
    exp = expected(insight.orders)
    assert f"COMPRESSION STATS: {exp['rows']:,} rows in " in out
    assert f"Column data: {exp['values']:,} values, {exp['nulls']} null" in out
    # The size table: one line per bucket with both counts, shares and a bar for non-empty buckets.
    for bucket in BUCKETS:
        before = exp["buckets"]["decompressed"].get(bucket, 0)
        after = exp["buckets"]["stored"].get(bucket, 0)
        line = next(line for line in out.splitlines() if line.strip().startswith(bucket + " "))
        numbers = [
            int(n.replace(",", ""))
            for n in re.findall(r"(?<![\d.])\d[\d,]*(?![\d.]| %| KB| MB)", line[len(bucket) + 2 :])
        ]
        assert numbers == [before, after], line
        assert (
            f"{100 * before / exp['values']:.1f} %" in line and f"{100 * after / exp['values']:.1f} %" in line
        )
    wcu = next(line for line in out.splitlines() if line.strip().startswith("write units (WCU)"))
    assert f"{exp['before']['wcu']:,}" in wcu and f"{exp['after']['wcu']:,}" in wcu
    saved = 100 * (1 - exp["after"]["wcu"] / exp["before"]["wcu"])
    assert wcu.rstrip().endswith(f"{saved:.1f} %")
    overall = (
        f"overall {exp['ratio']:.2f}, compressed values {exp['compressed']['ratio']:.2f}, "
        f"median per value {exp['median_ratio']:.2f}"
    )
    assert overall in out
    assert "1 value was cut at the output cap" in out


def test_nested_blobs_and_no_blob_error(cassandra, insight, home):
    import gzip

    from cqlsh_ext.codecs import registry

    s = cassandra.session(insight.ks)
    s.execute("CREATE TABLE IF NOT EXISTS nested (id int PRIMARY KEY, l list<blob>, m map<text, blob>)")
    a, b, c = (gzip.compress(x * 50, mtime=0) for x in (b"alpha ", b"beta ", b"gamma "))
    s.execute("INSERT INTO nested (id, l, m) VALUES (1, %s, %s)", ([a, b], {"k": c}))
    s.shutdown()
    doc = json_docs(
        cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON SELECT l, m FROM {insight.ks}.nested").stdout
    )[0]
    cols = {c["column"]: c for c in doc["columns"]}
    assert set(cols) == {"l[]", "m[value]"}
    text = cqlsh_ext(cassandra, home, f"COMPRESSION STATS SELECT l, m FROM {insight.ks}.nested").stdout
    assert "2 values were sized from their headers, not decompressed" in text  # l: gzip sizes its output
    assert "1 value was sized from its header, not decompressed" in text  # m
    assert cols["l[]"]["values"] == 2 and cols["l[]"]["stored_bytes"] == len(a) + len(b)
    assert cols["l[]"]["decompressed_bytes"] == 300 + 250
    assert cols["m[value]"]["by_chain"][0]["chain"] == registry.GZIP.label
    assert doc["keyspaces"]["stored"]["largest"] == len(a) + len(b) + len(c)  # one row, all its blobs

    err = cqlsh_ext(
        cassandra, home, f"COMPRESSION STATS SELECT id FROM {insight.ks}.orders LIMIT 3", ok=False
    )
    assert err.returncode != 0 and "the result has no blob or text column" in err.stderr


def test_blobs_in_a_vector_and_in_a_udt_named_in_quotes(cassandra, insight, home):
    # The table named alone is read for the columns whose types hold a blob, and its text columns
    # outside the primary key (text inside a UDT is no payload: "a note" is not read); every blob is
    # counted: in a vector, and in a UDT whose names are no Python identifiers (the driver gives
    # such a value as a plain tuple).
    import gzip

    s = cassandra.session(insight.ks)
    s.execute('CREATE TYPE IF NOT EXISTS "Odd Doc" ("Raw" blob, "a note" text)')
    s.execute('CREATE TABLE IF NOT EXISTS odd (id int PRIMARY KEY, v vector<blob, 2>, q frozen<"Odd Doc">, '
              "n text)")
    a, b, c = (gzip.compress(x * 50, mtime=0) for x in (b"alpha ", b"beta ", b"gamma "))
    s.execute(f"INSERT INTO odd (id, v, q, n) VALUES (1, [0x{a.hex()}, 0x{b.hex()}], "
              f"{{\"Raw\": 0x{c.hex()}, \"a note\": 'x'}}, 'plain')")
    s.shutdown()
    doc = json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {insight.ks}.odd").stdout)[0]
    cols = {c["column"]: c for c in doc["columns"]}
    assert set(cols) == {"v[]", "q.Raw", "n"}
    assert [(e["chain"], e["values"], e["stored_bytes"], e["ratio"]) for e in cols["n"]["by_chain"]] == [
        ("text (not compressed)", 1, len("plain"), 1.0)]
    assert (cols["v[]"]["values"], cols["v[]"]["stored_bytes"]) == (2, len(a) + len(b))
    assert (cols["q.Raw"]["values"], cols["q.Raw"]["stored_bytes"]) == (1, len(c))


def _stats_docs(cassandra, home, statement: str, pages_in: bool) -> dict:
    """The statement's STATS JSON document, its timings left out, with pages in or with the
    driver's rows (CQLSH_EXT_PAGES_IN=0)."""
    import subprocess

    from shell_runner import CQLSH_EXT, isolated_env

    env = {**isolated_env(home), **({} if pages_in else {"CQLSH_EXT_PAGES_IN": "0"})}
    proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-e", statement], capture_output=True, text=True,
                          timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    (doc,) = json_docs(proc.stdout)
    return {k: v for k, v in doc.items() if k not in TIMINGS}


#: What differs between two runs of the same STATS whatever reads the pages.
TIMINGS = {"elapsed_s", "rows_per_s"}


@pytest.mark.parametrize("statement", [
    "COMPRESSION STATS JSON CONFIRM SELECT data FROM {ks}.orders",
    "COMPRESSION STATS JSON DECODE ALL CONFIRM SELECT data FROM {ks}.orders",
    "COMPRESSION STATS JSON PARALLEL 2 CONFIRM SELECT name, data FROM {ks}.formats",
    "COMPRESSION STATS JSON SELECT data FROM {ks}.orders LIMIT 700",
    "COMPRESSION STATS JSON SAMPLE 30 PERCENT SEED 5 SELECT data FROM {ks}.orders",
], ids=["headers", "decode-all", "worker-processes", "one-stream", "sample"])
def test_pages_in_gives_the_report_the_drivers_rows_give(cassandra, insight, home, statement):
    """The pages read as the server sent them (scanning.pages_in, the core splitting their cells)
    give the same report as the driver's rows, figure for figure."""
    text = statement.format(ks=insight.ks)
    ours, drivers = (_stats_docs(cassandra, home, text, pages_in) for pages_in in (True, False))
    assert ours == drivers
    assert ours["rows"] > 0


def test_corrupt_values_by_header_and_decoded(cassandra, insight, home):
    """What default STATS validates by a container's header and what it decodes, on real corrupt
    values: a zstd frame with a content checksum and one flipped byte, a truncated gzip value, and
    a large gzip value with a byte flipped inside its deflate stream, which a header check cannot
    see (its trailer's ISIZE still fits): DECODE ALL decompresses it and counts it failed."""
    import gzip
    import random

    import zstandard

    rng = random.Random(85)
    items = (b'{"id": %d, "name": "%s"}' % (i, rng.randbytes(12).hex().encode()) for i in range(4000))
    doc = b"[" + b",".join(items) + b"]"
    sound = zstandard.ZstdCompressor(write_checksum=True).compress(doc)
    flipped = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(doc[:3000]))
    flipped[len(flipped) // 2] ^= 0xFF
    truncated = gzip.compress(doc, mtime=0)[:-10]
    inside = bytearray(gzip.compress(doc, mtime=0))
    inside[len(inside) // 2] ^= 0xFF
    s = cassandra.session(insight.ks)
    s.execute("CREATE TABLE IF NOT EXISTS corrupt_values (id int PRIMARY KEY, data blob)")
    for i, value in enumerate((sound, bytes(flipped), truncated, bytes(inside))):
        s.execute("INSERT INTO corrupt_values (id, data) VALUES (%s, %s)", (i, value))
    s.shutdown()
    statement = f"SELECT data FROM {insight.ks}.corrupt_values"

    text = cqlsh_ext(cassandra, home, f"COMPRESSION STATS {statement}").stdout
    assert ("validated: 1 decompressed whole (the container's checksum checked where it carries one); "
            "1 value was sized from its header, not decompressed (the framing checked, not the payload: "
            "STATS ... DECODE ALL decompresses every value); 2 failed") in text
    (col,) = json_docs(cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON {statement}").stdout)[0]["columns"]
    assert col["validated"] == {"decoded": 1, "headers": 1, "cut": 0, "failed": 2}
    assert col["undecodable"] == {"failed": 2}
    assert col["decompressed_bytes"] == 2 * len(doc) + len(flipped) + len(truncated)  # failed: stored size
    assert {reason.split(":")[0] for reason in col["reasons"]} == {"zstd", "gzip"}

    decoded = cqlsh_ext(cassandra, home, f"COMPRESSION STATS JSON DECODE ALL {statement}").stdout
    (col,) = json_docs(decoded)[0]["columns"]
    assert col["validated"] == {"decoded": 1, "headers": 0, "cut": 0, "failed": 3}
    assert col["undecodable"] == {"failed": 3}
