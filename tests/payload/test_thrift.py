"""Thrift structs in blobs, written by the real producers (thriftpy2 from the IDL in
tests/payload/thrift/orders.thrift, and Apache Thrift's own protocol writers), read without the
IDL by field id and with it by name; false-positive sweeps; values that lie about their sizes and
depths."""

from __future__ import annotations

import gzip
import random
import struct
from pathlib import Path

import pytest
import thriftpy2
import zstandard
from cqlshlib import formatting
from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.Thrift import TType
from thrift.transport import TTransport
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory, TCyBinaryProtocolFactory
from thriftpy2.utils import serialize

from cqlsh_ext.demo.records import documents
from cqlsh_ext.output.display import BlobDisplay
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.formats import thrift
from cqlsh_ext.payload.formats.tree import PayloadError, jsonable
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec
from cqlsh_ext.settings import DisplaySettings

IDL = Path(__file__).resolve().parent / "thrift" / "orders.thrift"
SHOP = thriftpy2.load(str(IDL))
CAP = 4 << 20

#: The order as thriftpy2 writes it, and what reading it by field id must give (written down by
#: hand from orders.thrift: ids as keys, i64 exact, the enum's number, a set as a list, binary as
#: bytes).
ORDER = SHOP.Order(id=2**40 + 7, customer="Ada Lovelace", items=[SHOP.Item("SKU-1", 2, 19.99)], paid=True,
                   status=SHOP.Status.PAID, counts={"views": 3}, tags={"gift"}, raw=b"\x00\xff", small=-3,
                   flag=-1)
BY_ID = {"1": 2**40 + 7, "2": "Ada Lovelace", "3": [{"1": "SKU-1", "2": 2, "3": 19.99}], "4": True, "5": 2,
         "6": {"views": 3}, "7": ["gift"], "8": b"\x00\xff", "9": -3, "10": -1}
BY_NAME = {"id": 2**40 + 7, "customer": "Ada Lovelace", "items": [{"sku": "SKU-1", "qty": 2, "price": 19.99}],
           "paid": True, "status": "PAID", "counts": {"views": 3}, "tags": ["gift"], "raw": b"\x00\xff",
           "small": -3, "flag": -1}
FACTORIES = {"binary": TBinaryProtocolFactory(), "compact": TCompactProtocolFactory(),
             "cybinary": TCyBinaryProtocolFactory()}


def cell(value: bytes, expanded: bool = False) -> str:
    return BlobDisplay(DisplaySettings(), False, expanded)(value, formatting.empty_colormap).strval


def apache(protocol: type, order_id: int, customer: str, tags: list[str]) -> bytes:
    """A struct written by Apache Thrift's own protocol writers, as its generated code calls them:
    {1: i64 id, 2: string customer, 3: list<string> tags, 4: struct {1: bool paid}}."""
    buffer = TTransport.TMemoryBuffer()
    out = protocol(buffer)
    out.writeStructBegin("Order")
    out.writeFieldBegin("id", TType.I64, 1)
    out.writeI64(order_id)
    out.writeFieldEnd()
    out.writeFieldBegin("customer", TType.STRING, 2)
    out.writeString(customer)
    out.writeFieldEnd()
    out.writeFieldBegin("tags", TType.LIST, 3)
    out.writeListBegin(TType.STRING, len(tags))
    for tag in tags:
        out.writeString(tag)
    out.writeListEnd()
    out.writeFieldEnd()
    out.writeFieldBegin("state", TType.STRUCT, 4)
    out.writeStructBegin("State")
    out.writeFieldBegin("paid", TType.BOOL, 1)
    out.writeBool(True)
    out.writeFieldEnd()
    out.writeFieldStop()
    out.writeStructEnd()
    out.writeFieldEnd()
    out.writeFieldStop()
    out.writeStructEnd()
    return buffer.getvalue()


APACHE = {"binary": TBinaryProtocol.TBinaryProtocol, "compact": TCompactProtocol.TCompactProtocol}


@pytest.mark.parametrize("factory", FACTORIES)
def test_thriftpy2_values_are_detected_and_read_by_field_id(factory):
    value = serialize(ORDER, FACTORIES[factory])
    found = formats.detect(value)
    assert found is not None and found[0].name == "thrift"
    assert found[1] == BY_ID
    label = "thrift/compact" if factory == "compact" else "thrift/binary"
    shown = unwrap(value, "auto", CAP)
    assert (shown.kind, shown.label) == ("record", label)
    assert cell(value) == (f'[{label}] {{"1":1099511627783,"2":"Ada Lovelace",'
                           '"3":[{"1":"SKU-1","2":2,"3":19.99}],'
                           '"4":true,"5":2,"6":{"views":3},"7":["gift"],"8":0x00ff,"9":-3,"10":-1}')


@pytest.mark.parametrize("protocol", APACHE)
def test_apache_thrift_values_are_detected_and_read(protocol):
    value = apache(APACHE[protocol], -5, "Grace Hopper", ["a", "b"])
    shown = unwrap(value, "auto", CAP)
    assert shown.label == f"thrift/{protocol}"
    assert shown.record == {"1": -5, "2": "Grace Hopper", "3": ["a", "b"], "4": {"1": True}}


@pytest.mark.parametrize("factory", FACTORIES)
def test_the_idl_names_fields_and_enum_values(factory):
    value = serialize(ORDER, FACTORIES[factory])
    shown = unwrap_spec(value, f"thrift:Order@{IDL}", CAP)
    assert shown.kind == "record" and shown.record == BY_NAME
    assert jsonable(shown.record)["raw"] == "0x00ff"
    shipment = serialize(SHOP.Shipment("DHL", ORDER), FACTORIES[factory])
    assert unwrap_spec(shipment, f"thrift:Shipment@{IDL}", CAP).record == {"carrier": "DHL", "order": BY_NAME}


