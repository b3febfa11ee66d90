"""How an edit writes, driven through the real binary on the real server (issue 58, "Writes and
journals"): no plain write lost to it, TTLs kept and restored by UNDO, a journal cut short or full,
bytes beside a value's frames, a number's spelling, refusals that name the budget, UNDO's bounds on
what it reads, the journal directory's permissions, and a second Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import threading
import zlib
from pathlib import Path
from typing import Any

import pexpect
import pytest
import zstandard
from shell_runner import CQLSH_EXT, ext, isolated_env, journal_of, run
from waiting import wait_until
from writing.journals import key_of, lines_of, reseal

from cqlsh_ext.encode.chain import encode

CAP = 4 << 20
DOC = {"status": "NEW", "m": 0, "items": [{"sku": "A1", "qty": 1}], "note": "call first"}


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("faults_writes")  # faults_*: the fault handler may slow it down
    s = cassandra.session(name)
    s.execute("CREATE TABLE t (p int, c int, data blob, doc text, PRIMARY KEY (p, c))")
    s.shutdown()
    return name


@pytest.fixture()
def session(cassandra, ks) -> Any:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def zstd_doc(doc: dict[str, Any]) -> bytes:
    return zstandard.ZstdCompressor().compress(json.dumps(doc, separators=(",", ":")).encode())


def unzstd(value: bytes) -> Any:
    return json.loads(zstandard.ZstdDecompressor().decompress(value, max_output_size=1 << 24))


def done_in(p: int, confirm: bool = True) -> str:
    """The edit these tests run on partition `p`: every row's status to DONE."""
    return f"UPDATE t SET data.status = 'DONE' WHERE p = {p} ALLOW FILTERING{' CONFIRM' if confirm else ''}"


def cell(session: Any, p: int, c: int, column: str = "data") -> Any:
    return session.execute(f"SELECT {column}, writetime({column}) AS w, ttl({column}) AS t FROM t "
                           "WHERE p = %s AND c = %s", (p, c)).one()


# ------------------------------------------------------------------ no lost write


def test_plain_writes_made_during_an_edit_are_never_lost(cassandra, ks, session, tmp_path) -> None:
    """Another client writes rows plainly while the edit writes them: every write it had
    acknowledged is there at the end (the edit, at the read cell's write time + 1, loses to them
    and leaves those rows alone), and the rows nobody else wrote are edited."""
    rows = 300
    for c in range(rows):
        session.execute("INSERT INTO t (p, c, data) VALUES (1, %s, %s)", (c, zstd_doc(DOC)))
    child = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "-k", ks, "-e",
                              done_in(1)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=isolated_env(tmp_path))
    assert child.stdout is not None
    head = []
    for line in child.stdout:  # the rows are read, and the first is about to be written
        head.append(line)
        if line.startswith("Journal: "):
            break
    acked: dict[int, int] = {}
    stop = threading.Event()

    def plain_writer() -> None:
        # From the last row back: the edit meets rows written after it read them.
        k = 0
        while not stop.is_set():
            for c in range(rows - 1, -1, -1):
                if stop.is_set():
                    return
                k += 1
                value = zstd_doc({**DOC, "m": k})
                session.execute("UPDATE t SET data = %s WHERE p = 1 AND c = %s", (value, c))
                acked[c] = k

    writer = threading.Thread(target=plain_writer)
    writer.start()
    out, err = child.communicate(timeout=300)
    stop.set()
    writer.join()
    out = "".join(head) + out
    assert child.returncode == 0, err
    left_alone = out.count("changed since it was read: left alone") - 1  # the closing line says it too
    assert left_alone >= 1, out[-2000:]  # the race happened
    lost = [c for c, k in acked.items() if unzstd(cell(session, 1, c).data)["m"] != k]
    assert lost == [], f"{len(lost)} acknowledged plain writes lost"
    untouched = [c for c in range(rows) if c not in acked]
    assert all(unzstd(cell(session, 1, c).data)["status"] == "DONE" for c in untouched)
    written = int(re.search(r"([\d,]+) rows? written", out).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert written + left_alone == rows


def test_the_preview_says_how_it_writes_before_it_asks(cassandra, ks, session, tmp_path) -> None:
    from repl.terminal import Term

    session.execute("INSERT INTO t (p, c, data) VALUES (2, 1, %s)", (zstd_doc(DOC),))
    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path, cols=80)
    try:
        t.prompt()
        t.type("UPDATE t SET data.status = 'ASKED' WHERE p = 2 AND c = 1;")
        t.enter()
        t.expect(r"Write 1 row\? \[y/N\]")
        screen = [line.rstrip() for line in t.display()]
        ask = next(i for i, line in enumerate(screen) if "Write 1 row?" in line)
        promise = " ".join(line.strip() for line in screen[ask - 3:ask])
        words = "written at its cell's write time + 1 microsecond, its TTL kept, then read again"
        assert words in promise, screen
        assert all(len(line) <= 80 for line in screen)
        t.type("n")
        t.enter()
        t.expect("Nothing written")
    finally:
        t.close()


