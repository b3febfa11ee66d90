"""COMPRESSION REWRITE on the real server (docs/rewrite.md): every container encode() writes as a
source and as a target, read back by the producers' own libraries with the payload unchanged; TTL
and write time kept; writers during the run, plain and conditioned, never lost; a SIGKILL then
RESUME (every row rewritten once); UNDO restoring every byte; refusals and a hostile value; PACE
held against the units written; throttling halves the pace; Ctrl-C and the progress line."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pexpect
import pytest
import zstandard
from dictionary_values import dcz, documents, raw_dictionary_loaded, readers_with, spec_for
from shell_runner import CQLSH_EXT, ext, in_process_shell, isolated_env, journal_of, killed_part_way
from waiting import wait_until

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.capabilities import Writer
from cqlsh_ext.encode.chain import encode
from cqlsh_ext.rewrite.preview import SAMPLE_ROWS
from cqlsh_ext.scanning.capacity import wcu

CAP = 4 << 20
DOC = {"status": "NEW", "items": [{"sku": "A1", "qty": 1}, {"sku": "B2", "qty": 2}],
       "note": "call first " * 20}
DOC_TEXT = json.dumps(DOC, separators=(",", ":"))
WRITERS = [f for f in registry.all_containers() if isinstance(f, Writer)]
WRITABLE = [f.label for f in WRITERS]
#: Chains auto mode tells from noise only with a DECODE setting (no signature).
SIGNATURELESS = ("snappy", "lz4/block-nosize", "deflate", "brotli")


def _read_back() -> dict[str, Any]:
    """The containers read with their producers' libraries, as tests/encode checks encode()."""
    path = Path(__file__).parent.parent / "encode" / "test_roundtrip.py"
    spec = importlib.util.spec_from_file_location("encode_roundtrip_readers_rw", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.READ_BACK)


READ_BACK = _read_back()


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    return cassandra.create_keyspace("faults_rewrite")  # faults_*: the fault handler may slow or fail it


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


