"""OAuth 2.1 for `cqlsh-ext mcp --http` (`--oauth-issuer`): the server is a resource server. It
takes the access tokens (JWTs) an authorization server issued, and issues none.

- **A token** (JwtVerifier, the SDK's TokenVerifier under its bearer backend) is taken when its
  header's `alg` is one of the allowed (never `none`, never HS*: the settings refuse them), it is
  signed by a key of the issuer's JWKS (Keys), its `iss` is the issuer exactly, its `aud` names the
  audience, and `exp` (and `nbf`, `iat` when present) are JSON numbers (RFC 7519's NumericDate: a
  string, a boolean or NaN is refused) that hold, LEEWAY_SECONDS of clocks' drift allowed.
  Its scopes are its `scope` claim (space-separated) or `scp` (a list: Okta, Entra ID).
- **The keys** (Keys): a file, read at start and again when it changes; or the issuer's https
  URL, fetched when first needed, again after KEYS_TTL, and for a key id it does not hold (a key
  rotated in) at most once each REFETCH_SECONDS; a fetch reads at most MAX_JWKS_BYTES within
  FETCH_SECONDS, follows no redirect and takes no compression. A failed fetch keeps the keys it had.
- **Each request's scope** (Guarded, the /mcp endpoint): what a request runs is in its JSON-RPC
  body, read here as both of the SDK's parsers read it (its transports' for the handshake
  revisions and for 2026-07-28); the protocol's side says which scope each needs (`Requirements`:
  a tool's call its tool's declared scope, tools.py; a request that reads no database needs a valid
  token only), and a tool that declares none is refused.
- **Refusals**: no token, or one refused, is 401 with `WWW-Authenticate: Bearer
  resource_metadata="...", scope="..."` (and `error="invalid_token"` with what was wrong: expired,
  another audience, another issuer, a key the JWKS does not hold, ...); a scope missing is 403 with
  `error="insufficient_scope"` and the scope; the issuer's keys unreadable is 503. Each body is a
  JSON-RPC error saying the same, which the SDK's client raises as it is.
- **The metadata** (RFC 9728): `GET /.well-known/oauth-protected-resource` (and at the resource's
  path below it, where RFC 9728 puts it: `/.well-known/oauth-protected-resource/mcp`), the SDK's
  handler: the resource, the issuer, the scopes the tools declare, the header as the one bearer method.

A token is never logged, echoed or kept (the AccessToken the SDK holds carries none); what is said
of a refused one names what was expected, never what the token held.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from cqlsh_ext.common.net import is_loopback
from cqlsh_ext.mcp_server import bounds, http_bounds
from cqlsh_ext.mcp_server.log import log

if TYPE_CHECKING:
    from cqlsh_ext.settings import McpSettings

#: Drift allowed between this host's clock and the issuer's, on `exp`, `nbf` and `iat`.
LEEWAY_SECONDS = 30
#: Keys fetched from a URL are fetched again after this long (a key the issuer retired goes).
KEYS_TTL = 600.0
#: A token naming a key the keys do not hold fetches them again, at most this often.
REFETCH_SECONDS = 60.0
#: A fetch of the keys: its time and its bytes at most (an issuer's JWKS is a few KB).
FETCH_SECONDS = 10.0
MAX_JWKS_BYTES = 256 << 10
_TOO_LARGE = f"more than {MAX_JWKS_BYTES >> 10} KiB: no JWKS is that large"
#: The JSON-RPC error code of a request refused by the HTTP side (the implementation's own range).
UNAUTHORIZED = -32001
#: RFC 9728's well-known path of the protected resource's metadata.
METADATA_PATH = "/.well-known/oauth-protected-resource"


class OAuthError(Exception):
    """An OAuth set-up that cannot serve (settings, the keys' file); str() is the one line."""


class TokenRefused(Exception):
    """A token refused; str() says why in words of what was expected, never of what it held."""


class KeysUnavailable(Exception):
    """The issuer's keys could not be read (a fetch failed and none are held); str() says why."""


@dataclass(frozen=True)
class Requirement:
    """What a request runs (`what`, in words) and the scope it needs; None: it declares none, and
    is refused."""

    what: str
    scope: str | None


class Requirements(Protocol):
    """What the protocol's side (server.Protocol) says of its requests."""

    #: Every scope a tool declares (the metadata's scopes_supported).
    scopes: tuple[str, ...]

    def requirement(self, method: str, params: dict[str, Any]) -> Requirement | None:
        """The scope a request needs; None: it reads nothing of the database (a valid token is enough)."""


@dataclass(frozen=True)
class OAuthOptions:
    issuer: str
    audience: str
    #: This server's URL as its clients reach it (the metadata's `resource`).
    resource: str
    algorithms: tuple[str, ...]
    keys: Keys = field(compare=False)

    @property
    def metadata_url(self) -> str:
        """Where the metadata is, as RFC 9728 builds it from the resource (its path below the well-known)."""
        from mcp.server.auth.routes import build_resource_metadata_url
        from pydantic import AnyHttpUrl

        return str(build_resource_metadata_url(AnyHttpUrl(self.resource)))


def options(settings: McpSettings, default_resource: str | None) -> OAuthOptions | None:
    """The OAuth options of the settings (None: no issuer, OAuth off), the keys' file read;
    `default_resource`: the --http address's URL (None: it names no address a client reaches).
    Raises OAuthError."""
    from urllib.parse import urlsplit

    if settings.oauth_issuer is None:
        given = [flag for flag, value in (("--oauth-jwks", settings.oauth_jwks),
                                          ("--oauth-audience", settings.oauth_audience),
                                          ("--oauth-resource", settings.oauth_resource)) if value]
        if given:
            raise OAuthError(f"{given[0]} goes with --oauth-issuer (the authorization server whose tokens "
                             "are taken)")
        return None
    if settings.oauth_jwks is None:
        raise OAuthError("--oauth-issuer needs --oauth-jwks FILE|URL: the issuer's public keys (the jwks_uri "
                         "its /.well-known/openid-configuration or oauth-authorization-server names)")
    resource = settings.oauth_resource or default_resource
    if resource is None:
        raise OAuthError("--oauth-resource URL is needed: the address clients reach this server at "
                         "(https://HOST:PORT/mcp; --http listens on every address)")
    parts = urlsplit(resource)
    if parts.scheme != "https" and not is_loopback(parts.hostname or ""):
        raise OAuthError(f"the resource {resource} is not https: serve TLS (--tls-cert, --tls-key), or name "
                         "the https address a proxy serves it at with --oauth-resource")
    keys = Keys(settings.oauth_jwks)
    keys.read_file()
    return OAuthOptions(settings.oauth_issuer, settings.oauth_audience or resource, resource,
                        settings.oauth_algorithms, keys)


# ------------------------------------------------------------------------------------ the keys


#: The key types a JWS algorithm's keys have.
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


class Keys:
    """The issuer's public keys (a JWKS): a file or an https URL (the module's docstring)."""

    def __init__(self, source: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.url = "://" in source
        self._clock = clock
        self._keys: list[dict[str, Any]] = []
        self._read_at = float("-inf")  # when the keys were last read
        self._tried_at = float("-inf")  # when a fetch was last tried
        self._stamp: tuple[int, int] | None = None  # the file's (mtime, size) when read
        self._lock: Any = None
        #: How many times the URL was fetched (tests read it).
        self.fetches = 0

    def read_file(self) -> None:
        """The keys of the file (none for a URL, fetched when first needed); raises OAuthError."""
        if self.url:
            return
        try:
            stat = os.stat(self.source)
            with open(self.source, "rb") as f:
                data = f.read(MAX_JWKS_BYTES + 1)
        except OSError as err:
            raise OAuthError(f"--oauth-jwks {self.source}: {err.strerror or err}") from None
        if len(data) > MAX_JWKS_BYTES:
            raise OAuthError(f"--oauth-jwks {self.source}: {_TOO_LARGE}")
        try:
            self._keys = signing_keys(data)
        except ValueError as err:
            raise OAuthError(f"--oauth-jwks {self.source}: {err}") from None
        self._stamp = (stat.st_mtime_ns, stat.st_size)
        self._read_at = self._clock()

    async def key(self, kid: str | None, algorithm: str) -> Any:
        """The public key a token's header names (by `kid`; without one, the only key there is),
        for `algorithm`: a cryptography key object. Raises TokenRefused, or KeysUnavailable."""
        found = self._find(kid)
        if found is None or self._clock() - self._read_at > KEYS_TTL:
            await self._refresh()
            found = self._find(kid)
        if found is None:
            which = ("the key its kid names" if kid is not None else
                     "its key (it names no kid, and the JWKS holds several)")
            raise TokenRefused(f"the token is signed by a key the issuer's keys do not hold: {which}")
        return _public_key(found, algorithm)

    def _find(self, kid: str | None) -> dict[str, Any] | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        return next((jwk for jwk in self._keys if jwk.get("kid") == kid), None)

    async def _refresh(self) -> None:
        if not self.url:
            self._reread_file()
            return
        import anyio

        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # one fetch at a time: the requests waiting take what it read
            if self._clock() - self._tried_at < REFETCH_SECONDS:
                if not self._keys:  # tried a moment ago, in vain
                    raise KeysUnavailable(f"the issuer's keys ({self.source}) could not be fetched; tried "
                                          f"again within {REFETCH_SECONDS:.0f} s")
                return
            self._tried_at = self._clock()
            try:
                self._keys = signing_keys(await self._fetch())
                self._read_at = self._clock()
            except (KeysUnavailable, ValueError) as err:
                why = f"the issuer's keys ({self.source}) could not be fetched: {err}"
                log(f"OAuth: {why}" + ("; the keys fetched before are kept" if self._keys else ""))
                if not self._keys:
                    raise KeysUnavailable(why) from None

    async def _fetch(self) -> bytes:
        import httpx2

        self.fetches += 1
        data = bytearray()
        try:
            async with httpx2.AsyncClient(timeout=FETCH_SECONDS, follow_redirects=False) as client:
                headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
                async with client.stream("GET", self.source, headers=headers) as response:
                    if response.status_code != 200:
                        raise KeysUnavailable(f"HTTP {response.status_code}")
                    if response.headers.get("content-encoding", "identity").lower() != "identity":
                        raise KeysUnavailable("the answer is compressed, which was not asked for")
                    async for chunk in response.aiter_raw():
                        data += chunk
                        if len(data) > MAX_JWKS_BYTES:
                            raise KeysUnavailable(_TOO_LARGE)
        except httpx2.HTTPError as err:
            raise KeysUnavailable(f"{type(err).__name__}: {err}") from None
        return bytes(data)

    def _reread_file(self) -> None:
        """The file read again when it changed since (a key rotated in); its keys kept if it cannot be."""
        try:
            stat = os.stat(self.source)
        except OSError:
            return
        if (stat.st_mtime_ns, stat.st_size) == self._stamp:
            self._read_at = self._clock()
            return
        try:
            self.read_file()
        except OAuthError as err:
            log(f"OAuth: {err}; the keys read before are kept")


def signing_keys(data: bytes) -> list[dict[str, Any]]:
    """The public signing keys of a JWKS document (asymmetric keys whose `use`, if said, is `sig`);
    raises ValueError when it is no JWKS or holds none."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise ValueError("not JSON: a JWKS is a JSON object {\"keys\": [...]}") from None
    given = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(given, list):
        raise ValueError("not a JWKS: a JSON object {\"keys\": [...]}")
    keys = [jwk for jwk in given if isinstance(jwk, dict) and jwk.get("kty") in ("RSA", "EC", "OKP")
            and jwk.get("use", "sig") == "sig" and not any(part in jwk for part in ("d", "p", "q", "k"))]
    if not keys:
        raise ValueError("the JWKS holds no public signing key (RSA, EC or OKP)")
    return keys


def _public_key(jwk: dict[str, Any], algorithm: str) -> Any:
    """The key object of `jwk` for `algorithm`; TokenRefused when the key is not one for it (its type,
    or the `alg` it names)."""
    from jwt import PyJWK, PyJWTError

    if jwk.get("kty") != _KEY_TYPES.get(algorithm[:2]) or jwk.get("alg", algorithm) != algorithm:
        raise TokenRefused(f"the token's key is not one for its algorithm ({algorithm})")
    try:
        return PyJWK(jwk, algorithm).key
    except PyJWTError:
        raise TokenRefused(f"the token's key is not one for its algorithm ({algorithm})") from None


# ---------------------------------------------------------------------------------- the tokens


#: Why the request's token was refused, for the answer (the bearer backend hands back None only).
_REFUSAL: ContextVar[Exception | None] = ContextVar("cqlsh_ext_oauth_refusal", default=None)


class JwtVerifier:
    """The SDK's TokenVerifier for the issuer's access tokens (the module's docstring)."""

    def __init__(self, options: OAuthOptions, clock: Callable[[], float] = time.time) -> None:
        self.options = options
        self._clock = clock
        self._said: set[str] = set()

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        try:
            claims = await self.claims(token)
        except (TokenRefused, KeysUnavailable) as err:
            _REFUSAL.set(err)
            if isinstance(err, TokenRefused) and str(err) not in self._said:  # each reason once: a short log
                self._said.add(str(err))
                log(f"OAuth: a token was refused: {err} (said once)")
            return None
        client = next((str(claims[name]) for name in ("client_id", "azp", "cid", "sub") if claims.get(name)),
                      "")
        # The SDK's backend compares expires_at with its clock without leeway: the leeway is said in it.
        return AccessToken(token="", client_id=client, scopes=scopes_of(claims),
                           expires_at=int(claims["exp"]) + LEEWAY_SECONDS, resource=self.options.audience,
                           subject=str(claims["sub"]) if claims.get("sub") else None,
                           claims={"iss": claims["iss"]})

    async def claims(self, token: str) -> dict[str, Any]:
        """The token's claims, verified; raises TokenRefused (or KeysUnavailable)."""
        import jwt

        options = self.options
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("the bearer token is not a JWT (a signed JSON Web Token)") from None
        algorithm = header.get("alg")
        if algorithm not in options.algorithms:
            raise TokenRefused("the token is not signed with an algorithm this server takes "
                          f"({', '.join(options.algorithms)})")
        kid = header.get("kid")
        key = await options.keys.key(kid if isinstance(kid, str) else None, algorithm)
        try:
            # The times are checked below: PyJWT reads them with int(), which takes "9999999999"
            # (a string) and true, where RFC 7519 says a NumericDate is a JSON number.
            claims: dict[str, Any] = jwt.decode(
                token, key, algorithms=[algorithm], audience=options.audience, issuer=options.issuer,
                options={"require": ["exp", "iss", "aud"], "verify_exp": False, "verify_nbf": False,
                         "verify_iat": False})
        except jwt.InvalidAudienceError:
            raise TokenRefused(f"the token is not issued for this server: its aud does not name "
                          f"{options.audience}") from None
        except jwt.InvalidIssuerError:
            raise TokenRefused(f"the token is not issued by {options.issuer}") from None
        except jwt.MissingRequiredClaimError as err:
            raise TokenRefused(f"the token has no {err.claim} claim") from None
        except jwt.InvalidSignatureError:
            raise TokenRefused("the token's signature does not verify with the issuer's key") from None
        except jwt.PyJWTError:
            raise TokenRefused("the token cannot be read as a signed JWT") from None
        self._check_times(claims)
        return claims

    def _check_times(self, claims: dict[str, Any]) -> None:
        """`exp`, and `nbf` and `iat` when present: NumericDates (a JSON number, finite: never a
        string, a boolean, NaN or an infinity) that hold now, LEEWAY_SECONDS allowed; raises
        TokenRefused."""
        import math

        from cqlsh_ext.common.jsonenc import float_name

        for name in ("exp", "nbf", "iat"):
            value = claims.get(name)
            if name in claims and (isinstance(value, bool) or not isinstance(value, (int, float))
                                   or isinstance(value, float) and float_name(value) is not None):
                raise TokenRefused(f"the token's {name} is not a NumericDate (RFC 7519: a JSON number of "
                                   "seconds since 1970)")
        now = self._clock()
        if claims["exp"] <= now - LEEWAY_SECONDS:
            raise TokenRefused("the token has expired")
        if any(claims.get(name, -math.inf) > now + LEEWAY_SECONDS for name in ("nbf", "iat")):
            raise TokenRefused("the token is not valid yet (its nbf or iat is in the future)")


def scopes_of(claims: dict[str, Any]) -> list[str]:
    """A token's scopes: its `scope` claim (space-separated, RFC 9068), or `scp` (a list, or a string)."""
    given = claims.get("scope", claims.get("scp"))
    if isinstance(given, str):
        return given.split()
    if isinstance(given, list):
        return [scope for scope in given if isinstance(scope, str)]
    return []


# --------------------------------------------------------------------------------- the endpoint


def protect(endpoint: Any, options: OAuthOptions,
            requirements: Requirements) -> tuple[Any, list[Any], list[Any]]:
    """The /mcp endpoint guarded, the middleware that reads a request's token (the SDK's bearer
    backend and auth context), and the metadata's routes."""
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware

    middleware = [Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(JwtVerifier(options))),
                  Middleware(AuthContextMiddleware)]
    return Guarded(endpoint, options, requirements), middleware, metadata_routes(options, requirements.scopes)


def metadata_routes(options: OAuthOptions, scopes: tuple[str, ...]) -> list[Any]:
    """RFC 9728's document, at the well-known path and at the resource's path below it."""
    from urllib.parse import urlsplit

    from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
    from mcp.server.auth.routes import cors_middleware
    from mcp.shared.auth import ProtectedResourceMetadata
    from starlette.routing import Route

    metadata = ProtectedResourceMetadata.model_validate({
        "resource": options.resource, "authorization_servers": [options.issuer],
        "scopes_supported": list(scopes), "bearer_methods_supported": ["header"],
        "resource_name": "cqlsh-ext mcp"})
    endpoint = cors_middleware(ProtectedResourceMetadataHandler(metadata).handle, ["GET", "OPTIONS"])
    paths = dict.fromkeys([METADATA_PATH, urlsplit(options.metadata_url).path])
    return [Route(path, endpoint=endpoint, methods=["GET", "OPTIONS"]) for path in paths]


class Guarded:
    """The /mcp endpoint under OAuth: a request without a token taken is answered 401, one whose
    token lacks a scope its body's requests need 403, the keys unreadable 503; others go on to `app`."""

    def __init__(self, app: Any, options: OAuthOptions, requirements: Requirements) -> None:
        self.app = app
        self.options = options
        self.requirements = requirements

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            await self._unauthorized(scope, send)
            return
        if scope.get("method") != "POST":  # a GET's stream, a DELETE: they run nothing
            await self.app(scope, receive, send)
            return
        # A body past the bound, or one that did not end, runs nothing: the app's reading of it
        # (transport._WholeBody) answers 413, or nothing to a client gone.
        received, body, ended = await http_bounds.read_body(receive, bounds.MAX_MESSAGE_BYTES)
        carried = set(user.scopes)
        for request_id, method, params in requests_of(body) if body is not None and ended else ():
            needed = self.requirements.requirement(method, params)
            if needed is None or needed.scope in carried:
                continue
            if needed.scope is None:
                said = f"forbidden: {needed.what} declares no OAuth scope, so no token may run it"
                challenge = f'error="insufficient_scope", error_description="{said}"'
            else:
                said = (f"forbidden: {needed.what} needs the scope {needed.scope}, which this token does not "
                        f"carry (it carries {', '.join(sorted(carried)) or 'none of ours'})")
                challenge = (f'error="insufficient_scope", scope="{needed.scope}", '
                             f'error_description="{said}"')
            metadata = f'resource_metadata="{self.options.metadata_url}"'
            await refuse(send, 403, f"Bearer {metadata}, {challenge}", said, request_id)
            return
        await self.app(scope, http_bounds.replay(received, receive), send)

    async def _unauthorized(self, scope: Any, send: Any) -> None:
        refusal = _REFUSAL.get()
        if isinstance(refusal, KeysUnavailable):
            await refuse(send, 503, None, f"unavailable: {refusal}", headers=[(b"retry-after", b"60")])
            return
        scopes = " ".join(self.requirements.scopes)
        metadata = f'resource_metadata="{self.options.metadata_url}", scope="{scopes}"'
        if refusal is None:
            given = any(name.lower() == b"authorization" for name, _ in scope.get("headers", ()))
            issuer = self.options.issuer
            said = ("unauthorized: the request's Authorization header is no bearer token (Authorization: "
                    f"Bearer <an access token of {issuer}>)" if given else
                    f"unauthorized: this server needs an OAuth access token of {issuer} on every request "
                    "(Authorization: Bearer <token>), and the request carried none")
            challenge = f"Bearer {metadata}"  # RFC 6750 3.1: no error code for a request without credentials
        else:
            said = f"unauthorized: {refusal}"
            challenge = f'Bearer {metadata}, error="invalid_token", error_description="{said}"'
        await refuse(send, 401, challenge, said)


async def refuse(send: Any, status: int, challenge: str | None, said: str, request_id: Any = None,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer `status` with a JSON-RPC error saying `said` (the SDK's client raises it as it is) and
    `WWW-Authenticate: challenge` when there is one."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id if isinstance(request_id, (str, int)) else None,
                       "error": {"code": UNAUTHORIZED, "message": said}}).encode()
    sent = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            *(headers or [])]
    if challenge is not None:
        sent.append((b"www-authenticate", challenge.encode("latin-1", "replace")))
    await send({"type": "http.response.start", "status": status, "headers": sent})
    await send({"type": "http.response.body", "body": body})


def requests_of(body: bytes) -> list[tuple[Any, str, dict[str, Any]]]:
    """The requests a body holds (id, method, params), as each of the SDK's parsers reads it: its
    Streamable HTTP transport's for the handshake revisions (pydantic_core) and for 2026-07-28 (the
    json module); a body one of them reads otherwise (a key given twice) needs the scopes of both."""
    import pydantic_core

    found: list[tuple[Any, str, dict[str, Any]]] = []
    for parse in (pydantic_core.from_json, json.loads):
        try:
            value = parse(body)
        except (ValueError, RecursionError):
            continue  # the SDK refuses it too, with this parser's error
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                params = item.get("params")
                found.append((item.get("id"), item["method"], params if isinstance(params, dict) else {}))
    return found
