"""COMPRESSION REWRITE on the Keyspaces-like endpoint (conftest.py), signed with SigV4 over TLS: a
table without client-side timestamps is rewritten with lightweight transactions at LOCAL_SERIAL,
the preview saying the caveat and the write units in Keyspaces' terms; undone; no secret printed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import zstandard
from shell_runner import journal_of

from keyspaces.ksharness import KeyspacesEndpoint
from keyspaces.test_ks_endpoint import ext_signed

pytestmark = pytest.mark.server

DOC = json.dumps({"status": "NEW", "items": [{"sku": "A1", "qty": 1}], "note": "x" * 900}).encode()


def test_a_rewrite_on_keyspaces_conditions_each_write_and_says_so(keyspaces_endpoint: KeyspacesEndpoint,
                                                                   tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    session = ep.plain_session()
    session.execute("CREATE KEYSPACE IF NOT EXISTS ks_rewrite WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS ks_rewrite.docs (id int PRIMARY KEY, data blob)")
    original = {i: gzip.compress(DOC) for i in range(20)}
    for i, value in original.items():
        session.execute("INSERT INTO ks_rewrite.docs (id, data) VALUES (%s, %s)", (i, value))

    def now() -> dict[int, bytes]:
        return {r.id: r.data for r in session.execute("SELECT id, data FROM ks_rewrite.docs")}

    statement = "COMPRESSION REWRITE ks_rewrite.docs.data AS 'zstd' PACE 50"
    preview = ext_signed(ep, tmp_path, statement)
    assert "would rewrite 20 rows" in preview, preview
    assert "write units (Amazon Keyspaces: 1 per started KB of a row): the rewrite costs 20 once" in preview
    lines = preview.splitlines()
    assert lines[-2].startswith("Each row is written on the condition that it still holds the bytes read"), \
        preview
    caveat = "Caveat: a plain UPDATE another client makes between the read and the write can be lost"
    assert caveat in lines[-2]
    assert now() == original
    done = ext_signed(ep, tmp_path, statement + " CONFIRM")
    assert "20 rows rewritten" in done, done
    assert all(zstandard.ZstdDecompressor().decompress(v) == DOC for v in now().values())
    journal = journal_of(done)
    head = json.loads(journal.read_text().splitlines()[0])
    assert head["mechanism"] == "condition" and head["kind"] == "rewrite"
    # Another client writes row 0's bytes back for 30 days: no write time of the rewrite's to tell
    # by, its moment of expiry tells it from the rewrite's write, and UNDO leaves it alone.
    rewritten = now()
    session.execute("UPDATE ks_rewrite.docs USING TTL 2592000 SET data = %s WHERE id = 0", (rewritten[0],))
    preview = ext_signed(ep, tmp_path, f"UNDO '{journal}'")
    assert ("19 still as the rewrite wrote them; 0 changed since the rewrite (left alone), 1 written again "
            "since with the same bytes (left alone)") in preview, preview
    assert ("Rows written on a condition carry no write time of the rewrite's: a later write of the same "
            "bytes expiring at the same moment cannot be told apart from it, and is written back over.") \
        in preview, preview
    undo = ext_signed(ep, tmp_path, f"UNDO '{journal}' CONFIRM")
    assert ("19 rows written back, 1 written again since the rewrite (the same bytes, a later write): left "
            "alone") in undo, undo
    assert now() == {**original, 0: rewritten[0]}
    ttl = session.execute("SELECT ttl(data) FROM ks_rewrite.docs WHERE id = 0").one()[0]
    assert 2591000 < ttl <= 2592000
