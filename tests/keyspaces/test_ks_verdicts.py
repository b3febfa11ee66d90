"""The verdicts COMPRESSION STATS and ADVISE open with, on the Keyspaces-like endpoint (it reports
release 3.11.2, as Amazon Keyspaces does: the user pays in capacity units), on tables whose answer
is known: values of at most 1 KB cost 1 write unit and 1 read unit a row however they are
compressed; large compressible values cost fewer units compressed. The expected savings are
computed here from the bytes written."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import cramjam
import pytest

from cqlsh_ext.demo.records import documents
from keyspaces.ksharness import ALL_SECRETS, GOOD, REGION, KeyspacesEndpoint
from keyspaces.test_ks_endpoint import creds_env, tls_args

pytestmark = pytest.mark.server

KS = "ks_verdict"
ROWS = 120


def _small(i: int, rng: random.Random) -> bytes:
    """A JSON record of 500-1,000 bytes that compresses well."""
    words = ["PICKING", "SHIPPED", "warehouse", "customer", "express", "standard", "returned"]
    record = {"id": f"ORD-{i:08}", "status": rng.choice(words),
              "lines": [{"sku": f"SKU-{rng.randrange(100):04}", "qty": rng.randrange(1, 5),
                         "note": " ".join(rng.choice(words) for _ in range(6))} for _ in range(5)]}
    data = json.dumps(record).encode()
    assert 500 <= len(data) <= 1024, len(data)
    return data


@pytest.fixture(scope="module")
def tables(keyspaces_endpoint: KeyspacesEndpoint) -> dict[str, list[bytes]]:
    """name -> the values stored, one a row: small and large JSON, uncompressed and snappy-compressed
    (the Keyspaces article's raw snappy)."""
    rng = random.Random(5)
    small = [_small(i, rng) for i in range(ROWS)]
    docs = [d.encode() for d in documents(6 * ROWS, seed=81)]
    large = [b"[" + b",".join(docs[6 * i:6 * i + 6]) + b"]" for i in range(ROWS)]  # about 10-30 KB each
    snappy = [bytes(cramjam.snappy.compress_raw(v)) for v in large]
    assert min(map(len, large)) > 4096
    assert all(len(s) < len(v) / 2 for s, v in zip(snappy, large, strict=True))
    values = {"small": small, "small_snappy": [bytes(cramjam.snappy.compress_raw(v)) for v in small],
              "large": large, "large_snappy": snappy}
    session = keyspaces_endpoint.plain_session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KS} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    for name, stored in values.items():
        session.execute(f"CREATE TABLE IF NOT EXISTS {KS}.{name} (id int PRIMARY KEY, data blob)")
        insert = session.prepare(f"INSERT INTO {KS}.{name} (id, data) VALUES (?, ?)")
        for i, v in enumerate(stored):
            session.execute(insert, (i, v))
    return values


