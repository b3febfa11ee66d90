"""A journal turned against its user is refused, through the real binary on the real server, and
nothing is written (issue 61's "what broke", issue 73's): a line changed, spliced in from another
journal, lines reordered, a line dropped (a row's outcome), the head edited to another table or to
system_auth.roles.salted_hash (resealed with the key, too), a TTL or expiry edited, a sealed
journal relabelled version 2, a version 2 journal without UNSEALED (refused saying the risk, no
statement handed out; with UNSEALED every row it would write shown, written only with CONFIRM
UNSEALED and still bound by what was written), a journal cut at any line (said before its preview,
written back only with CUT), a file others can write, another user's, reached through a link or
in a directory others can rename it in; RESUME likewise, rebuilt from the sealed request. Each
refusal is one line naming why; a genuine copy of the same journal is read (the control)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard
from shell_runner import ext, journal_of, script

from cqlsh_ext.encode.chain import encode

from .journals import entry, key_of, line_of, lines_of, reseal

CAP = 4 << 20
DOC = {"status": "NEW", "n": 0}


def zdoc(doc: dict[str, Any]) -> bytes:
    return zstandard.ZstdCompressor().compress(json.dumps(doc, separators=(",", ":")).encode())


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One user's home for the module: one journal key."""
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("journals")
    s = cassandra.session(name)
    for table in ("t", "accounts"):
        s.execute(f"CREATE TABLE {table} (p int, c int, data blob, PRIMARY KEY (p, c))")
    for table in ("r", "r2"):
        s.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob)")
    s.shutdown()
    return name


@pytest.fixture(scope="module")
def session(cassandra, ks) -> Any:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def table_of(session: Any, table: str) -> dict[tuple[int, ...], tuple[bytes, int]]:
    key = "id" if table.startswith("r") else "p, c"
    return {tuple(row[:-2]): (row[-2], row[-1])
            for row in session.execute(f"SELECT {key}, data, writetime(data) FROM {table}")}


def copy_of(home: Path, name: str, lines: list[bytes], mode: int = 0o600) -> Path:
    path = home / "copies" / name
    path.parent.mkdir(exist_ok=True, mode=0o700)
    path.write_bytes(b"".join(lines))
    path.chmod(mode)
    return path


@pytest.fixture(scope="module")
def undone(cassandra, ks, session, home) -> dict[str, Any]:
    """An edit of three rows, one row written by another client since, and the UNDO of the edit: its
    journal holds the two rows it wrote back (the row left alone is said, not journaled)."""
    for c in range(3):
        session.execute("INSERT INTO t (p, c, data) VALUES (1, %s, %s)", (c, zdoc(DOC)))
        session.execute("INSERT INTO accounts (p, c, data) VALUES (1, %s, %s)", (c, zdoc({"balance": 10})))
    edited = ext(cassandra, home, "-e",
                 "UPDATE t SET data.status = 'DONE' WHERE p = 1 ALLOW FILTERING CONFIRM", keyspace=ks)
    assert "3 rows written" in edited.stdout, edited.stderr
    session.execute("UPDATE t SET data = %s WHERE p = 1 AND c = 2", (zdoc({"status": "THEIRS"}),))
    undo = ext(cassandra, home, "-e", f"UNDO '{journal_of(edited.stdout)}' CONFIRM", keyspace=ks)
    assert "2 rows written back, 1 changed since the edit: left alone" in undo.stdout, \
        undo.stdout + undo.stderr
    lines = lines_of(journal_of(undo.stdout))
    assert sum(b'"applied": true' in line for line in lines) == 2
    assert b'"applied": false' not in b"".join(lines)
    return {"edit": lines_of(journal_of(edited.stdout)), "undo": lines, "outputs": [edited, undo]}


def refusals(cassandra: Any, ks: str, home: Path, statements: list[str]) -> dict[str, str]:
    """Each statement's one line on stderr, by the copy it names."""
    done = ext(cassandra, home, "-e", script(*statements), keyspace=ks)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines()
             if line.startswith(("undo: ", "COMPRESSION REWRITE: "))]
    assert len(lines) == len(statements), done.stderr
    return {Path(statement.split("'")[1]).name: line
            for statement, line in zip(statements, lines, strict=True)}


