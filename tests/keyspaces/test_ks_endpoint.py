"""The real cqlsh-ext binary with the real cassandra-sigv4 signer against the local
Keyspaces-like endpoint (see conftest.py): what a user sees on stdout, stderr and in the exit code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from keyspaces.ksharness import (
    ALL_SECRETS,
    CQLSH_EXT,
    EXPIRED,
    GOOD,
    PROFILE,
    REGION,
    SESSION,
    STS_BASE,
    Credential,
    KeyspacesEndpoint,
)

QUERY = "SELECT id, name FROM ks_test.users WHERE id = 1; CONSISTENCY"

pytestmark = pytest.mark.server


def creds_env(cred: Credential, token: str | None = None) -> dict[str, str]:
    env = {"AWS_ACCESS_KEY_ID": cred.access_key, "AWS_SECRET_ACCESS_KEY": cred.secret}
    if token or cred.token:
        env["AWS_SESSION_TOKEN"] = token or cred.token or ""
    return env


def tls_args(ep: KeyspacesEndpoint, *more: str) -> list[str]:
    """--keyspaces pointed at the local endpoint: its TLS port, the test CA."""
    return ["--keyspaces", ep.host, str(ep.tls_port), "--certfile", str(ep.ca_file), *more]


def run(ep: KeyspacesEndpoint, home: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    proc = ep.run(args, home, env=ep.env(home, **env))
    shown = proc.stdout + proc.stderr
    for secret in ALL_SECRETS:
        assert secret not in shown, "a secret was printed"
    return proc


def ext_signed(ep: KeyspacesEndpoint, home: Path, statement: str) -> str:
    """The output of `statement` (-e) over TLS, signed with SigV4 as GOOD in REGION, which must succeed."""
    proc = run(ep, home, [*tls_args(ep, "--region", REGION), "-e", statement], **creds_env(GOOD))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 1, proc
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("Connection error: ")
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def assert_user_1(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "user-1" in proc.stdout
    assert "(1 rows)" in proc.stdout
    assert "Current consistency level is LOCAL_QUORUM." in proc.stdout


# ------------------------------------------------------------------ SigV4


def test_sigv4_with_good_credentials(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
               **creds_env(GOOD))
    assert_user_1(proc)


def test_region_from_aws_region_env(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint), "-e", QUERY],
               AWS_REGION=REGION, **creds_env(GOOD))
    assert_user_1(proc)


def test_wrong_secret_is_bad_credentials(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    wrong = Credential(GOOD.access_key, GOOD.secret[::-1])
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
               **creds_env(wrong))
    assert_one_line_error(proc, "Bad credentials", "secret access key")
    assert wrong.secret not in proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_wrong_region_is_bad_credentials(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", "eu-west-1"), "-e",
                                              QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "Bad credentials")


def test_debug_shows_details_but_no_secret(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    wrong = Credential(GOOD.access_key, "Wrong-Secret-Value-123")
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "--debug",
                                              "-e", QUERY], **creds_env(wrong))
    assert proc.returncode == 1
    assert "Connection error: Bad credentials" in proc.stderr
    assert wrong.secret not in proc.stdout + proc.stderr


def test_session_token(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ok = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
             **creds_env(SESSION))
    assert_user_1(ok)
    other_token = creds_env(SESSION, token="FwoGZXIvYXdzNOTTHEONE-token==")
    wrong = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e",
                                               QUERY], **other_token)
    assert_one_line_error(wrong, "does not know these AWS credentials", "AWS_SESSION_TOKEN")
    assert "FwoGZXIvYXdzNOTTHEONE-token==" not in wrong.stdout + wrong.stderr


def test_expired_session_token(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
               **creds_env(EXPIRED))
    assert_one_line_error(proc, "session token has expired", "fresh")


def test_clock_skew_beyond_15_minutes(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    # The signer's clock runs 20 minutes ahead (test-only sitecustomize; product code untouched).
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
               CQLSH_EXT_TEST_CLOCK_SKEW_SECONDS="1200", **creds_env(GOOD))
    assert_one_line_error(proc, "clock", "15 minutes")


def test_clock_skew_within_15_minutes(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY],
               CQLSH_EXT_TEST_CLOCK_SKEW_SECONDS="-600", **creds_env(GOOD))
    assert_user_1(proc)


def test_profile_from_shared_credentials_file(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    credentials = tmp_path / "aws-credentials"
    credentials.write_text(f"[default]\naws_access_key_id = {GOOD.access_key}\n"
                           "aws_secret_access_key = wrong\n\n"
                           f"[ks]\naws_access_key_id = {PROFILE.access_key}\n"
                           f"aws_secret_access_key = {PROFILE.secret}\n")
    config = tmp_path / "aws-config"
    config.write_text(f"[profile ks]\nregion = {REGION}\n")  # the region comes from the profile too
    env = {"AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_CONFIG_FILE": str(config)}
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--profile", "ks"), "-e", QUERY],
               **env)
    assert_user_1(proc)
    # AWS_PROFILE works as well, without the flag (SigV4 because no -u/-p are given).
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint), "-e", QUERY], AWS_PROFILE="ks",
               **env)
    assert_user_1(proc)
    missing = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--profile", "nope"), "-e",
                                                 QUERY], **env)
    assert_one_line_error(missing, "profile 'nope' not found")


def test_no_credentials(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e", QUERY])
    assert_one_line_error(proc, "no AWS credentials found", "AWS_ACCESS_KEY_ID")


def test_no_region(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint), "-e", QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "no AWS region", "--region", "AWS_REGION")


def test_sigv4_on_a_plain_port_without_tls(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    proc = run(ep, tmp_path, ["--sigv4", "--region", REGION, ep.host, str(ep.port), "-e",
                              "SELECT name FROM ks_test.users WHERE id = 2; CONSISTENCY"], **creds_env(GOOD))
    assert proc.returncode == 0, proc.stderr
    assert "user-2" in proc.stdout
    assert "Current consistency level is ONE." in proc.stdout  # only --keyspaces changes it


@pytest.mark.skipif(sys.version_info < (3, 10), reason="needs moto")
def test_assume_role_through_sts(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    if keyspaces_endpoint.sts_url is None:
        pytest.skip("moto is not installed")
    # STS_BASE is unknown to the server: only the assumed role's credentials can log in.
    direct = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e",
                                                QUERY], **creds_env(STS_BASE))
    assert_one_line_error(direct, "does not know these AWS credentials")
    proc = run(keyspaces_endpoint, tmp_path,
               [*tls_args(keyspaces_endpoint, "--region", REGION, "--role-arn",
                          "arn:aws:iam::123456789012:role/keyspaces-reader"), "-e", QUERY],
               AWS_ENDPOINT_URL_STS=keyspaces_endpoint.sts_url, **creds_env(STS_BASE))
    assert_user_1(proc)


# ------------------------------------------------------------------ plain logins and cqlshrc


def test_service_specific_credentials_with_keyspaces(keyspaces_endpoint: KeyspacesEndpoint,
                                                     tmp_path: Path) -> None:
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint), "-u", "cassandra", "-p",
                                              "cassandra", "-e", QUERY])
    assert_user_1(proc)
    bad = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint), "-u", "cassandra", "-p",
                                             "Not-The-Password", "-e", QUERY])
    assert bad.returncode == 1
    assert "Bad credentials" in bad.stderr and "Traceback" not in bad.stderr
    assert "Not-The-Password" not in bad.stdout + bad.stderr


def test_cqlshrc_settings(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    rc = tmp_path / "cqlshrc"
    rc.write_text(f"[cqlsh_ext]\nkeyspaces = true\nregion = {REGION}\ncertfile = {ep.ca_file}\n")
    proc = run(ep, tmp_path, ["--cqlshrc", str(rc), ep.host, str(ep.tls_port), "-e", QUERY],
               **creds_env(GOOD))
    assert_user_1(proc)


def test_stock_auth_provider_cqlshrc_form(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    rc = tmp_path / "cqlshrc"
    rc.write_text("[auth_provider]\nmodule = cassandra_sigv4.auth\nclassname = SigV4AuthProvider\n"
                  f"region_name = {REGION}\n\n[ssl]\ncertfile = {ep.ca_file}\nvalidate = true\n")
    proc = run(ep, tmp_path, ["--cqlshrc", str(rc), "--ssl", ep.host, str(ep.tls_port), "-e",
                              "SELECT name FROM ks_test.users WHERE id = 0"], **creds_env(GOOD))
    assert proc.returncode == 0, proc.stderr
    assert "user-0" in proc.stdout
    wrong = run(ep, tmp_path, ["--cqlshrc", str(rc), "--ssl", ep.host, str(ep.tls_port), "-e", "SELECT 1"],
                **creds_env(Credential(GOOD.access_key, "nope-nope")))
    assert_one_line_error(wrong, "Bad credentials")


# ------------------------------------------------------------------ TLS and ports


def test_tls_with_another_ca_fails_verification(keyspaces_endpoint: KeyspacesEndpoint,
                                                tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    args = ["--keyspaces", ep.host, str(ep.tls_port), "--certfile", str(ep.wrong_ca_file), "--region", REGION]
    proc = run(ep, tmp_path, [*args, "-e", QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "TLS certificate verification failed", "--certfile")


def test_tls_system_trust_store_does_not_trust_the_test_ca(keyspaces_endpoint: KeyspacesEndpoint,
                                                           tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    proc = run(ep, tmp_path, ["--keyspaces", ep.host, str(ep.tls_port), "--region", REGION, "-e", QUERY],
               **creds_env(GOOD))
    assert_one_line_error(proc, "TLS certificate verification failed")
    # ... unless the system trust store is told about it (OpenSSL's SSL_CERT_FILE).
    proc = run(ep, tmp_path, ["--keyspaces", ep.host, str(ep.tls_port), "--region", REGION, "-e", QUERY],
               SSL_CERT_FILE=str(ep.ca_file), **creds_env(GOOD))
    assert_user_1(proc)


def test_tls_to_a_plain_port(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    args = ["--keyspaces", ep.host, str(ep.port), "--certfile", str(ep.ca_file), "--region", REGION]
    proc = run(ep, tmp_path, [*args, "-e", QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "does not speak TLS", "9142")


def test_nothing_listening(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    args = ["--keyspaces", ep.host, "1", "--certfile", str(ep.ca_file), "--region", REGION]
    proc = run(ep, tmp_path, [*args, "-e", QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "nothing listens on 127.0.0.1:1", "9142")


def test_missing_certfile(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    missing = str(tmp_path / "nope.pem")
    args = ["--keyspaces", ep.host, str(ep.tls_port), "--certfile", missing, "--region", REGION]
    proc = run(ep, tmp_path, [*args, "-e", QUERY], **creds_env(GOOD))
    assert_one_line_error(proc, "nope.pem: no such file")


# ------------------------------------------------------------------ Keyspaces behaviour


def test_describe_on_a_server_reporting_3x(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    statements = ("DESCRIBE KEYSPACES; DESCRIBE TABLE ks_test.users; DESC TYPE ks_test.address; "
                  "USE ks_test; DESCRIBE TABLES; DESCRIBE users; DESCRIBE ONLY KEYSPACE; DESCRIBE TABLE nope")
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION),
                                              "-e", statements], **creds_env(GOOD))
    out = proc.stdout
    # 3.11 vs the 5.0 cqlsh knows: warned, on stderr so results stay clean.
    assert "this server is 3.11.2" in proc.stderr and "WARNING" not in out
    assert "DESCRIBE|DESC was moved to server side" not in out + proc.stderr
    assert "ks_test" in out and "system_schema" in out  # DESCRIBE KEYSPACES
    assert out.count("CREATE TABLE ks_test.users (") == 2  # by TABLE and by plain name
    assert "    home frozen<address>," in out
    assert "CREATE TYPE ks_test.address (" in out and "    zip int" in out
    assert "imported  users" in out  # DESCRIBE TABLES in ks_test
    assert "CREATE KEYSPACE ks_test WITH replication" in out and "CREATE TABLE ks_test.imported" not in out
    assert "'nope' not found in keyspace 'ks_test'" in proc.stderr
    assert proc.returncode == 2  # the last statement failed, as cqlsh reports it


def test_copy_with_sigv4_in_spawned_workers(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    """COPY FROM and TO with SigV4 + TLS, workers started with spawn (as on macOS, and Linux from
    Python 3.14): provider and TLS settings are pickled to them. CONSISTENCY ONE is raised to
    LOCAL_QUORUM for COPY FROM."""
    source = tmp_path / "in.csv"
    source.write_text("".join(f"{i},value-{i}\n" for i in range(50)))
    target = tmp_path / "out.csv"
    statements = (f"CONSISTENCY ONE; COPY ks_test.imported (id, v) FROM '{source}' WITH NUMPROCESSES=2; "
                  f"COPY ks_test.imported (id, v) TO '{target}' WITH NUMPROCESSES=2; "
                  "SELECT count(*) FROM ks_test.imported")
    proc = run(keyspaces_endpoint, tmp_path, [*tls_args(keyspaces_endpoint, "--region", REGION), "-e",
                                              statements], CQLSH_EXT_TEST_MP_START="spawn", **creds_env(GOOD))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "COPY FROM writes at LOCAL_QUORUM on Amazon Keyspaces (consistency is ONE)." in proc.stdout
    assert "50 rows imported" in proc.stdout
    assert "50 rows exported" in proc.stdout
    assert sorted(target.read_text().splitlines()) == sorted(source.read_text().splitlines())
    assert "\n    50\n" in proc.stdout


# ------------------------------------------------------------------ start-up cost


def imported_modules(keyspaces_endpoint: KeyspacesEndpoint, home: Path, args: list[str],
                     **env: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "cqlsh_ext", *args], capture_output=True,
                          text=True, timeout=60, env=keyspaces_endpoint.env(home, **env))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


def test_boto3_is_imported_only_for_sigv4(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    plain = imported_modules(ep, tmp_path, ["-u", "cassandra", "-p", "cassandra", ep.host, str(ep.port),
                                            "-e", "SELECT now() FROM system.local"])
    assert "cassandra.cluster" in plain
    assert not {m for m in plain if m.split(".")[0] in ("boto3", "botocore", "cassandra_sigv4")}
    sigv4 = imported_modules(ep, tmp_path, ["--sigv4", "--region", REGION, ep.host, str(ep.port), "-e",
                                            "SELECT now() FROM system.local"], **creds_env(GOOD))
    assert {"boto3", "botocore", "cassandra_sigv4"} <= sigv4


# ------------------------------------------------------------------ empty pages


def test_the_test_server_returns_empty_pages(keyspaces_endpoint: KeyspacesEndpoint) -> None:
    from cassandra.query import SimpleStatement

    session = keyspaces_endpoint.plain_session()
    result = session.execute(SimpleStatement("SELECT id FROM ks_pages.t", fetch_size=2))
    pages = [len(result.current_rows)]
    while result.has_more_pages:
        result.fetch_next_page()
        pages.append(len(result.current_rows))
    assert pages == [0, 2, 0, 2, 0, 1]


def test_empty_pages_are_followed_without_a_bare_more_prompt(keyspaces_endpoint: KeyspacesEndpoint,
                                                             tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    ep = keyspaces_endpoint
    args = [*tls_args(ep, "--region", REGION), "--classic", "--no-color"]
    child = pexpect.spawn(CQLSH_EXT, args, encoding="utf-8",
                          env=ep.env(tmp_path, **creds_env(GOOD)), timeout=30, dimensions=(50, 120))
    try:
        child.expect("cqlsh> ")
        child.sendline("PAGING 2;")
        child.expect("cqlsh> ")
        child.sendline("SELECT id FROM ks_pages.t;")
        shown: list[str] = []
        while child.expect(["---MORE---", r"\((\d+) rows\)"]) == 0:
            page = child.before
            assert re.search(r"^\s+\d\s*$", page, re.M), f"---MORE--- with no rows above it: {page!r}"
            shown.append(page)
            child.sendline("")
        assert child.match.group(1) == "5"
        assert len(shown) == 2  # after rows 1-2 and 3-4, not after each of the three empty pages
        child.sendline("EXIT;")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    for secret in ALL_SECRETS:
        assert secret not in "".join(shown)


# ------------------------------------------------------------------ the cost of a full scan


def test_full_scan_from_a_script_needs_confirm(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    stats = "COMPRESSION STATS SELECT * FROM ks_test.docs"
    proc = run(ep, tmp_path, [*tls_args(ep, "--region", REGION), "-e", stats], **creds_env(GOOD))
    said = [line for line in proc.stderr.splitlines() if "COMPRESSION STATS" in line]
    assert len(said) == 1, proc.stderr
    assert "a full scan of ks_test.docs reads" in said[0]
    assert "Amazon Keyspaces bills every row read" in said[0] and "CONFIRM" in said[0]
    assert "COMPRESSION STATS:" not in proc.stdout  # nothing was scanned
    confirm = stats.replace("STATS", "STATS CONFIRM")
    confirmed = run(ep, tmp_path, [*tls_args(ep, "--region", REGION), "-e", confirm], **creds_env(GOOD))
    assert confirmed.returncode == 0, confirmed.stderr
    assert "COMPRESSION STATS: 3 rows" in confirmed.stdout


def test_full_scan_asks_on_a_terminal(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    ep = keyspaces_endpoint
    args = [*tls_args(ep, "--region", REGION), "--classic", "--no-color"]
    child = pexpect.spawn(CQLSH_EXT, args, encoding="utf-8", env=ep.env(tmp_path, **creds_env(GOOD)),
                          timeout=30, dimensions=(50, 160))
    try:
        child.sendline("COMPRESSION STATS SELECT * FROM ks_test.docs;")
        child.expect(r"Amazon Keyspaces bills every row read")
        child.expect(r"Scan the whole table\? .*\[y/N\] ")
        child.sendline("n")
        child.expect("COMPRESSION STATS: not scanned.")
        child.sendline("COMPRESSION STATS SELECT * FROM ks_test.docs;")
        child.expect(r"\[y/N\] ")
        child.sendline("y")
        child.expect(r"COMPRESSION STATS: 3 rows")
        child.sendline("EXIT;")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
