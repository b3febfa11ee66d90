"""No feature imports another feature's `command` module: a command module is the shell's entry to
its feature (docs/architecture.md, "What a feature's files are called"), and what features share
lives below them (the one reading, cqlsh_ext.reading; the one writing, cqlsh_ext.writing; the
renderers, cqlsh_ext.render). Nor does a feature use another feature's private names (`_name`),
imported or reached through a module it imported. The features are those of the layer contract in
pyproject.toml; every import counts, inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cqlsh_ext"


def features() -> list[str]:
    """The feature packages: the layer of the contract that holds `insight`, and `mcp_server` and
    `spark` (front ends beside the API, built on them as the shell is)."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    layer = next(layer for layer in contract["layers"] if "insight" in layer.replace(":", " ").split())
    return [*(name.strip() for name in layer.replace("|", ":").split(":")), "mcp_server", "spark"]


def imported(path: Path) -> set[str]:
    """Every module `path` imports, as dotted names (`from a import b` gives a and a.b)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_features_are_read_from_the_contract() -> None:
    names = features()
    assert {"insight", "payload_select", "export", "edit", "spark", "mcp_server", "describe"} <= set(names)
    assert all((PACKAGE / name).is_dir() for name in names)


def test_no_feature_imports_another_features_command_module() -> None:
    names = features()
    crossings = []
    for feature in names:
        for path in sorted((PACKAGE / feature).rglob("*.py")):
            for module in imported(path):
                parts = module.split(".")
                if len(parts) >= 3 and parts[0] == "cqlsh_ext" and parts[1] in names \
                        and parts[1] != feature and parts[2] == "command":
                    crossings.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not crossings


def test_the_check_sees_such_an_import(tmp_path: Path) -> None:
    # The check above can fail: an import of another feature's command module, in a function, is seen.
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from cqlsh_ext.payload_select.command import run\n", encoding="utf-8")
    assert "cqlsh_ext.payload_select.command" in imported(module)


def private_uses(path: Path, names: list[str], own: str) -> list[str]:
    """Another feature's private names `path` imports, or reaches through a module of another
    feature it imported (`from cqlsh_ext.rewrite import run as r` then `r._table`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # a local name -> the other feature's module it is
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
            continue
        parts = node.module.split(".")
        if len(parts) < 2 or parts[0] != "cqlsh_ext" or parts[1] not in names or parts[1] == own:
            continue
        for alias in node.names:
            if alias.name.startswith("_"):
                found.append(f"{node.module}.{alias.name}")
            elif len(parts) == 2:  # from cqlsh_ext.feature import module
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules and node.attr.startswith("_"):
            found.append(f"{modules[node.value.id]}.{node.attr}")
    return found


def test_no_feature_uses_another_features_private_names() -> None:
    names = features()
    uses = [f"{path.relative_to(ROOT)} uses {name}"
            for feature in names for path in sorted((PACKAGE / feature).rglob("*.py"))
            for name in private_uses(path, names, feature)]
    assert not uses


def test_the_check_sees_a_private_name_used(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from cqlsh_ext.rewrite import run as r\n    return r._table\n\n"
                      "def g():\n    from cqlsh_ext.edit.run import _write\n", encoding="utf-8")
    assert sorted(private_uses(module, ["edit", "rewrite", "spark"], "spark")) == \
        ["cqlsh_ext.edit.run._write", "cqlsh_ext.rewrite.run._table"]