def test_a_changed_journal_is_refused_in_one_line_and_nothing_is_written(cassandra, ks, session,
                                                                         home, undone) -> None:
    genuine, other = undone["undo"], undone["edit"]
    before = {name: table_of(session, name) for name in ("t", "accounts")}
    at = next(i for i, line in enumerate(genuine) if b'"key"' in line and b'"at": null' not in line)
    changed = genuine[at].replace(b'"new": "', b'"new": "00')
    expiry = genuine[at].replace(b'"expires": null', b'"expires": 99999999999.5')
    assert changed != genuine[at] and expiry != genuine[at]
    outcome = next(i for i, line in enumerate(genuine) if b'"applied": true' in line)
    assert b'"name": "t"' in genuine[0]
    variants = {
        "changed": [*genuine[:at], changed, *genuine[at + 1:]],
        "spliced": [*genuine[:at], other[1], *genuine[at + 1:]],
        "reordered": [genuine[0], genuine[2], genuine[1], *genuine[3:]],
        "dropped": [line for i, line in enumerate(genuine) if i != outcome],
        "expiry": [*genuine[:at], expiry, *genuine[at + 1:]],
        "table": [genuine[0].replace(b'"name": "t"', b'"name": "accounts"'), *genuine[1:]],
        "system": [genuine[0].replace(f'"keyspace": "{ks}"'.encode(), b'"keyspace": "system_auth"'),
                   *genuine[1:]],
    }
    paths = {name: copy_of(home, f"{name}.jsonl", lines) for name, lines in variants.items()}
    said = refusals(cassandra, ks, home, [f"UNDO '{path}' CONFIRM" for path in paths.values()])
    for name in ("changed", "spliced", "expiry"):
        assert f"line {at + 1}'s seal does not verify" in said[f"{name}.jsonl"], said
    assert "line 2's seal does not verify" in said["reordered.jsonl"], said
    assert f"line {outcome + 1}'s seal does not verify" in said["dropped.jsonl"], said
    for name in ("table", "system"):
        assert "its first line's seal does not verify" in said[f"{name}.jsonl"], said
    assert all(line.endswith("; nothing was written") for line in said.values())
    assert {name: table_of(session, name) for name in ("t", "accounts")} == before
    # The control: the genuine journal, copied the same way, is read (its preview).
    control = copy_of(home, "genuine.jsonl", genuine)
    preview = ext(cassandra, home, "-e", f"UNDO '{control}'", keyspace=ks)
    assert preview.returncode == 0 and "undo: 2 rows of" in preview.stdout, preview.stdout + preview.stderr


def test_a_journal_resealed_with_the_key_still_never_writes_to_a_system_keyspace(cassandra, ks, session,
                                                                                 home, undone) -> None:
    """Whoever holds the user's key can seal any journal: the system keyspaces stay out of reach
    all the same (a role's password hash into another role's)."""
    admin = cassandra.session()
    hashes = "SELECT role, salted_hash FROM system_auth.roles"
    roles = {row.role: row.salted_hash for row in admin.execute(hashes)}
    user = cassandra.username
    genuine = undone["undo"]
    head = entry(genuine[0]) | {"keyspace": "system_auth", "name": "roles", "table": "system_auth.roles",
                                "column": "salted_hash", "text": True}
    row = {"row": 0, "key": {"role": user.encode().hex()}, "old": "24326124313024".ljust(120, "0"),
           "new": roles[user].encode().hex(), "ttl": None, "expires": None, "writetime": None, "at": None}
    forged = reseal([line_of(head), line_of(row), line_of({"row": 0, "applied": True}),
                     line_of({"closed": True})], key_of(home))
    path = copy_of(home, "roles.jsonl", [forged])
    said = refusals(cassandra, ks, home, [f"UNDO '{path}' CONFIRM"])
    assert said["roles.jsonl"] == ("undo: system_auth is a system keyspace: cqlsh-ext never writes there; "
                                   "nothing was written"), said
    assert {row.role: row.salted_hash for row in admin.execute(hashes)} == roles
    admin.shutdown()


def test_a_journal_others_can_write_or_of_another_user_or_through_a_link_is_refused(cassandra, ks,
                                                                                    session, home,
                                                                                    undone) -> None:
    genuine = undone["undo"]
    before = table_of(session, "t")
    paths = {"open.jsonl": copy_of(home, "open.jsonl", genuine, 0o666),
             "group.jsonl": copy_of(home, "group.jsonl", genuine, 0o620),
             "theirs.jsonl": copy_of(home, "theirs.jsonl", genuine)}
    os.chown(paths["theirs.jsonl"], 4242, 4242)  # another user's (the tests run as root)
    link = home / "copies" / "link.jsonl"
    link.symlink_to(copy_of(home, "target.jsonl", genuine))
    paths["link.jsonl"] = link
    said = refusals(cassandra, ks, home, [f"UNDO '{path}' CONFIRM" for path in paths.values()])
    assert "can be written by others (rw-rw-rw-): a journal that anyone but its owner can change is refused" \
        in said["open.jsonl"], said
    assert "can be written by others (rw--w----)" in said["group.jsonl"], said
    assert "belongs to another user (uid 4242): a journal is read only by the user who wrote it" \
        in said["theirs.jsonl"], said
    assert "is a symbolic link: a journal is read by its own name, not through a link" in said["link.jsonl"]
    assert table_of(session, "t") == before


