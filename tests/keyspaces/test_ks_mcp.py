"""`cqlsh-ext mcp` on the Keyspaces-like endpoint: --keyspaces with SigV4 (the real cassandra-sigv4
signer) over TLS, as the shell connects; answers the shell's JSON; a full scan says what it would
cost on Amazon Keyspaces and runs with CONFIRM; no secret key or session token in any byte the
server writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_server.harness import McpServer

from keyspaces.ksharness import ALL_SECRETS, GOOD, REGION, SESSION, Credential, KeyspacesEndpoint

pytestmark = pytest.mark.server


def _creds(cred: Credential) -> dict[str, str]:
    env = {"AWS_ACCESS_KEY_ID": cred.access_key, "AWS_SECRET_ACCESS_KEY": cred.secret}
    if cred.token:
        env["AWS_SESSION_TOKEN"] = cred.token
    return env


def _args(ep: KeyspacesEndpoint) -> list[str]:
    return ["--keyspaces", ep.host, str(ep.tls_port), "--certfile", str(ep.ca_file), "--region", REGION]


def shell_rows(ep: KeyspacesEndpoint, tmp_path: Path, env: dict[str, str]) -> int:
    """How many rows ks_test.docs holds, as the shell counts them."""
    counted = ep.run([*_args(ep), "--output-format", "json", "-e",
                      "SELECT count(*) FROM ks_test.docs"], tmp_path, env=env)
    assert counted.returncode == 0, counted.stderr
    return int(json.loads(counted.stdout.splitlines()[0])["count"])


@pytest.mark.parametrize("cred", [GOOD, SESSION], ids=["access-key", "session-token"])
def test_mcp_over_sigv4_answers_as_the_shell(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path,
                                            cred: Credential) -> None:
    ep = keyspaces_endpoint
    env = ep.env(tmp_path, **_creds(cred))
    statement = "SELECT id, data FROM ks_test.docs WHERE id = 1"
    with McpServer(_args(ep), tmp_path, env=env) as server:
        answer = server.call("query", statement=statement).data
        shell = ep.run([*_args(ep), "--output-format", "json",
                        "-e", statement], tmp_path, env=env)
        assert shell.returncode == 0, shell.stderr
        assert answer["rows"] == [json.loads(line) for line in shell.stdout.splitlines()]
        assert answer["rows"][0]["data"]["label"] == "gzip>json"
        # A full scan: Amazon Keyspaces bills every row read, so the cost comes first.
        scan = "SELECT id FROM ks_test.docs WHERE data.id = 2 ALLOW FILTERING"
        refused = server.call("query", statement=scan).error
        assert "Amazon Keyspaces bills every row read" in refused and "CONFIRM" in refused, refused
        confirmed = server.call("query", statement=scan + " CONFIRM").data
        assert confirmed["rows"] == [{"id": 2}]
        # COMPRESSION STATS of the whole table: refused with its cost, then run with confirm (declared
        # with the feature, as the shell's CONFIRM and the API's confirm=True).
        refused = server.call("compression_stats", table="ks_test.docs").error
        assert "Amazon Keyspaces bills every row read" in refused and "confirm: true" in refused, refused
        stats = server.call("compression_stats", table="ks_test.docs", confirm=True).data
        assert stats["rows"] == shell_rows(ep, tmp_path, env) and stats["complete"], stats
        # DESCRIBE PAYLOAD of every row (the shell's ALL): refused with its cost, then read with confirm.
        refused = server.call("describe_payload", column="ks_test.docs.data", every_row=True).error
        assert "Amazon Keyspaces bills every row read" in refused and "confirm: true" in refused, refused
        described = server.call("describe_payload", column="ks_test.docs.data", every_row=True,
                                confirm=True).data
        assert described["reading"]["mode"] == "all" and described["rows_read"] == stats["rows"], described
        # DESCRIBE from the driver's metadata (the endpoint reports 3.11.2, as Keyspaces does).
        described = server.call("describe_table", table="ks_test.docs").data
        assert described["cql"].startswith("CREATE TABLE ks_test.docs") and \
            {c["name"]: c["holds"] for c in described["columns"]} == {"id": None, "data": "blob"}
        assert server.call("query", statement="DELETE FROM ks_test.docs WHERE id = 1").is_error
    written = server.written()
    assert written
    for secret in ALL_SECRETS:
        assert secret.encode() not in written, "a secret was written"
