"""Record formats inside blobs (cqlsh_ext.payload.formats), written by their real Python producers,
bare and inside every compression container; false-positive sweeps; hostile values."""

from __future__ import annotations

import datetime
import gzip
import os
import pickle
import random
import struct
from pathlib import Path

import bson
import cbor2
import cramjam
import lz4.frame
import msgpack
import pytest
import zstandard
from cqlshlib import formatting

from cqlsh_ext.demo.records import documents
from cqlsh_ext.output.display import BlobDisplay
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.formats.tree import PayloadError, Symbol, Tagged, jsonable
from cqlsh_ext.settings import DisplaySettings

PLAIN = formatting.empty_colormap
RECORD = {"id": 42, "customer": "Ada Lovelace", "items": [{"sku": "SKU-1", "qty": 2, "price": 19.99}],
          "paid": True, "note": None}


def cell(value: bytes, expanded: bool = False) -> str:
    return BlobDisplay(DisplaySettings(), False, expanded)(value, PLAIN).strval


def records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for n, doc in enumerate(documents(count, seed=seed)):
        out.append({"n": n, "id": rng.randint(0, 2**40), "doc": doc[: rng.randint(10, 400)],
                    "tags": [rng.choice("abc") * rng.randint(1, 5) for _ in range(rng.randint(0, 4))],
                    "score": rng.random(), "ok": rng.random() < 0.5})
    return out


PRODUCERS = {
    "msgpack": msgpack.packb,
    "cbor": cbor2.dumps,
    "bson": bson.encode,
    "pickle": lambda r: pickle.dumps(r, protocol=4),
}
CONTAINERS = {
    "snappy": lambda b: bytes(cramjam.snappy.compress_raw(b)),
    "lz4/frame": lz4.frame.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    "gzip": lambda b: gzip.compress(b, mtime=0),
}


@pytest.mark.parametrize("fmt", PRODUCERS)
def test_bare_values_of_each_producer(fmt):
    shown = cell(PRODUCERS[fmt](RECORD))
    label = "pickle/4" if fmt == "pickle" else fmt
    assert shown == (f'[{label}] {{"id":42,"customer":"Ada Lovelace","items":[{{"sku":"SKU-1",'
                     f'"qty":2,"price":19.99}}],"paid":true,"note":null}}')


@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize("fmt", PRODUCERS)
def test_inside_every_container(fmt, container):
    shown = cell(CONTAINERS[container](PRODUCERS[fmt](RECORD)))
    label = "pickle/4" if fmt == "pickle" else fmt
    assert shown.startswith(f'[{container}>{label}] {{"id":42,"customer":"Ada Lovelace"')


def test_indented_under_expand():
    assert cell(msgpack.packb(RECORD), expanded=True).startswith('[msgpack] {\n  "id": 42,\n  "customer"')


def test_msgpack_java_integer_keys_and_timestamps():
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    value = msgpack.packb({1: "one", "at": msgpack.Timestamp.from_datetime(when), "b": b"\x00\xff"})
    tree = formats.decode_named("msgpack", value)
    assert tree[1] == "one" and tree["at"] == when and tree["b"] == b"\x00\xff"
    assert jsonable(tree) == {"1": "one", "at": "2024-05-06T07:08:09.000Z", "b": "0x00ff"}


def test_cbor_big_integers_stay_exact_and_tags_are_named():
    record = {"big": 2**80, "re": cbor2.CBORTag(35, "a+b"), "x": cbor2.CBORTag(9999, 1)}
    value = b"\xd9\xd9\xf7" + cbor2.dumps(record)
    tree = formats.detect(value)[1]
    assert tree["big"] == 2**80
    assert tree["re"] == Tagged("tag35", "a+b")  # the regular expression is never compiled
    assert tree["x"] == Tagged("tag9999", 1)
    assert cell(value) == '[cbor] {"big":1208925819614629174706176,"re":tag35("a+b"),"x":tag9999(1)}'


