"""Write the fuzz seed corpus (tests/fuzzing/corpus) with the real producer libraries.

    .venv/bin/python tests/fuzzing/make_corpus.py

Run by hand when a codec or format is added (the corpus is committed; the tests never write it).
Small values only: a few KB per target. Python producers: python-snappy/cramjam, lz4, zstandard,
gzip/zlib, bz2, lzma, brotli, msgpack, cbor2, pymongo's bson, fastavro, pickle, protobuf. Java
producers (JDK ObjectOutputStream; snappy-java, lz4-java, zstd-jni; Jackson Smile/CBOR,
msgpack-java, Avro, protobuf-java) come from tests/java_producers.py: they need a JDK (and Maven
for the record formats); without them those seeds are left as they are.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import pickle
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
for extra in (TESTS, TESTS / "codecs", TESTS.parent / "tools"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

CORPUS = HERE / "corpus"

#: A small record as services store them, and its JSON text.
RECORD = {"id": 42, "name": "Ada", "tags": ["a", "b"], "price": 19.99, "ok": True, "note": None,
          "items": [{"sku": "x-1", "qty": 2}, {"sku": "y-2", "qty": 1}]}
JSON = json.dumps(RECORD).encode()
TEXT = b"The quick brown fox jumps over the lazy dog. " * 3


def _write(folder: str, name: str, data: bytes) -> None:
    path = CORPUS / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def codecs() -> None:
    import codec_producers as cp

    wanted = {  # producer name in codec_producers.PRODUCERS -> file name
        "snappy.compress": "raw", "snappy.stream_compress": "framed", "snappy hadoop": "hadoop",
        "snappy xerial": "xerial", "lz4.frame.compress": "frame", "lz4.frame checksums": "frame-checksums",
        "lz4 legacy": "legacy", "lz4 LZ4Block": "LZ4Block", "lz4.block.compress": "block",
        "lz4 BE prefix": "block-be", "lz4 hadoop": "hadoop", "lz4 no size": "block-nosize",
        "zstandard": "frame", "zstandard checksum": "frame-checksum", "gzip": "gzip", "zlib": "zlib",
        "raw deflate": "raw", "bz2": "bzip2", "lzma xz": "xz", "lzma alone": "lzma", "brotli": "brotli",
    }
    for name, produce, _label, codec, _auto in cp.PRODUCERS:
        if name in wanted:
            _write(f"codec/{codec}", f"{wanted[name]}-json.bin", produce(JSON))
            if codec in ("snappy", "lz4", "zstd", "gzip"):
                _write(f"codec/{codec}", f"{wanted[name]}-text.bin", produce(TEXT))
    import gzip
    import zlib

    import zstandard

    # Nested layers and a skippable frame, as some services write them.
    _write("codec/gzip", "gzip-in-gzip.bin", gzip.compress(gzip.compress(JSON)))
    _write("codec/zlib", "zlib-of-gzip.bin", zlib.compress(gzip.compress(TEXT)))
    _write("codec/zstd", "skippable-then-frame.bin",
           cp.skippable() + zstandard.ZstdCompressor().compress(JSON))
    _write("codec/zstd", "frame-nosize.bin", cp.zstd_nosize(JSON))
    _write("codec/gzip", "gzip-empty.bin", gzip.compress(b""))


def payloads() -> None:
    import bson
    import cbor2
    import fastavro
    import msgpack

    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    record = dict(RECORD, blob=b"\x00\x01\xff", big=2**70, when=when)
    plain = dict(RECORD)
    _write("payload/msgpack", "record.bin", msgpack.packb(dict(plain, blob=b"\x00\x01")))
    _write("payload/msgpack", "int-keys.bin", msgpack.packb({1: "a", 2: [1, 2, {"x": None}]}))
    _write("payload/msgpack", "timestamp.bin", msgpack.packb([msgpack.Timestamp(1700000000, 5), "t"]))
    _write("payload/cbor", "record.bin", cbor2.dumps(record))
    _write("payload/cbor", "self-described.bin", cbor2.dumps(cbor2.CBORTag(55799, plain)))
    _write("payload/cbor", "shared.bin", cbor2.dumps([["s"] * 2, decimal.Decimal("1.5")], value_sharing=True,
                                                     string_referencing=True))
    _write("payload/bson", "record.bin", bson.encode(dict(
        plain, blob=b"\x00\x01", oid=bson.ObjectId(b"0" * 12), dec=bson.Decimal128("1.25"))))
    schema = fastavro.parse_schema({"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "price", "type": "double"}, {"name": "extra", "type": ["null", "bytes"]}]})
    rows = [{"id": 42, "name": "Ada", "tags": ["a", "b"], "price": 19.99, "extra": b"\x01"}]
    for codec in ("null", "deflate", "snappy"):
        out = io.BytesIO()
        fastavro.writer(out, schema, rows, codec=codec, sync_marker=b"\x01" * 16)
        _write("payload/avro", f"file-{codec}.bin", out.getvalue())
    for protocol in (2, 4, 5):
        _write("payload/pickle", f"record-p{protocol}.bin", pickle.dumps(record, protocol=protocol))
    shared = ["x"]
    _write("payload/pickle", "shared-and-tuple.bin",
           pickle.dumps({"a": shared, "b": shared, "t": (1, 2), "s": {3}, "f": frozenset({4})}, protocol=4))
    _write("payload/pickle", "reduce.bin", pickle.dumps(datetime.date(2024, 1, 2), protocol=4))
    import tempfile

    from protobuf_producer import order_descriptor_set

    with tempfile.TemporaryDirectory() as tmp:
        _, order = order_descriptor_set(Path(tmp))
        message = order(id=7, customer="c-1", status=1)
        message.items.add(sku="x", qty=2)
        message.counts["a"] = 1
        _write("payload/protobuf", "order.bin", message.SerializeToString())
    _write("text", "record.json", JSON)
    _write("text", "pretty.json", json.dumps(RECORD, indent=2).encode())
    _write("text", "text.txt", TEXT)
    _write("text", "utf16.txt", "héllo, wörld and more text".encode("utf-16"))


def thrift_and_hashed() -> None:
    """Thrift structs as thriftpy2 writes them from tests/payload/thrift/orders.thrift (binary and
    compact), and RFC 9842 dcz and dcb values (section 5's layout: the header, the dictionary's
    SHA-256, the stream) with a raw dictionary of the record's JSON."""
    import hashlib

    import thriftpy2
    import zstandard
    from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
    from thriftpy2.utils import serialize

    shop = thriftpy2.load(str(HERE.parent / "payload" / "thrift" / "orders.thrift"))
    order = shop.Order(id=42, customer="Ada", items=[shop.Item("x-1", 2, 19.99)], paid=True, status=2,
                       counts={"a": 1}, tags={"b"}, raw=b"\x00\x01", small=-3, flag=1)
    _write("payload/thrift", "order-binary.bin", serialize(order, TBinaryProtocolFactory()))
    _write("payload/thrift", "order-compact.bin", serialize(order, TCompactProtocolFactory()))
    _write("payload/thrift", "shipment-compact.bin",
           serialize(shop.Shipment("DHL", order), TCompactProtocolFactory()))
    raw = JSON * 4
    frame = zstandard.ZstdCompressor(write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).compress(JSON)
    header = bytes.fromhex("5e2a4d1820000000") + hashlib.sha256(raw).digest()
    _write("codec/dcz", "dcz-json.bin", header + frame)
    _write("codec/zstd", "raw-dictionary-frame.bin", frame)
    _write("codec/dcb", "dcb-header.bin",
           bytes.fromhex("ff444342") + hashlib.sha256(raw).digest() + b"\x0b\x03\x80a\x03")


