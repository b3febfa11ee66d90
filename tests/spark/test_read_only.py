"""`cqlsh-ext spark --read-only` and `--policy FILE` (issues 105 and 107): the shell's flags, and the
read-only rule the shell asks (agent.read_only), asked of every statement before Spark starts. A
refused statement is the shell's one line, exit code 3, and nothing is written; a read the rule
allows runs on Spark and is answered.

Each refusal is run with a Spark master no Spark can start (`NO_SPARK`): exit code 3 is then an
answer given without starting Spark (a started Spark would fail, exit code 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Table, json_lines, make_table, order, run_spark

pytestmark = pytest.mark.spark

#: A master URL Spark cannot parse: a run that reached Spark's start would end there, exit code 2.
NO_SPARK = ["--master", "no-spark://refused-before-spark-starts"]


@pytest.fixture(scope="module")
def table(cassandra) -> Table:
    return make_table(cassandra, 40)


def _refused(proc) -> str:
    """The one line a refusal is, exit code 3, nothing on standard output."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 3, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert not proc.stdout.strip()
    return lines[0]


def _writes(what: str) -> str:
    """The shell's refusal of a statement that writes the database, word for word."""
    return f"refused: cqlsh-ext --read-only runs reads only, and {what} writes the database"


def _rows(cassandra, table: Table) -> list[tuple]:
    session = cassandra.session(table.keyspace)
    try:
        return sorted(tuple(row) for row in session.execute(f"SELECT id, data FROM {table.name}"))
    finally:
        session.shutdown()


def test_a_write_is_refused_in_the_shell_s_words_and_nothing_is_written(cassandra, table: Table,
                                                                       tmp_path: Path) -> None:
    before = _rows(cassandra, table)
    insert = f"INSERT INTO {table.qualified} (id, data) VALUES (1000, 0xcafe)"
    proc = run_spark(cassandra, tmp_path, ["--read-only", *NO_SPARK, "-e", insert])
    assert _refused(proc) == _writes("INSERT")
    assert _rows(cassandra, table) == before


def test_a_rewrite_is_refused_and_nothing_is_written(cassandra, table: Table, tmp_path: Path) -> None:
    before = _rows(cassandra, table)
    rewrite = f"COMPRESSION REWRITE {table.qualified}.data USING 'zstd' CONFIRM"
    proc = run_spark(cassandra, tmp_path, ["--read-only", *NO_SPARK, "-e", rewrite])
    assert _refused(proc) == _writes("COMPRESSION REWRITE")
    assert _rows(cassandra, table) == before


@pytest.mark.parametrize(("keyspace", "statement"), [
    (None, "SELECT role, salted_hash FROM system_auth.roles"),
    # A name alone, in -k's keyspace: the table the server names when it prepares the statement.
    ("system_auth", "SELECT role, salted_hash FROM roles"),
    # A feature's table.column in the keyspace in use; the SELECT a feature reads.
    ("system_auth", "DESCRIBE PAYLOAD roles.salted_hash"),
    (None, "COMPRESSION STATS SELECT role, salted_hash FROM system_auth.roles"),
], ids=["named", "in-the-keyspace-in-use", "describe-payload", "stats-select"])
def test_the_credentials_table_is_refused(cassandra, tmp_path: Path, keyspace: str | None,
                                          statement: str) -> None:
    in_use = ["-k", keyspace] if keyspace else []
    proc = run_spark(cassandra, tmp_path, ["--read-only", *NO_SPARK, *in_use, "-e", statement])
    assert _refused(proc) == ("refused: table system_auth.roles holds credentials or other sessions' "
                              "statements: cqlsh-ext --read-only never reads it")


def test_a_statement_the_server_would_read_otherwise_is_refused(cassandra, table: Table,
                                                                tmp_path: Path) -> None:
    # The server ends the `--` comment at the carriage return and reads system_auth.roles; cqlsh's
    # lexer reads the comment on to the newline, and the table named after it (issue 105).
    statement = (f"SELECT role, salted_hash FROM --\r system_auth.roles /*\n {table.qualified} -- */\n"
                 " LIMIT 2")
    proc = run_spark(cassandra, tmp_path, ["--read-only", *NO_SPARK, "-e", statement])
    assert _refused(proc) == ("refused: cqlsh-ext --read-only reads a statement only as the server reads "
                              "it, and a carriage return at position 32 is not followed by a newline")


@pytest.mark.parametrize("in_use", [False, True], ids=["named", "in-the-keyspace-in-use"])
def test_a_policy_file_refuses_the_table_it_denies(cassandra, table: Table, tmp_path: Path,
                                                   in_use: bool) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{table.qualified}"]\n')
    where = ["-k", table.keyspace, "-e", f"SELECT id, data.amount FROM {table.name} WHERE "
             "data.status = 'PAID' ALLOW FILTERING CONFIRM"] if in_use else \
        ["-e", f"COMPRESSION STATS {table.qualified}"]
    # --policy alone: it implies --read-only, as in the shell.
    proc = run_spark(cassandra, tmp_path, ["--policy", str(policy), *NO_SPARK, *where])
    assert _refused(proc) == (f"refused: table {table.qualified} is denied by the policy ({policy.name}): "
                              "cqlsh-ext --read-only never reads it")


def test_cqlshrc_s_read_only_is_kept_to(cassandra, table: Table, tmp_path: Path) -> None:
    rc = tmp_path / "cqlshrc"
    rc.write_text("[cqlsh_ext]\nread_only = true\n")
    proc = run_spark(cassandra, tmp_path, ["--cqlshrc", str(rc), *NO_SPARK, "-e",
                                           f"DELETE FROM {table.qualified} WHERE id = 1"])
    assert _refused(proc) == _writes("DELETE")


def test_every_statement_of_a_file_is_checked_before_the_first_runs(cassandra, table: Table,
                                                                    tmp_path: Path) -> None:
    script = tmp_path / "statements.cql"
    script.write_text(f"COMPRESSION STATS {table.qualified};\nTRUNCATE {table.qualified};\n")
    before = _rows(cassandra, table)
    proc = run_spark(cassandra, tmp_path, ["--read-only", *NO_SPARK, "-f", str(script)])
    assert _refused(proc) == _writes("TRUNCATE")
    assert _rows(cassandra, table) == before


def test_a_payload_select_the_rule_allows_runs_on_spark(shell_runs, read_only_run) -> None:
    """READ_ONLY_SELECT on `runs`' table, run by `read_only_run` (its own run until it was one of
    that run's: a Spark start saved)."""
    table = shell_runs.table
    paid = {i: order(i)["amount"] for i, value in table.values.items()
            if value is not None and i % 23 and order(i)["status"] == "PAID"}
    assert paid
    assert {row["id"]: row["data.amount"] for row in json_lines(read_only_run.stdout)
            if set(row) == {"id", "data.amount"}} == paid


def test_help_says_read_only_and_policy(tmp_path: Path) -> None:
    import subprocess

    from shell_runner import CQLSH_EXT, isolated_env

    shown = subprocess.run([CQLSH_EXT, "spark", "--help"], cwd=tmp_path, env=isolated_env(tmp_path),
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert "[--read-only] [--policy FILE]" in said
    assert "--policy FILE implies --read-only" in said  # the shell's own flag, its own help
    assert "exit code 3, before Spark starts" in said