def test_cbor_shared_references_build_no_cycle():
    cyclic = []
    cyclic.append(cyclic)
    value = b"\xd9\xd9\xf7" + cbor2.dumps(cyclic, value_sharing=True)
    tree = formats.detect(value)[1]
    assert tree == Tagged("tag28", [Tagged("tag29", 0)])


def test_bson_types_json_lacks():
    oid = bson.ObjectId("65f0a1b2c3d4e5f601234567")
    value = bson.encode({"_id": oid, "when": datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)})
    tree = formats.detect(value)[1]
    assert tree["_id"] == Tagged("ObjectId", str(oid))
    assert cell(value) == ('[bson] {"_id":ObjectId("65f0a1b2c3d4e5f601234567"),'
                           '"when":"2024-01-02T00:00:00+00:00"}')


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_plain_data_is_read_from_the_opcodes(protocol):
    value = pickle.dumps({"a": [1, 2.5, "x", b"y", None, True], "t": (1, 2), "s": {3}}, protocol=protocol)
    assert formats.detect(value)[1] == {"a": [1, 2.5, "x", b"y", None, True], "t": [1, 2], "s": [3]}
    assert cell(value).startswith(f"[pickle/{protocol}] ")


def test_pickle_that_would_run_code_is_shown_not_run(tmp_path: Path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    value = pickle.dumps(Evil(), protocol=4)
    tree = formats.detect(value)[1]
    assert isinstance(tree, Symbol) and tree.text == f'posix.system("touch {marker}")'
    assert cell(value) == f'[pickle/4] posix.system("touch {marker}") (not executed)'
    assert not marker.exists()


def test_protobuf_is_decoded_only_when_named():
    # protoc --decode_raw's own example: field 1 = 150, field 2 = "testing", a nested message.
    value = b"\x08\x96\x01\x12\x07testing\x1a\x03\x08\x96\x01"
    assert formats.detect(value) is None
    assert formats.decode_named("protobuf", value) == {"1": 150, "2": "testing", "3": {"1": [150]}}



# ------------------------------------------------------------------ protobuf with a descriptor set


def test_protobuf_with_a_descriptor_set_shows_field_names(tmp_path):
    from protobuf_producer import order_descriptor_set

    from cqlsh_ext.payload.unwrap import unwrap_spec
    from cqlsh_ext.payload.view import FAILED

    path, Order = order_descriptor_set(tmp_path)
    message = Order(id=2**40, customer="Ada", status=1)
    message.items.add(sku="SKU-1", qty=2)
    message.counts["a"] = 3
    value = zstandard.ZstdCompressor().compress(message.SerializeToString())
    view = unwrap_spec(value, f"zstd>protobuf:acme.Order@{path}", 1 << 20)
    assert view.tree == {"id": 2**40, "customer": "Ada", "items": [{"sku": "SKU-1", "qty": 2}],
                         "status": "PAID", "counts": {"a": 3}}
    # The wrong type: field numbers it does not know, or of another wire type, are listed.
    view = unwrap_spec(message.SerializeToString(), f"protobuf:acme.Item@{path}", 1 << 20)
    assert view.tree == {"$unknown fields": [1, 2, 3, 4, 5]}
    view = unwrap_spec(b"\x0a\xff", f"protobuf:acme.Order@{path}", 1 << 20)
    assert view.kind == FAILED and view.reason.startswith("as protobuf:acme.Order@")
    assert "protobuf: not a acme.Order message" in view.reason
    view = unwrap_spec(b"\x08\x01", f"protobuf:acme.Nope@{path}", 1 << 20)
    assert "no message type 'acme.Nope' in orders.desc (it has acme.Item, acme.Order" in view.reason


def test_a_protobuf_setting_needs_a_type_and_an_existing_file(tmp_path):
    from cqlsh_ext.payload.spec import SpecError, parse_spec

    with pytest.raises(SpecError, match="names the type and its descriptor set"):
        parse_spec("protobuf:acme.Order")
    with pytest.raises(SpecError, match="no such file"):
        parse_spec(f"protobuf:acme.Order@{tmp_path}/missing.desc")

# ------------------------------------------------------------------ false positives


def test_random_values_are_no_record_format():
    rng = random.Random(2024)
    hits = []
    for _ in range(20_000):
        value = rng.randbytes(rng.choice([rng.randint(4, 64), rng.randint(4, 4096)]))
        if formats.detect(value) is not None:
            hits.append(value[:16].hex())
    assert hits == []


def test_short_random_values_are_no_record_format():
    # Short values parse as MessagePack or CBOR most often: ids, hashes, 8 to 32 bytes.
    rng = random.Random(8)
    assert [v.hex() for v in (rng.randbytes(rng.randint(8, 32)) for _ in range(20_000))
            if formats.detect(v) is not None] == []


def test_text_and_json_are_no_record_format():
    rng = random.Random(5)
    docs = list(documents(400, seed=9))
    hits = [1 for _ in range(20_000) if formats.detect(rng.choice(docs)[: rng.randint(4, 3000)].encode())]
    assert hits == []


@pytest.mark.sweep
def test_each_format_is_detected_as_itself_only():
    # 20,000 records per format (about 20 s): the full suite runs it, the fast layer leaves it out.
    recs = records(20_000, seed=11)
    for name, produce in PRODUCERS.items():
        for rec in recs:
            found = formats.detect(produce(rec))
            assert found is not None and found[0].name == name, (name, rec)


# ------------------------------------------------------------------ hostile values


@pytest.mark.parametrize(("name", "value"), [
    ("msgpack", b"\x91" * 100_000 + b"\x01"),                       # nested 100,000 deep
    ("msgpack", b"\xc6\xff\xff\xff\xff" + b"x" * 10),               # bin32 claiming 4 GiB
    ("msgpack", b"\xdd\xff\xff\xff\xff\x01"),                       # array32 claiming 4 billion items
    ("cbor", b"\x9f" * 100_000),                                    # indefinite arrays, never closed
    ("cbor", b"\x5b\x00\x00\x00\x01\x00\x00\x00\x00" + b"x"),       # a byte string claiming 4 GiB
    ("bson", struct.pack("<i", 12) + b"\x03a\x00" + b"\x00" * 5),   # inner length beyond the value
    ("pickle", b"\x80\x04" + b"(" * 100_000 + b"."),                # marks only
    ("pickle", b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f."),   # BINBYTES8 claiming 2^63 bytes
    ("protobuf", b"\x0a\xff\xff\xff\xff\x0f" + b"x"),               # a length far beyond the value
])
def test_hostile_values_fail_fast_with_a_reason(name, value):
    with pytest.raises(PayloadError) as err:
        formats.decode_named(name, value)
    assert str(err.value).startswith(name)
    assert cell(value).startswith("0x")  # the display keeps the hex, never crashes


# ------------------------------------------------------------------ Avro object container files

ORDER_SCHEMA = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]}