# ------------------------------------------------------------------ TTL


def test_the_ttl_is_kept_and_undo_restores_the_one_recorded(cassandra, ks, session, tmp_path) -> None:
    session.execute("INSERT INTO t (p, c, data) VALUES (3, 1, %s) USING TTL 86400", (zstd_doc(DOC),))
    session.execute("INSERT INTO t (p, c, data) VALUES (3, 2, %s)", (zstd_doc(DOC),))
    before = {c: cell(session, 3, c) for c in (1, 2)}
    preview = ext(cassandra, tmp_path, "-e", done_in(3, False), keyspace=ks)
    assert "TTL kept: the new values expire when the old ones would have (1 row with a TTL" in preview.stdout
    done = ext(cassandra, tmp_path, "-e", done_in(3), keyspace=ks)
    assert "2 rows written" in done.stdout, done.stderr
    after = {c: cell(session, 3, c) for c in (1, 2)}
    assert unzstd(after[1].data)["status"] == "DONE"
    assert after[1].t is not None and 86000 < after[1].t <= before[1].t  # not made permanent
    assert after[2].t is None  # no TTL stays none
    assert after[1].w == before[1].w + 1 and after[2].w == before[2].w + 1
    journal = [json.loads(line) for line in Path(journal_of(done.stdout)).read_text().splitlines()]
    assert journal[0]["journal"] == "cqlsh-ext write journal" and journal[0]["version"] == 3
    row = next(e for e in journal if e.get("key", {}).get("c") == "00000001")
    assert row["ttl"] is not None and row["expires"] is not None and row["writetime"] == before[1].w
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{journal_of(done.stdout)}' CONFIRM", keyspace=ks)
    assert "2 rows written back" in undo.stdout, undo.stderr
    back = cell(session, 3, 1)
    assert back.data == before[1].data and back.t is not None and 86000 < back.t <= before[1].t
    assert abs(back.t - (row["expires"] - int(__import__("time").time()))) <= 2
    assert cell(session, 3, 2).t is None


# ------------------------------------------------------------------ the journal


def test_a_journal_whose_last_line_is_torn_is_undone_up_to_it(cassandra, ks, session, tmp_path) -> None:
    for c in range(3):
        session.execute("INSERT INTO t (p, c, data) VALUES (4, %s, %s)", (c, zstd_doc(DOC)))
    done = ext(cassandra, tmp_path, "-e", done_in(4), keyspace=ks)
    path = Path(journal_of(done.stdout))
    lines = path.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[-1])["closed"] is True and "key" in json.loads(lines[-3])
    # As a kill during the last row's line leaves it: its outcome, the closing line and half of its
    # own line gone.
    torn = b"".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2]
    path.write_bytes(torn)
    refused = ext(cassandra, tmp_path, "-e", f"UNDO '{path}' CONFIRM", keyspace=ks)  # no closing line: CUT
    assert refused.returncode == 2 and "has no closing line" in refused.stderr, refused.stderr
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{path}' CUT CONFIRM", keyspace=ks)
    assert undo.returncode == 0, undo.stderr
    number = len(lines) - 2
    assert (f"line {number} is cut short (its write stopped: a kill or a full disk); its row was not "
            "written (a row's line is on disk before its write); every line before it is read") \
        in undo.stdout, undo.stdout
    assert "2 rows written back" in undo.stdout
    statuses = [unzstd(cell(session, 4, c).data)["status"] for c in range(3)]
    assert statuses == ["NEW", "NEW", "DONE"]


