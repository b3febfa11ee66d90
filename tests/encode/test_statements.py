"""encode() in INSERT, UPDATE and BATCH through the real binary and server: the stored bytes read
back with the driver and checked with the producers' own libraries."""

from __future__ import annotations

import json
from pathlib import Path

import cbor2
import lz4.block
import lz4.frame
import msgpack
import pytest
import snappy
import zstandard
from shell_runner import CQLSH_EXT, ext, run, said_lines

DOC = {"id": 7, "name": "Ada", "tags": ["a", "b"], "score": 2.5, "ok": True, "none": None}
DOC_TEXT = json.dumps(DOC)


@pytest.fixture(scope="module")
def ks(cassandra):
    name = cassandra.create_keyspace("encode")
    s = cassandra.session(name)
    s.execute("CREATE TYPE doc (title text, content blob)")
    s.execute("CREATE TABLE t (id int PRIMARY KEY, data blob, note text, parts list<blob>, tags set<blob>,"
              " m map<text, blob>, d frozen<doc>, pair tuple<int, blob>, u doc)")
    s.execute("CREATE TABLE bykey (k blob PRIMARY KEY, v int)")
    s.shutdown()
    return name


def said(cassandra, home: Path, statement: str, *flags: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `statement` (-e), less cqlsh's warning about a password on the
    command line."""
    code, out, err = ext(cassandra, home, *flags, "-e", statement)
    err = "\n".join(said_lines(err))
    return code, out, err


def row(cassandra, ks: str, id_: int, columns: str = "data"):
    s = cassandra.session(ks)
    try:
        return s.execute(f"SELECT {columns} FROM t WHERE id = %s", (id_,)).one()
    finally:
        s.shutdown()


def test_insert_snappy_text_is_python_snappys_block(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (1, encode('snappy', '{DOC_TEXT}'))")
    assert code == 0, err
    stored = row(cassandra, ks, 1).data
    assert stored == snappy.compress(DOC_TEXT.encode())
    assert f"encode: {ks}.t.data as snappy: {len(DOC_TEXT)} B of text, {len(stored)} B stored" in err


def test_update_zstd_msgpack_and_the_display_shows_the_record(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"UPDATE {ks}.t SET data = encode('zstd>msgpack', $${DOC_TEXT}$$) WHERE id = 2")
    assert code == 0, err
    stored = row(cassandra, ks, 2).data
    assert stored == zstandard.ZstdCompressor(level=3).compress(msgpack.packb(DOC))
    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(stored)) == DOC
    code, out, _ = said(cassandra, tmp_path, f"SELECT data FROM {ks}.t WHERE id = 2")
    assert code == 0 and '"name": "Ada"' in out or '"name":"Ada"' in out


def test_levels_and_containers(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (3, encode('zstd:19', 'hello hello hello'));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (4, encode('lz4/block>cbor', '{DOC_TEXT}'));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (5, encode('lz4', 'hello lz4 frame'))")
    assert code == 0, err
    assert row(cassandra, ks, 3).data == zstandard.ZstdCompressor(level=19).compress(b"hello hello hello")
    assert cbor2.loads(lz4.block.decompress(row(cassandra, ks, 4).data)) == DOC
    assert lz4.frame.decompress(row(cassandra, ks, 5).data) == b"hello lz4 frame"


def test_given_bytes_are_compressed_as_they_are(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (6, encode('gzip', 0x00ff10))")
    assert code == 0, err
    import gzip

    assert gzip.decompress(row(cassandra, ks, 6).data) == b"\x00\xff\x10"


def test_collections_udt_and_tuple(cassandra, ks, tmp_path):
    statement = (f"INSERT INTO {ks}.t (id, parts, tags, m, d, pair) VALUES (10, "
                 "[encode('snappy', 'first item'), 0x01], {encode('zstd', 'in a set')}, "
                 "{'k': encode('zstd>msgpack', '[1, 2]')}, "
                 "{title: 'x', content: encode('gzip', 'udt field')}, "
                 "(1, encode('snappy', 'tuple element')))")
    code, _, err = said(cassandra, tmp_path, statement)
    assert code == 0, err
    r = row(cassandra, ks, 10, "parts, tags, m, d, pair")
    assert r.parts == [snappy.compress(b"first item"), b"\x01"]
    assert [zstandard.ZstdDecompressor().decompress(v) for v in r.tags] == [b"in a set"]
    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(r.m["k"])) == [1, 2]
    import gzip

    assert gzip.decompress(r.d.content) == b"udt field"
    assert r.pair[0] == 1 and snappy.decompress(r.pair[1]) == b"tuple element"
    assert f"{ks}.t.parts.item as snappy" in err and f"{ks}.t.d.content as gzip" in err
    assert f"{ks}.t.m.value as zstd>msgpack" in err and f"{ks}.t.pair.1 as snappy" in err


def test_update_map_element_and_list_append(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"UPDATE {ks}.t SET m['k'] = encode('zstd', 'hello'), parts = parts + "
                       f"[encode('snappy', 'appended')] WHERE id = 11")
    assert code == 0, err
    r = row(cassandra, ks, 11, "parts, m")
    assert zstandard.ZstdDecompressor().decompress(r.m["k"]) == b"hello"
    assert r.parts == [snappy.compress(b"appended")]


def test_batch_and_blob_key_in_where(cassandra, ks, tmp_path):
    statement = (f"BEGIN BATCH INSERT INTO {ks}.t (id, data) VALUES (20, encode('snappy', 'one')); "
                 f"UPDATE {ks}.bykey SET v = 1 WHERE k = encode('zstd', 'key'); APPLY BATCH")
    code, _, err = said(cassandra, tmp_path, statement)
    assert code == 0, err
    assert snappy.decompress(row(cassandra, ks, 20).data) == b"one"
    s = cassandra.session(ks)
    keys = [r.k for r in s.execute("SELECT k FROM bykey")]
    s.shutdown()
    assert keys == [zstandard.ZstdCompressor(level=3).compress(b"key")]


def test_one_argument_takes_the_decode_setting(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (30, encode('{DOC_TEXT}'))",
                       "--decode", f"{ks}.t.data=zstd>cbor")
    assert code == 0, err
    assert cbor2.loads(zstandard.ZstdDecompressor().decompress(row(cassandra, ks, 30).data)) == DOC


@pytest.mark.parametrize("call, reason", [
    ("encode('pickle', '{}')", "pickle: not written"),
    ("encode('smile', '{}')", "no Smile writer"),
    ("encode('gzip>protobuf', '{}')", "written with its descriptor only"),
    ("encode('bson', '[1, 2]')", "bson holds a document"),
    ("encode('nosuch', 'x')", "unknown step 'nosuch'"),
    ("encode('msgpack', 'not json')", "not JSON"),
    ("encode('x')", "has none"),
])
def test_refusals_send_nothing(cassandra, ks, tmp_path, call, reason):
    statement = (f"BEGIN BATCH INSERT INTO {ks}.t (id, note) VALUES (40, 'sent?'); "
                 f"INSERT INTO {ks}.t (id, data) VALUES (41, {call}); APPLY BATCH")
    code, _, err = said(cassandra, tmp_path, statement)
    assert code != 0 and reason in err and "nothing was sent" in err
    assert len(err.splitlines()) == 1, err
    assert row(cassandra, ks, 40, "note") is None and row(cassandra, ks, 41) is None


def test_a_text_column_is_refused(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, note) VALUES (42, encode('snappy', 'x'))")
    assert code != 0 and f"{ks}.t.note is text: encode() writes blobs" in err
    assert row(cassandra, ks, 42, "note") is None


def test_values_auto_detection_misses_say_they_need_a_setting(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (50, encode('brotli', 'hello brotli hello'))")
    assert code == 0, err
    assert f"shown only with a setting: DECODE '{ks}.t.data' AS 'brotli'" in err


def test_statements_without_encode_go_to_cqlsh_unchanged(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, note) VALUES (60, 'encode(''snappy'', ''x'')')")
    assert code == 0, err
    assert row(cassandra, ks, 60, "note").note == "encode('snappy', 'x')"
    assert err == ""


@pytest.mark.parametrize("mode, id_", [("none", 70), ("zstd", 71), ("auto", 72)])
def test_works_under_every_decompress_mode(cassandra, ks, tmp_path, mode, id_):
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES ({id_}, encode('snappy', 'under -d {mode}'))",
                       "-d", mode)
    assert code == 0, err
    assert snappy.decompress(row(cassandra, ks, id_).data) == f"under -d {mode}".encode()
    # -d zstd would not show a snappy value; -d none shows no value decoded, setting or not.
    assert ("shown only with a setting" in err) == (mode == "zstd")


def test_a_user_function_named_encode_gets_the_statement(cassandra, tmp_path):
    name = cassandra.create_keyspace("encudf")
    s = cassandra.session(name)
    s.execute("CREATE TABLE t (id int PRIMARY KEY, data blob)")
    s.shutdown()
    code, _, err = said(cassandra, tmp_path,
                       f"CREATE FUNCTION {name}.encode (a text, b text) RETURNS NULL ON NULL INPUT "
                       "RETURNS blob "
                       "LANGUAGE java AS 'return java.nio.ByteBuffer.wrap(b.getBytes());'")
    assert code == 0, err
    code, _, err = said(cassandra, tmp_path,
                       f"USE {name}; INSERT INTO t (id, data) VALUES (1, encode('snappy', 'x'))")
    assert code == 0, err
    assert f"keyspace {name} has a user function named encode" in err
    s = cassandra.session(name)
    assert s.execute("SELECT data FROM t WHERE id = 1").one().data == b"x"
    s.shutdown()


def test_gzip_java_string_and_gzip_are_the_jdks_bytes(cassandra, ks, tmp_path):
    """The JDK writes the same bytes (java_producers: GZIPOutputStream around ObjectOutputStream's
    writeObject(String), DeflaterOutputStream, zstd-jni's Zstd.compress, lz4-java's
    LZ4FrameOutputStream)."""
    from java_producers import java_produce

    text = 'Grüße, "Ada" \U0001F600 ' + "x" * 300
    jdk = java_produce(text.encode())
    code, _, err = said(cassandra, tmp_path,
                       f"BEGIN BATCH "
                       f"INSERT INTO {ks}.t (id, data) VALUES (80, encode('gzip>java', $${text}$$));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (81, encode('gzip', $${text}$$));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (82, encode('zlib', $${text}$$));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (83, encode('zstd', $${text}$$));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (84, encode('lz4/LZ4Block', $${text}$$));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (85, encode('lz4', $${text}$$));"
                       "APPLY BATCH")
    assert code == 0, err
    assert row(cassandra, ks, 80).data == jdk["gzip_java_string"]
    assert row(cassandra, ks, 81).data == jdk["gzip"]
    assert row(cassandra, ks, 82).data == jdk["zlib"]
    assert row(cassandra, ks, 83).data == jdk["zstd"]
    assert row(cassandra, ks, 85).data == jdk["lz4_frame"]
    # lz4-java's blocks come from another LZ4 build; its headers (token, raw length, XXH32) and end
    # mark are the same.
    ours, theirs = row(cassandra, ks, 84).data, jdk["lz4_java_block"]
    assert (ours[:9], ours[13:21], ours[-21:]) == (theirs[:9], theirs[13:21], theirs[-21:])
    assert lz4.block.decompress(ours[21:-21], uncompressed_size=len(text.encode())) == text.encode()
    code, out, _ = said(cassandra, tmp_path, f"SELECT data FROM {ks}.t WHERE id = 80")
    assert "[gzip>java]" in out and "Grüße" in out


def test_protobuf_with_its_descriptor_and_avro_with_its_schema(cassandra, ks, tmp_path):
    import io

    import fastavro
    from protobuf_producer import order_descriptor_set

    desc, order_class = order_descriptor_set(tmp_path)
    order = {"id": 42, "customer": "Ada", "items": [{"sku": "A-1", "qty": 2}], "status": "PAID"}
    schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}
    avsc = tmp_path / "order.avsc"
    avsc.write_text(json.dumps(schema))
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (90, "
                       f"encode('zstd>protobuf:acme.Order@{desc}', '{json.dumps(order)}'));"
                       f"INSERT INTO {ks}.t (id, data) VALUES (91, "
                       f"encode('snappy>avro:{avsc}', '{{\"id\": 7, \"note\": \"hi\"}}'))")
    assert code == 0, err
    message = order_class.FromString(zstandard.ZstdDecompressor().decompress(row(cassandra, ks, 90).data))
    assert (message.id, message.customer, message.items[0].sku, message.status) == (42, "Ada", "A-1", 1)
    record = fastavro.schemaless_reader(io.BytesIO(snappy.decompress(row(cassandra, ks, 91).data)),
                                        fastavro.parse_schema(schema))
    assert record == {"id": 7, "note": "hi"}
    # Without its descriptor, or a default value proto3 cannot hold: refused, nothing sent.
    code, _, err = said(cassandra, tmp_path,
                       f"INSERT INTO {ks}.t (id, data) VALUES (92, encode('protobuf:acme.Order@{desc}', "
                       "'{\"id\": 0}'))")
    assert code != 0 and "not verified: the display reads back {}" in err
    assert row(cassandra, ks, 92) is None


def test_udt_field_update_in_list_using_and_if(cassandra, ks, tmp_path):
    code, _, err = said(cassandra, tmp_path,
                       f"UPDATE {ks}.t USING TTL 3600 SET u.content = encode('gzip', 'field') WHERE id = 12;"
                       f"INSERT INTO {ks}.t (id, data) VALUES (13, encode('zlib', 'x')) IF NOT EXISTS;"
                       f"INSERT INTO {ks}.bykey (k, v) VALUES (encode('snappy', 'gone'), 1);"
                       f"BEGIN UNLOGGED BATCH DELETE FROM {ks}.bykey WHERE k = encode('snappy', 'gone');"
                       "APPLY BATCH")
    assert code == 0, err
    import gzip
    import zlib

    assert gzip.decompress(row(cassandra, ks, 12, "u").u.content) == b"field"
    assert zlib.decompress(row(cassandra, ks, 13).data) == b"x"
    assert f"{ks}.t.u.content as gzip" in err
    s = cassandra.session(ks)
    keys = [r.k for r in s.execute("SELECT k FROM bykey")]
    s.shutdown()
    assert snappy.compress(b"gone") not in keys and f"{ks}.bykey.k as snappy" in err


def test_a_script_with_multi_line_statements(cassandra, ks, tmp_path):
    script = tmp_path / "load.cql"
    script.write_text(f"INSERT INTO {ks}.t (id, data)\n  VALUES (100,\n  encode('zstd>msgpack', $$\n"
                      f"{DOC_TEXT}\n$$));\nINSERT INTO {ks}.t (id, note) VALUES (101, 'plain');\n")
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    stored = row(cassandra, ks, 100).data
    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(stored)) == DOC
    assert row(cassandra, ks, 101, "note").note == "plain"


def test_every_writable_container_and_record_format_through_the_server(cassandra, ks, tmp_path):
    from test_roundtrip import READ_BACK, RECORD_READ_BACK, WRITABLE

    chains = [*WRITABLE, *(f"snappy>{fmt}" for fmt in RECORD_READ_BACK)]
    statements = " ".join(f"INSERT INTO {ks}.t (id, data) VALUES ({300 + i}, "
                          f"encode('{chain}', '{DOC_TEXT}'));" for i, chain in enumerate(chains))
    code, _, err = said(cassandra, tmp_path, f"BEGIN UNLOGGED BATCH {statements} APPLY BATCH")
    assert code == 0, err
    for i, chain in enumerate(chains):
        stored = row(cassandra, ks, 300 + i).data
        if ">" in chain:
            codec, fmt = chain.split(">")
            assert RECORD_READ_BACK[fmt](READ_BACK[codec](stored)) == DOC, chain
        else:
            assert READ_BACK[chain](stored) == DOC_TEXT.encode(), chain


def test_copy_from_is_not_changed(cassandra, ks, tmp_path):
    csv = tmp_path / "rows.csv"
    csv.write_text("110,\"encode('snappy', 'x')\"\n")
    code, _, err = said(cassandra, tmp_path, f"COPY {ks}.t (id, note) FROM '{csv}'")
    assert code == 0, err
    assert row(cassandra, ks, 110, "note").note == "encode('snappy', 'x')"
    assert "encode:" not in err


def test_java_libraries_read_what_was_written(cassandra, ks, tmp_path):
    """snappy-java, lz4-java, zstd-jni and the JDK read each container encode() writes for them."""
    from java_readers import java_read

    text = 'Grüße, "Ada" \U0001F600 ' + "y" * 70000  # past a block of 64 KiB and a u16 String length
    readers = {"snappy": "snappy_raw", "snappy/xerial": "snappy_xerial", "snappy/framed": "snappy_framed",
               "lz4/LZ4Block": "lz4_java_block", "lz4/frame": "lz4_frame", "zstd": "zstd", "gzip": "gzip",
               "zlib": "zlib", "gzip>java": "gzip_java_string"}
    script = tmp_path / "java.cql"
    script.write_text("".join(f"INSERT INTO {ks}.t (id, data) VALUES ({120 + i}, "
                              f"encode('{chain}', $${text}$$));\n" for i, chain in enumerate(readers)))
    result = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-f", str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    stored = {chain: (reader, row(cassandra, ks, 120 + i).data)
              for i, (chain, reader) in enumerate(readers.items())}
    assert java_read(stored) == {chain: text.encode() for chain in readers}
