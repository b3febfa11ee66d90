"""docs/architecture.md names only files that exist (every module's place in the layers is the
import-linter contract's: `exhaustive = true` in pyproject.toml)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
_PATH = re.compile(r"^[\w./-]+(\.(py|md|toml|sample)|/)$")


def _named_paths(text: str) -> set[str]:
    names = {m for m in re.findall(r"`([^`\s]+)`", text) if _PATH.match(m)}
    tree = text.split("```", 2)[1]  # the layout at the top: "  name.py   what it is"
    names |= {m for m in re.findall(r"^\s+([\w.]+(?:\.py|/))\s", tree, re.M)}
    return names


def _exists(name: str) -> bool:
    name = name.rstrip("/")
    if (ROOT / name).exists() or (ROOT / "cqlsh_ext" / name).exists():
        return True
    return any((ROOT / "cqlsh_ext").glob(f"**/{name}"))


def test_every_file_the_architecture_doc_names_exists():
    missing = sorted(name for name in _named_paths(DOC.read_text(encoding="utf-8")) if not _exists(name))
    assert not missing


def test_the_strict_mypy_packages_the_doc_lists_are_the_configured_ones():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    strict = config["tool"]["mypy"]["overrides"][0]
    assert strict.get("disallow_untyped_defs") and strict.get("disallow_any_generics")
    configured = {m.removeprefix("cqlsh_ext.").removesuffix(".*") for m in strict["module"]}
    sentence = re.search(r"Strict mypy .*? covers these packages: (.*?);", DOC.read_text(encoding="utf-8"),
                         re.S)
    assert sentence is not None
    assert set(re.findall(r"`(\w+)`", sentence.group(1))) == configured
