"""COMPRESSION TRIAL on the Keyspaces-like endpoint (conftest.py): the cost said and asked for
before anything is written (a script needs CONFIRM), the scratch tables used only once
system_schema_mcs.tables says ACTIVE, and in the interactive shell the question and the progress
line on the terminal while the report goes through the pager."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import zstandard
from repl.terminal import Term, write_script

from cqlsh_ext.demo.records import documents
from keyspaces.ksharness import ALL_SECRETS, GOOD, REGION, KeyspacesEndpoint
from keyspaces.test_ks_endpoint import creds_env, run, tls_args

pytestmark = pytest.mark.server

ROWS = 20
#: Keyspaces of their own: ks_test's tables are listed by the DESCRIBE tests.
SOURCE = "ks_trial.src.data"
INTO = "ks_scratch"


@pytest.fixture(scope="module")
def payloads(keyspaces_endpoint: KeyspacesEndpoint) -> list[bytes]:
    """ROWS snappy documents: every one of them is taken (ROWS of a table of ROWS)."""
    session = keyspaces_endpoint.plain_session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {INTO} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE KEYSPACE IF NOT EXISTS ks_trial WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS ks_trial.src (id int PRIMARY KEY, data blob)")
    docs = [d.encode() for d in documents(ROWS, seed=71)]
    for i, doc in enumerate(docs):
        session.execute("INSERT INTO ks_trial.src (id, data) VALUES (%s, %s)",
                        (i, bytes(cramjam.snappy.compress_raw(doc))))
    return docs


def scratch(ep: KeyspacesEndpoint) -> tuple[list[str], list[str]]:
    """The scratch tables in INTO: in the schema, and in system_schema_mcs.tables."""
    session = ep.plain_session()
    schema = [r.table_name for r in session.execute(
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (INTO,))]
    mcs = [r.table_name for r in session.execute(
        "SELECT table_name FROM system_schema_mcs.tables WHERE keyspace_name = %s", (INTO,))]
    ours = "cqlshext_trial_"
    return [t for t in schema if t.startswith(ours)], [t for t in mcs if t.startswith(ours)]


def on_screen(t: Term) -> str:
    """The screen's text with its lines joined: a line longer than the screen wraps."""
    return "".join(t.display())


def expected_units(docs: list[bytes]) -> tuple[int, int]:
    """(write units, read units at LOCAL_QUORUM) the whole trial uses: every variant's values
    written and read once counted and once in the warm-up (ROWS is below the warm-up's size)."""
    frame = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False)
    variants = [
        [bytes(cramjam.snappy.compress_raw(d)) for d in docs],  # stored
        docs,  # uncompressed
        [zstandard.ZstdCompressor(level=3).compress(d) for d in docs],
        [frame.begin() + frame.compress(d) + frame.flush() for d in docs],
        [bytes(cramjam.snappy.compress_raw(d)) for d in docs],
    ]
    sizes = [len(v) for values in variants for v in values]
    return 2 * sum(math.ceil(s / 1024) for s in sizes), 2 * sum(math.ceil(s / 4096) for s in sizes)


