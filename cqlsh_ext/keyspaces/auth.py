"""SigV4 authentication through cassandra-sigv4, with credentials from boto3's whole chain.

cassandra-sigv4's `SigV4AuthProvider` takes a boto3 `Session`; ours builds that session from a
profile (shared config/credentials files, SSO, web identity, container and instance roles: all of
boto3's chain) and optionally assumes a role with botocore's own refreshing assume-role machinery.
The provider can be pickled (COPY's worker processes get it under spawn/forkserver): only its
settings travel, and the worker builds its own session.

This module imports boto3; import it only when SigV4 is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cassandra.auth import Authenticator, AuthProvider

from cqlsh_ext.keyspaces.errors import (
    KeyspacesError,
    explain_credentials_error,
    no_credentials_message,
    no_region_message,
    remember_secret,
)
from cqlsh_ext.keyspaces.options import env_region
from cqlsh_ext.settings import region_from_host

ROLE_SESSION_NAME = "cqlsh-ext"
def resolve_region(explicit: str | None, host: str, profile_region: str | None = None) -> str:
    """--region / --keyspaces REGION / cqlshrc, then the host name, then AWS_REGION and
    AWS_DEFAULT_REGION, then the profile's region. A Keyspaces host name wins over the environment:
    a signature for another region than the endpoint's is always refused.
    """
    region = explicit or region_from_host(host) or env_region() or profile_region
    if not region:
        raise KeyspacesError(no_region_message())
    return region


@dataclass(frozen=True)
class SigV4Spec:
    """Everything needed to rebuild the credentials in another process (no secret in it)."""

    region: str | None
    profile: str | None = None
    role_arn: str | None = None


def base_session(profile: str | None) -> Any:
    import boto3

    try:
        return boto3.Session(profile_name=profile)
    except Exception as err:  # botocore.exceptions.ProfileNotFound, config parse errors
        raise KeyspacesError(explain_credentials_error(err, profile, None)) from None


def build_session(spec: SigV4Spec, base: Any | None = None) -> Any:
    """A boto3 Session for spec; with role_arn its credentials come from STS AssumeRole and are
    refreshed by botocore before they expire (DeferredRefreshableCredentials)."""
    import boto3

    session = base if base is not None else base_session(spec.profile)
    if not spec.role_arn:
        if spec.region and session.region_name != spec.region:
            return boto3.Session(botocore_session=session._session, region_name=spec.region)
        return session

    from botocore.credentials import (
        AssumeRoleCredentialFetcher,
        CredentialProvider,
        DeferredRefreshableCredentials,
    )

    source = session.get_credentials()
    if source is None:
        raise KeyspacesError(no_credentials_message(spec.profile))
    botocore_session = session._session
    region = spec.region or session.region_name

    def sts_client(service: str, **kwargs: Any) -> Any:  # STS of the region (AWS_ENDPOINT_URL_STS wins)
        return botocore_session.create_client(service, region_name=region, **kwargs)

    fetcher = AssumeRoleCredentialFetcher(
        client_creator=sts_client,
        source_credentials=source,
        role_arn=spec.role_arn,
        extra_args={"RoleSessionName": ROLE_SESSION_NAME},
    )

    class AssumeRoleProvider(CredentialProvider):
        METHOD = "assume-role"
        CANONICAL_NAME = "cqlsh-ext-assume-role"

        def load(self) -> Any:
            return DeferredRefreshableCredentials(refresh_using=fetcher.fetch_credentials, method=self.METHOD)

    import botocore.session

    assumed = botocore.session.Session(profile=spec.profile)
    assumed.get_component("credential_provider").insert_before("env", AssumeRoleProvider())
    return boto3.Session(botocore_session=assumed, region_name=region)


class _FrozenCredentials:
    """What cassandra-sigv4's authenticator reads from its session: `region_name` and
    `get_credentials()`. Frozen credentials keep the key, secret and token of one signature
    consistent while botocore refreshes them in the background."""

    def __init__(self, session: Any, region: str) -> None:
        self._session = session
        self.region_name = region

    def get_credentials(self) -> Any:
        try:
            credentials = self._session.get_credentials()
            frozen = credentials.get_frozen_credentials() if credentials is not None else None
        except KeyspacesError:
            raise
        except Exception as err:  # botocore errors of refreshing / SSO / STS
            raise KeyspacesError(explain_credentials_error(err, None, None)) from None
        if frozen is None or not frozen.access_key:
            raise KeyspacesError(no_credentials_message())
        remember_secret(frozen.secret_key, frozen.token)
        return frozen


class SigV4Provider(AuthProvider):
    """cassandra-sigv4's signer over a boto3 session built from a SigV4Spec; picklable."""

    def __init__(self, spec: SigV4Spec, session: Any | None = None) -> None:
        self.spec = spec
        self._session = session

    def session(self) -> Any:
        if self._session is None:
            self._session = build_session(self.spec)
        return self._session

    @property
    def region(self) -> str:
        region = self.spec.region or self.session().region_name
        if not region:
            raise KeyspacesError(no_region_message())
        return region

    def new_authenticator(self, host: str) -> Authenticator:
        from cassandra_sigv4.auth import SigV4Authenticator

        return SigV4Authenticator(_FrozenCredentials(self.session(), self.region))

    def check(self) -> str:
        """Resolve the credentials now (assume the role, read SSO caches...) so that a failure is
        reported before connecting. Returns the access key ID."""
        return _FrozenCredentials(self.session(), self.region).get_credentials().access_key

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = state["spec"]
        self._session = None

    def __repr__(self) -> str:
        return f"SigV4Provider(region={self.spec.region!r}, profile={self.spec.profile!r}, " \
               f"role_arn={self.spec.role_arn!r})"


def make_provider(explicit_region: str | None, host: str, profile: str | None,
                  role_arn: str | None) -> SigV4Provider:
    """The provider for a connection to host, its credentials checked; raises KeyspacesError."""
    base = base_session(profile)
    region = resolve_region(explicit_region, host, base.region_name)
    spec = SigV4Spec(region=region, profile=profile, role_arn=role_arn)
    try:
        provider = SigV4Provider(spec, build_session(spec, base))
        provider.check()
    except KeyspacesError:
        raise
    except Exception as err:
        raise KeyspacesError(explain_credentials_error(err, profile, role_arn)) from None
    return provider
