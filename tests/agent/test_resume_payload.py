"""Every cut answer goes on: a payload query that filters inside the documents of a whole table, cut by
--max-rows, stopped at --timeout or by Ctrl-C, gives a token that goes on with it, and its pages read through
the tokens are one full read exactly (no row twice, none missing), --stats' `rows` the rows printed;
an answer that cannot go on from its rows (groups) says why instead (`resume_unavailable`). Run as
an assistant runs them, on the demo's 200 orders and on a table the test server answers late."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from shell_runner import CQLSH_EXT, isolated_env, run

FLAGS = ["--read-only", "--output-format", "json", "--stats"]


def _read(home: Path, statement: str,
          *args: str) -> tuple[list[str], dict[str, object], list[dict[str, object]]]:
    result = run(CQLSH_EXT, [*FLAGS, *args, "-e", statement], home)
    assert result.returncode == 0, result.stderr
    # (the objects only: that nothing else is there is test_json_all_the_way's)
    said = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    return result.stdout.splitlines(), said[-1], said


def test_a_cut_payload_query_resumed_through_its_tokens_is_one_full_read(demo_keyspace: str,
                                                                        connected_home: Path) -> None:
    statement = (f"SELECT data.orderId, data.status FROM {demo_keyspace}.table_with_compressed_json "
                 "WHERE data.status IN ('PAID', 'SHIPPED') ALLOW FILTERING")
    whole, stats, _ = _read(connected_home, statement)
    assert stats["exact"] is True and len(whole) > 40, stats  # the demo's 200 orders: about a third
    pages, token, calls = [], None, 0
    while True:
        rows, stats, said = _read(connected_home, statement, "--max-rows", "9",
                                  *(["--resume", str(token)] if token else []))
        calls += 1
        pages += rows
        token = stats["resume"]
        if not token:
            assert stats["truncated"] is False, stats
            break
        [cut] = [s for s in said if s["type"] == "truncated"]
        assert cut["resume"] == token and len(rows) == 9, said
        assert calls < 50
    assert calls in (-(-len(whole) // 9), -(-len(whole) // 9) + 1)  # (the last may find none left)
    assert len(pages) == len(set(pages)) == len(whole), (len(pages), len(whole))  # none twice, none missing
    assert sorted(pages) == sorted(whole)


def test_a_cut_answer_that_cannot_go_on_says_why(demo_keyspace: str, connected_home: Path) -> None:
    statement = (f"SELECT data.status, count(*) FROM {demo_keyspace}.table_with_compressed_json "
                 "GROUP BY data.status ALLOW FILTERING")
    rows, stats, said = _read(connected_home, statement, "--max-rows", "2")
    assert len(rows) == 2
    [cut] = [s for s in said if s["type"] == "truncated"]
    assert cut["resume"] is None and "groups" in str(cut["resume_unavailable"]), cut
    assert stats["resume"] is None and stats["resume_unavailable"] == cut["resume_unavailable"], stats


def test_a_payload_query_stopped_at_its_timeout_goes_on_through_its_token(cassandra, connected_home: Path,
                                                                        late_rows: str) -> None:
    statement = f"SELECT n, data.n FROM {late_rows} WHERE data.n >= 0 ALLOW FILTERING"
    whole, stats, _ = _read(connected_home, statement)
    assert stats["exact"] is True and len(whole) == 160, stats
    # The scan's first page (100 rows) comes at once, every later one long after the limit: the
    # limit, never the machine's speed, stops the reading, after the rows printed.
    cassandra.faults.set("delay", -1, 3000, after=1, table="late_rows")
    try:
        cut = run(CQLSH_EXT, [*FLAGS, "--timeout", "2", "-e", statement], connected_home)
    finally:
        cassandra.faults.clear()
    assert cut.returncode == 4, cut.stderr
    said = [json.loads(line) for line in cut.stderr.splitlines() if line.startswith("{")]
    printed = cut.stdout.splitlines()
    [stopped] = [s for s in said if s["type"] == "truncated"]
    stats = said[-1]
    assert stopped["why"] == "timed_out" and stopped["rows"] == stats["rows"] == len(printed), (said, printed)
    assert stats["resume"] == stopped["resume"] and stats["resume"], said
    rest, stats, _ = _read(connected_home, statement, "--resume", str(stats["resume"]))
    assert stats["exact"] is True and stats["rows"] == len(rest), stats
    pages = printed + rest
    assert len(pages) == len(set(pages)) == len(whole), (len(printed), len(rest))  # none twice, none missing
    assert sorted(pages) == sorted(whole)


def _stopped_by_ctrl_c(cassandra, home: Path, statement: str,  # type: ignore[no-untyped-def]
                       *flags: str) -> tuple[list[str], list[dict[str, object]]]:
    """The rows and the JSON objects of a run whose SELECT a Ctrl-C stopped once a row was printed
    (its later pages answered late); it exited 130."""
    cassandra.faults.set("delay", -1, 3000, after=1, table="late_rows")
    try:
        child = subprocess.Popen([CQLSH_EXT, *FLAGS, *flags, "-e", statement], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=isolated_env(home))
        assert child.stdout is not None
        first = ""
        while not first.endswith("\n"):  # the event: a row printed (unbuffered: communicate reads the rest)
            byte = os.read(child.stdout.fileno(), 1)
            if not byte:
                break
            first += byte.decode()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        cassandra.faults.clear()
    assert child.returncode == 130 and first, err
    return [first.rstrip("\n"), *out.splitlines()], [json.loads(line) for line in err.splitlines()
                                                      if line.startswith("{")]


def test_a_payload_query_stopped_by_ctrl_c_says_what_timeout_says(cassandra, connected_home: Path,
                                                                  late_rows: str) -> None:
    # The `truncated` object --timeout writes: read in the server's order (a time limit given,
    # never reached), its token goes on from the row after the last one printed; read by token
    # ranges at once (no cut asked for), why it cannot go on.
    statement = f"SELECT n, data.n FROM {late_rows} WHERE data.n >= 0 ALLOW FILTERING"
    whole, _stats, _ = _read(connected_home, statement)
    printed, said = _stopped_by_ctrl_c(cassandra, connected_home, statement, "--timeout", "600")
    [stopped] = [s for s in said if s["type"] == "truncated"]
    stats = said[-1]
    assert stopped["why"] == "interrupted" and stopped["rows"] == stats["rows"] == len(printed), said
    assert stats["resume"] == stopped["resume"] and stats["resume"], json.dumps(stopped)
    rest, stats, _ = _read(connected_home, statement, "--resume", str(stats["resume"]))
    pages = printed + rest
    assert len(pages) == len(set(pages)) == len(whole), (len(printed), len(rest))  # none twice, none missing
    assert sorted(pages) == sorted(whole)
    printed, said = _stopped_by_ctrl_c(cassandra, connected_home, statement)
    [stopped] = [s for s in said if s["type"] == "truncated"]
    assert stopped["rows"] == len(printed) and stopped["resume"] is None, said
    assert "token ranges at once" in str(stopped["resume_unavailable"]), said
