"""COMPRESSION TRIAL against the real server: the binary's report, its refusals, the scratch tables
gone whatever happened, and the server's fault handler making one variant's table slow or failing.

Every size and unit is recomputed here from the values written and the codec libraries' own calls;
latencies are only compared with each other (orderings, counts), never with the clock."""

from __future__ import annotations

import json
import math
import re
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cramjam
import lz4.frame
import pexpect
import pytest
import zstandard
from shell_runner import CQLSH_EXT, isolated_env

from cqlsh_ext.demo.records import documents
from cqlsh_ext.insight.trial.latency import WARMUP_ROWS

from .conftest import cqlsh_ext, json_docs, on_screen

pytestmark = pytest.mark.server

ROWS = 30
#: Values in the source tables: ten times ROWS, so the sampler stops after a tenth of the ring.
TABLE_ROWS = 300
NAMES = ["stored", "uncompressed", "zstd", "lz4", "snappy"]
KEYS = ["median", "p95", "p99", "p99_9", "max"]


@dataclass
class TrialData:
    ks: str
    #: Where the scratch tables go: a faults_ keyspace, so the server's fault handler reaches them.
    into: str
    payloads: list[bytes]
    stored: list[bytes]
    texts: list[str]


@pytest.fixture(scope="module")
def trial(cassandra) -> TrialData:
    from cassandra.concurrent import execute_concurrent_with_args

    ks = cassandra.create_keyspace("trial")
    into = cassandra.create_keyspace("faults_trial")
    s = cassandra.session(ks)
    payloads = [d.encode() for d in documents(TABLE_ROWS, seed=61)]
    stored = [bytes(cramjam.snappy.compress_raw(p)) for p in payloads]  # the Keyspaces article's case
    texts = list(documents(TABLE_ROWS, seed=62))
    s.execute("CREATE TABLE src (id int PRIMARY KEY, data blob, n int)")
    s.execute("CREATE TABLE texts (id int PRIMARY KEY, body text)")
    s.execute("CREATE TABLE few (id int PRIMARY KEY, data blob)")

    def fill(insert: str, rows: list[tuple]) -> None:
        execute_concurrent_with_args(s, s.prepare(insert), rows, concurrency=32, raise_on_first_error=True)

    fill("INSERT INTO src (id, data, n) VALUES (?, ?, ?)", [(i, v, i) for i, v in enumerate(stored)])
    fill("INSERT INTO texts (id, body) VALUES (?, ?)", list(enumerate(texts)))
    fill("INSERT INTO few (id, data) VALUES (?, ?)", list(enumerate(stored[:5])))
    s.shutdown()
    return TrialData(ks, into, payloads, stored, texts)


@pytest.fixture(autouse=True)
def no_faults(cassandra):
    cassandra.faults.clear()
    yield
    cassandra.faults.clear()


def scratch_tables(cassandra, ks: str) -> list[str]:
    s = cassandra.session()
    try:
        rows = s.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (ks,))
        return [r.table_name for r in rows if r.table_name.startswith("cqlshext_trial_")]
    finally:
        s.shutdown()


def said(stderr: str) -> list[str]:
    """The shell's error lines about the trial (after -e's '<stdin>:1:')."""
    return [line[line.index("COMPRESSION TRIAL"):] for line in stderr.splitlines()
            if "COMPRESSION TRIAL" in line]


def trial_json(cassandra, home: Path, statement: str) -> dict:
    out = cqlsh_ext(cassandra, home, statement)
    (doc,) = json_docs(out.stdout)
    return doc


def lz4_frame(payload: bytes) -> bytes:
    """lz4-java's LZ4FrameOutputStream's frame: 4 MiB blocks, independent (encode()'s reference)."""
    frame = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False)
    return frame.begin() + frame.compress(payload) + frame.flush()


def ordered(latency: dict) -> bool:
    values = [latency[k] for k in KEYS]
    return all(v is not None for v in values) and values == sorted(values)


