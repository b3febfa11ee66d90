"""Errors as data: with --output-format json every error is one JSON object on standard error (its
kind, message, hint and where in the statement it is), rows stay on standard output; prose
otherwise, as ever."""

from __future__ import annotations

import json
from pathlib import Path

from shell_runner import CQLSH_EXT, PASSWORD_WARNING, ext, run


def _objects(stderr: str) -> list[dict[str, object]]:
    """The errors on standard error, whose every line is one JSON object (beside the errors: cqlsh's
    warning about -p on the command line, a payload query's closing figures as a note)."""
    said = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert {said["type"] for said in said} <= {"error", "truncated", "stats", "note", "warning"}, said
    return [said for said in said if said["type"] == "error"]


def test_a_server_error_is_one_object_and_the_rows_stay_on_stdout(cassandra, home: Path,
                                                                  numbered: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "-e",
                 f"SELECT n FROM {numbered} WHERE p = 0 AND n < 2; SELECT nosuch FROM {numbered}")
    assert result.returncode == 2
    assert [json.loads(line) for line in result.stdout.splitlines()] == [{"n": 0}, {"n": 1}]
    [error] = _objects(result.stderr)
    assert error["type"] == "error" and error["kind"] == "invalid"
    assert "Undefined column name nosuch" in str(error["message"])
    assert error["hint"]


def test_a_server_error_holding_line_breaks_is_one_object(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "-e",
                 f"SELECT n FROM {numbered} WHERE p = 'a\nb\nc'")
    assert result.returncode == 2
    [error] = _objects(result.stderr)
    assert error["kind"] == "invalid" and "(a\nb\nc)" in str(error["message"]), error


def test_a_syntax_error_names_its_position(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "-e", f"SELECT n FROM {numbered} WHER n = 1")
    assert result.returncode == 2
    [error] = _objects(result.stderr)
    assert error["kind"] == "syntax", error
    statement = f"SELECT n FROM {numbered} WHER n = 1"
    position = error["position"]
    assert isinstance(position, dict) and position["line"] == 1
    assert statement[position["column"] - 1:].startswith(("WHER", "n = 1")), (statement, position)


def test_a_mistyped_statement_word_is_a_syntax_error(cassandra, home: Path) -> None:
    result = ext(cassandra, home, "--output-format", "json", "-e", "SELEC 1")
    [error] = _objects(result.stderr)
    assert error["kind"] == "syntax" and "did you mean SELECT" in str(error["message"])


def test_a_refusal_a_timeout_and_a_connection_error_are_objects_too(cassandra, home: Path, numbered: str,
                                                                    slow_table: str) -> None:
    refused = ext(cassandra, home, "--output-format", "json", "--read-only", "-e", f"TRUNCATE {numbered}")
    assert [e["kind"] for e in _objects(refused.stderr)] == ["refused"]
    timed = ext(cassandra, home, "--output-format", "json", "--timeout", "1",
                "-e", f"SELECT n FROM {slow_table}")
    assert [e["kind"] for e in _objects(timed.stderr)] == ["timed_out"]
    nowhere = run(CQLSH_EXT, ["127.0.0.1", "1", "--output-format", "json", "-e", "SELECT 1"], home)
    assert nowhere.returncode == 1
    [error] = _objects(nowhere.stderr)
    assert error["kind"] == "connection" and str(error["message"]).startswith("Connection error")


def test_an_option_refused_before_connecting_is_an_object(home: Path) -> None:
    result = run(CQLSH_EXT, ["--output-format", "json", "--max-rows", "none", "-e", "SELECT 1"], home)
    assert result.returncode == 2
    [error] = _objects(result.stderr)
    assert error["kind"] == "usage" and "--max-rows" in str(error["message"])


def test_what_is_no_error_is_a_warning_or_a_note_beside_the_objects(cassandra, home: Path,
                                                                     numbered: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "--stats",
                 "-e", f"SELECT n FROM {numbered} WHERE data.word = 'w3' ALLOW FILTERING")
    assert result.returncode == 0 and json.loads(result.stdout) == {"n": 3}
    said = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    assert not _objects(result.stderr)
    assert said[0]["type"] == "warning" and str(said[0]["message"]).startswith(PASSWORD_WARNING[0])
    [closing] = [o for o in said if o.get("kind") == "payload_query"]
    assert closing["type"] == "note" and (closing["rows_read"], closing["matched"]) == (250, 1), closing
    assert str(closing["message"]).startswith("payload query: 250 rows read, 1 matched")
    assert said[-1]["type"] == "stats"


def test_without_json_errors_are_prose_as_ever(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "-e", f"SELECT nosuch FROM {numbered}")
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith(PASSWORD_WARNING)]
    assert lines and not lines[0].startswith("{")
