"""A codec's or payload format's name appears under cqlsh_ext/ only in its own module (or package),
besides the demo data and the few places below: everything else derives it from the declarations
(codecs.base.CODEC_NAMES, payload.names), so a change to a codec or format lands in one place."""

from __future__ import annotations

import re
from pathlib import Path

from cqlsh_ext.codecs.base import codec_declarations
from cqlsh_ext.payload.names import format_declarations

PACKAGE = Path(__file__).resolve().parent.parent / "cqlsh_ext"

_AVRO = "the Avro container spec's block codec names (Avro's own data), mapped to the -d codec"
_PARQUET = "Parquet's own column compression codec names (a Parquet writer option, not a -d codec)"
_NATIVE = ("the native core's configuration: the releases of the libraries the Python side decodes "
           "with (the core decodes their formats only with the same), a threshold the Rust mirror reads")
_JAVA_PRODUCER = "Java the language: a producer library's name (lz4-java, snappy-java, XZ for Java, ...)"

#: (file under cqlsh_ext/, name, why it may stay there).
ALLOWED: tuple[tuple[str, str, str], ...] = (
    *(("payload/formats/avro.py", name, _AVRO) for name in ("deflate", "snappy", "zstd", "bzip2", "xz")),
    ("payload/formats/avro.py", "zlib", "Python's zlib inflates Avro's deflate blocks (see there why)"),
    ("payload/formats/avro.py", "java", _JAVA_PRODUCER),
    *((path, name, _PARQUET) for path in ("export/help.py", "export/parquet.py", "export/parse.py")
      for name in ("brotli", "gzip", "lz4", "snappy", "zstd")),
    ("spark/export_job.py", "zstd", _PARQUET),
    ("insight/isolate.py", "pickle", "Python's pickle module carries a worker's answer"),
    ("spark/stats_job.py", "pickle", "Python's pickle module carries a Spark task's aggregate"),
    ("spark/query_job.py", "pickle", "Python's pickle module carries a Spark task's answer"),
    ("spark/describe_job.py", "pickle", "Python's pickle module carries a Spark task's aggregate"),
    *((f"spark/{module}.py", "java", "Java the platform Spark and the connector's driver run on")
      for module in ("cli", "connect", "session")),
    *(("payload/native.py", name, _NATIVE) for name in ("lz4", "msgpack", "zlib")),
    *((path, "java", _JAVA_PRODUCER) for path in (
        "codecs/lz4/__init__.py", "codecs/lz4/_native.py", "codecs/lz4/block.py", "codecs/lz4/frame.py",
        "codecs/snappy/_raw.py",
        "codecs/snappy/streams.py", "codecs/xz.py", "payload/formats/msgpack.py",
        "payload/formats/smile.py")),
)


def owners() -> dict[str, Path]:
    """{declared name: its own module or package}."""
    out = {name: PACKAGE / "codecs" / module for module, decl in codec_declarations().items()
           for name in decl["names"]}
    out.update({name: PACKAGE / "payload" / "formats" / name for name in format_declarations()})
    return out


def named_outside(owned: dict[str, Path], root: Path = PACKAGE) -> set[tuple[str, str]]:
    """(file, name) for every name found as a whole word (any case) outside its own module."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("demo/"):  # demo data names what it stores
            continue
        text = path.read_text(encoding="utf-8")
        for name, own in owned.items():
            if path == own.with_suffix(".py") or own in path.parents:
                continue
            if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text, re.IGNORECASE):
                found.add((rel, name))
    return found


def test_names_appear_only_in_their_own_module() -> None:
    found = named_outside(owners())
    allowed = {(path, name) for path, name, _why in ALLOWED}
    assert sorted(found - allowed) == [], "name a codec or format through its declaration instead"
    assert sorted(allowed - found) == [], "allowlist entries no longer needed: remove them"


def test_the_scan_finds_a_name_written_elsewhere(tmp_path: Path) -> None:
    # The scan itself: a codec named in insight/ is caught, in any case, as a whole word only.
    own = {"snappy": tmp_path / "codecs" / "snappy", "lz4": tmp_path / "codecs" / "lz4"}
    (own["snappy"]).mkdir(parents=True)
    (own["snappy"] / "__init__.py").write_text('NAME = "snappy"\n')
    (tmp_path / "insight").mkdir()
    (tmp_path / "insight" / "stats.py").write_text('if codec == "Snappy": pass  # lz4hc, not lz4_\n')
    assert named_outside(own, tmp_path) == {("insight/stats.py", "snappy")}