def variant(doc: dict, name: str) -> dict:
    return next(v for v in doc["variants"] if v["variant"] == name)


# ------------------------------------------------------------------------------------- the report


def test_every_variant_measured_as_a_producer_writes_it(cassandra, trial, home):
    doc = trial_json(cassandra, home, f"COMPRESSION TRIAL JSON {trial.ks}.src.data ROWS {ROWS} "
                                      f"CONCURRENCY 4 INTO {trial.into} KEEP")
    info = doc["trial"]
    assert info["complete"] and info["rows"] == ROWS and info["column_type"] == "blob"
    assert info["concurrency"] == 4 and info["consistency"] == "ONE" and info["tables_kept"]
    assert ROWS <= info["sample"]["values_read"] < TABLE_ROWS  # the sampler stopped early
    assert [v["variant"] for v in doc["variants"]] == NAMES
    written = kept_tables(cassandra, trial, doc)
    # The stored variant holds values of the table, and the others what the libraries make of them.
    payload_of = dict(zip(trial.stored, trial.payloads, strict=True))
    assert set(written["stored"]) <= set(payload_of)
    payloads = [payload_of[v] for v in written["stored"]]
    assert written["uncompressed"] == payloads
    assert written["zstd"] == [zstandard.ZstdCompressor(level=3).compress(p) for p in payloads]
    assert written["lz4"] == [lz4_frame(p) for p in payloads]
    assert written["snappy"] == [bytes(cramjam.snappy.compress_raw(p)) for p in payloads] == written["stored"]
    payload_total = sum(map(len, payloads))
    for v in doc["variants"]:
        sizes = [len(x) for x in written[v["variant"]]]
        assert v["values"] == ROWS
        assert v["stored_bytes"]["total"] == sum(sizes), v["variant"]
        assert v["stored_bytes"]["ratio"] == round(payload_total / sum(sizes), 4)
        assert v["keyspaces"]["wcu_per_row"] == round(sum(math.ceil(s / 1024) for s in sizes) / ROWS, 3)
        # Reads at ONE (cqlsh's default): eventually consistent, half a unit per started 4 KB.
        half_units = sum(0.5 * math.ceil(s / 4096) for s in sizes)
        assert v["keyspaces"]["rcu_per_row"] == round(half_units / ROWS, 3)
        for phase in ("writes", "reads"):
            figures = v[phase]
            assert figures["ok"] == ROWS, (v["variant"], phase, figures)
            assert figures["failed"] == {} and figures["timed_out"] == 0 and figures["retried"] == {}
            assert ordered(figures["latency_ms"]), figures
            assert figures["ops_per_s"] > 0
        assert (v["decode_us_per_value"] is None) == (v["variant"] == "uncompressed")
    base = variant(doc, "uncompressed")
    assert base["change"] is None
    zstd = variant(doc, "zstd")
    assert zstd["change"]["stored_bytes_total"] == round(
        zstd["stored_bytes"]["total"] / base["stored_bytes"]["total"] - 1, 4)
    assert zstd["change"]["reads"]["p99"] == round(
        zstd["reads"]["latency_ms"]["p99"] / base["reads"]["latency_ms"]["p99"] - 1, 4)


def kept_tables(cassandra, trial: TrialData, doc: dict) -> dict[str, list[bytes]]:
    """{variant: its values by key} read from the tables KEEP kept, which are then dropped."""
    assert sorted(scratch_tables(cassandra, trial.into)) == sorted(v["table"] for v in doc["variants"])
    s = cassandra.session(trial.into)
    try:
        written = {}
        for v in doc["variants"]:
            rows = {r.id: bytes(r.v) for r in s.execute(f"SELECT id, v FROM {v['table']}")}
            # Keys 0..ROWS-1 counted; the warm-up wrote the first values again after them.
            warm = min(WARMUP_ROWS, ROWS)
            assert sorted(rows) == list(range(ROWS + warm))
            assert [rows[ROWS + k] for k in range(warm)] == [rows[k] for k in range(warm)]
            written[v["variant"]] = [rows[k] for k in range(ROWS)]
            s.execute(f"DROP TABLE {v['table']}")
        return written
    finally:
        s.shutdown()