@pytest.fixture()
def sh(cassandra, ks, tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.setenv("HOME", str(tmp_path))  # the journal key (~/.cassandra) is this test's
    with in_process_shell(cassandra, ks) as shell:
        shell.settings.display.journal_dir = str(tmp_path / "journal")
        yield shell


def table(session: Any, name: str, rows: dict[int, bytes | None], ttl: int | None = None) -> None:
    session.execute(f"CREATE TABLE IF NOT EXISTS {name} (id int PRIMARY KEY, data blob, other text)")
    using = f" USING TTL {ttl}" if ttl else ""
    for key, value in rows.items():
        session.execute(f"INSERT INTO {name} (id, data, other) VALUES (%s, %s, 'kept'){using}", (key, value))


def values(session: Any, name: str) -> dict[int, bytes]:
    return {row.id: row.data for row in session.execute(f"SELECT id, data FROM {name}")}


def said(capsys: Any) -> tuple[str, str]:
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.fixture()
def dictionary(tmp_path) -> Iterator[bytes]:
    """A raw dictionary in the store, as --dictionary FILE puts it there: a container written only
    with one (dcz) is written, read and rewritten with it."""
    with raw_dictionary_loaded(tmp_path) as loaded:
        yield loaded


# ------------------------------------------------------------------ sources and targets


def test_every_container_encode_writes_is_a_source(sh, session, capsys, ks, dictionary) -> None:
    rows: dict[int, bytes | None] = {i: encode(spec_for(fmt, dictionary), DOC_TEXT, CAP).value
                                     for i, fmt in enumerate(WRITERS)}
    plain = len(WRITABLE)
    rows[plain] = DOC_TEXT.encode()  # stored uncompressed: compressed by the rewrite
    rows[plain + 1] = encode("gzip>msgpack", DOC_TEXT, CAP).value  # a binary payload, kept as it is
    table(session, "src", rows)
    sh.onecmd(f"COMPRESSION REWRITE {ks}.src.data AS 'zstd:7' CONFIRM;")
    out, err = said(capsys)
    after = values(session, "src")
    rewritten, refused = [], []
    for i, label in enumerate(WRITABLE):
        if label == "zstd":
            assert after[i] == rows[i]  # already zstd (the level is no frame's)
        elif after[i] == rows[i]:
            refused.append(label)
        else:
            assert READ_BACK["zstd"](after[i]) == DOC_TEXT.encode(), label  # the payload byte for byte
            rewritten.append(label)
    # Auto mode reads every chain with a signature; one without is tried, and when it is not told
    # from noise it is no known format: never written.
    assert set(refused) <= set(SIGNATURELESS), refused
    assert len(rewritten) >= len(WRITABLE) - 1 - len(SIGNATURELESS)
    assert READ_BACK["zstd"](after[plain]) == DOC_TEXT.encode()
    assert msgpack.unpackb(READ_BACK["zstd"](after[plain + 1])) == DOC
    assert f"{len(rewritten) + 2:,} rows rewritten" in out, (out, err)
    assert f"1 already zstd, {len(refused)} refused" in out, out
    if refused:
        assert f"{len(refused)} row{'s' if len(refused) > 1 else ''}: no known format" in out


def test_every_container_encode_writes_is_a_target(sh, session, capsys, ks, dictionary) -> None:
    payload = encode("text", DOC_TEXT, CAP).value
    table(session, "tgt", {i: encode("zstd", DOC_TEXT, CAP).value for i in range(len(WRITABLE) + 1)})
    for i, fmt in enumerate(WRITERS):
        target = spec_for(fmt, dictionary)
        sh.onecmd(f"COMPRESSION REWRITE {ks}.tgt.data AS '{target}' WHERE id = {i} CONFIRM;")
    sh.onecmd(f"COMPRESSION REWRITE {ks}.tgt.data AS 'none' WHERE id = {len(WRITABLE)} CONFIRM;")
    out, err = said(capsys)
    after = values(session, "tgt")
    read_back = {**READ_BACK, **readers_with(dictionary)}
    for i, label in enumerate(WRITABLE):
        assert read_back[label](after[i]) == payload, label
    assert after[len(WRITABLE)] == payload  # 'none': the payload stored as it is
    # The zstd row was zstd already; every other target, and 'none', rewrote its row.
    assert out.count("1 row rewritten") == len(WRITABLE), (out, err)
    assert "0 rows rewritten" in out and "1 already zstd" in out
    sh.onecmd(f"COMPRESSION REWRITE {ks}.tgt.data AS 'zstd' WHERE id = 0;")
    preview, _ = said(capsys)
    assert "after the rewrite" not in preview
    sh.onecmd(f"COMPRESSION REWRITE {ks}.tgt.data AS 'brotli' WHERE id = {WRITABLE.index('zstd')};")
    preview, _ = said(capsys)
    assert f"auto mode reads 1 new value as no known format: its display then needs DECODE {ks}.tgt.data " \
        "'brotli' (the chain has no signature)" in preview, preview


def test_a_map_of_blobs_value_and_a_udt_field_are_rewritten(sh, session, capsys, ks) -> None:
    session.execute("CREATE TYPE IF NOT EXISTS att (title text, content blob)")
    session.execute("CREATE TABLE IF NOT EXISTS nest (id int PRIMARY KEY, m map<text, blob>, u att)")
    gz = encode("gzip", DOC_TEXT, CAP).value
    session.execute("INSERT INTO nest (id, m, u) VALUES (1, {'a': %s, 'b': %s}, {title: 't', content: %s})",
                    (gz, gz, gz))
    sh.onecmd(f"COMPRESSION REWRITE {ks}.nest.m['a'] AS 'xz' CONFIRM;")
    sh.onecmd(f"COMPRESSION REWRITE {ks}.nest.u.content AS 'bzip2' CONFIRM;")
    out, err = said(capsys)
    assert out.count("1 row rewritten") == 2, (out, err)
    row = session.execute("SELECT m, u FROM nest WHERE id = 1").one()
    assert READ_BACK["xz"](row.m["a"]) == DOC_TEXT.encode() and row.m["b"] == gz
    assert READ_BACK["bzip2"](row.u.content) == DOC_TEXT.encode() and row.u.title == "t"


# ------------------------------------------------------------------ what is kept


def test_ttl_and_write_time_are_kept_as_designed(sh, session, capsys, ks) -> None:
    table(session, "ttl", {1: encode("gzip", DOC_TEXT, CAP).value}, ttl=86400)
    table(session, "ttl", {2: encode("gzip", DOC_TEXT, CAP).value})
    before = {r.id: r for r in session.execute("SELECT id, writetime(data) AS w, ttl(data) AS t, "
                                                "writetime(other) AS wo FROM ttl")}
    sh.onecmd(f"COMPRESSION REWRITE {ks}.ttl.data AS 'zstd' CONFIRM;")
    out, err = said(capsys)
    assert "2 rows rewritten" in out, (out, err)
    after = {r.id: r for r in session.execute("SELECT id, writetime(data) AS w, ttl(data) AS t, "
                                               "writetime(other) AS wo FROM ttl")}
    assert after[1].t is not None and 86000 < after[1].t <= before[1].t  # expiring data still expires
    assert after[2].t is None
    assert all(after[k].w == before[k].w + 1 for k in (1, 2))  # at the read cell's write time + 1
    assert all(after[k].wo == before[k].wo for k in (1, 2))  # the row's other cells untouched


# ------------------------------------------------------------------ refusals and a hostile value


def test_refusals_say_why_and_write_nothing_of_that_row(sh, session, capsys, ks) -> None:
    bomb = zstandard.ZstdCompressor(level=19).compress(b"[" * (64 << 20))  # 64 MiB out of a few KB
    skippable = b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
    rows: dict[int, bytes | None] = {
        1: encode("gzip", DOC_TEXT, CAP).value[:-12],  # truncated
        2: os.urandom(300),  # no known format
        3: encode("lz4/frame", DOC_TEXT, CAP).value,  # already the target
        4: bomb,
        5: zlib.compress(DOC_TEXT.encode()) + b"TRAILER",  # bytes besides the stream: would be dropped
        6: encode("zstd", DOC_TEXT, CAP).value + skippable,
        7: None,
        8: encode("snappy/framed", DOC_TEXT, CAP).value,  # the one row written
    }
    table(session, "refused", rows)
    sh.onecmd(f"COMPRESSION REWRITE {ks}.refused.data AS 'lz4/frame';")
    out, err = said(capsys)
    assert "would rewrite 1 row, 1 already lz4/frame, 6 refused" in out, (out, err)
    assert "it does not decode (gzip: truncated stream)" in out
    assert "no known format" in out
    assert "cut at the output cap" in out  # the bomb: the per-value budget stops it
    assert "it holds 7 bytes after its zlib data: a rewrite would drop them" in out
    assert "it holds 11 bytes after its zstd data: a rewrite would drop them" in out
    assert "null: nothing to rewrite" in out
    sh.onecmd(f"COMPRESSION REWRITE {ks}.refused.data AS 'lz4/frame' CONFIRM;")
    out, err = said(capsys)
    assert "1 row rewritten" in out, (out, err)
    after = values(session, "refused")
    assert all(after[k] == rows[k] for k in rows if k != 8)
    assert READ_BACK["lz4/frame"](after[8]) == DOC_TEXT.encode()


def test_only_a_verified_reading_is_written(sh, session, capsys, ks, dictionary) -> None:
    # Three dcz values naming the loaded dictionary: one whose frame another dictionary made (the
    # producer's header lies; no checksum: it reads as other orders' text), one with a checksum, one
    # encode() wrote (no checksum, but written again it is the same bytes). Only the first is left.
    docs = documents()
    other = b"\n".join(docs[100:150])

    def frame(with_dictionary: bytes, checksum: bool) -> bytes:
        raw = zstandard.ZstdCompressionDict(with_dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        cctx = zstandard.ZstdCompressor(level=3, write_dict_id=False, write_checksum=checksum, dict_data=raw)
        return cctx.compress(docs[120])

    rows: dict[int, bytes | None] = {
        1: dcz(dictionary, frame(other, False)),
        2: dcz(dictionary, frame(dictionary, True)),
        3: encode(spec_for(registry.by_label("dcz"), dictionary), docs[120], CAP).value,
    }
    table(session, "unverified", rows)
    sh.onecmd(f"COMPRESSION REWRITE {ks}.unverified.data AS 'gzip' CONFIRM;")
    out, err = said(capsys)
    assert "2 rows rewritten" in out and "1 refused" in out, (out, err)
    assert "1 row: its reading is not verified (dcz: read with a dictionary, and no checksum says it is " \
        "the producer's), and its payload written again in its own chain is not the stored value" in out, out
    after = values(session, "unverified")
    assert after[1] == rows[1]  # nothing of it written
    assert READ_BACK["gzip"](after[2]) == READ_BACK["gzip"](after[3]) == docs[120]


def test_a_chain_named_by_a_decode_setting_writes_its_payload(sh, session, capsys, ks) -> None:
    # Read by the column's setting, the payload under the chain is what is written, never nothing.
    table(session, "named", {1: encode("snappy", DOC_TEXT, CAP).value})
    sh.settings.display.columns[f"{ks}.named.data"] = "snappy"
    sh.onecmd(f"COMPRESSION REWRITE {ks}.named.data AS 'zstd' CONFIRM;")
    out, err = said(capsys)
    assert "1 row rewritten" in out, (out, err)
    assert READ_BACK["zstd"](values(session, "named")[1]) == DOC_TEXT.encode()


@pytest.mark.parametrize("statement, reason", [
    ("COMPRESSION REWRITE {ks}.refused.other AS 'zstd'", "other is text: a rewrite writes compressed bytes"),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'zstd>msgpack'", "a rewrite names compression layers only"),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'zstd:99'", "AS 'zstd:99': "),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'zstd:dict=4242'", "dictionary 4242 is not loaded"),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'nonsense'", "AS 'nonsense': "),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'zstd' WHERE data.status = 'NEW'", "add ALLOW FILTERING"),
    ("COMPRESSION REWRITE {ks}.nope.data AS 'zstd'", "unknown table"),
    ("COMPRESSION REWRITE {ks}.refused.data AS 'zstd' PACE 0", "PACE takes write capacity units a second"),
])
def test_statements_refused_before_reading(sh, session, capsys, ks, statement, reason) -> None:
    table(session, "refused", {})
    sh.onecmd(statement.format(ks=ks) + ";")
    _, err = said(capsys)
    assert reason in err and "nothing was written" in err, err


