"""`cqlsh-ext spark`'s errors: one line on stderr, exit code 2, for each way it cannot run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .conftest import run_spark

TABLE = "system_schema.tables"  # exists on every server; its errors come before any blob matters


def _one_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("cqlsh-ext spark: ")
    return lines[0]


@pytest.mark.parametrize(("statement", "said"), [
    ("INSERT INTO ks.t (a) VALUES (1)",
     "Spark mode runs DESCRIBE PAYLOAD, COMPRESSION STATS, COMPRESSION REWRITE, SELECT and COPY (SELECT ...) "
     "TO statements; INSERT is the shell's"),
    # A declared statement whose Statement names no Spark job: refused by its words.
    ("COMPRESSION SETTINGS ks.t", "; COMPRESSION SETTINGS is the shell's"),
    (f"DESCRIBE PAYLOAD {TABLE}.keyspace_name SAMPLE 10", "DESCRIBE PAYLOAD: SAMPLE is the shell's"),
    (f"COMPRESSION STATS SAMPLE {TABLE}", "COMPRESSION STATS SAMPLE is the shell's"),
    (f"COMPRESSION STATS PARALLEL 4 {TABLE}", "COMPRESSION STATS PARALLEL is the shell's"),
    (f"COMPRESSION STATS SELECT keyspace_name FROM {TABLE} LIMIT 3", "takes a whole-table SELECT"),
    ("COMPRESSION STATS SELECT count(*) FROM ks.t", "takes a whole-table SELECT"),
    # Read from compression_stats' declaration, as the shell reads it: the same refusals.
    ("COMPRESSION STATS", "COMPRESSION STATS: table is required"),
    ("COMPRESSION STATS t", "COMPRESSION STATS: table must be keyspace.table (no keyspace is in use)"),
    (f"COMPRESSION STATS {TABLE} column = c", "COMPRESSION STATS: 'column' is no argument of it"),
    ("COPY (SELECT * FROM ks.t) TO 'out' WITH FORMAT = 'parquet' AND SCHEMA = 'k=int64'",
     "SAMPLE_ROWS and SCHEMA are the shell's"),
])
def test_statements_spark_mode_does_not_run(tmp_path: Path, statement: str, said: str):
    # Refused before anything connects or starts: 127.0.0.1:1 is never reached.
    server = type("Unreachable", (), {"cqlsh_args": ["127.0.0.1", "1"]})()
    assert said in _one_line(run_spark(server, tmp_path, ["-e", statement]))


@pytest.mark.parametrize("flag", ["--max-rows=3", "--timeout=5"])
def test_a_shell_option_spark_mode_does_not_take_is_named(tmp_path: Path, flag: str):
    # cqlsh read it as the host name and the host as the port: "'127.0.0.1' is not a valid port number".
    server = type("Unreachable", (), {"cqlsh_args": [flag, "127.0.0.1", "1"]})()
    line = _one_line(run_spark(server, tmp_path, ["-e", f"SELECT * FROM {TABLE}"]))
    assert line == f"cqlsh-ext spark: unknown option {flag.split('=')[0]}: cqlsh-ext spark --help lists them"


def toy_job(request: object, asjson: bool) -> tuple[str, object, bool]:
    return ("toy", request, asjson)


def test_a_declared_statement_runs_the_spark_job_its_declaration_names(monkeypatch: pytest.MonkeyPatch):
    """spark.parse has no feature of its own: a statement runs on Spark when its declaration names
    the job (Statement.spark), handed the request the shell reads from the declaration."""
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.feature import FEATURES, Service
    from cqlsh_ext.spark.parse import classify
    from cqlsh_ext.spark.session import SparkError

    statement = Lexed("COMPRESSION SETTINGS JSON ks.t")
    with pytest.raises(SparkError, match="COMPRESSION SETTINGS is the shell's"):
        classify(statement)
    settings = declared(plugins=False)["compression_settings"]
    assert settings.statement is not None
    monkeypatch.setitem(FEATURES, "compression_settings", settings._replace(
        statement=settings.statement._replace(spark=Service(__name__, "toy_job"))))
    kind, request, asjson = classify(statement)
    assert (kind, request.keyspace, request.table, asjson) == ("toy", "ks", "t", True)


def test_without_pyspark_says_how_to_add_it_here(tmp_path: Path):
    # This checkout's .venv, where pyspark cannot be imported: bin/setup --spark adds it.
    hidden = tmp_path / "no_pyspark"
    hidden.mkdir()
    (hidden / "pyspark.py").write_text("raise ImportError('No module named pyspark')\n")
    server = type("Unreachable", (), {"cqlsh_args": ["127.0.0.1", "1"]})()
    proc = run_spark(server, tmp_path, ["-e", f"COMPRESSION STATS {TABLE}"], env={"PYTHONPATH": str(hidden)})
    setup = Path(__file__).resolve().parents[2] / "bin" / "setup"
    assert _one_line(proc) == f"cqlsh-ext spark: Spark mode needs pyspark: run {setup} --spark"


@pytest.mark.spark
def test_no_java(tmp_path: Path):
    server = type("Unreachable", (), {"cqlsh_args": ["127.0.0.1", "1"]})()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    env_path = {"PATH": str(bin_dir), "JAVA_HOME": ""}
    proc = run_spark(server, tmp_path, ["-e", f"COMPRESSION STATS {TABLE}"], env=env_path)
    assert _one_line(proc) == "cqlsh-ext spark: Spark needs Java (17): no java on PATH"


@pytest.mark.spark
def test_spark_cannot_start(cassandra, tmp_path: Path):
    line = _one_line(run_spark(cassandra, tmp_path,
                               ["--master", "nowhere://x", "-e", "COMPRESSION STATS system.batches"]))
    assert line.startswith("cqlsh-ext spark: Spark could not start: ") and "Master must" in line
    log = Path(line.rsplit("(Spark's output: ", 1)[1].rstrip(")"))
    assert "Master must" in log.read_text()
    log.unlink()


@pytest.mark.spark
def test_connector_cannot_reach_the_host(cassandra, tmp_path: Path):
    # The Python driver reaches the server; the connector is pointed at a port nothing listens on.
    line = _one_line(run_spark(cassandra, tmp_path, ["--master", "local[1]", "--conf",
                                                     "spark.cassandra.connection.port=1",
                                                     "-e", "COMPRESSION STATS system.batches"]))
    assert "through the Spark connector failed: java.io.IOException: Failed to open native connection to " \
           "Cassandra at {127.0.0.1:1}" in line
