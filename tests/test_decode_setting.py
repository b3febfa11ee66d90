"""Telling cqlsh-ext what a column holds: --decode, [cqlsh_ext.decode] in cqlshrc and DECODE, on
the real server, for top-level and nested blobs, and what a wrong setting looks like."""

from __future__ import annotations

import msgpack
import pytest
import zstandard
from shell_runner import ext

#: `protoc --decode_raw`'s example message: field 1 = 150, field 2 = "testing".
PROTO = b"\x08\x96\x01\x12\x07testing"


@pytest.fixture(scope="module")
def ks(cassandra):
    name = cassandra.create_keyspace("decode")
    s = cassandra.session(name)
    s.execute("CREATE TABLE events (id int PRIMARY KEY, body blob, parts list<blob>, extra map<text, blob>)")
    s.execute("INSERT INTO events (id, body, parts, extra) VALUES (1, %s, %s, %s)",
              (zstandard.ZstdCompressor().compress(PROTO), [PROTO, PROTO], {"m": msgpack.packb([1, 2])}))
    s.shutdown()
    return name


def test_without_a_setting_protobuf_is_not_guessed(cassandra, ks, tmp_path):
    code, out, _ = ext(cassandra, tmp_path, "-e", f"SELECT body FROM {ks}.events")
    assert code == 0 and "[zstd] 0x" + PROTO.hex() in out


def test_flag_for_a_column_and_for_the_blobs_inside_a_list(cassandra, ks, tmp_path):
    code, out, err = ext(cassandra, tmp_path, "--decode", f"{ks}.events.body=zstd>protobuf",
                         "--decode", f"{ks}.events.parts=protobuf",
                         "-e", f"SELECT body, parts FROM {ks}.events")
    assert code == 0, err
    assert '[zstd>protobuf] {"1":150,"2":"testing"}' in out
    assert out.count("""[protobuf] '{"1":150,"2":"testing"}'""") == 2  # each list item


def test_cqlshrc_section_and_a_map_value_path(cassandra, ks, tmp_path):
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext.decode]\nevents.body = zstd>protobuf\n{ks}.events.extra.value = msgpack\n")
    code, out, err = ext(cassandra, tmp_path, "--cqlshrc", str(rc),
                         "-e", f"SELECT body, extra FROM {ks}.events")
    assert code == 0, err
    assert "[zstd>protobuf] {" in out  # table.column, without the keyspace
    assert "{'m': [msgpack] '[1,2]'}" in out


def test_decode_command_for_the_session(cassandra, ks, tmp_path):
    script = tmp_path / "s.cql"
    script.write_text(f"DECODE '{ks}.events.body' AS 'zstd>protobuf';\nDECODE;\n"
                      f"SELECT body FROM {ks}.events;\nDECODE '{ks}.events.body' AUTO;\n"
                      f"SELECT body FROM {ks}.events;\n")
    code, out, err = ext(cassandra, tmp_path, "-f", str(script))
    assert code == 0, err
    assert f"{ks}.events.body AS zstd>protobuf" in out
    first, second = out.split("detected automatically.")
    assert "[zstd>protobuf] {" in first and "[zstd] 0x" in second


def test_a_setting_that_does_not_fit_says_why_on_the_value(cassandra, ks, tmp_path):
    code, out, err = ext(cassandra, tmp_path, "--decode", f"{ks}.events.body=gzip>msgpack",
                         "-e", f"SELECT body FROM {ks}.events")
    assert code == 0, err
    assert "(as gzip>msgpack: gzip: " in out and "Traceback" not in err


def test_a_setting_that_cannot_be_used_is_one_line(cassandra, tmp_path):
    code, _, err = ext(cassandra, tmp_path, "--decode", "a.b.c=zstd>yaml", "-e", "SELECT 1")
    assert code == 2 and err.strip().count("\n") == 0
    assert err.startswith("cqlsh-ext: error: --decode a.b.c: unknown step 'yaml'")
    rc = tmp_path / "cqlshrc"
    rc.write_text("[cqlsh_ext.decode]\nnot-a-column = zstd\n")
    code, _, err = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-e", "SELECT 1")
    assert code == 2 and "[cqlsh_ext.decode] not-a-column: not a column" in err


def test_settings_apply_to_json_and_csv_output_too(cassandra, ks, tmp_path):
    import csv
    import io
    import json

    flags = ["--decode", f"{ks}.events.body=zstd>protobuf", "--decode", f"{ks}.events.parts=protobuf"]
    select = f"SELECT body, parts, extra FROM {ks}.events"
    code, out, err = ext(cassandra, tmp_path, *flags, "--output-format", "json", "-e", select)
    assert code == 0, err
    row = json.loads(out.splitlines()[0])
    decoded = {"1": 150, "2": "testing"}
    assert row["body"] == {"label": "zstd>protobuf", "kind": "record", "confidence": "confident",
                           "payload": decoded}
    assert row["parts"] == [{"label": "protobuf", "kind": "record", "confidence": "confident",
                              "payload": decoded}] * 2
    assert row["extra"]["m"] == "0x" + msgpack.packb([1, 2]).hex()  # no setting, too short to detect
    code, out, err = ext(cassandra, tmp_path, *flags, "--output-format", "csv", "-e", select)
    assert code == 0, err
    header, values = list(csv.reader(io.StringIO(out)))
    assert header == ["body", "parts", "extra"]
    assert json.loads(values[0]) == decoded
    assert json.loads(values[1])[0]["payload"] == decoded


