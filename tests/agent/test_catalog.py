"""`cqlsh-ext --catalog [PATTERN]`: the keyspaces, tables and columns in one call, and what the demo's
encoded columns hold (chain, format, confidence) as a sample reads them, run as an assistant runs it
(the host in cqlshrc, the login in the credentials file)."""

from __future__ import annotations

import json
from pathlib import Path

from shell_runner import CQLSH_EXT, run


def _catalog(home: Path, *args: str) -> tuple[dict[str, object], list[dict[str, object]], int]:
    result = run(CQLSH_EXT, ["--read-only", "--stats", *args], home)
    [line] = result.stdout.splitlines()
    return json.loads(line), [json.loads(said) for said in result.stderr.splitlines() if said.strip()], \
        result.returncode


def test_the_catalog_lists_the_demo_s_encoded_columns_with_their_chains(demo_keyspace: str,
                                                                        connected_home: Path) -> None:
    catalog, said, code = _catalog(connected_home, "--catalog", demo_keyspace)
    assert code == 0 and said[-1]["type"] == "stats", said
    [keyspace] = catalog["keyspaces"]  # type: ignore[misc]
    assert keyspace["keyspace"] == keyspace["name"] == demo_keyspace
    tables = {table["table"]: table for table in keyspace["tables"]}
    assert set(tables) == {"blob_formats", "nested_blobs", "table_with_compressed_json",
                           "table_with_uncompressed_json"}
    orders = tables["table_with_compressed_json"]
    assert orders["name"] == f"{demo_keyspace}.table_with_compressed_json"
    columns = {column["column"]: column for column in orders["columns"]}
    assert columns["id"]["type"] == "timeuuid" and columns["id"]["key"] == "partition"
    data = columns["data"]
    assert (data["type"], data["holds"]) == ("blob", "blob")
    sample = data["sample"]
    # the demo writes its orders snappy-compressed JSON (cqlsh_ext.demo)
    assert (sample["chain"], sample["format"], sample["label"]) == (["snappy"], "json", "snappy>json"), sample
    assert sample["confidence"] in ("confident", "likely") and sample["share"] == 1.0
    assert sample["values"] == 20 and sample["undecodable"] == 0
    formats = {column["column"]: column for column in tables["blob_formats"]["columns"]}["data"]["sample"]
    assert {"zstd>json", "gzip>json"} <= {label["label"] for label in formats["labels"]}
    text = {column["column"]: column for column in tables["table_with_uncompressed_json"]["columns"]}
    assert text["data"]["holds"] == "JSON text"
    nested = {column["column"]: column for column in tables["nested_blobs"]["columns"]}
    assert nested["by_codec"]["holds"] == "blobs inside"


def test_a_pattern_names_tables_and_a_misspelt_one_is_told_the_nearest(demo_keyspace: str,
                                                                      connected_home: Path) -> None:
    catalog, _, _ = _catalog(connected_home, "--catalog", f"{demo_keyspace}.table_with_*")
    [keyspace] = catalog["keyspaces"]  # type: ignore[misc]
    assert [t["table"] for t in keyspace["tables"]] == ["table_with_compressed_json",
                                                        "table_with_uncompressed_json"]
    catalog, said, code = _catalog(connected_home, "--catalog", f"{demo_keyspace}.blob_formts")
    assert code == 0
    [warning] = [s for s in said if s["type"] == "warning"]
    assert warning["nearest"] == [f"{demo_keyspace}.blob_formats"], warning


def test_under_read_only_a_table_of_credentials_is_listed_and_not_read(connected_home: Path) -> None:
    catalog, _, code = _catalog(connected_home, "--catalog", "system_auth.roles")
    assert code == 0
    [keyspace] = catalog["keyspaces"]  # type: ignore[misc]
    [roles] = keyspace["tables"]
    assert str(roles["sample"]).startswith("not read: refused"), roles
    assert "salted_hash" in {column["column"] for column in roles["columns"]}
    assert not any("sample" in column for column in roles["columns"])


def test_a_table_s_text_and_blob_columns_are_sampled_in_one_request(cassandra, connected_home: Path) -> None:  # type: ignore[no-untyped-def]
    # The oracle is the server's own count of the scans of the table (system_views'
    # coordinator_scan_latency), not ours: the JSON-text check of `doc` and the sample of `data`
    # are one request, as they are for a table of the blob alone.
    import gzip

    keyspace = cassandra.create_keyspace("catalog_requests")
    session = cassandra.session()
    try:
        session.execute(f"CREATE TABLE {keyspace}.both (id int PRIMARY KEY, doc text, data blob)")
        session.execute(f"INSERT INTO {keyspace}.both (id, doc, data) VALUES (1, '{{\"a\": 1}}', %s)",
                        (gzip.compress(b'{"a": 1}'),))

        def scans() -> int:
            rows = session.execute("SELECT count FROM system_views.coordinator_scan_latency "
                                   "WHERE keyspace_name = %s AND table_name = 'both'", (keyspace,))
            return sum(row.count for row in rows)

        before = scans()
        catalog, _, code = _catalog(connected_home, "--catalog", f"{keyspace}.both")
        spent = scans() - before
    finally:
        session.shutdown()
    assert code == 0
    [described] = catalog["keyspaces"][0]["tables"]  # type: ignore[index]
    columns = {column["column"]: column for column in described["columns"]}
    assert columns["data"]["sample"]["label"] == "gzip>json", columns
    assert columns["doc"]["holds"] == "JSON text", columns
    assert spent == 1, f"{spent} scans of the table"