def test_json_is_one_object_and_the_tables_are_dropped(cassandra, trial, home):
    out = cqlsh_ext(cassandra, home, f"COMPRESSION TRIAL {trial.ks}.src.data CODECS snappy ROWS 20 "
                                     f"INTO {trial.into} JSON")
    objects = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(objects) == 1
    doc = json.loads(objects[0])
    assert doc["trial"]["rows"] == 20
    assert [v["variant"] for v in doc["variants"]] == ["uncompressed", "snappy"]
    assert not doc["trial"]["tables_kept"] and all(v["table"] for v in doc["variants"])
    assert scratch_tables(cassandra, trial.into) == []


@pytest.mark.parametrize("cols", [80, 140])
def test_text_report_fits_the_terminal_and_agrees_with_json(cassandra, trial, home, cols):
    """The same values twice (files: the same ones each time), as text in a terminal and as JSON:
    every figure that does not depend on the moment (bytes, ratio, units, operation counts) reads
    the same, and no line is wider than the terminal."""
    # A short path (a worker's tmp_path passes 80 columns: the title would hold it whole, alone on
    # a line the terminal shows on two rows, which tests/test_text.py holds).
    with tempfile.TemporaryDirectory(dir="/tmp") as short:
        values = Path(short)
        for i, v in enumerate(trial.stored[:ROWS]):
            (values / f"{i:03}.bin").write_bytes(v)
        statement = f"COMPRESSION TRIAL FROM '{values}' CODECS 'zstd:1', lz4 INTO {trial.into}"
        screen = on_screen(cassandra, home, statement, cols)
        doc = trial_json(cassandra, home, statement + " JSON")
    assert len(screen.widest()) <= cols, screen.widest()
    lines = screen.rows[next(i for i, x in enumerate(screen.rows) if x.startswith("COMPRESSION TRIAL")):]
    assert f"{ROWS} values (files), 3 variants" in " ".join(" ".join(lines[:3]).split())
    verdict = next(i for i, x in enumerate(lines) if x.startswith("Verdict: "))
    assert all(x.startswith("    ") for x in lines[1:verdict]), lines  # right after the title, wrapped
    sizes = lines[lines.index(next(x for x in lines if x.strip().startswith("Stored bytes"))) + 2:]
    for v in doc["variants"]:
        row = next(x.split() for x in sizes if x.split()[:1] == [v["variant"]])
        assert row[1:3] == [f"{round(v['stored_bytes']['mean']):,}", "B"], row
        assert row[3:5] == [f"{v['stored_bytes']['total'] / 1024:.1f}", "KiB"], row
        assert f"{v['stored_bytes']['ratio']:.2f}" in row
        assert row[-2:] == [f"{v['keyspaces']['wcu_per_row']:.2f}", f"{v['keyspaces']['rcu_per_row']:.2f}"]
    for title, phase in (("Writes", "writes"), ("Reads", "reads")):
        # The table's part with the failures (a narrow terminal may stack it in two).
        start = next(i for i, x in enumerate(lines) if x.strip().startswith(title) and x.endswith("failed"))
        for v in doc["variants"]:
            row = next(x.split() for x in lines[start:] if x.split()[:1] == [v["variant"]])
            assert row[-1] == str(sum(v[phase]["failed"].values()) + v[phase]["timed_out"])
    assert "No operation failed, timed out or was retried." in screen.text
    assert scratch_tables(cassandra, trial.into) == []


