"""--stats, --max-rows and --resume: the run's figures as one JSON object on standard error, an answer
cut on purpose that says so, and a token that goes on exactly from the next row. The rows are held
to an oracle the test computes itself: the numbered table's rows in their clustering order (n = 0 ..
ROWS - 1), each blob decompressed with gzip and parsed by json here."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from shell_runner import ext, said_lines

from .conftest import ROWS


def _stats(stderr: str) -> dict[str, object]:
    """--stats' object: the last line of standard error, one JSON object."""
    last = json.loads(stderr.strip().splitlines()[-1])
    assert last["type"] == "stats", last
    return dict(last)


def _oracle(cassandra, numbered: str) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    session = cassandra.session()
    try:
        return [json.loads(gzip.decompress(row.data))
                for row in session.execute(f"SELECT data FROM {numbered} WHERE p = 0")]
    finally:
        session.shutdown()


@pytest.mark.parametrize(("select", "value"), [
    # cqlsh's own road (the server's rows, the blob decoded for display) ...
    ("SELECT n, data FROM {t} WHERE p = 0", lambda row: row["data"]["payload"]),
    # ... and cqlsh-ext's reading (a path inside the blob)
    ("SELECT n, data.word FROM {t} WHERE p = 0", lambda row: {"n": row["n"], "word": row["data.word"]}),
])
@pytest.mark.parametrize("most", [40, 130])
def test_max_rows_cuts_says_so_and_the_token_goes_on_exactly(cassandra, home: Path, numbered: str,
                                                              select, value, most: int) -> None:
    statement = select.format(t=numbered)
    seen: list[object] = []
    resume: list[str] = []
    for _ in range(ROWS // most + 2):
        result = ext(cassandra, home, "--output-format", "json", "--stats", "--max-rows", str(most),
                     *resume, "-e", statement)
        assert result.returncode == 0, result.stderr
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        stats = _stats(result.stderr)
        assert stats["rows"] == len(rows) <= most
        values = stats["values"]
        assert isinstance(values, dict) and values["undecodable"] == 0
        # Each blob printed decoded; a payload query's reading decoded each row it read (a page
        # ahead of the rows printed, at most).
        assert values["decoded"] == len(rows) if "data.word" not in select else values["decoded"] >= len(rows)
        seen += [value(row) for row in rows]
        if not stats["truncated"]:
            assert stats["exact"] is True and stats["resume"] is None and stats["truncated_why"] is None
            break
        assert len(rows) == most and stats["exact"] is False and stats["truncated_why"] == ["max_rows"]
        cut = [json.loads(line) for line in result.stderr.splitlines()
               if line.startswith("{") and json.loads(line)["type"] == "truncated"]
        assert cut == [{"type": "truncated", "why": "max_rows", "rows": most, "resume": stats["resume"]}]
        resume = ["--resume", str(stats["resume"])]
    assert seen == _oracle(cassandra, numbered)  # every row once, in order: nothing lost, nothing twice


def test_a_cut_is_said_without_stats_too(cassandra, home: Path, numbered: str) -> None:
    # Never a shortened answer without saying so when standard output is not a terminal.
    result = ext(cassandra, home, "--max-rows", "5", "-e", f"SELECT n FROM {numbered}")
    assert result.returncode == 0
    said = said_lines(result.stderr)
    assert len(said) == 1
    assert said[0].startswith("cut at --max-rows 5: 5 rows printed, more follow: --resume ")
    assert "(5 rows)" in result.stdout


def test_an_answer_that_fits_is_exact(cassandra, home: Path, numbered: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "--stats", "--max-rows", "10",
                 "-e", f"SELECT n FROM {numbered} WHERE p = 0 AND n < 10")
    stats = _stats(result.stderr)
    assert stats["rows"] == 10 and stats["truncated"] is False and stats["exact"] is True
    assert stats["exit"] == {"code": 0, "name": "ok"} and stats["statements"] == 1
    assert isinstance(stats["elapsed_s"], float) and isinstance(stats["cpu_s"], float)
    assert stats["cpu_s"] > 0  # the process's own at least


def test_a_timed_out_answer_is_truncated_in_the_stats(cassandra, home: Path, slow_table: str) -> None:
    result = ext(cassandra, home, "--output-format", "json", "--stats", "--timeout", "1",
                 "-e", f"SELECT n FROM {slow_table}")
    assert result.returncode == 4
    stats = _stats(result.stderr)
    assert stats["truncated"] is True and stats["truncated_why"] == ["timed_out"] and stats["exact"] is False
    assert stats["exit"] == {"code": 4, "name": "timed_out"}


def test_a_token_of_another_statement_is_refused(cassandra, home: Path, numbered: str) -> None:
    first = ext(cassandra, home, "--stats", "--max-rows", "3", "--output-format", "json",
                "-e", f"SELECT n FROM {numbered}")
    token = str(_stats(first.stderr)["resume"])
    other = ext(cassandra, home, "--resume", token, "-e", f"SELECT n, data FROM {numbered}")
    assert other.returncode == 2
    assert said_lines(other.stderr) == [
        "--resume: the token is of another statement: give the same SELECT it was cut from (its words and "
        "values; spacing and case of keywords aside)"]
    assert not other.stdout.strip()
    bad = ext(cassandra, home, "--resume", "not-a-token", "-e", f"SELECT n FROM {numbered}")
    assert bad.returncode == 2 and "--resume: not a token" in bad.stderr
