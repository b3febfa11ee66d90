"""DESCRIBE PAYLOAD on the Keyspaces-like endpoint (conftest.py: SigV4, TLS, a server reporting
3.11.2): every row read is billed, so the default is a sample and ALL says the cost first (a script
needs CONFIRM); the client-side DESCRIBE of a 3.x server is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyspaces.ksharness import GOOD, REGION, KeyspacesEndpoint

from .test_ks_endpoint import creds_env, run, tls_args

pytestmark = pytest.mark.server


def describe(ep: KeyspacesEndpoint, home: Path, statement: str):
    return run(ep, home, [*tls_args(ep, "--region", REGION), "-e", statement], **creds_env(GOOD))


def test_every_row_is_read_only_once_the_cost_is_accepted(keyspaces_endpoint: KeyspacesEndpoint,
                                                           tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    refused = describe(ep, tmp_path, "DESCRIBE PAYLOAD ks_test.docs.data ALL")
    said = [line for line in refused.stderr.splitlines() if "DESCRIBE PAYLOAD" in line]
    assert said and "Amazon Keyspaces bills every row read" in said[0], refused.stderr
    assert "CONFIRM" in said[0]
    assert not refused.stdout.strip()  # nothing read, no report
    confirmed = describe(ep, tmp_path, "DESCRIBE PAYLOAD ks_test.docs.data ALL CONFIRM JSON")
    assert confirmed.returncode == 0, confirmed.stderr
    doc = json.loads(confirmed.stdout)
    assert doc["reading"]["mode"] == "all" and doc["rows_read"] == 3
    assert [(e["label"], e["count"]) for e in doc["places"][0]["encodings"]] == [("gzip>json", 3)]


def test_the_default_is_a_sample_and_says_why(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = describe(keyspaces_endpoint, tmp_path, "DESCRIBE PAYLOAD ks_test.docs.data")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.strip().splitlines()[0]
    assert first.startswith("DESCRIBE PAYLOAD ks_test.docs.data: a sample, every share with its 95 %")
    assert "on Amazon Keyspaces every row read costs read capacity" in first
    # DESCRIBE itself stays the client-side DESCRIBE of a 3.x server.
    table = describe(keyspaces_endpoint, tmp_path, "DESCRIBE TABLE ks_test.docs")
    assert "CREATE TABLE ks_test.docs (" in table.stdout, table.stderr
