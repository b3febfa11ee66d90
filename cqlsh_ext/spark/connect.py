"""The connection `cqlsh-ext spark` makes, from the arguments and cqlshrc as the shell reads them.

Two connections to the same cluster: the Python driver's on the Spark driver (the table's schema and
column types, the same metadata the shell has), and the connector's in every executor (the rows),
configured from the same host, port, credentials, TLS and SigV4 settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cqlsh_ext.reading.connecting import Connection, ConnectionRefused
from cqlsh_ext.reading.connecting import connection as make_connection
from cqlsh_ext.spark.session import CONNECTOR, SIGV4_PLUGIN, SparkError


class SparkConnection(Connection):
    """The shell's connection (reading.connecting), and what Spark's connector makes of it."""

    def packages(self) -> list[str]:
        return [CONNECTOR, SIGV4_PLUGIN] if self.sigv4_region else [CONNECTOR]

    def spark_conf(self, datacenter: str | None, workdir: Path) -> dict[str, str]:
        """The connector's settings (spark.cassandra.*) for this connection."""
        conf = {
            "spark.cassandra.connection.host": self.host,
            "spark.cassandra.connection.port": str(self.port),
            "spark.cassandra.connection.timeoutMS": str(1000 * int(self.options.connect_timeout)),
            "spark.cassandra.read.timeoutMS": str(1000 * int(self.options.request_timeout)),
        }
        if datacenter:
            conf["spark.cassandra.connection.localDC"] = datacenter
        if self.settings.keyspaces.keyspaces:
            # Amazon Keyspaces reads at LOCAL_ONE or LOCAL_QUORUM; the shell uses LOCAL_QUORUM there.
            conf["spark.cassandra.input.consistency.level"] = "LOCAL_QUORUM"
        user = getattr(self.auth_provider, "username", None)
        password = getattr(self.auth_provider, "password", None)
        if user is not None and not self.sigv4_region:
            conf["spark.cassandra.auth.username"] = str(user)
            conf["spark.cassandra.auth.password"] = str(password or "")
        if self.ssl:
            conf["spark.cassandra.connection.ssl.enabled"] = "true"
            store = self._truststore(workdir)
            if store is not None:
                conf["spark.cassandra.connection.ssl.trustStore.path"] = str(store)
                conf["spark.cassandra.connection.ssl.trustStore.password"] = _STORE_PASSWORD
                conf["spark.cassandra.connection.ssl.trustStore.type"] = "PKCS12"
        if self.sigv4_region:
            # Shipped to every executor with spark.files; the connector finds it there by its name.
            profile = self._sigv4_profile(workdir, datacenter, conf)
            conf["spark.files"] = str(profile)
            conf["spark.cassandra.connection.config.profile.path"] = profile.name
        return conf

    def _certfile(self) -> str | None:
        certfile = self.settings.keyspaces.certfile
        if certfile:
            return certfile
        if self.settings.keyspaces.tls:
            return None  # the system trust store: the JDK's own (it holds the Amazon roots)
        import configparser

        cfg = configparser.ConfigParser()
        cfg.read(self.config_file)
        path = os.environ.get("SSL_CERTFILE") or cfg.get("ssl", "certfile", fallback=None)
        return os.path.expanduser(path) if path else None

    def _truststore(self, workdir: Path) -> Path | None:
        """The CA file (PEM, as the shell takes it) as a PKCS12 trust store, the form the Java
        driver reads: every certificate of the file imported with the JDK's keytool."""
        certfile = self._certfile()
        if not certfile:
            return None
        import re
        import subprocess

        try:
            pem = Path(certfile).read_text()
        except OSError as err:
            raise SparkError(f"certificate file {certfile}: {err.strerror}") from None
        certs = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", pem, re.S)
        if not certs:
            raise SparkError(f"certificate file {certfile}: no PEM certificate in it")
        store = workdir / "truststore.p12"
        store.unlink(missing_ok=True)
        for i, cert in enumerate(certs):
            one = workdir / f"ca-{i}.pem"
            one.write_text(cert + "\n")
            command = ["keytool", "-importcert", "-noprompt", "-alias", f"ca{i}", "-file", str(one),
                       "-keystore", str(store), "-storetype", "PKCS12", "-storepass", _STORE_PASSWORD]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SparkError(f"certificate file {certfile}: keytool refused it: "
                                 f"{(done.stdout + done.stderr).strip().splitlines()[-1:]}")
        return store

    def _sigv4_profile(self, workdir: Path, datacenter: str | None, conf: dict[str, str]) -> Path:
        """A Java driver configuration with the SigV4 plugin (the connector's driver profile)."""
        lines = [
            "datastax-java-driver {",
            f'  basic.contact-points = ["{self.host}:{self.port}"]',
            f'  basic.load-balancing-policy.local-datacenter = "{datacenter or self.sigv4_region}"',
            "  advanced.auth-provider {",
            "    class = software.aws.mcs.auth.SigV4AuthProvider",
            f'    aws-region = "{self.sigv4_region}"',
            "  }",
        ]
        if self.ssl:
            lines += ["  advanced.ssl-engine-factory {", "    class = DefaultSslEngineFactory",
                      "    hostname-validation = true"]
            store = conf.get("spark.cassandra.connection.ssl.trustStore.path")
            if store:
                lines += [f'    truststore-path = "{store}"',
                          f'    truststore-password = "{_STORE_PASSWORD}"']
            lines.append("  }")
        lines.append("}")
        path = workdir / "sigv4-driver.conf"
        path.write_text("\n".join(lines) + "\n")
        return path


#: Protects nothing (a trust store holds public certificates); Java requires one.
_STORE_PASSWORD = "changeit"


def connection(args: list[str], flags: Mapping[str, object] | None = None) -> SparkConnection:
    """The connection the shell would make with these arguments (`flags`: the settings' flags
    `cqlsh-ext spark` read itself, --read-only and --policy); SparkError, SettingError or
    KeyspacesError with one line when they do not make one Spark's connector can use."""
    from cqlsh_ext.keyspaces import wiring

    try:
        return make_connection(args, wiring, SparkConnection, prog="cqlsh-ext spark",
                               plain_or_sigv4_only="Spark mode", flags=flags)
    except ConnectionRefused as err:
        raise SparkError(str(err)) from None
