"""COMPRESSION REWRITE from Spark's executors (local mode): the same statement, token ranges per
task, the pace divided among the tasks (write units counted second by second from the parts'
journal lines), a journal part per task in one directory that the shell's UNDO and RESUME read
whole, each part checked as a journal is (another user's is refused), and the dictionaries carried
to the executors, which write with them."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
import zstandard
from dictionary_values import make
from shell_runner import journal_of

from cqlsh_ext.scanning.capacity import wcu

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
    pace = 40  # 200 rows of a unit or two: several seconds, where an unpaced run takes well under one
    statement = f"COMPRESSION REWRITE {ks}.orders.data AS 'zstd:dict={made.zstd_id}' PACE {pace} CONFIRM"
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
    # Each task paced at PACE / the tasks at once (local[2]: 2): over any second a task's write
    # units (1 per started KB of the key and the new value, at the moment its pace let the row go)
    # stay within its share and a row's units; over the run, all of them within PACE (and the
    # buckets' tenth of a second each task starts with).
    share = pace / 2
    sent = {part: [(entry["sent"], wcu(4 + len(bytes.fromhex(entry["new"]))))
                   for entry in map(json.loads, part.read_text().splitlines()[1:]) if "sent" in entry]
            for part in parts}
    every = sorted(row for rows in sent.values() for row in rows)
    assert len(every) == len(original)
    largest = max(units for _, units in every)
    for part, rows in sent.items():
        busiest = max(sum(units for t, units in rows if start <= t < start + 1.0) for start, _ in rows)
        assert busiest <= share + largest, (part.name, busiest)
    total = sum(units for _, units in every)
    assert total > 2 * pace  # over two seconds at PACE: unpaced, it would take well under one
    assert total - len(parts) * (share / 10 + largest) <= pace * (every[-1][0] - every[0][0])
    heads = [json.loads(part.read_text().splitlines()[0]) for part in parts]
    # Each part's head, sealed by the driver, holds the request (RESUME's source); one run, a part
    # number each (the executors seal the rest of their part with the run's own key).
    assert all(h["kind"] == "rewrite" and h["request"]["spec"] == f"zstd:dict={made.zstd_id}"
               and h["request"]["pace"] == pace and "statement" not in h for h in heads)
    assert len({h["run"] for h in heads}) == 1 and sorted(h["part"] for h in heads) == list(range(len(parts)))
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
    # A part is checked as any journal is: another user's is refused, naming it.
    os.chown(parts[-1], 4242, 4242)
    refused = run_shell(cassandra, tmp_path, f"UNDO '{directory}'", "--journal-dir", str(journals))
    assert f"undo: {parts[-1]} belongs to another user (uid 4242)" in refused.stderr, refused.stderr
    session.shutdown()