def test_a_full_disk_stops_the_edit_with_its_closing_line(cassandra, ks, session, tmp_path) -> None:
    """The journal directory on a 16 KiB file system of its own (a mount namespace: unshare)."""
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed to give the journal a file system that fills up")
    big = {**DOC, "note": os.urandom(600).hex()}  # about 1.5 KB a row: the journal fills after a few
    for c in range(40):
        session.execute("INSERT INTO t (p, c, data) VALUES (5, %s, %s)", (c, zstd_doc(big)))
    mount = tmp_path / "small"
    mount.mkdir()
    statement = done_in(5)
    script = (f"mount -t tmpfs -o size=16k tmpfs {mount} && exec {CQLSH_EXT} "
              + " ".join(shlex.quote(a) for a in [*cassandra.cqlsh_args, "-k", ks, "--journal-dir",
                                                  str(mount / "journal"), "-e", statement]))
    proc = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c", script], capture_output=True,
                          text=True, env=isolated_env(tmp_path), timeout=300)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Errno" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    said = proc.stderr.splitlines()
    closing = [i for i, line in enumerate(said) if "rows written" in line or "row written" in line]
    assert len(closing) == 1, proc.stderr
    found = re.fullmatch(r"(\d+) rows? written; stopped: the journal (\S+) could not be written "
                         r"\(the disk is full\); (\d+) rows? not written\.", said[closing[0]])
    assert found is not None, said[closing[0]]
    undo = re.fullmatch(r"Undo: UNDO '([0-9a-f]{8})' CONFIRM", said[closing[0] + 1])  # on a line of its own
    assert undo is not None and found.group(2).endswith(f"-{undo.group(1)}.jsonl"), said
    written, left = int(found.group(1)), int(found.group(3))
    assert 0 < written < 40 and written + left == 40
    statuses = [unzstd(cell(session, 5, c).data)["status"] for c in range(40)]
    assert statuses == ["DONE"] * written + ["NEW"] * left


def test_undo_reads_no_more_than_a_journal_holds(cassandra, ks, session, tmp_path) -> None:
    zero = ext(cassandra, tmp_path, "-e", "UNDO '/dev/zero' CONFIRM", keyspace=ks)
    assert ("undo: /dev/zero is not a regular file (a device, a pipe or a directory): not a journal; "
            "nothing was written") in zero.stderr, zero.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    piped = ext(cassandra, tmp_path, "-e", f"UNDO '{fifo}'", keyspace=ks)
    assert "is not a regular file" in piped.stderr
    long_line = tmp_path / "long.jsonl"
    with long_line.open("wb") as f:
        f.write(b'{"journal": "cqlsh-ext write journal", "version": 2, "keyspace": "k", "name": "t", '
                b'"column": "data"}\n')
        f.write(b'{"row": 0, "key": {}, "old": "' + b"0" * (81 << 20))
    long_line.chmod(0o600)
    # A version 2 journal: unsealed.
    over = ext(cassandra, tmp_path, "-e", f"UNDO '{long_line}' UNSEALED", keyspace=ks)
    assert "line 2 is longer than 80 MiB, more than a journal's line holds" in over.stderr, over.stderr


def test_a_journal_key_of_the_wrong_length_is_said(cassandra, ks, session, tmp_path) -> None:
    session.execute("INSERT INTO t (p, c, data) VALUES (6, 1, %s)", (zstd_doc(DOC),))
    done = ext(cassandra, tmp_path, "-e", "UPDATE t SET data.status = 'DONE' WHERE p = 6 AND c = 1 CONFIRM",
               keyspace=ks)
    path = Path(journal_of(done.stdout))
    changed = [line.replace(b'"p": "00000006"', b'"p": "000006"') for line in lines_of(path)]
    path.write_bytes(b"".join(changed))  # the seal refuses it first
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{path}' CONFIRM", keyspace=ks)
    assert "line 2's seal does not verify" in undo.stderr, undo.stderr
    path.write_bytes(reseal(changed, key_of(tmp_path)))  # sealed by whoever holds the key: read, then said
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{path}' CONFIRM", keyspace=ks)
    assert "line 2: the key's p is 3 bytes that are no int (an int is 4 bytes)" in undo.stderr, undo.stderr
    assert "unpack" not in undo.stderr and unzstd(cell(session, 6, 1).data)["status"] == "DONE"