# ------------------------------------------------------------------ writers during the run


def test_writers_during_the_run_plain_and_conditioned_are_never_lost(cassandra, ks, session,
                                                                      tmp_path) -> None:
    """Another client writes plainly and with conditions while the rewrite runs (paced, so that it
    is under way): every write it had acknowledged is there at the end, its payload as it wrote it
    (in the target chain when the rewrite read it first, else as written: the rewrite left it)."""
    rows = 200
    original = {i: encode("gzip", json.dumps({**DOC, "m": 0}), CAP).value for i in range(rows)}
    table(session, "busy", original)
    child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, "-e",
                              f"COMPRESSION REWRITE {ks}.busy.data AS 'zstd' PACE 150 CONFIRM"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=isolated_env(tmp_path))
    assert child.stdout is not None
    journal = Path(journal_of(child.stdout.readline()))
    acked: dict[int, int] = {}
    stop = threading.Event()

    def writer() -> None:
        k = 0
        while not stop.is_set():
            for i in range(rows - 1, -1, -1):
                if stop.is_set():
                    return
                k += 1
                value = encode("snappy/framed", json.dumps({**DOC, "m": k}), CAP).value
                if k % 2:
                    session.execute("UPDATE busy SET data = %s WHERE id = %s", (value, i))
                    acked[i] = k
                else:
                    now = session.execute("SELECT data FROM busy WHERE id = %s", (i,)).one().data
                    done = session.execute("UPDATE busy SET data = %s WHERE id = %s IF data = %s",
                                           (value, i, now))
                    if done.one()[0]:
                        acked[i] = k

    wait_until(lambda: journal.stat().st_size >= 20_000, "the rewrite writing rows", process=child)
    thread = threading.Thread(target=writer)
    thread.start()
    out, err = child.communicate(timeout=600)
    stop.set()
    thread.join()
    assert child.returncode == 0, err
    assert "changed since they were read: left alone" in out, out  # the race happened
    from cqlsh_ext.payload.engine import ValueEngine

    engine = ValueEngine(cap=CAP)
    after = values(session, "busy")
    lost = [i for i, k in acked.items() if json.loads(engine.view(after[i]).data)["m"] != k]
    assert lost == [], f"{len(lost)} acknowledged writes lost"


