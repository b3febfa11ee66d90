"""`cqlsh-ext mcp`'s policy against the real Cassandra, driven by the SDK's client over stdio: the
tables of credentials are never answered, through any tool and in any spelling; a policy file's
denied tables and redacted columns and payload paths never leave the server (not through a filter,
a group, an aggregate, DESCRIBE PAYLOAD's frequent values or INSPECT's preview); tools it does not
permit are not listed; the calls-per-minute limit; and the audit log, one line a call, holds none
of the values, literals or the password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import write_credentials

pytestmark = pytest.mark.server


def _hashes(cassandra) -> list[str]:  # type: ignore[no-untyped-def]
    session = cassandra.session()
    hashes = [row.salted_hash for row in session.execute("SELECT salted_hash FROM system_auth.roles")]
    session.shutdown()
    assert hashes and all(h.startswith("$2a$") for h in hashes)
    return hashes


def test_the_tables_of_credentials_are_never_answered(cassandra, serve, demo: Demo) -> None:
    hashes = _hashes(cassandra)
    server = serve()
    selects = ["SELECT salted_hash FROM system_auth.roles",
               'SELECT salted_hash FROM "system_auth"."roles"',
               "select SALTED_HASH from SYSTEM_AUTH.ROLES",
               "SELECT salted_hash FROM system_auth /* a comment */ . roles WHERE role = 'cassandra'",
               "SELECT JSON * FROM system_auth.roles",
               "SELECT count(*) FROM system_auth.roles",
               "SELECT salted_hash FROM system_auth.roles WHERE salted_hash.x = 1 ALLOW FILTERING",
               "SELECT * FROM system_auth.role_permissions",
               "SELECT * FROM system_auth.role_members",
               "SELECT * FROM system_traces.sessions",
               "SELECT * FROM system_views.credentials_cache_keys",
               "SELECT * FROM system_views.system_properties"]
    calls = [("query", {"statement": s}) for s in selects]
    calls += [("inspect_value", {"statement": "SELECT salted_hash FROM system_auth.roles"}),
              ("describe_table", {"table": "system_auth.roles"}),
              ("describe_table", {"table": 'system_auth."roles"'}),
              ("describe_payload", {"column": "system_auth.roles.salted_hash"}),
              ("describe_payload", {"column": "system_auth.roles.salted_hash", "sample": 5}),
              ("compression_stats", {"table": "system_auth.roles"}),
              ("compression_stats", {"table": "system_auth.roles", "column": "salted_hash"}),
              ("compression_settings", {"table": "system_auth.roles"}),
              ("compression_advise", {"table": "system_auth.roles"}),
              ("list_tables", {"keyspace": "system_auth"}),
              ("list_tables", {"keyspace": "SYSTEM_AUTH"})]
    for tool, arguments in calls:
        answer = server.call(tool, **arguments)
        assert answer.is_error, (tool, arguments, answer.texts)
        assert answer.error.startswith("refused: ") and "never reads it" in answer.error, answer.error
    keyspaces = {row["keyspace_name"] for row in server.call("list_keyspaces").data["rows"]}
    assert "system_auth" not in keyspaces and demo.keyspace in keyspaces
    # Resources: not listed, and not read by their address.
    from mcp.shared.exceptions import MCPError

    uris = [r.uri for r in server.portal.call(server.client.list_resources).resources]
    assert uris and not any("system_auth" in str(uri) for uri in uris)
    with pytest.raises(MCPError, match="never reads it"):
        server.portal.call(server.client.read_resource, "cqlsh-ext://schema/system_auth/roles")
    # A server whose keyspace in use is system_auth: a table named alone is in it.
    inside_home = server.home / "in-system-auth"
    write_credentials(inside_home, ASSISTANT, ASSISTANT_PASSWORD)
    inside = serve("-k", "system_auth", home=inside_home)
    answer = inside.call("query", statement="SELECT salted_hash FROM roles")
    assert answer.is_error and "system_auth.roles" in answer.error
    written = server.written() + inside.written()
    for hashed in hashes:
        assert hashed.encode() not in written
    assert b"$2a$" not in written


POLICY = """
[tables]
deny = ["{ks}.nested_blobs"]

[redact]
columns = ["{ks}.*.data.customer.email",
           "{ks}.table_with_compressed_json.data.payment.*",
           "{ks}.blob_formats.producer"]
