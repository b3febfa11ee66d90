"""The journal's seal alone (no server): the user's key made once at its one place, 0600, and never
made again silently once journals were sealed with it (`cqlsh-ext journal new-key` makes it on
purpose); a journal written and read back; each way of changing one refused with its reason (a
sealed journal relabelled version 2 among them); a torn last line read up to it and named for what
it was; a journal cut at every line said to be so; a second pass that reads no line appended
after the first; Spark's parts sealed with the run's own key and checked as journals are (owner,
mode); the directory a journal is read from; the lock one live run holds and the run file naming
it; journals found by their short id and LAST. The binary against the server:
tests/writing/test_journal_refusals.py, tests/writing/test_journal_runs.py."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal import Journal, JournalError, journal_head, part_heads
from cqlsh_ext.writing.journal_lock import JournalLock, run_file
from cqlsh_ext.writing.journal_names import find_journal, id_of
from cqlsh_ext.writing.journal_read import read_journal, read_journals
from cqlsh_ext.writing.refused import WriteRefused
from cqlsh_ext.writing.requests import EditOp, EditRequest, RewriteRequest
from cqlsh_ext.writing.seal import new_run, run_key, user_key

from .journals import entry, key_of, line_of, lines_of, reseal

BLOB = BlobTarget("data")
REQUEST = EditRequest("ks", "t", BLOB, (EditOp("data.status", ("status",), '"DONE"'),), "id = 1")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def written(directory: Path, rows: int = 3, close: bool = True) -> Path:
    """A journal of an edit of `rows` rows, the last left alone (applied false)."""
    journal = Journal(str(directory), journal_head("edit", "ks", "t", BLOB, "timestamp", REQUEST, new_run()))
    for n in range(rows):
        journal.before(n, {"id": n.to_bytes(4, "big")}, b"old", b"new", 60, 1e9 + n + 0.25, 10, 11)
        journal.after(n, n != rows - 1)
    if close:
        journal.close()
    else:
        assert journal.fd is not None
        os.close(journal.fd)
    return Path(journal.path)


def test_the_key_is_made_once_at_its_one_place_readable_by_the_user_only(home: Path) -> None:
    key = user_key(create=True)
    path = home / ".cassandra" / "cqlsh-ext-journal.key"
    assert path.read_bytes() == key and len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert user_key(create=False) == key == user_key(create=True)
    path.chmod(0o644)
    with pytest.raises(WriteRefused, match=r"is open to others \(rw-r--r--\): refused"):
        user_key(create=False)
    path.chmod(0o600)
    os.chown(path, 4242, -1)  # another user's (the tests run as root)
    with pytest.raises(WriteRefused, match=r"belongs to another user \(uid 4242\)"):
        user_key(create=False)
    path.unlink()
    (home / "elsewhere").write_bytes(key)
    path.symlink_to(home / "elsewhere")
    with pytest.raises(WriteRefused, match="is a symbolic link"):
        user_key(create=False)


def test_no_key_no_journal_read(home: Path) -> None:
    path = written(home / "journal")
    (home / ".cassandra" / "cqlsh-ext-journal.key").unlink()
    with pytest.raises(WriteRefused, match="there is no journal key at .*: this journal cannot be verified"):
        read_journal(str(path))


def test_a_journal_reads_back_with_its_request_outcomes_and_close(home: Path) -> None:
    path = written(home / "journal")
    read = read_journal(str(path))
    assert read.sealed and read.closed and read.request == REQUEST
    assert read.outcomes == {0: True, 1: True, 2: False}
    rows = list(read.rows())
    assert [r.applied for r in rows] == [True, True, False]
    assert rows[1].expires == 1e9 + 1.25 and rows[1].at == 11  # the moment of expiry with its fraction
    # Each line is one JSON object whose MAC sits before its closing brace.
    assert all(json.loads(line)["mac"] for line in lines_of(path))


def _refused(path: Path, lines: list[bytes], match: str) -> None:
    path.write_bytes(b"".join(lines))
    with pytest.raises(WriteRefused, match=match):
        read = read_journal(str(path))
        list(read.rows())


def test_each_change_to_a_journal_is_refused(home: Path) -> None:
    path = written(home / "journal")
    genuine = lines_of(path)
    other = lines_of(written(home / "other"))
    changed = genuine[1].replace(b'"new": "6e6577"', b'"new": "657669"')
    assert changed != genuine[1]
    _refused(path, [genuine[0], changed, *genuine[2:]], "line 2's seal does not verify")
    _refused(path, [*genuine[:3], other[3], *genuine[4:]], "line 4's seal does not verify")  # spliced
    _refused(path, [genuine[0], genuine[2], genuine[1], *genuine[3:]], "line 2's seal does not verify")
    dropped = [line for line in genuine if b'"applied": false' not in line]
    assert len(dropped) == len(genuine) - 1
    _refused(path, dropped, "line 7's seal does not verify")  # the closing line follows it
    head = genuine[0].replace(b'"name": "t"', b'"name": "accounts"')
    _refused(path, [head, *genuine[1:]], "its first line's seal does not verify")
    ttl = genuine[1].replace(b'"expires": 1000000000.25', b'"expires": null')
    assert ttl != genuine[1]
    _refused(path, [genuine[0], ttl, *genuine[2:]], "line 2's seal does not verify")
    # Resealed by someone holding the key, the same head naming another table reads (the seal is
    # all that vouches for it), a head whose request names another table than it does does not.
    forged = entry(genuine[0]) | {"name": "accounts", "table": "ks.accounts"}
    _refused(path, [reseal([line_of(forged), *genuine[1:]], key_of(home))],
             "its first line's request names another table or column than it does")
    path.write_bytes(b"".join(genuine))
    assert read_journal(str(path)).outcomes == {0: True, 1: True, 2: False}  # the control: it reads


def test_a_torn_last_line_is_read_up_to_it_and_an_unclosed_journal_says_so(home: Path) -> None:
    path = written(home / "journal", close=False)
    lines = lines_of(path)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])
    read = read_journal(str(path))
    assert read.torn is not None and read.torn.line == len(lines) and not read.closed
    assert read.outcomes == {0: True, 1: True, 2: None}


def test_a_file_others_can_write_or_reached_through_a_link_or_of_another_user_is_refused(home: Path) -> None:
    path = written(home / "journal")
    for mode, shown in ((0o666, "rw-rw-rw-"), (0o620, "rw--w----"), (0o602, "rw-----w-")):
        path.chmod(mode)
        with pytest.raises(WriteRefused, match=rf"can be written by others \({shown}\)"):
            read_journal(str(path))
    path.chmod(0o600)
    link = home / "link.jsonl"
    link.symlink_to(path)
    with pytest.raises(WriteRefused, match="is a symbolic link: a journal is read by its own name"):
        read_journals(str(link))
    os.chown(path, 4242, -1)
    with pytest.raises(WriteRefused, match=r"belongs to another user \(uid 4242\)"):
        read_journal(str(path))


def test_a_version_2_journal_is_read_only_when_named_unsealed(home: Path) -> None:
    path = home / "old.jsonl"
    head = {"journal": "cqlsh-ext write journal", "version": 2, "kind": "edit", "keyspace": "ks", "name": "t",
            "column": "data"}
    row = {"row": 0, "key": {"id": "00000001"}, "old": "6f6c64", "new": "6e6577", "ttl": None,
           "expires": None, "writetime": 10, "at": 11}
    path.write_text(json.dumps(head) + "\n" + json.dumps(row) + "\n" + json.dumps({"row": 0, "applied": True})
                    + "\n")
    path.chmod(0o600)
    with pytest.raises(WriteRefused, match="version 2, written before journals were sealed: nothing shows "
                       "who wrote it or that it was not changed since") as refused:
        read_journal(str(path))
    assert "UNDO '" not in str(refused.value)  # the risk said, no statement handed out
    read = read_journal(str(path), unsealed=True)
    assert not read.sealed and [r.at for r in read.rows()] == [11]


def test_a_sealed_journal_relabelled_version_2_is_refused_as_changed(home: Path) -> None:
    path = written(home / "journal")
    lines = lines_of(path)
    relabelled = [lines[0].replace(b'"version": 3', b'"version": 2'), *lines[1:]]
    assert relabelled[0] != lines[0]
    for unsealed in (False, True):  # UNSEALED reads no journal whose lines carry seals
        _refused(path, relabelled, "its lines carry seals, but its first line says version 2, written before "
                                   "journals were sealed: the journal was changed: refused")
        with pytest.raises(WriteRefused, match="the journal was changed"):
            read_journal(str(path), unsealed=unsealed)


def test_spark_parts_are_sealed_with_the_runs_key_and_checked_as_journals_are(home: Path) -> None:
    directory = home / "parts"
    directory.mkdir()
    request = RewriteRequest("ks", "t", BLOB, "zstd", None, False, 100, False, True)
    head = journal_head("rewrite", "ks", "t", BLOB, "timestamp", request, new_run(), None,
                        {"ranges": [[0, 1]], "partition_key": ["id"]})
    heads = part_heads(head, 2, str(home))
    key = user_key(create=False)
    assert all(part.key == run_key(key, head["run"]) and key not in part.line for part in heads)
    assert "key" not in repr(heads[0]) and key.hex() not in repr(heads[0])
    paths: list[Path] = []
    for part in heads:  # as each task writes its part, with the run's key only
        journal = Journal(str(directory), head, part.prefix, part)
        journal.before(0, {"id": b"\0\0\0\1"}, b"old", b"new", None, None, 10, 11)
        journal.after(0, True)
        journal.range_done(0)
        journal.close()
        paths.append(Path(journal.path))
    parts = read_journals(str(directory))
    assert [p.request for p in parts] == [request, request] and all(p.closed for p in parts)
    # Checked as any journal is: another user's part, or one others can write, is refused.
    os.chown(paths[1], 4242, -1)
    with pytest.raises(WriteRefused, match=r"part-0001\S*jsonl belongs to another user \(uid 4242\)"):
        read_journals(str(directory))
    os.chown(paths[1], os.geteuid(), -1)
    paths[1].chmod(0o622)
    with pytest.raises(WriteRefused, match=r"part-0001\S*jsonl can be written by others \(rw--w--w-\)"):
        read_journals(str(directory))
    paths[1].chmod(0o600)
    first, second = lines_of(paths[0]), lines_of(paths[1])
    # A part's head sealed by the run's key (what an executor holds) is not the driver's: refused.
    paths[0].write_bytes(reseal(first, heads[0].key))
    with pytest.raises(WriteRefused, match="its first line's seal does not verify"):
        read_journals(str(directory))
    paths[0].write_bytes(b"".join(first))
    # A line of one part moved into another breaks its chain (each part's chain is its own).
    assert first[1] != second[1]
    paths[1].write_bytes(b"".join([second[0], first[1], *second[2:]]))
    with pytest.raises(WriteRefused, match="line 2's seal does not verify"):
        read_journals(str(directory))


def test_the_independent_reseal_matches_the_journals_own_seal(home: Path) -> None:
    """docs/edit.md's description of the seal (what tests/writing/journals.py implements) is the
    one the journal writes: a journal resealed as written is the same bytes."""
    path = written(home / "journal")
    assert reseal(lines_of(path), key_of(home)) == path.read_bytes()


def test_a_journal_cut_at_every_line_says_where_it_ends(home: Path) -> None:
    """A sealed 10-row journal with its lines cut from the end, one at a time: each reads, says it
    is cut (it ends without its closing line, at its last line), and knows only the rows it holds."""
    path = written(home / "journal", rows=10)
    lines = lines_of(path)
    assert len(lines) == 22 and read_journal(str(path)).closed and not read_journal(str(path)).cut
    for kept in range(1, len(lines)):
        path.write_bytes(b"".join(lines[:kept]))
        read = read_journal(str(path))
        assert read.cut and read.lines == kept, kept
        assert read.cut_text() == (f"ends at line {kept} without its closing line: cut, or its run was "
                                   "killed; rows after it are not known")
        assert len(read.outcomes) == kept // 2  # the rows whose line it holds


@pytest.mark.parametrize(("torn", "said"), [
    (-1, "it was the closing line: the run had ended"),
    (-2, "it said the outcome of a row written: UNDO and RESUME look at that row's cell"),
    (-3, "its row was not written (a row's line is on disk before its write)"),
])
def test_a_torn_last_line_is_named_for_what_it_was(home: Path, torn: int, said: str) -> None:
    path = written(home / "journal")
    lines = lines_of(path)
    path.write_bytes(b"".join(lines[:torn]) + lines[torn][:len(lines[torn]) // 2])
    read = read_journal(str(path))
    assert read.torn is not None and read.torn.line == len(lines) + torn + 1
    assert said in read.torn_text(), read.torn_text()
    assert "every line before it is read" in read.torn_text()


def test_the_rows_are_read_no_further_than_the_first_reading_went(home: Path) -> None:
    """Lines appended after the reading (by a run that ignored the lock) are not read by the second
    pass: an UNDO writes back what its preview counted, not more."""
    path = written(home / "journal", rows=3, close=False)
    read = read_journal(str(path))
    journal_lines = lines_of(path)
    more = written(home / "more", rows=5, close=False)
    with path.open("ab") as f:  # a second run's lines (they would not verify here either)
        f.write(b"".join(lines_of(more)[1:]))
    assert [row.line for row in read.rows()] == [2, 4, 6]
    assert len(lines_of(path)) > len(journal_lines)


def test_a_missing_key_is_never_made_again_silently(home: Path) -> None:
    first = written(home / "journal")
    key = home / ".cassandra" / "cqlsh-ext-journal.key"
    key.unlink()
    with pytest.raises(JournalError) as refused:
        written(home / "journal")
    said = str(refused.value)
    assert said == (f"the journal key {key} is missing, and 1 journal in {home / 'journal'} was sealed with "
                    "it: put it back, or make a new one on purpose with `cqlsh-ext journal new-key` (the "
                    "journals the old key sealed then no longer verify: UNDO and RESUME refuse them)")
    assert not key.exists() and len(list((home / "journal").iterdir())) == 1  # nothing written
    # A journal directory that holds none: the first journal there makes the key.
    made = subprocess.run([sys.executable, "-m", "cqlsh_ext", "journal", "new-key", "--journal-dir",
                           str(home / "journal")], capture_output=True, text=True, env={**os.environ,
                                                                                         "HOME": str(home)})
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [
        f"made a new journal key: {key} (readable by you only; never print or copy it but to your own "
        "accounts)",
        f"1 journal in {home / 'journal'} was sealed with the old key: they no longer verify (UNDO and "
        "RESUME refuse them; put the old key back to read them)"]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    with pytest.raises(WriteRefused, match="its first line's seal does not verify"):
        read_journal(str(first))
    assert read_journal(str(written(home / "journal"))).sealed  # the next edit writes again
    again = subprocess.run([sys.executable, "-m", "cqlsh_ext", "journal", "new-key"], capture_output=True,
                           text=True, env={**os.environ, "HOME": str(home)})
    assert again.returncode == 1 and f"there is a journal key at {key} already" in again.stderr


def test_a_journal_is_read_only_from_a_directory_nobody_else_can_rename_it_in(home: Path) -> None:
    path = written(home / "journal")
    directory = path.parent
    for mode, shown in ((0o777, "rwxrwxrwx"), (0o730, "rwx-wx---")):
        directory.chmod(mode)
        with pytest.raises(WriteRefused, match=rf"is in {directory}, which others can write \({shown}\) "
                                               "without the sticky bit: anyone could put another journal"):
            read_journals(str(path))
    directory.chmod(0o1777)  # sticky, as /tmp: nobody renames another's file
    assert read_journals(str(path))[0].closed
    directory.chmod(0o700)
    os.chown(directory, 4242, -1)
    with pytest.raises(WriteRefused, match=rf"is in {directory}, which belongs to another user \(uid 4242\)"):
        read_journals(str(path))
    os.chown(directory, os.geteuid(), -1)


def test_one_live_run_holds_a_journal_and_a_dead_ones_lock_is_taken_over(home: Path) -> None:
    """The writer holds its journal's lock; a reader (UNDO, RESUME) is refused in one line naming
    the run (what, pid, host, start); once the writer is gone (a process killed: its descriptors
    closed by the kernel) the journal is taken."""
    journal = Journal(str(home / "journal"), journal_head("edit", "ks", "t", BLOB, "timestamp", REQUEST,
                                                          new_run()))
    named = json.loads(Path(run_file(journal.path)).read_text())
    assert named["pid"] == os.getpid() and named["what"] == "an edit"
    with pytest.raises(WriteRefused) as refused:
        JournalLock.take(journal.path, "an UNDO")
    said = str(refused.value)
    assert said.startswith(f"{journal.path} is in use by a live run (an edit, pid {os.getpid()} on "
                           f"{socket.gethostname()}, started ")
    assert said.endswith("UTC): refused while it runs (let it finish, or stop it first)")
    journal.close()
    assert not Path(run_file(journal.path)).exists()
    # Killed: a child holds the lock and dies without a word; its run file is left behind.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({journal.path!r}, os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        f"open({run_file(journal.path)!r}, 'w').write('{{\"what\": \"an edit\", \"pid\": %d, "
        "\"host\": \"h\", \"start\": 0}' % os.getpid())\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(WriteRefused, match=rf"in use by a live run \(an edit, pid {holder.pid} on h, "
                                               r"started 1970-01-01 00:00:00 UTC\)"):
            JournalLock.take(journal.path, "an UNDO")
    finally:
        holder.kill()
        holder.wait()
    with JournalLock.take(journal.path, "an UNDO") as lock:  # the dead run's lock went with it
        assert json.loads(Path(run_file(journal.path)).read_text())["pid"] == os.getpid()
        assert lock.fd is not None
    assert not Path(run_file(journal.path)).exists()


def test_a_journal_is_found_by_its_short_id_and_last(home: Path) -> None:
    directory = home / "journal"
    first = written(directory)
    second = written(directory)
    os.utime(first, (1, 1))  # changed long ago: the second is the newest
    ident = id_of(str(second))
    assert ident is not None and len(ident) == 8 and second.name.endswith(f"-{ident}.jsonl")
    assert find_journal(ident, str(directory), ("edit",)) == (str(second), True)
    assert find_journal(second.name, str(directory), ("edit",)) == (str(second), True)
    assert find_journal("LAST", str(directory), ("edit",)) == (str(second), True)
    assert find_journal(str(first), str(directory), ("edit",)) == (str(first), False)
    with pytest.raises(WriteRefused, match=r"no journal '0badf00d' in .*: name a journal by its path, the id "
                                           "its name ends with, or LAST"):
        find_journal("0badf00d", str(directory), ("edit",))
    with pytest.raises(WriteRefused, match="LAST: no journal of a rewrite in"):
        find_journal("LAST", str(directory), ("rewrite",))