def avro_file(records: list[dict], codec: str = "null", schema: dict = ORDER_SCHEMA) -> bytes:
    import io

    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "bzip2", "xz"])
def test_avro_container_with_its_own_schema_and_block_codec(codec):
    value = avro_file([{"id": i, "customer": f"c{i}", "tags": ["x"]} for i in range(3)], codec)
    assert cell(value) == ('[avro] {"schema":"Order","records":[{"id":0,"customer":"c0",'
                           '"tags":["x"]},{"id":1,"customer":"c1","tags":["x"]},'
                           '{"id":2,"customer":"c2","tags":["x"]}]}')


def test_avro_inside_zstd():
    value = zstandard.ZstdCompressor().compress(avro_file([{"id": 7, "customer": "z", "tags": []}]))
    assert cell(value).startswith('[zstd>avro] {"schema":"Order","records":[{"id":7')


def test_avro_hostile_containers_are_refused_with_a_reason():
    zero = {"type": "record", "name": "R",
            "fields": [{"name": "xs", "type": {"type": "array", "items": "null"}}]}
    with pytest.raises(PayloadError, match="items that take no bytes"):
        formats.decode_named("avro", avro_file([{"xs": [None] * 3}], schema=zero))
    good = avro_file([{"id": 1, "customer": "c", "tags": []}])
    with pytest.raises(PayloadError):
        formats.decode_named("avro", good[:-20])  # cut inside the last block
    with pytest.raises(PayloadError, match="sync marker"):
        formats.decode_named("avro", good[:-1] + bytes([good[-1] ^ 0xFF]))



