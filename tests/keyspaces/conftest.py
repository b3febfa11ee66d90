"""A local Amazon-Keyspaces-like endpoint: a second Cassandra 5.0 with a SigV4 authenticator.

`keyspaces_endpoint` (session scope) starts, next to the suite's main server and on its own ports
and directory (.cache/test-keyspaces):
- the test authenticator of tests/keyspaces/java (SigV4 handshake exactly as docs/keyspaces.md
  describes, plus SASL PLAIN through Cassandra's PasswordAuthenticator), compiled with javac against
  the Cassandra jars;
- TLS on its own port with a certificate from a test CA made here with openssl (and a second,
  unrelated CA for the "wrong CA" case);
- release version 3.11.2, as Amazon Keyspaces reports (a version.properties ahead on the classpath);
- result pages that are empty but have more data, for paged SELECTs on keyspace ks_pages (a query
  handler of tests/keyspaces/java), as Keyspaces returns them;
- system_schema_mcs.tables, where a new table is CREATING when first read and ACTIVE after, as
  Keyspaces creates tables asynchronously (the same query handler);
- when moto is installed, a moto STS server on loopback whose assumed-role credentials the
  authenticator accepts (it looks them up in moto's state, as Keyspaces asks IAM).

Ports are picked free at start; CQLSH_EXT_KS_TEST_PORT (plain), _TLS_PORT, _STORAGE_PORT and
_JMX_PORT fix them instead. CQLSH_EXT_KS_TEST_DIR: the directory (.cache/test-keyspaces).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import per_worker, refuse_fixed_ports_in_workers
from server_ports import ports_from, start_on_free_ports

from keyspaces.ksharness import (
    KEYSTORE_PASSWORD,
    REGION,
    REPO_ROOT,
    KeyspacesEndpoint,
    compile_java,
    devcassandra,
    make_ca,
    make_server_keystore,
    write_credentials,
)


@pytest.fixture(scope="session")
def moto_sts() -> Iterator[str | None]:
    """http://127.0.0.1:PORT of a moto server (STS), or None when moto is not installed."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        yield None
        return
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


#: The Keyspaces-like endpoint's ports: free ones unless these variables fix them.
KS_PORT_VARIABLES = {"native_port": "CQLSH_EXT_KS_TEST_PORT",
                     "storage_port": "CQLSH_EXT_KS_TEST_STORAGE_PORT",
                     "jmx_port": "CQLSH_EXT_KS_TEST_JMX_PORT",
                     "tls_port": "CQLSH_EXT_KS_TEST_TLS_PORT"}


@pytest.fixture(scope="session")
def keyspaces_endpoint(moto_sts: str | None) -> Iterator[KeyspacesEndpoint]:
    for tool in ("openssl",):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed to make the test CA")
    refuse_fixed_ports_in_workers(KS_PORT_VARIABLES)
    directory = per_worker(Path(os.environ.get("CQLSH_EXT_KS_TEST_DIR")
                                or REPO_ROOT / ".cache" / "test-keyspaces"))
    node_dir = directory / "node"
    lib_dir = devcassandra.ensure_jars()
    shutil.rmtree(directory / "tls", ignore_errors=True)
    tls_dir = directory / "tls"
    tls_dir.mkdir(parents=True)
    ca_key, ca_cert = make_ca(tls_dir, "test-ca")
    _, wrong_ca = make_ca(tls_dir, "other-ca")
    keystore = make_server_keystore(tls_dir, ca_key, ca_cert)
    classes = compile_java(lib_dir, directory / "classes")
    credentials = directory / "sigv4-credentials"
    write_credentials(credentials)

    def make_config() -> devcassandra.Config:
        ports = ports_from(KS_PORT_VARIABLES)
        return devcassandra.Config(
            directory=node_dir,
            native_port=ports["native_port"],
            storage_port=ports["storage_port"],
            jmx_port=ports["jmx_port"],
            cluster_name="cqlsh-ext keyspaces tests",
            heap="768M",
            authenticator="com.amazon.helenus.auth.HelenusAuthenticator",
            extra_classpath=[classes],
            client_tls=devcassandra.ClientTLS(keystore=keystore, keystore_password=KEYSTORE_PASSWORD,
                                              port=ports["tls_port"]),
            extra_jvm_args=[
                f"-Dsigv4test.credentials={credentials}",
                f"-Dsigv4test.region={REGION}",
                f"-Dsigv4test.sts_url={moto_sts + '/moto-api/data.json' if moto_sts else ''}",
                # Empty pages that still have more data, as Keyspaces returns them (keyspace ks_pages),
                # and system_schema_mcs.tables' status of a new table: CREATING, then ACTIVE.
                "-Dcassandra.custom_query_handler_class=cqlshext.sigv4test.KeyspacesStandInQueryHandler",
            ],
        )
    leftover = devcassandra.Instance(make_config())
    if leftover.is_running():
        leftover.stop()
    inst = start_on_free_ports(make_config, KS_PORT_VARIABLES,
                               timeout=float(os.environ.get("CQLSH_EXT_TEST_START_TIMEOUT") or 120),
                               die_with_parent=True, clean=True)
    cfg = inst.config
    assert cfg.client_tls is not None and cfg.client_tls.port is not None
    endpoint = KeyspacesEndpoint(cfg.host, cfg.native_port, cfg.client_tls.port, ca_cert, wrong_ca,
                                 directory, moto_sts, inst)
    try:
        session = endpoint.plain_session()
        # Keyspaces' table of tables, with its key (the query handler keeps each table's status there).
        session.execute("CREATE KEYSPACE IF NOT EXISTS system_schema_mcs WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        # custom_properties as Keyspaces has it ({'client_side_timestamps': {'status': 'enabled'}, ...}):
        # a test sets it where Keyspaces' ALTER TABLE ... WITH custom_properties would.
        session.execute("CREATE TABLE IF NOT EXISTS system_schema_mcs.tables (keyspace_name text, "
                        "table_name text, status text, custom_properties map<text, frozen<map<text, text>>>, "
                        "PRIMARY KEY (keyspace_name, table_name))")
        session.execute("CREATE KEYSPACE IF NOT EXISTS ks_test WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TYPE IF NOT EXISTS ks_test.address (street text, zip int)")
        session.execute("CREATE TABLE IF NOT EXISTS ks_test.users (id int PRIMARY KEY, name text, "
                        "home frozen<address>)")
        session.execute("CREATE TABLE IF NOT EXISTS ks_test.imported (id int PRIMARY KEY, v text)")
        for i in range(3):
            session.execute("INSERT INTO ks_test.users (id, name) VALUES (%s, %s)", (i, f"user-{i}"))
        session.execute("CREATE TABLE IF NOT EXISTS ks_test.docs (id int PRIMARY KEY, data blob)")
        for i in range(3):
            doc = json.dumps({"id": i, "text": "cqlsh-ext " * 20}).encode()
            session.execute("INSERT INTO ks_test.docs (id, data) VALUES (%s, %s)", (i, gzip.compress(doc)))
        session.execute("CREATE KEYSPACE IF NOT EXISTS ks_pages WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.execute("CREATE TABLE IF NOT EXISTS ks_pages.t (id int PRIMARY KEY)")
        for i in range(5):
            session.execute("INSERT INTO ks_pages.t (id) VALUES (%s)", (i,))
        yield endpoint
    finally:
        endpoint.close()
        inst.stop()
