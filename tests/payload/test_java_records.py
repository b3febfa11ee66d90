"""Record formats as Java services write them (tests/java/RecordProducers.java: msgpack-java,
Jackson's MessagePack, CBOR and Smile, Avro, protobuf-java), read back by cqlsh-ext: detected
where the format allows it, decoded with the schema where it needs one. The expected values are
the Java record, written down here by hand."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from cqlshlib import formatting

from cqlsh_ext.output.display import BlobDisplay
from cqlsh_ext.payload import formats
from cqlsh_ext.payload import view as kinds
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec
from cqlsh_ext.settings import DisplaySettings

pytestmark = pytest.mark.java

MANY = {f"key{i}": i for i in range(100)}
#: RecordProducers.record()
RECORD = {
    "id": 42,
    "big": 9007199254740993,
    "customer": "Ada Lovelace ö €",
    "price": 19.99,
    "paid": True,
    "note": None,
    "items": [{"sku": "SKU-1"}, {"sku": "SKU-2"}],
    "tags": ["alpha", "beta", "alpha", "beta"],
    "many": MANY,
    "again": MANY,
}
ORDER = {"id": 7, "customer": "Ada", "tags": ["x", "y"]}


@pytest.fixture(scope="module")
def produced() -> dict[str, bytes]:
    from java_producers import java_record_formats

    return java_record_formats()


@pytest.mark.parametrize(("name", "label"), [
    ("msgpack_jackson", "msgpack"),
    ("cbor_jackson", "cbor"),
    ("cbor_jackson_tagged", "cbor"),
    ("smile_jackson", "smile"),
])
def test_jackson_records_are_detected_and_read_exactly(produced, name, label):
    view = unwrap(produced[name], "auto", 1 << 20)
    assert view.kind == kinds.RECORD and [layer.label for layer in view.layers] == [label]
    assert view.tree == RECORD
    assert type(view.tree["big"]) is int  # 2^53 + 1 stays exact


def test_smile_shared_string_values_and_7_bit_binary(produced):
    tree = formats.detect(produced["smile_jackson_shared_values"])[1]
    assert tree == dict(RECORD, raw=b"\x00\x01\x02\xff\x7f\x80")


def test_msgpack_java_packer_integer_keys_and_timestamp(produced):
    tree = formats.detect(produced["msgpack_java_packer"])[1]
    assert tree == {1: "one", 2: [-1, 0.5],
                    "at": datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.timezone.utc)}
    shown = BlobDisplay(DisplaySettings(), False, False)(produced["msgpack_java_packer"],
                                                          formatting.empty_colormap).strval
    # Integer keys are quoted as JSON writes them, whether the record needs our own walk (here:
    # the timestamp) or not.
    assert shown == '[msgpack] {"1":"one","2":[-1,0.5],"at":"2023-11-14T22:13:20.123000+00:00"}'


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_avro_data_file_writer(produced, codec):
    tree = formats.detect(produced[f"avro_file_{codec}"])[1]
    assert tree == {"schema": "Order", "records": [ORDER, ORDER]}


def test_avro_binary_message_encoder_with_its_schema(produced, tmp_path: Path):
    # The fingerprint Avro's Java encoder wrote must be the one cqlsh-ext computes for the file.
    avsc = tmp_path / "order.avsc"
    avsc.write_bytes(produced["order.avsc"])
    view = unwrap_spec(produced["avro_single_object"], f"avro:{avsc}", 1 << 20)
    assert view.reason is None and view.tree == ORDER
    assert [layer.label for layer in view.layers] == ["avro/single-object"]


def test_protobuf_java_with_its_descriptor_set(produced, tmp_path: Path):
    desc = tmp_path / "orders.desc"
    desc.write_bytes(produced["orders.desc"])
    view = unwrap_spec(produced["protobuf_java"], f"protobuf:acme.Order@{desc}", 1 << 20)
    assert view.tree == {"id": 1099511627776, "customer": "Ada", "items": [{"sku": "SKU-1", "qty": 2}],
                         "status": "PAID"}
    # Schema-less, as protoc --decode_raw would show it.
    assert formats.decode_named("protobuf", produced["protobuf_java"])["2"] == "Ada"


def test_mutated_values_of_every_format_never_raise(produced):
    # Bytes changed or cut in the Java services' records and the JDK's streams: the table, JSON
    # and CSV output each show something (decoded, or hex with a reason) and never raise.
    import random

    from java_producers import java_serialized_objects

    from cqlsh_ext.output.spellings import CsvSpelling

    seeds = {name: data for name, data in produced.items() if "." not in name}
    seeds.update(java_serialized_objects())
    table = BlobDisplay(DisplaySettings(), False, False)
    encoder = CsvSpelling(DisplaySettings())
    rng = random.Random(11)
    for name, data in seeds.items():
        for _ in range(60):
            mutated = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
            if rng.random() < 0.3:
                mutated = mutated[: rng.randrange(1, len(mutated))]
            value = bytes(mutated)
            assert table(value, formatting.empty_colormap).strval, name
            encoder.value(value)