# ------------------------------------------------------------------ single Avro records, schema given


def avro_record(record: dict, schema: dict = ORDER_SCHEMA) -> bytes:
    """One record as fastavro's schemaless writer writes it (no framing)."""
    import io

    import fastavro

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return buf.getvalue()


def single_object(record: dict, schema: dict = ORDER_SCHEMA) -> bytes:
    """The Avro specification's single-object encoding: C3 01, the schema's CRC-64-AVRO
    fingerprint (fastavro computes it, little-endian as the spec stores it), the record."""
    import fastavro
    from fastavro.schema import fingerprint, to_parsing_canonical_form

    canonical = to_parsing_canonical_form(fastavro.parse_schema(schema))
    return b"\xc3\x01" + bytes.fromhex(fingerprint(canonical, "CRC-64-AVRO")) + avro_record(record, schema)


@pytest.fixture
def avsc(tmp_path: Path) -> str:
    import json

    path = tmp_path / "order.avsc"
    path.write_text(json.dumps(ORDER_SCHEMA))
    return str(path)


def test_avro_records_decode_with_the_schema_bare_single_object_and_confluent(avsc):
    from cqlsh_ext.payload.unwrap import unwrap_spec

    order = {"id": 7, "customer": "Ada", "tags": ["x", "y"]}
    framed = {
        "bare": avro_record(order),
        "single-object": single_object(order),
        "confluent": b"\x00" + struct.pack(">I", 42) + avro_record(order),
        "bare, first byte zero": avro_record(dict(order, id=0)),
    }
    for name, value in framed.items():
        expected = dict(order, id=0) if "zero" in name else order
        view = unwrap_spec(zstandard.ZstdCompressor().compress(value), f"zstd>avro:{avsc}", 1 << 20)
        assert view.tree == expected, name
        label = "avro/single-object" if name == "single-object" else "avro"
        assert [layer.label for layer in view.layers] == ["zstd", label], name


def test_avro_records_that_do_not_fit_the_schema_say_why(avsc, tmp_path):
    from cqlsh_ext.payload.unwrap import unwrap_spec
    from cqlsh_ext.payload.view import FAILED

    other = {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "double"}]}
    view = unwrap_spec(single_object({"x": 1.5}, other), f"avro:{avsc}", 1 << 20)
    assert view.kind == FAILED
    assert "single-object fingerprint" in view.reason and "order.avsc's" in view.reason
    longer = avro_record({"id": 1, "customer": "c", "tags": []}) + b"\x00\x00"
    view = unwrap_spec(longer, f"avro:{avsc}", 1 << 20)
    assert view.kind == FAILED
    assert view.reason.endswith("2 bytes left after one Order record: another schema?")
    # Named without a schema, a single record says what it is and what it needs.
    with pytest.raises(PayloadError, match="single-object encoding, schema fingerprint .*: name its schema"):
        formats.decode_named("avro", single_object({"id": 1, "customer": "c", "tags": []}))
    with pytest.raises(PayloadError, match="Confluent Schema Registry framing, schema id 42"):
        formats.decode_named("avro", b"\x00" + struct.pack(">I", 42) + b"\x02\x00\x00")


def test_an_avro_setting_names_a_file_that_exists():
    from cqlsh_ext.payload.spec import SpecError, parse_spec

    with pytest.raises(SpecError, match="no such file"):
        parse_spec("zstd>avro:/nonexistent/order.avsc")
    with pytest.raises(SpecError, match="'msgpack' takes no argument"):
        parse_spec("msgpack:x")

# ------------------------------------------------------------------ Jackson Smile

