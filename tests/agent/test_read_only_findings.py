"""Issue 105's findings, each as an attacker tried it on the shell's --read-only (features/read_rule.py,
the rule every read-only door keeps to), driven through the real binary (-e, -f, a pipe) against the
real server: a comment that ends at a carriage return does not hide the table the server reads; SAVE
DICTIONARY and CAPTURE write no file; DESCRIBE PAYLOAD table.column reads the column of the table in
the keyspace in use, and a denied one is refused; SHOW SESSION reads no trace. Every refusal is one
line, exit code 3, and nothing is printed of what was refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from shell_runner import ext, said_lines
from staff_view import SALARY, staff_and_its_view

#: Finding 1's statement, word for word (its decoy a table of the demo's keyspace).
ATTACK = ("SELECT role, salted_hash FROM --\r system_auth.roles /*\n {keyspace}.blob_formats -- */\n "
          "LIMIT 2")


def _no_hash(text: str) -> bool:
    return "$2a$" not in text


@pytest.mark.parametrize("way", ["-e", "-f", "stdin", "cqlshrc"])
def test_a_comment_ended_by_a_carriage_return_hides_no_table(cassandra, home: Path, demo_keyspace: str,
                                                             way: str) -> None:
    statement = ATTACK.format(keyspace=demo_keyspace)
    if way == "cqlshrc":  # read_only set in cqlshrc's [cqlsh_ext], no flag
        (home / ".cassandra").mkdir(exist_ok=True)
        (home / ".cassandra" / "cqlshrc").write_text("[cqlsh_ext]\nread_only = true\n")
        result = ext(cassandra, home, stdin=statement + ";\n")
    elif way == "-e":
        result = ext(cassandra, home, "--read-only", "-e", statement)
    elif way == "-f":
        script = home / "attack.cql"
        script.write_text(statement + ";\n", newline="")  # the \r kept as written
        result = ext(cassandra, home, "--read-only", "-f", str(script))
    else:
        result = ext(cassandra, home, "--read-only", stdin=statement + ";\n")
    assert _no_hash(result.stdout) and _no_hash(result.stderr), result.stdout
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    lines = said_lines(result.stderr)
    # (a script's and a pipe's lines are said at their place: <stdin>:4:refused: ...)
    assert len(lines) == 1 and "refused: cqlsh-ext --read-only reads a statement only as the server reads " \
        "it, and a carriage return at position 32 is not followed by a newline" in lines[0], lines


def test_the_server_names_the_table_a_select_reads(cassandra, home: Path, demo_keyspace: str) -> None:
    """Past the text's reading: with `-k system_auth`, `roles` is the credentials table wherever the
    text seems to say otherwise; the server's prepared statement names it."""
    result = ext(cassandra, home, "--read-only", "-k", "system_auth", "-e",
                 "SELECT role, salted_hash FROM roles LIMIT 2")
    assert _no_hash(result.stdout), result.stdout
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr) == [
        "refused: table system_auth.roles holds credentials or other sessions' statements: "
        "cqlsh-ext --read-only never reads it"]


@pytest.mark.parametrize("clause", ["SAVE DICTIONARY", "save dictionary", "Save /* a */ Dictionary",
                                    "SAVE\tDICTIONARY"])
def test_save_dictionary_writes_no_file(cassandra, home: Path, numbered: str, clause: str) -> None:
    kept = home / "kept.txt"
    kept.write_text("the user's own file\n")
    for statement in (f"COMPRESSION ADVISE SAMPLE 20 {numbered} {clause} '{kept}'",
                      f"COMPRESSION ADVISE SELECT data FROM {numbered} LIMIT 20 {clause} '{kept}'"):
        result = ext(cassandra, home, "--read-only", "-e", statement)
        assert kept.read_text() == "the user's own file\n", statement
        assert result.returncode == 3, (statement, result.stdout, result.stderr)
        assert said_lines(result.stderr) == [
            "refused: cqlsh-ext --read-only runs reads only, and COMPRESSION ADVISE ... SAVE DICTIONARY "
            "writes a local file"], statement
        assert not result.stdout.strip()


def test_capture_appends_to_no_file(cassandra, home: Path) -> None:
    rc = home / "rc"
    rc.write_text("# the user's rc\n")
    result = ext(cassandra, home, "--read-only", "-e",
                 f"CAPTURE '{rc}'; SELECT (text)'$(touch planted)' AS x FROM system.local")
    assert rc.read_text() == "# the user's rc\n"
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr)[0] == (
        "refused: cqlsh-ext --read-only runs reads only, and CAPTURE appends to a local file")


