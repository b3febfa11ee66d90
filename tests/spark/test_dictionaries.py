"""`cqlsh-ext spark` reads values written with dictionaries (python-zstandard with a trained
dictionary, zlib with zdict) once they are named, as the shell does: each task carries the
driver's dictionaries to its executor, which read no settings of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dictionary_values import make

from .conftest import json_lines, run_spark

pytestmark = pytest.mark.spark


def test_spark_tasks_read_values_written_with_dictionaries(cassandra, tmp_path: Path):
    (tmp_path / "dictionaries").mkdir()
    made = make(tmp_path / "dictionaries")
    ks = cassandra.create_keyspace("spark_dicts")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    for n in range(30):
        session.execute(insert, (n, made.zstd_values[n]))
        session.execute(insert, (100 + n, made.zlib_values[n]))
    session.shutdown()
    statements = tmp_path / "statements.cql"
    paid_query = f"SELECT count(*) FROM {ks}.orders WHERE data.status = 'PAID' ALLOW FILTERING CONFIRM"
    statements.write_text(f"COMPRESSION STATS JSON {ks}.orders;\n{paid_query};\n")
    named = ["--dictionary", str(made.zstd_file), "--dictionary", str(made.zlib_file)]
    out = run_spark(cassandra, tmp_path, ["--master", "local[2]", "--output-format", "json", *named,
                                          "-f", str(statements)])
    assert out.returncode == 0, out.stderr
    stats, count = json_lines(out.stdout)
    column = stats["columns"][0]
    assert column["by_codec"] == {"zstd": 30, "zlib": 30} and column["undecodable"] == {}, column
    paid = sum(1 for n in range(30) if json.loads(made.docs[n])["status"] == "PAID")
    assert paid and count == {"count": 2 * paid}, count
    # Without them the executors say which dictionary each value needs.
    out = run_spark(cassandra, tmp_path, ["--master", "local[2]", "--output-format", "json",
                                          "-e", f"COMPRESSION STATS JSON {ks}.orders"])
    assert out.returncode == 0, out.stderr
    (stats,) = json_lines(out.stdout)
    assert stats["columns"][0]["reasons"] == {
        f"zlib stream needs a preset dictionary (DICTID 0x{made.zlib_id:08x})": 30,
        f"zstd frame needs dictionary ID {made.zstd_id}": 30}