def test_avro_records_with_a_schema_file_through_the_server(cassandra, tmp_path):
    import json
    import struct

    import fastavro

    schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "customer", "type": "string"}]}
    avsc = tmp_path / "order.avsc"
    avsc.write_text(json.dumps(schema))

    def record(order: dict) -> bytes:
        import io

        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), order)
        return buf.getvalue()

    name = cassandra.create_keyspace("avro")
    s = cassandra.session(name)
    s.execute("CREATE TABLE events (id int PRIMARY KEY, body blob)")
    # Confluent framing (schema id 7), zstd-compressed as a Kafka sink might store it.
    order = {"id": 5, "customer": "Ada"}
    framed = zstandard.ZstdCompressor().compress(b"\x00" + struct.pack(">I", 7) + record(order))
    s.execute("INSERT INTO events (id, body) VALUES (1, %s)", (framed,))
    s.shutdown()
    select = f"SELECT body FROM {name}.events"
    code, out, err = ext(cassandra, tmp_path, "-e", select)
    assert code == 0, err
    assert "[zstd] 0x00" in out  # undetectable without the schema: decompressed, shown as hex
    flag = ["--decode", f"{name}.events.body=zstd>avro:{avsc}"]
    code, out, err = ext(cassandra, tmp_path, *flag, "-e", select)
    assert code == 0, err
    assert '[zstd>avro] {"id":5,"customer":"Ada"}' in out
    code, out, err = ext(cassandra, tmp_path, *flag, "--output-format", "json", "-e", select)
    assert code == 0, err
    assert json.loads(out)["body"] == {"label": "zstd>avro", "kind": "record", "confidence": "confident",
                                       "payload": order}


def test_protobuf_with_a_descriptor_set_through_the_server(cassandra, tmp_path):
    import json

    from protobuf_producer import order_descriptor_set

    path, Order = order_descriptor_set(tmp_path)
    message = Order(id=9, customer="Grace", status=1)
    message.items.add(sku="SKU-2", qty=1)
    name = cassandra.create_keyspace("proto")
    s = cassandra.session(name)
    s.execute("CREATE TABLE events (id int PRIMARY KEY, body blob)")
    s.execute("INSERT INTO events (id, body) VALUES (1, %s)", (message.SerializeToString(),))
    s.shutdown()
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext.decode]\n{name}.events.body = protobuf:acme.Order@{path}\n")
    select = f"SELECT body FROM {name}.events"
    code, out, err = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "-e", select)
    assert code == 0, err
    assert '[protobuf] {"id":9,"customer":"Grace","items":[{"sku":"SKU-2","qty":1}],"status":"PAID"}' in out
    code, out, err = ext(cassandra, tmp_path, "--cqlshrc", str(rc), "--output-format", "json", "-e", select)
    assert code == 0, err
    assert json.loads(out)["body"]["payload"]["items"] == [{"sku": "SKU-2", "qty": 1}]


def test_a_codec_name_reads_only_the_containers_labelled_with_it(cassandra, tmp_path):
    # Once, a `deflate` setting showed a gzip value as [gzip] {...}. A codec name means the
    # containers labelled with it, as `snappy` means snappy/framed too: `deflate` is raw deflate,
    # and gzip and zlib values under it show their hex and which name reads them. DECODE, a
    # --decode flag and -d agree.
    import gzip
    import zlib

    import snappy

    doc = b'{"id": 7, "note": "' + b"deflate " * 20 + b'"}'
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    values = {"raw deflate": raw.compress(doc) + raw.flush(), "gzip": gzip.compress(doc, mtime=0),
              "zlib": zlib.compress(doc), "snappy framed": snappy.StreamCompressor().compress(doc)}
    ks = cassandra.create_keyspace("names")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE v (name text PRIMARY KEY, data blob)")
    for name, value in values.items():
        session.execute("INSERT INTO v (name, data) VALUES (%s, %s)", (name, value))
    session.shutdown()
    select = f"SELECT name, data FROM {ks}.v"

    def cells(*args: str) -> dict[str, str]:
        code, out, err = ext(cassandra, tmp_path, *args)
        assert code == 0, err
        return {line.split(" | ")[0].strip(): line.split(" | ")[1].strip()
                for line in out.splitlines() if " | " in line and not line.lstrip().startswith("name ")}

    script = tmp_path / "decode.cql"
    script.write_text(f"DECODE '{ks}.v.data' AS 'deflate';\n{select};\n")
    for shown, prefix in ((cells("-f", str(script)), "as deflate: "),
                          (cells("--decode", f"{ks}.v.data=deflate", "-e", select), "as deflate: "),
                          (cells("-d", "deflate", "-e", select), "")):
        assert shown["raw deflate"] == f"[deflate] {doc.decode()}", shown
        for name in ("gzip", "zlib"):
            assert shown[name].startswith(f"0x{values[name].hex()} ({prefix}deflate: "), shown[name]
            assert shown[name].endswith(f"; the value is a {name} stream (name it {name}))"), shown[name]
    # A family name reads every container labelled with it.
    assert cells("--decode", f"{ks}.v.data=snappy", "-e", select)["snappy framed"] == (
        f"[snappy/framed] {doc.decode()}")
    assert cells("--decode", f"{ks}.v.data=gzip", "-e", select)["gzip"] == f"[gzip] {doc.decode()}"
