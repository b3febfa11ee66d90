"""How the protocol reaches the client: stdio (the default), or the SDK's Streamable HTTP transport
(`--http [HOST:]PORT`, at /mcp).

stdio: the protocol's own file descriptors (cli.py took them), read a line (a message) at a time,
each at most bounds.MAX_MESSAGE_BYTES: a longer `tools/call` is answered with a one-line refusal
(the message is read to its end without being kept), anything else longer is dropped and logged. A
line the SDK cannot read as a JSON-RPC message (not JSON; JSON nested deeper than its parser's
recursion limit, about 200 levels) is answered with a JSON-RPC parse error carrying the request's id
when its first bytes name one (the SDK drops such a line without a word, and its client would wait
for an answer forever); HTTP answers the same with 400 and the error, the SDK's own.

HTTP: the SDK's session manager and ASGI app (mcp.server.streamable_http_manager) under uvicorn,
with the SDK's bound on a request body (4 MiB: 413 past it) and its DNS-rebinding protection on a
loopback address. `--token` (or CQLSH_EXT_MCP_TOKEN, or --token-file) requires `Authorization:
Bearer <token>` on every request, checked by the SDK's bearer backend against the one token in
constant time: without it, 401 with a WWW-Authenticate header (RFC 6750) and a JSON-RPC error as the
body, which the SDK's client hands its caller as the error it is (a body of another shape it reads
as "Server returned an error response"). TLS with --tls-cert and --tls-key; --tls-client-ca also asks every
client for a certificate that CA signed (mutual TLS). --oauth-issuer takes OAuth 2.1 access tokens
(JWTs) of an authorization server instead of the one token, each request's scope checked and the
protected resource's metadata served (oauth.py). An address that is not loopback needs a token
(or OAuth), and TLS unless --private-network says the network is the operator's own (a Compose network).

Each HTTP connection's request head and body are bounded in time (a body that makes no progress
for --http-body-timeout seconds is cut), connections that have not authenticated cannot hold the
server's slots, and one client address's connections are bounded in number (http_bounds.py). A
POST's body is read whole before the SDK sees it: one that did not end (its client went, or the
body timeout closed the connection) reaches nothing and is said in one line, not a traceback.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.net import is_loopback
from cqlsh_ext.mcp_server import bounds, http_bounds, oauth

if TYPE_CHECKING:
    from cqlsh_ext.mcp_server.oauth import OAuthOptions, Requirements

#: The token's environment variable (a command line is visible to other users of the machine).
TOKEN_ENV = "CQLSH_EXT_MCP_TOKEN"
#: Where the SDK serves Streamable HTTP.
PATH = "/mcp"


class TransportError(Exception):
    """An HTTP set-up that cannot serve; str() is the one line."""


@dataclass(frozen=True)
class HttpOptions:
    host: str
    port: int
    token: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    private_network: bool = False
    #: OAuth 2.1 access tokens instead of the one token (oauth.py).
    oauth: OAuthOptions | None = None
    #: A request body that makes no progress this long is cut (--http-body-timeout).
    body_seconds: float = http_bounds.BODY_SECONDS

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{_host_header(self.host)}:{self.port}{PATH}"


def parse_address(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPv6]:PORT`; a port alone listens on 127.0.0.1. Raises TransportError."""
    text = text.strip()
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = "127.0.0.1", text
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or not host or ":" in host and not text.startswith("["):
        raise TransportError(f"--http takes PORT, HOST:PORT or [IPv6]:PORT (e.g. 127.0.0.1:8765), "
                             f"not {text!r}")
    number = int(port)
    if not 0 < number < 65536:
        raise TransportError(f"--http: {number} is not a port number")
    return host, number


def read_token(given: str | None, token_file: str | None) -> str | None:
    """The bearer token: --token, else --token-file's first line, else CQLSH_EXT_MCP_TOKEN. Raises
    TransportError for an unreadable or empty file, or a token too short to be one."""
    token = given
    if token is None and token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.readline().strip()
        except OSError as err:
            raise TransportError(f"--token-file {token_file}: {err.strerror or err}") from None
        if not token:
            raise TransportError(f"--token-file {token_file}: the file's first line is empty")
    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if token is not None and len(token) < 16:
        raise TransportError("the token must be at least 16 characters (e.g. python3 -c 'import secrets; "
                             "print(secrets.token_urlsafe(32))')")
    return token


