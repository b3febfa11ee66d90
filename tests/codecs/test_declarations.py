"""The codec and payload-format declarations give exactly the detection order, dispatch tables and
name lists the hand-written ones gave (expected values captured from the
code before the codecs declared themselves)."""

from __future__ import annotations

import inspect

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import Container
from cqlsh_ext.codecs.capabilities import (
    CAPABILITIES,
    Compressors,
    HeaderSized,
    NotWritten,
    TableCompressor,
    Writer,
)
from cqlsh_ext.common import declarations
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.formats._outside import outside_names
from cqlsh_ext.payload.spec import PAYLOAD_NAMES
from cqlsh_ext.settings import MODES

ALL = [
    "snappy/framed", "snappy/s2", "snappy/xerial", "snappy", "snappy/hadoop",
    "lz4/frame", "lz4/legacy", "lz4/LZ4Block", "lz4/block", "lz4/block-be", "lz4/hadoop", "lz4/block-nosize",
    "zstd", "dcz", "dcb", "gzip", "zlib", "deflate", "bzip2", "xz", "xz/lzma", "brotli",
]
SIGNED = [
    "dcz", "zstd", "lz4/frame", "lz4/legacy", "lz4/LZ4Block", "snappy/framed", "snappy/s2", "dcb",
    "snappy/xerial", "gzip", "bzip2", "xz", "zlib",
]
TRIAL = ["snappy", "lz4/block", "snappy/hadoop", "lz4/hadoop", "lz4/block-be", "xz/lzma"]
TRIAL_ZERO = ["lz4/block-be", "snappy/hadoop", "lz4/hadoop", "lz4/block"]
EARLY = ["lz4/block"]
NAMED = {
    "snappy": ["snappy/framed", "snappy/s2", "snappy/xerial", "snappy", "snappy/hadoop"],
    "lz4": [
        "lz4/frame", "lz4/legacy", "lz4/LZ4Block", "lz4/block", "lz4/hadoop", "lz4/block-be",
        "lz4/block-nosize",
    ],
    "zstd": ["zstd"],
    "dcz": ["dcz"],
    "gzip": ["gzip"],
    "zlib": ["zlib"],
    "deflate": ["deflate"],  # raw deflate only: gzip and zlib have their own names
    "bzip2": ["bzip2"],
    "xz": ["xz", "xz/lzma"],
    "brotli": ["brotli"],
    "dcb": ["dcb"],
}
_ZSTD_LZ4 = ["zstd", "lz4/frame", "lz4/legacy"]
BY_BYTE = {
    2: ["lz4/legacy"], 4: ["lz4/frame"], 8: ["zlib"], 24: ["zlib"], 31: ["gzip"], 40: ["zstd", "zlib"],
    56: ["zlib"], 66: ["bzip2"], 72: ["zlib"], 76: ["lz4/LZ4Block"],
    **{b: _ZSTD_LZ4 for b in range(80, 96)}, 88: [*_ZSTD_LZ4, "zlib"],
    94: ["dcz", *_ZSTD_LZ4],
    104: ["zlib"], 120: ["zlib"], 130: ["snappy/xerial"], 253: ["xz"],
    255: ["snappy/framed", "snappy/s2", "dcb"],
}
CODEC_NAMES = ("snappy", "lz4", "zstd", "dcz", "gzip", "zlib", "deflate", "bzip2", "xz", "brotli", "dcb")
PAYLOAD_FORMATS = ["avro", "smile", "pickle", "bson", "msgpack", "cbor", "thrift", "protobuf", "java"]
PAYLOAD_AUTO = ["avro", "smile", "pickle", "bson", "msgpack", "cbor", "thrift"]


def _labels(fmts: object) -> list[str]:
    return [f.label for f in fmts]  # type: ignore[attr-defined]


def test_codec_detection_order_is_unchanged() -> None:
    assert _labels(registry.all_containers()) == ALL
    order = registry.detection_order()
    assert _labels(order["signature"]) == SIGNED
    assert _labels(order["trial"]) == TRIAL
    assert _labels(order["trial_zero"]) == TRIAL_ZERO
    assert _labels(order["early"]) == EARLY
    table = registry.dispatch_table()
    assert {b: _labels(row) for b, row in enumerate(table) if row} == BY_BYTE


def test_codec_dispatch_and_names_are_unchanged() -> None:
    assert {name: _labels(registry.containers_for(name)) for name in registry.CODEC_NAMES} == NAMED
    assert registry.CODEC_NAMES == CODEC_NAMES
    assert MODES == ("auto", "none", *CODEC_NAMES)