def test_a_script_is_told_the_cost_and_needs_confirm(keyspaces_endpoint, payloads, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    statement = f"COMPRESSION TRIAL {SOURCE} ROWS {ROWS} INTO {INTO}"
    proc = run(ep, tmp_path, [*tls_args(ep, "--region", REGION), "-e", statement], **creds_env(GOOD))
    said = [line for line in proc.stderr.splitlines() if "COMPRESSION TRIAL" in line]
    assert len(said) == 1 and proc.returncode == 2, proc.stderr
    wcu, rcu = expected_units(payloads)
    assert f"uses about {wcu:,} write and {rcu:,} read capacity units (estimate, at LOCAL_QUORUM)" in said[0]
    assert said[0].endswith("Amazon Keyspaces bills them. Add CONFIRM to run it from a script."), said[0]
    assert scratch(ep) == ([], [])  # nothing was created


def test_confirmed_it_waits_for_active_tables_and_drops_them(keyspaces_endpoint, payloads,
                                                            tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    statement = f"COMPRESSION TRIAL {SOURCE} ROWS {ROWS} INTO {INTO} CONFIRM JSON"
    proc = run(ep, tmp_path, [*tls_args(ep, "--region", REGION), "-e", statement], **creds_env(GOOD))
    assert proc.returncode == 0, proc.stderr
    (doc,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    info = doc["trial"]
    assert info["keyspaces"] and info["complete"] and info["consistency"] == "LOCAL_QUORUM"
    tables = [v["table"] for v in doc["variants"]]
    assert len(tables) == 5
    # The stand-in answers CREATING to the first status read of a new table and ACTIVE after.
    assert info["active_wait"]["statuses"] == {table: ["CREATING", "ACTIVE"] for table in tables}
    wcu, rcu = expected_units(payloads)
    assert info["units_estimate"] == {"wcu": wcu, "rcu": rcu}
    for v in doc["variants"]:
        assert v["writes"]["ok"] == v["reads"]["ok"] == ROWS, v
    assert scratch(ep) == ([], [])


def test_the_interactive_shell_asks_on_the_terminal_and_pages_the_report(keyspaces_endpoint, payloads,
                                                                         tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    seen = tmp_path / "pager-input.txt"
    pager = write_script(tmp_path / "pager.sh",
                         f'cat > "{seen}"\necho "pager read $(wc -l < "{seen}") lines"\n')
    env = ep.env(tmp_path, **creds_env(GOOD), PAGER=str(pager))
    t = Term([*tls_args(ep, "--region", REGION), "--no-color"], tmp_path, env=env, rows=24, cols=80)
    try:
        t.prompt()
        # A full scan's question, as COMPRESSION STATS asks it: on the screen, not held by the pager.
        t.type("COMPRESSION STATS SELECT * FROM ks_test.docs;")
        t.enter()
        t.expect(r"Scan the whole table\? .*\[y/N\]")
        assert "[y/N]" in on_screen(t)
        t.type("n")
        t.enter()
        t.expect("COMPRESSION STATS: not scanned.")
        t.prompt()

        statement = f"COMPRESSION TRIAL {SOURCE} ROWS {ROWS} INTO {INTO};"
        t.type(statement)
        t.enter()
        # The cost, wrapped at words to the screen (common.text.message).
        t.expect(r"capacity units\s+\(estimate,\s+at\s+LOCAL_QUORUM\);\s+Amazon\s+Keyspaces\s+bills\s+them\.")
        t.expect(r"Run the trial\? \[y/N\]")
        assert "Run the trial? [y/N]" in on_screen(t)
        t.type("n")
        t.enter()
        t.expect("COMPRESSION TRIAL: not run.")
        assert scratch(ep) == ([], [])
        t.prompt()

        t.type(statement)
        t.enter()
        t.expect(r"Run the trial\? \[y/N\]")
        t.type("y")
        t.enter()
        t.expect(r"(COMPRESSION TRIAL )?ks_trial.*rows/s")  # the progress line (its label cut to fit)
        t.expect(r"pager read \d+ lines")
        t.prompt()
    finally:
        t.close()
    report = seen.read_text()
    assert report.startswith(f"COMPRESSION TRIAL {SOURCE}: {ROWS} values (blob), 5 variants")
    assert "Amazon Keyspaces: tables ACTIVE after" in report and "Reads (ms)" in report
    # The question and the progress line went to the terminal only.
    assert "[y/N]" not in report and "rows/s" not in report
    assert max(map(len, report.splitlines())) <= 80
    for secret in ALL_SECRETS:
        assert secret not in t.text and secret not in report
    assert re.search(r"pager read \d+ lines", t.text)
    assert scratch(ep) == ([], [])
