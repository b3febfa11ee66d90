"""The dictionary store: files read (bounded), found by the ID a value names, used by the codecs
within the value's budget; a missing dictionary named; the settings' three sources."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import zstandard
from dictionary_values import Made

from cqlsh_ext.codecs import dictionaries
from cqlsh_ext.codecs.base import Undecodable
from cqlsh_ext.codecs.deflate import ZLIB
from cqlsh_ext.codecs.zstd import ZSTD
from cqlsh_ext.settings import SettingError, load, load_dictionaries


def test_files_are_found_by_the_id_values_name(made: Made):
    loaded = dictionaries.load([str(made.zstd_file), str(made.zlib_file)])
    assert [(d.kind, d.id) for d in loaded] == [("zstd", made.zstd_id), ("zlib", made.zlib_id)]
    for value, doc in zip(made.zstd_values, made.docs, strict=True):
        assert ZSTD.decode(value, 1 << 20).data == doc
    for value, doc in zip(made.zlib_values, made.docs, strict=True):
        assert ZLIB.decode(value, 1 << 20).data == doc
    assert str(made.zstd_file) in dictionaries.zstd(made.zstd_id).describe()  # type: ignore[union-attr]


def test_a_missing_dictionary_is_named(made: Made):
    with pytest.raises(Undecodable, match=f"zstd frame needs dictionary ID {made.zstd_id}$"):
        ZSTD.decode(made.zstd_values[0], 1 << 20)
    with pytest.raises(Undecodable, match=f"DICTID 0x{made.zlib_id:08x}"):
        ZLIB.decode(made.zlib_values[0], 1 << 20)
    dictionaries.load([str(made.zlib_file)])  # the other kind loaded changes nothing
    with pytest.raises(Undecodable, match=f"dictionary ID {made.zstd_id}"):
        ZSTD.decode(made.zstd_values[0], 1 << 20)


def test_a_dictionary_decode_stays_within_the_budget(made: Made):
    dictionaries.load([str(made.zstd_file), str(made.zlib_file)])
    big = made.docs[0] * 2000
    trained = zstandard.ZstdCompressionDict(made.zstd_file.read_bytes())
    for value in (zstandard.ZstdCompressor(dict_data=trained).compress(big),
                  zstandard.ZstdCompressor(dict_data=trained, write_content_size=False).compress(big)):
        cut = ZSTD.decode(value, 100)
        assert cut.truncated and cut.data == big[:100]
    import zlib

    obj = zlib.compressobj(zdict=made.zlib_file.read_bytes())
    cut = ZLIB.decode(obj.compress(big) + obj.flush(), 100)
    assert cut.truncated and cut.data == big[:100]


def test_inspect_headers_say_which_dictionary(made: Made):
    frame = ZSTD.headers(made.zstd_values[0])["frames"][0]  # type: ignore[index]
    assert frame["dictionary"] == f"ID {made.zstd_id}: not loaded (--dictionary FILE)"
    dictionaries.load([str(made.zstd_file), str(made.zlib_file)])
    frame = ZSTD.headers(made.zstd_values[0])["frames"][0]  # type: ignore[index]
    assert frame["dictionary"] == f"zstd dictionary ID {made.zstd_id} (2048 bytes, from {made.zstd_file})"
    zlib_headers = ZLIB.headers(made.zlib_values[0])
    assert zlib_headers["dictionary"] == (f"zlib preset dictionary DICTID 0x{made.zlib_id:08x} "
                                          f"(512 bytes, from {made.zlib_file})")
    # the checksums are checked once the dictionary is there
    assert [c.status for c in ZLIB.verify(made.zlib_values[0], None, 1 << 20, None)] == ["ok"]


@pytest.mark.parametrize("content, says", [
    (b"", "empty file, not a dictionary"),
    (dictionaries.ZSTD_DICT_MAGIC + b"\x01", "a zstd dictionary cut short"),
    (dictionaries.ZSTD_DICT_MAGIC + b"\x00\x00\x00\x00rest", "a zstd dictionary with ID 0"),
    (dictionaries.ZSTD_DICT_MAGIC + b"\x07\x00\x00\x00" + b"\xff" * 64, "not a valid zstd dictionary"),
    (b"x" * (dictionaries.MAX_BYTES + 1), "more than a dictionary may hold"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, content: bytes, says: str):
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(dictionaries.DictionaryError) as info:
        dictionaries.read_file(str(path))
    assert str(info.value).startswith(f"{path}: ") and says in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_and_count_bound(tmp_path: Path):
    with pytest.raises(dictionaries.DictionaryError, match="nope: cannot be read"):
        dictionaries.read_file(str(tmp_path / "nope"))
    store = dictionaries.Store()
    for n in range(dictionaries.MAX_COUNT):
        store.add(dictionaries.from_bytes(n.to_bytes(4, "big") * 4, f"f{n}"))
    with pytest.raises(dictionaries.DictionaryError, match=f"more than {dictionaries.MAX_COUNT}"):
        store.add(dictionaries.from_bytes(b"one more", "last"))


def test_two_files_with_one_id_and_other_bytes_are_refused(made: Made, tmp_path: Path):
    other = zstandard.train_dictionary(2048, [d[::-1] for d in made.docs], dict_id=made.zstd_id)
    clash = tmp_path / "clash"
    clash.write_bytes(other.as_bytes())
    with pytest.raises(dictionaries.DictionaryError, match="already loaded from"):
        dictionaries.load([str(made.zstd_file), str(clash)])
    dictionaries.load([str(made.zstd_file), str(made.zstd_file)])  # the same file twice: one


def test_settings_read_cqlshrc_flags_and_environment(made: Made, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch):
    import argparse

    from cqlsh_ext.settings import add_flags

    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext]\ndictionaries = {made.zstd_file}\n")
    monkeypatch.setenv(dictionaries.ENVIRONMENT, os.pathsep.join([str(made.zlib_file), ""]))
    parser = argparse.ArgumentParser()
    add_flags(parser, "display")
    extra = tmp_path / "extra.zlib-dict"
    extra.write_bytes(b"another preset dictionary")
    settings = load(parser.parse_args(["--dictionary", str(extra)]), str(rc))
    assert settings.display.dictionaries == (str(made.zlib_file), str(made.zstd_file), str(extra))
    load_dictionaries(settings)
    assert ZSTD.decode(made.zstd_values[3], 1 << 20).data == made.docs[3]
    assert ZLIB.decode(made.zlib_values[3], 1 << 20).data == made.docs[3]
    rc.write_text(f"[cqlsh_ext]\ndictionaries = {tmp_path / 'gone'}\n")
    with pytest.raises(SettingError, match="^dictionary .*gone: cannot be read"):
        load_dictionaries(load(None, str(rc)))


def test_a_values_answer_does_not_depend_on_what_was_read_before(made: Made):
    """The decompression contexts (the dictionaries' too) are forgotten after a failed frame: the
    reason a value gets is its own (issue 47's pair among dictionary frames, in every order)."""
    from cqlsh_ext.payload.engine import ValueEngine

    dictionaries.load([str(made.zstd_file)])
    first = bytes.fromhex("28b52ffd54084100007b2261225120317d")
    second = bytes.fromhex("28b52ffd20084a00007b2261223a20317d")
    broken = bytearray(made.zstd_values[5])
    broken[-3] ^= 0xFF  # a dictionary frame libzstd refuses
    values = [first, second, bytes(broken), made.zstd_values[6]]
    alone = {}
    for v in values:
        engine = ValueEngine("auto", 1 << 20)
        engine.native = False
        alone[v] = (engine.view(v).label, engine.view(v).reason)
    assert alone[first][1] == "zstd: Data corruption detected"
    assert alone[second][1] == "zstd: Destination buffer is too small"
    assert alone[made.zstd_values[6]] == ("zstd>json", None)
    for order in (values, values[::-1], [values[2], values[1], values[0], values[3], values[1]]):
        engine = ValueEngine("auto", 1 << 20)
        engine.native = False
        assert [(engine.view(v).label, engine.view(v).reason) for v in order] == [alone[v] for v in order]


def test_offline_inspect_takes_dictionaries(made: Made, tmp_path: Path):
    from shell_runner import CQLSH_EXT, run

    value = "0x" + made.zstd_values[2].hex()
    out = run(CQLSH_EXT, ["inspect", value], tmp_path)
    assert out.returncode == 1 and f"ID {made.zstd_id}: not loaded" in out.stdout, out.stdout
    out = run(CQLSH_EXT, ["inspect", value, "--dictionary", str(made.zstd_file)], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    said = " ".join(out.stdout.split())
    assert f"zstd dictionary ID {made.zstd_id} (2048 bytes, from {made.zstd_file})" in said
    assert made.docs[2].decode() in out.stdout
    out = run(CQLSH_EXT, ["inspect", value, "--dictionary", str(tmp_path / "none")], tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("cqlsh-ext inspect: error: dictionary ")


def test_the_store_holds_at_most_max_total_bytes():
    store = dictionaries.Store()
    big = dictionaries.MAX_BYTES
    for n in range(dictionaries.MAX_TOTAL // big):
        store.add(dictionaries.from_bytes(n.to_bytes(4, "big") * (big // 4), f"f{n}"))
    with pytest.raises(dictionaries.DictionaryError, match="would take more than 64 MiB"):
        store.add(dictionaries.from_bytes(b"one byte too many", "last"))
