"""Edits of stored payloads (docs/edit.md) on the real server: every chain encode() writes edited and
read back by the producers' own libraries, JSON text kept as it was spelt, the preview, the
conditional write (a write made between the read and the write is left alone), refusals, Ctrl-C
between rows, the journal and UNDO; the real binary for the walk-through."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import signal
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import msgpack
import pytest
import zstandard
from bson import decode as bson_decode
from dictionary_values import raw_dictionary_loaded, readers_with, spec_for
from shell_runner import ext, in_process_shell, journal_of

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.capabilities import Writer
from cqlsh_ext.encode.chain import encode
from cqlsh_ext.writing import cell_writer as writing_cells
from cqlsh_ext.writing import loop as write_loop

DOC = {"status": "NEW", "items": [{"sku": "A1", "qty": 1}, {"sku": "B2", "qty": 2}], "note": "call first"}
DOC_TEXT = json.dumps(DOC, separators=(",", ":"))
CAP = 4 << 20
FORMATS = ("text", "msgpack", "cbor", "bson")
RECORD_READ = {"msgpack": msgpack.unpackb, "cbor": cbor2.loads, "bson": bson_decode,
               "text": lambda b: json.loads(b.decode())}


def _read_back() -> dict[str, Any]:
    """The containers read with their producers' libraries, as tests/encode checks encode()."""
    path = Path(__file__).parent.parent / "encode" / "test_roundtrip.py"
    spec = importlib.util.spec_from_file_location("encode_roundtrip_readers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.READ_BACK)


READ_BACK = _read_back()
WRITABLE = [f for f in registry.all_containers() if isinstance(f, Writer)]


@pytest.fixture(scope="module")
def ks(cassandra) -> str:
    name = cassandra.create_keyspace("edit")
    s = cassandra.session(name)
    s.execute("CREATE TABLE t (id int, seq int, data blob, doc text, PRIMARY KEY (id, seq))")
    s.shutdown()
    return name


@pytest.fixture()
def sh(cassandra, ks, tmp_path, monkeypatch) -> Iterator[Any]:
    monkeypatch.setenv("HOME", str(tmp_path))  # the journal key (~/.cassandra) is this test's
    with in_process_shell(cassandra, ks) as shell:
        shell.settings.display.journal_dir = str(tmp_path / "journal")
        yield shell


@pytest.fixture()
def session(cassandra, ks) -> Iterator[Any]:
    s = cassandra.session(ks)
    yield s
    s.shutdown()


def put(session: Any, id_: int, seq: int, data: bytes | None = None, doc: str | None = None) -> None:
    session.execute("INSERT INTO t (id, seq, data, doc) VALUES (%s, %s, %s, %s)", (id_, seq, data, doc))


def stored(session: Any, id_: int, seq: int, column: str = "data") -> Any:
    return getattr(session.execute(f"SELECT {column} FROM t WHERE id = %s AND seq = %s", (id_, seq)).one(),
                   column)


def said(capsys: Any) -> tuple[str, str]:
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_every_chain_encode_writes_is_edited_in_its_own_form(sh, session, capsys, tmp_path) -> None:
    # A container written only with a dictionary of the store (dcz) is written, read and edited
    # with one loaded, as its users run the shell (--dictionary FILE).
    with raw_dictionary_loaded(tmp_path) as dictionary:
        read_back = {**READ_BACK, **readers_with(dictionary)}
        chains = [(c.label, f"{spec_for(c, dictionary)}>{fmt}", fmt) for c in WRITABLE for fmt in FORMATS]
        for seq, (_, chain, _) in enumerate(chains):
            put(session, 100, seq, encode(chain, DOC_TEXT, CAP).value)
        sh.onecmd("UPDATE t SET data.status = 'DONE', data.items[0].qty = 3 WHERE id = 100 ALLOW FILTERING "
                  "CONFIRM;")
    out, err = said(capsys)
    edited, refused = [], []
    for seq, (label, chain, fmt) in enumerate(chains):
        value = stored(session, 100, seq)
        doc = RECORD_READ[fmt](read_back[label](value))
        if doc == DOC:
            refused.append(chain)
            continue
        assert doc == {**DOC, "status": "DONE", "items": [{"sku": "A1", "qty": 3}, DOC["items"][1]]}, chain
        edited.append(chain)
    # What auto mode reads is edited; what it cannot tell (no signature) needs a DECODE setting.
    assert len(edited) >= 2 * len(chains) // 3, (out, err)
    assert f"{len(edited)} rows written" in out, out
    assert f"refused {len(refused)} rows: no known format" in out, out
    for chain in refused:
        assert chain.split(">")[0] in ("snappy", "lz4/block-nosize", "deflate", "brotli"), chain


def test_a_decode_setting_makes_a_signatureless_chain_editable(sh, session, capsys, ks) -> None:
    put(session, 101, 1, encode("brotli>cbor", DOC_TEXT, CAP).value)
    sh.settings.display.columns[f"{ks}.t.data"] = "brotli>cbor"
    sh.onecmd("DELETE data.note FROM t WHERE id = 101 AND seq = 1 CONFIRM;")
    import brotli

    assert cbor2.loads(brotli.decompress(stored(session, 101, 1))) == {k: v for k, v in DOC.items()
                                                                       if k != "note"}
    assert "1 row written" in said(capsys)[0]


def test_json_text_keeps_key_order_spacing_and_untouched_numbers(sh, session, capsys) -> None:
    compact = '{"b":1.50,"a":1e3,"c":[1,2],"d":"\u00e9t\u00e9","big":12345678901234567890}'
    spaced = '{"z": 0.10, "y": {"k": -0.0}, "x": [1.0, 2]}'
    indented = '{\n  "id": 7,\n  "tags": [\n    "a",\n    "b"\n  ],\n  "price": 10.00\n}'
    put(session, 102, 1, doc=compact)
    put(session, 102, 2, doc=spaced)
    put(session, 102, 3, data=encode("gzip>text", indented, CAP).value)
    sh.onecmd("UPDATE t SET doc.c[0] = 7, doc.e = {'new': [true, null]} WHERE id = 102 AND seq = 1 CONFIRM;")
    sh.onecmd("UPDATE t SET doc.y.k = 'v' WHERE id = 102 AND seq = 2 CONFIRM;")
    sh.onecmd("UPDATE t SET data.tags[1] = 'c' WHERE id = 102 AND seq = 3 CONFIRM;")
    out, err = said(capsys)
    want = compact.replace("[1,2]", "[7,2]")[:-1] + ',"e":{"new":[true,null]}}'
    assert stored(session, 102, 1, "doc") == want, (out, err)
    assert stored(session, 102, 2, "doc") == '{"z": 0.10, "y": {"k": "v"}, "x": [1.0, 2]}'
    assert zlib.decompress(stored(session, 102, 3), 31).decode() == indented.replace('"b"', '"c"')


def test_a_preview_writes_nothing(sh, session, capsys) -> None:
    value = encode("zstd>msgpack", DOC_TEXT, CAP).value
    put(session, 103, 1, value)
    sh.onecmd("UPDATE t SET data.status = 'CANCELLED', data.items[0].qty = 3 WHERE id = 103 AND seq = 1;")
    out, _ = said(capsys)
    assert stored(session, 103, 1) == value
    assert "1 row found: 1 would change" in out
    assert 'data.status: "NEW" -> "CANCELLED"' in out and "data.items[0].qty: 1 -> 3" in out
    assert "Nothing written: add CONFIRM" in out


def test_a_row_written_between_the_read_and_the_write_is_left_alone(sh, session, capsys, monkeypatch) -> None:
    put(session, 104, 1, encode("snappy/framed>text", DOC_TEXT, CAP).value)
    put(session, 104, 2, encode("snappy/framed>text", DOC_TEXT, CAP).value)
    theirs = encode("zstd>text", '{"status":"THEIRS"}', CAP).value
    original = writing_cells.CellWriter.write

    def racing(self: Any, key: Any, *args: Any) -> Any:
        if list(key) == [104, 1]:  # someone else writes the row, plainly, after it was read
            session.execute("UPDATE t SET data = %s WHERE id = 104 AND seq = 1", (theirs,))
        return original(self, key, *args)

    monkeypatch.setattr(writing_cells.CellWriter, "write", racing)
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 104 ALLOW FILTERING CONFIRM;")
    out, _ = said(capsys)
    assert "id = 104, seq = 1: changed since it was read: left alone" in out, out
    assert "1 row written, 1 changed since it was read: left alone" in out
    assert stored(session, 104, 1) == theirs
    assert json.loads(READ_BACK["snappy/framed"](stored(session, 104, 2)))["status"] == "DONE"


def test_an_edit_that_wrote_no_row_gives_no_undo(sh, session, capsys, monkeypatch) -> None:
    put(session, 116, 1, encode("gzip>text", DOC_TEXT, CAP).value)
    theirs = encode("zstd>text", '{"status":"THEIRS"}', CAP).value
    original = writing_cells.CellWriter.write

    def racing(self: Any, key: Any, *args: Any) -> Any:  # every row written by someone else first
        session.execute("UPDATE t SET data = %s WHERE id = 116 AND seq = 1", (theirs,))
        return original(self, key, *args)

    monkeypatch.setattr(writing_cells.CellWriter, "write", racing)
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 116 AND seq = 1 CONFIRM;")
    out, err = said(capsys)
    assert "0 rows written, 1 changed since it was read: left alone." in out, (out, err)
    assert "UNDO" not in out + err  # nothing was written: nothing to undo
    assert stored(session, 116, 1) == theirs
    monkeypatch.setattr(writing_cells.CellWriter, "write", original)
    put(session, 116, 1, encode("gzip>text", DOC_TEXT, CAP).value)
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 116 AND seq = 1 CONFIRM;")
    out, _ = said(capsys)
    assert "1 row written." in out and "Undo: UNDO '" in out, out


def test_refusals_say_why_and_write_nothing_of_that_row(sh, session, capsys) -> None:
    java = bytes.fromhex("aced0005737200") + b"\x00" * 8
    values = {
        1: java,
        2: pickle.dumps({"status": "NEW"}, protocol=2),
        3: encode("zstd>text", "plain words, no JSON at all", CAP).value,
        4: encode("zstd>text", '{"status":"NEW","items":"none"}', CAP).value,
        5: encode("zstd>text", '{"status":"NEW","items":[]}', CAP).value,
        6: encode("zstd>text", '{"status": "NEW",  "items":[1]}', CAP).value,
    }
    for seq, value in values.items():
        put(session, 105, seq, value)
    sh.onecmd("UPDATE t SET data.items[0] = 1 WHERE id = 105 ALLOW FILTERING CONFIRM;")
    out, err = said(capsys)
    for seq, value in values.items():
        assert stored(session, 105, seq) == value, seq
    assert "6 rows found: 0 to change, 6 refused" in out, (out, err)
    assert "data.items[0]: its parent is a str, not an object or a list" in out
    assert "data.items[0]: the list has 0 items" in out
    assert "laid out in a way this shell does not write back" in out
    assert "refused 1 row: pickle" in out or "pickle:" in out


def test_a_value_past_the_output_cap_is_refused(sh, session, capsys) -> None:
    big = json.dumps({"status": "NEW", "pad": "x" * 20000})
    value = encode("zstd>text", big, CAP).value
    put(session, 106, 1, value)
    sh.settings.display.cap = 4096
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 106 AND seq = 1 CONFIRM;")
    out, _ = said(capsys)
    assert "cut at the output cap" in out and stored(session, 106, 1) == value


def test_a_hostile_value_is_refused_and_the_shell_goes_on(sh, session, capsys) -> None:
    bomb = zstandard.ZstdCompressor(level=19).compress(b"[" * (64 << 20))
    deep = encode("zstd>text", "[" * 50000 + "]" * 50000, CAP).value
    put(session, 107, 1, bomb)
    put(session, 107, 2, deep)
    sh.onecmd("UPDATE t SET data[0] = 1 WHERE id = 107 ALLOW FILTERING CONFIRM;")
    out, err = said(capsys)
    assert "2 rows found: 0 to change, 2 refused" in out, (out, err)
    assert stored(session, 107, 1) == bomb and stored(session, 107, 2) == deep
    sh.onecmd("UPDATE t SET data[0] = 1 WHERE id = 107 AND seq = 3;")  # the shell goes on
    assert "0 rows found" in said(capsys)[0]


def test_ctrl_c_stops_between_rows_and_says_how_many_were_written(sh, session, capsys, monkeypatch) -> None:
    for seq in range(5):
        put(session, 108, seq, encode("lz4/frame>cbor", DOC_TEXT, CAP).value)
    original = write_loop._write_one
    count = {"n": 0}

    def pressing(*args: Any) -> bool:
        done = original(*args)
        count["n"] += 1
        if count["n"] == 2:
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C while the edit writes
        return done

    monkeypatch.setattr(write_loop, "_write_one", pressing)
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 108 ALLOW FILTERING CONFIRM;")
    out, _ = said(capsys)
    assert "2 rows written; stopped by Ctrl-C, 3 rows not written" in out, out
    statuses = [cbor2.loads(READ_BACK["lz4/frame"](stored(session, 108, seq)))["status"] for seq in range(5)]
    assert statuses == ["DONE", "DONE", "NEW", "NEW", "NEW"]


def test_undo_restores_every_byte_and_leaves_a_row_changed_since(sh, session, capsys, tmp_path) -> None:
    before = {seq: encode(chain, DOC_TEXT, CAP).value
              for seq, chain in enumerate(("snappy/xerial>text", "xz>msgpack", "lz4/hadoop>cbor"))}
    for seq, value in before.items():
        put(session, 109, seq, value)
    sh.onecmd("DELETE data.note, data.items[1] FROM t WHERE id = 109 ALLOW FILTERING CONFIRM;")
    out, _ = said(capsys)
    journal = journal_of(out)
    assert Path(journal).parent == tmp_path / "journal"
    assert stat.S_IMODE(os.stat(journal).st_mode) == 0o600
    assert all(stored(session, 109, seq) != value for seq, value in before.items())
    later = encode("zstd>text", '{"status":"LATER"}', CAP).value
    session.execute("UPDATE t SET data = %s WHERE id = 109 AND seq = 2", (later,))
    sh.onecmd(f"UNDO '{journal}';")
    out, _ = said(capsys)
    assert "3 rows of" in out and "add CONFIRM" in out
    assert "2 still as the edit wrote them; 1 changed since the edit (left alone)" in out, out
    assert "changed since the edit: id = 109, seq = 2" in out
    assert stored(session, 109, 0) != before[0]
    sh.onecmd(f"UNDO '{journal}' CONFIRM;")
    out, _ = said(capsys)
    assert "2 rows written back, 1 changed since the edit: left alone" in out, out
    assert stored(session, 109, 0) == before[0] and stored(session, 109, 1) == before[1]
    assert stored(session, 109, 2) == later
    edited = {seq: stored(session, 109, seq) for seq in range(3)}
    again = journal_of(out)
    sh.onecmd(f"UNDO '{again}' CONFIRM;")  # the undo is undone: the edit's values are back
    out, err = said(capsys)
    assert "2 rows written back" in out, (out, err)
    assert stored(session, 109, 2) == later and stored(session, 109, 0) != edited[0]
    third = journal_of(out)
    # The edit's bytes are back, written again since the edit, by the undo of the undo: a write of
    # this user's UNDO (its sealed journal says it wrote those bytes at that write time), so the
    # edit's journal reaches them again (issue 73: undo chains); the row changed since stays.
    sh.onecmd(f"UNDO '{journal}' CONFIRM;")
    out, _ = said(capsys)
    assert "2 rows written back, 1 changed since the edit: left alone." in out, out
    assert all(stored(session, 109, seq) == edited[seq] for seq in range(3))
    # The undo of the undo, undone now, finds its rows holding what it writes back (the edit's
    # UNDO just put them there): done, said so, nothing written, no journal.
    sh.onecmd(f"UNDO '{third}' CONFIRM;")
    out, _ = said(capsys)
    assert "2 rows already restored (they hold the value from before the undo): nothing written to them.\n" \
        "0 rows written back." in out and "Journal: " not in out and "changed since" not in out, out
    assert all(stored(session, 109, seq) == edited[seq] for seq in range(3))


def test_statements_that_are_not_edits_stay_cqlshs(sh, session, capsys, ks) -> None:
    put(session, 110, 1, doc="kept")
    sh.onecmd("UPDATE t SET doc = 'plain' WHERE id = 110 AND seq = 1;")
    sh.onecmd("UPDATE t SET data = encode('gzip>text', '{\"a\":1}') WHERE id = 110 AND seq = 1;")
    assert stored(session, 110, 1, "doc") == "plain"
    assert json.loads(zlib.decompress(stored(session, 110, 1), 31)) == {"a": 1}
    sh.onecmd("DELETE doc FROM t WHERE id = 110 AND seq = 1;")
    assert stored(session, 110, 1, "doc") is None
    sh.onecmd("UPDATE t SET data.a = 2 WHERE id = 110;")
    sh.onecmd("UPDATE t SET data.a = 2, doc = 'x' WHERE id = 110 AND seq = 1;")
    _, err = said(capsys)
    assert "edit: the WHERE names no full primary key" in err and "add ALLOW FILTERING" in err
    assert "a column and payload paths in one statement" in err


def test_the_binary_previews_writes_and_undoes(cassandra, ks, session, tmp_path) -> None:
    value = encode("snappy>text", DOC_TEXT, CAP).value
    put(session, 111, 1, value)

    edit = "UPDATE t SET data.status = 'CANCELLED' WHERE id = 111 AND seq = 1"
    out = ext(cassandra, tmp_path, "-e", edit, keyspace=ks).checked_stdout()
    assert 'data.status: "NEW" -> "CANCELLED"' in out and stored(session, 111, 1) == value
    out = ext(cassandra, tmp_path, "-e", edit + " CONFIRM", keyspace=ks).checked_stdout()
    journal = journal_of(out)
    assert str(journal).startswith(str(tmp_path / ".cassandra" / "journal")), journal
    assert json.loads(READ_BACK["snappy"](stored(session, 111, 1)))["status"] == "CANCELLED"
    out = ext(cassandra, tmp_path, "-e", f"UNDO '{journal}' CONFIRM", keyspace=ks).checked_stdout()
    assert "1 row written back" in out and stored(session, 111, 1) == value
    # cqlsh's HELP UPDATE fails without a browser
    out = ext(cassandra, tmp_path, "-e", "HELP UPDATE", keyspace=ks).stdout
    assert "HELP EDIT" in out


def test_the_level_a_header_shows_is_kept(sh, session, capsys) -> None:
    for seq, level in enumerate((1, 9)):
        put(session, 112, seq, zlib.compress(DOC_TEXT.encode(), level))
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 112 ALLOW FILTERING CONFIRM;")
    assert "2 rows written" in said(capsys)[0]
    for seq, flevel in enumerate((0, 3)):  # zlib's FLEVEL: 0 for level 1, 3 for level 9
        value = stored(session, 112, seq)
        assert value[1] >> 6 == flevel and json.loads(zlib.decompress(value))["status"] == "DONE"


def test_a_header_the_reference_producer_writes_differently_is_said(sh, session, capsys) -> None:
    import lz4.frame

    put(session, 113, 1, lz4.frame.compress(DOC_TEXT.encode()))  # python-lz4 declares the size
    sh.onecmd("UPDATE t SET data.status = 'DONE' WHERE id = 113 AND seq = 1;")
    out, _ = said(capsys)
    assert "header of 1 row as the reference producer writes it: lz4/frame " in out, out
    assert "content_size_flag: True -> False" in out


def test_the_interactive_shell_shows_the_preview_then_asks(cassandra, ks, session, tmp_path) -> None:
    from repl.terminal import Term

    value = encode("xz>cbor", DOC_TEXT, CAP).value
    put(session, 114, 1, value)
    put(session, 114, 2, value)
    t = Term([*cassandra.cqlsh_args, "-k", ks, "--no-color"], tmp_path)
    try:
        t.prompt()
        t.type("UPDATE t SET data.status = 'ASKED' WHERE id = 114 AND seq = 1;")
        t.enter()
        t.expect(r'data\.status: "NEW" -> "ASKED"')
        t.expect(r"Write 1 row\? \[y/N\]")
        t.type("n")
        t.enter()
        t.expect("Nothing written")
        t.prompt()
        assert stored(session, 114, 1) == value
        t.type("UPDATE t SET data.status = 'ASKED' WHERE id = 114 AND seq = 2;")
        t.enter()
        t.expect(r"Write 1 row\? \[y/N\]")
        t.type("y")
        t.enter()
        journal = t.expect(r"1 row written\.\nUndo: UNDO '([^']+)' CONFIRM").group(1)
        t.prompt()
        import lzma

        assert cbor2.loads(lzma.decompress(stored(session, 114, 2)))["status"] == "ASKED"
        t.type(f"UNDO '{journal}'")  # UNDO asks too
        t.enter()
        t.expect("1 still as the edit wrote them")
        t.expect(r"Write 1 row back\? \[y/N\]")
        t.type("y")
        t.enter()
        t.expect("1 row written back")
        t.prompt()
    finally:
        t.close()
    assert stored(session, 114, 2) == value


def test_avro_is_edited_with_the_schema_its_setting_names(sh, session, capsys, ks, tmp_path) -> None:
    import io

    import fastavro
    import snappy

    schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}
    avsc = tmp_path / "order.avsc"
    avsc.write_text(json.dumps(schema))
    put(session, 115, 1, encode(f"snappy>avro:{avsc}", '{"id": 7, "note": "hi"}', CAP).value)
    sh.onecmd("UPDATE t SET data.note = 'edited' WHERE id = 115 AND seq = 1 CONFIRM;")
    assert "refused 1 row" in said(capsys)[0]  # auto mode has no schema to read it by
    sh.settings.display.columns[f"{ks}.t.data"] = f"snappy>avro:{avsc}"
    sh.onecmd("UPDATE t SET data.note = 'edited' WHERE id = 115 AND seq = 1 CONFIRM;")
    out, err = said(capsys)
    assert "1 row written" in out, (out, err)
    record = fastavro.schemaless_reader(io.BytesIO(snappy.decompress(stored(session, 115, 1))),
                                        fastavro.parse_schema(schema))
    assert record == {"id": 7, "note": "edited"}
    sh.onecmd("UPDATE t SET data.id = 'not a long' WHERE id = 115 AND seq = 1 CONFIRM;")
    assert "refused 1 row: not written back as snappy>avro" in said(capsys)[0]


