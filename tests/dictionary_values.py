"""Dictionaries made by the producers' own libraries (python-zstandard's trainer, zlib's zdict) in
files, and values written with them: for tests/dictionaries and the native core's differential tests,
and the raw dictionary loaded for the tests that write every container encode() writes (tests/edit,
tests/rewrite: dcz is written only with one).
Besides, a raw-content dictionary (any bytes: here fifty of the documents) and values
python-zstandard writes with it (`DICT_TYPE_RAWCONTENT`, no dictionary ID in the frame), bare and as
RFC 9842 `dcz` values (section 5's layout built here: the 8-byte skippable frame header, the
dictionary's SHA-256, then the frame)."""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import zstandard

from cqlsh_ext.codecs import dictionaries
from cqlsh_ext.codecs.capabilities import Writer, writes_dictionaries


def documents(count: int = 200) -> list[bytes]:
    return [json.dumps({"orderId": f"ORD-{n:06d}", "status": ("NEW", "PAID", "SHIPPED")[n % 3],
                        "customer": {"id": n * 7, "tier": "gold" if n % 5 == 0 else "basic"},
                        "items": [{"sku": f"SKU-{n % 13}", "qty": n % 4 + 1}]},
                       separators=(",", ":")).encode() for n in range(count)]


@dataclass
class Made:
    """A trained zstd dictionary and a zlib preset dictionary in files, and values written with them."""

    zstd_file: Path
    zlib_file: Path
    zstd_id: int
    zlib_id: int
    docs: list[bytes]
    zstd_values: list[bytes]
    zlib_values: list[bytes]
    raw_file: Path
    raw_values: list[bytes]
    dcz_values: list[bytes]


def raw_dictionary(docs: list[bytes] | None = None) -> bytes:
    """The raw-content dictionary: fifty of the documents."""
    return b"\n".join((docs or documents())[150:200])


def make(directory: Path) -> Made:
    docs = documents()
    trained = zstandard.train_dictionary(2048, docs)
    preset = b"".join(docs[:8])[:512]
    cctx = zstandard.ZstdCompressor(level=3, dict_data=trained)
    zlib_values = []
    for doc in docs:
        obj = zlib.compressobj(zdict=preset)
        zlib_values.append(obj.compress(doc) + obj.flush())
    zstd_file, zlib_file = directory / "orders.zstd-dict", directory / "orders.zlib-dict"
    zstd_file.write_bytes(trained.as_bytes())
    zlib_file.write_bytes(preset)
    raw = raw_dictionary(docs)
    raw_file = directory / "orders.raw-dict"
    raw_file.write_bytes(raw)
    rctx = zstandard.ZstdCompressor(level=3, write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT))
    raw_values = [rctx.compress(d) for d in docs]
    dcz_values = [dcz(raw, v) for v in raw_values]
    return Made(zstd_file, zlib_file, trained.dict_id(), zlib.adler32(preset), docs,
                [cctx.compress(d) for d in docs], zlib_values, raw_file, raw_values, dcz_values)


#: RFC 9842 section 5: a dcz value's first 8 bytes (a zstd skippable frame holding 32 bytes).
DCZ_HEADER = bytes([0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00])


def dcz(dictionary: bytes, frame: bytes) -> bytes:
    """A dcz value: the header, the SHA-256 of the dictionary, the zstd frame made with it."""
    return DCZ_HEADER + hashlib.sha256(dictionary).digest() + frame


def read_dcz(dictionary: bytes, value: bytes) -> bytes:
    """What a dcz reader does (RFC 9842 section 5): the header names the dictionary by its
    SHA-256, whose bytes are the frame's raw-content dictionary."""
    assert value[:8] == DCZ_HEADER and value[8:40] == hashlib.sha256(dictionary).digest(), value[:40].hex()
    return zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
        dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).decompress(value[40:])


def readers_with(dictionary: bytes) -> dict[str, Callable[[bytes], bytes]]:
    """The producer's reader of each container encode() writes only with a dictionary (a Writer's
    needs_dictionary), reading with `dictionary`."""
    return {"dcz": partial(read_dcz, dictionary)}


def spec_for(fmt: Writer, dictionary: bytes) -> str:
    """The encode() spec that writes container `fmt`: its label, naming `dictionary` (`:dict=`
    its SHA-256) when the container is written only with one of the store."""
    if not fmt.needs_dictionary:
        return fmt.label
    # The only kind such a container takes so far: one named by its hash (any bytes).
    assert writes_dictionaries(fmt) and fmt.dictionary_kind == dictionaries.SHA256, fmt.label
    return f"{fmt.label}:dict={hashlib.sha256(dictionary).hexdigest()}"


@contextmanager
def raw_dictionary_loaded(directory: Path) -> Iterator[bytes]:
    """The raw dictionary in a file given to the process's store, as `--dictionary FILE` gives it;
    the store as it was afterwards."""
    path = directory / "orders.raw-dict"
    path.write_bytes(raw_dictionary())
    before = dictionaries.STORE
    dictionaries.load([str(path)])
    try:
        yield path.read_bytes()
    finally:
        dictionaries.install(before)