def test_describe_payload_reads_the_column_of_the_table_in_use(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "--read-only", "-k", "system_auth", "-e",
                 "DESCRIBE PAYLOAD roles.salted_hash SAMPLE 5")
    assert _no_hash(result.stdout), result.stdout
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr) == [
        "refused: table system_auth.roles holds credentials or other sessions' statements: "
        "cqlsh-ext --read-only never reads it"]
    keyspace, table = numbered.split(".")
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    for statement in (f"DESCRIBE PAYLOAD {table}.data SAMPLE 5", f"COMPRESSION STATS SAMPLE 5 {table}",
                      f"INSPECT SELECT data FROM {table} LIMIT 1"):
        denied = ext(cassandra, home, "--read-only", "--policy", str(policy), "-k", keyspace, "-e", statement)
        assert denied.returncode == 3, (statement, denied.stderr)
        assert said_lines(denied.stderr) == [
            f"refused: table {keyspace}.{table} is denied by the policy ({policy.name}): cqlsh-ext "
            "--read-only never reads it"], statement


def test_show_session_reads_no_trace(cassandra, home: Path, numbered: str) -> None:
    session = cassandra.session()
    try:
        traced = session.execute(f"SELECT n FROM {numbered} WHERE p = 0 AND n = 7", trace=True)
        trace_id = traced.get_query_trace(max_wait_sec=30).trace_id
    finally:
        session.shutdown()
    result = ext(cassandra, home, "--read-only", "-e", f"SHOW SESSION {trace_id}")
    assert numbered.split(".")[1] not in result.stdout, result.stdout
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr) == [
        "refused: cqlsh-ext --read-only runs reads only, and SHOW SESSION reads system_traces: another "
        "session's statements"]


def test_tracing_on_is_refused_it_has_the_server_write_traces(cassandra, home: Path, numbered: str) -> None:
    """TRACING ON would have the server write each statement's trace into system_traces (the shell
    prints it after reading it back from there): refused; TRACING OFF and TRACING alone run."""
    result = ext(cassandra, home, "--read-only", "-e",
                 f"TRACING ON; SELECT n FROM {numbered} WHERE p = 0 AND n = 7; TRACING; TRACING OFF")
    assert "Tracing session" not in result.stdout, result.stdout
    assert result.returncode == 3, result.stderr
    assert said_lines(result.stderr) == [
        "refused: cqlsh-ext --read-only runs reads only, and TRACING ON has the server write each "
        "statement's trace to system_traces, and reads it from there"]
    assert "TRACING is OFF" in result.stdout and "(1 rows)" in result.stdout, result.stdout


def test_source_runs_each_statement_of_its_file_through_the_rule(cassandra, home: Path,
                                                                 demo_keyspace: str) -> None:
    rc = home / "rc"
    rc.write_text("# the user's rc\n")
    script = home / "sourced.cql"
    script.write_text(f"CAPTURE '{rc}';\n" + ATTACK.format(keyspace=demo_keyspace) + ";\n", newline="")
    result = ext(cassandra, home, "--read-only", "-e", f"SOURCE '{script}'")
    assert rc.read_text() == "# the user's rc\n"
    assert _no_hash(result.stdout), result.stdout
    assert result.returncode == 3, result.stderr
    lines = said_lines(result.stderr)
    assert len(lines) == 2, lines
    assert "refused: cqlsh-ext --read-only runs reads only, and CAPTURE appends to a local file" in lines[0]
    assert "refused: cqlsh-ext --read-only reads a statement only as the server reads it" in lines[1]


@pytest.fixture(scope="module")
def staff_view(cassandra) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    """(keyspace, table, view): `staff` (one row, its salary SALARY) and `staff_by_team`, a
    materialized view of it; beside them `teams`, which no policy here denies."""
    keyspace = staff_and_its_view(cassandra, "views", "CREATE TABLE teams (team text PRIMARY KEY, floor int)")
    return keyspace, "staff", "staff_by_team"


@pytest.mark.parametrize("policy_text", ['[tables]\ndeny = ["{ks}.staff"]\n',
                                         '[redact]\ncolumns = ["{ks}.staff.salary"]\n'])
def test_a_view_of_a_table_the_policy_refuses_is_refused_too(cassandra, home: Path,
                                                             staff_view: tuple[str, str, str],
                                                             policy_text: str) -> None:
    """A materialized view holds its table's rows: the policy that denies the table, or redacts its
    values, refuses the view, named either way."""
    keyspace, table, view = staff_view
    policy = home / "policy.toml"
    policy.write_text(policy_text.format(ks=keyspace))
    why = (f"table {keyspace}.{table} is denied by the policy ({policy.name}): cqlsh-ext --read-only never "
           "reads it") if "deny" in policy_text \
        else f"the policy ({policy.name}) redacts values of {keyspace}.{table}"
    for args in (["-e", f"SELECT * FROM {keyspace}.{view}"],
                 ["-k", keyspace, "-e", f"SELECT salary FROM {view}"]):
        result = ext(cassandra, home, "--read-only", "--policy", str(policy), *args)
        assert SALARY not in result.stdout, (args, result.stdout)
        assert result.returncode == 3, (args, result.stderr)
        assert said_lines(result.stderr) == [
            f"refused: {keyspace}.{view} is a materialized view of {keyspace}.{table}, whose rows it holds, "
            f"and {why}"], args