def test_a_text_column_is_an_uncompressed_payload(cassandra, trial, home):
    doc = trial_json(cassandra, home, f"COMPRESSION TRIAL JSON {trial.ks}.texts.body ROWS {ROWS} "
                                      f"INTO {trial.into} KEEP")
    assert doc["trial"]["column_type"] == "text"
    # Nothing is stored compressed: the stored values are the uncompressed variant, measured once.
    assert [v["variant"] for v in doc["variants"]] == NAMES[1:]
    texts = {t.encode() for t in trial.texts}
    written = kept_tables(cassandra, trial, doc)
    assert set(written["uncompressed"]) <= texts and len(set(written["uncompressed"])) == ROWS
    assert variant(doc, "uncompressed")["stored_bytes"]["total"] == sum(map(len, written["uncompressed"]))
    assert written["zstd"] == [zstandard.ZstdCompressor(level=3).compress(t) for t in written["uncompressed"]]
    assert all(v["reads"]["ok"] == ROWS for v in doc["variants"])


def test_help(cassandra, trial, home):
    from cqlsh_ext.codecs.base import CODEC_TRIAL
    from cqlsh_ext.insight.trial import DEFAULT_CONCURRENCY, DEFAULT_ROWS

    out = cqlsh_ext(cassandra, home, "HELP TRIAL").stdout
    assert "COMPRESSION TRIAL [cqlsh-ext]" in out and max(map(len, out.splitlines())) <= 80
    words = " ".join(out.split())
    assert f"(default {DEFAULT_ROWS})" in words and f"(default {DEFAULT_CONCURRENCY})" in words
    assert f"Default: stored, uncompressed, {', '.join(CODEC_TRIAL)}." in words
    assert "More: HELP TRIAL" in cqlsh_ext(cassandra, home, "HELP COMPRESSION").stdout
    # Each keyword once, in the form a wrong TRIAL is told, in HELP TRIAL's and in HELP COMPRESSION's.
    wrong = cqlsh_ext(cassandra, home, f"COMPRESSION TRIAL {trial.ks}.src.data junk;", ok=False).stderr
    usage = wrong[wrong.index("no argument of it: "):wrong.index(", e.g.")]
    forms = [usage, out[:out.index("What compressing")],
             # (up to the next command's form: REWRITE follows TRIAL)
             cqlsh_ext(cassandra, home, "HELP COMPRESSION").stdout.split("COMPRESSION TRIAL")[1]
             .split("COMPRESSION REWRITE")[0]]
    for form in forms:
        assert form.count("[JSON]") == 1 and form.count("[KEEP]") == 1 and form.count("[CONFIRM]") == 1, form


# ------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("clauses", "says"), [
    ("{ks}.src.data ROWS 30", "name the keyspace for the scratch tables"),
    ("{ks}.src.data INTO no_such_keyspace",
     "keyspace no_such_keyspace does not exist (INTO names where the scratch tables go): make it with "
     "CREATE KEYSPACE no_such_keyspace WITH replication = {{'class': 'NetworkTopologyStrategy', '"),
    ("{ks}.src.n INTO {into}", "is int: the trial takes blob and text columns"),
    ("{ks}.src.nothing INTO {into}", "has no column nothing"),
    ("{ks}.nothing.data INTO {into}", "table {ks}.nothing not found"),
    ("{ks}.few.data INTO {into}", "too few values to measure: 5 in {ks}.few.data (at least 20)"),
    ("{ks}.src.data ROWS 5 INTO {into}", "ROWS 5: at least 20 values"),
    ("{ks}.src.data CONCURRENCY 0 INTO {into}", "CONCURRENCY 0: from 1 to"),
    ("{ks}.src.data CODECS 'lz4hc 9' INTO {into}", "ADVISE's names are not chains"),
    ("{ks}.src.data CODECS 'zstd 3 + dict' INTO {into}", "a dictionary cannot be written"),
    ("{ks}.src.data CODECS 'lz4/legacy' INTO {into}", "variant 'lz4/legacy': lz4/legacy: the legacy frame"),
    ("{ks}.src.data CODECS 'zstd>msgpack' INTO {into}", "a variant is a chain of codecs only"),
    ("{ks}.src.data CODECS 'zstd:99' INTO {into}", "zstd levels are"),
    ("FROM '/no/such/file' INTO {into}", "cannot read /no/such/file: No such file or directory"),
])
def test_refusals_are_one_line(cassandra, trial, home, clauses, says):
    statement = "COMPRESSION TRIAL " + clauses.format(ks=trial.ks, into=trial.into)
    out = cqlsh_ext(cassandra, home, statement, ok=False)
    lines = said(out.stderr)
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert says.format(ks=trial.ks) in lines[0], lines[0]
    assert out.returncode == 2 and "COMPRESSION TRIAL" not in out.stdout
    assert scratch_tables(cassandra, trial.into) == []


