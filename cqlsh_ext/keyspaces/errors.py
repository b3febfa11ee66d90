"""Connection failures as one line that names the fix; no traceback, never a secret.

`connection_failures(host, port)` is the one wrapper around connecting, with or without Amazon
Keyspaces (the shell, `cqlsh-ext demo load`, Spark mode): `explain(exc, host, port)` turns what the
driver, the resolver, botocore or ssl raise while connecting into one line naming host:port and
what to check; `redact(text)` removes every secret the process knows of (AWS secret key and session
token from the environment, the -p password, resolved SigV4 credentials) from any text shown.
"""

from __future__ import annotations

import errno
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

#: Secrets seen in this process besides the environment's (resolved credentials, passwords).
_KNOWN_SECRETS: set[str] = set()
_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
#: "signature=<hex>" or "session_token=..." in anything echoed back. (The patterns here are compiled
#: at first use, through re's cache: every shell imports this module, few fail to connect.)
_SIGNED_FIELD = r"(signature|session_token|password)=[^,\s'\"]+"


class KeyspacesError(Exception):
    """A failure whose str() is the one line the user sees."""


class Asked(NamedTuple):  # NamedTuples, not dataclasses: cheaper to create at start-up
    """How a front end's user gives what logging in takes, as `explain`'s lines name it: the
    shell's flags (SHELL_FLAGS), or the Python API's arguments (cqlsh_ext.api)."""

    #: A user name and password, given.
    login: str = "-u USER -p PASSWORD"
    #: The same, named.
    user_password: str = "-u/-p"
    #: Another credentials file, given and named.
    credentials_file: str = "--credentials FILE"
    credentials: str = "--credentials"
    #: The keyspace to use.
    keyspace: str = "-k/--keyspace"


SHELL_FLAGS = Asked()


class ConnectionFailed(KeyspacesError):
    """Connecting failed; str() is the line `explain` made, secrets redacted."""


@contextmanager
def connection_failures(host: str, port: int, *, tls: bool = False, keyspaces: bool = False,
                        debug: bool = False, keep: tuple[type[BaseException], ...] = (),
                        asked: Asked = SHELL_FLAGS) -> Iterator[None]:
    """Any failure of the `with` body (connecting) as ConnectionFailed: one line naming host:port and
    what to check (`asked`: how the front end's user gives the login and the keyspace). --debug
    writes the traceback first, redacted. Ctrl-C, SystemExit and `keep` (a caller's own errors that
    already say what happened) pass through."""
    passing: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit, *keep)
    try:
        yield
    except passing:
        raise
    except Exception as err:
        if debug:
            sys.stderr.write(redact("".join(traceback.format_exception(err))))
        message = str(err) if isinstance(err, KeyspacesError) else \
            explain(err, host, port, tls=tls, keyspaces=keyspaces, asked=asked)
        raise ConnectionFailed(redact(message)) from None


def remember_secret(*values: str | None) -> None:
    """Make redact() remove these strings wherever they would appear."""
    _KNOWN_SECRETS.update(v for v in values if v and len(v) >= 4)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    secrets = set(_KNOWN_SECRETS) | {os.environ.get(name, "") for name in _SECRET_ENV} | set(extra)
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "****")
    return re.sub(_SIGNED_FIELD, r"\1=****", text)


def one_line(text: str) -> str:
    return redact(" ".join(str(text).split()))


