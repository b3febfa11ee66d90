"""Avro: object container files (`Obj\\x01`, Java's DataFileWriter, fastavro.writer) carry their
schema in their own header, so they are read without being told anything. Single records need
the writer's schema, given in a column setting (`avro:order.avsc`); they come bare, in the
single-object encoding (`C3 01` + the schema's CRC-64-AVRO fingerprint, Java's
BinaryMessageEncoder), or in Confluent Schema Registry framing (`00` + a 4-byte schema id). Named
without a schema, those two say what they are and which schema they need.

fastavro alone would decompress a block without a limit and loop over items that take no bytes,
so the container is walked here: the header and each block's count and size are read from the
bytes, every block is decompressed through cqlsh-ext's capped codecs, and records are decoded one at
a time with fastavro's schemaless reader, up to a tenth of the value's node budget
(payload.budget); a schema with arrays or maps of items that encode to no bytes (null, empty
records) is refused.
"""

from __future__ import annotations

import functools
import io
import json
import os
import zlib
from typing import Any

from cqlsh_ext.payload import budget as value_budget
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import PayloadError, decimal_text, read_varint

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {
    "detection": 10,
    "listed": 50,
    "binary_kind": ("Avro object container", b"Obj\x01"),
    "argument": "avro:FILE.avsc names the writer's schema",
    "argument_help": "avro:FILE.avsc reads single records with that schema: bare, single-object encoded"
    " (C3 01 + fingerprint, checked) or in Confluent framing (00 + schema id).",
}

MAGIC = b"Obj\x01"
#: Records read per value: one for every this many nodes of the value's budget (10,000 at the
#: default); the rest are counted, not read. Decompressed block bytes share the budget's output cap.
NODES_PER_RECORD = 10
# Avro container spec codec names (its own data, so named here) -> the -d name whose codec the
# registry decodes the block with (registry.decode_named: capped, no codec module named here).
_CODECS = {"null": None, "deflate": "deflate", "snappy": "snappy", "zstandard": "zstd", "bzip2": "bzip2",
           "xz": "xz"}


def _long(data: bytes, pos: int) -> tuple[int, int]:
    """An Avro long: a zig-zag varint."""
    raw, pos = read_varint(data, pos, "avro")
    return (raw >> 1) ^ -(raw & 1), pos


def _bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = _long(data, pos)
    if size < 0 or pos + size > len(data):  # checked before anything is read
        raise PayloadError("avro: a length beyond the value")
    return data[pos:pos + size], pos + size


def _header(data: bytes) -> tuple[dict[str, bytes], bytes, int]:
    pos = len(MAGIC)
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _long(data, pos)
        if count == 0:
            break
        if count < 0:  # a block with its byte size after the count
            count = -count
            _, pos = _long(data, pos)
        if count > 1000:
            raise PayloadError("avro: too many metadata entries")
        for _ in range(count):
            key, pos = _bytes(data, pos)
            value, pos = _bytes(data, pos)
            meta[key.decode("utf-8", "replace")] = value
    sync = data[pos:pos + 16]
    if len(sync) != 16:
        raise PayloadError("avro: header cut short")
    return meta, sync, pos + 16


