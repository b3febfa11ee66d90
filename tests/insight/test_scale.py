"""COMPRESSION STATS at table scale against the real test server: sampled estimates and their
intervals on a skewed table, worker processes and Ctrl-C, retries of throttling and overload
(injected by the test server's fault handler, tests/fault_handler.py)."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import cramjam
import pytest
import zstandard
from cassandra.concurrent import execute_concurrent_with_args
from shell_runner import CQLSH_EXT, isolated_env

from cqlsh_ext.common.retry import ATTEMPTS as RETRY_ATTEMPTS
from cqlsh_ext.demo.records import documents
from cqlsh_ext.scanning.plan import STREAMS

from .conftest import cqlsh_ext, json_docs


def _values(rng: random.Random, docs: list[bytes], n: int) -> list[tuple[bytes, int]]:
    """(stored, decompressed size) for n values of the usual mix: snappy, zstd, gzip and plain."""
    out = []
    zc = zstandard.ZstdCompressor(level=3)
    for _ in range(n):
        doc = rng.choice(docs)
        roll = rng.random()
        if roll < 0.4:
            out.append((bytes(cramjam.snappy.compress_raw(doc)), len(doc)))
        elif roll < 0.7:
            out.append((zc.compress(doc), len(doc)))
        elif roll < 0.9:
            out.append((gzip.compress(doc), len(doc)))
        else:
            out.append((os.urandom(rng.randint(40, 400)), -1))  # binary ids: not compressed
    return [(v, n if n >= 0 else len(v)) for v, n in out]


@pytest.fixture(scope="module")
def skewed(cassandra) -> tuple[str, float, int]:
    """(keyspace, true byte-weighted ratio, rows): 2,500 small partitions of 1-3 rows and one wide
    partition of 3,000 rows (pk 0), values of one mix everywhere."""
    ks = cassandra.create_keyspace("scale")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    rng = random.Random(42)
    docs = [d.encode() for d in documents(300, seed=42)]
    rows: list[tuple[int, int, bytes]] = []
    stored = decompressed = 0
    for pk in range(1, 2501):
        for ck, (value, size) in enumerate(_values(rng, docs, rng.randint(1, 3))):
            rows.append((pk, ck, value))
            stored += len(value)
            decompressed += size
    for ck, (value, size) in enumerate(_values(rng, docs, 3000)):
        rows.append((0, ck, value))
        stored += len(value)
        decompressed += size
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, rows, concurrency=64, raise_on_first_error=True)
    session.shutdown()
    return ks, decompressed / stored, len(rows)


def test_sample_intervals_hold_the_true_ratio(cassandra, skewed, tmp_path: Path):
    ks, truth, total_rows = skewed
    statements = "; ".join(
        f"COMPRESSION STATS JSON SAMPLE 20 PERCENT SEED {seed} SELECT data FROM {ks}.t" for seed in range(20)
    )
    out = cqlsh_ext(cassandra, tmp_path, statements + ";")
    docs = json_docs(out.stdout)
    assert len(docs) == 20
    hits = 0
    for doc in docs:
        sample, est = doc["sample"], doc["estimates"]
        ratio = est["ratio"]
        assert ratio["low"] < ratio["estimate"] < ratio["high"]
        hits += ratio["low"] <= truth <= ratio["high"]
        # a sample, and it says so: a fifth of the ring's slices, not the whole table
        assert 0.15 <= sample["ring_share"] <= 0.25 and sample["rows_read"] < total_rows
        assert sample["stopped"] == "20 % of the ring read"
    assert hits >= 18, f"the 95 % interval held the true ratio {truth:.4f} in {hits} of 20 runs"


def test_sample_report(cassandra, skewed, tmp_path: Path):
    ks, truth, total_rows = skewed
    text = cqlsh_ext(cassandra, tmp_path,
                     f"COMPRESSION STATS SAMPLE 20 PERCENT SEED 3 SELECT data FROM {ks}.t").stdout
    assert "COMPRESSION STATS, SAMPLED: estimates for the whole table, each with its 95 % interval." in text
    assert "Verdict, estimated from the sample (intervals below): " in text
    # The bytes it names are the sample's, and it says so: the table's estimates follow.
    assert " of storage (in the sample: " in " ".join(text.split()), text[:600]
    assert "stopped: 20 % of the ring read" in text
    assert "codec mix (share of values):" in text and "write units saved" in text


def test_a_precision_on_a_table_cheap_to_read_whole_reads_it_whole(cassandra, skewed, tmp_path: Path):
    # The skewed table is a few MB: a SAMPLE asking for a precision reads it whole, says so, and
    # gives STATS' exact figures (the ones a plain STATS gives), whatever the seed.
    ks, _truth, total_rows = skewed
    plans = ["SAMPLE", "SAMPLE UNTIL 5 PERCENT SEED 3", "SAMPLE UNTIL 1 PERCENT WITHIN 3600 SECONDS SEED 4"]
    statements = "; ".join(f"COMPRESSION STATS JSON {plan} SELECT data FROM {ks}.t" for plan in plans)
    plain = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS JSON SELECT data FROM {ks}.t")
    exact = json_docs(plain.stdout)[0]
    for doc in json_docs(cqlsh_ext(cassandra, tmp_path, statements + ";").stdout):
        assert doc["rows"] == total_rows and "estimates" not in doc
        assert doc["columns"] == exact["columns"] and doc["keyspaces"] == exact["keyspaces"]
        why = doc["sample"]["whole_table"]
        assert why.endswith("which reads whole in less time than a sample takes: exact figures"), why
        assert doc["notes"] == [f"SAMPLE read the whole table: {why}"]
    text = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS SAMPLE SELECT data FROM {ks}.t").stdout
    lines = text.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("COMPRESSION STATS: "))
    assert lines[title + 1].startswith("  SAMPLE read the whole table: ")
    assert lines[title + 2].startswith("Verdict: ")


def _repeatable(doc: dict) -> dict:
    """A sampled report without its timings."""
    return {k: v for k, v in doc.items() if k not in ("elapsed_s", "rows_per_s")}


def test_a_seed_repeats_the_sample(cassandra, skewed, tmp_path: Path):
    # HELP promises "the same slices again": the sample is the first K slices in the order the seed
    # draws, whichever of the 16 running slices finishes first, so the same seed gives the same
    # report to the last digit.
    ks, _truth, _rows = skewed
    plans = [*["SAMPLE 10 PERCENT SEED 3"] * 3, "SAMPLE 10 PERCENT SEED 4", "SAMPLE 10 PERCENT SEED 5",
             *["SAMPLE 300 SEED 5"] * 2]
    statements = "; ".join(f"COMPRESSION STATS JSON {plan} SELECT data FROM {ks}.t" for plan in plans)
    docs = json_docs(cqlsh_ext(cassandra, tmp_path, statements + ";").stdout)
    assert len(docs) == len(plans)
    seed3, again, third = (_repeatable(d) for d in docs[:3])
    assert seed3 == again == third
    rows300 = [_repeatable(d) for d in docs[5:]]
    assert rows300[0] == rows300[1]
    # SAMPLE n: the first slices that hold n rows, the last one cut at the n-th
    assert rows300[0]["rows"] == rows300[0]["sample"]["rows_read"] == 300
    assert rows300[0]["sample"]["stopped"] == "300 rows read"
    for doc in docs[:5]:
        sample = doc["sample"]
        assert sample["stopped"] == "10 % of the ring read", sample
        # the exact figures cover the sample's rows, no more (no slice past the K-th counted)
        assert doc["rows"] == sample["rows_read"] == sum(c["values"] + c["nulls"] for c in doc["columns"])
    assert {d["sample"]["seed"] for d in docs[:5]} == {3, 4, 5}


def test_sample_n_reads_and_reports_exactly_n_rows(cassandra, skewed, tmp_path: Path):
    # `COMPRESSION STATS SAMPLE 200` read its last token-range slice whole and reported "200 rows
    # asked, 201 read" (issue 109): the slice that reaches n is cut at the n-th row, whatever the
    # slices drawn (the wide partition's slice among them for some seeds).
    ks, _truth, _rows = skewed
    statements = "; ".join(f"COMPRESSION STATS JSON SAMPLE 200 SEED {seed} SELECT data FROM {ks}.t"
                           for seed in range(1, 5))
    docs = json_docs(cqlsh_ext(cassandra, tmp_path, statements + ";").stdout)
    assert len(docs) == 4
    for doc in docs:
        values = sum(c["values"] + c["nulls"] for c in doc["columns"])
        assert doc["rows"] == doc["sample"]["rows_read"] == values == 200, doc["sample"]
        assert doc["sample"]["stopped"] == "200 rows read", doc["sample"]
    said = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS SAMPLE 200 SEED 1 {ks}.t").stdout
    text = " ".join(said.split())
    assert "stopped: 200 rows read" in text and "rows asked" not in text, text


def test_sample_needs_a_whole_table_select(cassandra, skewed, tmp_path: Path):
    ks, _, _ = skewed
    out = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS SAMPLE 100 SELECT data FROM {ks}.t WHERE pk = 1",
                    ok=False)
    said = [line for line in out.stderr.splitlines() if "COMPRESSION STATS" in line]
    assert len(said) == 1 and "SAMPLE needs a whole-table SELECT" in said[0]
    assert "Traceback" not in out.stderr


@pytest.fixture(scope="module")
def faults_table(cassandra) -> tuple[str, int]:
    """A table in a faults_* keyspace (the fault handler's), 400 rows of snappy JSON."""
    ks = cassandra.create_keyspace("faults")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    docs = [d.encode() for d in documents(50, seed=5)]
    insert = session.prepare("INSERT INTO t (id, data) VALUES (?, ?)")
    rows = [(i, bytes(cramjam.snappy.compress_raw(docs[i % len(docs)]))) for i in range(400)]
    execute_concurrent_with_args(session, insert, rows, concurrency=32, raise_on_first_error=True)
    session.shutdown()
    cassandra.faults.clear()
    yield ks, len(rows)
    cassandra.faults.clear()


@pytest.mark.parametrize("kind,name", [("overloaded", "overloaded"),
                                       ("read_timeout", "read timeout (Keyspaces: throttling)"),
                                       ("throttled", "throttled")])
def test_throttling_and_overload_are_retried_with_backoff(cassandra, faults_table, tmp_path, kind, name):
    ks, rows = faults_table
    cassandra.faults.set(kind, 3)
    try:
        out = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS JSON SELECT data FROM {ks}.t")
    finally:
        cassandra.faults.clear()
    (doc,) = json_docs(out.stdout)
    assert doc["complete"] and doc["rows"] == rows  # nothing lost, nothing counted twice
    assert doc["retried"] == {name: 3}


def test_retries_end_and_the_report_covers_what_was_read(cassandra, faults_table, tmp_path):
    ks, rows = faults_table
    cassandra.faults.set("overloaded", -1, after=1)  # the first page, then overloaded for good
    try:
        out = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS SELECT data FROM {ks}.t", ok=False)
    finally:
        cassandra.faults.clear()
    assert "STOPPED BY AN ERROR: OverloadedErrorMessage" in out.stdout
    # never a loop forever: the retries the code allows (common.retry.ATTEMPTS a page), then it
    # stops; a count the code controls, where a wall-clock bound measured the machine. The streams
    # read at once (scanning.plan.STREAMS) each retry their page: one of them used all its attempts.
    retried = re.search(r"retried with backoff: ([\d,]+) x overloaded", out.stdout)
    assert retried, out.stdout[:1500]
    assert RETRY_ATTEMPTS <= int(retried.group(1).replace(",", "")) <= STREAMS * RETRY_ATTEMPTS
    first = out.stdout.splitlines()[0]
    read = int(first.split(": ", 1)[1].split(" rows")[0].replace(",", ""))
    assert 0 < read < rows


def _children(pid: int) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry.name))
    return out


