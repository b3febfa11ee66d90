"""What the native core mirrors of the Python engine: the functions and methods whose code it
repeats in Rust (native/src), and the libraries whose behaviour it repeats (the same C library,
or the same Rust crate, at the same release). Their fingerprint is written in
native/mirrored.sha256, the sources' fingerprint the mirror was last checked against: a change on
either side without the other fails tests/native/test_mirror.py.

    .venv/bin/python tests/native/mirror.py        prints the current fingerprint
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "native" / "mirrored.sha256"

#: (module, attribute path) of every piece of Python code the Rust mirror repeats.
MIRRORED: tuple[tuple[str, str], ...] = (
    # the walk of a value (native/src/engine.rs)
    ("cqlsh_ext.payload.unwrap", "_unwrap"),
    ("cqlsh_ext.payload.unwrap", "read_payload"),
    ("cqlsh_ext.payload.unwrap", "_walk"),
    ("cqlsh_ext.payload.unwrap", "outer_layer"),
    ("cqlsh_ext.payload.unwrap", "uncontained"),
    ("cqlsh_ext.payload.unwrap", "contained"),
    ("cqlsh_ext.payload.unwrap", "_payload"),
    ("cqlsh_ext.payload.unwrap", "_text_or_binary"),
    ("cqlsh_ext.payload.unwrap", "_structured"),
    ("cqlsh_ext.payload.unwrap", "_read_as_text"),
    ("cqlsh_ext.payload.unwrap", "_read_as_structured"),
    ("cqlsh_ext.codecs.registry", "decode_auto"),
    ("cqlsh_ext.codecs.registry", "detect"),
    ("cqlsh_ext.codecs.registry", "_clip"),
    ("cqlsh_ext.payload.budget", "Budget.for_cap"),
    # the text rules and JSON (text.rs, json.rs)
    ("cqlsh_ext.payload.unwrap", "stored_text"),
    ("cqlsh_ext.payload.unwrap", "as_text"),
    ("cqlsh_ext.payload.json_text", "json_container"),
    ("cqlsh_ext.payload.json_text", "_exact_orjson"),
    ("cqlsh_ext.payload.json_text", "_nesting_above"),
    # containers (common.rs, snappy.rs, lz4.rs, zstd.rs, deflate.rs, formats.rs)
    ("cqlsh_ext.codecs._common", "skip_skippable"),
    ("cqlsh_ext.codecs._common", "frame_sequence"),
    ("cqlsh_ext.codecs._common", "hadoop_decode"),
    ("cqlsh_ext.codecs._common", "capped_step"),
    ("cqlsh_ext.codecs._common", "HadoopStream.matches"),
    ("cqlsh_ext.codecs._common", "HadoopStream.ruled_out"),
    ("cqlsh_ext.codecs._common", "HadoopStream.trial"),
    ("cqlsh_ext.codecs.base", "Container.trial"),
    ("cqlsh_ext.codecs.base", "Container.matches"),
    ("cqlsh_ext.codecs.snappy._raw", "_bound"),
    ("cqlsh_ext.codecs.snappy._raw", "_varint"),
    ("cqlsh_ext.codecs.snappy._raw", "_tag_step"),
    ("cqlsh_ext.codecs.snappy._raw", "_encoder_like"),
    ("cqlsh_ext.codecs.snappy._raw", "_uvarint_bytes"),
    ("cqlsh_ext.codecs.snappy._raw", "_prefix"),
    ("cqlsh_ext.codecs.snappy._raw", "raw_capped"),
    ("cqlsh_ext.codecs.snappy._raw", "SnappyRaw.decode"),
    ("cqlsh_ext.codecs.snappy._raw", "SnappyRaw.ruled_out"),
    ("cqlsh_ext.codecs.snappy._raw", "SnappyRaw.trial"),
    ("cqlsh_ext.codecs.snappy.framed", "_chunks"),
    ("cqlsh_ext.codecs.snappy.framed", "_check_chunks"),
    ("cqlsh_ext.codecs.snappy.framed", "_chunk_output"),
    ("cqlsh_ext.codecs.snappy.framed", "SnappyFramed.decode"),
    ("cqlsh_ext.codecs.snappy.framed", "S2Framed.decode"),
    ("cqlsh_ext.codecs.snappy.streams", "SnappyXerial.matches"),
    ("cqlsh_ext.codecs.snappy.streams", "SnappyXerial.decode"),
    ("cqlsh_ext.codecs.snappy.streams", "_hadoop_chunk"),
    ("cqlsh_ext.codecs.snappy.streams", "SnappyHadoop.raw_bound"),
    ("cqlsh_ext.codecs.lz4._native", "_abandon"),
    ("cqlsh_ext.codecs.lz4._native", "_capped_block"),
    ("cqlsh_ext.codecs.lz4._native", "_sized_block"),
    ("cqlsh_ext.codecs.lz4.block", "Lz4JavaBlock.decode"),
    ("cqlsh_ext.codecs.lz4.block", "_Lz4Sized"),
    ("cqlsh_ext.codecs.lz4.block", "Lz4SizedLE.early"),
    ("cqlsh_ext.codecs.lz4.block", "Lz4SizedLE.whole"),
    ("cqlsh_ext.codecs.lz4.block", "_hadoop_chunk"),
    ("cqlsh_ext.codecs.lz4.frame", "_frame_header"),
    ("cqlsh_ext.codecs.lz4.frame", "_legacy"),
    ("cqlsh_ext.codecs.lz4.frame", "_frames"),
    ("cqlsh_ext.codecs.lz4.frame", "_frame_at"),
    ("cqlsh_ext.codecs.lz4.frame", "_frame"),
    ("cqlsh_ext.codecs.lz4.frame", "Lz4Frame.matches"),
    ("cqlsh_ext.codecs.lz4.frame", "Lz4Frame.decode"),
    ("cqlsh_ext.codecs.lz4.frame", "Lz4Legacy.matches"),
    ("cqlsh_ext.codecs.lz4.frame", "Lz4Legacy.decode"),
    ("cqlsh_ext.codecs.zstd", "_Header"),
    ("cqlsh_ext.codecs.zstd", "_walk"),
    ("cqlsh_ext.codecs.zstd", "_single_frame_bound"),
    ("cqlsh_ext.codecs.zstd", "_whole"),
    ("cqlsh_ext.codecs.zstd", "_frames"),
    ("cqlsh_ext.codecs.zstd", "_frame_at"),
    ("cqlsh_ext.codecs.zstd", "ZstdFrame.matches"),
    ("cqlsh_ext.codecs.zstd", "ZstdFrame.decode"),
    ("cqlsh_ext.codecs.deflate", "Gzip.matches"),
    ("cqlsh_ext.codecs.deflate", "Gzip.decode"),
    ("cqlsh_ext.codecs.deflate", "_zlib_header_ok"),
    ("cqlsh_ext.codecs.deflate", "Zlib.matches"),
    ("cqlsh_ext.codecs.deflate", "Zlib.decode"),
    ("cqlsh_ext.codecs.bzip2", "Bzip2.matches"),
    ("cqlsh_ext.codecs.xz", "Xz.matches"),
    ("cqlsh_ext.codecs.xz", "_alone_header"),
    ("cqlsh_ext.codecs.xz", "LzmaAlone.matches"),
    ("cqlsh_ext.codecs.xz", "LzmaAlone.ruled_out"),
    ("cqlsh_ext.codecs.xz", "LzmaAlone.trial"),
    # record formats (engine.rs's record(), msgpack.rs, cbor.rs, tree.rs)
    ("cqlsh_ext.payload.formats", "detect"),
    ("cqlsh_ext.payload.formats.avro", "FORMAT.maybe"),
    ("cqlsh_ext.payload.formats.smile", "FORMAT.maybe"),
    ("cqlsh_ext.payload.formats.pickle", "_maybe"),
    ("cqlsh_ext.payload.formats.bson", "_maybe"),
    ("cqlsh_ext.payload.formats.msgpack", "_maybe"),
    ("cqlsh_ext.payload.formats.msgpack", "decode"),
    ("cqlsh_ext.payload.formats.msgpack", "detect"),
    ("cqlsh_ext.payload.formats.cbor", "_maybe"),
    ("cqlsh_ext.payload.formats.cbor", "decode"),
    ("cqlsh_ext.payload.formats.cbor", "detect"),
    ("cqlsh_ext.payload.formats.cbor", "_thaw"),
    ("cqlsh_ext.payload.formats.tree", "plausible_record"),
    ("cqlsh_ext.payload.formats.tree", "_deep_ok"),
    ("cqlsh_ext.payload.formats.tree", "_texty"),
    # path reading (page.rs, tree.rs)
    ("cqlsh_ext.payload.paths", "step"),
    ("cqlsh_ext.payload.paths", "read_path"),
    ("cqlsh_ext.payload.paths", "keys_of"),
    ("cqlsh_ext.payload.pages", "read_paths"),
    ("cqlsh_ext.payload.pages", "note_miss"),
    # COMPRESSION STATS' measures and their page answer (stats.rs)
    ("cqlsh_ext.payload.engine", "ValueEngine._measure"),
    ("cqlsh_ext.payload.engine", "measure"),
    ("cqlsh_ext.payload.measures", "PlaceMeasures.add"),
    ("cqlsh_ext.payload.measures", "RowUnits.add"),
    ("cqlsh_ext.payload.measures", "median_bin"),
    ("cqlsh_ext.payload.measures", "summarize"),
    ("cqlsh_ext.codecs.registry", "signature_matches"),
    ("cqlsh_ext.codecs.zstd", "ZstdFrame.declared_size"),
    ("cqlsh_ext.codecs.zstd", "ZstdFrame.peek"),
    ("cqlsh_ext.codecs.deflate", "Gzip.declared_size"),
    ("cqlsh_ext.codecs.deflate", "Gzip.peek"),
    # payload queries' page answer (query.rs): conditions, needles, group keys, accumulators
    ("cqlsh_ext.query.evaluate", "compare"),
    ("cqlsh_ext.query.evaluate", "_same_kind"),
    ("cqlsh_ext.query.evaluate", "_number"),
    ("cqlsh_ext.query.evaluate", "_holds"),
    ("cqlsh_ext.query.evaluate", "like_regex"),
    ("cqlsh_ext.query.evaluate", "_needles"),
    ("cqlsh_ext.query.evaluate", "cannot_hold"),
    ("cqlsh_ext.query.evaluate", "Evaluator.evaluate_page"),
    ("cqlsh_ext.query.evaluate", "Evaluator._read_place"),
    ("cqlsh_ext.query.evaluate", "Evaluator._kept"),
    ("cqlsh_ext.query.evaluate", "Evaluator._getters"),
    ("cqlsh_ext.query.evaluate", "_group_value"),
    ("cqlsh_ext.query.evaluate", "_path_value"),
    ("cqlsh_ext.query.aggregate", "is_number"),
    ("cqlsh_ext.query.aggregate", "Accumulator.add"),
    ("cqlsh_ext.query.aggregate", "_pick"),
    ("cqlsh_ext.query.aggregate", "Groups._group"),
    # DESCRIBE PAYLOAD's page answer (describe.rs): the walk, the data keys, the sketches
    ("cqlsh_ext.describe.structure", "data_kind"),
    ("cqlsh_ext.describe.structure", "Node.flush"),
    ("cqlsh_ext.describe.structure", "Structure.add"),
    ("cqlsh_ext.describe.structure", "Structure._child"),
    ("cqlsh_ext.describe.structure", "Structure.new_node"),
    ("cqlsh_ext.describe.sketch", "spelling"),
    ("cqlsh_ext.describe.sketch", "hash64"),
    ("cqlsh_ext.describe.sketch", "key"),
    ("cqlsh_ext.describe.sketch", "key_hash"),
    ("cqlsh_ext.describe.sketch", "Values.add"),
    ("cqlsh_ext.describe.sketch", "Values.add_many"),
    ("cqlsh_ext.describe.sketch", "Values._to_registers"),
    ("cqlsh_ext.describe.sketch", "_register"),
    ("cqlsh_ext.describe.description", "Place.add"),
)

#: Constants that are code rather than data (patterns and byte sets the mirror spells out).
MIRRORED_CONSTANTS: tuple[tuple[str, str], ...] = (
    ("cqlsh_ext.payload.unwrap", "_UTF16_BOMS"),
    ("cqlsh_ext.payload.unwrap", "_NOT_UTF8_LEADS"),
    ("cqlsh_ext.payload.unwrap", "_C1_RE"),
    ("cqlsh_ext.payload.unwrap", "_CONTROL_RE"),
    ("cqlsh_ext.payload.unwrap", "_C0_BYTES"),
    ("cqlsh_ext.payload.json_text", "_ORJSON_DEPTH"),
    ("cqlsh_ext.payload.json_text", "_LONG_DIGITS"),
    ("cqlsh_ext.payload.formats.msgpack", "_MAP_OR_ARRAY"),
    ("cqlsh_ext.payload.formats.cbor", "SELF_DESCRIBE"),
    ("cqlsh_ext.payload.formats.cbor", "_MAP_OR_ARRAY"),
    ("cqlsh_ext.payload.formats.cbor", "_PLAIN_TAGS"),
    ("cqlsh_ext.codecs.lz4._native", "_TAIL"),
    ("cqlsh_ext.codecs.lz4._native", "_RATIO"),
    ("cqlsh_ext.codecs.lz4._native", "_LEGACY_BLOCK"),
    ("cqlsh_ext.codecs.lz4._native", "_LZ4BLOCK_SEED"),
    ("cqlsh_ext.codecs.zstd", "_BLOCK_MAX"),
    ("cqlsh_ext.codecs.snappy._raw", "_SHORT"),
    ("cqlsh_ext.codecs.snappy.framed", "CHUNK_MAX"),
    ("cqlsh_ext.payload.pages", "MISS_KEYS"),
    ("cqlsh_ext.describe.structure", "DATA_KEYS"),
    ("cqlsh_ext.describe.structure", "LONG_KEY"),
    ("cqlsh_ext.describe.sketch", "LONG_TEXT"),
)

#: The Python side's libraries whose behaviour the core repeats (the same code at the same
#: release): a new release is a new thing to check.
LIBRARIES = ("lz4", "zstandard", "cramjam", "msgpack", "cbor2", "orjson", "python-snappy", "xxhash")


def _resolve(module: str, path: str) -> Any:
    obj: Any = import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _constant(module: str, name: str) -> str:
    value = _resolve(module, name)
    if hasattr(value, "pattern"):
        return repr(value.pattern)
    if isinstance(value, (set, frozenset)):
        return repr(sorted(value))
    return repr(value)


def library_versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in LIBRARIES}


def fingerprint() -> str:
    """SHA-256 over the mirrored code's sources, the constants and the libraries' releases."""
    digest = hashlib.sha256()
    for module, path in MIRRORED:
        digest.update(f"{module}:{path}\n".encode())
        digest.update(inspect.getsource(_resolve(module, path)).encode())
    for module, name in MIRRORED_CONSTANTS:
        digest.update(f"{module}:{name}={_constant(module, name)}\n".encode())
    for name, release in sorted(library_versions().items()):
        digest.update(f"{name}=={release}\n".encode())
    return digest.hexdigest()


def stored() -> str:
    return STORED.read_text().strip()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(fingerprint())