def _causes(exc: BaseException) -> list[BaseException]:
    """exc, what it wraps (NoHostAvailable's per-host errors, __cause__/__context__), flattened."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        err = todo.pop(0)
        if err in seen:
            continue
        seen.append(err)
        errors = getattr(err, "errors", None)
        if isinstance(errors, dict):
            todo.extend(e for e in errors.values() if isinstance(e, BaseException))
        for nested in (err.__cause__, err.__context__):
            if nested is not None:
                todo.append(nested)
    return seen


def _server_message(text: str) -> str:
    """The server's message inside the driver's 'Error from server: code=0100 [..] message="..."'."""
    start = text.rfind('message="')
    if start < 0:
        return text
    start += len('message="')
    end = text.find('"', start)
    return text[start:end if end >= 0 else len(text)]


#: What the resolver says when a host name does not resolve (glibc, musl, macOS).
_UNRESOLVED = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
               "no address associated with hostname", "name does not resolve")
#: A keyspace named with -k that the session could not use: the driver's NoHostAvailable ("... using
#: keyspace 'x'"), or the server's "Keyspace 'x' does not exist".
_NO_KEYSPACE = r"using keyspace '([^']+)'|keyspace '?([^' ]+)'? does not exist"


#: The driver reading a frame whose version byte no CQL server sends (protocol versions are 1 to 6).
_DRIVER_VERSION = r"does not support protocol version (\d+)"
_HIGHEST_CQL_VERSION = 6


def _resolver_says(host: str) -> str:
    """Why `host` does not resolve, asked again: the driver's UnresolvableContactPoints keeps no reason."""
    import socket

    try:
        socket.getaddrinfo(host, None)
    except OSError as err:
        return err.strerror or str(err)
    return "no address found"


class _Cause(NamedTuple):
    """One cause of a connection failure (`err`, its text, lower case, and its type's name), with
    what explain's lines name: `where` (host:port), whether TLS and Amazon Keyspaces were asked
    for, and how the user gives the login and the keyspace."""

    err: BaseException
    text: str
    lower: str
    name: str
    host: str
    where: str
    tls: bool
    keyspaces: bool
    asked: Asked


def _port_hint(keyspaces: bool) -> str:
    return ("Amazon Keyspaces: port 9142 with TLS" if keyspaces
            else "Cassandra's CQL port is 9042 unless its native_transport_port says otherwise")


def _unreachable(c: _Cause) -> str | None:
    err, lower = c.err, c.lower
    if isinstance(err, OSError) and err.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH) \
            or "network is unreachable" in lower or "no route to host" in lower:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else "unreachable"
        return (f"cannot reach {c.where} ({reason}): check the host and this machine's network "
                "(VPN, proxy, routes)")
    return None


def _unresolved(c: _Cause) -> str | None:
    err = c.err
    if c.name in ("gaierror", "UnresolvableContactPoints") or any(s in c.lower for s in _UNRESOLVED):
        reason = err.strerror if isinstance(err, OSError) and err.strerror else _resolver_says(c.host)
        return (f"the host name in {c.where} does not resolve ({reason}): check its spelling, or "
                "give the server's IP address")
    return None


def _name_mismatch(c: _Cause) -> str | None:
    if "hostname mismatch" in c.lower or "ip address mismatch" in c.lower:
        named = (" (Amazon Keyspaces: cassandra.<region>.amazonaws.com or your VPC endpoint's name)"
                 if c.keyspaces else "")
        return (f"TLS certificate verification failed for {c.where}: the certificate is not valid for "
                f"{c.host!r}; connect with the name the certificate carries{named}, not an IP address")
    return None


def _untrusted_certificate(c: _Cause) -> str | None:
    import ssl

    if isinstance(c.err, ssl.SSLCertVerificationError) or "certificate_verify_failed" in c.lower \
            or "certificate verify failed" in c.lower:
        detail = re.search(r"certificate verify failed: ([^(\]'\"]+)", c.text, re.I)
        reason = getattr(c.err, "verify_message", "") or (detail.group(1).strip() if detail else "") \
            or "certificate verify failed"
        trusted = (" (Amazon Keyspaces: Amazon Root CA 1-4 and Starfield, in the system trust store "
                   "of an up-to-date system)" if c.keyspaces else "")
        return (f"TLS certificate verification failed for {c.where} ({reason}): the server's "
                f"certificate is not signed by a CA you trust; pass --certfile with the right CA "
                f"bundle{trusted}")
    return None