def test_a_version_2_journal_needs_unsealed_and_is_still_bound_by_what_was_written(cassandra, ks, session,
                                                                                   home, undone) -> None:
    """The undo's journal as version 2 wrote it (no seal): refused without UNSEALED, saying the risk
    and handing out no statement; with UNSEALED, previewed with every row it would write, written
    only with CONFIRM UNSEALED, and its rows go back only where the cell holds their bytes at the
    write time recorded. Written again since with the same bytes (another client putting them
    back), they are left alone."""
    unsealed = []
    for line in undone["undo"]:
        value = entry(line)
        if "journal" in value:
            value = {k: v for k, v in value.items() if k not in ("run", "part", "request")} | {"version": 2}
        if "closed" not in value:
            unsealed.append(line_of(value))
    path = copy_of(home, "v2.jsonl", unsealed)
    said = refusals(cassandra, ks, home, [f"UNDO '{path}' CONFIRM"])
    assert said["v2.jsonl"] == (
        f"undo: {path} is a journal of version 2, written before journals were sealed: nothing shows who "
        "wrote it or that it was not changed since, and an UNDO would write its old values as they are "
        "(whoever could write the file chose them): refused (HELP EDIT says how to read one you know to be "
        "yours); nothing was written"), said
    # The old spelling writes nothing: the confirmation must name what it confirms.
    said = refusals(cassandra, ks, home, [f"UNDO '{path}' UNSEALED CONFIRM"])
    assert "an unsealed journal is written back with CONFIRM UNSEALED at the end" in said["v2.jsonl"], said
    now = table_of(session, "t")
    for c in (0, 1):  # the same bytes written again, at a later write time
        session.execute("UPDATE t SET data = %s WHERE p = 1 AND c = %s", (now[(1, c)][0], c))
    again = table_of(session, "t")
    done = ext(cassandra, home, "-e", f"UNDO '{path}' CONFIRM UNSEALED", keyspace=ks)
    assert done.returncode == 0, done.stderr
    assert "a journal of version 2, not sealed: read as UNSEALED asks" in done.stdout, done.stdout
    assert ("0 rows written back, 2 written again since the undo (the same bytes, a later write): left "
            "alone.") in done.stdout, done.stdout
    assert table_of(session, "t") == again


def test_a_forged_version_2_journal_shows_every_row_it_would_write_and_writes_none_unasked(
        cassandra, ks, session, home, undone) -> None:
    """A version 2 journal made by hand: `old` any value, `new` the row's current bytes, `at` its
    write time (what issue 73 wrote into a table with UNSEALED CONFIRM). Refused without UNSEALED;
    its UNSEALED preview shows the value it would write, decoded; CONFIRM alone never writes it. A
    sealed journal relabelled version 2 is refused as changed, UNSEALED or not."""
    session.execute("INSERT INTO accounts (p, c, data) VALUES (9, 0, %s)", (zdoc({"balance": 10}),))
    cell = session.execute("SELECT data, writetime(data) AS w FROM accounts WHERE p = 9 AND c = 0").one()
    head = {"journal": "cqlsh-ext write journal", "version": 2, "kind": "edit", "keyspace": ks,
            "name": "accounts", "table": f"{ks}.accounts", "column": "data"}
    pwned = zdoc({"status": "PWNED-BY-FORGED-JOURNAL"})
    row = {"row": 0, "key": {"p": "00000009", "c": "00000000"}, "old": pwned.hex(),
           "new": bytes(cell.data).hex(), "ttl": None, "expires": None, "writetime": cell.w - 1, "at": cell.w}
    applied = line_of({"row": 0, "applied": True})
    forged = copy_of(home, "forged.jsonl", [line_of(head), line_of(row), applied])
    edit = undone["edit"]
    relabelled = copy_of(home, "relabelled.jsonl",
                         [edit[0].replace(b'"version": 3', b'"version": 2'), *edit[1:]])
    said = refusals(cassandra, ks, home, [f"UNDO '{forged}' CONFIRM",
                                          f"UNDO '{relabelled}' CONFIRM UNSEALED"])
    assert "written before journals were sealed: nothing shows who wrote it" in said["forged.jsonl"], said
    assert "UNDO '" not in said["forged.jsonl"] and "UNSEALED" not in said["forged.jsonl"]
    assert ("its lines carry seals, but its first line says version 2, written before journals were sealed: "
            "the journal was changed: refused") in said["relabelled.jsonl"], said
    preview = ext(cassandra, home, "-e", f"UNDO '{forged}' UNSEALED", keyspace=ks)
    assert preview.returncode == 0, preview.stderr
    assert 'p = 9, c = 0: back to ' in preview.stdout and "PWNED-BY-FORGED-JOURNAL" in preview.stdout, \
        preview.stdout
    assert ("Nothing written: an unsealed journal's rows go back only with CONFIRM UNSEALED, once you know "
            "the journal is yours.") in preview.stdout
    assert "UNDO '" not in preview.stdout
    assert session.execute("SELECT data FROM accounts WHERE p = 9 AND c = 0").one().data == cell.data


