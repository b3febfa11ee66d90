"""Formats from outside (docs/payloads.md, "Formats from outside"): the test plugin acme-formats
(tests/plugins/acme_formats, installed by bin/setup --test as a team installs theirs) and the
external decoder tests/plugins/decode_kv.py named in cqlshrc's [formats], read, filtered, exported
and edited through the real binary on the real server, on both value engines (the native core hands
back the values of formats it does not know); and a plugin or a command that misbehaves held within
the value's budget, its failure that value's note."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard
from acme_formats import decode as kv1_decode
from acme_formats import encode as kv1
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.confidence import view_explained
from cqlsh_ext.payload.formats._outside import configure_commands, origins
from cqlsh_ext.payload.spec import parse_spec
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
DECODER = f"{sys.executable} {PLUGINS / 'decode_kv.py'}"
ADA = {"id": "7", "name": "Ada", "city": "Paris"}
BO = {"id": "8", "name": "Bo", "city": "Lyon"}


@pytest.fixture(scope="module")
def ks(cassandra):
    name = cassandra.create_keyspace("outside")
    s = cassandra.session(name)
    s.execute("CREATE TABLE kv (id int PRIMARY KEY, data blob)")
    s.execute("CREATE TABLE cmd (id int PRIMARY KEY, data blob)")
    rows = {1: kv1(ADA), 2: zstandard.ZstdCompressor().compress(kv1(BO)), 3: json.dumps(BO).encode()}
    for key, value in rows.items():
        s.execute("INSERT INTO kv (id, data) VALUES (%s, %s)", (key, value))
        s.execute("INSERT INTO cmd (id, data) VALUES (%s, %s)", (key, value))
    s.shutdown()
    return name


def ext(cassandra, home: Path, *args: str, rc: str = "") -> tuple[int, str, str]:
    cqlshrc = home / "cqlshrc"
    cqlshrc.write_text(rc)
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "--cqlshrc", str(cqlshrc), *args], home)
    return result.returncode, result.stdout, result.stderr


def stored(cassandra, ks: str, table: str, key: int) -> bytes:
    s = cassandra.session(ks)
    try:
        return bytes(s.execute(f"SELECT data FROM {table} WHERE id = %s", (key,)).one().data)
    finally:
        s.shutdown()


# ------------------------------------------------------------------ the plugin, in this process


def test_the_plugin_registers_through_the_built_ins_door() -> None:
    found = {o.name: o for o in origins()}
    assert found["kv1"].package == "acme-formats" and found["kv1"].version == "1.4.2"
    assert formats.get("kv1") is not None and "kv1" in [f.name for f in formats.auto_formats()]
    assert str(parse_spec("zstd>kv1")) == "zstd>kv1"  # a spec knows the name, nothing imported for it
    view = unwrap(zstandard.ZstdCompressor().compress(kv1(ADA)), "auto", DEFAULT_CAP)
    assert (view.label, view.kind, view.record) == ("zstd>kv1", "record", ADA)
    sure, why = view_explained(view)
    assert sure == "likely" and "acme-formats 1.4.2" in why  # a plugin's claim: never past likely


@pytest.mark.parametrize(("value", "note"), [
    (b"sleep", "plugin acme_hostile took longer than 5 s: cut"),
    (b"nodes", "acme_hostile: over 100,000 nodes"),
    (b"deep", "acme_hostile: nested deeper than 64"),
    (b"memory", "acme_hostile: out of memory (over 512 MiB)"),
    (b"object", "acme_hostile: answered a value of type object, not plain data"),
    (b"raise", "acme_hostile: RuntimeError: the plugin fell over"),
])
def test_a_plugin_that_misbehaves_is_that_values_note(value: bytes, note: str) -> None:
    view = unwrap_spec(value, "acme_hostile", DEFAULT_CAP)
    assert view.kind == "failed" and view.reason == f"as acme_hostile: {note}"
    # the worker is started again for the next value
    assert unwrap_spec(b"fine", "acme_hostile", DEFAULT_CAP).record == {"bytes": 4}


def test_a_plugin_that_prints_does_not_corrupt_its_answers() -> None:
    assert unwrap_spec(b"print", "acme_hostile", DEFAULT_CAP).record == {"printed": True}


def test_commands_are_held_to_their_timeout_and_output_cap() -> None:
    configure_commands({"kvcmd": DECODER, "kvhang": f"{DECODER} --hang", "kvhang.timeout": "1",
                        "kvflood": f"{DECODER} --flood", "kvflood.max_output": "1000",
                        "kvfail": f"{DECODER} --fail", "kvwords": f"{DECODER} --not-json",
                        "kvtext": f"{DECODER} --not-json", "kvtext.output": "text"})
    parse_spec.cache_clear()
    try:
        value = kv1(ADA)
        assert unwrap_spec(value, "kvcmd", DEFAULT_CAP).record == ADA
        notes = {name: unwrap_spec(value, name, DEFAULT_CAP).reason
                 for name in ("kvhang", "kvflood", "kvfail", "kvwords")}
        assert notes == {
            "kvhang": "as kvhang: command kvhang took longer than 1 s: cut",
            "kvflood": "as kvflood: command kvflood wrote more than 1,000 bytes: cut",
            "kvfail": "as kvfail: command kvfail failed (exit 1): decode_kv: this value is not ours",
            "kvwords": "as kvwords: kvwords: the command's output is not JSON (Expecting value: line 1 "
                       "column 1 (char 0))"}
        text = unwrap_spec(value, "kvtext", DEFAULT_CAP)
        assert (text.kind, text.text) == ("text", "plain words")
    finally:
        configure_commands({})
        parse_spec.cache_clear()


# ------------------------------------------------------------------ through the shell, on the server


def test_version_names_the_plugin(cassandra, tmp_path):
    code, out, _ = ext(cassandra, tmp_path, "--version")
    assert code == 0 and "format kv1 (plugin acme-formats 1.4.2)" in out.splitlines()


def test_read_filter_export_and_edit_through_the_plugin(cassandra, ks, tmp_path, engine):
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.kv")
    assert code == 0, err
    assert '[kv1] {"id":"7","name":"Ada","city":"Paris"}' in out
    assert '[zstd>kv1] {"id":"8","name":"Bo","city":"Lyon"}' in out

    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"SELECT id, data.city FROM {ks}.kv WHERE data.name = 'Bo' ALLOW FILTERING")
    assert code == 0, err
    assert out.count("Lyon") == 2 and "Paris" not in out  # the KV1 one and the JSON one

    target = tmp_path / "kv.parquet"
    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"COPY (SELECT id, data FROM {ks}.kv) TO '{target}'")
    assert code == 0, err
    rows = {r["id"]: r for r in pq.read_table(target).to_pylist()}
    assert rows[1]["data:label"] == "kv1" and rows[2]["data:label"] == "zstd>kv1"
    assert rows[1]["data:confidence"] == rows[2]["data:confidence"] == "likely"
    assert rows[3]["data:label"] == "json" and rows[3]["data:confidence"] == "likely"
    assert rows[1]["data"] == ADA and rows[2]["data"] == rows[3]["data"] == BO

    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"UPDATE {ks}.kv SET data.city = 'Nice' WHERE id = 2 CONFIRM")
    assert code == 0, err
    after = stored(cassandra, ks, "kv", 2)
    assert after.startswith(b"\x28\xb5\x2f\xfd")  # still a zstd frame around KV1, written by the plugin
    assert kv1_decode(zstandard.ZstdDecompressor().decompress(after)) == dict(BO, city="Nice")
    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.kv SET data.city = 'Lyon' WHERE id = 2 CONFIRM")
    assert code == 0, err


def test_an_external_decoder_named_by_a_setting(cassandra, ks, tmp_path, engine):
    rc = (f"[formats]\nkvcmd = {DECODER}\nkvcmd.encoder = {DECODER} --encode\n"
          f"kvhang = {DECODER} --hang\nkvhang.timeout = 1\n"
          f"[cqlsh_ext.decode]\n{ks}.cmd.data = zstd>kvcmd\n")
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.cmd WHERE id = 2", rc=rc)
    assert code == 0, err
    assert '[zstd>kvcmd] {"id":"8","name":"Bo","city":"Lyon"}' in out

    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.cmd WHERE id IN (1, 2)", rc=rc)
    assert code == 0, err
    got = {row["id"]: row["data"] for row in map(json.loads, out.splitlines())}
    assert got[2] == {"label": "zstd>kvcmd", "kind": "record", "confidence": "confident", "payload": BO}
    assert got[1]["kind"] == "failed" and got[1]["note"].startswith("as zstd>kvcmd: zstd")  # not zstd

    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.cmd SET data.name = 'Bea' WHERE id = 2 CONFIRM", rc=rc)
    assert code == 0, err
    assert kv1_decode(zstandard.ZstdDecompressor().decompress(stored(cassandra, ks, "cmd", 2))) == \
        dict(BO, name="Bea")
    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.cmd SET data.name = 'Bo' WHERE id = 2 CONFIRM", rc=rc)
    assert code == 0, err

    hang = rc.replace(f"{ks}.cmd.data = zstd>kvcmd", f"{ks}.cmd.data = kvhang")
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.cmd WHERE id = 1", rc=hang)
    assert code == 0, err
    assert "(as kvhang: command kvhang took longer than 1 s: cut)" in out


def test_a_bad_formats_section_is_one_line(cassandra, tmp_path):
    code, _out, err = ext(cassandra, tmp_path, "-e", "SELECT now() FROM system.local",
                          rc="[formats]\nkv.output = text\n")
    assert code != 0
    last = err.strip().splitlines()[-1]
    assert last.endswith("[formats] kv: options without a command (kv = command args)")