def _not_tls(c: _Cause) -> str | None:
    lower = c.lower
    if "wrong_version_number" in lower or "wrong version number" in lower \
            or "record layer failure" in lower or "packet length too long" in lower:
        return (f"{c.where} does not speak TLS: wrong port? Amazon Keyspaces listens with TLS on "
                f"{9142}; a plain Cassandra port needs no --keyspaces/--certfile")
    return None


def _no_login_given(c: _Cause) -> str | None:
    if "requires authentication" not in c.lower:  # the driver, when the server asks and none were given
        return None
    if c.keyspaces:
        return (f"{c.where} needs credentials to log in: AWS credentials (SigV4: --keyspaces and "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile) or service-specific ones "
                f"({c.asked.login})")
    return (f"{c.where} needs a user name and password to log in: give them with {c.asked.login}, "
            f"or in a credentials file ({c.asked.credentials_file}; ~/.cassandra/credentials is read "
            "by default)")


def _not_cql(c: _Cause) -> str | None:
    version = re.search(_DRIVER_VERSION, c.text)
    if version and int(version.group(1)) > _HIGHEST_CQL_VERSION:
        # The first bytes of something else (HTTP, TLS, SSH...) read as a CQL frame's version.
        return (f"{c.where} answers, but not in CQL: another kind of server listens on that port; check "
                f"the port ({_port_hint(c.keyspaces)})")
    return None


def _bad_credentials(c: _Cause) -> str | None:
    if not ("AuthenticationFailed" in c.name or "bad credentials" in c.lower or "code=0100" in c.lower):
        return None
    asked = c.asked
    message = _server_message(c.text)
    msg_lower = message.lower()
    if "password must not be null" in msg_lower:
        return (f"{c.where} does not accept SigV4 (it answered like a stock Cassandra "
                f"PasswordAuthenticator): use {asked.user_password} there, or check the host")
    if "signature expired" in msg_lower or "clock" in msg_lower:
        return (f"the server refused the signature as too old or too new ({one_line(message)}): "
                "the clock of this machine is off by more than 15 minutes; sync it (NTP)")
    if "expired" in msg_lower and "token" in msg_lower:
        return (f"the AWS session token has expired ({one_line(message)}): get fresh "
                "credentials (aws sso login, a new assume-role, or new AWS_SESSION_TOKEN)")
    if "token" in msg_lower and "invalid" in msg_lower:
        return (f"the server does not know these AWS credentials ({one_line(message)}): check "
                "the access key ID, and that AWS_SESSION_TOKEN belongs to it")
    check = (f"the AWS secret access key (SigV4) or the {asked.user_password} service-specific "
             "credentials" if c.keyspaces
             else f"{asked.user_password}, or the credentials file ({asked.credentials})")
    return f"Bad credentials: {c.where} refused the login ({one_line(message)}): check {check}"


def _no_region(c: _Cause) -> str | None:
    return no_region_message() if "can't authenticate without a region name" in c.lower else None


def _no_credentials(c: _Cause) -> str | None:
    return no_credentials_message() if isinstance(c.err, AttributeError) and "access_key" in c.lower else None


def _refused(c: _Cause) -> str | None:
    if isinstance(c.err, ConnectionRefusedError) or "connection refused" in c.lower:
        return f"nothing listens on {c.where}: check the host and port ({_port_hint(c.keyspaces)})"
    return None


def _tls_closed(c: _Cause) -> str | None:
    lower = c.lower
    if c.tls and ("connection reset" in lower or "eof occurred" in lower or "unexpected eof" in lower
                  or "closed" in lower and "ssl" in lower):
        return (f"{c.where} closed the connection during the TLS handshake: wrong port, or the "
                "server does not speak TLS there (Amazon Keyspaces: port 9142)")
    return None