def java() -> None:
    import java_producers

    java_seeds: list[tuple[str, Callable[[], dict[str, bytes]], dict[str, str]]] = [
        ("payload/java", java_producers.java_serialized_objects, {
            n: f"{n}.ser" for n in ("array_list", "hash_map_int_keys", "order", "versioned", "enum",
                                    "cyclic_list", "shared_list", "big_integer", "date", "uuid", "int_array",
                                    "tree_map", "gzip_order")}),
        ("payload", java_producers.java_record_formats, {
            "smile_jackson": "smile/jackson.bin", "smile_jackson_shared_values": "smile/jackson-shared.bin",
            "cbor_jackson_tagged": "cbor/jackson-tagged.bin",
            "msgpack_java_packer": "msgpack/java-packer.bin",
            "avro_single_object": "avro/single-object.bin", "avro_file_deflate": "avro/java-file-deflate.bin",
            "protobuf_java": "protobuf/java.bin"}),
    ]
    for folder, produce, names in java_seeds:
        try:
            written = produce()
        except Exception as err:  # no JDK or no Maven: keep the seeds already there
            print(f"{folder}: Java producers unavailable ({err}); kept as is", file=sys.stderr)
            continue
        for name, target in names.items():
            if name in written:
                _write(folder, target, written[name])
    try:
        from java_producers import java_produce

        produced = java_produce(JSON)
    except Exception as err:
        print(f"Java codec producers unavailable ({err}); kept as is", file=sys.stderr)
        return
    for name, folder in (("snappy_raw", "snappy"), ("snappy_framed", "snappy"), ("snappy_xerial", "snappy"),
                         ("lz4_frame", "lz4"), ("lz4_java_block", "lz4"), ("zstd", "zstd"),
                         ("gzip_java_string", "gzip")):
        if name in produced:
            _write(f"codec/{folder}", f"java-{name}.bin", produced[name])


def main() -> None:
    for folder in ("codec", "text"):
        shutil.rmtree(CORPUS / folder, ignore_errors=True)
    codecs()
    payloads()
    thrift_and_hashed()
    java()
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"{sum(1 for p in CORPUS.rglob('*') if p.is_file())} seeds, {total:,} bytes in {CORPUS}")


if __name__ == "__main__":
    main()
