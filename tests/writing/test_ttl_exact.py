"""TTLs exact (issue 61, item 4) and UNDO bound to what was written (item 3), through the real binary
on the real server. A cell's drift is measured exactly: each row is inserted with its blob and a
reference column in one statement (one moment of expiry), and TTL(data) - TTL(ref) read in one
request is the rewritten cell's moment of expiry less its original's, in the server's own seconds.

- a slow PACE with read-ahead: the scanner asks for the next page while this one's rows are paced
  out, so a time taken when a row is looked at is seconds late;
- PACE 6, killed (-9) mid-run, then RESUME;
- the server failing the rewrite's pages and writes for a while (unavailable, as a node restarting
  answers), each retried with backoff: a retried page is stamped when it is asked for again;
- the server itself stopped in the middle of a paced rewrite and started again, then RESUME (a
  Cassandra of the test's own: the shared one stays up for the other tests);
- UNDO: the old TTL back as recorded; a cell written again since with the same bytes (another TTL,
  or none) left alone and counted."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from shell_runner import CQLSH_EXT, ext, isolated_env, journal_of, killed_part_way, run
from waiting import wait_until

from cqlsh_ext.encode.chain import encode

CAP = 4 << 20
TTL = 86_400
#: Within one second: the server counts expiry in whole seconds, a request may cross one's edge.
DRIFT = 1


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("ttl")


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Any:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def fill(session: Any, table: str, rows: int, ttl: int = TTL) -> None:
    session.execute(f"CREATE TABLE {table} (p int, c int, data blob, ref int, PRIMARY KEY (p, c))")
    insert = session.prepare(f"INSERT INTO {table} (p, c, data, ref) VALUES (1, ?, ?, 0) USING TTL {ttl}")
    for c in range(rows):
        session.execute(insert, (c, encode("gzip", json.dumps({"c": c, "pad": "x" * 300}), CAP).value))


def drifts(session: Any, table: str) -> dict[int, int | None]:
    """Each row's moment of expiry less its original's (seconds), None for a cell that no longer
    expires: read in one request, so both TTLs count from the same second."""
    return {row.c: None if row.t is None else row.t - row.r
            for row in session.execute(f"SELECT c, ttl(data) AS t, ttl(ref) AS r FROM {table}")}


def test_a_slow_pace_with_read_ahead_keeps_each_expiry_within_a_second(cassandra, ks, session,
                                                                       tmp_path) -> None:
    """130 rows of one partition: the first page (100 rows) is paced out over 2 s while the second
    page, asked for when the first came, waits."""
    fill(session, "slow", 130)
    time.sleep(1.1)  # the cells' seconds are not the rewrite's
    done = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE {ks}.slow.data AS 'zstd' WHERE p = 1 PACE 50 "
               "CONFIRM", keyspace=ks, timeout=600)
    assert "130 rows rewritten" in done.stdout, done.stdout + done.stderr
    found = drifts(session, "slow")
    spread = Counter(found.values())
    print(f"drift after PACE 50 (seconds: rows): {dict(sorted(spread.items()))}")
    assert len(found) == 130 and all(d is not None and abs(d) <= DRIFT for d in found.values()), spread
    # UNDO: the old values back, expiring when the originals would have (the journal's moment).
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal_of(done.stdout)}' CONFIRM", keyspace=ks,
               timeout=600)
    assert "130 rows written back" in undo.stdout, undo.stdout + undo.stderr
    back = drifts(session, "slow")
    spread = Counter(back.values())
    print(f"drift after the UNDO (seconds: rows): {dict(sorted(spread.items()))}")
    assert all(d is not None and abs(d) <= DRIFT for d in back.values()), spread


def test_pace_6_killed_then_resumed_keeps_each_expiry_within_a_second(cassandra, ks, session,
                                                                      tmp_path) -> None:
    fill(session, "killed", 24)
    time.sleep(1.1)
    statement = f"COMPRESSION REWRITE {ks}.killed.data AS 'zstd' WHERE p = 1 PACE 6 CONFIRM"
    journal = killed_part_way(cassandra, tmp_path, ks, statement, 8, "8 rows written (part-way)")
    written = journal.read_text().count('"applied": true')
    assert 8 <= written < 24
    time.sleep(1.1)
    resumed = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM", keyspace=ks,
                  timeout=600)
    assert resumed.returncode == 0 and "Journal: " in resumed.stdout, resumed.stdout + resumed.stderr
    found = drifts(session, "killed")
    spread = Counter(found.values())
    print(f"drift after PACE 6, kill -9 and RESUME (seconds: rows): {dict(sorted(spread.items()))}")
    assert len(found) == 24 and all(d is not None and abs(d) <= DRIFT for d in found.values()), spread


def test_requests_failed_and_retried_mid_rewrite_keep_each_expiry_within_a_second(cassandra,
                                                                                   tmp_path) -> None:
    ks = cassandra.create_keyspace("faults_ttl")  # faults_*: the server's fault handler may fail it
    session = cassandra.session(ks)
    fill(session, "flaky", 130)
    time.sleep(1.1)
    # After the first page and a few rows, 5 requests on the table fail (pages, writes and the reads
    # after them alike), each retried with backoff.
    cassandra.faults.set("unavailable", 5, after=12, table="flaky")
    try:
        done = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE {ks}.flaky.data AS 'zstd' WHERE p = 1 "
                   "PACE 50 CONFIRM", keyspace=ks, timeout=600)
    finally:
        cassandra.faults.clear()
    assert "130 rows rewritten" in done.stdout and "slowed down" in done.stdout, done.stdout + done.stderr
    found = drifts(session, "flaky")
    spread = Counter(found.values())
    print(f"drift with requests failed and retried (seconds: rows): {dict(sorted(spread.items()))}")
    assert len(found) == 130 and all(d is not None and abs(d) <= DRIFT for d in found.values()), spread
    session.shutdown()


def test_undo_leaves_a_cell_written_again_with_the_same_bytes_alone(cassandra, ks, session, tmp_path) -> None:
    """After a rewrite another client writes the same bytes back, once permanent and once for 30
    days: the cells hold what the rewrite wrote, at another write time. UNDO says so, and leaves
    them as that client left them."""
    fill(session, "again", 4)
    done = ext(cassandra, tmp_path, "-e",
               f"COMPRESSION REWRITE {ks}.again.data AS 'zstd' WHERE p = 1 CONFIRM", keyspace=ks, timeout=600)
    assert "4 rows rewritten" in done.stdout, done.stdout + done.stderr
    written = {row.c: row.data for row in session.execute("SELECT c, data FROM again")}
    session.execute("UPDATE again SET data = %s WHERE p = 1 AND c = 0", (written[0],))
    session.execute("UPDATE again USING TTL 2592000 SET data = %s WHERE p = 1 AND c = 1", (written[1],))
    journal = journal_of(done.stdout)
    preview = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}'", keyspace=ks, timeout=600)
    assert ("  2 still as the rewrite wrote them; 0 changed since the rewrite (left alone), 2 written again "
            "since with the same bytes (left alone)") in preview.stdout, preview.stdout
    assert "written again since the rewrite with the same bytes: p = 1, c = 0" in preview.stdout
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks, timeout=600)
    assert ("2 rows written back, 2 written again since the rewrite (the same bytes, a later write): left "
            "alone") in undo.stdout, undo.stdout + undo.stderr
    now = {row.c: row for row in session.execute("SELECT c, data, ttl(data) AS t FROM again")}
    assert now[0].data == written[0] and now[0].t is None  # still permanent, as that client wrote it
    assert now[1].data == written[1] and 2591000 < now[1].t <= 2592000  # still its 30 days
    found = drifts(session, "again")
    assert found[2] is not None and abs(found[2]) <= DRIFT and found[3] is not None and abs(found[3]) <= DRIFT


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A Cassandra of this module's own, to be stopped and started: the shared one must stay up."""
    import conftest

    directory = tmp_path_factory.mktemp("restarted-cassandra") / "node"
    with conftest.own_server(directory, "cqlsh-ext restart test", timeout=300) as instance:
        yield instance


