"""An OAuth authorization server's side, here in the tests: signing keys made locally (cryptography),
their JWKS written as an identity provider publishes it, and access tokens signed with PyJWT as an
issuer signs them. Nothing reaches the network: the keys are a file, or a JWKS served on loopback."""

from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://login.example.test/realms/ops"
AUDIENCE = "api://cqlsh-ext-tests"
#: The scopes the tools declare, both.
BOTH = "cqlsh.read cqlsh.report"


@dataclass
class SigningKey:
    kid: str
    algorithm: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        """The public key as a JWKS holds it (kid, alg and use said, as identity providers say them)."""
        public = self.private.public_key()
        text = (RSAAlgorithm if self.algorithm.startswith(("RS", "PS")) else ECAlgorithm).to_jwk(public)
        return {**json.loads(text), "kid": self.kid, "alg": self.algorithm, "use": "sig"}


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


@dataclass
class Issuer:
    """Signs tokens with its keys; `jwks()` is what it publishes (its `published` keys only: a key not
    published signs tokens the server must refuse)."""

    keys: list[SigningKey] = field(default_factory=lambda: [ec_key("ec-1"), rsa_key("rsa-1")])
    issuer: str = ISSUER
    audience: str = AUDIENCE

    def jwks(self, keys: list[SigningKey] | None = None) -> dict[str, Any]:
        return {"keys": [key.jwk() for key in (self.keys if keys is None else keys)]}

    def write_jwks(self, path: Path) -> Path:
        path.write_text(json.dumps(self.jwks()))
        return path

    def claims(self, scopes: str = BOTH, lifetime: int = 300, **changes: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.audience, "sub": "assistant-7",
                  "client_id": "claude-connector", "iat": now, "exp": now + lifetime, "scope": scopes}
        claims.update(changes)
        return {name: value for name, value in claims.items() if value is not None}

    def token(self, scopes: str = BOTH, key: SigningKey | None = None, lifetime: int = 300,
              header: dict[str, Any] | None = None, **changes: Any) -> str:
        """A token signed by `key` (the first key by default), its claims the usual ones with `changes`
        (a claim changed to None is left out)."""
        key = key or self.keys[0]
        return jwt.encode(self.claims(scopes, lifetime, **changes), key.private, algorithm=key.algorithm,
                          headers={"kid": key.kid, **(header or {})})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _part(value: dict[str, Any]) -> str:
    return _b64(json.dumps(value).encode())


def unsigned(claims: dict[str, Any]) -> str:
    """A token of `alg: none`: its claims, no signature (the attack the allow list refuses)."""
    return f"{_part({'alg': 'none', 'typ': 'JWT'})}.{_part(claims)}."


def hmac_with_public_key(issuer: Issuer, key: SigningKey) -> str:
    """A token of HS256 whose secret is the public key's PEM text, signed by hand (PyJWT refuses to):
    a library that took the key the header names as a shared secret would find it signed."""
    import hashlib
    import hmac

    from cryptography.hazmat.primitives import serialization

    pem = key.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
    signing_input = f"{_part({'alg': 'HS256', 'typ': 'JWT', 'kid': key.kid})}.{_part(issuer.claims())}"
    return f"{signing_input}.{_b64(hmac.new(pem, signing_input.encode(), hashlib.sha256).digest())}"


class JwksServer:
    """The issuer's JWKS served over HTTP on loopback (what `--oauth-jwks URL` fetches), counting
    its requests; `document` may be changed between them (a key rotated in), `status` set."""

    def __init__(self, document: dict[str, Any] | bytes) -> None:
        self.document = document
        self.status = 200
        self.requests = 0
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                served.requests += 1
                body = served.document
                if not isinstance(body, bytes):
                    body = json.dumps(body).encode()
                self.send_response(served.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/realms/ops/certs"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> JwksServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
