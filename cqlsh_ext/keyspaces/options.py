"""Flags for Amazon Keyspaces, SigV4 and TLS, and the host and port they imply.

    --keyspaces [REGION]  host cassandra.<REGION>.amazonaws.com, port 9142, TLS verified against the
                          system trust store, consistency LOCAL_QUORUM; SigV4 unless -u/-p are given
    --sigv4               authenticate with IAM credentials (AWS SigV4) through cassandra-sigv4
    --region REGION       region to sign for (else: host name, AWS_REGION, AWS_DEFAULT_REGION, profile)
    --profile NAME        AWS profile (shared config/credentials files); implies --sigv4
    --role-arn ARN        assume this IAM role, credentials refreshed as they expire; implies --sigv4
    --certfile PEM        verify the server against these CA certificates instead of the system's

The same settings in cqlshrc's `[cqlsh_ext]` section, and the flags' values, are read by
cqlsh_ext.settings (the one reader), which also holds KeyspacesOptions; flags win over cqlshrc.

Only the standard library is imported here: plain connections must not pay for boto3.
"""

from __future__ import annotations

import argparse
import os
import re

from cqlsh_ext.keyspaces.errors import KeyspacesError
from cqlsh_ext.settings import REGION_RE, KeyspacesOptions, SettingError, parse_region

KEYSPACES_PORT = 9142

__all__ = ["KEYSPACES_PORT", "KeyspacesOptions", "add_arguments", "connection_args", "env_region",
           "keyspaces_host"]


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


def keyspaces_host(region: str) -> str:
    return f"cassandra.{region}.amazonaws.com"


def env_region(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if environ.get(name, "").strip():
            try:
                return parse_region(environ[name], name)
            except SettingError as err:
                raise KeyspacesError(str(err)) from None
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


_AWS_DOMAINS = ("amazonaws.com", "amazonaws.com.cn", "api.aws")


def region_from_host(host: str) -> str | None:
    """The region in a Keyspaces endpoint name, in all its common forms.

    cassandra.us-east-1.amazonaws.com, cassandra-fips.us-gov-west-1.amazonaws.com,
    cassandra.cn-north-1.amazonaws.com.cn, cassandra.eu-west-1.api.aws (dual-stack),
    vpce-0abc-123.cassandra.us-east-1.vpce.amazonaws.com (VPC endpoint).
    """
    name = host.strip().rstrip(".").lower()
    if not any(name.endswith("." + domain) for domain in _AWS_DOMAINS):
        return None
    labels = name.split(".")
    for i, label in enumerate(labels[1:], start=1):
        if REGION_RE.match(label) and re.fullmatch(r"cassandra(-fips)?", labels[i - 1]):
            return label
    return None
