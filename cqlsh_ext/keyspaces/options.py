"""Flags for Amazon Keyspaces, SigV4 and TLS, and the host and port they imply.

--keyspaces [REGION], --sigv4, --region, --profile, --role-arn and --certfile are declared, with
their cqlshrc keys, parsers and help, in cqlsh_ext.settings.SETTINGS; cqlsh_ext.settings (the one
reader) applies them over cqlshrc's `[cqlsh_ext]` section and also holds KeyspacesOptions.

Only the standard library is imported here: plain connections must not pay for boto3.
"""

from __future__ import annotations

import argparse
import os

from cqlsh_ext.keyspaces.errors import KeyspacesError
from cqlsh_ext.settings import KeyspacesOptions, SettingError, add_flags, parse_region

KEYSPACES_PORT = 9142

__all__ = ["KEYSPACES_PORT", "KeyspacesOptions", "add_arguments", "connection_args", "env_region",
           "keyspaces_host"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--keyspaces, --sigv4, --region, --profile, --role-arn, --certfile: declared with their cqlshrc
    keys in cqlsh_ext.settings.SETTINGS."""
    add_flags(parser, "keyspaces")


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


