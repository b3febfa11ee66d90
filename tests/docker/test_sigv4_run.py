"""`docker run` of the built image against the SigV4-verifying test endpoint (tests/keyspaces: a
Cassandra with an authenticator that checks AWS signatures, TLS from a test CA), the way the README
tells people to run it against Amazon Keyspaces: credentials from -e, from a read-only ~/.aws mount
with a profile, a session token, and a wrong secret that must end in one line without the secret.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from docker_fixtures import docker, image, keyspaces_endpoint, moto_sts  # noqa: F401  (fixtures)
from dockerlib import ENABLED, Image
from keyspaces.ksharness import GOOD, PROFILE, REGION, SESSION, Credential, KeyspacesEndpoint

pytestmark = pytest.mark.skipif(
    not ENABLED, reason="Docker tests are on with CI=true or CQLSH_EXT_DOCKER_TESTS=1")

QUERY = "SELECT id, name FROM ks_test.users WHERE id = 1; CONSISTENCY"
CA_IN_CONTAINER = "/certs/keyspaces-ca.pem"


def docker_run(image: Image, ep: KeyspacesEndpoint, env: dict[str, str], mounts: tuple[str, ...] = (),
               *args: str) -> subprocess.CompletedProcess[str]:
    cmd = ["docker", "run", "--rm", "--pull", "never", "--network", "host",
           "-v", f"{ep.ca_file}:{CA_IN_CONTAINER}:ro", *mounts]
    for name in env:
        cmd += ["-e", name]  # values from the environment, never on the command line
    cmd += [image.tag, "--keyspaces", ep.host, str(ep.tls_port), "--certfile", CA_IN_CONTAINER,
            "--region", REGION, *args, "-e", QUERY]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", **env})


def creds(cred: Credential) -> dict[str, str]:
    env = {"AWS_ACCESS_KEY_ID": cred.access_key, "AWS_SECRET_ACCESS_KEY": cred.secret}
    if cred.token:
        env["AWS_SESSION_TOKEN"] = cred.token
    return env


def assert_user_1(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "user-1" in proc.stdout and "(1 rows)" in proc.stdout
    assert "Current consistency level is LOCAL_QUORUM." in proc.stdout


def test_credentials_from_the_environment(image: Image, keyspaces_endpoint: KeyspacesEndpoint):
    assert_user_1(docker_run(image, keyspaces_endpoint, creds(GOOD)))


def test_session_token(image: Image, keyspaces_endpoint: KeyspacesEndpoint):
    assert_user_1(docker_run(image, keyspaces_endpoint, creds(SESSION)))


def test_profile_from_a_read_only_aws_mount(image: Image, keyspaces_endpoint: KeyspacesEndpoint,
                                            tmp_path: Path):
    aws = tmp_path / "aws"
    aws.mkdir()
    (aws / "credentials").write_text(f"[team]\naws_access_key_id = {PROFILE.access_key}\n"
                                     f"aws_secret_access_key = {PROFILE.secret}\n")
    (aws / "credentials").chmod(0o644)  # the image runs as uid 10001
    proc = docker_run(image, keyspaces_endpoint, {}, ("-v", f"{aws}:/home/cqlsh/.aws:ro"),
                      "--profile", "team")
    assert_user_1(proc)


def test_wrong_secret_is_one_line_without_the_secret(image: Image, keyspaces_endpoint: KeyspacesEndpoint):
    wrong = Credential(GOOD.access_key, "not-the-Secret/Key+9999")
    proc = docker_run(image, keyspaces_endpoint, creds(wrong))
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Connection error: ") and "Bad credentials" in lines[0]
    assert wrong.secret not in proc.stdout + proc.stderr
