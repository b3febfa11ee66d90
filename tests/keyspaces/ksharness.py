"""Helpers for the Keyspaces tests: test credentials, the test CA, the Java authenticator build,
and running the real cqlsh-ext binary in a clean environment. Fixtures are in conftest.py."""


from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

import devcassandra  # noqa: E402

JAVA_SRC = Path(__file__).parent / "java"
SHIM_DIR = Path(__file__).parent / "shim"
CQLSH_EXT = str(Path(sys.executable).parent / "cqlsh-ext")
REGION = "us-east-1"
KEYSTORE_PASSWORD = "cassandra"
RELEASE_VERSION = "3.11.2"


@dataclass(frozen=True)
class Credential:
    access_key: str
    secret: str
    token: str | None = None


#: Known to the server (written to its credentials file).
GOOD = Credential("AKIDCQLSHEXTTEST01", "cqlsh-ext-Secret/Key+0001")
SESSION = Credential("ASIACQLSHEXTTEST02", "cqlsh-ext-Secret-Key-0002", "FwoGZXIvYXdzEXAMPLE-token-02==")
EXPIRED = Credential("ASIACQLSHEXTTEST03", "cqlsh-ext-Secret-Key-0003", "FwoGZXIvYXdzEXAMPLE-token-03==")
PROFILE = Credential("AKIDCQLSHEXTPROF04", "cqlsh-ext-Secret-Key-0004")
#: Unknown to the server: only good for asking moto's STS for a role.
STS_BASE = Credential("AKIDCQLSHEXTBASE05", "cqlsh-ext-Secret-Key-0005")
ALL_SECRETS = [c.secret for c in (GOOD, SESSION, EXPIRED, PROFILE, STS_BASE)] + \
    [c.token for c in (SESSION, EXPIRED) if c.token]


@dataclass
class KeyspacesEndpoint:
    host: str
    port: int  # plain CQL (PLAIN logins only used by the fixture itself)
    tls_port: int
    ca_file: Path
    wrong_ca_file: Path
    directory: Path
    sts_url: str | None
    instance: devcassandra.Instance
    keyspace: str = "ks_test"
    _sessions: list[Any] = field(default_factory=list, repr=False)

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """An environment with no AWS or cqlsh settings of the developer's, and no IMDS lookups."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("AWS_", "CQLSH_", "CQL_", "SSL_"))}
        env.update({
            "HOME": str(home),
            "AWS_CONFIG_FILE": str(home / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
        })
        env.pop("COLUMNS", None)
        env.update(extra)
        if any(k.startswith("CQLSH_EXT_TEST_") for k in extra):  # test-only hooks (shim/sitecustomize.py)
            env["PYTHONPATH"] = str(SHIM_DIR)
        return env

    def run(self, args: list[str], home: Path, env: dict[str, str] | None = None,
            stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CQLSH_EXT, *args], input=stdin, capture_output=True, text=True,
                              timeout=timeout, env=env if env is not None else self.env(home))

    def plain_session(self) -> Any:
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import Cluster

        cluster = Cluster([self.host], port=self.port, protocol_version=4,
                          auth_provider=PlainTextAuthProvider("cassandra", "cassandra"), connect_timeout=30)
        session = cluster.connect()
        self._sessions.append(cluster)
        return session

    def close(self) -> None:
        for cluster in self._sessions:
            cluster.shutdown()


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def javac() -> str:
    return str(Path(devcassandra.find_java()).with_name("javac"))


def compile_java(lib_dir: Path, out: Path) -> Path:
    """The test authenticator and verifier, compiled against Cassandra's jars into out."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    sources = sorted(str(p) for p in JAVA_SRC.rglob("*.java"))
    _run([javac(), "-nowarn", "-d", str(out), "-cp", f"{lib_dir}/*", *sources])
    props = out / "org" / "apache" / "cassandra" / "config" / "version.properties"
    props.parent.mkdir(parents=True)
    props.write_text(f"CassandraVersion={RELEASE_VERSION}\nGitSHA=cqlsh-ext-test\n")
    return out


def make_ca(directory: Path, name: str) -> tuple[Path, Path]:
    key, cert = directory / f"{name}.key", directory / f"{name}.pem"
    _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-sha256",
          "-subj", f"/CN=cqlsh-ext {name}", "-keyout", str(key), "-out", str(cert),
          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    return key, cert


def make_server_keystore(directory: Path, ca_key: Path, ca_cert: Path) -> Path:
    key, csr, cert = directory / "server.key", directory / "server.csr", directory / "server.pem"
    ext = directory / "server.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
                   "basicConstraints=CA:FALSE\n")
    _run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
          "-keyout", str(key), "-out", str(csr)])
    _run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
          "-CAcreateserial", "-days", "3650", "-sha256", "-extfile", str(ext), "-out", str(cert)])
    p12 = directory / "server.p12"
    _run(["openssl", "pkcs12", "-export", "-in", str(cert), "-inkey", str(key), "-certfile", str(ca_cert),
          "-name", "cassandra", "-out", str(p12), "-passout", f"pass:{KEYSTORE_PASSWORD}"])
    return p12


def write_credentials(path: Path) -> None:
    lines = [
        "# access_key secret [role=] [token=] [expired] -- test credentials only",
        f"{GOOD.access_key} {GOOD.secret}",
        f"{SESSION.access_key} {SESSION.secret} token={SESSION.token}",
        f"{EXPIRED.access_key} {EXPIRED.secret} token={EXPIRED.token} expired",
        f"{PROFILE.access_key} {PROFILE.secret}",
    ]
    path.write_text("\n".join(lines) + "\n")