def _no_keyspace(c: _Cause) -> str | None:
    missing = re.search(_NO_KEYSPACE, _server_message(c.text), re.I)
    if missing:
        keyspace = missing.group(1) or missing.group(2)
        return f"{c.where} could not use keyspace {keyspace!r}: check that it exists ({c.asked.keyspace})"
    return None


def _timed_out(c: _Cause) -> str | None:
    if "timed out" in c.lower or "timeout" in c.name.lower():
        seconds = re.search(r"\((\d+(?:\.\d+)?) seconds?\)", c.text)
        after = f" after {seconds.group(1)} s (--connect-timeout)" if seconds else ""
        network = ("VPC endpoint, security group, proxy" if c.keyspaces else "firewall, proxy")
        port_hint = " (Amazon Keyspaces: 9142)" if c.keyspaces else ""
        return (f"timed out connecting to {c.where}{after}: check the host name, the port{port_hint} and "
                f"that the network ({network}) lets it through")
    return None


#: explain's lines, the first that speaks of a cause said: each gives its line when the cause is
#: what it knows, else None. A timeout is looked for only after every cause was asked these.
_EXPLAINED: tuple[Callable[[_Cause], str | None], ...] = (
    _unreachable, _unresolved, _name_mismatch, _untrusted_certificate, _not_tls, _no_login_given, _not_cql,
    _bad_credentials, _no_region, _no_credentials, _refused, _tls_closed, _no_keyspace)


def explain(exc: BaseException, host: str, port: int, tls: bool, keyspaces: bool = False,
            asked: Asked = SHELL_FLAGS) -> str:
    """One line saying what went wrong while connecting to host:port and what to check; `keyspaces`
    adds Amazon Keyspaces' own hints (its port, its names, its certificates); `asked`: how the
    user gives the login and the keyspace."""
    where = f"{host}:{port}"
    causes = _causes(exc)
    for err in causes:
        if isinstance(err, KeyspacesError):
            return str(err)
    for lines in (_EXPLAINED, (_timed_out,)):
        for err in causes:
            text = str(err)
            cause = _Cause(err, text, text.lower(), type(err).__name__, host, where, tls, keyspaces, asked)
            for line in lines:
                said = line(cause)
                if said is not None:
                    return said
    return f"could not connect to {where}: {one_line(str(exc))}"


def no_region_message() -> str:
    return ("no AWS region to sign for: pass --region (or --keyspaces REGION), set AWS_REGION, "
            "or connect to a cassandra.<region>.amazonaws.com host")


def no_credentials_message(profile: str | None = None) -> str:
    where = f"profile {profile!r}" if profile else "environment, shared credentials/config files, SSO, " \
        "container or instance role"
    return (f"no AWS credentials found (looked in: {where}): set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, run `aws configure` or `aws sso login`, or pass --profile")


def explain_credentials_error(exc: BaseException, profile: str | None, role_arn: str | None) -> str:
    """botocore's failures while resolving credentials (botocore is not imported here)."""
    name = type(exc).__name__
    text = one_line(str(exc))
    lower = text.lower()
    if name == "ProfileNotFound":
        return (f"AWS profile {profile!r} not found in the shared config/credentials files "
                "(AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE): check the name, or run `aws configure "
                f"--profile {profile}`")
    if name in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"):
        if name == "PartialCredentialsError":
            return f"incomplete AWS credentials ({text}): set both the access key ID and the secret key"
        return no_credentials_message(profile)
    if name in ("TokenRetrievalError", "UnauthorizedSSOTokenError", "SSOTokenLoadError") \
            or ("expired" in lower and "token" in lower):
        return (f"the AWS session/SSO token has expired ({text}): run `aws sso login`, or get fresh "
                "credentials")
    if name == "ClientError" and role_arn:
        return (f"could not assume role {role_arn} ({text}): check the role's trust policy and "
                "your credentials")
    if name in ("EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError"):
        return (f"could not reach AWS STS to get credentials ({text}): check the network or "
                "AWS_ENDPOINT_URL_STS")
    return f"could not get AWS credentials: {name}: {text}"