def check(options: HttpOptions) -> None:
    """Refuse a set-up that would serve the database to a network unguarded; raises TransportError."""
    if (options.tls_cert is None) != (options.tls_key is None):
        raise TransportError("--tls-cert and --tls-key go together")
    if options.tls_client_ca is not None and not options.tls:
        raise TransportError("--tls-client-ca needs --tls-cert and --tls-key (the server's own certificate)")
    for path in (options.tls_cert, options.tls_key, options.tls_client_ca):
        if path is not None and not os.path.isfile(path):
            raise TransportError(f"no such file: {path}")
    if options.token is not None and options.oauth is not None:
        raise TransportError("--oauth-issuer takes OAuth access tokens instead of one token: give either, "
                             f"not both (--token, --token-file, {TOKEN_ENV})")
    if options.loopback:
        return
    if options.token is None and options.oauth is None:
        raise TransportError(f"--http {options.host}: an address other than loopback needs a token "
                             f"(--token-file FILE or {TOKEN_ENV}) or OAuth (--oauth-issuer)")
    if not options.tls and not options.private_network:
        raise TransportError(f"--http {options.host}: an address other than loopback needs TLS "
                             "(--tls-cert and --tls-key, --tls-client-ca for client certificates), or "
                             "--private-network when the network is yours alone (a Compose network)")


# ------------------------------------------------------------------------------------------- stdio


class BoundedLines:
    """The client's messages on stdio, one a line, each at most `limit` bytes (an async iterator of
    lines, as the SDK's stdio_server reads its stdin)."""

    def __init__(self, fd: int, limit: int = bounds.MAX_MESSAGE_BYTES, log: Any = None) -> None:
        self._file = os.fdopen(fd, "rb", buffering=1 << 16)
        self.limit = limit
        self._log = log

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self._read, abandon_on_cancel=True)
            if line is None:
                raise StopAsyncIteration
            if line:
                return line

    def _read(self) -> str | None:
        """The next line (a refusal in place of one over the limit; "" for one dropped), None at the end."""
        data = self._file.readline(self.limit + 1)
        if not data:
            return None
        if len(data) <= self.limit or data.endswith(b"\n") and len(data) == self.limit + 1:
            return data.decode("utf-8", errors="replace")
        head = data[:4096]
        size = len(data)
        while not data.endswith(b"\n"):  # the rest of the message, read and let go
            data = self._file.readline(1 << 20)
            if not data:
                break
            size += len(data)
        return self._refusal(head, size)

    def _refusal(self, head: bytes, size: int) -> str:
        import json

        line = (f"refused: a message of {size / (1 << 20):.1f} MiB is more than cqlsh-ext mcp reads "
                f"({self.limit >> 20} MiB)")
        request_id = _request_id(head)
        if request_id is None or b'"tools/call"' not in head:
            if self._log is not None:
                self._log(f"{line}: dropped (no tools/call id in its first bytes)")
            return ""
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": OVERSIZED, "arguments": {"why": line}}})


def _request_id(head: bytes) -> str | int | None:
    """The JSON-RPC id a message's first bytes name, or None."""
    import json

    found = re.search(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)', head)
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, (str, int)) else None


class AnsweringUnreadable:
    """The SDK's stream of the client's messages (its stdio_server's), a line it could not read as a
    JSON-RPC message answered with a parse error on `write` instead of dropped: the client's call
    ends with that error, and the next message is read as ever. The SDK's ReadStream otherwise."""

    def __init__(self, inner: Any, write: Any, log: Any) -> None:
        self._inner = inner
        self._write = write
        self._log = log

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._answer(item)

    async def _answer(self, error: Exception) -> None:
        from mcp.shared.message import SessionMessage
        from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError

        line = _unreadable(error)
        self._log(line)
        head = _input_head(error)
        answer = JSONRPCError(jsonrpc="2.0", id=_request_id(head) if head else None,
                              error=ErrorData(code=PARSE_ERROR, message=line))
        await self._write.send(SessionMessage(answer))

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringUnreadable:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringUnreadable:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _input_head(error: Exception) -> bytes:
    """The first bytes of the line a validation error of the SDK's was raised on."""
    errors = getattr(error, "errors", None)
    try:
        given = errors()[0].get("input") if callable(errors) else None
    except Exception:  # noqa: BLE001 - no input to read an id from
        return b""
    if isinstance(given, str):
        return given[:4096].encode("utf-8", "replace")
    return given[:4096] if isinstance(given, bytes) else b""