@pytest.mark.server
def test_a_server_restart_mid_rewrite_then_resume_keeps_each_expiry_within_a_second(own_server,
                                                                                    tmp_path) -> None:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    config = own_server.config
    target = [config.host, str(config.native_port), "-u", config.username or "", "-p", config.password or ""]

    def connect() -> tuple[Any, Any]:
        cluster = Cluster([config.host], port=config.native_port, protocol_version=5,
                          auth_provider=PlainTextAuthProvider(config.username or "", config.password or ""))
        return cluster, cluster.connect()

    cluster, session = connect()
    session.execute("CREATE KEYSPACE IF NOT EXISTS ttl_restart WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.set_keyspace("ttl_restart")
    fill(session, "restarted", 40)
    cluster.shutdown()
    time.sleep(1.1)  # the cells' seconds are not the rewrite's
    statement = "COMPRESSION REWRITE ttl_restart.restarted.data AS 'zstd' WHERE p = 1 PACE 6 CONFIRM"
    child = subprocess.Popen([CQLSH_EXT, *target, "-e", statement], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=isolated_env(tmp_path))
    assert child.stdout is not None
    journal = Path(journal_of(child.stdout.readline()))
    wait_until(lambda: journal.read_text().count('"applied": true') >= 8, "8 rows written (part-way)",
               process=child)
    own_server.stop()
    out, err = child.communicate(timeout=300)  # the writes fail for good once their retries are spent
    assert "Resume: COMPRESSION REWRITE RESUME" in out + err, out + err
    written = journal.read_text().count('"applied": true')
    assert 8 <= written < 40
    own_server.start(timeout=300, die_with_parent=True, move_internal_ports=True)
    resumed = run(CQLSH_EXT, [*target, "-e", f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM"], tmp_path,
                  timeout=600)
    assert resumed.returncode == 0 and "Journal: " in resumed.stdout, resumed.stdout + resumed.stderr
    assert "Resume:" not in resumed.stdout, resumed.stdout
    cluster, session = connect()
    session.set_keyspace("ttl_restart")
    found = drifts(session, "restarted")
    cluster.shutdown()
    spread = Counter(found.values())
    print(f"drift after PACE 6, a server restart and RESUME (seconds: rows): {dict(sorted(spread.items()))}")
    assert len(found) == 40 and all(d is not None and abs(d) <= DRIFT for d in found.values()), spread