def test_the_keyspace_into_names_is_made_by_the_statement_the_refusal_gives(cassandra, trial, home):
    statement = f"COMPRESSION TRIAL {trial.ks}.src.data INTO trial_made_here"
    refused = said(cqlsh_ext(cassandra, home, statement, ok=False).stderr)[0]
    create = refused.split("make it with ", 1)[1]
    try:
        cqlsh_ext(cassandra, home, create)  # as a user pastes it
        # Asked of the server (the shared Cluster's metadata learns of another client's schema
        # change later, by an event).
        session = cassandra.session()
        made = bool(session.execute("SELECT keyspace_name FROM system_schema.keyspaces "
                                    "WHERE keyspace_name = 'trial_made_here'").all())
        session.shutdown()
        assert made, create
    finally:
        cqlsh_ext(cassandra, home, "DROP KEYSPACE IF EXISTS trial_made_here")


# ------------------------------------------------------------------------------------- faults


def test_a_slow_table_moves_its_variant_only(cassandra, trial, home):
    # Every request on the lz4 variant's table is answered 200 ms late: its writes and reads.
    cassandra.faults.set("delay", -1, 200, table="cqlshext_trial_.*_lz4")
    doc = trial_json(cassandra, home, f"COMPRESSION TRIAL JSON {trial.ks}.src.data CODECS zstd, lz4, snappy "
                                      f"ROWS {ROWS} CONCURRENCY 8 INTO {trial.into}")
    slow = variant(doc, "lz4")
    for phase in ("writes", "reads"):
        assert slow[phase]["ok"] == ROWS
        # The server held every request 200 ms: the fastest, and so the median, cannot be quicker.
        assert slow[phase]["latency_ms"]["median"] >= 200
        for other in ("uncompressed", "zstd", "snappy"):
            figures = variant(doc, other)[phase]
            assert figures["ok"] == ROWS
            assert figures["latency_ms"]["median"] < slow[phase]["latency_ms"]["median"], (other, phase)
            assert figures["ops_per_s"] > slow[phase]["ops_per_s"], (other, phase)
        assert slow["change"][phase]["median"] > 0
    assert scratch_tables(cassandra, trial.into) == []


def test_a_timeout_is_retried_then_counted(cassandra, trial, home):
    from cqlsh_ext.common.retry import ATTEMPTS as RETRY_ATTEMPTS

    # One request at a time: the lz4 table's first counted write times out on every try. Before it,
    # the warm-up's 20 writes and 20 reads of that table pass.
    cassandra.faults.set("write_timeout", RETRY_ATTEMPTS + 1, after=40, table="cqlshext_trial_.*_lz4")
    doc = trial_json(cassandra, home, f"COMPRESSION TRIAL JSON {trial.ks}.src.data CODECS lz4 ROWS 20 "
                                      f"CONCURRENCY 1 INTO {trial.into}")
    writes, reads = variant(doc, "lz4")["writes"], variant(doc, "lz4")["reads"]
    assert writes["timed_out"] == 1 and writes["ok"] == 19 and writes["failed"] == {}
    assert writes["retried"] == {"write timeout (Keyspaces: throttling)": RETRY_ATTEMPTS}
    assert reads["ok"] == 19  # the row never written is not read
    assert variant(doc, "uncompressed")["writes"]["ok"] == 20
    assert doc["trial"]["complete"]