# ------------------------------------------------------------------ SIGKILL, RESUME, UNDO


def test_a_kill_then_resume_rewrites_every_row_once_and_undo_restores_every_byte(cassandra, ks, session,
                                                                                   tmp_path) -> None:
    rows = 300
    original = {i: encode("snappy/framed", json.dumps({**DOC, "n": i}), CAP).value for i in range(rows)}
    table(session, "killed", original)
    statement = f"COMPRESSION REWRITE {ks}.killed.data AS 'zstd' PACE 200 CONFIRM"
    journal = killed_part_way(cassandra, tmp_path, ks, statement, 60, "60 rows written (part-way)")
    written_before = journal.read_text().count('"applied": true')
    assert 0 < written_before < rows
    preview = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{journal}'", keyspace=ks,
                  timeout=600)
    assert "token ranges finished" in preview.stdout and "Nothing written: add CONFIRM" in preview.stdout, \
        preview.stdout + preview.stderr
    resumed = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM", keyspace=ks,
                  timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Journal: {journal} (appended to)" in resumed.stdout
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    applied = {e["row"] for e in entries if e.get("applied")}
    outcome = {e["row"] for e in entries if "applied" in e}
    journaled = [e for e in entries if "key" in e]
    written = [e["key"]["id"] for e in journaled if e["row"] in applied]
    assert len(written) == len(set(written))  # no row written twice
    # The kill left at most the writes in flight without their outcome: each such row was either
    # written (RESUME then found it in the target chain) or not (RESUME wrote it).
    unknown = {e["key"]["id"] for e in journaled if e["row"] not in outcome}
    every = set(written) | unknown
    assert every == {e["key"]["id"] for e in journaled} and len(every) == rows
    assert len(unknown) <= 16  # the writes in flight at most
    assert {e["range"] for e in entries if "range" in e} == set(range(16))
    after = values(session, "killed")
    assert all(json.loads(READ_BACK["zstd"](after[i])) == {**DOC, "n": i} for i in range(rows))
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks, timeout=600)
    assert f"{rows} rows written back." in undo.stdout, undo.stdout + undo.stderr
    assert "left alone" not in undo.stdout  # a row journaled twice (the kill's, RESUME's) is undone once
    assert values(session, "killed") == original  # every byte


