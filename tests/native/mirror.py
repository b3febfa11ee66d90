"""What the native core mirrors of the Python engine: the functions and methods whose code it
repeats in Rust (native/core/src), the constants it spells out, and the libraries whose behaviour it
repeats (the same C library, or the same Rust crate, at the same release), each with the Rust file
that repeats it. native/mirror.manifest holds one line per piece: its fingerprint when the mirror
was last checked against it, so a change on the Python side names the function and the `.rs`
file to bring in line (tests/native/test_mirror.py); the core embeds the manifest it was built
from, so a core built before the change is known too.

    .venv/bin/python tests/native/mirror.py            prints the current manifest
    .venv/bin/python tests/native/mirror.py --write    writes it (after bringing native/core/src in line
                                                       and running tests/native)
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import sys
import textwrap
from importlib import import_module
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "native" / "mirror.manifest"


class Mirrored(NamedTuple):
    """A piece of Python the core repeats: its module, its attribute path, the Rust file."""

    rust: str
    module: str
    name: str


def mirrored(rust: str, module: str, *names: str) -> tuple[Mirrored, ...]:
    return tuple(Mirrored(rust, module, name) for name in names)


#: Every function and method whose code the Rust mirror repeats.
MIRRORED: tuple[Mirrored, ...] = (
    *mirrored("engine.rs", "cqlsh_ext.payload.unwrap",
              "unwrap_in_budget", "read_payload", "_walk", "outer_layer", "uncontained", "contained",
              "_payload", "_text_or_binary", "_structured", "_read_as_text", "_read_as_structured"),
    *mirrored("engine.rs", "cqlsh_ext.codecs.registry", "decode_auto", "detect"),
    *mirrored("common.rs", "cqlsh_ext.codecs.registry", "_clip"),
    *mirrored("engine.rs", "cqlsh_ext.payload.budget", "Budget.for_cap"),
    *mirrored("text.rs", "cqlsh_ext.payload.unwrap", "stored_text", "as_text"),
    *mirrored("json.rs", "cqlsh_ext.payload.json_text", "json_container", "_exact_orjson", "_nesting_above"),
    *mirrored("common.rs", "cqlsh_ext.codecs._common", "skip_skippable", "frame_sequence", "hadoop_decode"),
    *mirrored("deflate.rs", "cqlsh_ext.codecs._common", "capped_step"),
    *mirrored("common.rs", "cqlsh_ext.codecs._common",
              "HadoopStream.matches", "HadoopStream.ruled_out", "HadoopStream.trial"),
    *mirrored("formats.rs", "cqlsh_ext.codecs.base", "Container.trial", "Container.matches"),
    *mirrored("snappy.rs", "cqlsh_ext.codecs.snappy._raw",
              "_bound", "_varint", "_tag_step", "_encoder_like", "_uvarint_bytes", "_prefix", "raw_capped",
              "SnappyRaw.decode", "SnappyRaw.ruled_out", "SnappyRaw.trial"),
    *mirrored("snappy.rs", "cqlsh_ext.codecs.snappy.framed",
              "_chunks", "_check_chunks", "_chunk_output", "SnappyFramed.decode", "S2Framed.decode"),
    *mirrored("snappy.rs", "cqlsh_ext.codecs.snappy.streams",
              "SnappyXerial.matches", "SnappyXerial.decode", "_hadoop_chunk", "SnappyHadoop.raw_bound"),
    *mirrored("lz4.rs", "cqlsh_ext.codecs.lz4._native", "_abandon", "_capped_block", "_sized_block"),
    *mirrored("lz4.rs", "cqlsh_ext.codecs.lz4.block",
              "Lz4JavaBlock.decode", "_Lz4Sized", "Lz4SizedLE.early", "Lz4SizedLE.whole", "_hadoop_chunk"),
    *mirrored("lz4.rs", "cqlsh_ext.codecs.lz4.frame",
              "_frame_header", "_legacy", "_frames", "_frame_at", "_frame", "Lz4Frame.matches",
              "Lz4Frame.decode", "Lz4Legacy.matches", "Lz4Legacy.decode"),
    *mirrored("zstd.rs", "cqlsh_ext.codecs.zstd",
              "_Header", "_walk", "_single_frame_bound", "_whole", "_frames", "_frame_at",
              "ZstdFrame.matches", "ZstdFrame.decode"),
    *mirrored("deflate.rs", "cqlsh_ext.codecs.deflate",
              "Gzip.matches", "Gzip.decode", "_zlib_header_ok", "Zlib.matches", "Zlib.decode"),
    *mirrored("formats.rs", "cqlsh_ext.codecs.bzip2", "Bzip2.matches"),
    *mirrored("formats.rs", "cqlsh_ext.codecs.dictionary_compressed", "Dcz.matches", "Dcb.matches"),
    *mirrored("formats.rs", "cqlsh_ext.codecs.xz",
              "Xz.matches", "_alone_header", "LzmaAlone.matches", "LzmaAlone.ruled_out", "LzmaAlone.trial"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats", "detect"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.avro", "FORMAT.maybe"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.smile", "FORMAT.maybe"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.pickle", "_maybe"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.bson", "_maybe"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.thrift", "_maybe"),
    *mirrored("msgpack.rs", "cqlsh_ext.payload.formats.msgpack", "_maybe", "decode"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.msgpack", "detect"),
    *mirrored("cbor.rs", "cqlsh_ext.payload.formats.cbor", "_maybe", "decode"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.cbor", "detect"),
    *mirrored("cbor.rs", "cqlsh_ext.payload.formats.cbor", "_thaw"),
    *mirrored("tree.rs", "cqlsh_ext.payload.formats.tree", "plausible_record", "_deep_ok", "_texty",
              "pairs_kept"),
    # A map's keys as a record's JSON text names them (columns.rs keys_alike, key_json_text).
    *mirrored("columns.rs", "cqlsh_ext.payload.formats.tree", "_name", "alike_key_texts", "key_json_text"),
    *mirrored("columns.rs", "cqlsh_ext.common.jsonenc", "string", "line_safe"),
    *mirrored("tree.rs", "cqlsh_ext.payload.paths", "step", "read_path", "keys_of"),
    *mirrored("page.rs", "cqlsh_ext.payload.pages", "read_paths"),
    *mirrored("query.rs", "cqlsh_ext.payload.pages", "note_miss"),
    *mirrored("stats.rs", "cqlsh_ext.payload.engine", "ValueEngine._measure", "measure"),
    *mirrored("stats.rs", "cqlsh_ext.payload.measures",
              "PlaceMeasures.add", "RowUnits.add", "median_bin", "summarize"),
    *mirrored("stats.rs", "cqlsh_ext.codecs.registry", "signature_matches"),
    *mirrored("zstd.rs", "cqlsh_ext.codecs.zstd", "ZstdFrame.declared_size", "ZstdFrame.peek",
              "ZstdFrame.first_byte"),
    *mirrored("zstd_first.rs", "cqlsh_ext.codecs.zstd_first", "first_literal", "_first_literal", "_weights",
              "_table", "_fse_weights", "_BackBits", "_normalized_counts", "_fse_table"),
    *mirrored("deflate.rs", "cqlsh_ext.codecs.deflate", "Gzip.declared_size", "Gzip.peek"),
    *mirrored("query.rs", "cqlsh_ext.query.evaluate",
              "compare", "_same_kind", "_equals", "_holds", "_in_list", "like_regex", "_needles",
              "cannot_hold", "Evaluator.evaluate_page", "Evaluator._read_place", "Evaluator._kept",
              "Evaluator._getters", "_group_value", "_path_value"),
    *mirrored("query.rs", "cqlsh_ext.query.groups", "is_number", "Accumulator.add", "_pick", "Groups._group"),
    *mirrored("num.rs", "cqlsh_ext.payload.numbers", "is_number", "_cmp_float", "order", "number_test"),
    *mirrored("query.rs", "cqlsh_ext.payload.numbers", "Exact._of_int", "NumberSet.__init__",
              "NumberSet.__contains__"),
    *mirrored("describe.rs", "cqlsh_ext.describe.structure",
              "data_kind", "Node.flush", "Structure.add", "_walk", "_walk_list", "Structure._child",
              "Structure.new_node"),
    *mirrored("describe.rs", "cqlsh_ext.describe.sketch",
              "spelling", "hash64", "key", "key_hash", "Values.add", "Values.add_many",
              "Values._to_registers", "_register"),
    *mirrored("describe.rs", "cqlsh_ext.describe.description", "DescribedPlace.add"),
    # The file's held values (a Parquet export's columns the core lays out, JSON Lines and CSV
    # texts): the spellings the Python writers give the same values.
    *mirrored("held.rs", "cqlsh_ext.payload.columns", "is_plain", "_plain_scalar"),
    *mirrored("held.rs", "cqlsh_ext.payload.arrow_types", "kind_of", "_int_bits", "json_text"),
    *mirrored("held.rs", "cqlsh_ext.output.spellings", "_minified", "JsonSpelling.found_column",
              "JsonSpelling.found_value"),
    *mirrored("held.rs", "cqlsh_ext.common.jsonenc", "float_text", "float_name"),
    # An MCP answer's rows the core lays out (json_lines' cut, held.rs answer_text_at): the cut it
    # looks for, and what the answer spells otherwise (sizing.spelt).
    *mirrored("held.rs", "cqlsh_ext.mcp_server.sizing", "within", "spelt", "_spelt"),
)

#: Constants that are code rather than data (patterns and byte sets the mirror spells out).
MIRRORED_CONSTANTS: tuple[Mirrored, ...] = (
    *mirrored("text.rs", "cqlsh_ext.payload.unwrap",
              "_UTF16_BOMS", "_NOT_UTF8_LEADS", "_C1_RE", "_CONTROL_RE"),
    *mirrored("scan.rs", "cqlsh_ext.payload.unwrap", "_C0_BYTES"),
    *mirrored("json.rs", "cqlsh_ext.payload.json_text", "_ORJSON_DEPTH", "_LONG_DIGITS"),
    *mirrored("msgpack.rs", "cqlsh_ext.payload.formats.msgpack", "_MAP_OR_ARRAY"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.cbor", "SELF_DESCRIBE"),
    *mirrored("engine.rs", "cqlsh_ext.payload.formats.thrift", "_LEADS", "MIN_LENGTH"),
    *mirrored("cbor.rs", "cqlsh_ext.payload.formats.cbor", "_MAP_OR_ARRAY", "_PLAIN_TAGS"),
    *mirrored("lz4.rs", "cqlsh_ext.codecs.lz4._native", "_TAIL", "_RATIO", "_LEGACY_BLOCK", "_LZ4BLOCK_SEED"),
    *mirrored("zstd.rs", "cqlsh_ext.codecs.zstd", "_BLOCK_MAX"),
    *mirrored("zstd_first.rs", "cqlsh_ext.codecs.zstd_first",
              "_HUF_MAX_BITS", "_WEIGHTS_MAX_LOG", "_MAX_WEIGHTS"),
    *mirrored("snappy.rs", "cqlsh_ext.codecs.snappy._raw", "_SHORT"),
    *mirrored("snappy.rs", "cqlsh_ext.codecs.snappy.framed", "CHUNK_MAX"),
    *mirrored("page.rs", "cqlsh_ext.payload.pages", "MISS_KEYS"),
    *mirrored("describe.rs", "cqlsh_ext.describe.structure", "DATA_KEYS", "LONG_KEY"),
    *mirrored("describe.rs", "cqlsh_ext.describe.sketch", "LONG_TEXT"),
    *mirrored("held.rs", "cqlsh_ext.output.spellings", "_JSON_STRING_OR_SPACE"),
    *mirrored("columns.rs", "cqlsh_ext.common.jsonenc", "LINE_BREAKS"),
)

#: The Python side's libraries whose behaviour the core repeats (the same code at the same
#: release), with the Rust file that binds the same code: a new release is a new thing to check.
LIBRARIES = {"lz4": "lz4.rs", "zstandard": "zstd.rs", "cramjam": "snappy.rs", "msgpack": "msgpack.rs",
             "cbor2": "cbor.rs", "orjson": "json.rs", "python-snappy": "snappy.rs", "xxhash": "lz4.rs"}


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


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _CodeOnly(ast.NodeTransformer):
    """What a function does, not how it is told: docstrings and type annotations dropped (comments
    are not in the tree), so a rename in a type hint or a reworded docstring is no drift."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]  # any node with a body
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        if isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
        return super().generic_visit(node)


