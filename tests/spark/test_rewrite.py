"""COMPRESSION REWRITE from Spark's executors (local mode): the same statement, token ranges per
task, the pace divided among the tasks, a journal part per task in one directory that the shell's
UNDO and RESUME read whole, and the dictionaries carried to the executors, which write with them."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
import zstandard
from dictionary_values import make
from shell_runner import journal_of

from .conftest import run_shell, run_spark

pytestmark = pytest.mark.spark


def test_a_rewrite_runs_from_the_executors_and_the_shell_undoes_it(cassandra, tmp_path: Path) -> None:
    (tmp_path / "dictionaries").mkdir()
    made = make(tmp_path / "dictionaries")
    ks = cassandra.create_keyspace("spark_rewrite")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    original = {n: gzip.compress(doc, mtime=0) for n, doc in enumerate(made.docs)}
    for n, value in original.items():
        session.execute(insert, (n, value))
    journals = tmp_path / "journals"
    named = ["--dictionary", str(made.zstd_file), "--journal-dir", str(journals)]
    statement = f"COMPRESSION REWRITE {ks}.orders.data AS 'zstd:dict={made.zstd_id}' PACE 400 CONFIRM"
    out = run_spark(cassandra, tmp_path, ["--master", "local[2]", *named, "-e", statement])
    assert out.returncode == 0, out.stderr
    directory = journal_of(out.stdout)
    assert directory.parent == journals and directory.is_dir()
    parts = sorted(directory.glob("part-*.jsonl"))
    assert len(parts) >= 2, parts  # one per task
    assert f"{len(original)} rows rewritten" in out.stdout, out.stdout
    assert "Spark tasks (local[2])" in out.stdout
    # Written by the executors with the dictionary (python-zstandard reads them back with it).
    reader = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(made.zstd_file.read_bytes()))
    now = {row.id: row.data for row in session.execute("SELECT id, data FROM orders")}
    assert all(reader.decompress(now[n]) == made.docs[n] for n in original)
    assert all(zstandard.get_frame_parameters(v).dict_id == made.zstd_id for v in now.values())
    # Each task paced at PACE / tasks at once: together never over PACE by more than their buckets.
    sent: dict[int, int] = {}
    for part in parts:
        for line in part.read_text().splitlines()[1:]:
            entry = json.loads(line)
            if "sent" in entry:
                second = int(entry["sent"])
                sent[second] = sent.get(second, 0) + 1
    assert max(sent.values()) <= 400 + 2 * (400 / 2 / 10 + 1)  # two tasks at once, each with its bucket
    heads = [json.loads(part.read_text().splitlines()[0]) for part in parts]
    # Each part's head, sealed by the driver, holds the request (RESUME's source); one run, a part
    # number each (the executors seal the rest of their part with the run's own key).
    assert all(h["kind"] == "rewrite" and h["request"]["spec"] == f"zstd:dict={made.zstd_id}"
               and h["request"]["pace"] == 400 and "statement" not in h for h in heads)
    assert len({h["run"] for h in heads}) == 1 and sorted(h["part"] for h in heads) == list(range(len(parts)))
    os.chown(parts[-1], 4242, 4242)  # an executor running as another user: its part counts by its seal
    # RESUME of the directory: every range finished, nothing left.
    again = run_spark(cassandra, tmp_path, ["--master", "local[2]", *named,
                                            "-e", f"COMPRESSION REWRITE RESUME '{directory}' CONFIRM"])
    assert again.returncode == 0, again.stderr
    assert "16 of 16 token ranges finished" in again.stdout, again.stdout
    assert "nothing left to rewrite" in again.stdout
    # The shell's UNDO reads the parts whole and writes every old value back.
    undo = run_shell(cassandra, tmp_path, f"UNDO '{directory}' CONFIRM", "--journal-dir", str(journals))
    assert f"{len(original)} rows written back" in undo.stdout, undo.stdout + undo.stderr
    assert {row.id: row.data for row in session.execute("SELECT id, data FROM orders")} == original
    session.shutdown()