def test_a_timed_out_write_is_read_again_and_a_failing_one_stops_it(cassandra, capsys, tmp_path,
                                                                     monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the journal key (~/.cassandra) is this test's
    ks = cassandra.create_keyspace("faults_edit")  # faults_*: the server's fault handler may fail it
    s = cassandra.session(ks)
    s.execute("CREATE TABLE t (id int, seq int, data blob, doc text, PRIMARY KEY (id, seq))")
    for seq in range(3):
        put(s, 1, seq, encode("zstd>text", DOC_TEXT, CAP).value)
        put(s, 2, seq, encode("zstd>text", DOC_TEXT, CAP).value)

    def statuses(id_: int) -> list[str]:
        return [json.loads(zstandard.ZstdDecompressor().decompress(stored(s, id_, seq)))["status"]
                for seq in range(3)]

    try:
        with in_process_shell(cassandra) as shell:
            shell.settings.display.journal_dir = str(tmp_path)
            # One write times out (its outcome unknown): the row is read again and the write sent
            # again (the same value at the same timestamp), and every row is written.
            cassandra.faults.set("write_timeout", 1, after=1, table="t")  # after the reading's one page
            shell.onecmd(f"UPDATE {ks}.t SET data.status = 'DONE' WHERE id = 1 ALLOW FILTERING CONFIRM;")
            out, err = said(capsys)
            assert "3 rows written." in out, (out, err)
            assert statuses(1) == ["DONE"] * 3
            # Every request fails from the second row's write on (the reading's page, the first row's
            # write and its read pass): the edit stops there and says so.
            cassandra.faults.set("write_timeout", -1, after=3, table="t")
            shell.onecmd(f"UPDATE {ks}.t SET data.status = 'DONE' WHERE id = 2 ALLOW FILTERING CONFIRM;")
    finally:
        cassandra.faults.clear()
    out, err = said(capsys)
    assert "1 row written; stopped at id = 2, seq = 1 (its write failed, whether it applied is " \
        "unknown: " in err, (out, err)
    assert "1 more row not written" in err, err
    s.shutdown()


def test_protobuf_is_edited_with_the_descriptor_its_setting_names(sh, session, capsys, ks, tmp_path) -> None:
    from protobuf_producer import order_descriptor_set

    desc, order_class = order_descriptor_set(tmp_path)
    chain = f"zstd>protobuf:acme.Order@{desc}"
    order = {"id": 42, "customer": "Ada", "items": [{"sku": "A-1", "qty": 2}], "status": "PAID"}
    put(session, 116, 1, encode(chain, json.dumps(order), CAP).value)
    sh.settings.display.columns[f"{ks}.t.data"] = chain
    sh.onecmd("UPDATE t SET data.customer = 'Grace', data.items[0].qty = 5 WHERE id = 116 AND seq = 1 "
              "CONFIRM;")
    out, err = said(capsys)
    assert "1 row written" in out, (out, err)
    message = order_class.FromString(zstandard.ZstdDecompressor().decompress(stored(session, 116, 1)))
    item = message.items[0]
    assert (message.id, message.customer, item.sku, item.qty) == (42, "Grace", "A-1", 5)


def test_a_text_column_is_edited_and_undone_as_text(sh, session, capsys) -> None:
    put(session, 117, 1, doc='{"status": "NEW", "n": 1.0}')
    put(session, 117, 2, doc="plain words")
    sh.onecmd("UPDATE t SET doc.status = 'DONE' WHERE id = 117 ALLOW FILTERING CONFIRM;")
    out, _ = said(capsys)
    assert "refused 1 row: its text is not a JSON object or list" in out, out
    assert stored(session, 117, 1, "doc") == '{"status": "DONE", "n": 1.0}'
    journal = journal_of(out)
    sh.onecmd(f"UNDO '{journal}' CONFIRM;")
    assert "1 row written back" in said(capsys)[0]
    assert stored(session, 117, 1, "doc") == '{"status": "NEW", "n": 1.0}'
    assert stored(session, 117, 2, "doc") == "plain words"


def test_a_static_column_is_edited_once_per_partition(sh, session, capsys) -> None:
    session.execute("CREATE TABLE IF NOT EXISTS st (p int, c int, v int, data blob static, "
                    "PRIMARY KEY (p, c))")
    value = encode("snappy/framed>text", DOC_TEXT, CAP).value
    for c in range(3):
        session.execute("INSERT INTO st (p, c, v, data) VALUES (1, %s, %s, %s)", (c, c, value))
    sh.onecmd("UPDATE st SET data.status = 'DONE' WHERE p = 1 CONFIRM;")
    out, err = said(capsys)
    assert "1 row found: 1 to change" in out and "1 row written" in out, (out, err)
    now = session.execute("SELECT data FROM st WHERE p = 1 LIMIT 1").one().data
    assert json.loads(READ_BACK["snappy/framed"](now))["status"] == "DONE"


def test_a_blob_in_a_map_or_a_udt_field_is_edited_in_place(sh, session, capsys, ks) -> None:
    session.execute("CREATE TYPE IF NOT EXISTS att (title text, content blob)")
    session.execute("CREATE TABLE IF NOT EXISTS nest (id int PRIMARY KEY, m map<text, blob>, u att, "
                    "f frozen<att>)")
    value = encode("gzip>text", DOC_TEXT, CAP).value
    other = encode("zstd>msgpack", DOC_TEXT, CAP).value
    session.execute("INSERT INTO nest (id, m, u, f) VALUES (1, {'a': %s, 'b': %s}, "
                    "{title: 't', content: %s}, {title: 't', content: %s})", (value, other, value, value))
    sh.onecmd("UPDATE nest SET m['a'].status = 'DONE' WHERE id = 1 CONFIRM;")
    sh.onecmd("DELETE u.content.note FROM nest WHERE id = 1 CONFIRM;")
    sh.onecmd("UPDATE nest SET f.content.status = 'DONE' WHERE id = 1 CONFIRM;")
    sh.onecmd("UPDATE nest SET m['a'] = 0x00 WHERE id = 2;")  # an element of the map: CQL's own
    out, err = said(capsys)
    assert out.count("1 row written") == 2, (out, err)
    assert "f is frozen: it is written whole, and f.content's documents are not edited here" in err
    row = session.execute("SELECT m, u, f FROM nest WHERE id = 1").one()
    assert json.loads(zlib.decompress(row.m["a"], 31))["status"] == "DONE"
    assert row.m["b"] == other
    assert "note" not in json.loads(zlib.decompress(row.u.content, 31)) and row.u.title == "t"
    assert row.f.content == value
    assert session.execute("SELECT m FROM nest WHERE id = 2").one().m == {"a": b"\x00"}
    journal = journal_of(out)
    sh.onecmd(f"UNDO '{journal}' CONFIRM;")
    assert "1 row written back" in said(capsys)[0]
    assert session.execute("SELECT m FROM nest WHERE id = 1").one().m["a"] == value
