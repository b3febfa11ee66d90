"""The journal's seal alone (no server): the user's key made once at its one place, 0600; a journal
written and read back; each way of changing one refused with its reason; a torn last line read up
to it; Spark's parts sealed with the run's own key and accepted by seal, not by owner. The binary
against the server: tests/writing/test_journal_refusals.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cqlsh_ext.writing.blob_target import BlobTarget
from cqlsh_ext.writing.journal import Journal, journal_head, part_heads
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
    with pytest.raises(WriteRefused, match="version 2, written before journals were sealed.*UNSEALED reads"):
        read_journal(str(path))
    read = read_journal(str(path), unsealed=True)
    assert not read.sealed and [r.at for r in read.rows()] == [11]


def test_spark_parts_are_sealed_with_the_runs_key_and_accepted_by_seal_not_owner(home: Path) -> None:
    directory = home / "parts"
    directory.mkdir()
    request = RewriteRequest("ks", "t", BLOB, "zstd", None, False, 100, False, True)
    head = journal_head("rewrite", "ks", "t", BLOB, "timestamp", request, new_run(), None,
                        {"ranges": [[0, 1]], "partition_key": ["id"]})
    heads = part_heads(head, 2)
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
    os.chown(paths[1], 4242, -1)  # an executor running as another user
    parts = read_journals(str(directory))
    assert [p.request for p in parts] == [request, request] and all(p.closed for p in parts)
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