def test_a_journal_cut_at_every_line_is_said_to_be_so_and_written_back_only_with_cut(cassandra, ks, session,
                                                                                     home) -> None:
    """A sealed 10-row edit's journal cut after each of its lines (the closing line and whole row
    pairs removed, as issue 73 did): each UNDO preview says where it ends, before anything else;
    CONFIRM alone writes nothing; CUT CONFIRM writes back the rows it holds, and only those."""
    for c in range(10):
        session.execute("INSERT INTO t (p, c, data) VALUES (5, %s, %s)", (c, zdoc({**DOC, "c": c})))
    before = {k: v for k, v in table_of(session, "t").items() if k[0] == 5}
    edited = ext(cassandra, home, "-e",
                 "UPDATE t SET data.status = 'CUT' WHERE p = 5 ALLOW FILTERING CONFIRM", keyspace=ks)
    assert "10 rows written." in edited.stdout, edited.stdout + edited.stderr
    lines = lines_of(journal_of(edited.stdout))
    assert len(lines) == 22
    paths = {kept: copy_of(home, f"cut-{kept}.jsonl", lines[:kept]) for kept in range(1, len(lines))}
    previews = ext(cassandra, home, "-e", script(*[f"UNDO '{path}'" for path in paths.values()]), keyspace=ks)
    assert previews.returncode == 0, previews.stderr
    said = previews.stdout.splitlines()
    for kept, path in paths.items():
        line = (f"undo: {path} ends at line {kept} without its closing line: cut, or its run was killed; "
                "rows after it are not known")
        at = said.index(line)
        rows = kept // 2
        assert said[at + 1].startswith(f"undo: {rows} row{'' if rows == 1 else 's'} of {ks}.t.data to write "
                                       "back"), said[at:at + 2]  # said before the preview
    refused = refusals(cassandra, ks, home, [f"UNDO '{paths[9]}' CONFIRM"])
    assert (f"undo: {paths[9]} has no closing line: its rows after line 9 are not known; add CUT to write "
            f"back the rows it holds (UNDO '{paths[9]}' CUT CONFIRM); nothing was written") \
        == refused["cut-9.jsonl"]
    done = ext(cassandra, home, "-e", f"UNDO '{paths[9]}' CUT CONFIRM", keyspace=ks)
    assert "4 rows written back." in done.stdout.splitlines(), done.stdout + done.stderr
    after = {k: v for k, v in table_of(session, "t").items() if k[0] == 5}
    assert {k[1] for k in after if after[k][0] == before[k][0]} == {0, 1, 2, 3}  # the rows it held, only


def test_a_journal_in_a_directory_others_can_rename_it_in_is_refused(cassandra, ks, session, home,
                                                                     undone) -> None:
    shared = home / "shared"
    shared.mkdir(exist_ok=True)
    path = shared / "edit.jsonl"
    path.write_bytes(b"".join(undone["edit"]))
    path.chmod(0o600)
    shared.chmod(0o777)
    said = refusals(cassandra, ks, home, [f"UNDO '{path}'"])
    assert (f"undo: {path} is in {shared}, which others can write (rwxrwxrwx) without the sticky bit: anyone "
            "could put another journal in its place: refused; nothing was written") == said["edit.jsonl"]
    shared.chmod(0o1777)  # sticky, as /tmp is: read
    preview = ext(cassandra, home, "-e", f"UNDO '{path}'", keyspace=ks)
    assert preview.returncode == 0 and "to write back" in preview.stdout, preview.stdout + preview.stderr
    shared.chmod(0o700)


