"""`cqlsh-ext mcp`'s policy against the real Cassandra, driven by the SDK's client over stdio: the
tables of credentials are never answered, through any tool and in any spelling; a policy file's
denied tables and redacted columns and payload paths never leave the server (not through a filter,
a group, an aggregate, DESCRIBE PAYLOAD's frequent values or INSPECT's preview); tools it does not
permit are not listed; the calls-per-minute limit; and the audit log, one line a call, holds none
of the values, literals or the password."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from size_estimates import record_estimates

from .conftest import ASSISTANT, ASSISTANT_PASSWORD, Demo
from .harness import HttpMcpServer, write_credentials

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
    keyspaces = server.keyspaces()
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
    # Read through a filter, a group, an order, an aggregate, DISTINCT: refused before anything runs.
    needle = "needle-4471@example.com"
    two_ids = ", ".join(row["id"] for row in whole[:2])
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
            f"SELECT name FROM {ks}.blob_formats WHERE token(name) > 0 AND producer > 'a' ALLOW FILTERING",
            # DISTINCT tells which values are equal (one row for two equal ones), as GROUP BY does.
            f"SELECT DISTINCT data.customer.email FROM {orders} WHERE id IN ({two_ids})",
            f"SELECT DISTINCT data.customer.email FROM {orders} ALLOW FILTERING",
            f"SELECT DISTINCT data.payment FROM {orders} ALLOW FILTERING",
            f"SELECT DISTINCT data FROM {orders} WHERE id IN ({two_ids})",
            f"SELECT DISTINCT name, producer FROM {ks}.blob_formats",
            f"SELECT DISTINCT producer AS p FROM {ks}.blob_formats",
            f"SELECT JSON DISTINCT producer FROM {ks}.blob_formats"):
        answer = server.call("query", statement=statement)
        assert answer.is_error and answer.error.startswith("refused: the policy"), (statement, answer.texts)
    statuses = server.call("query", statement=f"SELECT DISTINCT data.status FROM {orders} ALLOW FILTERING")
    assert 1 < statuses.data["count"] < 10  # DISTINCT of what the policy leaves alone is answered
    refused = server.call("describe_payload", column=f"{orders}.data", where="data.payment.method = 'card'")
    assert refused.is_error and "data.payment.method" in refused.error
    # DESCRIBE PAYLOAD and its JSON Schema leave a redacted path out (what it is, how often, its
    # types); of a path holding one they keep where it is and how often, not its values.
    report = server.call("describe_payload", column=f"{orders}.data", sample=100, max_bytes=1 << 20).data
    by_path = {p["path"]: p for p in report["places"][0]["paths"]}
    assert "data.customer.email" not in by_path and "data.customer.name" in by_path
    assert not [path for path in by_path if path.startswith("data.payment.")], sorted(by_path)
    customer = by_path["data.customer"]
    assert customer["redacted"] is True and "values" not in customer and customer["types"]
    assert by_path["data.status"]["values"]  # the others' frequent values stay
    schema = server.call("describe_payload", column=f"{orders}.data", sample=100, json_schema=True,
                         max_bytes=1 << 20).data
    described = json.dumps(schema["json_schema"])
    assert '"name"' in described and '"status"' in described and '"email"' not in described, described
    preview = server.call("inspect_value", statement=f"SELECT data FROM {orders} LIMIT 1").data["values"][0]
    assert preview["payload"]["preview"] == "[redacted]"
    # The denied table: not listed, not read, not described.
    tables = [r["table_name"] for r in server.call("list_tables", keyspace=ks).data["rows"]]
    assert "nested_blobs" not in tables and "blob_formats" in tables
    for tool, arguments in (("query", {"statement": f"SELECT * FROM {ks}.nested_blobs"}),
                            ("describe_table", {"table": f"{ks}.nested_blobs"}),
                            ("compression_stats", {"table": f"{ks}.nested_blobs"})):
        said = server.call(tool, **arguments).error
        # The policy named by its file's name alone: no answer names the server's directories.
        assert f"is denied by the policy ({policy_file.name})" in said and str(policy_file.parent) not in said
    write_credentials(server.home / "http", ASSISTANT, ASSISTANT_PASSWORD)
    with HttpMcpServer([*demo.conn, "--policy", str(policy_file)], server.home / "http") as http, \
            http.client() as client:
        said = client.call("query", statement=f"SELECT * FROM {ks}.nested_blobs").error
        assert f"is denied by the policy ({policy_file.name})" in said and str(policy_file.parent) not in said
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
        assert tool.annotations.read_only_hint is True and tool.annotations.open_world_hint is False


def test_calls_past_the_rate_limit_are_refused(serve, demo: Demo, tmp_path: Path) -> None:
    audit_log = tmp_path / "audit.log"
    server = serve("--calls-per-minute", "3", "--audit-log", str(audit_log))
    answers = [server.call("list_tables", keyspace=demo.keyspace) for _ in range(5)]
    assert [a.is_error for a in answers] == [False, False, False, True, True]
    assert answers[3].error.startswith("refused: more than 3 calls a minute (the server's limit); the next "
                                       "call is served in ")
    decisions = [json.loads(line)["decision"] for line in audit_log.read_text().splitlines()]
    assert decisions == ["answered"] * 3 + ["refused"] * 2


def test_system_tables_are_read_by_allowing(cassandra, serve, demo: Demo, tmp_path: Path) -> None:
    """An application's LWT update (its mutation kept in system.paxos), a logged batch (in
    system.batches while it runs) and a statement prepared with a literal (its text in
    system.prepared_statements) of a denied table and a redacted column: none of the system
    tables holding them is read, in any spelling or through any tool; the schema and topology
    tables an assistant needs are."""
    import os

    ks = f"mcp_system_{os.getpid()}"
    secrets = {"lwt": "lwt-secret-0193@example.com", "batch": "batch-secret-7715@example.com",
               "prepared": "prepared-secret-5521@example.com", "hr": "salary-9911"}
    session = cassandra.session()
    try:
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.accounts (id int PRIMARY KEY, email text)")
        session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.hr (id int PRIMARY KEY, salary text)")
        session.execute(f"INSERT INTO {ks}.accounts (id, email) VALUES (1, 'old@example.com')")
        applied = session.execute(f"UPDATE {ks}.accounts SET email = '{secrets['lwt']}' WHERE id = 1 "
                                  "IF email = 'old@example.com'").one()
        assert applied[0] is True
        session.execute(f"INSERT INTO {ks}.hr (id, salary) VALUES (1, 'x') IF NOT EXISTS")
        session.execute(f"UPDATE {ks}.hr SET salary = '{secrets['hr']}' WHERE id = 1 IF salary = 'x'")
        session.execute(f"BEGIN BATCH INSERT INTO {ks}.accounts (id, email) VALUES (2, '{secrets['batch']}');"
                        f" INSERT INTO {ks}.hr (id, salary) VALUES (2, '{secrets['hr']}'); APPLY BATCH")
        session.prepare(f"SELECT id FROM {ks}.accounts WHERE email = '{secrets['prepared']}' ALLOW FILTERING")
        # What the superuser reads there: the values are in the system tables.
        held = " ".join(repr(tuple(row)) for table in ("paxos", "prepared_statements")
                        for row in session.execute(f"SELECT * FROM system.{table}"))
        assert secrets["prepared"] in held and secrets["lwt"] in held and secrets["hr"] in held
    finally:
        session.shutdown()
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{ks}.hr"]\n\n[redact]\ncolumns = ["{ks}.accounts.email"]\n')
    server = serve("--policy", str(policy))
    refused = {
        "query": ["SELECT * FROM system.paxos", "SELECT most_recent_commit FROM system.paxos ALLOW FILTERING",
                  'SELECT * FROM system."paxos"', 'SELECT * FROM "system"."paxos"',
                  "SELECT * FROM SYSTEM.PAXOS",
                  "SELECT * FROM system /* a comment */ . paxos", "SELECT * FROM system.batches",
                  "SELECT query_string FROM system.prepared_statements",
                  "SELECT JSON * FROM system.prepared_statements", "SELECT count(*) FROM system.paxos",
                  "SELECT * FROM system_distributed.repair_history", "SELECT * FROM system_views.settings",
                  "SELECT * FROM system_views.caches", "SELECT * FROM system_virtual_schema.tables "
                  "WHERE keyspace_name = 'system' AND system.paxos = 1 ALLOW FILTERING"],
        "inspect_value": ["SELECT most_recent_commit FROM system.paxos"],
    }
    calls = [(tool, {"statement": s}) for tool, statements in refused.items() for s in statements]
    calls += [("describe_table", {"table": "system.paxos"}),
              ("describe_table", {"table": 'system."batches"'}),
              ("describe_payload", {"column": "system.paxos.most_recent_commit"}),
              ("describe_payload", {"column": "system.prepared_statements.query_string", "sample": 5}),
              ("compression_stats", {"table": "system.paxos"}),
              ("compression_stats", {"table": "system.batches", "column": "mutations"}),
              ("compression_settings", {"table": "system.prepared_statements"}),
              ("compression_advise", {"table": "system.paxos"}),
              ("list_tables", {"keyspace": "system_distributed"}),
              ("list_tables", {"keyspace": "system_views"})]
    for tool, arguments in calls:
        answer = server.call(tool, **arguments)
        assert answer.is_error and answer.error.startswith("refused: "), (tool, arguments, answer.texts)
        assert "system" in answer.error and "[system] allow" in answer.error, answer.error
    # The keyspace in use is system (-k): a table named alone is in it.
    inside_home = server.home / "in-system"
    write_credentials(inside_home, ASSISTANT, ASSISTANT_PASSWORD)
    inside = serve("-k", "system", "--policy", str(policy), home=inside_home)
    for statement in ("SELECT * FROM paxos", 'SELECT * FROM "prepared_statements"'):
        answer = inside.call("query", statement=statement)
        assert answer.is_error and "is a system table" in answer.error, answer.texts
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError, match="system.paxos is a system table"):
        server.portal.call(server.client.read_resource, "cqlsh-ext://schema/system/paxos")
    # What an assistant needs of them is read: the schema, the nodes, the estimates.
    assert server.call("query", statement="SELECT release_version FROM system.local").data["count"] == 1
    assert server.call("query", statement="SELECT peer FROM system.peers_v2").data["count"] == 0
    tables = server.call("query", statement=f"SELECT keyspace_name, table_name FROM system_schema.tables "
                                            f"WHERE keyspace_name = '{ks}'").data["rows"]
    assert {row["table_name"] for row in tables} == {"accounts"}  # hr, denied, is absent
    assert not server.call("query", statement="SELECT * FROM system.size_estimates LIMIT 1").is_error
    listed = {row["table_name"] for row in server.call("list_tables", keyspace="system").data["rows"]}
    assert listed == {"local", "peers", "peers_v2", "size_estimates", "table_estimates"}
    keyspaces = server.keyspaces()
    assert {"system", "system_schema", ks} <= keyspaces
    assert not keyspaces & {"system_distributed", "system_views", "system_auth", "system_traces"}
    written = server.written() + inside.written()
    for secret in secrets.values():
        assert secret.encode() not in written and secret.encode().hex().encode() not in written, secret
    # A policy may name further system tables, one by one; the server says which at start.
    allowing = tmp_path / "allowing.toml"
    allowing.write_text('[system]\nallow = ["system_views.settings"]\n')
    write_credentials(server.home / "allowing", ASSISTANT, ASSISTANT_PASSWORD)
    allowed = serve("--policy", str(allowing), home=server.home / "allowing")
    assert allowed.call("query", statement="SELECT name FROM system_views.settings WHERE name = "
                                           "'cluster_name'").data["count"] == 1
    assert allowed.call("query", statement="SELECT * FROM system_views.caches").is_error
    assert (f"the policy ({allowing}) allows system tables besides the schema and topology ones: "
            "system_views.settings") in allowed.logged()


def test_a_denied_table_is_absent_from_every_system_table_the_allow_list_serves(
        cassandra, serve, demo: Demo, tmp_path: Path) -> None:
    """Denied means absent: the rows of the schema and estimate tables (and of a system table a
    policy allows, keyed by keyspace and table) that name the denied table are left out of every
    answer, which reads as it would were the table not there; what cannot be read without counting
    or folding them is refused; no list or note counts them. A server without the policy shows the
    same system tables naming it: every check could fail."""
    import os

    ks = f"mcp_absent_{os.getpid()}"
    session = cassandra.session()
    try:
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        for table in ("open_a", "secret_salaries", "open_b"):
            session.execute(f"CREATE TABLE IF NOT EXISTS {ks}.{table} (id int PRIMARY KEY, note text)")
            session.execute(f"INSERT INTO {ks}.{table} (id, note) VALUES (1, 'x')")
    finally:
        session.shutdown()
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{ks}.secret_salaries"]\n\n[system]\n'
                      'allow = ["system_views.local_read_latency"]\n')
    allowing = tmp_path / "allowing.toml"
    allowing.write_text('[system]\nallow = ["system_views.local_read_latency"]\n')
    server = serve("--policy", str(policy))
    write_credentials(server.home / "plain", ASSISTANT, ASSISTANT_PASSWORD)
    plain = serve("--policy", str(allowing), home=server.home / "plain")
    # Every system table the allow list serves: the schema's, the nodes', the estimates' (list_tables
    # names them), the virtual tables' schema and the one allowed (virtual: list_tables names none).
    served = [(keyspace, row["table_name"]) for keyspace in ("system_schema", "system")
              for row in server.call("list_tables", keyspace=keyspace).data["rows"]]
    served += [("system_virtual_schema", "keyspaces"), ("system_virtual_schema", "tables"),
               ("system_virtual_schema", "columns"), ("system_views", "local_read_latency")]
    assert {("system_schema", "columns"), ("system", "size_estimates"), ("system", "table_estimates")} <= \
        set(served) and len(served) > 15, served
    named_by_plain = []
    for keyspace, table in served:
        keyed = f"SELECT * FROM {keyspace}.{table} WHERE keyspace_name = '{ks}' ALLOW FILTERING"
        whole = f"SELECT * FROM {keyspace}.{table}"
        for which in (server, plain):
            answer = which.call("query", statement=keyed, limit=10_000, max_bytes=1 << 20)
            if answer.is_error and "keyspace_name" in answer.error:  # not keyed by keyspace
                answer = which.call("query", statement=whole, limit=10_000, max_bytes=1 << 20)
            assert not answer.is_error, (keyspace, table, answer.error)
            rows = json.dumps(answer.data["rows"])
            if which is server:
                assert "secret_salaries" not in rows, (keyspace, table)
            elif "secret_salaries" in rows:
                named_by_plain.append(f"{keyspace}.{table}")
    assert {"system_schema.tables", "system_schema.columns", "system_views.local_read_latency"} <= \
        set(named_by_plain), named_by_plain
    # Named in the WHERE: the answer of a table that is not there.
    asked = ("SELECT keyspace_name, table_name, column_name FROM system_schema.columns WHERE keyspace_name "
             f"= '{ks}' AND table_name = '%s'")
    hidden, missing = (server.call("query", statement=asked % t).data for t in ("secret_salaries", "no"))
    assert hidden["rows"] == missing["rows"] == [] and hidden.keys() == missing.keys()
    assert hidden["reading"]["rows_read"] == 0  # not the rows left out
    # What cannot be told without the rows that name it: refused, whatever the schema holds.
    for statement in (f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{ks}'",
                      f"SELECT count(*) FROM system_schema.columns WHERE keyspace_name = '{ks}'",
                      "SELECT DISTINCT keyspace_name FROM system_schema.tables",
                      "SELECT JSON keyspace_name, table_name FROM system_schema.tables",
                      "SELECT count(*) FROM system.size_estimates"):
        answer = server.call("query", statement=statement)
        assert answer.is_error and "select keyspace_name, table_name (or *)" in answer.error, \
            (statement, answer.texts)
    # A keyspace the policy hides nothing of is read as ever.
    assert server.call("query", statement=f"SELECT table_name FROM system_schema.tables WHERE "
                                          f"keyspace_name = '{demo.keyspace}'").data["count"] > 3
    # Lists: the table is not named, and no note counts what was left out; a cut answer's cursor goes on
    # past it as if it were not there.
    listed = server.call("list_tables", keyspace=ks).data
    assert [row["table_name"] for row in listed["rows"]] == ["open_a", "open_b"]
    assert not [note for note in listed["notes"] if "not listed" in note or "polic" in note], listed["notes"]
    keyspaces = server.call("list_keyspaces").data
    assert not [note for note in keyspaces["notes"] if "not listed" in note], keyspaces["notes"]
    statement = f"SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = '{ks}'"
    first = server.call("query", statement=statement, limit=1).data
    rest = server.call("query", statement=statement, limit=10, cursor=first["cursor"]).data
    assert [row["table_name"] for row in first["rows"] + rest["rows"]] == ["open_a", "open_b"]



#: The characters of unquoted CQL names, in the order the server compares text (its UTF-8 bytes).
_NAME_CHARS = "".join(sorted("0123456789_abcdefghijklmnopqrstuvwxyz"))
#: The types a column's type is guessed among (a table the attacker sees has a column of each).
_TYPES = ("ascii", "bigint", "blob", "boolean", "date", "decimal", "double", "float", "inet", "int",
          "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint")


def _search_name(after: Callable[[str], bool], most: int = 24) -> str:
    """The attacker's binary search for the greatest name that `after(X)` says sorts after X, one
    character at a time (the name sorts after X + "~" while X's last character is below its own)."""
    found = ""
    for _ in range(most):
        low, high = 0, len(_NAME_CHARS)
        while low < high:
            middle = (low + high) // 2
            if after(found + _NAME_CHARS[middle] + "~"):
                low = middle + 1
            else:
                high = middle
        if low == len(_NAME_CHARS):
            return found
        found += _NAME_CHARS[low]
        if not after(found):
            return found
    return found


def _search_number(at_most: Callable[[int], bool], top: int = 1 << 16) -> int | None:
    """The attacker's bisection for the least X that `at_most(X)` says a figure is at most; None:
    none up to `top`."""
    if not at_most(top):
        return None
    low, high = 0, top
    while low < high:
        middle = (low + high) // 2
        if at_most(middle):
            high = middle
        else:
            low = middle + 1
    return low


class _Attacker:
    """An assistant probing one keyspace (`{ks}` in a statement) through `query`, keeping every
    answer as it came, its keyspace's name (the part before the process id) and its cursors' texts
    written alike: two keyspaces' answers compare byte for byte."""

    def __init__(self, server, keyspace: str) -> None:  # type: ignore[no-untyped-def]
        self.server, self.keyspace = server, keyspace
        self.answers: list[str] = []

    def ask(self, statement: str, **arguments: Any):  # type: ignore[no-untyped-def]
        import re

        answer = self.server.call("query", statement=statement.replace("{ks}", self.keyspace), **arguments)
        said = json.dumps([re.sub(r'"cursor":"[^"]*"', '"cursor":"<cursor>"', text) for text in answer.texts])
        # The keyspace's name up to its process id (an echo of a long statement may end inside it).
        self.answers.append(said.replace(self.keyspace.rsplit("_", 1)[0], "{ks}"))
        return answer

    def rows(self, statement: str, **arguments: Any) -> list[dict[str, Any]]:
        answer = self.ask(statement, **arguments)
        assert not answer.is_error, (statement, answer.texts)
        return answer.data["rows"]

    def names(self, statement: str, *columns: str, **arguments: Any) -> list[Any]:
        """The rows' values of `columns` (of the first alone, when one is named)."""
        rows = self.rows(statement, **arguments)
        return [row[columns[0]] if len(columns) == 1 else tuple(row[c] for c in columns) for row in rows]

    def read_on(self, statement: str, limit: int) -> list[str]:
        """The table names of every row of `statement`, `limit` an answer, each cursor followed."""
        answer = self.ask(statement, limit=limit).data
        rows = list(answer["rows"])
        while "cursor" in answer:
            answer = self.ask(statement, limit=limit, cursor=answer["cursor"]).data
            rows += answer["rows"]
        return [row["table_name"] for row in rows]

    def searches(self, hidden: str) -> list[Any]:
        """What the searches under LIMIT 1 find: the greatest table name after alpha (a binary
        search), the greatest column name of `hidden` (the same) and that column's type (guessed
        among _TYPES: a row of the guessed type follows in zulu), and bisections of `hidden`'s
        estimated partitions and mean partition size in system.size_estimates and
        system.table_estimates."""
        name = _search_name(lambda x: not self.first_after(x))
        column = _search_name(lambda x: not self.rows(
            "SELECT keyspace_name, table_name, column_name FROM system_schema.columns WHERE keyspace_name = "
            f"'{{ks}}' AND (table_name, column_name) > ('{hidden}', '{x}') LIMIT 1"))
        kind = next((guess for guess in _TYPES if not self.rows(
            "SELECT keyspace_name, table_name, type FROM system_schema.columns WHERE keyspace_name = '{ks}' "
            f"AND (table_name, column_name) >= ('{hidden}', '{column}') AND type = '{guess}' LIMIT 1 "
            "ALLOW FILTERING")), None)
        sizes = [_search_number(lambda x, table=table, figure=figure: not self.rows(
                     f"SELECT keyspace_name, table_name, {figure} FROM system.{table} WHERE keyspace_name = "
                     f"'{{ks}}' AND table_name >= '{hidden}' AND {figure} <= {x} LIMIT 1 ALLOW FILTERING"))
                 for table in ("size_estimates", "table_estimates")
                 for figure in ("partitions_count", "mean_partition_size")]
        return [name, column, kind, sizes]

    def first_after(self, name: str) -> list[str]:
        return self.names("SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = "
                          f"'{{ks}}' AND table_name > '{max(name, 'alpha')}' LIMIT 1", "table_name")


def _hiding_keyspaces(cassandra, hiding: str, twin: str, hidden: str) -> None:  # type: ignore[no-untyped-def]
    """Two keyspaces of the same tables (alpha, kilo with an index and a dropped column, zulu with a
    column of each of _TYPES), the first with one more between alpha and kilo: `hidden`, with an
    index, a dropped column and 300 rows."""
    session = cassandra.session()
    try:
        for keyspace in (hiding, twin):
            session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
            session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.alpha (id int PRIMARY KEY, note text)")
            session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.kilo (id int PRIMARY KEY, gone text, "
                            "label text, note text)")
            session.execute(f"CREATE INDEX IF NOT EXISTS kilo_label ON {keyspace}.kilo (label)")
            session.execute(f"ALTER TABLE {keyspace}.kilo DROP gone")
            typed = "".join(f", t_{kind} {kind}" for kind in _TYPES)
            session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.zulu (id int PRIMARY KEY, note text"
                            f"{typed})")
        session.execute(f"CREATE TABLE IF NOT EXISTS {hiding}.{hidden} (emp_id uuid PRIMARY KEY, "
                        "old_col text, salary decimal, zz_bonus varint)")
        session.execute(f"CREATE INDEX IF NOT EXISTS by_salary ON {hiding}.{hidden} (salary)")
        session.execute(f"ALTER TABLE {hiding}.{hidden} DROP old_col")
        insert = session.prepare(f"INSERT INTO {hiding}.{hidden} (emp_id, salary, zz_bonus) "
                                 "VALUES (uuid(), ?, ?)")
        for i in range(300):
            session.execute(insert, (i * 1000, i))
    finally:
        session.shutdown()


def test_a_hidden_table_is_found_by_no_search_under_limit(cassandra, serve, demo: Demo,
                                                            tmp_path: Path) -> None:
    """The attacks on a LIMIT the server applies before the policy's screen (which leaves out the
    rows naming a hidden table after it): binary searches over system_schema.tables' names and
    system_schema.columns' names and types, bisections of system.size_estimates' and
    system.table_estimates' figures, PER PARTITION LIMIT, IN, token() and a cursor's pages over
    system_schema's tables, columns, indexes and dropped columns. Every answer to every probe is the
    one a twin keyspace without the hidden table gets, byte for byte, so nothing is recovered; the
    rows permitted read as the statement's LIMIT says, counted after the screen (the oracle: the
    twin's rows as the superuser reads them); the tools that would answer from rows the screen
    cannot take out (INSPECT, an export, the reports) are refused on such a table, and a system
    table naming tables in a list or by id is not read at all. The same test against the server
    applying the LIMIT (before this was mended) recovered the name, the last column and its type,
    and both sizes, in 232 calls."""
    import os

    hiding, twin = f"hiding_a_{os.getpid()}", f"hiding_b_{os.getpid()}"  # names of one length
    hidden = "delta_salaries"  # between two tables the attacker sees: alpha and kilo
    _hiding_keyspaces(cassandra, hiding, twin, hidden)
    record_estimates(cassandra, hiding, tmp_path)
    session = cassandra.session()
    try:
        # What the superuser reads: the hidden table in every system table probed, its size too.
        for table in ("tables", "columns", "indexes", "dropped_columns"):
            named = {row.table_name for row in session.execute(
                f"SELECT table_name FROM system_schema.{table} WHERE keyspace_name = '{hiding}'")}
            assert hidden in named, table
        for table in ("size_estimates", "table_estimates"):
            sizes = [row.partitions_count for row in session.execute(
                f"SELECT table_name, partitions_count FROM system.{table} WHERE keyspace_name = '{hiding}'")
                if row.table_name == hidden]
            assert sizes and max(sizes) > 100, (table, sizes)
        # The oracle: the twin's rows, as the superuser reads them.
        visible = [row.table_name for row in session.execute(
            f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{twin}'")]
        columns = [(row.table_name, row.column_name) for row in session.execute(
            f"SELECT table_name, column_name FROM system_schema.columns WHERE keyspace_name = '{twin}'")]
        estimates = [(row.table_name, row.range_start) for row in session.execute(
            f"SELECT table_name, range_start FROM system.size_estimates WHERE keyspace_name = '{twin}'")]
    finally:
        session.shutdown()
    assert visible == ["alpha", "kilo", "zulu"] and len(estimates) >= 3
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{hiding}.{hidden}", "{twin}.{hidden}"]\n\n'
                      '[system]\nallow = ["system_views.repairs", "system.paxos"]\n')
    exports = tmp_path / "exports"
    exports.mkdir(mode=0o700)
    server = serve("--policy", str(policy), "--export-dir", str(exports))
    attackers = {keyspace: _Attacker(server, keyspace) for keyspace in (hiding, twin)}
    found = {keyspace: attacker.searches(hidden) for keyspace, attacker in attackers.items()}
    tables = "SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = '{ks}'"
    listed = ("SELECT keyspace_name, table_name, column_name FROM system_schema.columns WHERE "
              "keyspace_name = '{ks}'")
    for attacker in attackers.values():
        # The rows permitted read as the statement's LIMIT and PER PARTITION LIMIT say.
        for bound in ("", "alpha", "b", "kilo", "m", "zulu"):
            assert attacker.first_after(bound) == [t for t in visible if t > max(bound, "alpha")][:1], bound
        assert attacker.names(tables + " LIMIT 2", "table_name") == visible[:2]
        assert attacker.read_on(tables + " LIMIT 2", limit=1) == visible[:2]  # LIMIT holds across cursors
        assert attacker.read_on(tables, limit=1) == visible
        assert attacker.read_on(listed + " LIMIT 5", limit=2) == [t for t, _ in columns[:5]]
        assert attacker.names(tables + f" AND table_name IN ('alpha', '{hidden}', 'kilo') LIMIT 2",
                              "table_name") == visible[:2]
        assert attacker.names("SELECT keyspace_name, table_name FROM system_schema.tables WHERE "
                              "token(keyspace_name) = token('{ks}') LIMIT 2", "table_name") == visible[:2]
        assert attacker.names(listed + " PER PARTITION LIMIT 3", "table_name", "column_name") == columns[:3]
        cut = attacker.ask(listed + " PER PARTITION LIMIT 3", limit=2).data
        assert cut["count"] == 2 and "cursor" not in cut and "PER PARTITION LIMIT 3" in cut["cut"], cut
        assert attacker.names("SELECT * FROM system.size_estimates WHERE keyspace_name = '{ks}' LIMIT 3",
                              "table_name", "range_start") == estimates[:3]
        dropped = "keyspace_name, table_name, column_name, type"  # not dropped_time: the twin's is its own
        for table, what in (("indexes", "*"), ("dropped_columns", dropped)):
            statement = f"SELECT {what} FROM system_schema.{table} WHERE keyspace_name = '{{ks}}'"
            assert attacker.names(statement + " LIMIT 1", "table_name") == ["kilo"], table
            assert attacker.read_on(statement, limit=1) == ["kilo"], table
    # Nothing is recovered: every probe answered as for the twin without the hidden table.
    assert found[hiding] == found[twin] and found[hiding][3] == [None] * 4, found
    assert found[hiding][2] is None and not {hidden, "zz_bonus"} & set(found[hiding][:2]), found
    assert attackers[hiding].answers == attackers[twin].answers
    assert len(attackers[hiding].answers) > 40
    written = server.written()
    assert hidden.encode() not in written and b"zz_bonus" not in written
    # PER PARTITION LIMIT over every keyspace: the first table of each, the hidden ones left out first.
    firsts = server.call("query", statement="SELECT keyspace_name, table_name FROM system_schema.tables PER "
                                            "PARTITION LIMIT 1", limit=10_000, max_bytes=1 << 20).data["rows"]
    assert {row["keyspace_name"]: row["table_name"] for row in firsts}[hiding] == "alpha"
    # What the screen cannot take a row out of is refused on such a table, in one line, before it reads.
    named = f"keyspace_name = '{hiding}'"
    naming = f"SELECT keyspace_name, table_name FROM system_schema.tables WHERE {named}"
    refused = [("inspect_value", {"statement": f"SELECT * FROM system_schema.tables WHERE {named}"}),
               ("export", {"statement": naming}),
               ("describe_payload", {"column": "system_schema.tables.table_name"}),
               ("describe_payload", {"column": "system_schema.columns.type", "where": named}),
               ("compression_stats", {"table": "system_schema.tables"}),
               ("compression_stats", {"table": "system.size_estimates", "column": "table_name"}),
               ("compression_settings", {"table": "system_schema.columns"}),
               ("compression_advise", {"table": "system_schema.tables"})]
    for tool, arguments in refused:
        answer = server.call(tool, **arguments)
        assert answer.is_error and answer.error.startswith("refused: the policy") \
            and "which it cannot leave out" in answer.error, (tool, arguments, answer.texts)
    assert not list(exports.iterdir())
    described = server.call("describe_table", table="system_schema.tables").data
    assert "sample" not in json.dumps(described["columns"]), described["columns"]
    assert [note for note in described["notes"] if "its rows name tables" in note], described["notes"]
    for statement in ("SELECT keyspace_name, table_name FROM system_schema.tables LIMIT ?",
                      "SELECT keyspace_name, table_name FROM system_schema.tables PER PARTITION LIMIT 0",
                      "SELECT keyspace_name FROM system_schema.tables PER PARTITION LIMIT 1",
                      naming.replace("table_name FROM", "table_name, extensions['x'] FROM")):
        answer = server.call("query", statement=statement)
        assert answer.is_error and answer.error.startswith("refused: "), (statement, answer.texts)
    # System tables naming tables in a form the screen does not read (a list of names, a table's id),
    # allowed by the policy: not read at all while it hides a table.
    for table, named_by in (("system_views.repairs", "table_names"), ("system.paxos", "cf_id")):
        for tool, arguments in (("query", {"statement": f"SELECT * FROM {table}"}),
                                ("describe_table", {"table": table})):
            answer = server.call(tool, **arguments)
            assert answer.is_error and f"name tables by {named_by}" in answer.error, (table, answer.texts)
    # A keyspace the policy hides no table of reads as ever (the server applies its LIMIT).
    demo_tables = f"SELECT table_name FROM system_schema.tables WHERE keyspace_name = '{demo.keyspace}'"
    every = [row["table_name"] for row in server.call("query", statement=demo_tables).data["rows"]]
    two = [row["table_name"] for row in server.call("query", statement=demo_tables + " LIMIT 2").data["rows"]]
    assert len(every) > 3 and two == every[:2]
