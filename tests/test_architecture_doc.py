"""docs/architecture.md, docs/extending.md and docs/performance.md name only files that exist (every
module's place in the layers is the import-linter contract's: `exhaustive = true` in pyproject.toml;
the package READMEs are tests/test_maintainer_docs.py's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
#: The maintainers' docs whose file names are checked here.
MAPS = ("architecture.md", "extending.md", "performance.md")
_PATH = re.compile(r"^[\w./-]+(\.(py|md|toml|sample)|/)$")


def _named_paths(text: str) -> set[str]:
    names = {m for m in re.findall(r"`([^`\s]+)`", text) if _PATH.match(m)}
    for block in text.split("```")[1::2]:  # a diagram's lines: "  name.py   what it is"
        names |= {m for m in re.findall(r"([\w./]+\.py)\b", block)}
    return names


def _exists(name: str) -> bool:
    name = name.rstrip("/")
    if (ROOT / name).exists() or (ROOT / "cqlsh_ext" / name).exists():
        return True
    return any((ROOT / "cqlsh_ext").glob(f"**/{name}"))


@pytest.mark.parametrize("doc", MAPS)
def test_every_file_a_maintainers_doc_names_exists(doc: str) -> None:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    missing = sorted(name for name in _named_paths(text) if not _exists(name))
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