"""


@pytest.fixture
def policy_file(tmp_path: Path, demo: Demo) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(POLICY.format(ks=demo.keyspace))
    return path


def test_redacted_values_never_leave_the_server(cassandra, serve, demo: Demo, policy_file: Path,
                                                tmp_path: Path) -> None:
    ks = demo.keyspace
    audit_log = tmp_path / "audit.log"
    server = serve("--policy", str(policy_file), "--audit-log", str(audit_log))
    orders = f"{ks}.table_with_compressed_json"
    # What the redacted places hold, read by the shell without a policy: none of it may be answered.
    write_credentials(server.home / "plain", ASSISTANT, ASSISTANT_PASSWORD)
    plain = serve(home=server.home / "plain")
    every_email = f"SELECT data.customer.email FROM {orders}"
    emails = {row["data.customer.email"] for row in plain.call(
        "query", statement=every_email, limit=1000, max_bytes=1 << 20).data["rows"]}
    producers = {row["producer"] for row in plain.call(
        "query", statement=f"SELECT producer FROM {ks}.blob_formats").data["rows"]}
    assert len(emails) > 50 and all("@" in e for e in emails) and len(producers) == 20
    # Selected: answered redacted, whole documents and paths alike.
    whole = server.call("query", statement=f"SELECT id, data FROM {orders}", limit=5).data["rows"]
    assert all(row["data"]["payload"]["customer"]["email"] == "[redacted]" for row in whole)
    assert all(set(row["data"]["payload"]["payment"].values()) == {"[redacted]"} for row in whole)
    assert all(row["data"]["payload"]["customer"]["name"] for row in whole)  # the rest is there
    paths = server.call("query", statement=f"SELECT data.customer, data.payment.method, data.status "
                                           f"FROM {orders} LIMIT 5").data["rows"]
    assert all(row["data.customer"]["email"] == "[redacted]" and row["data.payment.method"] == "[redacted]"
               and row["data.status"] != "[redacted]" for row in paths)
    for statement in (f"SELECT name, producer FROM {ks}.blob_formats", f"SELECT * FROM {ks}.blob_formats",
                      f"SELECT name, producer AS p FROM {ks}.blob_formats",
                      f"SELECT JSON name, producer FROM {ks}.blob_formats"):
        rows = server.call("query", statement=statement, max_bytes=1 << 20).data["rows"]
        assert len(rows) == 20 and not any(p in json.dumps(rows) for p in producers), statement
    # Read through a filter, a group, an order, an aggregate: refused before anything runs.
    needle = "needle-4471@example.com"
    for statement in (
            f"SELECT count(*) FROM {orders} WHERE data.customer.email = '{needle}' ALLOW FILTERING",
            f"SELECT count(*) FROM {orders} WHERE data.customer.email LIKE 'a%' ALLOW FILTERING",
            f"SELECT id FROM {orders} WHERE data.payment.method IN ('card', 'paypal') ALLOW FILTERING",
            f"SELECT id FROM {orders} WHERE data.payment.captured = true ALLOW FILTERING",
            f"SELECT data.customer.email, count(*) FROM {orders} GROUP BY data.customer.email "
            "ALLOW FILTERING",
            f"SELECT min(data.customer.email) FROM {orders} ALLOW FILTERING",
            f"SELECT count(data.payment.method) FROM {orders} ALLOW FILTERING",
            f"SELECT id FROM {orders} WHERE data.customer IS NOT NULL ALLOW FILTERING",
            f"SELECT name FROM {ks}.blob_formats WHERE producer = 'gzip.compress' ALLOW FILTERING",
            f"SELECT toJson(producer) FROM {ks}.blob_formats",
            f"SELECT name FROM {ks}.blob_formats WHERE token(name) > 0 AND producer > 'a' ALLOW FILTERING"):
        answer = server.call("query", statement=statement)
        assert answer.is_error and answer.error.startswith("refused: the policy"), (statement, answer.texts)
    refused = server.call("describe_payload", column=f"{orders}.data", where="data.payment.method = 'card'")
    assert refused.is_error and "data.payment.method" in refused.error
    # DESCRIBE PAYLOAD keeps where a redacted path is and how often, not its values.
    report = server.call("describe_payload", column=f"{orders}.data", sample=100).data
    by_path = {p["path"]: p for p in report["places"][0]["paths"]}
    email = by_path["data.customer.email"]
    assert email["redacted"] is True and "values" not in email
    assert by_path["data.status"]["values"]  # the others' frequent values stay
    preview = server.call("inspect_value", statement=f"SELECT data FROM {orders} LIMIT 1").data["values"][0]
    assert preview["payload"]["preview"] == "[redacted]"
    # The denied table: not listed, not read, not described.
    tables = [r["table_name"] for r in server.call("list_tables", keyspace=ks).data["rows"]]
    assert "nested_blobs" not in tables and "blob_formats" in tables
    for tool, arguments in (("query", {"statement": f"SELECT * FROM {ks}.nested_blobs"}),
                            ("describe_table", {"table": f"{ks}.nested_blobs"}),
                            ("compression_stats", {"table": f"{ks}.nested_blobs"})):
        assert "is denied by the policy" in server.call(tool, **arguments).error
    written = server.written()
    for secret in (*emails, *producers):
        assert secret.encode() not in written, secret
    # The audit log: a line a call, the decisions, and not one value, literal or the password.
    lines = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert len(lines) >= 20 and {line["decision"] for line in lines} == {"answered", "refused"}
    text = audit_log.read_text()
    for secret in (*emails, *producers, needle, "card", "paypal", "gzip.compress", ASSISTANT_PASSWORD):
        assert secret not in text, secret
    assert any(line["statement"]["words"].startswith("SELECT count ( * ) FROM") for line in lines
               if "statement" in line)


def test_tools_the_policy_does_not_permit_are_not_listed(serve, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[tools]\nallow = ["list_keyspaces", "list_tables", "query"]\n')
    server = serve("--policy", str(policy))
    assert [tool.name for tool in server.tools()] == ["list_keyspaces", "list_tables", "query"]
    answer = server.call("describe_table", table="system_schema.tables")
    assert answer.is_error and answer.error.startswith("no tool 'describe_table'")
    prompts = server.portal.call(server.client.list_prompts).prompts
    assert prompts == []  # each prompt asks for a tool the policy leaves out
    for tool in server.tools():  # the annotations say every tool only reads
        assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False


def test_calls_past_the_rate_limit_are_refused(serve, demo: Demo, tmp_path: Path) -> None:
    audit_log = tmp_path / "audit.log"
    server = serve("--calls-per-minute", "3", "--audit-log", str(audit_log))
    answers = [server.call("list_tables", keyspace=demo.keyspace) for _ in range(5)]
    assert [a.is_error for a in answers] == [False, False, False, True, True]
    assert answers[3].error.startswith("refused: more than 3 calls a minute (the server's limit); the next "
                                       "call is served in ")
    decisions = [json.loads(line)["decision"] for line in audit_log.read_text().splitlines()]
    assert decisions == ["answered"] * 3 + ["refused"] * 2
