"""What a new user tripped on, round nine (issue 109), read on the screen of the real shell at 80
columns: a fix made at the wrong level of an export refused by name and never stored, the load's
preview showing the fields a write changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .terminal import lines_read

COLS = 80


def _words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


@pytest.fixture(scope="module")
def shelf(cassandra) -> str:
    """A keyspace with three snappy JSON orders, each "NEW"."""
    import snappy

    ks = cassandra.create_keyspace("newcomer_nine")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    for i in range(1, 4):
        doc = {"orderId": f"ORD-{i}", "status": "NEW", "total": 10 + i}
        session.execute(insert, (i, snappy.compress(json.dumps(doc).encode())))
    session.shutdown()
    return ks


def _stored(cassandra, ks: str) -> dict[int, object]:
    import snappy

    session = cassandra.session(ks)
    try:
        return {row.id: json.loads(snappy.decompress(row.data))
                for row in session.execute("SELECT id, data FROM orders")}
    finally:
        session.shutdown()


def _write_lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_fix_beside_an_export_s_payload_is_refused_by_name_and_never_stored(term, shelf, cassandra,
                                                                             tmp_path):
    # The user set `status` beside the export's `label` instead of inside its `payload`: every row
    # was refused for want of a chain, and the chain that refusal named (ENCODE data = 'snappy>json')
    # with CONFIRM stored the whole envelope as the document. Now the key beside the payload is
    # refused by name, with or without ENCODE; the fix that refusal names is written, and its
    # preview shows the field that changes before CONFIRM.
    before = _stored(cassandra, shelf)
    exported = tmp_path / "orders.jsonl"
    t = term("-k", shelf, env={"PAGER": ""}, rows=60, cols=COLS)
    t.prompt()
    t.run(f"COPY (SELECT id, data FROM orders) TO '{exported}';", until=r"rows? written to")
    t.prompt()
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert all(set(row["data"]) >= {"label", "kind", "payload"} for row in rows), rows
    for row in rows:
        row["data"]["status"] = "PAID"  # beside label: the wrong level
    wrong = _write_lines(tmp_path / "wrong.jsonl", rows)
    said = t.run(f"COPY orders FROM '{wrong}';", until=r"Nothing to write\.")
    t.prompt()
    assert "refused 3 rows: data: status is beside payload: put it inside" in _words(said.splitlines()), said
    # The chain the old refusal named, and CONFIRM: refused alike, nothing written.
    said = t.run(f"COPY orders FROM '{wrong}' WITH ENCODE data = 'snappy>json' CONFIRM;",
                 until=r"status is beside payload[^\n]*\n")
    t.prompt()
    assert _stored(cassandra, shelf) == before
    # The fix the refusal names: status inside the payload. The preview shows the field it changes.
    for row in rows:
        row["data"]["payload"]["status"] = row["data"].pop("status")
    right = _write_lines(tmp_path / "right.jsonl", rows)
    t.run(f"COPY orders FROM '{right}';", until=r"Write 3 rows\? \[y/N\]")
    t.type("n")
    t.enter()
    t.expect(r"Nothing written")
    t.prompt()
    lines = lines_read(t.display(), COLS)
    assert all(len(line) <= COLS for line in t.display())
    at = max(i for i, line in enumerate(lines) if line == "  what the rows to write change:")
    shown = lines[at:]
    assert "  id = 1" in shown and '    data.status: "NEW" -> "PAID"' in shown, shown
    assert not any("data.label" in line for line in shown), shown
    t.run(f"COPY orders FROM '{right}' CONFIRM;", until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    assert _stored(cassandra, shelf) == {i: dict(doc, status="PAID") for i, doc in before.items()}
    t.exit()


@pytest.mark.parametrize("where", ["payload", "document"])
def test_an_export_s_object_inside_a_document_is_refused_naming_where(term, shelf, cassandra, tmp_path,
                                                                     where):
    # A whole exported object pasted where its payload goes (inside another one's payload, or as a
    # field of a plain document) was written as the document's fields.
    before = _stored(cassandra, shelf)
    inner = {"label": "snappy>json", "kind": "record", "payload": {"orderId": "ORD-1", "status": "X"}}
    value = {"label": "snappy>json", "kind": "record", "payload": inner} if where == "payload" else \
        {"orderId": "ORD-1", "order": inner}
    source = _write_lines(tmp_path / "nested.jsonl", [{"id": 1, "data": value}])
    t = term("-k", shelf, env={"PAGER": ""}, rows=60, cols=COLS)
    t.prompt()
    said = t.run(f"COPY orders FROM '{source}' WITH ENCODE data = 'snappy>json' CONFIRM;",
                 until=r"give its payload alone there")
    t.prompt()
    level = "payload" if where == "payload" else "order"
    assert re.search(rf"data: an export's object \(label, kind, payload\) inside the document, at {level}:",
                     _words(said.splitlines())), said
    assert _stored(cassandra, shelf) == before
    t.exit()


def _one_order(cassandra, name: str) -> str:
    """A keyspace `name` (its length decides its journals' paths) with one order, snappy JSON."""
    import snappy

    ks = cassandra.create_keyspace(name)
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO orders (id, data) VALUES (1, %s)",
                    (snappy.compress(b'{"status": "NEW", "total": 12}'),))
    session.shutdown()
    return ks


@pytest.fixture(scope="module")
def nine(cassandra) -> str:
    """A keyspace of a short name (its journals' paths fit 80 columns from ~) with one order."""
    return _one_order(cassandra, "nine")


