"""No feature imports another feature's `command` module: a command module is the shell's entry to
its feature (docs/architecture.md, "What a feature's files are called"), and what features share
lives below them (the one reading, cqlsh_ext.reading; the renderers, cqlsh_ext.render). The
features are those of the layer contract in pyproject.toml; every import counts, inside functions
and under TYPE_CHECKING too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cqlsh_ext"


def features() -> list[str]:
    """The feature packages: the layer of the contract that holds `insight`."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    layer = next(layer for layer in contract["layers"] if "insight" in layer.replace(":", " ").split())
    return [name.strip() for name in layer.replace("|", ":").split(":")]


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