def test_undo_stopped_by_a_bad_key_after_rows_it_wrote_says_what_it_wrote(cassandra, ks, session,
                                                                          tmp_path) -> None:
    """A journal whose third row's key is no int (sealed by whoever holds the key): UNDO writes the
    two rows before it back, then stops there, and says so: never "nothing was written"."""
    for c in (1, 2, 3):
        session.execute("INSERT INTO t (p, c, data) VALUES (9, %s, %s)", (c, zstd_doc(DOC)))
    edit = "UPDATE t SET data.status = 'DONE' WHERE p = 9 ALLOW FILTERING CONFIRM"
    done = ext(cassandra, tmp_path, "-e", edit, keyspace=ks)
    assert done.returncode == 0, done.stderr
    path = Path(journal_of(done.stdout))
    lines = lines_of(path)
    rows = sorted({json.loads(line)["row"] for line in lines if b'"row": ' in line})
    assert len(rows) == 3, lines
    third = [n for n, line in enumerate(lines) if b'"row": ' in line and json.loads(line)["row"] == rows[2]]
    for n in third:  # the third row's lines (written before and after it)
        lines[n] = lines[n].replace(b'"p": "00000009"', b'"p": "000009"')
    path.write_bytes(reseal(lines, key_of(tmp_path)))
    undo = ext(cassandra, tmp_path, "-e", f"UNDO '{path}' CONFIRM", keyspace=ks)
    said = undo.stdout + undo.stderr
    statuses = [unzstd(cell(session, 9, c).data)["status"] for c in (1, 2, 3)]
    assert statuses == ["NEW", "NEW", "DONE"], said  # the store: two written back, the third not
    assert "nothing was written" not in said, said
    assert f"line {third[0] + 1}: the key's p is 3 bytes that are no int" in said, said
    assert "2 rows written back; stopped: " in said, said
    assert undo.returncode != 0, said


def test_a_journal_directory_open_to_others_is_closed_or_refused(cassandra, ks, session, tmp_path) -> None:
    session.execute("INSERT INTO t (p, c, data) VALUES (7, 1, %s)", (zstd_doc(DOC),))
    journals = tmp_path / "journals"
    journals.mkdir()
    statement = "UPDATE t SET data.m = %d WHERE p = 7 AND c = 1 CONFIRM"
    for mode in (0o777, 0o770):
        journals.chmod(mode)
        done = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "--journal-dir", str(journals), "-e",
                               statement % mode], tmp_path)
        assert done.returncode == 0, done.stderr
        shown = stat.filemode(mode | stat.S_IFDIR)[1:]
        assert (f"edit: the journal directory {journals} was open to others ({shown}): made 0700 (journals "
                "hold stored values)") in done.stderr, done.stderr
        assert stat.S_IMODE(journals.stat().st_mode) == 0o700
    os.chown(journals, 4242, -1)  # another user's (the tests run as root here, or chown is refused)
    refused = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "--journal-dir", str(journals), "-e",
                              statement % 1], tmp_path)
    assert (f"edit: the journal directory {journals} belongs to another user (uid 4242): refused, journals "
            "hold stored values (--journal-dir DIR); nothing was written") in refused.stderr, refused.stderr
    assert unzstd(cell(session, 7, 1).data)["m"] == 0o770


# ------------------------------------------------------------------ bytes beside the frames


def test_bytes_beside_a_values_frames_are_kept_or_the_row_refused(cassandra, ks, session, tmp_path) -> None:
    text = json.dumps(DOC, separators=(",", ":")).encode()
    frame = zstandard.ZstdCompressor().compress(text)
    skippable = b"\x50\x2a\x4d\x18" + (6).to_bytes(4, "little") + b"hello!"
    entry = len(frame).to_bytes(4, "little") + len(text).to_bytes(4, "little")
    footer = (1).to_bytes(4, "little") + b"\x00" + b"\xb1\xea\x92\x8f"
    seek_table = b"\x5e\x2a\x4d\x18" + (len(entry) + len(footer)).to_bytes(4, "little") + entry + footer
    values = {1: frame + skippable, 2: frame + seek_table, 3: zlib.compress(text) + b"TRAILER",
              4: skippable + frame}
    for c, value in values.items():
        session.execute("INSERT INTO t (p, c, data) VALUES (8, %s, %s)", (c, value))
    preview = ext(cassandra, tmp_path, "-e", done_in(8, False), keyspace=ks)
    assert ("refused 1 row: a seek table follows its zstd frames (25 bytes): it records their sizes, which "
            "a new value changes; not rewritten here") in preview.stdout, preview.stdout
    assert "1 row: 14 bytes after its zstd data: kept as they were" in preview.stdout
    assert "1 row: 7 bytes after its zlib data: kept as they were" in preview.stdout
    assert "1 row: 14 bytes of skippable frames before its zstd frame: kept as they were" in preview.stdout
    done = ext(cassandra, tmp_path, "-e", done_in(8), keyspace=ks)
    assert "3 rows written" in done.stdout, done.stderr
    first = cell(session, 8, 1).data
    assert first.endswith(skippable) and unzstd(first)["status"] == "DONE"
    third = cell(session, 8, 3).data
    assert third.endswith(b"TRAILER")
    inflate = zlib.decompressobj()
    assert json.loads(inflate.decompress(third))["status"] == "DONE" and inflate.unused_data == b"TRAILER"
    assert cell(session, 8, 2).data == values[2]
    fourth = cell(session, 8, 4).data
    assert fourth.startswith(skippable) and unzstd(fourth[len(skippable):])["status"] == "DONE"


