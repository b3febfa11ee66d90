"""The read-only rule read against the real server, as a parser's fuzzer is written: generated SELECTs
mixing comments of every kind (`--`, `//`, `/* */`, one holding a `;`), carriage returns, newlines,
form feeds and other control or space characters, strings and $$strings$$ holding comment marks and
`;`, names quoted and not, and look-alike letters (a Cyrillic у in system_auth). For each, what the
guard decides from the text alone (the shell's --read-only without the server's prepared statement:
agent.read_only.ReadOnly) against what the server reads (its prepared statement's metadata, or its
refusal of the text). The property: no statement the guard allows reads, on the server, a table the
policy denies, or another table than the one the guard read in its text, or is a write to the
server (a write before the SELECT, hidden from one reader by a comment or a string). Bounded: a
fixed number of examples, derandomized; every statement that once got through is kept as an @example."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from shell_runner import ext

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features.read_rule import server_tables
from cqlsh_ext.query.recognize import table_of

pytestmark = pytest.mark.server

#: The keyspace the generated statements name ({ks}), with a table named as Cassandra's credentials
#: table (`roles`), a table a policy file denies (`decoy`), and one read freely (`blob_formats`).
KEYSPACE_TABLES = ("blob_formats", "roles", "decoy")

#: Table names, as the statement writes them.
TABLES = ("{ks}.blob_formats", '"{ks}"."blob_formats"', "blob_formats", "roles", "{ks}.roles", "decoy",
          "{ks}.decoy", "system_auth.roles", "SYSTEM_AUTH.ROLES", '"system_auth".roles',
          "system_auth . roles", "system_auth/**/.roles", "s\u0443stem_auth.roles", "system_auth.r\u043eles",
          "system.local", "system_traces.sessions")
#: What may stand between two tokens, or inside the text that hides a table: comments and space the
#: server reads as the guard does, and (RISKY) comment marks alone, line ends, control and space
#: characters, a ';' where a reader may take a comment's end elsewhere.
READABLE = (" ", "\n", "\r\n", "\t", "/* c */", "/*\n*/", "/* -- */", "/* /* */", "/* // */", "-- c\n",
            "// c\r\n", "-- /*\n", "'x -- y'", "'a;b'", "$$ /* $$", "$$--$$", "'--'", '"roles"', "(", ")",
            ",", ".")
RISKY = ("\r", "\f", "\v", "\u00a0", "\u2028", "\u2029", "\x85", "\x00", "--", "//", "/*", "*/", "-- */",
         "/* ; */", ";", "--\r", "//\r", "-- c\r x\n", "-- c\x85 x\n", "// c\u2028 x\n", "-- c\x0b x\n")
BITS = READABLE + RISKY
COLUMNS = ("*", "name", "role", "count(*)", '"name"', "name, role")
TAILS = ("", " LIMIT 2", " WHERE name = 'a -- b' ALLOW FILTERING", " WHERE name = $$x /* $$ ALLOW FILTERING",
         " -- trailing", " /* trailing */")


#: A table inside a comment or a string, ended as the server ends it or otherwise: `{}` is the table.
HIDDEN = ("/* {} */", "-- {}\n", "// {}\r\n", "-- x\r {}\n", "// x\r {}\n", "/* {} -- */\n", "-- {} */\n",
          "/* x */ {} /* y", "'{}'", "$${}$$", '"{}"', "--\r {} /*\n", "/*\r*/ {}")


#: What may come before the SELECT: nothing, or a write the text may hide from one reader and not the
#: other (a comment ended otherwise, a string), the SELECT then commented out for the server.
WRITE = "INSERT INTO {ks}.decoy (name, role) VALUES ('w', 'w')"
LEADS = ("", "", "", "", f"-- x\r {WRITE} /*\n", f"// x\r {WRITE} /*\n", f"/* {WRITE} */ ", f"-- {WRITE}\n",
         f"-- x\x85 {WRITE} /*\n", f"--\u2028{WRITE} /*\n", f"-- x\x0c {WRITE} /*\n", f"$$ {WRITE} $$ ",
         f"'{WRITE}' ")


@st.composite
def statements(draw: Any) -> str:
    """A SELECT whose FROM is followed (or preceded) by text that may hide a table: comment marks,
    line ends, strings and other names, in any order."""
    def hiding() -> str:
        hidden = st.builds(str.format, st.sampled_from(HIDDEN), st.sampled_from(TABLES))
        parts = draw(st.lists(st.one_of(st.sampled_from(READABLE), hidden, hidden, st.sampled_from(RISKY)),
                              max_size=4))
        return "".join(parts)

    lead = draw(st.sampled_from(LEADS))
    closed = " -- */" if lead.endswith("/*\n") else ""  # the SELECT a comment to a reader who reads the write
    columns = draw(st.sampled_from(COLUMNS))
    return (f"{lead}SELECT{draw(st.sampled_from(READABLE[:4]))}{columns} FROM{hiding()} "
            f"{draw(st.sampled_from(TABLES))}{hiding()}{draw(st.sampled_from(TAILS))}{closed}")


@pytest.fixture(scope="module")
def reading(cassandra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, str]]:  # type: ignore[no-untyped-def]
    """(a driver session in the keyspace, the guard with a policy denying its `decoy`, the keyspace)."""
    from cqlsh_ext.agent import read_only

    keyspace = cassandra.create_keyspace("differential")
    session = cassandra.session(keyspace)
    for table in KEYSPACE_TABLES:
        session.execute(f"CREATE TABLE IF NOT EXISTS {table} (name text PRIMARY KEY, role text, data blob)")
    session.cluster.refresh_schema_metadata()
    policy = tmp_path_factory.mktemp("policy") / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{keyspace}.decoy"]\n')
    try:
        yield session, read_only.load(str(policy)), keyspace
    finally:
        session.shutdown()


ATTACK = ("SELECT role, salted_hash FROM --\r system_auth.roles /*\n {ks}.blob_formats -- */\n LIMIT 2")
#: Statements that got through once, or would on an earlier reading (each an @example below).
FOUND = ("SELECT * FROM--\r {ks}.blob_formats",
         "SELECT * FROM -- x\r system_auth.roles -- {ks}.blob_formats\n",
         "SELECT * FROM // x\r roles /* {ks}.blob_formats */",
         "SELECT * FROM /* /* */ system_auth.roles /* */ {ks}.blob_formats */",
         "SELECT * FROM $$ -- $$ system_auth.roles",
         f"-- x\r {WRITE} /*\nSELECT * FROM {{ks}}.blob_formats -- */")


@settings(max_examples=2000, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(template=statements())
@example(template=ATTACK)  # issue 105, finding 1
@example(template=FOUND[0])  # found by this test on a4d3dd0's lexer
@example(template=FOUND[1])
@example(template=FOUND[2])
@example(template=FOUND[3])
@example(template=FOUND[4])
@example(template=FOUND[5])  # a write, to the server
def test_no_statement_the_guard_allows_reads_another_table_on_the_server(reading: tuple[Any, Any, str],
                                                                         template: str) -> None:
    session, guard, keyspace = reading
    statement = template.replace("{ks}", keyspace)
    lexed = Lexed(statement)

    def tables_of(name: str) -> list[str]:
        meta = session.cluster.metadata.keyspaces.get(name)
        return list(meta.tables) if meta is not None else []

    refused = guard.refusal(lexed, None, keyspace, tables_of)  # the text alone: no prepared statement
    if refused is not None:
        event("refused by the guard")
        return
    prepared: list[Any] = []

    def prepare(text: str) -> Any:
        prepared.append(session.prepare(text))
        return prepared[-1]

    read = server_tables(prepare, statement)
    if read is None:
        event("allowed; the server reads no statement")
        return  # nothing runs
    event("allowed; the server read a table")
    # A SELECT, to the server too: it has the columns of an answer (a write has none).
    assert prepared[0].result_metadata, (statement, "the server reads a statement that answers nothing")
    named = table_of(lexed)
    assert named is not None, (statement, read)
    guard_table = (named[0] or keyspace, named[1])
    for table in read:
        assert guard.policy.refusal(*table) is None, (statement, table)
        assert table == guard_table, (statement, table, guard_table)


#: Scripts the shell runs whole, and statements in each: a statement that does not end (an unclosed
#: comment or string) takes the rest of its script with it, so they are several.
SCRIPTS, STATEMENTS = 6, 40
#: What the generated SELECTs of the scripts select: the credentials table's password hashes among it.
SECRET_COLUMNS = ("*", "*", "role", "role, salted_hash")


def test_the_shell_runs_no_generated_statement_that_reads_a_secret_or_writes(
        cassandra, home: Path, reading: tuple[Any, Any, str]) -> None:  # type: ignore[no-untyped-def]
    """The same texts end to end: scripts of the generated statements (each selecting the password
    hashes where the credentials table is named, some led by a hidden write) run whole by the
    shell's --read-only, -f, so that cqlsh's own splitting of the statements is tried too, against
    the server: no password hash is printed, and the hidden write wrote no row (read back with the
    driver)."""
    import random

    session, _, keyspace = reading
    rng = random.Random(105)  # a fixed sample: the same scripts at every run

    def hiding() -> str:
        parts = [rng.choice((rng.choice(READABLE), rng.choice(HIDDEN).format(rng.choice(TABLES)),
                             rng.choice(RISKY))) for _ in range(rng.randrange(4))]
        return "".join(parts).replace("\x00", " ")  # (a NUL ends cqlsh's reading of a file: the test above
        # has it)

    def statement() -> str:
        lead = rng.choice(LEADS).replace("\x00", " ")
        closed = " -- */" if lead.endswith("/*\n") else ""
        return (f"{lead}SELECT {rng.choice(SECRET_COLUMNS)} FROM{hiding()} {rng.choice(TABLES)}{hiding()}"
                f"{rng.choice(TAILS)}{closed}").replace("{ks}", keyspace)

    for n in range(SCRIPTS):
        script = home / f"generated-{n}.cql"
        known = [text.replace("{ks}", keyspace) for text in (ATTACK, *FOUND)] if n == 0 else []
        texts = [*known, *(statement() for _ in range(STATEMENTS))]
        # Each ends on a line of its own (a trailing -- comment ends there); newline="": \r as written.
        script.write_text("".join(f"{text}\n;\n" for text in texts), newline="")
        result = ext(cassandra, home, "--read-only", "-f", str(script))
        assert "$2a$" not in result.stdout and "$2a$" not in result.stderr, script.read_text()
        assert result.returncode in (0, 2, 3), (result.returncode, result.stderr)
    written = session.execute("SELECT name FROM decoy WHERE name = 'w'").one()
    assert written is None, "a hidden write ran"