def test_ctrl_c_stops_every_worker_and_reports(cassandra, faults_table, tmp_path):
    ks, rows = faults_table
    cassandra.faults.set("delay", -1, 250)  # every page a quarter second late: the scan takes seconds
    args = [*cassandra.cqlsh_args, "-e", f"COMPRESSION STATS PARALLEL 2 SELECT data FROM {ks}.t"]
    proc = subprocess.Popen([CQLSH_EXT, *args], env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        workers: set[int] = set()
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) == 2, "two worker processes"
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        cassandra.faults.clear()
        if proc.poll() is None:
            proc.kill()
    assert "INTERRUPTED: the figures cover the rows scanned before Ctrl-C." in stdout, stderr
    assert "(2 worker processes)" in stdout
    assert "Traceback" not in stderr
    left = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    assert not left, f"worker processes left behind: {left}"
    read = int(stdout.splitlines()[0].split(": ", 1)[1].split(" rows")[0].replace(",", ""))
    assert 0 <= read < rows


def test_worker_processes_give_the_exact_figures(cassandra, skewed, tmp_path):
    ks, truth, total_rows = skewed
    def stats(option: str) -> dict:
        out = cqlsh_ext(cassandra, tmp_path, f"COMPRESSION STATS JSON {option}SELECT data FROM {ks}.t")
        return json_docs(out.stdout)[0]

    one, two = stats(""), stats("PARALLEL 2 ")
    assert one["rows"] == two["rows"] == total_rows
    assert two["scan"] == "2 worker processes"
    for key in ("stored_bytes", "decompressed_bytes", "values", "by_codec", "buckets"):
        assert one["columns"][0][key] == two["columns"][0][key], key
    assert one["columns"][0]["ratio"] == pytest.approx(truth, abs=1e-4)
    assert json.dumps(one["keyspaces"]) == json.dumps(two["keyspaces"])


