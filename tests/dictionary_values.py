"""Dictionaries made by the producers' own libraries (python-zstandard's trainer, zlib's zdict) in
files, and values written with them: for tests/dictionaries and the native core's differential tests."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import zstandard


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
    return Made(zstd_file, zlib_file, trained.dict_id(), zlib.adler32(preset), docs,
                [cctx.compress(d) for d in docs], zlib_values)