def _zero_size(schema: Any, named: dict[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """Whether a value of `schema` may encode to no bytes at all."""
    if isinstance(schema, str):
        if schema == "null":
            return True
        if schema in named and schema not in seen:
            return _zero_size(named[schema], named, seen | {schema})
        return False
    if isinstance(schema, list):  # a union writes its branch index: at least one byte
        return False
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record":
            return all(_zero_size(f.get("type"), named, seen) for f in schema.get("fields", []))
        if kind == "fixed":
            return int(schema.get("size", 1)) == 0
        if isinstance(kind, (str, list, dict)) and kind not in ("array", "map", "enum"):
            return _zero_size(kind, named, seen)
    return False


def _check_collections(schema: Any, named: dict[str, Any]) -> None:
    def walk(node: Any, depth: int) -> None:
        if depth > 64:
            raise PayloadError("avro: schema nested too deep")
        if isinstance(node, list):
            for item in node:
                walk(item, depth + 1)
        elif isinstance(node, dict):
            if "name" in node and node.get("type") in ("record", "enum", "fixed"):
                named[node["name"]] = node
            kind = node.get("type")
            if kind in ("array", "map"):
                items = node.get("items" if kind == "array" else "values")
                if _zero_size(items, named):
                    raise PayloadError(f"avro: an {kind} of items that take no bytes (not read)")
                walk(items, depth + 1)
            for field in node.get("fields", []):
                walk(field.get("type"), depth + 1)
            if isinstance(kind, (list, dict)):
                walk(kind, depth + 1)

    walk(schema, 0)


def _read_decimal(data: Any, writer_schema: dict[Any, Any] | None, reader_schema: Any) -> str:
    """A `decimal` (bytes or fixed: the unscaled two's-complement integer) exactly, as text.
    fastavro's own reader builds a decimal.Decimal, in time quadratic in the digits (300 KB of
    them take 24 s), and rounds it to the schema's precision."""
    scale = (writer_schema or {}).get("scale", 0)
    return decimal_text(int.from_bytes(data, "big", signed=True), -scale if type(scale) is int else 0)


@functools.cache
def _fastavro() -> Any:
    """fastavro, reading decimals with _read_decimal (its documented way to read a logical type:
    fastavro.read.LOGICAL_READERS; nothing else in the process reads Avro)."""
    import fastavro
    from fastavro.read import LOGICAL_READERS

    LOGICAL_READERS["bytes-decimal"] = _read_decimal
    LOGICAL_READERS["fixed-decimal"] = _read_decimal
    return fastavro


def decode(data: bytes) -> Any:
    if not data.startswith(MAGIC):
        raise PayloadError("avro: no Obj\\x01 header")
    fastavro = _fastavro()

    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import DecodeError

    meta, sync, pos = _header(data)
    try:
        schema = json.loads(meta.get("avro.schema", b"").decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise PayloadError("avro: no readable schema in the header") from None
    codec_name = meta.get("avro.codec", b"null").decode("ascii", "replace")
    if codec_name not in _CODECS:
        raise PayloadError(f"avro: block codec {codec_name!r} not supported")
    _check_collections(schema, {})
    try:
        parsed = fastavro.parse_schema(schema)
    except Exception as err:  # fastavro raises several types for a bad schema
        raise PayloadError(f"avro: schema not usable ({type(err).__name__})") from None
    records: list[Any] = []
    total = 0
    limits = value_budget.current()
    budget = limits.chars
    max_records = max(limits.nodes // NODES_PER_RECORD, 1)
    while pos < len(data):
        count, pos = _long(data, pos)
        block, pos = _bytes(data, pos)
        if data[pos:pos + 16] != sync:
            raise PayloadError("avro: block not followed by the file's sync marker")
        pos += 16
        codec = _CODECS[codec_name]
        if codec is not None and budget <= 0:  # zlib reads a max_length of 0 as no limit
            raise PayloadError("avro: blocks larger than the output cap")
        if codec == "deflate":
            # Raw deflate; fastavro's writer leaves three bytes of zlib's checksum after it, which
            # the strict raw-deflate codec of the display rejects, so it is inflated here, capped.
            inflater = zlib.decompressobj(-15)
            try:
                block = inflater.decompress(block, budget)
            except zlib.error as err:
                raise PayloadError(f"avro: block: deflate: {err}") from None
            if not inflater.eof:
                raise PayloadError("avro: blocks larger than the output cap, or cut short")
            budget -= len(block)
        elif codec is not None:
            raw = block[:-4] if codec == "snappy" else block  # Avro's snappy blocks end with a CRC-32
            try:
                decoded = registry.decode_named(codec, raw, budget)
            except DecodeError as err:
                raise PayloadError(f"avro: block: {err}") from None
            if decoded[1].truncated:
                raise PayloadError("avro: blocks larger than the output cap")
            block = decoded[1].data
            budget -= len(block)
        stream = io.BytesIO(block)
        # A block's count is read from the data: only what is shown is iterated, the rest added.
        reading = min(max(count, 0), max_records - len(records))
        for _ in range(reading):
            total += 1
            try:
                records.append(fastavro.schemaless_reader(stream, parsed, None))
            except Exception as err:  # EOFError, ValueError, ... from a corrupt block
                raise PayloadError(f"avro: record {total}: {type(err).__name__}") from None
        total += max(count, 0) - reading
    if total > len(records):
        records.append(f"… {total - len(records)} more records")
    return {"schema": schema.get("name", schema.get("type")) if isinstance(schema, dict) else schema,
            "records": records}


SINGLE_OBJECT = b"\xc3\x01"


def _framing(data: bytes) -> str | None:
    """What a single record's framing says, when it has one."""
    if data.startswith(SINGLE_OBJECT) and len(data) >= 10:
        return f"single-object encoding, schema fingerprint {data[2:10].hex()}"
    if data[:1] == b"\x00" and len(data) >= 5:
        return f"Confluent Schema Registry framing, schema id {int.from_bytes(data[1:5], 'big')}"
    return None


def decode_without_schema(data: bytes) -> Any:
    """`avro` named without a schema: container files; single records say what they need."""
    if not data.startswith(MAGIC):
        framing = _framing(data)
        if framing is not None:
            raise PayloadError(f"avro {framing}: name its schema (avro:FILE.avsc)")
    return decode(data)


@functools.lru_cache(maxsize=32)
def _schema_file(path: str) -> tuple[Any, Any, bytes, str]:
    """(schema, parsed, fingerprint, name) of an .avsc file; PayloadError when unusable."""
    import fastavro
    from fastavro.schema import fingerprint, to_parsing_canonical_form

    try:
        with open(path, "rb") as file:
            schema = json.loads(file.read(1 << 20))
    except (OSError, ValueError) as err:
        raise PayloadError(f"avro: schema {path}: {err}") from None
    _check_collections(schema, {})
    try:
        parsed = fastavro.parse_schema(schema)
        print_ = bytes.fromhex(fingerprint(to_parsing_canonical_form(parsed), "CRC-64-AVRO"))
    except Exception as err:  # fastavro raises several types for a bad schema
        raise PayloadError(f"avro: schema {path} not usable ({type(err).__name__})") from None
    name = schema.get("name", schema.get("type")) if isinstance(schema, dict) else str(schema)
    return schema, parsed, print_, str(name)


def decode_with_schema(data: bytes, path: str) -> Any:
    """One record written with the schema in `path`: bare, single-object or Confluent-framed."""
    if data.startswith(MAGIC):
        return decode(data)
    _, parsed, print_, name = _schema_file(path)
    if data.startswith(SINGLE_OBJECT) and len(data) >= 10:
        if data[2:10] != print_:
            raise PayloadError(f"avro: single-object fingerprint {data[2:10].hex()} is not "
                               f"{os.path.basename(path)}'s ({print_.hex()})")
        return _record(data[10:], parsed, name)
    if data[:1] == b"\x00" and len(data) >= 5:
        # Confluent framing, or a bare record that starts with a zero: the registry id cannot be
        # checked against a file, so the framing is taken when the rest is exactly one record.
        try:
            return _record(data[5:], parsed, name)
        except PayloadError:
            pass
    return _record(data, parsed, name)


def _record(datum: bytes, parsed: Any, name: str) -> Any:
    fastavro = _fastavro()

    stream = io.BytesIO(datum)
    try:
        record = fastavro.schemaless_reader(stream, parsed, None)
    except Exception as err:  # EOFError, ValueError, ... from bytes the schema does not fit
        raise PayloadError(f"avro: not a {name} record ({type(err).__name__})") from None
    left = len(datum) - stream.tell()
    if left:
        raise PayloadError(f"avro: {left} bytes left after one {name} record: another schema?")
    return record


def _label(data: bytes) -> str:
    return "avro/single-object" if data.startswith(SINGLE_OBJECT) else "avro"


def encode_with_schema(record: Any, path: str) -> bytes:
    """One bare record, as fastavro's schemaless_writer writes it with the schema in `path`."""
    import fastavro

    _, parsed, _, name = _schema_file(path)
    out = io.BytesIO()
    try:
        fastavro.schemaless_writer(out, parsed, record)
    except Exception as err:  # fastavro raises several types for a record the schema refuses
        raise PayloadError(f"avro: not a {name} record ({type(err).__name__}: {err})") from None
    return out.getvalue()


FORMAT = PayloadFormat("avro", True, lambda data: data.startswith(MAGIC), decode_without_schema,
                       leads=MAGIC[:1],
                       labeller=_label, detector=decode, decode_with=decode_with_schema,
                       encode_with=encode_with_schema, writer="fastavro schemaless_writer (one bare record)",
                       unwritable="written with its schema only: avro:FILE.avsc",
                       confidence="confident",
                       confidence_why="the Obj\\x01 header, its schema and every block's sync marker")
