"""`--policy FILE` alone: a policy is only ever a read-only policy, so naming one turns --read-only
on (the flag, or cqlshrc's `policy` key), and its denied tables are refused, exit code 3: never a
policy taken and kept to by nothing (issue 105)."""

from __future__ import annotations

from pathlib import Path

from shell_runner import ext, said_lines


def test_a_policy_alone_refuses_its_tables_and_what_writes(cassandra, home: Path, numbered: str) -> None:
    keyspace, table = numbered.split(".")
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    read = ext(cassandra, home, "--policy", str(policy), "-e", f"SELECT n FROM {numbered} LIMIT 1")
    assert read.returncode == 3, read.stderr
    assert said_lines(read.stderr) == [
        f"refused: table {keyspace}.{table} is denied by the policy ({policy.name}): cqlsh-ext "
        "--read-only never reads it"]
    assert not read.stdout.strip()
    write = ext(cassandra, home, "--policy", str(policy), "-e",
                f"DELETE FROM {numbered} WHERE p = 0 AND n = 0")
    assert write.returncode == 3, write.stderr
    assert said_lines(write.stderr)[0] == \
        "refused: cqlsh-ext --read-only runs reads only, and DELETE writes the database"


def test_cqlshrc_s_policy_alone_is_read_only_too(cassandra, home: Path, numbered: str) -> None:
    keyspace, table = numbered.split(".")
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    rc = home / "cqlshrc"
    rc.write_text(f"[cqlsh_ext]\npolicy = {policy}\n")
    result = ext(cassandra, home, "--cqlshrc", str(rc), "-e", f"SELECT n FROM {numbered} LIMIT 1")
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr)[0].startswith(f"refused: table {keyspace}.{table} is denied")


def test_help_and_the_spec_say_a_policy_implies_read_only(home: Path) -> None:
    import json

    from shell_runner import CQLSH_EXT, run

    spec = json.loads(run(CQLSH_EXT, ["--spec"], home).stdout)
    assert spec["read_only"]["turned_on_by"] == ["--read-only", "--policy"]
    policy = next(flag for flag in spec["flags"] if flag["flags"] == ["--policy"])
    assert policy["help"].startswith("implies --read-only")
    shown = run(CQLSH_EXT, ["--help"], home).stdout
    assert "implies --read-only" in " ".join(shown.split())
