"""A --resume token is bound to what it was cut from and sealed (issue 105): the table it read,
resolved in the keyspace in use as the server resolves it, the statement, and every field under an
HMAC of the user's resume key. A token given with the same words in another keyspace, or with any
field edited (a huge row count, another statement's paging state, another table), is refused in one
line before anything runs, exit code 2, nothing printed; one cut for another user (another HOME)
too."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from shell_runner import ext, said_lines

ALTERED = "cqlsh-ext: error: --resume: the token was altered, or not cut for this user"


def _cut(cassandra, home: Path, statement: str, *args: str, most: int = 5) -> str:  # type: ignore[no-untyped-def]
    """The token of `statement` cut at `most` rows."""
    result = ext(cassandra, home, "--output-format", "json", "--stats", "--max-rows", str(most), *args,
                 "-e", statement)
    assert result.returncode == 0, result.stderr
    token = json.loads(result.stderr.strip().splitlines()[-1])["resume"]
    assert isinstance(token, str), result.stderr
    return token


def _fields(token: str) -> dict[str, object]:
    return dict(json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))))


def _token(fields: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode().rstrip("=")


def _refused(cassandra, home: Path, token: str, statement: str, *args: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = ext(cassandra, home, "--max-rows", "5", "--resume", token, *args, "-e", statement)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert not result.stdout.strip(), result.stdout
    lines = said_lines(result.stderr)
    assert len(lines) == 1, lines
    return lines


@pytest.fixture(scope="module")
def other_numbered(cassandra, numbered: str) -> str:  # type: ignore[no-untyped-def]
    """A table named as `numbered` is, in another keyspace, with rows of its own (n = 1000 ..), more
    than a page of them (the shell's 100)."""
    ks = cassandra.create_keyspace("agent_other")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE numbered (p int, n int, data blob, PRIMARY KEY (p, n))")
    for n in range(1000, 1150):
        session.execute("INSERT INTO numbered (p, n, data) VALUES (0, %s, 0x00)", (n,))
    session.shutdown()
    return f"{ks}.numbered"


def test_a_token_is_refused_in_another_keyspace(cassandra, home: Path, numbered: str,
                                                 other_numbered: str) -> None:
    keyspace, table = numbered.split(".")
    other = other_numbered.split(".")[0]
    statement = f"SELECT n FROM {table} WHERE p = 0"
    token = _cut(cassandra, home, statement, "-k", keyspace)
    assert _refused(cassandra, home, token, statement, "-k", other) == [
        f"--resume: the token was cut from a reading of {numbered}, and this statement reads "
        f"{other_numbered}: give it in the keyspace it was cut in (USE, -k)"]
    # In its own keyspace it goes on from row 5.
    result = ext(cassandra, home, "--output-format", "json", "--max-rows", "5", "--resume", token,
                 "-k", keyspace, "-e", statement)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["n"] for line in result.stdout.splitlines()] == [5, 6, 7, 8, 9]


@pytest.mark.parametrize("edit", ["rows before", "skip", "paging state", "table", "statement"])
def test_a_token_with_any_field_edited_is_refused(cassandra, home: Path, numbered: str,
                                                   other_numbered: str, edit: str) -> None:
    statement = f"SELECT n FROM {numbered} WHERE p = 0"
    fields = _fields(_cut(cassandra, home, f"SELECT n FROM {numbered} WHERE p = 0 LIMIT 200"))
    if edit == "paging state":  # the paging state of another table's reading, on its second page
        taken = _fields(_cut(cassandra, home, f"SELECT n FROM {other_numbered} WHERE p = 0", most=120))
        fields = _fields(_cut(cassandra, home, statement, most=120))
        assert taken["p"] and fields["p"] and taken["p"] != fields["p"]
        fields |= {"p": taken["p"]}
    elif edit == "statement":  # the digest of `statement`, on the LIMIT 200 statement's place
        fields |= {"s": _fields(_cut(cassandra, home, statement))["s"]}
    else:
        fields = _fields(_cut(cassandra, home, statement)) | {
            "rows before": {"b": 10**12}, "skip": {"i": 10**9}, "table": {"t": other_numbered}}[edit]
    [line] = _refused(cassandra, home, _token(fields), statement)
    assert line.startswith(ALTERED), line


def test_a_token_cut_for_another_user_is_refused_and_the_key_is_theirs_alone(
        cassandra, home: Path, tmp_path_factory: pytest.TempPathFactory, numbered: str) -> None:
    statement = f"SELECT n FROM {numbered} WHERE p = 0"
    token = _cut(cassandra, home, statement)
    key = home / ".cassandra" / "cqlsh-ext-resume.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    elsewhere = tmp_path_factory.mktemp("another-user")
    [line] = _refused(cassandra, elsewhere, token, statement)
    assert line.startswith("cqlsh-ext: error: --resume: there is no resume key at "), line
    _cut(cassandra, elsewhere, statement)  # that user's own key now, another one
    [line] = _refused(cassandra, elsewhere, token, statement)
    assert line.startswith(ALTERED), line
