"""The maintainers' docs are maps, not logs, and cannot rot silently (issue 99, item 6):
docs/architecture.md within 150 lines and naming every layer of the import-linter contract,
docs/performance.md within 400 lines and naming every benchmark script, docs/extending.md with one
recipe per kind of change, and a README.md in every package under cqlsh_ext/ that names each of its
modules and sub-packages, and nothing that is not there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cqlsh_ext"
DOCS = ROOT / "docs"
#: A module or a sub-package as a README names it: `name.py`, `name/`.
_NAMED = re.compile(r"`([\w.]+\.py|\w+/)`")


def _lines(name: str) -> int:
    return len((DOCS / name).read_text(encoding="utf-8").splitlines())


def test_the_architecture_map_is_at_most_150_lines() -> None:
    assert _lines("architecture.md") <= 150


def test_the_performance_table_is_at_most_400_lines() -> None:
    assert _lines("performance.md") <= 400


def _packages() -> list[Path]:
    """Every package under cqlsh_ext/ (the root's own modules are the architecture map's)."""
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py")
                  if init.parent != PACKAGE and "__pycache__" not in init.parts)


def test_every_package_has_a_readme() -> None:
    missing = [str(p.relative_to(ROOT)) for p in _packages() if not (p / "README.md").is_file()]
    assert not missing


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_package_readme_names_its_modules_and_only_those(package: Path) -> None:
    readme = package / "README.md"
    if not readme.is_file():
        pytest.fail(f"{readme.relative_to(ROOT)} is missing")
    text = readme.read_text(encoding="utf-8")
    named = set(_NAMED.findall(text))
    there = {p.name for p in package.glob("*.py")} | {
        f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(there - named) == [], "modules the README does not name"
    assert sorted(named - there) == [], "names in the README that are not in the package"
    assert "May import" in text, "the README says what the package may import (its layer)"


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    return [name.strip() for layer in contract["layers"] for name in re.split(r"[|:]", layer)]


def test_the_architecture_map_names_every_layer_of_the_contract() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\w+)`", text))
    assert sorted(set(_layers()) - named) == []


def test_the_performance_table_names_every_benchmark_script() -> None:
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")}
    named = set(re.findall(r"bench/(\w+\.py)", text))
    assert sorted(scripts - named) == [], "scripts the table leaves out"
    assert sorted(named - scripts) == [], "scripts the table names that do not exist"


#: The kinds of change docs/extending.md has a recipe for, as its headings say them.
KINDS = ("a report", "a write statement", "a codec", "a record format", "an output format",
         "a file format")


def test_extending_has_one_recipe_per_kind_of_change() -> None:
    headings = [line.lstrip("#").strip().lower()
                for line in (DOCS / "extending.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("## ")]
    for kind in KINDS:
        assert any(heading.endswith(kind) for heading in headings), kind