def test_inside_compression_and_under_a_setting_with_a_codec():
    value = serialize(ORDER, TCompactProtocolFactory())
    packed = zstandard.ZstdCompressor().compress(value)
    assert unwrap(packed, "auto", CAP).label == "zstd>thrift/compact"
    assert unwrap(gzip.compress(value, mtime=0), "auto", CAP).record == BY_ID
    assert unwrap_spec(packed, f"zstd>thrift:Order@{IDL}", CAP).record == BY_NAME


def test_a_struct_the_idl_does_not_declare_lists_the_unknown_ids():
    value = apache(TCompactProtocol.TCompactProtocol, 9, "x" * 12, [])
    # Order's field 3 is list<Item> and 4 a bool: the wire's list<string> and struct are not them.
    shown = unwrap_spec(value, f"thrift:Order@{IDL}", CAP)
    assert shown.record == {"id": 9, "customer": "x" * 12, "$unknown fields": [4], "items": []}


def test_a_missing_struct_or_a_broken_idl_says_which(tmp_path):
    value = serialize(ORDER, TBinaryProtocolFactory())
    shown = unwrap_spec(value, f"thrift:Invoice@{IDL}", CAP)
    assert shown.kind == "failed"
    assert shown.reason == (f"as thrift:Invoice@{IDL}: thrift: no struct 'Invoice' in orders.thrift "
                            "(it has Item, Order, Shipment)")
    broken = tmp_path / "broken.thrift"
    broken.write_text("struct X { 1: strng name }\n")
    reason = unwrap_spec(value, f"thrift:X@{broken}", CAP).reason
    assert reason.startswith(f"as thrift:X@{broken}: thrift: IDL broken.thrift: ") and "strng" in reason


def test_named_without_the_idl_a_value_that_is_not_thrift_says_why():
    assert unwrap_spec(b'{"a": 1}', "thrift", CAP).reason.startswith("as thrift: thrift: ")
    assert unwrap_spec(serialize(ORDER, TBinaryProtocolFactory())[:-1], "thrift", CAP).kind == "failed"


# ------------------------------------------------------------------ false positives


def test_random_and_text_values_are_not_thrift():
    rng = random.Random(75)
    values = [rng.randbytes(rng.randint(8, 64)) for _ in range(20_000)]
    values += [rng.randbytes(rng.randint(8, 32)) + b"\x00" for _ in range(20_000)]  # a STOP byte last
    values += [doc[: rng.randint(8, 2000)].encode() + b"\x00" for doc in documents(2000, seed=3)]
    hits = []
    for value in values:
        try:
            thrift.detect(value)
        except PayloadError:
            continue
        hits.append(value[:16].hex())
    assert hits == []


@pytest.mark.sweep
def test_each_producers_struct_is_detected_as_thrift_only():
    rng = random.Random(12)
    for n, doc in enumerate(documents(4000, seed=12)):
        order = SHOP.Order(id=rng.randint(-(2**63), 2**63 - 1), customer=doc[: rng.randint(1, 80)],
                           items=[SHOP.Item(f"SKU-{k}", k, rng.random()) for k in range(n % 4)],
                           paid=bool(n % 2), status=n % 3 + 1, tags={doc[:3]} if n % 5 else set())
        for factory in FACTORIES.values():
            found = formats.detect(serialize(order, factory))
            assert found is not None and found[0].name == "thrift", (n, factory)


# ------------------------------------------------------------------ hostile values


def _binary_field(kind: int, fid: int, payload: bytes) -> bytes:
    return struct.pack(">bh", kind, fid) + payload


HOSTILE = {
    # a list claiming 2^31 - 1 strings in a 20-byte value
    "list count": _binary_field(15, 1, b"\x0b" + struct.pack(">i", 2**31 - 1)) + b"\x00" * 12,
    # a string claiming 2 GiB
    "string length": _binary_field(11, 1, struct.pack(">i", 2**31 - 1)) + b"abc\x00",
    # a negative map size
    "map size": _binary_field(13, 1, b"\x0b\x0b" + struct.pack(">i", -1)) + b"\x00\x00",
    # structs nested 100,000 deep (binary), then as many STOPs
    "depth binary": _binary_field(12, 1, b"") + _binary_field(12, 1, b"") * 99_999 + b"\x00" * 100_001,
    # compact: a field of struct type nested 100,000 deep
    "depth compact": b"\x1c" * 100_000 + b"\x00" * 100_001,
    # compact: a list header claiming 2^32 items by its varint
    "compact list varint": b"\x19\xf8\xff\xff\xff\xff\x0f" + b"\x00" * 8,
    # compact: a varint that never ends
    "endless varint": b"\x16" + b"\xff" * 40 + b"\x00",
    # a field id twice
    "field twice": _binary_field(8, 1, b"\x00\x00\x00\x01") * 2 + b"\x00",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_values_fail_fast_with_a_reason(name):
    value = HOSTILE[name]
    with pytest.raises(PayloadError) as err:
        formats.decode_named("thrift", value)
    assert str(err.value).startswith("thrift: ")
    assert cell(value).startswith("0x")  # the display keeps the hex, never crashes


def test_a_struct_of_many_fields_is_cut_by_the_node_budget():
    # A list of 150,000 bools, one byte each (compact): past 100,000 nodes.
    wide = b"\x19\xf1" + bytes([0xF0 | 0x80, 0x93, 0x09]) + b"\x01" * 150_000 + b"\x00"
    shown = unwrap_spec(wide, "thrift", CAP)
    assert shown.kind == "failed" and "over 100,000 nodes" in shown.reason