def test_describe_treats_a_denied_table_as_absent(cassandra, home: Path,
                                                  staff_view: tuple[str, str, str]) -> None:
    """Denied means absent, as in cqlsh-ext mcp: DESCRIBE of the denied table (or of its view) is
    refused in MCP's line, and the DESCRIBE forms that list or print a keyspace's schema leave the
    table and its view out, as CQL text and as JSON objects; the table beside them is still there.
    Without the policy the server prints them all (so their absence is the policy's)."""
    keyspace, table, view = staff_view
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    listings = "DESCRIBE KEYSPACE; DESCRIBE TABLES; DESCRIBE SCHEMA; DESC " + keyspace
    # The CQL text names them keyspace.name; DESCRIBE TABLES lists the keyspace's names alone.
    qualified, alone = re.compile(rf"{keyspace}\.(staff|staff_by_team)\b"), re.compile(r"(^|\s)staff(\s|$)")
    plain = ext(cassandra, home, "--read-only", "-k", keyspace, "-e", listings)
    assert plain.returncode == 0 and plain.stdout.count(f"{keyspace}.{view}") == 3, plain.stdout
    assert len(qualified.findall(plain.stdout)) >= 6 and alone.search(plain.stdout), plain.stdout
    shown = ext(cassandra, home, "--read-only", "--policy", str(policy), "-k", keyspace, "-e", listings)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count(f"{keyspace}.teams") >= 3 and re.search(r"(^|\s)teams(\s|$)", shown.stdout)
    assert not qualified.search(shown.stdout) and not alone.search(shown.stdout), shown.stdout
    objects = ext(cassandra, home, "--read-only", "--policy", str(policy), "--output-format", "json", "-k",
                  keyspace, "-e", listings)
    assert objects.returncode == 0, objects.stderr
    assert objects.stdout.count(f"{keyspace}.teams") >= 3 and '"table": "teams"' in objects.stdout
    assert not qualified.search(objects.stdout) and '"staff' not in objects.stdout, objects.stdout
    refusal = (f"refused: table {keyspace}.{table} is denied by the policy ({policy.name}): cqlsh-ext "
               "--read-only never reads it")
    refused = ext(cassandra, home, "--read-only", "--policy", str(policy), "-k", keyspace, "-e",
                  f"DESCRIBE TABLE {keyspace}.{table}; DESC {table}; DESCRIBE MATERIALIZED VIEW {view}")
    assert refused.returncode == 3, refused.stderr
    assert "salary" not in refused.stdout, refused.stdout
    assert said_lines(refused.stderr) == [
        refusal, refusal, f"refused: {keyspace}.{view} is a materialized view of {keyspace}.{table}, whose "
        f"rows it holds, and {refusal.removeprefix('refused: ')}"]


def test_no_answer_names_a_denied_table(cassandra, home: Path, staff_view: tuple[str, str, str]) -> None:
    """Denied means absent beyond DESCRIBE too: the schema tables' rows (which the shell does not
    screen, as MCP does) are refused while the policy hides a table, the name meant after a
    misspelt one is never the denied table's, and --catalog leaves it out. Without the policy the
    server's rows and the name meant name it."""
    keyspace, table, view = staff_view
    policy = home / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.{table}"]\n')
    statements = (f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{keyspace}'; "
                  f"SELECT * FROM {keyspace}.staf")
    plain = ext(cassandra, home, "--read-only", "-e", statements)
    assert re.search(rf"^\s*{table}\s*$", plain.stdout, re.M) and "did you mean staff?" in plain.stderr, plain
    hidden = ext(cassandra, home, "--read-only", "--policy", str(policy), "-e", statements)
    assert hidden.returncode == 3, hidden.stderr
    lines = said_lines(hidden.stderr)
    assert lines[0] == (f"refused: the policy ({policy.name}) hides tables, and rows of system_schema.tables "
                        "may name one: cqlsh-ext --read-only leaves no row out (DESCRIBE does; cqlsh-ext mcp "
                        "answers it screened)")
    assert "staf does not exist" in lines[1] and table not in hidden.stdout + hidden.stderr
    listed = ext(cassandra, home, "--read-only", "--policy", str(policy), "--catalog", keyspace)
    assert listed.returncode == 0, listed.stderr
    assert '"teams"' in listed.stdout and table not in listed.stdout, listed.stdout