def test_rows_a_killed_undo_restored_are_said_as_restored(cassandra, ks, session, tmp_path) -> None:
    """kill -9 in the middle of an UNDO: the next UNDO finds the rows it wrote back holding exactly
    what it writes back: done, said as already restored (never as changed since), and writes the rest."""
    rows = 200
    original = {i: encode("gzip", json.dumps({**DOC, "u": i}), CAP).value for i in range(rows)}
    table(session, "undo_killed", original)
    rewrite = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE {ks}.undo_killed.data AS 'zstd' CONFIRM",
                  keyspace=ks, timeout=600)
    assert f"{rows} rows rewritten" in rewrite.stdout, rewrite.stdout + rewrite.stderr
    journal = journal_of(rewrite.stdout)
    cassandra.faults.set("delay", -1, 100, table="undo_killed")  # the UNDO's reads and writes, slowed
    try:
        statement = f"UNDO '{journal}' CONFIRM"
        child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, "-e", statement],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=isolated_env(tmp_path))
        assert child.stdout is not None
        line = wait_until(lambda: _line_of(child, "Journal: "), "the UNDO's journal", process=child)
        undoing = killed_undo = journal_of(line)
        wait_until(lambda: undoing.read_text().count('"applied": true') >= 20, "20 rows written back",
                   process=child)
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        cassandra.faults.clear()
    preview = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}'", keyspace=ks, timeout=600)
    # Read after the preview: a write the killed UNDO had sent (slowed by the fault) may land after
    # the kill; by the time the preview has read every row, the server has them all.
    restored = {i for i, value in values(session, "undo_killed").items() if value == original[i]}
    assert 20 <= len(restored) < rows
    assert f"  {rows - len(restored)} still as the rewrite wrote them; {len(restored)} already restored " \
        "(nothing to write); 0 changed since the rewrite (left alone)" in preview.stdout, preview.stdout
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks, timeout=600)
    # Finishing it: the rows the killed UNDO's journal says it wrote back first; at the end what was
    # found already restored (its writes in flight at the kill too), one counted line, then what
    # this run wrote back, never "N written back ... nothing to write" on one line.
    lines = undo.stdout.splitlines()
    said = killed_undo.read_text().count('"applied": true')
    named = journal.stem.rsplit("-", 1)[1]
    assert lines[0] == (f"finishing UNDO '{named}': it wrote back {said} of the {rows} rows of "
                        f"{ks}.undo_killed.data before it stopped; the others to write back"), lines
    assert lines[-3:-1] == [f"{len(restored)} rows already restored (they hold the value from before the "
                            "rewrite): nothing written to them.",
                            f"{rows - len(restored)} rows written back."], undo.stdout + undo.stderr
    assert "changed since" not in undo.stdout
    assert values(session, "undo_killed") == original  # every byte


def _line_of(child: subprocess.Popen[str], start: str) -> str | None:
    """The next line of `child`'s output that starts with `start` (lines before it read and dropped)."""
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith(start):
            return line
    return None


# ------------------------------------------------------------------ the pace


def test_pace_holds_the_units_written(cassandra, ks, session, tmp_path) -> None:
    pace, rows = 40, 120
    original = {i: encode("gzip", DOC_TEXT + " " * (i % 7) * 300, CAP).value for i in range(rows)}
    table(session, "paced", original)
    done = ext(cassandra, tmp_path, "-e",
               f"COMPRESSION REWRITE {ks}.paced.data AS 'zstd' PACE {pace} CONFIRM", keyspace=ks, timeout=600)
    assert done.returncode == 0, done.stderr
    journal = Path(journal_of(done.stdout))
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    sent = [(e["sent"], wcu(4 + len(bytes.fromhex(e["new"])))) for e in entries if "key" in e]
    units = sum(u for _, u in sent)
    assert len(sent) == rows
    found = re.search(r"([\d,]+) write units in ([\d.,]+) s", done.stdout)
    assert found is not None and int(found.group(1).replace(",", "")) == units, done.stdout
    # Over any second, the first ones too, at most the pace and one row's units beyond it (each
    # row's units counted at the moment the pace let it go, as its journal line says).
    largest = max(u for _, u in sent)
    for start, _ in sent:
        window = sum(u for t, u in sent if start <= t < start + 1.0)
        assert window <= pace + largest, (start, window)
    busiest = re.search(r"the busiest second ([\d,]+)", done.stdout)
    assert busiest is not None and int(busiest.group(1).replace(",", "")) <= pace + largest, done.stdout
    # Over the whole run, the pace again (the span is what was measured: a slower machine only lowers it).
    first, last = sent[0][0], sent[-1][0]
    assert units - sent[-1][1] <= pace * (last - first) + pace / 10 + largest


