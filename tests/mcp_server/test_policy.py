"""The MCP server's policy alone (no server): its file read and checked in one line per mistake,
the tables of credentials refused whatever a file says, patterns matching names and payload paths as
DESCRIBE PAYLOAD spells them, and redaction of answers' JSON (rows, INSPECT's values, DESCRIBE
PAYLOAD's report) that leaves no redacted value anywhere in what is answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cqlsh_ext.mcp_server import redact
from cqlsh_ext.mcp_server.policy import CREDENTIALS, Pattern, PolicyError, load
from cqlsh_ext.mcp_server.tools import TOOLS

EXAMPLE = """
[tools]
deny = ["inspect_value"]

[tables]
deny = ["hr.*", "shop.payment_tokens"]

[redact]
columns = ["shop.customers.email", "shop.orders.data.customer.email", "shop.orders.data.payment.*",
           "shop.orders.data.items[].price", "*.*.password"]

[limits]
calls_per_minute = 60
"""


def _policy(tmp_path: Path, text: str = EXAMPLE):  # type: ignore[no-untyped-def]
    path = tmp_path / "policy.toml"
    path.write_text(text)
    return load(str(path), TOOLS)


def test_the_example_policy_reads_as_written(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert not policy.permits_tool("inspect_value") and policy.permits_tool("query")
    assert policy.calls_per_minute == 60
    assert policy.refusal("hr") is not None and policy.refusal("hr", "salaries") is not None
    assert policy.refusal("shop", "payment_tokens") is not None and policy.refusal("shop", "orders") is None
    assert policy.refusal("shop") is None
    assert [p.text for p in policy.redactions("shop", "orders")] == [
        "shop.orders.data.customer.email", "shop.orders.data.payment.*", "shop.orders.data.items[].price",
        "*.*.password"]
    assert load(None, TOOLS).calls_per_minute is None
    assert load(str(tmp_path / "policy.toml"), TOOLS, calls_per_minute=5).calls_per_minute == 5


@pytest.mark.parametrize("text, said", [
    ("[tool]\ndeny = []", "unknown section [tool]"),
    ("[tools]\nallow = ['drop_table']", "no tool 'drop_table'"),
    ("[tools]\nallowed = []", "has no key 'allowed'"),
    ("[tables]\ndeny = ['shop']", "is not keyspace.table"),
    ("[tables]\ndeny = 'shop.t'", "must be a list of strings"),
    ("[redact]\ncolumns = ['shop.t']", "is not keyspace.table.column[.path]"),
    ("[redact]\ncolumns = ['**.t.c']", "** stands for payload path steps"),
    ("[limits]\ncalls_per_minute = 0", "calls_per_minute must be a whole number of 1 or more"),
    ("[limits\n", "not TOML"),
])
def test_a_bad_policy_is_one_line_naming_the_file(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(PolicyError) as err:
        _policy(tmp_path, text)
    line = str(err.value)
    assert said in line and line.startswith(str(tmp_path / "policy.toml")) and "\n" not in line
    with pytest.raises(PolicyError, match="No such file"):
        load(str(tmp_path / "missing.toml"), TOOLS)


def test_credentials_are_refused_whatever_the_policy_says(tmp_path: Path) -> None:
    for policy in (load(None, TOOLS), _policy(tmp_path, "[tables]\ndeny = []")):
        for keyspace in ("system_auth", "system_traces", "dse_security"):
            assert policy.refusal(keyspace) is not None
            assert keyspace in policy.denied_keyspace_names()
        for table in ("roles", "role_permissions", "role_members", "resource_role_permissons_index",
                      "network_permissions", "identity_to_role"):
            assert "holds credentials" in (policy.refusal("system_auth", table) or "")
        for table in ("credentials_cache_keys", "roles_cache_keys", "queries", "system_properties"):
            assert policy.refusal("system_views", table) is not None
        assert policy.refusal("System_Auth") is None  # a quoted name: another keyspace, which is no secret
    assert len(CREDENTIALS) == len(load(None, TOOLS).credentials)


def test_system_tables_are_read_by_allowing(tmp_path: Path) -> None:
    policy = load(None, TOOLS)
    for keyspace, table in (("system_schema", "tables"), ("system_schema", "columns"), ("system", "local"),
                            ("system", "peers"), ("system", "peers_v2"), ("system", "size_estimates"),
                            ("system", "table_estimates"), ("system_virtual_schema", "tables"),
                            ("system_schema_mcs", "tables"), ("system_multiregion_info", "tables")):
        assert policy.refusal(keyspace, table) is None, (keyspace, table)
    for keyspace, table in (("system", "paxos"), ("system", "batches"), ("system", "prepared_statements"),
                            ("system", "compaction_history"), ("system_distributed", "repair_history"),
                            ("system_views", "settings"), ("system_cluster_metadata", "metadata_log"),
                            ("dse_system", "anything"), ("system_future", "t")):
        said = policy.refusal(keyspace, table) or ""
        assert said.startswith(f"refused: table {keyspace}.{table} is a system table"), said
        assert "a policy's [system] allow names further ones, each as keyspace.table" in said
        assert "\n" not in said
    assert policy.refusal("system") is None and policy.refusal("system_schema") is None
    assert {"system_distributed", "system_views", "system_auth"} <= policy.denied_keyspace_names()
    assert "system" not in policy.denied_keyspace_names()
    assert policy.refusal("systems") is None and policy.refusal("System", "paxos") is None  # an application's
    allowing = _policy(tmp_path, '[system]\nallow = ["system_views.settings", '
                                 '"system_distributed.repair_history"]')
    assert allowing.system_allowed == (("system_views", "settings"), ("system_distributed", "repair_history"))
    assert allowing.refusal("system_views", "settings") is None and allowing.refusal("system_views") is None
    assert allowing.refusal("system_views", "caches") is not None
    assert "system_views" not in allowing.denied_keyspace_names()


@pytest.mark.parametrize("entry, said", [
    ("system_views.*", "is not keyspace.table (each system table is named: no glob)"),
    ("system.paxos.x", "is not keyspace.table"),
    ("shop.orders", "shop is not a system keyspace"),
    ("system_auth.roles", "system_auth.roles holds credentials or other sessions' statements"),
    ("system_views.system_properties", "holds credentials"),
])
def test_a_system_table_is_allowed_only_by_its_name(tmp_path: Path, entry: str, said: str) -> None:
    with pytest.raises(PolicyError) as err:
        _policy(tmp_path, f'[system]\nallow = ["{entry}"]')
    assert said in str(err.value) and str(err.value).startswith(f"{tmp_path / 'policy.toml'}: [system] allow")


def test_patterns_match_names_and_paths() -> None:
    p = Pattern.parse("shop.orders.data.items[].price", 3, None, "t")
    assert p.matches(["shop", "orders", "data", "items[3]", "price"])
    assert p.reaches(["shop", "orders", "data"]) and p.reaches(["shop", "orders", "data", "items[]"])
    assert not p.reaches(["shop", "orders", "data", "customer"])
    assert p.covers(["shop", "orders", "data", "items[]", "price", "amount"])
    star = Pattern.parse("*.*.password", 3, None, "t")
    assert star.matches(["any", "table", "password"]) and not star.matches(["a", "b", "password_hint"])
    deep = Pattern.parse('shop.orders.data.**."card number"', 3, None, "t")
    assert deep.matches(["shop", "orders", "data", "card number"])
    assert deep.matches(["shop", "orders", "data", "payment", "x", "card number"])
    assert not deep.matches(["shop", "orders", "data", "payment"])
    assert deep.reaches(["shop", "orders", "data", "payment"])


def test_rows_redacted_where_the_patterns_say_and_nowhere_else(tmp_path: Path) -> None:
    patterns = _policy(tmp_path).redactions("shop", "orders")
    secret = "ana@example.com"
    rows = [{"id": 1, "data": {"label": "snappy>json", "kind": "text", "raw": "0x1f8b",
                                "payload": {"customer": {"email": secret, "name": "Ana"},
                                            "payment": {"method": "card", "last4": "4242"},
                                            "items": [{"sku": "A", "price": 9.5}, {"sku": "B", "price": 3}]}},
             "data.customer": {"email": secret, "name": "Ana"}, "data.status": "PAID", "count": 3,
             "mystery": "who knows", "password": "hunter2"}]
    places = {"data": ["data"], "data.customer": ["data", "customer"], "data.status": ["data", "status"],
              "count": None}
    out = redact.rows(patterns, "shop", "orders", rows, places, frozenset({"id", "data", "password"}))
    text = json.dumps(out)
    for value in (secret, "4242", "card", "9.5", "hunter2", "0x1f8b", "who knows"):
        assert value not in text, value
    row = out[0]
    assert row["data"]["payload"]["customer"] == {"email": redact.REDACTED, "name": "Ana"}
    assert row["data"]["payload"]["payment"] == {"method": redact.REDACTED, "last4": redact.REDACTED}
    assert row["data"]["payload"]["items"] == [{"sku": "A", "price": redact.REDACTED},
                                               {"sku": "B", "price": redact.REDACTED}]
    assert "raw" not in row["data"] and row["data"]["label"] == "snappy>json"
    assert row["data.status"] == "PAID" and row["count"] == 3 and row["id"] == 1
    assert row["mystery"] == redact.REDACTED  # a name the statement's reading cannot place


def test_a_payload_that_is_no_json_is_redacted_whole_and_json_text_inside(tmp_path: Path) -> None:
    patterns = _policy(tmp_path).redactions("shop", "orders")
    blob = {"label": "snappy>text", "kind": "text", "payload": "customer.email=ana@example.com"}
    assert redact.value(patterns, ["shop", "orders", "data"], blob)["payload"] == redact.REDACTED
    text = json.dumps({"customer": {"email": "ana@example.com", "name": "Ana"}})
    out = redact.value(patterns, ["shop", "orders", "data"], text)
    assert json.loads(out) == {"customer": {"email": redact.REDACTED, "name": "Ana"}}
    assert redact.value(patterns, ["shop", "orders", "data", "customer"], 42) == redact.REDACTED
    assert redact.value(patterns, ["shop", "orders", "id"], 42) == 42


def test_inspect_and_describe_payload_keep_no_value(tmp_path: Path) -> None:
    patterns = _policy(tmp_path).redactions("shop", "orders")
    values = [{"row": 1, "column": "data", "key": {"id": 7}, "chain": ["zstd"],
               "payload": {"kind": "JSON object", "size": 90,
                           "preview": '{"customer":{"email":"ana@example.com"'}}]
    out = redact.inspected(patterns, "shop", "orders", values)
    assert out[0]["payload"] == {"kind": "JSON object", "size": 90, "preview": redact.REDACTED}
    assert out[0]["key"] == {"id": 7} and out[0]["chain"] == ["zstd"]
    report = {"describe": "shop.orders.data", "places": [{"place": "data", "paths": [
        {"path": "data.customer", "depth": 1, "present": {"count": 9}, "types": {"record": {"count": 9}},
         "values": [{"value": {"email": "ana@example.com"}, "count": 2}]},
        {"path": "data.customer.email", "depth": 2, "present": {"count": 9},
         "types": {"string": {"count": 9}},
         "values": [{"value": "ana@example.com", "count": 2}], "string_length": {"min": 15, "max": 22}},
        {"path": "data.status", "depth": 1, "values": [{"value": "PAID", "count": 9}]},
        {"path": "data.items[].price", "depth": 2, "min": 1.5, "max": 99.0}]}]}
    out = redact.payload_report(patterns, "shop", "orders", report)
    text = json.dumps(out)
    assert "ana@example.com" not in text and "99.0" not in text and '"max": 22' not in text
    paths = {p["path"]: p for p in out["places"][0]["paths"]}
    # A redacted path is absent (its types and presence tell of its values); the path holding it
    # keeps where it is, how often and its types, not its values.
    assert set(paths) == {"data.customer", "data.status"}
    assert paths["data.customer"] == {"path": "data.customer", "depth": 1, "present": {"count": 9},
                                      "types": {"record": {"count": 9}}, "redacted": True}
    assert paths["data.status"]["values"] == [{"value": "PAID", "count": 9}]


def test_a_view_of_a_denied_table_is_hidden_with_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from cqlsh_ext.mcp_server.guard import Guard, Scope

    policy = _policy(tmp_path)
    # The driver's schema as far as it says what a view is of (shop.tokens_by_user of the denied
    # shop.payment_tokens); a materialized view is a table's rows kept in another order.
    views = {"tokens_by_user": SimpleNamespace(base_table_name="payment_tokens"),
             "orders_by_day": SimpleNamespace(base_table_name="orders")}
    cluster = SimpleNamespace(metadata=SimpleNamespace(keyspaces={"shop": SimpleNamespace(views=views)}))
    screen = Guard(policy).screen_of(TOOLS["query"], Scope("system_schema", "views", hiding=True), cluster)
    rows = [{"keyspace_name": "shop", "view_name": "tokens_by_user", "base_table_name": "payment_tokens"},
            {"keyspace_name": "shop", "view_name": "orders_by_day", "base_table_name": "orders"},
            {"keyspace_name": "shop", "table_name": "tokens_by_user", "column_name": "user"},
            {"keyspace_name": "shop", "table_name": "payment_tokens", "column_name": "token"},
            {"keyspace_name": "hr", "table_name": "people", "column_name": "salary"},
            {"keyspace_name": "shop", "table_name": "orders", "column_name": "data"}]
    assert [screen.row(row) for row in rows] == [None, rows[1], None, None, None, rows[5]]
    assert screen.hides and screen.hidden_table("shop", "tokens_by_user")
    assert not screen.hidden_table("shop", "orders_by_day")