def test_throttling_is_retried_and_counted(cassandra, trial, home):
    # Three of the snappy table's counted writes are throttled as Keyspaces throttles (a ServerError
    # that says so); the warm-up's 20 writes and 20 reads pass first. One request at a time: with
    # several in flight on a loaded machine, one came back once as a host the driver gave up on
    # (retried as "connection lost"), which is right but not what this test counts.
    cassandra.faults.set("throttled", 3, after=40, table="cqlshext_trial_.*_snappy")
    doc = trial_json(cassandra, home, f"COMPRESSION TRIAL JSON {trial.ks}.src.data CODECS snappy ROWS 20 "
                                      f"CONCURRENCY 1 INTO {trial.into}")
    writes = variant(doc, "snappy")["writes"]
    assert writes["retried"] == {"throttled": 3} and writes["ok"] == 20 and writes["failed"] == {}
    assert variant(doc, "snappy")["reads"]["retried"] == {}
    assert doc["trial"]["complete"]


def test_a_server_error_stops_the_trial_and_drops_the_tables(cassandra, trial, home):
    # The zstd table's requests pass through the warm-up (30 writes, 30 reads), then fail.
    cassandra.faults.set("server_error", -1, after=60 + 5, table="cqlshext_trial_.*_zstd")
    out = cqlsh_ext(cassandra, home, f"COMPRESSION TRIAL {trial.ks}.src.data CODECS zstd ROWS {ROWS} "
                                     f"INTO {trial.into}", ok=False)
    stopped = " ".join(out.stdout.split("STOPPED BY AN ERROR: ", 1)[1].split())  # the line as wrapped
    assert stopped.startswith("ServerError: ") and "cqlsh-ext test: a server error" in stopped, out.stdout
    writes = out.stdout.split("Writes (ms)", 1)[1].split("Reads (ms)", 1)[0]
    zstd_row = next(line.split() for line in writes.splitlines() if line.split()[:1] == ["zstd"])
    assert zstd_row[1] != "-"  # the writes before the error were measured
    assert "Traceback" not in out.stderr
    assert scratch_tables(cassandra, trial.into) == []


def test_an_error_before_anything_is_measured_is_one_line(cassandra, trial, home):
    cassandra.faults.set("server_error", -1, table="cqlshext_trial_.*")
    out = cqlsh_ext(cassandra, home, f"COMPRESSION TRIAL {trial.ks}.src.data CODECS zstd ROWS {ROWS} "
                                     f"INTO {trial.into}", ok=False)
    (line,) = said(out.stderr)
    assert line.startswith("COMPRESSION TRIAL: ServerError: ") and "cqlsh-ext test: a server error" in line
    assert line.endswith("; nothing was measured (scratch tables dropped)"), line
    assert scratch_tables(cassandra, trial.into) == []


def test_ctrl_c_stops_reports_and_drops_the_tables(cassandra, trial, home):
    # Slow tables, so that Ctrl-C lands in the middle.
    cassandra.faults.set("delay", -1, 100, table="cqlshext_trial_.*")
    child = pexpect.spawn(
        CQLSH_EXT,
        [*cassandra.cqlsh_args, "-e", f"COMPRESSION TRIAL {trial.ks}.src.data CODECS zstd ROWS {ROWS} "
                                      f"CONCURRENCY 4 INTO {trial.into}"],
        env=isolated_env(home), encoding="utf-8", timeout=120, dimensions=(40, 200))
    child.expect(r"writes, round")  # the progress line: the counted writes are under way
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    # What was measured before the press, and that the figures are those alone.
    said = (r"INTERRUPTED \(Ctrl-C\): ([\d,]+|none) of the [\d,]+ writes and (none|[\d,]+) of the [\d,]+ "
            r"reads measured, in \d+ of \d+ rounds?; the figures are those\.")
    assert re.search(said, out), out[-3000:]
    assert "Writes (ms)" in out and "Traceback" not in out
    cassandra.faults.clear()
    assert scratch_tables(cassandra, trial.into) == []