@pytest.fixture(scope="module")
def rewritten(cassandra, ks, session, home) -> dict[str, Any]:
    """A COMPRESSION REWRITE of r, its journal cut after its first finished range as a kill leaves
    it (RESUME then has ranges to go on with); r2, another table, gzip all along."""
    for i in range(40):
        value = encode("gzip", json.dumps({**DOC, "n": i}), CAP).value
        session.execute("INSERT INTO r (id, data) VALUES (%s, %s)", (i, value))
        session.execute("INSERT INTO r2 (id, data) VALUES (%s, %s)", (i, value))
    done = ext(cassandra, home, "-e", f"COMPRESSION REWRITE {ks}.r.data AS 'zstd' CONFIRM", keyspace=ks)
    assert "40 rows rewritten" in done.stdout, done.stdout + done.stderr
    lines = lines_of(journal_of(done.stdout))
    first_range = next(i for i, line in enumerate(lines) if b'"range": ' in line)
    return {"lines": lines[:first_range + 1]}


def test_resume_rebuilds_from_the_sealed_request_and_refuses_a_changed_journal(cassandra, ks, session,
                                                                               home, rewritten) -> None:
    genuine = rewritten["lines"]
    head = entry(genuine[0])
    assert "statement" not in head and head["request"]["request"] == "rewrite"
    assert head["request"]["table"] == "r" and head["request"]["spec"] == "zstd"
    others = table_of(session, "r2")
    request = head["request"]
    variants = {
        "table.jsonl": [genuine[0].replace(b'"table": "r"', b'"table": "r2"'), *genuine[1:]],
        "where.jsonl": [reseal([line_of(head | {"request": request | {"where": "id = 1 ALLOW FILTERING"}}),
                                *genuine[1:]], key_of(home))],
        "system.jsonl": [reseal([line_of(head | {"keyspace": "system_auth", "name": "roles",
                                                 "request": request | {"keyspace": "system_auth",
                                                                       "table": "roles"}}), *genuine[1:]],
                                key_of(home))],
        "open.jsonl": genuine,
    }
    paths = {name: copy_of(home, name, lines, 0o666 if name == "open.jsonl" else 0o600)
             for name, lines in variants.items()}
    said = refusals(cassandra, ks, home,
                    [f"COMPRESSION REWRITE RESUME '{p}' CONFIRM" for p in paths.values()])
    assert "its first line's seal does not verify" in said["table.jsonl"], said
    assert "the journal's WHERE is not conditions alone: id = 1 ALLOW FILTERING" in said["where.jsonl"], said
    assert "system_auth is a system keyspace: cqlsh-ext never writes there" in said["system.jsonl"], said
    assert "can be written by others (rw-rw-rw-)" in said["open.jsonl"], said
    assert table_of(session, "r2") == others
    # The control: the genuine journal goes on, from its request, with the ranges it did not finish.
    control = copy_of(home, "resume.jsonl", genuine)
    preview = ext(cassandra, home, "-e", f"COMPRESSION REWRITE RESUME '{control}'", keyspace=ks)
    assert preview.returncode == 0, preview.stderr
    assert (f"COMPRESSION REWRITE RESUME {control}: COMPRESSION REWRITE {ks}.r.data AS 'zstd'\n  1 of 16 "
            "token ranges finished") in preview.stdout, preview.stdout


def test_resume_refuses_a_version_2_journal(cassandra, ks, session, home, rewritten) -> None:
    old = []
    for line in rewritten["lines"]:
        value = entry(line)
        if "journal" in value:
            value = {k: v for k, v in value.items() if k not in ("run", "part", "request")} | {
                "version": 2, "statement": f"COMPRESSION REWRITE {ks}.r2.data AS 'zstd' CONFIRM"}
        old.append(line_of(value))
    path = copy_of(home, "old-rewrite.jsonl", old)
    others = table_of(session, "r2")
    said = refusals(cassandra, ks, home, [f"COMPRESSION REWRITE RESUME '{path}' CONFIRM"])
    assert ("is a journal of version 2, written before journals were sealed: RESUME goes on only with a "
            "sealed journal") in said["old-rewrite.jsonl"], said
    assert table_of(session, "r2") == others


def test_the_key_is_never_printed_nor_journaled(home, undone, rewritten) -> None:
    key = key_of(home)
    assert len(key) == 32 and (home / ".cassandra" / "cqlsh-ext-journal.key").stat().st_mode & 0o777 == 0o600
    said = "".join(out.stdout + out.stderr for out in undone["outputs"])
    journals = b"".join(path.read_bytes() for path in (home / ".cassandra" / "journal").iterdir())
    for spelling in (key.hex(), key.hex().upper()):
        assert spelling not in said and spelling.encode() not in journals
    assert key not in journals and key not in said.encode("utf-8", "surrogateescape")
    shutil.rmtree(home / "copies", ignore_errors=True)
