"""Flags, cqlshrc settings, region resolution, pickling and redaction (no server needed)."""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from cqlsh_ext.keyspaces import options
from cqlsh_ext.keyspaces.errors import KeyspacesError, redact, remember_secret
from cqlsh_ext.settings import SettingError, load
from keyspaces.ksharness import CQLSH_EXT


def parse(*args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    options.add_arguments(parser)
    return parser.parse_known_args(list(args))[0]


def from_sources(tmp_path: Path, *args: str, cqlshrc: str = "") -> tuple[options.KeyspacesOptions, list[str]]:
    """The Keyspaces part of the run's settings (cqlsh_ext.settings.load, the one reader)."""
    rc = tmp_path / "cqlshrc"
    rc.write_text(cqlshrc)
    opts = load(parse(*args), str(rc)).keyspaces
    return opts, opts.give_back


@pytest.mark.parametrize(("host", "region"), [
    ("cassandra.us-east-1.amazonaws.com", "us-east-1"),
    ("cassandra-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
    ("cassandra-fips.us-east-1.amazonaws.com.", "us-east-1"),
    ("cassandra.cn-north-1.amazonaws.com.cn", "cn-north-1"),
    ("cassandra.eu-west-3.api.aws", "eu-west-3"),
    ("vpce-0abc123-xyz.cassandra.ap-southeast-2.vpce.amazonaws.com", "ap-southeast-2"),
    ("CASSANDRA.EU-CENTRAL-1.AMAZONAWS.COM", "eu-central-1"),
    ("127.0.0.1", None),
    ("cassandra.us-east-1.example.com", None),
    ("dynamodb.us-east-1.amazonaws.com", None),
])
def test_region_from_host(host: str, region: str | None) -> None:
    from cqlsh_ext.settings import region_from_host

    assert region_from_host(host) == region


def test_region_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    from cqlsh_ext.keyspaces.auth import resolve_region

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-2")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert resolve_region("ap-south-1", "cassandra.us-east-1.amazonaws.com") == "ap-south-1"
    # The endpoint's own region beats the environment: another region's signature is refused.
    assert resolve_region(None, "cassandra.us-east-1.amazonaws.com") == "us-east-1"
    assert resolve_region(None, "127.0.0.1", "sa-east-1") == "eu-west-1"
    monkeypatch.delenv("AWS_REGION")
    assert resolve_region(None, "127.0.0.1", "sa-east-1") == "eu-west-2"
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert resolve_region(None, "127.0.0.1", "sa-east-1") == "sa-east-1"
    with pytest.raises(KeyspacesError, match="no AWS region"):
        resolve_region(None, "127.0.0.1")


def test_flags_and_cqlshrc(tmp_path: Path) -> None:
    opts, back = from_sources(tmp_path)
    assert not opts.active and back == []
    opts, back = from_sources(tmp_path, "--keyspaces")
    assert opts.keyspaces and opts.tls and opts.region is None and not opts.wants_sigv4
    opts, back = from_sources(tmp_path, "--keyspaces", "eu-north-1")
    assert opts.region == "eu-north-1" and back == []
    opts, back = from_sources(tmp_path, "--keyspaces", "127.0.0.1")  # a host, handed back to cqlsh
    assert opts.keyspaces and opts.region is None and back == ["127.0.0.1"]
    opts, _ = from_sources(tmp_path, "--role-arn", "arn:aws:iam::1:role/r")
    assert opts.wants_sigv4 and not opts.tls
    opts, _ = from_sources(tmp_path, "--profile", "p")
    assert opts.wants_sigv4
    rc = ("[cqlsh_ext]\nkeyspaces = us-west-2\nsigv4 = yes\nprofile = team\nrole_arn = arn:x\n"
          "certfile = ~/ca.pem\n")
    opts, _ = from_sources(tmp_path, cqlshrc=rc)
    assert (opts.keyspaces, opts.sigv4, opts.region, opts.profile, opts.role_arn) == \
        (True, True, "us-west-2", "team", "arn:x")
    assert opts.certfile == os.path.expanduser("~/ca.pem")
    opts, _ = from_sources(tmp_path, "--region", "ca-central-1", "--profile", "other", cqlshrc=rc)
    assert (opts.region, opts.profile) == ("ca-central-1", "other")  # flags win
    opts, _ = from_sources(tmp_path, cqlshrc="[auth_provider]\nmodule = cassandra_sigv4.auth\n"
                                             "classname = SigV4AuthProvider\n")
    assert opts.stock_sigv4_provider and opts.active and not opts.wants_sigv4


@pytest.mark.parametrize(("args", "cqlshrc", "message"), [
    (("--region", "us_east_1"), "", "not an AWS region name"),
    (("--keyspaces", "us-east-1", "--region", "eu-west-1"), "", "disagree"),
    ((), "[cqlsh_ext]\nsigv4 = maybe\n", "sigv4: not a boolean"),
    ((), "[cqlsh_ext]\nregion = Frankfurt\n", "not an AWS region name"),
])
def test_bad_settings(tmp_path: Path, args: tuple[str, ...], cqlshrc: str, message: str) -> None:
    with pytest.raises(SettingError, match=message):
        from_sources(tmp_path, *args, cqlshrc=cqlshrc)


def test_connection_args(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    ks = options.KeyspacesOptions(keyspaces=True, region="us-east-1")
    host = "cassandra.us-east-1.amazonaws.com"
    assert options.connection_args(ks, ["-e", "x"], []) == ["-e", "x", host, "9142"]
    assert options.connection_args(ks, ["h"], ["h"]) == ["h", "9142"]
    assert options.connection_args(ks, ["h", "1"], ["h", "1"]) == ["h", "1"]
    assert options.connection_args(options.KeyspacesOptions(sigv4=True), [], []) == []
    with pytest.raises(KeyspacesError, match="no AWS region for --keyspaces"):
        options.connection_args(options.KeyspacesOptions(keyspaces=True), [], [])
    monkeypatch.setenv("AWS_REGION", "eu-south-2")
    assert options.connection_args(options.KeyspacesOptions(keyspaces=True), [], [])[0] == \
        "cassandra.eu-south-2.amazonaws.com"


def test_role_credentials_are_refreshable_and_provider_pickles(monkeypatch: pytest.MonkeyPatch) -> None:
    from cqlsh_ext.keyspaces.auth import SigV4Provider, SigV4Spec, build_session

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDBASE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "base-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    spec = SigV4Spec("us-east-1", None, "arn:aws:iam::123456789012:role/r")
    session = build_session(spec)
    credentials = session.get_credentials()  # deferred: no STS call until the key is read
    assert credentials.method == "assume-role"
    assert hasattr(credentials, "refresh_needed")
    provider = SigV4Provider(spec, session)
    copy = pickle.loads(pickle.dumps(provider))
    assert copy.spec == spec and copy._session is None
    assert b"base-secret" not in pickle.dumps(provider)


def test_tls_settings_install_the_hook_when_unpickled(tmp_path: Path) -> None:
    """As in a COPY worker started with spawn: unpickling TLSSettings sets up TLS there."""
    code = (
        "import pickle, sys\n"
        "from cqlshlib import copyutil\n"
        "settings = pickle.loads(sys.stdin.buffer.read())\n"
        "opts = copyutil.ssl_settings('h', 'cqlshrc')\n"
        "kw = {'ssl_options': opts}\n"
        "from cqlsh_ext.keyspaces import tls\n"
        "kw = tls._cluster_kwargs(kw)\n"
        "ctx = kw['ssl_context']\n"
        "print(settings.server_hostname, opts, type(ctx).__name__, ctx.check_hostname,"
        " copyutil.Cluster.__name__, 'cqlshlib.cqlshmain' in sys.modules)\n"
    )
    from cqlsh_ext.keyspaces.tls import TLSSettings

    data = pickle.dumps(TLSSettings("cassandra.us-east-1.amazonaws.com"))
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True,
                         env={**os.environ, "HOME": str(tmp_path)}).stdout.decode()
    assert out.split() == ["cassandra.us-east-1.amazonaws.com", "{'server_hostname':",
                           "'cassandra.us-east-1.amazonaws.com'}", "SSLContext", "True", "cluster", "False"]


def test_redact() -> None:
    remember_secret("s3cr3t-value")
    text = "x s3cr3t-value y signature=abcdef0123,access_key=AKID,session_token=tok"
    assert redact(text) == "x **** y signature=****,access_key=AKID,session_token=****"


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CQLSH_"))}
    env["HOME"] = str(tmp_path)
    return subprocess.run([CQLSH_EXT, *args], capture_output=True, text=True, env=env, timeout=60)


def test_help_lists_the_flags(tmp_path: Path) -> None:
    out = run_cli(tmp_path, "--help").stdout
    for flag in ("--keyspaces [REGION]", "--sigv4", "--region REGION", "--profile NAME", "--role-arn ARN",
                 "--certfile PEM"):
        assert flag in out


def test_keyspaces_without_region_or_host_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "--keyspaces", "-e", "SELECT 1")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("cqlsh-ext: error: no AWS region for --keyspaces: give it (--keyspaces "
                                   "us-east-1), or set AWS_REGION, or pass a host name")
    proc = run_cli(tmp_path, "--keyspaces", "us-east-1", "--region", "us-west-2")
    assert proc.returncode == 2 and "disagree" in proc.stderr