# ------------------------------------------------------------------------------------- from files


def test_cqlsh_ext_trial_from_a_directory_and_a_file(cassandra, trial, tmp_path, home):
    values = tmp_path / "values"
    values.mkdir()
    for i, v in enumerate(trial.stored[:ROWS]):
        (values / f"{i:03}.bin").write_bytes(v)
    proc = _trial_cli(cassandra, home, [str(values), "--into", trial.into, "--codecs", "zstd", "--json"])
    (doc,) = json_docs(proc.stdout)
    assert doc["trial"]["source"] == str(values) and doc["trial"]["column_type"] == "files"
    assert [v["variant"] for v in doc["variants"]] == ["uncompressed", "zstd"]
    assert variant(doc, "uncompressed")["stored_bytes"]["total"] == sum(map(len, trial.payloads[:ROWS]))
    hex_lines = tmp_path / "values.txt"
    hex_lines.write_text("".join(f"0x{v.hex()}\n" for v in trial.stored[:25]))
    proc = _trial_cli(cassandra, home, [str(hex_lines), "--into", trial.into, "--rows", "20", "--json"])
    (doc,) = json_docs(proc.stdout)
    assert doc["trial"]["rows"] == 20 and [v["variant"] for v in doc["variants"]] == NAMES
    assert variant(doc, "stored")["stored_bytes"]["total"] == sum(map(len, trial.stored[:20]))
    assert variant(doc, "uncompressed")["stored_bytes"]["total"] == sum(map(len, trial.payloads[:20]))
    assert scratch_tables(cassandra, trial.into) == []


def test_cqlsh_ext_trial_refuses_in_one_line(cassandra, trial, tmp_path, home):
    one = tmp_path / "one.bin"
    one.write_bytes(trial.stored[0])
    proc = _trial_cli(cassandra, home, [str(one), "--into", trial.into], ok=False)
    assert proc.returncode == 2
    assert said(proc.stderr) == [f"COMPRESSION TRIAL: too few values to measure: 1 in {one} (at least 20)"]


def _trial_cli(cassandra, home: Path, args: list[str], ok: bool = True):
    from shell_runner import run

    proc = run(CQLSH_EXT, ["trial", *args, *cassandra.cqlsh_args], home, timeout=180)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


# ------------------------------------------------------------------------------------- interactive


def test_interactive_shell_shows_progress_and_stops_on_ctrl_c(cassandra, trial, home):
    from repl.terminal import Term

    # Slow tables, so that Ctrl-C lands in the middle.
    cassandra.faults.set("delay", -1, 50, table="cqlshext_trial_.*")
    t = Term([*cassandra.cqlsh_args, "--no-color"], home, env={"PAGER": ""}, rows=45, cols=140)
    try:
        t.prompt()
        t.type(f"COMPRESSION TRIAL {trial.ks}.src.data CODECS zstd ROWS {ROWS} CONCURRENCY 4 "
               f"INTO {trial.into};")
        t.enter()
        # The progress line on the terminal, with the phase it is in.
        t.expect(rf"COMPRESSION TRIAL {trial.ks}\.src\.data: \d+ rows, \d+ rows/s.*writes, round \d+ of \d+")
        t.ctrl("c")
        t.expect(r"INTERRUPTED \(Ctrl-C\):[^\n]*measured, in \d+ of \d+ rounds?; the figures are those\.")
        t.expect(r"Reads( \(ms\)|: none measured)")  # a table of the reads only when some were measured
        t.prompt()
        assert "Traceback" not in t.text and "Cancelled" not in t.text
        writes = t.text.split("Writes (ms)", 1)[1].split("Reads", 1)[0]
        assert re.search(r"^\s+(uncompressed|zstd)\s+[\d,]+\s", writes, re.M)  # measured before Ctrl-C
    finally:
        t.close()
    cassandra.faults.clear()
    assert scratch_tables(cassandra, trial.into) == []