def test_a_plain_select_is_not_retried_and_says_why_in_one_line(cassandra, faults_table, tmp_path):
    # Retrying is the insight commands' (reads they own); a statement the user typed is reported
    # as the server answered it, in one line, as cqlsh does.
    ks, _ = faults_table
    cassandra.faults.set("overloaded", 1)
    try:
        out = cqlsh_ext(cassandra, tmp_path, f"SELECT id FROM {ks}.t LIMIT 3", ok=False)
    finally:
        cassandra.faults.clear()
    said = [line for line in out.stderr.splitlines() if "overloaded" in line.lower()]
    assert out.returncode != 0 and len(said) == 1, out.stderr
    assert "Traceback" not in out.stderr
    again = cqlsh_ext(cassandra, tmp_path, f"SELECT id FROM {ks}.t LIMIT 3")
    assert "(3 rows)" in again.stdout


def test_the_environment_forces_worker_processes_and_parallel_wins(cassandra, skewed, tmp_path):
    # CQLSH_EXT_SCAN_WORKERS, the one override of the worker policy (the server's estimate of a
    # table written seconds ago is empty), holds for STATS as for payload queries; PARALLEL n wins.
    ks, _truth, total_rows = skewed
    env = {**isolated_env(tmp_path), "CQLSH_EXT_SCAN_WORKERS": "2"}

    def stats(option: str) -> dict:
        proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-e",
                               f"COMPRESSION STATS JSON {option}SELECT data FROM {ks}.t"],
                              env=env, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        return json_docs(proc.stdout)[0]

    forced, one = stats(""), stats("PARALLEL 1 ")
    assert forced["scan"] == "2 worker processes" and one["scan"] == f"{STREAMS} parallel streams"
    assert forced["rows"] == one["rows"] == total_rows
    assert forced["columns"][0]["stored_bytes"] == one["columns"][0]["stored_bytes"]