def test_payload_order_and_names_are_unchanged() -> None:
    # the built-ins first, in their order; then only formats from outside (tests/plugins' are
    # installed in the test environment)
    outside = set(outside_names())
    found = [f.name for f in formats.all_formats()]
    assert found[:len(PAYLOAD_FORMATS)] == PAYLOAD_FORMATS and set(found[len(PAYLOAD_FORMATS):]) <= outside
    auto = [f.name for f in formats.auto_formats()]
    assert auto[:len(PAYLOAD_AUTO)] == PAYLOAD_AUTO and set(auto[len(PAYLOAD_AUTO):]) <= outside
    for name in PAYLOAD_FORMATS:
        fmt = formats.get(name)
        assert fmt is not None and fmt.name == name
    assert PAYLOAD_NAMES == (
        "msgpack", "cbor", "bson", "pickle", "avro", "smile", "protobuf", "thrift", "java", "text", "hex",
        "json",
    )

ADVISE = [
    ("snappy", "snappy", False), ("lz4", "lz4", False), ("lz4hc 9", "lz4", False),
    ("zstd -1", "zstd", False), ("zstd 1", "zstd", False), ("zstd 3", "zstd", False),
    ("zstd 9", "zstd", False), ("zstd 19", "zstd", True),
    ("gzip 1", "gzip", False), ("gzip 6", "gzip", False), ("gzip 9", "gzip", False),
    ("brotli 1", "brotli", False), ("brotli 6", "brotli", False), ("brotli 11", "brotli", True),
]


def test_advise_candidates_are_unchanged() -> None:
    from cqlsh_ext.insight import advise

    codecs, missing = advise.available_codecs()
    assert [(c.name, c.family, c.slow) for c in codecs] == ADVISE
    assert missing == []


def test_every_declared_compressor_reads_back_as_its_format() -> None:
    payload = b'{"id": 12345, "name": "a value long enough to compress", "tags": ["x", "y", "z"]}' * 20
    for fmt in registry.all_containers():
        for c in fmt.compressors() if isinstance(fmt, Compressors) else ():
            stored = bytes(c.compress(payload))
            assert bytes(c.decompress(stored)) == payload, c.name
            found, dec = registry.decode_named(c.family, stored)
            assert found is fmt and dec.data == payload, (c.name, found)


def test_every_module_that_declares_is_found() -> None:
    """A DECLARES past a module's head would be ignored (the rest of the file is not read)."""
    import os

    from cqlsh_ext.codecs import base
    from cqlsh_ext.payload.names import format_declarations

    codecs_dir = os.path.dirname(base.__file__)
    for directory, found in (
        (codecs_dir, declarations.read_declarations(codecs_dir, "cqlsh_ext.codecs")),
        (os.path.dirname(formats.__file__), format_declarations()),
    ):
        for name in declarations.modules(directory):
            path = os.path.join(directory, name, "__init__.py")
            if not os.path.isfile(path):
                path = os.path.join(directory, f"{name}.py")
            with open(path, encoding="utf-8") as f:
                declares = "\n" + declarations.PREFIX in f.read()
            assert declares == (name in found), path


def test_header_sizing_and_table_compressors_are_unchanged() -> None:
    # What COMPRESSION STATS and SETTINGS named by hand before, now declared by formats.
    from cqlsh_ext.payload.engine import _HEADER_SIZED

    sized = {first: (fmt.label, smallest) for first, (fmt, _header, smallest) in _HEADER_SIZED.items()}
    assert sized == {0x1f: ("gzip", 0), 0x28: ("zstd", 256 << 10), 0x04: ("lz4/frame", 256 << 10)}
    classes = {fmt.cassandra_class: fmt.label for fmt in registry.all_containers()
               if isinstance(fmt, TableCompressor)}
    assert classes == {"LZ4Compressor": "lz4/block-nosize", "SnappyCompressor": "snappy",
                       "DeflateCompressor": "zlib", "ZstdCompressor": "zstd"}


def test_the_declared_stream_magic_is_the_readers() -> None:
    from cqlsh_ext.payload.formats.java import first
    from cqlsh_ext.payload.names import STREAM_MAGICS

    assert STREAM_MAGICS == {first.MAGIC: "java"}
    java = formats.get("java")
    assert java is not None and java.stream is not None


def test_a_codec_name_reads_the_containers_labelled_with_it() -> None:
    # What a name means, as a user reads labels: `-d snappy` and a `snappy` setting read
    # snappy/framed values, and `deflate` no gzip value ([gzip] is no deflate label).
    for fmt in registry.all_containers():
        assert set(fmt.tried_by) <= {fmt.codec}, (fmt.label, fmt.tried_by)
        assert fmt.label == fmt.codec or fmt.label.startswith(f"{fmt.codec}/"), fmt.label


