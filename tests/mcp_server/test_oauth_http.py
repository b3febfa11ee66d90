"""`cqlsh-ext mcp --http --oauth-issuer ...` as an OAuth 2.1 resource server, over real HTTP against
the real Cassandra: its keys fetched from the issuer's JWKS URL (served on loopback by the test), the
protected resource's metadata, 401 for a request without a token and for each token it must refuse
(expired, another audience, another issuer, a key the JWKS does not hold, `alg: none`, a date that is
no JSON number), 403 naming the scope a tool needs, 200 with the answers of stdio, a token holder's
body that stops cut; the SDK's own client at each step, and no token in any byte the server wrote.
Signed locally (tests/mcp_server/issuer.py); nothing reaches the network."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from .conftest import Demo
from .harness import HttpMcpServer
from .issuer import AUDIENCE, ISSUER, Issuer, JwksServer, ec_key, unsigned
from .test_http import _connect, _head, _leaves, _told

pytestmark = pytest.mark.server

_POST = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _post(server: HttpMcpServer, token: str | None, body: dict[str, object]) -> httpx2.Response:
    headers = {**_POST, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx2.post(server.url, headers=headers, json=body)


def test_tokens_scopes_and_the_metadata_over_http(demo: Demo, assistant_home: Path, serve) -> None:
    issuer = Issuer(audience=AUDIENCE)
    stdio = serve().call("list_tables", keyspace=demo.keyspace).data
    with JwksServer(issuer.jwks()) as jwks:
        args = [*demo.conn, "--oauth-issuer", ISSUER, "--oauth-jwks", jwks.url, "--oauth-audience", AUDIENCE,
                "--http-body-timeout", "2"]
        with HttpMcpServer(args, assistant_home) as server:
            assert f"(OAuth access tokens of {ISSUER} required)" in server.log.read_text()
            base = server.url.removesuffix("/mcp")
            metadata_url = f"{base}/.well-known/oauth-protected-resource/mcp"
            # The metadata (RFC 9728), without a token, where a client looks for it.
            for url in (metadata_url, f"{base}/.well-known/oauth-protected-resource"):
                document = httpx2.get(url).json()
                assert document == {"resource": server.url, "authorization_servers": [ISSUER],
                                    "scopes_supported": ["cqlsh.read", "cqlsh.report"],
                                    "bearer_methods_supported": ["header"], "resource_name": "cqlsh-ext mcp"}
            listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            # No token: 401, and where the metadata is (RFC 6750: no error code without credentials).
            none = _post(server, None, listing)
            assert none.status_code == 401
            assert none.headers["www-authenticate"] == (f'Bearer resource_metadata="{metadata_url}", '
                                                        'scope="cqlsh.read cqlsh.report"')
            other_issuer = "https://login.example.test/realms/other"
            refused = {
                issuer.token(lifetime=-120): "the token has expired",
                issuer.token(aud="api://another-service"): "the token is not issued for this server",
                issuer.token(iss=other_issuer): f"the token is not issued by {ISSUER}",
                issuer.token(key=ec_key("not-published")): "the token is signed by a key the issuer's keys",
                unsigned(issuer.claims()): "the token is not signed with an algorithm this server takes",
                # RFC 7519's NumericDate is a JSON number: a string, a boolean, NaN are no dates.
                issuer.token(exp=str(issuer.claims()["exp"])): "the token's exp is not a NumericDate",
                issuer.token(exp=float("nan")): "the token's exp is not a NumericDate",
                issuer.token(iat=True): "the token's iat is not a NumericDate",
            }
            for token, said in refused.items():
                answer = _post(server, token, listing)
                assert answer.status_code == 401, said
                challenge = answer.headers["www-authenticate"]
                assert challenge.startswith(f'Bearer resource_metadata="{metadata_url}"'), challenge
                assert f'error="invalid_token", error_description="unauthorized: {said}' in challenge
                assert answer.json()["error"]["message"].startswith(f"unauthorized: {said}")
                # The SDK's client raises it as it is.
                with pytest.raises(BaseException) as raised:
                    server.client({"Authorization": f"Bearer {token}"}).__enter__()
                errors = [e for e in _leaves(raised.value) if isinstance(e, MCPError)]
                assert errors and errors[0].error.message.startswith(f"unauthorized: {said}"), said
            # A token of cqlsh.read: its tools answer as over stdio; a report's tool is 403, named.
            read_only = issuer.token("cqlsh.read")
            with server.client({"Authorization": f"Bearer {read_only}"}) as client:
                assert client.call("list_tables", keyspace=demo.keyspace).data == stdio
                with pytest.raises(MCPError) as forbidden:
                    client.call("compression_settings", table=f"{demo.keyspace}.blob_formats")
                assert forbidden.value.error.message == (
                    "forbidden: the tool compression_settings needs the scope cqlsh.report, which this token "
                    "does not carry (it carries cqlsh.read)")
                assert client.call("list_keyspaces").data["count"] > 0  # the session goes on
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "compression_settings", "arguments": {"table": "x.y"}}}
            answer = _post(server, read_only, call)
            assert answer.status_code == 403 and answer.json()["id"] == 5
            assert answer.headers["www-authenticate"] == (
                f'Bearer resource_metadata="{metadata_url}", error="insufficient_scope", '
                f'scope="cqlsh.report", error_description="{answer.json()["error"]["message"]}"')
            # Both scopes: the report too.
            with server.client({"Authorization": f"Bearer {issuer.token()}"}) as client:
                report = client.call("compression_settings", table=f"{demo.keyspace}.blob_formats").data
                assert report["command"] == "COMPRESSION SETTINGS" and report["table"] == "blob_formats"
            assert jwks.requests >= 1  # the keys came from the issuer's URL (their cache: test_oauth.py)
            # A token holder's body that stops: cut after the body timeout, before its scopes are read
            # or anything runs (the event waited on: the server closes the connection).
            slow = _connect(server.port)
            slow.sendall(_head(server.port, f"Authorization: Bearer {issuer.token()}\r\n", 300)
                         + b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", ')
            assert _told(slow).decode().endswith("closed: a request's body made no progress for 2 s\n")
            written = server.log.read_text()
    for token in (*refused, read_only):
        assert token not in written
    assert "OAuth: a token was refused: the token has expired (said once)" in written
    assert "closed 1 HTTP connection: a request's body made no progress for 2 s" in written
    assert "Traceback" not in written
