"""An edit of a stored payload on the Keyspaces-like endpoint (conftest.py), signed with SigV4 over
TLS: previewed, written, journaled, undone; no secret printed. Without client-side timestamps on the
table it is written with a lightweight transaction (LOCAL_SERIAL) and the preview says the caveat;
with them, at the cell's write time + 1 as on Apache Cassandra."""

from __future__ import annotations

import json
from pathlib import Path

import cramjam
import pytest
from shell_runner import journal_of

from keyspaces.ksharness import KeyspacesEndpoint
from keyspaces.test_ks_endpoint import ext_signed

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

    def now() -> bytes:
        return session.execute("SELECT data FROM ks_edit.orders WHERE id = 1").one().data

    edit = "UPDATE ks_edit.orders SET data.status = 'CANCELLED', data.items[0].qty = 3 WHERE id = 1"
    out = ext_signed(ep, tmp_path, edit)
    assert 'data.status: "NEW" -> "CANCELLED"' in out and now() == stored
    assert "Amazon Keyspaces: about 1 write unit for 1 conditional write" in out, out
    # No client-side timestamps on the table: the condition, and its caveat said last.
    lines = out.splitlines()
    assert lines[-2].startswith("Each row is written on the condition that it still holds the bytes "
                                "read"), out
    assert "Caveat: a plain UPDATE another client makes between the read and the write can be lost; no " \
        "write " \
        "is lost only if every writer conditions (Amazon Keyspaces takes write timestamps only with " \
        "client-side timestamps on the table: ALTER TABLE ks_edit.orders WITH custom_properties = " \
        "{'client_side_timestamps': {'status': 'enabled'}})" in lines[-2]
    out = ext_signed(ep, tmp_path, edit + " CONFIRM")
    assert "1 row written" in out, out
    edited = json.loads(bytes(cramjam.snappy.decompress_raw(now())))
    assert edited == {"status": "CANCELLED", "items": [{"sku": "A1", "qty": 3}], "total": 12.5}
    journal = journal_of(out)
    assert str(journal).startswith(str(tmp_path))
    out = ext_signed(ep, tmp_path, f"UNDO '{journal}' CONFIRM")
    assert "1 row written back" in out and now() == stored


def test_with_client_side_timestamps_an_edit_writes_at_the_write_time_plus_one(
        keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    session = ep.plain_session()
    session.execute("CREATE KEYSPACE IF NOT EXISTS ks_edit WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS ks_edit.stamped (id int PRIMARY KEY, data blob)")
    session.execute("UPDATE system_schema_mcs.tables SET custom_properties = "
                    "{'client_side_timestamps': {'status': 'enabled'}} WHERE keyspace_name = 'ks_edit' AND "
                    "table_name = 'stamped'")
    stored = bytes(cramjam.snappy.compress_raw(DOC))
    session.execute("INSERT INTO ks_edit.stamped (id, data) VALUES (1, %s) USING TTL 3600", (stored,))
    before = session.execute("SELECT writetime(data), ttl(data) FROM ks_edit.stamped WHERE id = 1").one()

    out = ext_signed(ep, tmp_path, "UPDATE ks_edit.stamped SET data.status = 'DONE' WHERE id = 1 CONFIRM")
    assert "Each row is written at its cell's write time + 1 microsecond, its TTL kept" in out, out
    assert "1 row written" in out
    after = session.execute("SELECT data, writetime(data), ttl(data) FROM ks_edit.stamped WHERE id = 1").one()
    assert json.loads(bytes(cramjam.snappy.decompress_raw(after[0])))["status"] == "DONE"
    assert after[1] == before[0] + 1 and after[2] is not None and after[2] <= before[1]