def test_smile_document_with_shared_key_names():
    # Built token by token from the Smile specification (no Python producer exists): header with
    # shared names on; {"id": 42, "name": "Ada", "tags": ["x", "y"], "ok": true,
    # "pi": 3.5, "sub": {"id": -3}} where the second "id" is a back-reference to the first.
    double = struct.unpack(">Q", struct.pack(">d", 3.5))[0]
    seven = bytes((double >> (7 * i)) & 0x7F for i in range(9, -1, -1))
    value = (b":)\n\x01" + b"\xfa"
             + b"\x81id" + b"\x24\x01\x94"          # 42: zig-zag 84 as a VInt
             + b"\x83name" + b"\x42Ada"              # tiny ASCII string, 3 bytes
             + b"\x83tags" + b"\xf8\x40x\x40y\xf9"
             + b"\x81ok" + b"\x23"
             + b"\x81pi" + b"\x29" + seven
             + b"\x82sub" + b"\xfa" + b"\x40" + b"\xc5" + b"\xfb"  # shared name 0 = "id"; small int -3
             + b"\xfb")
    expected = {"id": 42, "name": "Ada", "tags": ["x", "y"], "ok": True, "pi": 3.5, "sub": {"id": -3}}
    assert formats.detect(value)[1] == expected
    compressed = zstandard.ZstdCompressor().compress(value)
    assert cell(compressed).startswith('[zstd>smile] {"id":42,"name":"Ada"')


@pytest.mark.parametrize("value", [
    b":)\n\x00\xfa\x81id\x24",                # cut inside a number
    b":)\n\x00\xfa\x40\x21\xfb",               # a shared name never sent
    b":)\n\x00\xe0abc",                         # a long string without its end marker
    b":)\n\x00" + b"\xf8" * 100_000,           # arrays nested 100,000 deep
    b":)\n\x00\xfd\xbf\xff\xff\xff\x8f",      # raw binary claiming more than the value holds
])
def test_smile_hostile_values_fail_fast(value):
    with pytest.raises(PayloadError, match="^smile"):
        formats.decode_named("smile", value)


def test_a_bignum_past_pythons_digit_limit_is_shown_in_hex_not_a_crash():
    # CBOR tag 2 (a positive bignum) of 3,000 bytes: 7,000 decimal digits, past the 4,300 that
    # Python converts to text. Table and JSON output show it in hex.
    import json

    big = int.from_bytes(b"\x01" + b"\x00" * 2999, "big")
    value = b"\xd9\xd9\xf7" + cbor2.dumps({"n": big})
    assert cell(value).startswith('[cbor] {"n":0x1000000')
    assert json.loads(json.dumps(jsonable(formats.detect(value)[1]))) == {"n": {"$hex": f"0x{big:x}"}}


# ------------------------------------------------------------------ decimals, references, patterns

def test_decimals_show_every_digit_in_cbor_and_avro():
    # cbor2 writes a Decimal as tag 4 [exponent, mantissa]; fastavro a decimal logical type as the
    # unscaled integer's bytes. Both used to go through decimal.Decimal: rounded to 28 digits (or
    # to the schema's precision), and in time quadratic in the digits (a 300 KB mantissa: 20 s).
    import decimal

    number = decimal.Decimal("1234567890123456789012345678901234.567890")
    assert formats.detect(b"\xd9\xd9\xf7" + cbor2.dumps({"d": number}))[1] == {"d": str(number)}
    schema = {"type": "record", "name": "Price", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 6}}]}
    value = avro_file([{"d": number}], schema=schema)
    assert formats.detect(value)[1] == {"schema": "Price", "records": [{"d": str(number)}]}


def test_cbor_rationals_and_bigfloats_are_shown_as_their_parts():
    # cbor2 computes tag 5 (bigfloat) in a 28-digit context (2**-2**31 became "0E-1000026") and
    # a rational past 4,300 digits could not be written at all (ValueError out of the renderer).
    import fractions

    big = fractions.Fraction(10**5000 + 1, 3)
    value = b"\xd9\xd9\xf7" + cbor2.dumps([big, cbor2.CBORTag(5, [-(2**31), 1])])
    tree = formats.detect(value)[1]
    assert tree == [Tagged("tag30", [10**5000 + 1, 3]), Tagged("tag5", [-(2**31), 1])]
    assert cell(value).startswith("[cbor] [tag30([0x")