def test_throttling_halves_the_pace_and_every_row_is_written(cassandra, ks, session, tmp_path) -> None:
    rows = 60
    table(session, "throttled", {i: encode("gzip", DOC_TEXT, CAP).value for i in range(rows)})
    cassandra.faults.set("throttled", 4, after=40, table="throttled")  # writes and reads of the table
    try:
        done = ext(cassandra, tmp_path, "-e",
                   f"COMPRESSION REWRITE {ks}.throttled.data AS 'zstd' PACE 60 CONFIRM", keyspace=ks,
                   timeout=600)
    finally:
        cassandra.faults.clear()
    assert done.returncode == 0, done.stderr
    assert f"{rows} rows rewritten" in done.stdout, done.stdout
    assert re.search(r"slowed down \d+ times? \(throttling, timeouts, overload\)", done.stdout), done.stdout
    assert all(READ_BACK["zstd"](v) == DOC_TEXT.encode() for v in values(session, "throttled").values())


# ------------------------------------------------------------------ Ctrl-C and the progress line


def test_progress_then_ctrl_c_stops_after_the_writes_in_flight_and_resume_finishes(cassandra, ks, session,
                                                                                    tmp_path) -> None:
    rows = 200
    original = {i: encode("xz", DOC_TEXT, CAP).value for i in range(rows)}
    table(session, "stopped", original)
    child = pexpect.spawn(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "-e",
                                      f"COMPRESSION REWRITE {ks}.stopped.data AS 'zstd' PACE 100 CONFIRM"],
                          env=isolated_env(tmp_path), encoding="utf-8", timeout=300, dimensions=(40, 200))
    child.expect(r"Journal: (\S+)")
    journal = child.match.group(1).strip()
    # The progress line: rows read and their rate, rows written, units a second against the PACE,
    # bytes saved, the time left.
    child.expect(r"REWRITE data: [\d,]+ written, ~\d+ s left, ([\d,]+) units/s \(PACE 100\), [\d,]+ "
                 r"rows/s, [\d.]+ (?:B|KiB|MiB) saved, \d+ s")
    # The first progress line's rate too: within the pace and one row's units (an xz row's few).
    row_units = wcu(4 + len(encode("zstd", DOC_TEXT, CAP).value))
    assert int(child.match.group(1).replace(",", "")) <= 100 + row_units
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    out = " ".join(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.before).split())
    child.close()
    assert child.exitstatus == 130, out  # interrupted (common/exits.py), its Resume line printed
    assert "Ctrl-C: stopping: the writes in flight finish" in out
    finished = r"\d+ of 16 token ranges finished; stopped by Ctrl-C after the writes in flight"
    assert re.search(finished, out), out
    ident = str(journal).rsplit("-", 1)[1].removesuffix(".jsonl")  # the hint names it by its id: one line
    assert f"Resume: COMPRESSION REWRITE RESUME '{ident}' CONFIRM" in out
    resumed = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{ident}' CONFIRM", keyspace=ks,
                  timeout=600)
    assert resumed.returncode == 0 and "Resume:" not in resumed.stdout, resumed.stdout + resumed.stderr
    assert all(READ_BACK["zstd"](v) == DOC_TEXT.encode() for v in values(session, "stopped").values())


# ------------------------------------------------------------------ the preview


def test_the_preview_samples_a_big_table_and_all_reads_every_row(cassandra, ks, session, tmp_path) -> None:
    rows = SAMPLE_ROWS + 100  # the sample ends at SAMPLE_ROWS, with slices still being read
    original = {i: encode("gzip", DOC_TEXT, CAP).value for i in range(rows)}
    table(session, "sampled", original)
    statement = f"COMPRESSION REWRITE {ks}.sampled.data AS 'zstd'"
    sample = ext(cassandra, tmp_path, "-e", statement, keyspace=ks,
                 env={"CQLSH_EXT_REWRITE_SAMPLE_FROM_BYTES": "0"}, timeout=600)
    assert "a sample: " in sample.stdout and "random token-range slice" in sample.stdout, sample.stdout
    assert "figures below are for the whole table" in sample.stdout
    # The slices still being read when the sample was decided are dropped; nobody pressed Ctrl-C.
    assert "stopped by Ctrl-C" not in sample.stdout, sample.stdout
    every = ext(cassandra, tmp_path, "-e", statement + " ALL", keyspace=ks,
                env={"CQLSH_EXT_REWRITE_SAMPLE_FROM_BYTES": "0"}, timeout=600)
    lines = every.stdout.splitlines()
    assert f"  read {rows:,} rows (every row)" in lines, every.stdout
    assert f"  would rewrite {rows:,} rows, 0 already zstd, 0 refused" in lines
    assert lines[-2].startswith("Each row is written at its cell's write time + 1 microsecond")
    assert lines[-1] == f"Nothing written: add CONFIRM at the end of the statement to rewrite {rows:,} rows."
    units = sum(wcu(4 + len(encode("zstd", DOC_TEXT, CAP).value)) for _ in range(rows))
    paced = ext(cassandra, tmp_path, "-e", statement + " ALL PACE 100", keyspace=ks, timeout=600)
    assert f"the rewrite costs {units:,} once" in paced.stdout, paced.stdout
    assert (f"at PACE 100: {units / 100:,.0f} s at the least ({units:,} write units at 100 a second; reading "
            "the rows and a slower cluster add to it)") in paced.stdout
    assert values(session, "sampled") == original  # a preview writes nothing