CAPABILITIES_DECLARED = {
    "snappy/framed": ["Headers", "Checksums", "Compressors", "Writer"],
    "snappy/s2": ["Headers", "NotWritten"],
    "snappy/xerial": ["Headers", "Writer"],
    "snappy": ["Headers", "Compressors", "TableCompressor", "Writer"],
    "snappy/hadoop": ["Headers", "Writer"],
    "lz4/frame": ["Headers", "Checksums", "HeaderSized", "Compressors", "Writer"],
    "lz4/legacy": ["Headers", "NotWritten"],
    "lz4/LZ4Block": ["Headers", "Checksums", "Writer"],
    "lz4/block": ["Headers", "Compressors", "Writer"],
    "lz4/block-be": ["Headers", "Writer"],
    "lz4/hadoop": ["Headers", "Writer"],
    "lz4/block-nosize": ["TableCompressor", "Writer"],
    "zstd": [
        "Headers", "Checksums", "HeaderSized", "Compressors", "Dictionaries", "TableCompressor", "Writer",
        "DictionaryWriter",
    ],
    "dcz": ["Headers", "Writer", "DictionaryWriter"],
    "dcb": ["Headers", "NotWritten"],
    "gzip": ["Headers", "Checksums", "HeaderSized", "Compressors", "Writer"],
    "zlib": ["Headers", "Checksums", "Compressors", "TableCompressor", "Writer", "DictionaryWriter"],
    "deflate": ["Compressors", "Writer"],
    "bzip2": ["Headers", "Checksums", "Compressors", "Writer"],
    "xz": ["Headers", "Checksums", "Compressors", "Writer", "NeedsWorker"],
    "xz/lzma": ["Headers", "Writer", "NeedsWorker"],
    "brotli": ["Compressors", "Writer", "NeedsWorker"],
}


_MISSING = object()


def _members(capability: type) -> set[str]:
    """A capability's own members (what a container must define to have it), not the core's."""
    own = set(vars(capability).get("__annotations__", {}))
    own |= {name for name, value in vars(capability).items()
            if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    return own - set(dir(Container))


def test_the_capabilities_each_container_has_are_unchanged() -> None:
    # What INSPECT, STATS, ADVISE, SETTINGS, encode() and the worker process ask of each container.
    found = {fmt.label: [cap.__name__ for cap in CAPABILITIES if isinstance(fmt, cap)]
             for fmt in registry.all_containers()}
    assert found == CAPABILITIES_DECLARED


def test_each_container_declares_its_capabilities_completely() -> None:
    """A container has a capability (named among its bases) with all its members, or none of them: a
    member defined without its capability is one no caller asks for (`header_sized_from` on a
    format that is no HeaderSized would never size a value)."""
    for fmt in registry.all_containers():
        for cap in CAPABILITIES:
            members = _members(cap)
            assert members, cap
            defined = {m for m in members if inspect.getattr_static(fmt, m, _MISSING) is not _MISSING}
            if isinstance(fmt, cap):
                assert cap in type(fmt).__mro__, (fmt.label, f"defines {cap.__name__} without naming it")
                assert defined == members, (fmt.label, cap.__name__, sorted(members - defined))
                abstract = getattr(type(fmt), "__abstractmethods__", frozenset())
                assert not abstract, (fmt.label, sorted(abstract))
            else:
                # Members with a default (Compressors.library, Writer.level_range, ...) exist only
                # through the capability, so none may be defined here.
                assert not defined, (fmt.label, f"{sorted(defined)} without {cap.__name__}")


def test_capability_data_is_what_its_callers_need() -> None:
    sized: dict[bytes, str] = {}
    for fmt in registry.all_containers():
        if isinstance(fmt, HeaderSized):
            # insight.view_measures keys its table by the magic's first byte: it must be this format's own.
            assert fmt.magic and fmt.magic[:1] not in sized, fmt.label
            sized[fmt.magic[:1]] = fmt.label
        if isinstance(fmt, Writer):
            assert fmt.reference and not isinstance(fmt, NotWritten), fmt.label
            assert fmt.level_range is None or fmt.level_range[0] <= fmt.level_range[1], fmt.label
        for text in ("unwritable", "needs_worker", "cassandra_class"):
            if hasattr(fmt, text):
                assert isinstance(getattr(fmt, text), str) and getattr(fmt, text), (fmt.label, text)
        if fmt.early_priority is not None:
            assert type(fmt).early is not Container.early, fmt.label
    # encode('<codec>', ...) writes one container per codec that has a Writer.
    for codec in registry.CODEC_NAMES:
        assert registry.written_by(codec).codec == codec