def _doc(ep: KeyspacesEndpoint, home: Path, statement: str) -> dict:
    # ADVISE measures every codec for about a second each: more than run()'s minute on a busy machine.
    args = [*tls_args(ep, "--region", REGION), "-e", statement]
    proc = ep.run(args, home, env=ep.env(home, **creds_env(GOOD)), timeout=600)
    assert not any(secret in proc.stdout + proc.stderr for secret in ALL_SECRETS)
    assert proc.returncode == 0, proc.stderr
    (doc,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return doc


def _pct(share: float) -> str:
    """A share as reports print it: one decimal below 10 %."""
    return f"{100 * share:.1f} %" if 100 * share < 10 else f"{100 * share:.0f} %"


def _fast(codec: dict) -> bool:
    """Fast enough for a request path, ADVISE's rule: 50 MB/s compressing, 200 decompressing."""
    return codec["compress_mb_s"]["median"] >= 50 and codec["decompress_mb_s"]["median"] >= 200


def _units(sizes: list[int]) -> tuple[int, int]:
    """(write units, read units at LOCAL_QUORUM: the shell's level on Keyspaces) of rows of these sizes."""
    return sum(max(1, math.ceil(s / 1024)) for s in sizes), sum(max(1, math.ceil(s / 4096)) for s in sizes)


def test_stats_of_small_compressed_values_says_units_are_unchanged(keyspaces_endpoint, tables, tmp_path):
    doc = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION STATS JSON CONFIRM {KS}.small_snappy")
    assert doc["pricing"]["keyspaces"] and doc["pricing"]["consistency"] == "LOCAL_QUORUM"
    assert doc["keyspaces"]["wcu_saving"] == 0 and doc["keyspaces"]["rcu_saving"] == 0
    stored = sum(map(len, tables["small_snappy"]))
    payload = sum(map(len, tables["small"]))
    saved = _pct(1 - stored / payload)
    assert doc["verdict"].startswith(f"Verdict: client-side compression saves {saved} of storage")
    assert "capacity units unchanged: every row's values are at most 1 KB even uncompressed" in doc["verdict"]


def test_stats_of_large_compressed_values_says_the_units_saved(keyspaces_endpoint, tables, tmp_path):
    doc = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION STATS JSON CONFIRM {KS}.large_snappy")
    (wcu_before, rcu_before), (wcu_after, rcu_after) = (_units([len(v) for v in tables[t]])
                                                        for t in ("large", "large_snappy"))
    wcu, rcu = _pct(1 - wcu_after / wcu_before), _pct(1 - rcu_after / rcu_before)
    said = doc["verdict"]
    assert said.startswith(f"Verdict: client-side compression saves {wcu} of write units, {rcu} of read "
                           "units and "), said


def test_stats_of_uncompressed_values_says_what_compression_could_save(keyspaces_endpoint, tables, tmp_path):
    small = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION STATS JSON CONFIRM {KS}.small")["verdict"]
    assert small.startswith("Verdict: stored uncompressed, and compression cannot save capacity units here: "
                            "every row's values are at most 1 KB even uncompressed")
    large = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION STATS JSON CONFIRM {KS}.large")["verdict"]
    wcu, rcu = _units([len(v) for v in tables["large"]])
    most = f"at most {_pct(1 - ROWS / wcu)} of write units and {_pct(1 - ROWS / rcu)} of read units"
    assert large.startswith(f"Verdict: stored uncompressed; compression could save {most}"), large


def test_advise_on_small_values_recommends_no_change_for_units_and_no_dictionary(keyspaces_endpoint, tables,
                                                                              tmp_path):
    doc = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION ADVISE JSON SAMPLE {ROWS} {KS}.small")
    (col,) = doc["columns"]
    assert all(c["wcu_saving_vs_stored"] == 0 and c["rcu_saving_vs_stored"] == 0 for c in col["codecs"])
    verdict = doc["verdicts"]["data"]
    assert "capacity units unchanged: every value is at most 1 KB even uncompressed" in verdict, verdict
    codec = col["recommendation"]["codec"]
    chosen = next(c for c in col["codecs"] if c["codec"] == codec)
    assert not chosen["dictionary"], col  # storage alone does not pay for keeping a dictionary
    saved = _pct(chosen["storage_saving_vs_stored"])
    assert verdict.startswith(f"Verdict: {codec} saves {saved} of storage; capacity units unchanged")
    dictionary = next(c for c in col["codecs"] if c["dictionary"])
    if _fast(dictionary) or not any(_fast(c) for c in col["codecs"]):  # a candidate on this machine
        assert any(r.startswith("A dictionary is not worth keeping: zstd 3 + dict saves no more write units")
                   for r in col["recommendation"]["reasons"]), col["recommendation"]["reasons"]


def test_advise_on_large_values_recommends_the_units_saved(keyspaces_endpoint, tables, tmp_path):
    doc = _doc(keyspaces_endpoint, tmp_path, f"COMPRESSION ADVISE JSON SAMPLE 40 {KS}.large")
    (col,) = doc["columns"]
    codec = col["recommendation"]["codec"]
    chosen = next(c for c in col["codecs"] if c["codec"] == codec)
    # What the codec writes is recomputed from the reported sizes' units, against uncompressed.
    assert chosen["wcu_saving_vs_stored"] > 0.3
    assert doc["verdicts"]["data"].startswith(
        f"Verdict: {codec} saves {_pct(chosen['wcu_saving_vs_stored'])} of write units, ")
    assert doc["verdicts"]["data"].endswith("against uncompressed.")
