"""The producers' dictionaries and values (tests/dictionary_values.py), and the process's store
emptied around every test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dictionary_values import Made, make

from cqlsh_ext.codecs import dictionaries

__all__ = ["Made"]


@pytest.fixture
def made(tmp_path: Path) -> Made:
    return make(tmp_path)


@pytest.fixture(autouse=True)
def empty_store() -> Iterator[None]:
    dictionaries.install(dictionaries.Store())
    yield
    dictionaries.install(dictionaries.Store())
