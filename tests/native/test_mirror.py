"""The mirror and its data: the Python code the native core repeats has the fingerprint the core
was written against, the core takes only a registry it knows (data comes from Python at
configure time), and the adapter stays out of the shell's start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cqlsh_ext.codecs.base import Container
from cqlsh_ext.payload import native, running

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import mirror  # noqa: E402

from .conftest import built_in, record  # noqa: E402


def test_the_mirrored_sources_are_those_the_core_was_written_against() -> None:
    drift = mirror.drift(mirror.manifest(), mirror.stored())
    assert not drift, (
        "Python code or a library release the native core mirrors changed: bring the named Rust "
        "file in line, run tests/native, then .venv/bin/python tests/native/mirror.py --write\n"
        + "\n".join(drift))


def test_the_built_core_is_the_current_mirror(native_core: None) -> None:
    # A core built from older sources (bin/setup rebuilds it when native/ changes) is not the one
    # the manifest describes.
    built = [line for line in native.module().MIRROR_MANIFEST.splitlines() if line and line[0] != "#"]
    assert not mirror.drift(built, mirror.stored())


def test_a_drift_names_the_function_and_its_rust_file() -> None:
    recorded = mirror.stored()
    line = next(line for line in recorded if " code cqlsh_ext.codecs.zstd:_walk " in line)
    changed = [("0" * 16 + line[16:]) if entry == line else entry for entry in recorded]
    said = mirror.drift(changed, recorded)
    assert said == ["cqlsh_ext.codecs.zstd:_walk changed: look at native/core/src/zstd.rs"]
    assert mirror.drift(recorded[1:], recorded)[0].endswith("is no longer mirrored: look at "
                                                           + recorded[0].split(" ")[3])


def test_the_core_decodes_with_the_libraries_the_python_side_uses(native_core: None) -> None:
    import zlib

    import lz4
    import zstandard

    module = native.module()
    assert module.ZLIB_VERSION == zlib.ZLIB_RUNTIME_VERSION
    assert module.LZ4_VERSION == lz4.library_version_number()
    assert module.ZSTD_VERSION == int("".join(f"{part:02d}" for part in zstandard.ZSTD_VERSION))
    now = module.configured()
    assert (now.configured, now.zlib, now.lz4, now.zstd) == (True, True, True, True)


def _config() -> Any:
    return native._config()


def test_configure_takes_the_registry_as_it_is(native_core: None) -> None:
    native.module().configure(_config())
    assert native.module().configured().configured


@pytest.mark.parametrize("change", ["unknown container", "another grade", "unknown record format",
                                    "container in the dispatch table"])
def test_configure_takes_a_registry_with_formats_the_core_lacks(native_core: None, change: str) -> None:
    # A container or record format the core lacks refuses nothing: it is named, and the values
    # that reach it in detection are handed back (test_one_lacked_value_is_handed_back_alone).
    module = native.module()
    config = _config()
    if change == "unknown container":
        config["trial"] = [*config["trial"], "lzo"]
        config["grades"] = {**config["grades"], "lzo": "C"}
        lacked = ["lzo"]
    elif change == "another grade":
        config["grades"] = {**config["grades"], "zlib": "A"}
        lacked = ["zlib"]
    elif change == "unknown record format":
        config["records"] = ["kryo", *config["records"]]
        lacked = ["kryo"]
    else:
        dispatch = [list(row) for row in config["dispatch"]]
        dispatch[0x4f].append("brotli")
        config["dispatch"] = dispatch
        config["grades"] = {**config["grades"], "brotli": "D"}
        lacked = ["brotli"]
    try:
        answer = module.configure(config)
        assert answer.configured and built_in(answer.lacked) == lacked
        assert set(lacked) <= set(answer.hands_back)
    finally:
        module.configure(_config())
    assert built_in(module.configured().lacked) == []


def test_configure_refuses_a_registry_of_another_shape(native_core: None) -> None:
    module = native.module()
    config = _config()
    config["dispatch"] = config["dispatch"][:255]
    try:
        with pytest.raises(ValueError, match="256 rows"):
            module.configure(config)
    finally:
        module.configure(_config())


def test_one_lacked_value_is_handed_back_alone(lacked_container: Container) -> None:
    # A page of the order table with one value in a container the core lacks: that value (and a
    # value that merely starts with its first byte) goes to the Python engine, the rest stays on
    # the core, and the page's answers are the Python engine's on every request.
    import json

    sys.path.insert(0, str(ROOT / "tests"))
    import corpora
    from fuzzing.page_diff import differential

    doc = json.dumps({"status": "PAID", "customer": {"name": "Ada"}, "n": 3}).encode()
    lacked = b"XOR1" + bytes(b ^ 0x5A for b in doc)
    values = corpora.orders(40)
    # the values no built-in format reads reach the formats from outside (the test plugin
    # installed here), which the core never reads: those are handed back with or without the frame
    beyond = [i + (i >= 17) for i in native.decode_page(values, 1 << 20, corpora.PATHS).handed_back]
    values.insert(17, lacked)
    page = native.decode_page(values, 1 << 20, corpora.PATHS)
    assert 17 in page.handed_back
    assert page.handed_back == sorted({i for i, v in enumerate(values) if v[:1] == b"X"} | set(beyond))
    assert len(page.handed_back) - len(beyond) < 3
    counts = differential(values, (1 << 20, 300), corpora.PATHS)
    record("pages: one lacked value among orders", counts)
    assert not counts.differences, "\n".join(counts.differences[:20])
    assert counts.compared > len(values)
    # the Python engine reads it whole: its label names the container the core lacks
    from cqlsh_ext.payload.engine import ValueEngine

    view = ValueEngine().view(lacked)
    assert view.label == "zstd/test-xor>json" and '"Ada"' in (view.text or "")


def test_the_room_gives_readers_the_python_view_of_a_lacked_value(lacked_container: Container) -> None:
    # payload/native.py reads a value the core hands back with the Python engine and puts its
    # view in its place: the display's cells and DESCRIBE's page give the
    # readers that view, not the core's index of it (tests/test_native_room.py).
    import json

    sys.path.insert(0, str(ROOT / "tests"))
    import corpora

    from cqlsh_ext.output.display import CoreRaw, CoreText
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.held_views import HeldView
    from cqlsh_ext.payload.view import BlobView

    doc = json.dumps({"status": "PAID", "customer": {"name": "Ada"}}).encode()
    lacked = b"XOR1" + bytes(b ^ 0x5A for b in doc)
    values = corpora.orders(20)
    values.insert(7, lacked)
    engine = ValueEngine()
    assert engine.on_core()
    cells = native.page_cells(engine, values, 0, CoreText, CoreRaw, HeldView)
    assert cells is not None and len(cells) == len(values)
    cell = cells[7]
    assert isinstance(cell, BlobView) and cell.label == "zstd/test-xor>json"
    from cqlsh_ext.describe.description import BOUNDS
    from cqlsh_ext.payload.described import describe_page

    described = describe_page(engine, values, BOUNDS)
    # (beside it, the values no built-in format reads, handed back for the formats from outside:
    # the Python engine reads no format in them either)
    labels = [v.label for v in described.views]
    assert labels.count("zstd/test-xor>json") == 1 and set(labels) <= {"zstd/test-xor>json", ""}
    assert sum(n for _kind, _label, n in described.encodings) == len(values) - len(labels)


def _python(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != native.ENV}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**clean, **env}, cwd=ROOT).stdout.strip()


def test_engine_name_imports_nothing_native() -> None:
    out = _python("import sys\nfrom cqlsh_ext.payload import native\n"
                  "print(native.engine_name(), 'cqlsh_ext_native' in sys.modules)")
    name, imported = out.split()
    assert imported == "False"
    assert name == ("native" if native.installed() else "python")


def test_cqlsh_ext_native_0_runs_the_python_engine_alone() -> None:
    out = _python("from cqlsh_ext.payload import native\n"
                  "print(native.engine_name(), native.available(), native.refusal())",
                  CQLSH_EXT_NATIVE="0")
    assert out.startswith("python False turned off")


def test_the_version_line_names_the_engine_without_importing_it() -> None:
    out = _python("import sys\nfrom cqlsh_ext.payload import running\n"
                  "print(running.engine_line(), 'cqlsh_ext_native' in sys.modules)")
    # (the child runs without CQLSH_EXT_NATIVE: _python strips it)
    if native.installed():
        assert out == "value engine: native False"
    else:
        assert out == f"value engine: python ({running.GET_THE_CORE}) False"


def test_values_that_are_not_bytes_are_handed_back(native_core: None) -> None:
    doc = b'{"a": 1, "b": "two"}'
    page = native.decode_page([doc, bytearray(doc), memoryview(doc)], 1 << 20, [("a",)])  # type: ignore[list-item]
    assert page.handed_back == [1, 2]
    assert page.kinds[0] == native.TEXT and page.labels[0] == "json"
    assert page.paths[0].values == [1, None, None]


def test_the_version_says_what_the_core_reads(native_core: None) -> None:
    out = subprocess.run([str(Path(sys.executable).parent / "cqlsh-ext"), "--version"], capture_output=True,
                         text=True, check=True).stdout
    reads = next(line for line in out.splitlines() if line.startswith("native core reads: "))
    read, handed = reads.removeprefix("native core reads: ").split("; hands back to the Python engine: ")
    assert {"zstd", "gzip", "snappy", "lz4/frame", "msgpack", "cbor"} <= set(read.split(", "))
    assert {"bzip2", "xz", "avro", "pickle"} <= set(handed.split(", "))