def _unreadable(error: Exception) -> str:
    """One line saying why a message was not read: its parser's first reason (recursion limit
    exceeded, expected value, ...), never the message's text."""
    errors = getattr(error, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - said without the reason
        first = None
    reason = str(first.get("msg", "")) if isinstance(first, dict) else type(error).__name__
    if "recursion limit" in reason:
        reason += " (JSON nested deeper than a message of MCP is)"
    return f"refused: the message is not a JSON-RPC message cqlsh-ext mcp can read: {reason}"[:1000]


#: The tool name a refused oversized call is handed to the server under (server.py answers it).
OVERSIZED = "\x00oversized"


# -------------------------------------------------------------------------------------------- HTTP


class _OneToken:
    """The SDK's TokenVerifier for one bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> Any:
        import hmac

        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="", client_id="cqlsh-ext-mcp", scopes=[])
        return None


class _TokenRequired:
    """An ASGI app answering a request the bearer backend did not authenticate (no token, another
    token) with 401: `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750) and a JSON-RPC
    error naming what is missing, never the token; others go on to `app`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        if isinstance(scope.get("user"), AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        given = any(name.lower() == b"authorization" for name, _ in scope.get("headers", ()))
        said = ("unauthorized: the request's Authorization header is not the bearer token this server was "
                "started with" if given else
                "unauthorized: this server needs its bearer token on every request (Authorization: "
                "Bearer <token>), and the request carried none")
        await oauth.refuse(send, 401, f'Bearer error="invalid_token", error_description="{said}"', said)


class _WholeBody:
    """The SDK's endpoint, a POST's body read whole before it sees the request: past
    bounds.MAX_MESSAGE_BYTES answered 413 with a JSON-RPC error; one that did not end (the client
    went, or http_bounds' body timeout closed its connection) handed to nothing (the SDK logged
    its reading's ClientDisconnect with a traceback, and answered a connection gone)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        received, body, ended = await http_bounds.read_body(receive, bounds.MAX_MESSAGE_BYTES)
        if body is None:
            await oauth.refuse(send, 413, None,
                               f"refused: a request body of more than {bounds.MAX_MESSAGE_BYTES >> 20} MiB")
        elif ended:
            await self.app(scope, http_bounds.replay(received, receive), send)


class _Proving:
    """The /mcp endpoint, a request that authenticated (every request when the server takes no
    token) telling its connection so: it holds its slot (http_bounds)."""

    def __init__(self, app: Any, anyone: bool) -> None:
        self.app = app
        self.anyone = anyone

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        if self.anyone or isinstance(scope.get("user"), AuthenticatedUser):
            http_bounds.prove(scope)
        await self.app(scope, receive, send)


def http_app(server: Any, options: HttpOptions, requirements: Requirements | None = None) -> Any:
    """The Starlette app serving `server` (the SDK's low-level Server) at /mcp, the token checked
    (or OAuth's tokens, each request's scope as `requirements` say)."""
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    security = None
    if options.loopback:
        # The loopback names, and the address bound as a client reaches it (--http 127.0.0.2:PORT:
        # `Host: 127.0.0.2:PORT`); any other Host is a page's DNS rebinding, refused (421).
        hosts = list(dict.fromkeys(["127.0.0.1", "localhost", "[::1]", _host_header(options.host)]))
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{host}:*" for host in hosts],
            allowed_origins=[f"{scheme}://{host}:*" for scheme in ("http", "https") for host in hosts])
    manager = StreamableHTTPSessionManager(app=server, security_settings=security,
                                           max_request_body_size=bounds.MAX_MESSAGE_BYTES)
    endpoint: Any = _WholeBody(StreamableHTTPASGIApp(manager))
    middleware: list[Middleware] = []
    routes: list[Route] = []
    if options.oauth is not None:
        assert requirements is not None
        endpoint, middleware, routes = oauth.protect(endpoint, options.oauth, requirements)
    elif options.token is not None:
        endpoint = _TokenRequired(endpoint)
        backend = BearerAuthBackend(_OneToken(options.token))
        middleware = [Middleware(AuthenticationMiddleware, backend=backend),
                      Middleware(AuthContextMiddleware)]

    endpoint = _Proving(endpoint, anyone=options.oauth is None and options.token is None)

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok\n")  # for a container's health check: says nothing else

    return Starlette(routes=[Route(PATH, endpoint=endpoint), Route("/healthz", endpoint=health), *routes],
                     middleware=middleware, lifespan=lambda app: manager.run())


def _host_header(host: str) -> str:
    """An address as a Host header names it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


async def serve_http(server: Any, options: HttpOptions, log: Any,
                     requirements: Requirements | None = None) -> None:
    """Serve until the process ends (uvicorn in this thread's event loop; it listens for signals only
    on the main thread, which the shell keeps)."""
    import ssl

    import uvicorn

    config = uvicorn.Config(http_app(server, options, requirements), host=options.host, port=options.port,
                            http=http_bounds.protocol(log, options.body_seconds), log_level="warning",
                            access_log=False,
                            lifespan="on",
                            ssl_certfile=options.tls_cert, ssl_keyfile=options.tls_key,
                            ssl_ca_certs=options.tls_client_ca,
                            ssl_cert_reqs=ssl.CERT_REQUIRED if options.tls_client_ca else ssl.CERT_NONE,
                            timeout_graceful_shutdown=5)
    runner = uvicorn.Server(config)

    async def announce() -> None:
        import anyio

        while not runner.started and not runner.should_exit:
            await anyio.sleep(0.05)
        if runner.started:
            log(f"serving MCP over Streamable HTTP at {options.url}"
                f"{' (a bearer token required)' if options.token else ''}"
                f"{f' (OAuth access tokens of {options.oauth.issuer} required)' if options.oauth else ''}"
                f"{' (client certificates required)' if options.tls_client_ca else ''}")

    import anyio

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        try:
            await runner.serve()
        except SystemExit:  # uvicorn's way of saying it could not listen (it logged why)
            pass
        finally:
            group.cancel_scope.cancel()
    if not runner.started:
        raise TransportError(f"could not listen on {options.host}:{options.port} "
                             "(in use, or not this host's)")


class SpeltWriter:
    """stdio's writer (the `stdout` the SDK's stdio_server writes each message's line to), which
    writes a tools/call answer's text block and structured content from the JSON the answer spelt
    once (ToolAnswer.body) rather than have the SDK validate and serialize them.

    The SDK takes structured content only as a dict, which it validates and dumps (a walk of every
    row's tree) and writes as JSON (another); it validates the text block's string and escapes it
    whole, the answer's JSON once more. `stand_in` gives the result a small string and a small dict
    in their places, "<this process's secret>-n" and {"<this process's secret>": n}, and registers
    the answer under n; `write` finds them in the line the SDK made and writes there the text block
    as a JSON string (its frame escaped as json.dumps escapes, which is the SDK's spelling of a
    string; the answer's JSON escaped by its quotes and backslashes alone: a JSON text holds no raw
    control character) and the answer's JSON. The secret is random, never sent and never in an
    answer's data, which a dict's first key or the text's whole would have to be to be taken for it.

    Only where the SDK would spell the same bytes (`same_spelling`): Python's json.dumps and the
    SDK's serializer (pydantic-core) differ on a float of exponent -5 to -9 (1e-05 against 0.00001):
    an answer holding one, or what looks like one, goes the SDK's way, as every answer over HTTP
    does. (NaN, the infinities and a lone surrogate, where they differ too, never reach an answer's
    JSON: sizing.spelt names the floats and sends the surrogate as U+FFFD.)"""

    #: Answers registered and not yet written, at most (a result the SDK never sends, its call
    #: cancelled after it was made, would otherwise stay).
    PENDING = 16

    def __init__(self, fd: int, log: Any = None) -> None:
        import secrets

        self._out = os.fdopen(fd, "wb")
        self._log = log
        self._secret = secrets.token_hex(16)
        self._marker = f'{{"{self._secret}":'
        self._text_marker = f'"{self._secret}-'
        #: Each registered answer: its text block as a JSON string (in three pieces: the frame's head,
        #: the answer's JSON escaped, the frame's tail; not joined into one more copy), its JSON.
        self._pending: dict[int, tuple[tuple[bytes, bytes, bytes], bytes]] = {}
        self._next = 0
        #: Whether each protocol revision's tools/call result keeps structured content as given.
        self._kept: dict[str, bool] = {}

    def stand_in(self, version: str, body: bytes,
                 frame: tuple[str, str]) -> tuple[str, dict[str, int]] | None:
        """The string and the dict the SDK is given as the text block and the structured content of
        an answer whose compact JSON is `body` (the text block: `frame`'s head, `body`, its tail),
        registered to be written as they are spelt; None: give the SDK the answer itself."""
        import json

        from cqlsh_ext.payload.columns import json_text_escaped

        if not self._keeps(version) or not same_spelling(body):
            return None
        serial, self._next = self._next, self._next + 1
        head, tail = frame
        text = (json.dumps(head, ensure_ascii=False)[:-1].encode(), json_text_escaped(body),
                json.dumps(tail, ensure_ascii=False)[1:].encode())
        self._pending[serial] = (text, body)
        while len(self._pending) > self.PENDING:
            dropped = next(iter(self._pending))
            del self._pending[dropped]
            if self._log is not None:
                self._log(f"an answer's structured content was never written (answer {dropped}): let go")
        return f"{self._secret}-{serial}", {self._secret: serial}

    def _keeps(self, version: str) -> bool:
        """Whether `version`'s tools/call result carries a structured content through the SDK's sieve
        as it was given (a revision without it would drop the stand-in, never to be written)."""
        kept = self._kept.get(version)
        if kept is None:
            from mcp_types import methods

            probe = {"content": [], "isError": False, "resultType": "complete", "structuredContent": {"k": 0}}
            try:
                kept = methods.serialize_server_result("tools/call", version, probe).get(
                    "structuredContent") == {"k": 0}
            except Exception:  # noqa: BLE001 - a revision the SDK does not know: its own road
                kept = False
            self._kept[version] = kept
        return kept

    async def write(self, line: str) -> None:
        import anyio

        parts: tuple[str | bytes, ...] = (line,)
        at = line.find(self._text_marker) if self._pending else -1
        if at >= 0:
            start = at + len(self._text_marker)
            end = line.index('"', start)
            found = self._pending.pop(int(line[start:end]), None)
            if found is None:  # never so: let go only past PENDING answers ago
                raise RuntimeError("an answer's structured content is no longer held: not sent")
            text, body = found
            inner = line.index(self._marker)
            closed = line.index("}", inner)
            # (the text block before the structured content, as the SDK orders a result's fields)
            spliced = sorted([(at, end + 1, text), (inner, closed + 1, (body,))], key=lambda place: place[0])
            parts = (line[:spliced[0][0]], *spliced[0][2], line[spliced[0][1]:spliced[1][0]], *spliced[1][2],
                     line[spliced[1][1]:])
        await anyio.to_thread.run_sync(self._write, parts)

    def _write(self, parts: tuple[str | bytes, ...]) -> None:
        for part in parts:
            self._out.write(part if isinstance(part, bytes) else part.encode("utf-8"))

    async def flush(self) -> None:
        import anyio

        await anyio.to_thread.run_sync(self._out.flush)


#: What Python's json.dumps spells otherwise than the SDK's serializer in an answer's JSON, found
#: where a value ends (before `,`, `]` or `}`): a float of exponent -5 to -9 ("1e-05", "1.5e-07").
#: The needle is looked for first (a fast scan), then its surroundings: "e-0" is found in many a
#: UUID ("808e-0de3"), which is no float. A string holding the same characters is taken for one,
#: and left to the SDK.
_SMALL_EXPONENT = re.compile(rb"[0-9]e-0[1-9][,\]}]")


def same_spelling(body: bytes) -> bool:
    """Whether the SDK would write the JSON value `body` (an answer's, as sizing.spelt spells it)
    byte for byte as it is."""
    at = body.find(b"e-0")
    while at >= 0:
        if _SMALL_EXPONENT.match(body, at - 1):
            return False
        at = body.find(b"e-0", at + 1)
    return True