# ------------------------------------------------------------------ the interactive shell at 80 columns


def _screen_path(screen: list[str], start: str) -> str:
    """A path said after `start` on the 80-column screen: on its row, or, wider than the rest of it,
    whole on the line after it (the terminal's rows of one line read as one: lines_read)."""
    from repl.terminal import lines_read

    lines = lines_read(screen, 80)
    at = next(i for i, line in enumerate(lines) if line.startswith(start.rstrip()))
    text = lines[at][len(start):].split(" (")[0]
    return text or lines[at + 1].strip().split(" (")[0]


def _fitted(rows: list[str], starts: tuple[str, ...]) -> None:
    """Every line on the 80-column screen is a line's start or its continuation, indented (a path
    wider than the screen, on a line of its own, read as the one line it is: lines_read): none the
    terminal broke."""
    from repl.terminal import lines_read

    broken = [line for line in lines_read(rows, 80) if line and not line.startswith((" ", *starts))
              and not re.match(r"\S*cqlsh(:\w+)?>", line)]  # the prompt
    assert not broken, rows


def test_interactive_rewrite_says_its_journal_first_and_resume_adds_up(cassandra, ks, session,
                                                                       tmp_path) -> None:
    from repl.terminal import Term

    rows = 240
    original = {i: encode("gzip", json.dumps({**DOC, "n": i}), CAP).value for i in range(rows)}
    table(session, "inflight", original)
    # ("~/": the journal's path whole on a row of its own, where "Journal: PATH" is too wide)
    starts = ("cqlsh", "COMPRESSION REWRITE", "Journal:", "~/", "Each row", "Rewrite ", "Nothing written",
              "Undo: ", "Resume: ", "REWRITE data")
    # Every read and write of the table 300 ms late: writes are in flight when it is killed.
    cassandra.faults.set("delay", -1, 300, table="inflight")
    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path, rows=24, cols=80)
    try:
        t.prompt()
        t.type(f"COMPRESSION REWRITE {ks}.inflight.data AS 'zstd' PACE 40 CONFIRM;")
        t.enter()
        t.expect(r"Journal:\s")
        assert "rows rewritten" not in t.text  # on the screen before the rewrite ends
        t.expect(r"REWRITE data: [\d,]+ written")
        # (a path from `~`, where its line is too wide: the shell's HOME is tmp_path)
        journal = Path(_screen_path(t.display(), "Journal: ").replace("~", str(tmp_path), 1))
        assert journal.is_file(), t.display()
        wait_until(lambda: journal.read_text().count('"applied": true') >= 40, "40 rows written")
        screen = t.display()
        print("\n".join(screen))
        _fitted(screen[next(i for i, row in enumerate(screen) if row.startswith("Journal:")):], starts)
        progress = next(row for row in screen if row.startswith("REWRITE data: "))
        assert progress.endswith("(Ctrl-C stops)") and "…" not in progress, screen  # whole fields only
        os.kill(t.child.pid, signal.SIGKILL)
    finally:
        t.close()
        cassandra.faults.clear()
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    outcome = {e["row"] for e in entries if "applied" in e}
    flying = [e for e in entries if "key" in e and e["row"] not in outcome]
    before = sum(1 for e in entries if e.get("applied"))
    finished = len({e["range"] for e in entries if "range" in e})
    assert flying, "no write in flight at the kill"

    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path, rows=50, cols=80)
    try:
        t.prompt()
        t.type(f"COMPRESSION REWRITE RESUME '{journal}';")
        t.enter()
        t.expect(r"Rewrite [\d,]+ rows\? \[y/N\]")  # at the prompt the preview asks, as UPDATE asks
        t.type("n")
        t.enter()
        t.expect("Nothing written: add CONFIRM")
        screen = t.display()
        head = next(i for i, row in enumerate(screen) if row.startswith("COMPRESSION REWRITE RESUME"))
        shown = screen[head:]
        print("\n".join(shown))
        # The writes in flight reached the server before the kill, or never: looked up as RESUME did.
        now = values(session, "inflight")
        landed = sum(1 for e in flying if now[int(e["key"]["id"], 16)] == bytes.fromhex(e["new"]))
        _fitted(shown, starts)
        said = " ".join(" ".join(shown).split())
        assert f"{before} rows rewritten so far" in said, said
        named = f"{len(flying)} row{'s' if len(flying) > 1 else ''}"
        assert f"{named} with no outcome in the journal (in flight at the kill), looked up now:" in said, said
        if landed:
            assert f"{landed} hold{'s' if landed == 1 else ''} the bytes sent" in said, said
        left = rows - before - landed
        assert f"would rewrite {left} rows" in said, said
        t.type(f"COMPRESSION REWRITE RESUME '{journal}' CONFIRM;")
        t.enter()
        t.expect(r"Journal:\s")
        assert "Undo: UNDO" not in t.since()  # the journal's line before the rewrite ends
        t.expect(r"Undo: UNDO")
        t.prompt()
        screen = t.display()
        closing = screen[next(i for i, row in enumerate(screen) if f"{left} rows rewritten" in row):]
        print("\n".join(screen))
        _fitted(closing, starts)
        said = " ".join(" ".join(closing).split())
        assert f"in {16 - finished} token ranges:" in said, said  # the ranges read, not the ring's
        [undo] = [row for row in closing if row.startswith("Undo: UNDO '")]  # one row at 80 columns
        assert journal.name.endswith(f"-{undo.split(chr(39))[1]}.jsonl"), closing
    finally:
        t.close()
    assert all(json.loads(READ_BACK["zstd"](v))["n"] == i for i, v in values(session, "inflight").items())