def test_bson_references_patterns_and_code_are_shown_as_their_parts():
    from bson.code import Code
    from bson.dbref import DBRef
    from bson.regex import Regex

    value = bson.encode({"ref": DBRef("orders", 7, "shop", note="x"), "re": Regex("a.b", "i"),
                         "code": Code("f(x)", {"x": 1})})
    assert formats.detect(value)[1] == {
        "ref": Tagged("DBRef", {"$ref": "orders", "$id": 7, "$db": "shop", "note": "x"}),
        "re": Tagged("Regex", {"pattern": "a.b", "flags": 2}),  # re.IGNORECASE, as pymongo reads "i"
        "code": Tagged("Code", {"code": "f(x)", "scope": {"x": 1}})}


def test_a_format_accepts_only_the_first_bytes_it_declares():
    # Detection looks a value's candidate formats up by its first byte (PayloadFormat.leads).
    rng = random.Random(9)
    tails = [b"", *(rng.randbytes(n) for n in (1, 3, 7, 12, 40) for _ in range(30))]
    tails += [b"\x00" * 8, b".", b"\x02\x00\x00\x00.", b")\n" + b"\xfa" * 6, b"bj\x01" + b"\x00" * 8]
    for fmt in formats.all_formats():
        if fmt.leads is None:
            continue
        for lead in set(range(256)) - set(fmt.leads):
            for tail in tails:
                assert not fmt.maybe(bytes([lead]) + tail), (fmt.name, lead, tail)


def _cbor_values():
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=5),
                        st.binary(max_size=5), st.floats(allow_nan=False))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 9)), inner, max_size=4),
        st.builds(cbor2.CBORTag, st.sampled_from([1000, 1234, 28, 258, 37]), inner),
        st.builds(lambda k, v: {tuple(k): v}, st.lists(st.integers(0, 3), min_size=1, max_size=3), inner),
    ), max_leaves=20)


def test_cbor_values_read_as_they_are_thawed():
    # decode() skips the thaw when no tag was met; the tree is the thawed one either way.
    import io

    from hypothesis import given, settings

    from cqlsh_ext.payload.formats import cbor as cbor_format

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(_cbor_values())
    def check(value):
        data = cbor2.dumps({"v": value})
        try:
            raw = cbor2.CBORDecoder(io.BytesIO(data), tag_hook=cbor_format._unknown_tag,
                                    semantic_decoders=cbor_format._SEMANTIC).decode()
        except Exception:
            return
        try:
            tree = cbor_format.decode(data)
        except PayloadError:
            return
        assert repr(tree) == repr(cbor_format._thaw(raw))

    check()


def test_a_map_s_keys_one_name_twice_are_each_named_by_their_json_text() -> None:
    """The integer 1 and the text "1" of one map (msgpack's and cbor2's own records) were shown as
    one name twice in the table ({"1":"int","1":"text"}) and kept once in JSON; 1, 1.0 and true
    were one key of a MessagePack map. Each is now a name of its own; other maps as they were."""
    from cqlsh_ext.payload.formats.tree import render

    record = {1: "int", "1": "text", "n": {2: "two"}}
    for name, data in (("msgpack", msgpack.packb(record)), ("cbor", cbor2.dumps(record))):
        tree = formats.decode_named(name, data)
        assert render(tree) == '{"1":"int","\\"1\\"":"text","\\"n\\"":{"2":"two"}}'
        assert jsonable(tree) == {"1": "int", '"1"': "text", '"n"': {"2": "two"}}
        assert render(tree["n"]) == '{"2":"two"}'
    alike = msgpack.Packer().pack_map_pairs([(1, "int"), (1.0, "float"), (True, "bool")])
    tree = formats.decode_named("msgpack", alike)
    assert (render(tree), jsonable(tree)) == ('{"1":"int","1.0":"float","true":"bool"}',
                                              {"1": "int", "1.0": "float", "true": "bool"})