def test_a_load_s_paths_fit_80_columns_from_home_each_whole_on_its_row(term, nine, home):
    # The file's absolute path in a load's lines and the journal's (98-104 characters) broke
    # mid-name at 80 columns. A path in the home directory is spelt from ~ where its line is too wide,
    # and one that fits the screen but not after its indent starts at the left edge: whole on a row.
    source = home / "fixes-of-the-orders-table" / "orders-status-fixed-by-hand.jsonl"
    source.parent.mkdir()
    _write_lines(source, [{"id": 1, "data": {"status": "PAID", "total": 12}}])
    t = term("-k", nine, env={"PAGER": ""}, rows=60, cols=COLS)
    t.prompt()
    t.run(f"COPY orders FROM '{source}' WITH ENCODE data = 'snappy>json' CONFIRM;",
          until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    screen = t.display()
    shown = "~/fixes-of-the-orders-table/orders-status-fixed-by-hand.jsonl"
    assert any(f"'{shown}'" in row for row in screen), screen
    journal = re.compile(rf"~/\.cassandra/journal/load-{nine}\.orders-\d{{8}}T\d{{6}}-[0-9a-f]{{8}}\.jsonl")
    assert any(journal.search(row) for row in screen), screen  # whole on one row
    assert all(len(row) <= COLS for row in screen)
    t.exit()


def test_small_ones_plural_limit_after_allow_filtering_and_help_keys(cassandra, shelf, home, tmp_path):
    from shell_runner import CQLSH_EXT, run

    connect = [cassandra.host, str(cassandra.port)]
    # "1 rows written" of an export of one row.
    target = tmp_path / "one.jsonl"
    said = run(CQLSH_EXT, [*connect, "-k", shelf, "-e",
                           f"COPY (SELECT id, data FROM orders WHERE id = 1) TO '{target}'"], home)
    assert f"1 row written to {target}" in said.stdout + said.stderr, said.stderr
    # LIMIT after ALLOW FILTERING: where it goes, not only that it was unexpected.
    late = "SELECT id, data.status FROM orders WHERE data.status = 'NEW' ALLOW FILTERING LIMIT 3"
    said = run(CQLSH_EXT, [*connect, "-k", shelf, "-e", late], home)
    assert "unexpected 'LIMIT': LIMIT goes before ALLOW FILTERING" in said.stderr, said.stderr
    # HELP KEYS from -e: the interactive prompt's keys, not "No help on KEYS".
    said = run(CQLSH_EXT, [*connect, "-e", "HELP KEYS"], home)
    assert said.returncode == 0 and "Key bindings (HELP KEYS):" in said.stdout, said.stdout + said.stderr
    assert "No help" not in said.stdout + said.stderr


@pytest.fixture(scope="module")
def long_named(cassandra) -> str:
    """A keyspace of a long name (its journals' whole names reach past 80 columns from ~) with one
    order."""
    return _one_order(cassandra, "newcomer_nine_journals")


def test_journal_paths_of_a_load_a_rewrite_and_undo_fit_80_columns_and_old_names_are_found(
        term, long_named, home, tmp_path):
    # A journal's path named its keyspace and table whole: 88-104 columns from ~, broken mid-name
    # at 80. Each run's "Journal:" path is whole on one row now; a journal named whole, as before,
    # is still found by its id, and an UNDO of it is known as such.
    ks = long_named
    assert len(f"~/.cassandra/journal/rewrite-{ks}.orders-20261129T125244-3fa9c2d1.jsonl") > COLS
    source = _write_lines(tmp_path / "fix.jsonl", [{"id": 1, "data": {"status": "PAID", "total": 12}}])
    journal = re.compile(r"~/\.cassandra/journal/(load|rewrite|undo)-[\w.]+-\d{8}T\d{6}-([0-9a-f]{8})\.jsonl")
    t = term("-k", ks, env={"PAGER": ""}, rows=100, cols=COLS)  # every run on one screen
    t.prompt()
    said = t.run(f"COPY orders FROM '{source}' WITH ENCODE data = 'snappy>json' CONFIRM;",
                 until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    # The load's journal as a journal written before was named (its table whole): UNDO by its id
    # finds it, and a second UNDO knows it was undone.
    [load_id] = re.findall(r"Undo: UNDO '([0-9a-f]{8})' CONFIRM", said)
    [written] = (home / ".cassandra" / "journal").glob(f"load-*-{load_id}.jsonl")
    stamp = re.search(r"-(\d{8}T\d{6})-", written.name).group(1)
    written.rename(written.with_name(f"load-{ks}.orders-{stamp}-{load_id}.jsonl"))
    said = t.run(f"UNDO '{load_id}' CONFIRM;", until=r"Undo the undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    assert "1 row written back" in _words(said.splitlines()), said
    t.run(f"UNDO '{load_id}';", until=r"Nothing (?:written|to write back)[^\n]*\n")
    t.prompt()
    assert any(row.startswith("undo: already undone:") for row in t.display()), t.display()
    t.run(f"COMPRESSION REWRITE {ks}.orders.data AS 'zstd' CONFIRM;",
          until=r"Undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    t.run("UNDO LAST CONFIRM;", until=r"Undo the undo: UNDO '[0-9a-f]{8}' CONFIRM")
    t.prompt()
    # Each run's journal, and the one UNDO LAST names: each path whole on its row.
    found = [m.group(1) for row in t.display() if (m := journal.search(row))]
    assert found == ["load", "undo", "rewrite", "rewrite", "undo"], t.display()
    t.exit()
