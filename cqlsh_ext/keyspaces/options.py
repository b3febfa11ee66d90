"""Flags and cqlshrc settings for Amazon Keyspaces, SigV4 and TLS.

Flags (command line wins over cqlshrc):

    --keyspaces [REGION]  host cassandra.<REGION>.amazonaws.com, port 9142, TLS verified against the
                          system trust store, consistency LOCAL_QUORUM; SigV4 unless -u/-p are given
    --sigv4               authenticate with IAM credentials (AWS SigV4) through cassandra-sigv4
    --region REGION       region to sign for (else: host name, AWS_REGION, AWS_DEFAULT_REGION, profile)
    --profile NAME        AWS profile (shared config/credentials files); implies --sigv4
    --role-arn ARN        assume this IAM role, credentials refreshed as they expire; implies --sigv4
    --certfile PEM        verify the server against these CA certificates instead of the system's

The same settings in the `[cqlsh_ext]` section of cqlshrc: `keyspaces = true | <region>`,
`sigv4 = true`, `region`, `profile`, `role_arn`, `certfile`.

Only the standard library is imported here: plain connections must not pay for boto3.
"""

from __future__ import annotations

import argparse
import configparser
import os
import re
from dataclasses import dataclass

from cqlsh_ext.keyspaces.errors import KeyspacesError

CONFIG_SECTION = "cqlsh_ext"
KEYSPACES_PORT = 9142
#: us-east-1, eu-central-2, us-gov-west-1, cn-northwest-1, ap-southeast-5 ...
REGION_RE = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d+$")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass
class KeyspacesOptions:
    """What the user asked for; `active` is False for a plain cqlsh connection."""

    keyspaces: bool = False
    sigv4: bool = False
    region: str | None = None
    profile: str | None = None
    role_arn: str | None = None
    certfile: str | None = None
    #: cqlshrc's [auth_provider] names cassandra_sigv4 (the stock form): only errors are translated.
    stock_sigv4_provider: bool = False

    @property
    def wants_sigv4(self) -> bool:
        """SigV4 was asked for explicitly (with --keyspaces it is also the default without -u)."""
        return self.sigv4 or bool(self.profile) or bool(self.role_arn)

    @property
    def tls(self) -> bool:
        return self.keyspaces or bool(self.certfile)

    @property
    def active(self) -> bool:
        return self.keyspaces or self.wants_sigv4 or self.tls or self.stock_sigv4_provider


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Amazon Keyspaces and SigV4 (cqlsh-ext)")
    group.add_argument("--keyspaces", nargs="?", const="", default=None, metavar="REGION",
                       help="connect to Amazon Keyspaces: host cassandra.REGION.amazonaws.com (unless a "
                            "host is given), port 9142, TLS verified against the system trust store, "
                            "consistency LOCAL_QUORUM; SigV4 unless -u/-p are given")
    group.add_argument("--sigv4", action="store_true", default=None,
                       help="authenticate with AWS IAM credentials (SigV4): environment, shared "
                            "config/credentials files, SSO, web identity, container or instance role")
    group.add_argument("--region", metavar="REGION",
                       help="AWS region to sign for (default: from the host name, AWS_REGION, "
                            "AWS_DEFAULT_REGION, or the profile)")
    group.add_argument("--profile", metavar="NAME", help="AWS profile to take credentials from (SigV4)")
    group.add_argument("--role-arn", metavar="ARN",
                       help="assume this IAM role (credentials are refreshed before they expire; SigV4)")
    group.add_argument("--certfile", metavar="PEM",
                       help="CA certificates (PEM) to verify the server with, instead of the system "
                            "trust store; turns TLS on")


def _config(config_file: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser()
    try:
        parser.read(config_file)
    except configparser.Error as err:
        raise KeyspacesError(f"{config_file}: cannot be read ({err.__class__.__name__})") from None
    return parser


def _flag(value: str, what: str) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise KeyspacesError(f"cqlshrc [{CONFIG_SECTION}] {what}: expected true or false, got {value!r}")


def check_region(region: str, source: str) -> str:
    region = region.strip()
    if not REGION_RE.match(region):
        raise KeyspacesError(f"{source}: {region!r} is not an AWS region name (for example us-east-1)")
    return region


def from_sources(ext: argparse.Namespace, config_file: str) -> tuple[KeyspacesOptions, list[str]]:
    """Our options from the parsed flags and cqlshrc.

    Returns the options and arguments to hand back to cqlsh: `--keyspaces 127.0.0.1` is a host,
    not a region, so a value that does not look like a region goes back as cqlsh's positional.
    """
    config = _config(config_file)
    section = config[CONFIG_SECTION] if config.has_section(CONFIG_SECTION) else {}
    opts = KeyspacesOptions()
    give_back: list[str] = []

    keyspaces = section.get("keyspaces")
    if keyspaces is not None:
        if keyspaces.strip().lower() in _TRUE | _FALSE:
            opts.keyspaces = _flag(keyspaces, "keyspaces")
        else:
            opts.keyspaces = True
            opts.region = check_region(keyspaces, f"cqlshrc [{CONFIG_SECTION}] keyspaces")
    if "sigv4" in section:
        opts.sigv4 = _flag(section["sigv4"], "sigv4")
    if section.get("region"):
        opts.region = check_region(section["region"], f"cqlshrc [{CONFIG_SECTION}] region")
    opts.profile = section.get("profile") or None
    opts.role_arn = section.get("role_arn") or None
    opts.certfile = section.get("certfile") or None

    if ext.keyspaces is not None:
        opts.keyspaces = True
        value = ext.keyspaces.strip()
        if REGION_RE.match(value):
            opts.region = value
        elif value:
            give_back.append(value)
    if ext.sigv4:
        opts.sigv4 = True
    if ext.region:
        flag_region = check_region(ext.region, "--region")
        if ext.keyspaces and REGION_RE.match(ext.keyspaces.strip()) and ext.keyspaces.strip() != flag_region:
            raise KeyspacesError(f"--keyspaces {ext.keyspaces} and --region {flag_region} disagree: "
                                 "give the region once")
        opts.region = flag_region
    opts.profile = ext.profile or opts.profile
    opts.role_arn = ext.role_arn or opts.role_arn
    opts.certfile = ext.certfile or opts.certfile
    if opts.certfile:
        opts.certfile = os.path.expanduser(opts.certfile)

    if config.has_section("auth_provider"):
        module = config["auth_provider"].get("module", "")
        opts.stock_sigv4_provider = module.strip().startswith("cassandra_sigv4")
    return opts, give_back


def keyspaces_host(region: str) -> str:
    return f"cassandra.{region}.amazonaws.com"


def env_region(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if environ.get(name, "").strip():
            return check_region(environ[name], name)
    return None


def connection_args(opts: KeyspacesOptions, cqlsh_args: list[str], positional: list[str]) -> list[str]:
    """cqlsh's arguments with --keyspaces' host and port added where the user gave none.

    `positional` is what cqlsh's own parser leaves as host and port.
    """
    if not opts.keyspaces:
        return cqlsh_args
    if len(positional) >= 2:
        return cqlsh_args
    if positional:
        return [*cqlsh_args, str(KEYSPACES_PORT)]
    region = opts.region or env_region()
    if region is None:
        raise KeyspacesError("no AWS region for --keyspaces: give it (--keyspaces us-east-1), "
                             "or set AWS_REGION, or pass a host name")
    return [*cqlsh_args, keyspaces_host(region), str(KEYSPACES_PORT)]