def _code(obj: Any) -> str:
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    return ast.dump(_CodeOnly().visit(tree))


def manifest() -> list[str]:
    """One line per mirrored piece: `<fingerprint> <what> <module:name> native/core/src/<file>`."""
    lines = [f"{_digest(_code(_resolve(m.module, m.name)))} code {m.module}:{m.name} "
             f"native/core/src/{m.rust}" for m in MIRRORED]
    lines += [f"{_digest(_constant(m.module, m.name))} constant {m.module}:{m.name} native/core/src/{m.rust}"
              for m in MIRRORED_CONSTANTS]
    lines += [f"{_digest(release)} library {name}=={release} native/core/src/{LIBRARIES[name]}"
              for name, release in sorted(library_versions().items())]
    return lines


def stored() -> list[str]:
    return [line for line in MANIFEST.read_text().splitlines() if line and not line.startswith("#")]


def drift(current: list[str], recorded: list[str]) -> list[str]:
    """What changed since the manifest was written, one line per piece, naming the Rust file."""
    def keyed(lines: list[str]) -> dict[str, str]:
        return {line.split(" ")[2].split("==")[0]: line for line in lines}

    now, then = keyed(current), keyed(recorded)
    said = []
    for key in sorted(now.keys() | then.keys()):
        if now.get(key) == then.get(key):
            continue
        where = (now.get(key) or then[key]).split(" ")[3]
        what = "is new" if key not in then else "is no longer mirrored" if key not in now else "changed"
        said.append(f"{key} {what}: look at {where}")
    return said


_HEADER = """# What the native core mirrors of the Python engine, one piece per line: its fingerprint, what it
# is, where it lives, the Rust file that repeats it. Written by tests/native/mirror.py --write.
# Not listed, being the standard library's (no code of ours to fingerprint): json.dumps(value,
# ensure_ascii=False) (with jsonenc.line_safe's escapes, listed) and Python's float repr, which
# native/core/src/columns.rs spells (held.rs's JSON text too); tests/native/test_stdlib_spellings.py
# pins them, the core's text against the standard library's over values Hypothesis generates.
"""


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    text = "\n".join(manifest()) + "\n"
    if sys.argv[1:] == ["--write"]:
        MANIFEST.write_text(_HEADER + text)
    else:
        print(text, end="")
