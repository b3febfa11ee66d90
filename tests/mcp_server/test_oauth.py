"""OAuth 2.1 for `cqlsh-ext mcp --http` in pieces (no server): access tokens signed here with a local
issuer's keys (tests/mcp_server/issuer.py), taken only when everything holds and refused in words of
what was expected; the issuer's keys from a file or from a URL on loopback, fetched again within
bounds; the settings that cannot serve; each request's scope as the tools declare it, a tool that
declares none refused; the /mcp endpoint's 401, 403 and pass-through as the ASGI app answers them.
The same over real HTTP against the server: test_oauth_http.py; a set-up `cqlsh-ext mcp` refuses to
serve, in one line."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from shell_runner import CQLSH_EXT, isolated_env

from cqlsh_ext.features.feature import READ, REPORT
from cqlsh_ext.mcp_server import oauth
from cqlsh_ext.mcp_server.calls import Calls
from cqlsh_ext.mcp_server.guard import Guard
from cqlsh_ext.mcp_server.policy import Policy
from cqlsh_ext.mcp_server.server import Protocol, Setup
from cqlsh_ext.mcp_server.tools import TOOLS, Tool
from cqlsh_ext.settings import McpSettings, SettingError, parse_algorithms, parse_url

from .issuer import AUDIENCE, ISSUER, Issuer, JwksServer, ec_key, hmac_with_public_key, unsigned

RESOURCE = "http://127.0.0.1:8765/mcp"


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


def _options(issuer: Issuer, source: str | Path, keys: oauth.Keys | None = None,
             algorithms: tuple[str, ...] = ("RS256", "ES256")) -> oauth.OAuthOptions:
    settings = McpSettings(oauth_issuer=ISSUER, oauth_jwks=str(source), oauth_audience=AUDIENCE,
                           oauth_algorithms=algorithms)
    options = oauth.options(settings, RESOURCE)
    assert options is not None
    return replace(options, keys=keys) if keys is not None else options


def _verdict(options: oauth.OAuthOptions, token: str) -> str:
    """What the verifier says of `token`: 'taken' with its scopes, or why it refused it."""
    async def verify() -> str:
        try:
            claims = await oauth.JwtVerifier(options).claims(token)
        except (oauth.TokenRefused, oauth.KeysUnavailable) as err:
            assert token not in str(err)
            return str(err)
        return f"taken: {' '.join(oauth.scopes_of(claims))}"

    return anyio.run(verify)


_NOT_A_DATE = "the token's {} is not a NumericDate (RFC 7519: a JSON number of seconds since 1970)"


def test_a_token_is_taken_only_when_everything_holds(issuer: Issuer, tmp_path: Path) -> None:
    options = _options(issuer, issuer.write_jwks(tmp_path / "jwks.json"))
    rsa = issuer.keys[1]
    assert _verdict(options, issuer.token()) == "taken: cqlsh.read cqlsh.report"
    assert _verdict(options, issuer.token("cqlsh.read", key=rsa)) == "taken: cqlsh.read"
    # Expired a moment ago: within the clocks' leeway; a minute ago: refused.
    assert _verdict(options, issuer.token(lifetime=-oauth.LEEWAY_SECONDS // 2)).startswith("taken")
    refused = {
        "expired": (issuer.token(lifetime=-60), "the token has expired"),
        "not yet": (issuer.token(nbf=issuer.claims()["iat"] + 600), "the token is not valid yet"),
        "audience": (issuer.token(aud="api://another-service"),
                     f"the token is not issued for this server: its aud does not name {AUDIENCE}"),
        "issuer": (issuer.token(iss="https://login.example.test/realms/other"),
                   f"the token is not issued by {ISSUER}"),
        "no expiry": (issuer.token(exp=None), "the token has no exp claim"),
        "no audience": (issuer.token(aud=None), "the token has no aud claim"),
        "unknown key": (issuer.token(key=ec_key("ec-unpublished")),
                        "the token is signed by a key the issuer's keys do not hold: the key its kid names"),
        "forged under a published kid": (issuer.token(key=replace(ec_key("x"), kid="ec-1")),
                                         "the token's signature does not verify with the issuer's key"),
        "alg none": (unsigned(issuer.claims()),
                     "the token is not signed with an algorithm this server takes (RS256, ES256)"),
        "HS256 keyed by the public key": (hmac_with_public_key(issuer, rsa),
                                          "the token is not signed with an algorithm this server takes"),
        "an RSA key for ES256": (issuer.token(key=replace(issuer.keys[0], kid=rsa.kid)),
                                 "the token's key is not one for its algorithm (ES256)"),
        "not a JWT": ("0123456789abcdef-not-a-jwt", "the bearer token is not a JWT"),
        # RFC 7519: a NumericDate is a JSON number (PyJWT's int() took a string and a boolean).
        "exp a string": (issuer.token(exp=str(issuer.claims()["exp"])), _NOT_A_DATE.format("exp")),
        "exp far off as a string": (issuer.token(exp="99999999999"), _NOT_A_DATE.format("exp")),
        "exp true": (issuer.token(exp=True), _NOT_A_DATE.format("exp")),
        "exp NaN": (issuer.token(exp=float("nan")), _NOT_A_DATE.format("exp")),
        "exp Infinity": (issuer.token(exp=float("inf")), _NOT_A_DATE.format("exp")),
        "exp an object": (issuer.token(exp={"seconds": 1}), _NOT_A_DATE.format("exp")),
        "nbf a string": (issuer.token(nbf="0"), _NOT_A_DATE.format("nbf")),
        "iat true": (issuer.token(iat=True), _NOT_A_DATE.format("iat")),
        "iat NaN": (issuer.token(iat=float("nan")), _NOT_A_DATE.format("iat")),
    }
    for case, (token, said) in refused.items():
        assert _verdict(options, token).startswith(said), case
    # A NumericDate may have a fraction (RFC 7519), and need not fit a float.
    now = issuer.claims()["iat"]
    assert _verdict(options, issuer.token(exp=now + 300.5, nbf=now - 0.5)).startswith("taken")
    assert _verdict(options, issuer.token(exp=10 ** 400)).startswith("taken")
    # The allow list is the settings': ES256 only refuses a token signed RS256 by a published key.
    assert _verdict(replace(options, algorithms=("ES256",)), issuer.token(key=rsa)).startswith(
        "the token is not signed with an algorithm this server takes (ES256)")


def test_the_sdk_gets_the_scopes_and_never_the_token(issuer: Issuer, tmp_path: Path) -> None:
    options = _options(issuer, issuer.write_jwks(tmp_path / "jwks.json"))
    token = issuer.token("cqlsh.read other.scope")
    access = anyio.run(oauth.JwtVerifier(options).verify_token, token)
    assert access.scopes == ["cqlsh.read", "other.scope"] and access.client_id == "claude-connector"
    assert access.subject == "assistant-7" and access.claims == {"iss": ISSUER}
    assert token not in access.model_dump_json() and access.token == ""
    assert anyio.run(oauth.JwtVerifier(options).verify_token, issuer.token(aud="x")) is None
    # scp: Okta's and Entra ID's list (or string) of scopes
    assert oauth.scopes_of({"scp": ["cqlsh.read", 7, "cqlsh.report"]}) == ["cqlsh.read", "cqlsh.report"]
    assert oauth.scopes_of({"scp": "cqlsh.read"}) == ["cqlsh.read"] and oauth.scopes_of({}) == []


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_keys_from_a_url_are_cached_and_fetched_again_within_bounds(issuer: Issuer) -> None:
    rotated = ec_key("ec-2")
    clock = Clock()
    with JwksServer(issuer.jwks()) as served:
        keys = oauth.Keys(served.url, clock)
        options = _options(issuer, served.url, keys)
        assert served.requests == 0  # fetched when first needed, not at start
        for _ in range(5):
            assert _verdict(options, issuer.token()).startswith("taken")
        assert served.requests == 1
        # A key the issuer rotates in: a token signed by it before the keys are fetched again is
        # refused, and a burst of unknown kids fetches at most once a minute.
        served.document = issuer.jwks([*issuer.keys, rotated])
        clock.now += 1
        for _ in range(5):
            assert _verdict(options, issuer.token(key=rotated)).startswith("the token is signed by a key")
        assert served.requests == 1
        clock.now += oauth.REFETCH_SECONDS
        assert _verdict(options, issuer.token(key=rotated)).startswith("taken")
        assert served.requests == 2
        for n in range(5):
            said = _verdict(options, issuer.token(key=ec_key(f"random-{n}")))
            assert said.startswith("the token is signed"), said
        assert served.requests == 2
        # After KEYS_TTL the keys are fetched again (a retired key goes); a fetch that fails keeps them.
        served.status = 500
        clock.now += oauth.KEYS_TTL + 1
        assert _verdict(options, issuer.token()).startswith("taken")
        assert served.requests == 3
        # A server without keys yet, whose fetch fails: 503's reason, and no second fetch at once.
        fresh = _options(issuer, served.url, oauth.Keys(served.url, clock))
        for _ in range(3):
            said = _verdict(fresh, issuer.token())
            assert said.startswith(f"the issuer's keys ({served.url}) could not be fetched"), said
        assert served.requests == 4
        served.status, served.document = 200, b" " * (oauth.MAX_JWKS_BYTES + 1)
        clock.now += oauth.REFETCH_SECONDS
        assert _verdict(fresh, issuer.token()).endswith("more than 256 KiB: no JWKS is that large")


def test_keys_from_a_file_are_read_again_when_it_changes(issuer: Issuer, tmp_path: Path) -> None:
    path = issuer.write_jwks(tmp_path / "jwks.json")
    options = _options(issuer, path)
    rotated = ec_key("ec-2")
    assert _verdict(options, issuer.token(key=rotated)).startswith("the token is signed by a key")
    path.write_text(json.dumps(issuer.jwks([*issuer.keys, rotated])))
    assert _verdict(options, issuer.token(key=rotated)).startswith("taken")
    path.write_text("{not json")  # a file being written: the keys read before stay
    assert _verdict(options, issuer.token()).startswith("taken")


@pytest.mark.parametrize(("settings", "said"), [
    ({"oauth_jwks": "keys.json"}, "--oauth-jwks goes with --oauth-issuer"),
    ({"oauth_issuer": ISSUER}, "--oauth-issuer needs --oauth-jwks FILE|URL"),
    ({"oauth_issuer": ISSUER, "oauth_jwks": "/nonexistent/jwks.json"},
     "--oauth-jwks /nonexistent/jwks.json: No such file or directory"),
    ({"oauth_issuer": ISSUER, "oauth_jwks": "{dir}/not-json"}, "not JSON: a JWKS is a JSON object"),
    ({"oauth_issuer": ISSUER, "oauth_jwks": "{dir}/secret"}, "the JWKS holds no public signing key"),
    ({"oauth_issuer": ISSUER, "oauth_jwks": "{dir}/private"}, "the JWKS holds no public signing key"),
    ({"oauth_issuer": ISSUER, "oauth_jwks": "{dir}/jwks.json", "oauth_resource": "http://10.0.0.5:8765/mcp"},
     "the resource http://10.0.0.5:8765/mcp is not https"),
])
def test_a_set_up_that_cannot_serve_is_one_line(issuer: Issuer, tmp_path: Path, settings: dict[str, str],
                                                 said: str) -> None:
    (tmp_path / "not-json").write_text("{")
    (tmp_path / "secret").write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}]}))
    private = {**issuer.keys[0].jwk(), "d": "AAAA"}  # a private key published by mistake: never used
    (tmp_path / "private").write_text(json.dumps({"keys": [private]}))
    issuer.write_jwks(tmp_path / "jwks.json")
    given = McpSettings(**{name: value.format(dir=tmp_path) for name, value in settings.items()})
    with pytest.raises(oauth.OAuthError) as err:
        oauth.options(given, RESOURCE)
    assert said in str(err.value)


def test_the_settings_refuse_what_signs_nothing_or_with_a_secret() -> None:
    assert parse_algorithms("RS256, ES256 PS256") == ("RS256", "ES256", "PS256")
    for text, said in (("none", "'none' signs nothing"), ("RS256,HS256", "HS256 signs with a shared secret"),
                       ("RS257", "unknown signing algorithm 'RS257' (did you mean RS256?)"),
                       ("", "no signing")):
        with pytest.raises(SettingError) as err:
            parse_algorithms(text)
        assert str(err.value).startswith(said)
    assert parse_url("https://login.example.test/realms/ops") == "https://login.example.test/realms/ops"
    assert parse_url("http://localhost:8080/realms/dev") == "http://localhost:8080/realms/dev"
    with pytest.raises(SettingError, match="https is needed"):
        parse_url("http://login.example.test/realms/ops")
    with pytest.raises(SettingError, match="not a URL"):
        parse_url("login.example.test")


# ------------------------------------------------------------------------------- each request's scope


def _protocol() -> Protocol:
    return Protocol(Setup(Calls(60, 32768), Guard(Policy())))


def test_each_request_needs_the_scope_its_tool_declares() -> None:
    protocol = _protocol()
    assert protocol.scopes == (READ, REPORT)
    need = protocol.requirement
    assert all(tool.scope in (READ, REPORT) for tool in TOOLS.values())  # every tool declares one
    assert need("tools/call", {"name": "query"}) == oauth.Requirement("the tool query", READ)
    assert need("tools/call", {"name": "compression_advise"}) == \
        oauth.Requirement("the tool compression_advise", REPORT)
    assert need("resources/read", {"uri": "cqlsh-ext://payload/shop/orders/data"}) == oauth.Requirement(
        "a resource read by describe_payload", TOOLS["describe_payload"].scope)
    assert need("resources/list", {}) == oauth.Requirement("resources/list (it runs list_tables)", READ)
    for method, params in (("tools/list", {}), ("initialize", {}), ("prompts/get", {"name": "x"}),
                           ("tools/call", {"name": "no_such_tool"}), ("resources/read", {"uri": "file:///etc"})):
        assert need(method, params) is None, method  # reads no database, or names nothing that runs


def test_a_body_is_read_as_both_of_the_sdks_parsers_read_it() -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "query"}}
    assert oauth.requests_of(json.dumps(call).encode()) == [(3, "tools/call", {"name": "query"})] * 2
    assert oauth.requests_of(json.dumps([call, {**call, "id": 4}]).encode())[1][0] == 4  # a batch: each
    assert oauth.requests_of(b"[" * 100_000) == []  # neither reads it: the SDK answers its parse error
    # A lone surrogate's escape: the json module (the 2026-07-28 transport's) reads it, pydantic_core
    # (the handshake transport's) refuses it; the request is read as the one that reads it sees it.
    lone = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "query", "x": "\\ud800"}}'
    assert [method for _, method, _ in oauth.requests_of(lone)] == ["tools/call"]


class Inner:
    """The SDK's endpoint's stand-in: what reached it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"served"})