# ------------------------------------------------------------------ one reader


def test_rewrite_and_resume_are_read_by_one_grammar_from_scripts_sources_and_wrapped_paths(
        cassandra, ks, session, tmp_path) -> None:
    """REWRITE and RESUME never reach cqlsh's parser (rewrite.command): from -f, from a file it
    SOURCEs, from -e and pasted at the interactive prompt with the journal's path wrapped over
    lines as a screen shows it; a statement that does not read is one line, and the script goes
    on."""
    original = {i: encode("gzip", json.dumps({**DOC, "n": i}), CAP).value for i in range(6)}
    table(session, "onegrammar", original)
    inner = tmp_path / "inner.cql"
    inner.write_text(f"COMPRESSION REWRITE {ks}.onegrammar.data AS 'zstd' WHERE id IN (1, 2) CONFIRM;\n")
    script = tmp_path / "script.cql"
    script.write_text(f"COMPRESSION REWRITE {ks}.onegrammar.data AS zstd;\n"
                      f"COMPRESSION REWRITE {ks}.onegrammar.data AS 'zstd'\n"
                      f"SOURCE '{inner}'\n")
    run = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, "-f", str(script)], capture_output=True,
                         text=True, env=isolated_env(tmp_path), timeout=600)
    errors = [line for line in run.stderr.splitlines() if "COMPRESSION REWRITE:" in line]
    assert len(errors) == 1 and errors[0].endswith(
        "COMPRESSION REWRITE: AS takes the target chain in quotes ('zstd', 'zstd:dict=ID', 'none'), not "
        "'zstd'; nothing was written"), run.stderr
    assert "would rewrite 6 rows" in run.stdout and "2 rows rewritten" in run.stdout, run.stdout
    journal = str(journal_of(run.stdout))
    cut = journal.rindex("/", 0, len(journal) // 2 + 1) + 1
    wrapped = f"{journal[:cut]}\n    {journal[cut:]}"  # broken after a '/', the next row indented
    resume = ext(cassandra, tmp_path, "-e", f"COMPRESSION REWRITE RESUME '{wrapped}'", keyspace=ks,
                 timeout=600)
    assert resume.returncode == 0 and "COMPRESSION REWRITE:" not in resume.stderr, resume.stderr
    assert f"COMPRESSION REWRITE RESUME {journal}: " in resume.stdout, resume.stdout  # read whole
    assert "nothing left to rewrite" in resume.stdout, resume.stdout
    # Pasted at the interactive prompt, wrapped the same way: one statement over two lines.
    from repl.terminal import Term

    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path, rows=24, cols=80)
    try:
        t.prompt()
        said = t.run(f"COMPRESSION REWRITE RESUME '{wrapped}';", until="nothing left to rewrite")
        assert "nothing was written" not in said, said
        t.prompt()
    finally:
        t.close()
    after = values(session, "onegrammar")
    assert {i for i in original if after[i] != original[i]} == {1, 2}
    assert all(json.loads(READ_BACK["zstd"](after[i]))["n"] == i for i in (1, 2))