def test_a_number_is_written_as_it_was_typed(cassandra, ks, session, tmp_path) -> None:
    session.execute("INSERT INTO t (p, c, doc) VALUES (9, 1, %s)", ('{"total":1.0,"n":1}',))
    done = ext(cassandra, tmp_path, "-e",
               "UPDATE t SET doc.total = 2.50, doc.n = -0.10 WHERE p = 9 AND c = 1 CONFIRM", keyspace=ks)
    assert "1 row written" in done.stdout, done.stderr
    assert cell(session, 9, 1, "doc").doc == '{"total":2.50,"n":-0.10}'


def test_refusals_name_the_budget_that_was_hit(cassandra, ks, session, tmp_path) -> None:
    deep = "[" * 500 + "]" * 500
    wide = json.dumps([{"k": i, "v": "abc"} for i in range(170_000)], separators=(",", ":"))  # 3 MiB
    assert len(wide) > 3 << 20
    session.execute("INSERT INTO t (p, c, data) VALUES (10, 1, %s)", (encode("zstd", deep, CAP).value,))
    session.execute("INSERT INTO t (p, c, data) VALUES (10, 2, %s)", (encode("zstd", wide, CAP).value,))
    preview = ext(cassandra, tmp_path, "-e", "UPDATE t SET data[0] = 1 WHERE p = 10 ALLOW FILTERING",
                  keyspace=ks)
    assert "refused 1 row: its JSON nests deeper than 64 levels, the value budget's depth: not edited here" \
        in preview.stdout, preview.stdout
    assert ("refused 1 row: its JSON holds more than 100,000 values, over the value budget (100,000 nodes "
            "at --max-output-size 4.0 MiB): not edited here") in preview.stdout, preview.stdout
    assert "RecursionError" not in preview.stdout + preview.stderr
    assert "not a JSON object or list" not in preview.stdout


# ------------------------------------------------------------------ Ctrl-C


def test_a_second_ctrl_c_ends_the_edit_with_its_closing_line(cassandra, ks, session, tmp_path) -> None:
    for c in range(30):
        session.execute("INSERT INTO t (p, c, data) VALUES (11, %s, %s)", (c, zstd_doc(DOC)))
    # Every request on t late: the edit is mid-way when the presses land, a row in flight for
    # seconds. Both presses must land inside the first row's write: the test reads two lines and
    # sends two signals in that time, which took over 1.5 s once at a load of 10 (the row then
    # finished and the first press ended the edit), so the write is held 4 s.
    cassandra.faults.set("delay", -1, 4000, table="t")
    try:
        child = pexpect.spawn(CQLSH_EXT, [*cassandra.cqlsh_args, "-k", ks, "-e",
                                          done_in(11)],
                              env=isolated_env(tmp_path), encoding="utf-8", timeout=180, dimensions=(40, 200))
        child.expect(r"Journal: (\S+)\r?\n")  # the whole line: the journal opened, the first row next
        journal = child.match.group(1).strip()
        # The first row's write held at the server (every read before the journal was answered, so
        # a request met and not answered is the write): a press before it would stop the edit
        # before any row, another test's case.
        wait_until(lambda: (met := cassandra.faults.met()).pages > met.answered,
                   "the first row's write held at the server")
        child.kill(signal.SIGINT)
        child.expect(r"Ctrl-C: stopping after the row being written \(Ctrl-C again stops at once\)")
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF)
        out = child.before
        child.close()
    finally:
        cassandra.faults.clear()
    assert child.exitstatus == 130, (child.exitstatus, out)  # interrupted (common/exits.py)
    assert "Traceback" not in out
    closing = re.search(r"(\d+) rows? written; stopped by a second Ctrl-C while writing p = 11, c = (\d+) "
                        r"\(whether it applied is unknown: UNDO checks it\), (\d+) more rows? not written\. "
                        r"Undo: UNDO '(\S+)' CONFIRM", " ".join(re.sub(r"\x1b\[[0-9;]*m", "", out).split()))
    assert closing is not None, out
    assert journal.endswith(f"-{closing.group(4)}.jsonl"), (closing.group(4), journal)  # by its short id
