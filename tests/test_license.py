"""The licence: the Apache License 2.0 text in LICENSE, declared by the installed package, named
alike by the README, pyproject.toml and the image label, and kept in the image's build context."""

from __future__ import annotations

import importlib.metadata
import re

from conftest import REPO_ROOT


def test_license_is_the_whole_apache_2_text():
    text = (REPO_ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    for part in ("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "1. Definitions.",
                 "9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS",
                 "APPENDIX: How to apply the Apache License to your work."):
        assert part in text, part


def test_the_installed_package_declares_it():
    # What pip installed (bin/setup), as any tool that lists licences reads it.
    meta = importlib.metadata.metadata("cqlsh-ext")
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]


def test_every_place_names_the_same_license():
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"\nlicense-files = \["LICENSE"\]$', pyproject, re.MULTILINE)
    assert "License: Apache-2.0." in (REPO_ROOT / "README.md").read_text()
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in (REPO_ROOT / "Dockerfile").read_text()


def test_the_image_build_context_keeps_it():
    # .dockerignore is a whitelist: everything is left out, then the listed paths are let back in
    # (the last matching line wins). `COPY . .` then gives the wheel build its LICENSE.
    rules = [line.strip() for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    verdict = None
    for rule in rules:
        pattern = re.escape(rule.lstrip("!")).replace(r"\*", ".*")
        if re.fullmatch(pattern, "LICENSE"):
            verdict = rule.startswith("!")
    assert verdict is True, rules


#: The C libraries compiled into the native core's module, by the notice its wheel and sdist carry
#: (native/pyproject.toml's license-files) and the words that notice starts with.
NATIVE_NOTICES = {
    "licenses/libzstd-LICENSE": "BSD License\n\nFor Zstandard software",
    "licenses/liblz4-LICENSE": "LZ4 Library\nCopyright (c) 2011-2020, Yann Collet",
    "core/libdeflate/COPYING": "Copyright 2016 Eric Biggers",
}


def test_the_native_core_declares_what_it_compiles_in():
    # The core's wheel holds libzstd (its BSD option), liblz4 and libdeflate's decompressor beside
    # our own code: each licence is named in the expression and its notice travels with the files.
    pyproject = (REPO_ROOT / "native" / "pyproject.toml").read_text()
    expression = "Apache-2.0 AND BSD-3-Clause AND BSD-2-Clause AND MIT"
    assert re.search(rf'^license = "{expression}"$', pyproject, re.MULTILINE)
    listed = re.search(r"^license-files = \[(.*)\]$", pyproject, re.MULTILINE)
    assert listed is not None
    assert re.findall(r'"([^"]+)"', listed.group(1)) == ["LICENSE", *NATIVE_NOTICES]
    assert (REPO_ROOT / "native" / "LICENSE").read_bytes() == (REPO_ROOT / "LICENSE").read_bytes()
    for path, start in NATIVE_NOTICES.items():
        assert (REPO_ROOT / "native" / path).read_text().startswith(start), path
