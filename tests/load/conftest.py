"""The Python API's door of the load tests: `db`, a connection to the test server in the module's
keyspace (its `ks` fixture), its journal key and journals in the test's own home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture()
def db(cassandra, ks, tmp_path: Path, monkeypatch) -> Iterator[Any]:
    import cqlsh_ext

    monkeypatch.setenv("HOME", str(tmp_path))  # the journal key (~/.cassandra) is this test's
    cqlshrc = tmp_path / "cqlshrc"
    cqlshrc.write_text("")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, keyspace=ks, cqlshrc=str(cqlshrc)) as database:
        monkeypatch.setattr(database.config.display, "journal_dir", str(tmp_path / "journal"))
        yield database