def _app(options: oauth.OAuthOptions, protocol: Protocol, inner: Inner) -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Route

    endpoint, middleware, routes = oauth.protect(inner, options, protocol)
    return Starlette(routes=[Route("/mcp", endpoint=endpoint, methods=["GET", "POST"]), *routes],
                     middleware=middleware)


def _client(app: Any) -> httpx2.AsyncClient:
    """An HTTP client of `app` in this process, as a client of 127.0.0.1:8765 reaches it."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://127.0.0.1:8765")


def _post(app: Any, token: str | None, body: Any) -> httpx2.Response:
    async def go() -> httpx2.Response:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        async with _client(app) as client:
            return await client.post("/mcp", content=json.dumps(body).encode(), headers=headers)

    return anyio.run(go)


def _call(name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def test_the_endpoint_answers_401_403_and_lets_the_rest_through(issuer: Issuer, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    options = _options(issuer, issuer.write_jwks(tmp_path / "jwks.json"))
    inner = Inner()
    app = _app(options, _protocol(), inner)
    metadata = 'Bearer resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"'
    none = _post(app, None, _call("query"))
    assert none.status_code == 401 and none.headers["www-authenticate"] == (
        f'{metadata}, scope="cqlsh.read cqlsh.report"')
    assert none.json()["error"]["message"].startswith(
        f"unauthorized: this server needs an OAuth access token of {ISSUER}")
    expired = _post(app, issuer.token(lifetime=-60), _call("query"))
    assert expired.status_code == 401 and expired.headers["www-authenticate"].endswith(
        'error="invalid_token", error_description="unauthorized: the token has expired"')
    read_only = issuer.token("cqlsh.read")
    forbidden = _post(app, read_only, _call("compression_stats"))
    assert forbidden.status_code == 403
    assert forbidden.headers["www-authenticate"].startswith(f'{metadata}, error="insufficient_scope", '
                                                           'scope="cqlsh.report"')
    assert forbidden.json() == {"jsonrpc": "2.0", "id": 9, "error": {"code": oauth.UNAUTHORIZED, "message": (
        "forbidden: the tool compression_stats needs the scope cqlsh.report, which this token does not carry "
        "(it carries cqlsh.read)")}}
    assert inner.bodies == []  # nothing refused reached the SDK
    served = _post(app, read_only, _call("query"))
    assert served.status_code == 200
    assert inner.bodies == [json.dumps(_call("query")).encode()]  # the body as it came, whole
    assert _post(app, read_only, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 200
    # A tool that declares no scope is refused to every token, whatever scopes it carries.
    undeclared = Tool("undeclared", "Undeclared", "A tool added without its scope.", {}, (),
                      lambda work, arguments: None)  # type: ignore[arg-type,return-value]
    monkeypatch.setitem(TOOLS, "undeclared", undeclared)
    refused = _post(_app(options, _protocol(), inner), issuer.token(), _call("undeclared"))
    assert refused.status_code == 403 and refused.json()["error"]["message"] == (
        "forbidden: the tool undeclared declares no OAuth scope, so no token may run it")
    assert len(inner.bodies) == 2


def test_keys_the_issuer_does_not_give_are_503_not_401(issuer: Issuer) -> None:
    with JwksServer(issuer.jwks()) as served:
        served.status = 503
        options = _options(issuer, served.url, oauth.Keys(served.url))
        answer = _post(_app(options, _protocol(), Inner()), issuer.token(), _call("query"))
    assert answer.status_code == 503 and answer.headers["retry-after"] == "60"
    assert answer.json()["error"]["message"] == (
        f"unavailable: the issuer's keys ({served.url}) could not be fetched: HTTP 503")


def test_the_metadata_document(issuer: Issuer, tmp_path: Path) -> None:
    options = _options(issuer, issuer.write_jwks(tmp_path / "jwks.json"))
    app = _app(options, _protocol(), Inner())

    async def get(path: str) -> httpx2.Response:
        async with _client(app) as client:
            return await client.get(path)

    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        response = anyio.run(get, path)
        assert response.status_code == 200, path
        assert response.json() == {"resource": RESOURCE, "authorization_servers": [ISSUER],
                                   "scopes_supported": ["cqlsh.read", "cqlsh.report"],
                                   "bearer_methods_supported": ["header"], "resource_name": "cqlsh-ext mcp"}


@pytest.mark.parametrize(("args", "said"), [
    (["--oauth-issuer", ISSUER], "--oauth-issuer needs --oauth-jwks FILE|URL"),
    (["--oauth-issuer", "http://login.example.test/realms/ops", "--oauth-jwks", "k.json"],
     "--oauth-issuer: http://login.example.test/realms/ops: https is needed (http only on a loopback"),
    (["--oauth-issuer", ISSUER, "--oauth-jwks", "/nonexistent/jwks.json"],
     "--oauth-jwks /nonexistent/jwks.json: No such file or directory"),
    (["--oauth-issuer", ISSUER, "--oauth-jwks", "{jwks}", "--oauth-algorithms", "HS256"],
     "--oauth-algorithms: HS256 signs with a shared secret"),
    (["--oauth-issuer", ISSUER, "--oauth-jwks", "{jwks}", "--token", "t" * 20],
     "--oauth-issuer takes OAuth access tokens instead of one token: give either, not both"),
    (["--oauth-issuer", ISSUER, "--oauth-jwks", "{jwks}", "--http", "0.0.0.0:8765", "--private-network"],
     "--oauth-resource URL is needed"),
])
def test_an_oauth_set_up_that_cannot_serve_is_one_line(args: list[str], said: str, tmp_path: Path) -> None:
    jwks = Issuer().write_jwks(tmp_path / "jwks.json")
    given = [arg.format(jwks=jwks) for arg in args]
    if "--http" not in given:
        given += ["--http", "127.0.0.1:1"]
    run = subprocess.run([CQLSH_EXT, "mcp", "127.0.0.1", "1", *given], capture_output=True, text=True,
                         env=isolated_env(tmp_path), timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip() and "warning:" not in line]
    assert lines == [lines[0]] and lines[0].startswith(f"cqlsh-ext mcp: {said}"), run.stderr


def test_the_oauth_flags_go_with_http(tmp_path: Path) -> None:
    run = subprocess.run([CQLSH_EXT, "mcp", "127.0.0.1", "1", "--oauth-issuer", ISSUER], capture_output=True,
                         text=True, env=isolated_env(tmp_path), timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and "--oauth-* and --private-network go with --http" in run.stderr
