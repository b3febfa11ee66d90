"""The registry the core is configured with (payload/native.py `_config`: what the Python registry
holds as data) is declared by its fields in one place, the stub's `Registry` and `StatsRegistry`
(native/cqlsh_ext_native.pyi); every other place that spells the fields is checked against it
here, by reading the sources (no core needed):

- `_config()`'s keys, which build it (payload/native.py);
- the core's `Registry` and `StatsRegistry` structs (native/core/src/registry.rs), in the same order;
- the bindings' reading of the dict (native/bindings/src/state.rs, `registry_of`);
- the core's own tests' reading of the registry the Python side wrote (native/core/tests/common.rs,
  `registry()`) and that file's keys (native/core/tests/registry.json).

A field added or renamed in one of them and not in the others fails here, naming where."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from cqlsh_ext.payload import native

ROOT = Path(__file__).resolve().parent.parent.parent
STUB = ROOT / "native" / "cqlsh_ext_native.pyi"
CORE = ROOT / "native" / "core" / "src" / "registry.rs"
BINDINGS = ROOT / "native" / "bindings" / "src" / "state.rs"
CORE_TESTS = ROOT / "native" / "core" / "tests" / "common.rs"
CORPUS = ROOT / "native" / "core" / "tests" / "registry.json"


def stub_fields(name: str) -> list[str]:
    """A TypedDict's fields in the stub, in order."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    return [stmt.target.id for stmt in cls.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]


def rust_struct_fields(source: str, name: str) -> list[str]:
    """A Rust struct's `pub` fields, in order."""
    body = re.search(r"pub struct " + name + r" \{(.*?)\n\}", source, re.S)
    assert body is not None, f"no struct {name}"
    return re.findall(r"^\s*pub (\w+):", body.group(1), re.M)


def function_body(source: str, signature: str) -> str:
    start = source.index(signature)
    end = source.index("\n}\n", start)
    return source[start:end]


def read_keys(body: str, pattern: str) -> list[str]:
    return re.findall(pattern, body)


def test_the_python_side_builds_the_stubs_fields() -> None:
    config = native._config()
    assert list(config) == stub_fields("Registry")
    assert list(config["stats"]) == stub_fields("StatsRegistry")


def test_the_cores_structs_have_the_stubs_fields_in_order() -> None:
    source = CORE.read_text(encoding="utf-8")
    assert rust_struct_fields(source, "Registry") == stub_fields("Registry")
    assert rust_struct_fields(source, "StatsRegistry") == stub_fields("StatsRegistry")


def test_the_bindings_read_every_field_by_its_name() -> None:
    body = function_body(BINDINGS.read_text(encoding="utf-8"), "fn registry_of(")
    top = set(read_keys(body, r'get!\(dict, "(\w+)"\)')) | set(read_keys(body, r'item\(dict, "(\w+)"\)'))
    stats = set(read_keys(body, r'get!\(&stats, "(\w+)"\)'))
    assert top == set(stub_fields("Registry"))
    assert stats == set(stub_fields("StatsRegistry"))


def test_the_cores_tests_read_every_field_the_python_side_wrote() -> None:
    body = function_body(CORE_TESTS.read_text(encoding="utf-8"), "pub fn registry()")
    top = set(read_keys(body, r'\br\.get\("(\w+)"\)'))
    stats = set(read_keys(body, r'\bstats\s*\.get\("(\w+)"\)'))
    assert top == set(stub_fields("Registry"))
    assert stats == set(stub_fields("StatsRegistry"))
    written = json.loads(CORPUS.read_text(encoding="utf-8"))
    assert list(written) == stub_fields("Registry")
    assert list(written["stats"]) == stub_fields("StatsRegistry")


def test_the_check_sees_a_field_missing(tmp_path: Path) -> None:
    source = CORE.read_text(encoding="utf-8").replace("    pub peek: usize,\n", "")
    assert "peek" not in rust_struct_fields(source, "StatsRegistry")
    assert rust_struct_fields(source, "StatsRegistry") != stub_fields("StatsRegistry")
