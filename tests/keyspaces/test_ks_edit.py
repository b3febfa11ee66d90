"""An edit of a stored payload on the Keyspaces-like endpoint (conftest.py), signed with SigV4 over
TLS: previewed, written with its lightweight transaction, journaled, undone; no secret printed."""

from __future__ import annotations

import json
from pathlib import Path

import cramjam
import pytest

from keyspaces.ksharness import GOOD, REGION, KeyspacesEndpoint
from keyspaces.test_ks_endpoint import creds_env, run, tls_args

pytestmark = pytest.mark.server

DOC = b'{"status":"NEW","items":[{"sku":"A1","qty":1}],"total":12.50}'


def test_an_edit_previews_writes_and_undoes_on_keyspaces(keyspaces_endpoint: KeyspacesEndpoint,
                                                         tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    session = ep.plain_session()
    session.execute("CREATE KEYSPACE IF NOT EXISTS ks_edit WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS ks_edit.orders (id int PRIMARY KEY, data blob)")
    stored = bytes(cramjam.snappy.compress_raw(DOC))
    session.execute("INSERT INTO ks_edit.orders (id, data) VALUES (1, %s)", (stored,))

    def ext(statement: str) -> str:
        proc = run(ep, tmp_path, [*tls_args(ep, "--region", REGION), "-e", statement], **creds_env(GOOD))
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def now() -> bytes:
        return session.execute("SELECT data FROM ks_edit.orders WHERE id = 1").one().data

    edit = "UPDATE ks_edit.orders SET data.status = 'CANCELLED', data.items[0].qty = 3 WHERE id = 1"
    out = ext(edit)
    assert 'data.status: "NEW" -> "CANCELLED"' in out and now() == stored
    assert "Amazon Keyspaces: about 1 write unit for 1 conditional write" in out, out
    out = ext(edit + " CONFIRM")
    assert "1 row written" in out, out
    edited = json.loads(bytes(cramjam.snappy.decompress_raw(now())))
    assert edited == {"status": "CANCELLED", "items": [{"sku": "A1", "qty": 3}], "total": 12.5}
    journal = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Journal: "))
    assert journal.startswith(str(tmp_path))
    out = ext(f"UNDO '{journal}' CONFIRM")
    assert "1 row written back" in out and now() == stored
