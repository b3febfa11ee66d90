"""Values written with dictionaries by the producers' libraries (python-zstandard with a trained
dictionary, zlib with zdict), stored on the real server and read by the real binary: the display,
a payload query, STATS and INSPECT read them once the dictionaries are named (a flag, cqlshrc, the
environment), and a missing dictionary is named by its ID. The demo's two dictionary rows decode
with the files `demo load --dictionaries` writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dictionary_values import Made, make
from shell_runner import CQLSH_EXT, Run, isolated_env, run, table_rows


@pytest.fixture(scope="module")
def stored(cassandra, tmp_path_factory) -> tuple[str, Made]:
    made = make(tmp_path_factory.mktemp("dictionaries"))
    ks = cassandra.create_keyspace("dicts")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, kind text, data blob)")
    insert = session.prepare("INSERT INTO orders (id, kind, data) VALUES (?, ?, ?)")
    for n in range(40):
        session.execute(insert, (n, "zstd", made.zstd_values[n]))
        session.execute(insert, (100 + n, "zlib", made.zlib_values[n]))
    session.shutdown()
    return ks, made


def shell(cassandra, home: Path, statement: str, *flags: str, env: dict[str, str] | None = None) -> Run:
    import subprocess

    proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, *flags, "-e", statement], capture_output=True,
                          text=True, timeout=180, env={**isolated_env(home), **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _flags(made: Made) -> list[str]:
    return ["--dictionary", str(made.zstd_file), "--dictionary", str(made.zlib_file)]


def test_the_display_reads_them_once_named(cassandra, stored, tmp_path: Path):
    ks, made = stored
    statement = f"SELECT id, data FROM {ks}.orders WHERE id IN (3, 103)"
    missing = {row[0]: row[1] for row in table_rows(shell(cassandra, tmp_path, statement).stdout)}
    assert f"zstd frame needs dictionary ID {made.zstd_id}" in missing["3"]
    assert f"DICTID 0x{made.zlib_id:08x}" in missing["103"]
    for flags, env in ((_flags(made), None),
                       ([], {"CQLSH_EXT_DICTIONARIES": os.pathsep.join(map(str, (made.zstd_file,
                                                                                  made.zlib_file)))})):
        out = shell(cassandra, tmp_path, statement, "--output-format", "json", *flags, env=env)
        rows = {row["id"]: row["data"]["payload"] for row in map(json.loads, out.stdout.splitlines())}
        assert rows == {3: json.loads(made.docs[3]), 103: json.loads(made.docs[3])}, out.stdout
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext]\ndictionaries = {made.zstd_file}, {made.zlib_file}\n")
    out = shell(cassandra, tmp_path, statement, "--cqlshrc", str(rc))
    assert "[zstd] {" in out.stdout and "[zlib] {" in out.stdout, out.stdout


def test_a_payload_query_and_stats_read_them(cassandra, stored, tmp_path: Path):
    ks, made = stored
    want = sorted(n for n in range(40) if n % 3 == 1)  # status PAID
    query = f"SELECT id, data.status FROM {ks}.orders WHERE data.status = 'PAID' ALLOW FILTERING"
    out = shell(cassandra, tmp_path, query, "--output-format", "json", *_flags(made))
    got = sorted(row["id"] for row in map(json.loads, out.stdout.splitlines()))
    assert got == sorted(want + [100 + n for n in want])
    out = shell(cassandra, tmp_path, f"COMPRESSION STATS JSON SELECT data FROM {ks}.orders", *_flags(made))
    column = json.loads(out.stdout)["columns"][0]
    assert column["by_codec"] == {"zlib": 40, "zstd": 40} and column["undecodable"] == {}, column
    assert column["decompressed_bytes"] == 2 * sum(len(d) for d in made.docs[:40])
    out = shell(cassandra, tmp_path, f"COMPRESSION STATS JSON SELECT data FROM {ks}.orders")
    column = json.loads(out.stdout)["columns"][0]
    assert column["reasons"] == {
        f"zlib stream needs a preset dictionary (DICTID 0x{made.zlib_id:08x})": 40,
        f"zstd frame needs dictionary ID {made.zstd_id}": 40}


def test_inspect_says_which_dictionary(cassandra, stored, tmp_path: Path):
    ks, made = stored
    statement = f"INSPECT SELECT data FROM {ks}.orders WHERE id IN (5, 105)"
    out = shell(cassandra, tmp_path, statement, *_flags(made)).stdout
    assert f"zstd dictionary ID {made.zstd_id} (2048 bytes, from {made.zstd_file})" in out, out
    assert f"zlib preset dictionary DICTID 0x{made.zlib_id:08x} (512 bytes, from {made.zlib_file})" in out
    assert "needs dictionary" not in out
    out = shell(cassandra, tmp_path, statement).stdout
    assert f"ID {made.zstd_id}: not loaded (--dictionary FILE)" in out, out


def test_a_bad_dictionary_file_is_one_line(cassandra, tmp_path: Path):
    bad = tmp_path / "bad.zstd-dict"
    bad.write_bytes(b"\x37\xa4\x30\xec\x07\x00\x00\x00" + b"\xff" * 32)
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--dictionary", str(bad), "-e", "SELECT now() FROM "
                          "system.local"], tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith(f"cqlsh-ext: error: dictionary {bad}: not a valid zstd dictionary (")
    assert len(out.stderr.splitlines()) == 1


def test_the_demo_rows_decode_with_its_dictionaries(cassandra, tmp_path: Path):
    keyspace = f"demo_dicts_{os.getpid()}"
    directory = tmp_path / "dicts"
    out = run(CQLSH_EXT, ["demo", "load", "-k", keyspace, "--rows", "5", "--dictionaries", str(directory),
                          "-u", cassandra.username, "-p", cassandra.password, cassandra.host,
                          str(cassandra.port)], tmp_path)
    assert out.returncode == 0, out.stderr
    statement = (f"SELECT name, data FROM {keyspace}.blob_formats WHERE name IN ('zstd dictionary', "
                 "'zlib preset dictionary')")
    before = {r[0]: r[1] for r in table_rows(shell(cassandra, tmp_path, statement).stdout)}
    assert all("dictionary" in cell and cell.startswith("0x") for cell in before.values()), before
    flags = [a for f in sorted(directory.iterdir()) for a in ("--dictionary", str(f))]
    after = {r[0]: r[1] for r in table_rows(shell(cassandra, tmp_path, statement, *flags).stdout)}
    assert after["zstd dictionary"].startswith('[zstd] {"orderId":"ORD-2024000000"'), after
    assert after["zlib preset dictionary"].startswith('[zlib] {"orderId":"ORD-2024000000"'), after


def test_advise_saves_the_dictionary_that_encode_writes_with(cassandra, stored, tmp_path: Path):
    """ADVISE -> SAVE DICTIONARY -> encode() -> SELECT, as a user goes: the file ADVISE wrote
    names its ID, a later session names the file, writes with it and reads back what it wrote."""
    ks, made = stored
    saved = tmp_path / "orders.dict"
    out = shell(cassandra, tmp_path, f"COMPRESSION ADVISE SELECT data FROM {ks}.orders SAVE DICTIONARY "
                f"'{saved}'", *_flags(made))
    data = saved.read_bytes()
    dict_id = int.from_bytes(data[4:8], "little")
    assert data.startswith(b"\x37\xa4\x30\xec") and dict_id, out.stdout
    text = " ".join(out.stdout.split())
    assert (f"Dictionary saved: {saved}, zstd dictionary ID {dict_id} ({len(data):,} bytes, trained on the "
            f"sample of data); re-encode the column with it: COMPRESSION REWRITE {ks}.orders.data AS "
            f"'zstd:dict={dict_id}'") in text, text
    assert f"cqlsh-ext --dictionary {saved}" in text and f"encode('zstd:dict={dict_id}', ...)" in text
    session = cassandra.session(ks)
    session.execute("CREATE TABLE IF NOT EXISTS encoded (id int PRIMARY KEY, kind text, data blob)")
    session.shutdown()
    doc = '{"orderId": "ORD-900001", "status": "PAID", "items": [{"sku": "SKU-1", "qty": 2}]}'
    script = (f"INSERT INTO {ks}.encoded (id, kind, data) VALUES (900, 'encoded', "
              f"encode('zstd:dict={dict_id}', '{doc}'));\n"
              f"SELECT id, data.status, data.items[0].qty FROM {ks}.encoded WHERE id = 900;\n")
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--dictionary", str(saved), "--output-format", "json"],
              tmp_path, stdin=script)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")] == [
        {"id": 900, "data.status": "PAID", "data.items[0].qty": 2}], out.stdout
    session = cassandra.session(ks)
    value = session.execute("SELECT data FROM encoded WHERE id = 900").one().data
    session.shutdown()
    import zstandard

    assert zstandard.get_frame_parameters(value).dict_id == dict_id  # as the application writes it
    reader = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(data))
    assert json.loads(reader.decompress(value)) == json.loads(doc)
    # Without the dictionary, encode() refuses before anything is sent.
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", f"INSERT INTO {ks}.encoded (id, kind, data) VALUES "
                          f"(901, 'x', encode('zstd:dict={dict_id}', '{{}}'))"], tmp_path)
    assert f"dictionary {dict_id} is not loaded" in out.stderr, out.stderr


def test_worker_processes_and_describe_read_them(cassandra, stored, tmp_path: Path):
    """The forked workers of a whole-table read inherit the store; DESCRIBE PAYLOAD reads the paths
    inside the values."""
    ks, made = stored
    out = shell(cassandra, tmp_path, f"COMPRESSION STATS JSON PARALLEL 2 CONFIRM SELECT data FROM "
                f"{ks}.orders", *_flags(made))
    report = json.loads(out.stdout)
    assert report["scan"] == "2 worker processes", report["scan"]
    column = report["columns"][0]
    assert column["by_codec"] == {"zlib": 40, "zstd": 40} and column["undecodable"] == {}, column
    out = shell(cassandra, tmp_path, f"DESCRIBE PAYLOAD {ks}.orders.data ALL CONFIRM", *_flags(made))
    lines = [line.split() for line in out.stdout.splitlines()]
    # zlib's Adler-32 vouches for its reading; a zstd frame read with its dictionary and no checksum
    # is likely at most (docs/dictionaries.md, "How sure a dictionary reading is").
    for chain, sure in (("zlib>json", "confident"), ("zstd>json", "likely")):
        assert [chain, "text", sure, "40", "50.0", "%"] in lines, out.stdout
    assert any(line[:2] == ["tier", "100.0"] for line in lines), out.stdout


def test_dictionaries_kept_in_a_table(cassandra, stored, tmp_path: Path):
    """A team's table of dictionaries (--dictionary-table, cqlshrc's dictionary_table): its blob
    values read once connected; a row that is no dictionary is one line, the others still used."""
    ks, made = stored
    session = cassandra.session(ks)
    session.execute("CREATE TABLE IF NOT EXISTS team_dicts (name text PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO team_dicts (name, data) VALUES (?, ?)")
    session.execute(insert, ("orders zstd", made.zstd_file.read_bytes()))
    session.execute(insert, ("orders zlib", made.zlib_file.read_bytes()))
    session.execute(insert, ("broken", b"\x37\xa4\x30\xec\x07\x00\x00\x00" + b"\xff" * 32))
    session.shutdown()
    statement = f"INSPECT SELECT data FROM {ks}.orders WHERE id IN (7, 107)"
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--dictionary-table", f"{ks}.team_dicts", "-e", statement],
              tmp_path)
    assert out.returncode == 0, out.stderr
    said = " ".join(out.stdout.split())
    assert f"zstd dictionary ID {made.zstd_id} (2048 bytes, from table {ks}.team_dicts, data of " \
           "'orders zstd')" in said, said
    assert f"DICTID 0x{made.zlib_id:08x} (512 bytes, from table {ks}.team_dicts, data of 'orders zlib')" \
        in said
    problems = [line for line in out.stderr.splitlines() if "dictionary" in line]
    assert problems == [f"dictionary table {ks}.team_dicts, data of 'broken': not a valid zstd dictionary "
                        f"({problems[0].partition('(')[2]}"], out.stderr
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext]\ndictionary_table = {ks}.nope\n")
    out = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--cqlshrc", str(rc), "-e",
                          "SELECT now() FROM system.local"], tmp_path)
    assert out.returncode == 0 and f"dictionary table {ks}.nope: cannot be read (" in out.stderr, out.stderr


def test_an_edit_writes_back_with_the_dictionary_the_value_names(cassandra, tmp_path: Path):
    """An edit keeps the value's form: a zstd frame or zlib stream written with a dictionary is
    written back with the same one (the producers' libraries read it with that dictionary)."""
    import zlib

    import zstandard

    (tmp_path / "d").mkdir()
    made = make(tmp_path / "d")
    ks = cassandra.create_keyspace("dict_edit")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    session.execute("INSERT INTO t (id, data) VALUES (1, %s)", (made.zstd_values[0],))
    session.execute("INSERT INTO t (id, data) VALUES (2, %s)", (made.zlib_values[0],))
    shell(cassandra, tmp_path, f"UPDATE {ks}.t SET data.status = 'CANCELLED' WHERE id IN (1, 2) CONFIRM",
          *_flags(made))
    rows = dict(session.execute(f"SELECT id, data FROM {ks}.t"))
    session.shutdown()
    assert zstandard.get_frame_parameters(rows[1]).dict_id == made.zstd_id
    trained = zstandard.ZstdCompressionDict(made.zstd_file.read_bytes())
    zstd_doc = json.loads(zstandard.ZstdDecompressor(dict_data=trained).decompress(rows[1]))
    assert rows[2][1] & 0x20 and int.from_bytes(rows[2][2:6], "big") == made.zlib_id
    inflate = zlib.decompressobj(zdict=made.zlib_file.read_bytes())
    zlib_doc = json.loads(inflate.decompress(rows[2]) + inflate.flush())
    expected = {**json.loads(made.docs[0]), "status": "CANCELLED"}
    assert zstd_doc == expected and zlib_doc == expected
