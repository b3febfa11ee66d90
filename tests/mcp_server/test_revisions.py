"""The protocol's revisions: a client of 2025-06-18 (the initialize handshake, offering that
revision) and one of 2026-07-28 (`server/discover`, then stateless requests), both the SDK's own,
served over stdio and over Streamable HTTP (with OAuth's tokens) alike: the revision each asked for,
the same tools and the same answers, the full descriptions as resources, `tools/list` within its
bound as sent, every list and read private to the client that read it (SEP-2549)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Demo
from .harness import REVISIONS, HttpMcpServer, McpServer, write_credentials
from .issuer import AUDIENCE, ISSUER, Issuer

pytestmark = pytest.mark.server


def _tools_list(server: McpServer) -> tuple[int, dict[str, Any]]:
    """The last tools/list answer on the wire the client read (the tee's copy): its size, its newline
    too, and its result."""
    listed = [line for line in server.wire.read_bytes().splitlines()
              if b'"tools":[' in line and "tools" in json.loads(line).get("result", {})]
    assert listed
    result = json.loads(listed[-1])["result"]
    assert result["tools"][0]["name"] == "list_keyspaces"
    return len(listed[-1]) + 1, result


def _same_answers(server: Any, demo: Demo) -> dict[str, Any]:
    """What the tests compare between revisions: a keyspace's tables, a query cut and continued by its
    cursor, an error answer, the tools' names."""
    tables = server.call("list_tables", keyspace=demo.keyspace).data
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    first = server.call("query", statement=statement, limit=3).data
    rest = server.call("query", statement=statement, limit=100, cursor=first["cursor"]).data
    error = server.call("query", statement="SELEC 1").error
    described = server.portal.call(server.client.read_resource, "cqlsh-ext://tools/query").contents[0].text
    return {"tools": [tool.name for tool in server.tools()], "tables": tables["rows"],
            "rows": [row["name"] for row in first["rows"] + rest["rows"]], "error": error,
            "query's description": described}


@pytest.fixture(scope="module")
def stdio_answers(demo: Demo, tmp_path_factory: pytest.TempPathFactory,
                  assistant_login: tuple[str, str]) -> tuple[dict[str, Any], dict[str, int]]:
    """Each revision's answers over stdio, and the size of its tools/list as sent."""
    answers: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    for revision in REVISIONS:
        home = tmp_path_factory.mktemp(f"stdio-{revision}")
        write_credentials(home, *assistant_login)
        # Every tool listed: the export tool too (served with an export directory).
        args = [*demo.conn, "--export-dir", str(home / "exports")]
        with McpServer(args, home, revision=revision) as server:
            assert server.client.protocol_version == revision
            answers[revision] = _same_answers(server, demo)
            sizes[revision], listed = _tools_list(server)
            # 2026-07-28's list TTL: the tools are the server's for its life, for the client that read
            # them (test_every_list_and_read_is_private_to_its_caller).
            if revision == "2026-07-28":
                assert (listed["ttlMs"], listed["cacheScope"]) == (3_600_000, "private")
            else:
                assert "ttlMs" not in listed and "cacheScope" not in listed
    return answers, sizes


def test_tools_list_is_at_most_12_kb_as_sent(stdio_answers: tuple[dict[str, Any], dict[str, int]],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # What every client reads at connect (some hand it to the model whole): 17,007 bytes before the
    # full descriptions went to resources; 36.4 KB once, the output schemas 1.2 to 4.6 KB each.
    from cqlsh_ext.mcp_server.sizing import LIST_BYTES

    sizes = stdio_answers[1]
    with capsys.disabled():
        print("\n[tools/list] " + ", ".join(f"{size:,} bytes as sent to a client of {revision}"
                                             for revision, size in sizes.items()))
    assert LIST_BYTES == 12 << 10
    assert all(size <= LIST_BYTES for size in sizes.values()), sizes


def test_both_revisions_over_stdio_are_answered_alike(
        stdio_answers: tuple[dict[str, Any], dict[str, int]]) -> None:
    old, new = (stdio_answers[0][revision] for revision in REVISIONS)
    assert old == new
    assert len(old["rows"]) == len(set(old["rows"])) > 3  # cut at 3, continued by the cursor, each row once
    assert old["error"].startswith("syntax error at position 0: 'SELEC' starts no statement")
    assert "ALLOW FILTERING CONFIRM" in old["query's description"]


def test_both_revisions_over_http_with_oauth(demo: Demo, assistant_home: Path,
                                             stdio_answers: tuple[dict[str, Any], dict[str, int]]) -> None:
    issuer = Issuer(audience=AUDIENCE)
    jwks = issuer.write_jwks(assistant_home / "jwks.json")
    args = [*demo.conn, "--oauth-issuer", ISSUER, "--oauth-jwks", str(jwks), "--oauth-audience", AUDIENCE,
            "--export-dir", str(assistant_home / "exports")]
    with HttpMcpServer(args, assistant_home) as server:
        for revision in REVISIONS:
            headers = {"Authorization": f"Bearer {issuer.token()}"}
            with server.client(headers, revision=revision) as client:
                assert client.client.protocol_version == revision
                assert _same_answers(client, demo) == stdio_answers[0][revision], revision


def test_a_cursor_is_continued_only_by_the_token_it_was_given_to_without_sessions(
        demo: Demo, assistant_home: Path) -> None:
    # The single-exchange revision has no session: a cursor is bound to the OAuth token's issuer,
    # subject and client; another subject's token is refused it, the same subject's goes on.
    issuer = Issuer(audience=AUDIENCE)
    jwks = issuer.write_jwks(assistant_home / "jwks.json")
    args = [*demo.conn, "--oauth-issuer", ISSUER, "--oauth-jwks", str(jwks), "--oauth-audience", AUDIENCE]
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    with HttpMcpServer(args, assistant_home) as server:
        mine = {"Authorization": f"Bearer {issuer.token()}"}
        theirs = {"Authorization": f"Bearer {issuer.token(sub='someone-else')}"}
        with server.client(mine, revision=REVISIONS[-1]) as one, \
                server.client(theirs, revision=REVISIONS[-1]) as other:
            first = one.call("query", statement=statement, limit=5).data
            refused = other.call("query", statement=statement, limit=5, cursor=first["cursor"])
            assert refused.is_error and "this cursor was given to another client" in refused.error
        with server.client({"Authorization": f"Bearer {issuer.token()}"}, revision=REVISIONS[-1]) as again:
            rest = again.call("query", statement=statement, limit=100, cursor=first["cursor"]).data
        names = [row["name"] for row in first["rows"] + rest["rows"]]
        assert len(names) == len(set(names)) == 20


def test_every_list_and_read_is_private_to_its_caller(demo: Demo, assistant_home: Path) -> None:
    # SEP-2549: what a list names and a read holds is what this server's policy lets out (its tools,
    # templates and prompts, the tables it lists, redacted rows), so no cache may share it across
    # authorization contexts: every cacheable answer says `"cacheScope": "private"` on the wire
    # (once the tools, templates and prompts said "public", and a read nothing of its own).
    policy = assistant_home / "policy.toml"
    policy.write_text('[tools]\ndeny = ["inspect_value"]\n[redact]\ncolumns = ["*.*.data"]\n')
    with McpServer([*demo.conn, "--policy", str(policy)], assistant_home, revision="2026-07-28") as server:
        call = server.portal.call
        tools = [tool.name for tool in server.tools()]
        assert "inspect_value" not in tools and "query" in tools
        call(server.client.list_resources)
        call(server.client.list_resource_templates)
        call(server.client.list_prompts)
        call(server.client.read_resource, "cqlsh-ext://tools/query")
        call(server.client.read_resource, f"cqlsh-ext://schema/{demo.keyspace}/blob_formats")
        results = [message["result"] for message in map(json.loads, server.wire.read_bytes().splitlines())
                   if isinstance(message.get("result"), dict)]
    for key, ttl in (("tools", 3_600_000), ("resources", 60_000), ("resourceTemplates", 3_600_000),
                     ("prompts", 3_600_000), ("contents", 0)):
        hints = {(result.get("ttlMs"), result.get("cacheScope")) for result in results if key in result}
        assert hints == {(ttl, "private")}, (key, hints)
