"""--read-only: the shell keeps to the rules `cqlsh-ext mcp`'s guard keeps to (its gate's reads, its
policy's tables), each refusal one line before anything runs, exit code 3; and what it lets through
runs as ever. What was refused is checked on the server (nothing written, nothing dropped), with the
driver, not with the shell."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from shell_runner import ext, said_lines


def _stored(cassandra, numbered: str, n: int) -> object:  # type: ignore[no-untyped-def]
    session = cassandra.session()
    try:
        row = session.execute(f"SELECT data FROM {numbered} WHERE p = 0 AND n = {n}").one()
        return json.loads(gzip.decompress(row.data)) if row is not None else None
    finally:
        session.shutdown()


@pytest.mark.parametrize(("statement", "named"), [
    ("INSERT INTO {t} (p, n) VALUES (0, 5000)", "INSERT"),
    ("DROP TABLE {t}", "DROP TABLE"),
    ("TRUNCATE {t}", "TRUNCATE"),
    ("ALTER TABLE {t} ADD extra text", "ALTER TABLE"),
    ("UPDATE {t} SET data.word = 'changed' WHERE p = 0 AND n = 3", "UPDATE"),  # an edit of a payload path
    ("DELETE data.word FROM {t} WHERE p = 0 AND n = 3", "DELETE"),
    ("COPY {t} FROM '/nonexistent.jsonl'", "COPY"),  # a load
    ("COMPRESSION REWRITE {t}.data TO zstd", "COMPRESSION REWRITE"),
    ("UNDO LAST", "UNDO"),
    ("CREATE KEYSPACE never_made WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
     "CREATE KEYSPACE"),
])
def test_what_writes_is_refused_in_one_line_and_nothing_changes(cassandra, home: Path, numbered: str,
                                                                 statement: str, named: str) -> None:
    result = ext(cassandra, home, "--read-only", "-e", statement.format(t=numbered))
    assert result.returncode == 3, result.stderr
    lines = said_lines(result.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("refused: cqlsh-ext --read-only runs reads only, and ") and named in lines[0]
    assert not result.stdout.strip()
    assert _stored(cassandra, numbered, 3) == {"n": 3, "word": "w3"}
    session = cassandra.session()
    try:
        keyspace, table = numbered.split(".")
        meta = session.cluster.metadata
        session.cluster.refresh_schema_metadata()
        assert table in meta.keyspaces[keyspace].tables and "extra" not in meta.keyspaces[keyspace].tables[
            table].columns
        assert "never_made" not in meta.keyspaces
        assert not list(session.execute(f"SELECT n FROM {numbered} WHERE p = 0 AND n = 5000"))
    finally:
        session.shutdown()


def test_compression_trial_is_refused_it_writes_scratch_tables(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "--read-only", "-e", f"COMPRESSION TRIAL {numbered}.data INTO scratch")
    assert result.returncode == 3
    assert said_lines(result.stderr) == [
        "refused: cqlsh-ext --read-only runs reads only, and COMPRESSION TRIAL writes the database"]


@pytest.mark.parametrize("statement", [
    "SELECT role, salted_hash FROM system_auth.roles",
    "SELECT * FROM system.paxos",
    "SELECT * FROM system_views.system_properties",
])
def test_the_tables_the_guard_never_reads_are_refused(cassandra, home: Path, statement: str) -> None:
    result = ext(cassandra, home, "--read-only", "-e", statement)
    assert result.returncode == 3
    assert said_lines(result.stderr)[0].startswith("refused: ")
    assert "cqlsh-ext --read-only" in said_lines(result.stderr)[0]
    assert not result.stdout.strip()


def test_every_read_and_session_command_runs(cassandra, home: Path, numbered: str) -> None:
    keyspace, table = numbered.split(".")
    statements = [f"USE {keyspace}", "CONSISTENCY ONE", "PAGING 50", "EXPAND OFF", "OUTPUT FORMAT json",
                  f"DECODE '{numbered}.data' AS 'gzip > json'",
                  f"SELECT n FROM {table} WHERE p = 0 AND n = 1",
                  f"SELECT data.word FROM {table} WHERE p = 0 AND n = 2",
                  f"DESCRIBE TABLE {table}", f"DESCRIBE PAYLOAD {table}.data SAMPLE 20",
                  f"COMPRESSION STATS SAMPLE 20 {table}", f"COMPRESSION SETTINGS SAMPLE 20 {table}",
                  f"COMPRESSION ADVISE SAMPLE 20 {table}",
                  f"INSPECT SELECT data FROM {table} WHERE p = 0 AND n = 4",
                  "SELECT keyspace_name FROM system_schema.keyspaces"]
    result = ext(cassandra, home, "--read-only", "-e", "; ".join(statements))
    assert result.returncode == 0, result.stderr
    assert not any(line.startswith("refused") for line in said_lines(result.stderr)), result.stderr
    assert '{"n": 1}' in result.stdout and '"data.word": "w2"' in result.stdout


def test_a_policy_file_s_tables_are_refused_named_either_way(cassandra, home: Path, numbered: str,
                                                            demo_keyspace: str) -> None:
    keyspace, table = numbered.split(".")
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    for args in (["-e", f"SELECT n FROM {numbered} LIMIT 1"],
                 ["-k", keyspace, "-e", f"SELECT n FROM {table} LIMIT 1"],
                 ["-k", keyspace, "-e", f"COMPRESSION STATS SAMPLE 10 {table}"],
                 ["-e", f"INSPECT SELECT data FROM {numbered} LIMIT 1"]):
        result = ext(cassandra, home, "--read-only", "--policy", str(policy), *args)
        assert result.returncode == 3, (args, result.stderr)
        # (named by the file's name, as MCP names it: the refusal never spells a server's path)
        assert said_lines(result.stderr) == [
            f"refused: table {keyspace}.{table} is denied by the policy ({policy.name}): cqlsh-ext "
            "--read-only never reads it"], args
        assert not result.stdout.strip()
    other = ext(cassandra, home, "--read-only", "--policy", str(policy), "--output-format", "json",
                "-e", f"SELECT name FROM {demo_keyspace}.blob_formats WHERE name = 'gzip'")
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout) == {"name": "gzip"}


def test_a_table_whose_values_the_policy_redacts_is_refused(cassandra, home: Path, numbered: str) -> None:
    policy = home / "policy.toml"
    policy.write_text(f'[redact]\ncolumns = ["{numbered}.data.word"]\n')
    result = ext(cassandra, home, "--read-only", "--policy", str(policy), "-e", f"SELECT n FROM {numbered}")
    assert result.returncode == 3
    assert said_lines(result.stderr) == [
        f"refused: the policy ({policy.name}) redacts values of {numbered}, and cqlsh-ext --read-only "
        "redacts nothing: cqlsh-ext mcp answers it redacted"]


def test_a_policy_file_that_cannot_be_read_is_a_usage_error(cassandra, home: Path) -> None:
    policy = home / "policy.toml"
    policy.write_text("[tables\n")
    result = ext(cassandra, home, "--read-only", "--policy", str(policy), "-e", "SELECT 1")
    assert result.returncode == 2
    assert said_lines(result.stderr)[0].startswith(f"cqlsh-ext: error: {policy}: not TOML")


def test_a_word_that_starts_no_statement_is_refused_as_no_read_never_a_write(cassandra, home: Path) -> None:
    """PRUNE is no CQL of Cassandra's (its parser: cql.first_words), so --read-only does not say it
    writes: it is no read the rule knows, refused in one line as any other word is."""
    result = ext(cassandra, home, "--read-only", "-e", "PRUNE MATERIALIZED VIEW ks.v")
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr) == [
        "refused: cqlsh-ext --read-only runs reads only, and PRUNE is no read the rule knows"]
