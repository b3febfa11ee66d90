"""The published SigV4 test vector, against the Java verifier of the test server AND the real
Python signer (cassandra-sigv4), plus a cross-check of the two on other inputs."""

from __future__ import annotations

import subprocess
from collections import namedtuple
from datetime import datetime
from pathlib import Path

import pytest

from keyspaces.ksharness import compile_java

#: Runs Java (javac and the JVM) without a server: not part of the fast layer.
pytestmark = pytest.mark.java

# The published test vector of cassandra-sigv4's own tests (the Go plugin uses the same);
# docs/keyspaces.md, "How the SigV4 login works".
ACCESS_KEY = "UserID-1"
SECRET = "UserSecretKey-1"
REGION = "us-west-2"
AMZDATE = "2020-06-09T22:41:51.000Z"
WHEN = datetime(2020, 6, 9, 22, 41, 51)
NONCE = "91703fdc2ef562e19fbdab0f58e42fe5"
SIGNING_KEY = "7fb139473f153aec1b05747b0cd5cd77a1186d22ae895a3a0128e699d72e1aba"
SIGNATURE = "7f3691c18a81b8ce7457699effbfae5b09b4e0714ab38c1292dbdf082c9ddd87"

Credentials = namedtuple("Credentials", "access_key secret_key token")


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    import devcassandra

    classes = compile_java(devcassandra.ensure_jars(), tmp_path_factory.mktemp("java") / "classes")
    java = devcassandra.find_java()
    return [java, "-cp", f"{classes}:{devcassandra.ensure_jars()}/*", "cqlshext.sigv4test.SigV4Verifier"]


def java(verifier: list[str], *args: str) -> str:
    return subprocess.run([*verifier, *args], capture_output=True, text=True, check=True, timeout=60).stdout


def test_java_verifier_reproduces_the_published_vector(verifier: list[str]) -> None:
    out = java(verifier, "sign", SECRET, ACCESS_KEY, REGION, AMZDATE, NONCE)
    assert out.splitlines() == [f"signing_key={SIGNING_KEY}", f"signature={SIGNATURE}"]


def test_python_signer_reproduces_the_published_vector() -> None:
    from cassandra_sigv4 import auth

    key = auth._generate_signing_key(SECRET, "20200609", REGION, "cassandra")
    assert key.hex() == SIGNING_KEY
    signature = auth._generate_signature(NONCE.encode(), WHEN, Credentials(ACCESS_KEY, SECRET, None), REGION)
    assert signature == SIGNATURE
    assert auth._format_timestamp(WHEN) == AMZDATE


def python_response(nonce: str, when: datetime, creds: Credentials, region: str) -> str:
    """What cassandra-sigv4's authenticator answers to `nonce=<nonce>` (its own code, our clock)."""
    from cassandra_sigv4 import auth

    signature = auth._generate_signature(nonce.encode(), when, creds, region)
    text = f"signature={signature},access_key={creds.access_key},amzdate={auth._format_timestamp(when)}"
    return text + (f",session_token={creds.token}" if creds.token else "")


def test_java_verifier_accepts_the_python_signer_and_refuses_tampering(verifier: list[str]) -> None:
    when = datetime(2026, 1, 31, 23, 59, 59, 999_600)  # the plugin's ".1000Z" rounding quirk
    creds = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "tok/en+=")
    response = python_response("0123456789abcdef0123456789abcdef", when, creds, "eu-central-1")
    assert ".1000Z" in response
    now = str(int((when - datetime(1970, 1, 1)).total_seconds()))
    verify = ["verify", response, creds.secret_key, "eu-central-1", "0123456789abcdef0123456789abcdef"]
    assert java(verifier, *verify, now).strip() == "ok"
    # Another secret, nonce or region: the signature does not match.
    for index, value in ((2, creds.secret_key + "x"), (3, "eu-west-1"), (4, "f" * 32)):
        changed = list(verify)
        changed[index] = value
        assert "does not match" in java(verifier, *changed, now)
    # Beyond 15 minutes either way: refused as expired; within: accepted.
    assert "Signature expired" in java(verifier, *verify, str(int(now) + 901))
    assert "Signature expired" in java(verifier, *verify, str(int(now) - 901))
    assert java(verifier, *verify, str(int(now) + 899)).strip() == "ok"


def test_java_verifier_refuses_malformed_responses(verifier: list[str]) -> None:
    good = python_response(NONCE, WHEN, Credentials(ACCESS_KEY, SECRET, None), REGION)
    now = str(int((WHEN - datetime(1970, 1, 1)).total_seconds()))
    assert java(verifier, "verify", good, SECRET, REGION, NONCE, now).strip() == "ok"
    for bad in (good.replace("signature=", "signature=A"), good.upper(), good.replace("amzdate=", "date="),
                good + ",extra=1", good.replace(".000Z", "Z")):
        assert java(verifier, "verify", bad, SECRET, REGION, NONCE, now).startswith("rejected: malformed")


def test_java_sources_are_where_the_fixture_compiles_them() -> None:
    assert (Path(__file__).parent / "java" / "com" / "amazon" / "helenus" / "auth" /
            "HelenusAuthenticator.java").is_file()
