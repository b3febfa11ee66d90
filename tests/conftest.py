"""Shared fixtures. `cassandra`: a real Cassandra 5.0 for the whole test session.

The server is this suite's own (ports picked free at start, directory .cache/test-cassandra), so
it runs beside a developer's `bin/dev-cassandra` on 9042, another test run or any other server.
It starts on first use (about 6 s, plus a one-time jar download) and stops at the end of the
session.

Environment:
    CQLSH_EXT_TEST_PORT / _STORAGE_PORT / _JMX_PORT   fixed ports instead of free ones
    CQLSH_EXT_TEST_DIR                                 another instance directory
    CQLSH_EXT_TEST_REUSE=1    use the instance already running there, or start one and leave it
                              running for the next run (stop it: bin/dev-cassandra stop --dir ...)
    CQLSH_EXT_TEST_START_TIMEOUT                       seconds to wait for CQL (default 120)

Tests using `cassandra` get the `server` marker: `pytest -m "not server"` skips them.
"""

from __future__ import annotations

import itertools
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

import devcassandra  # noqa: E402
import fault_handler  # noqa: E402
from server_ports import PORT_VARIABLES, ports_from, start_on_free_ports  # noqa: E402

if TYPE_CHECKING:
    from cassandra.cluster import Cluster, Session


def server_config(**overrides: Any) -> devcassandra.Config:
    """The test instance's Config (env overrides applied); keyword args override further. It loads
    the fault-injection query handler (tests/fault_handler.py) for keyspaces named faults_*."""
    directory = Path(overrides.get("directory") or os.environ.get("CQLSH_EXT_TEST_DIR")
                     or REPO_ROOT / ".cache" / "test-cassandra")
    values: dict[str, Any] = {
        "directory": directory,
        **ports_from(PORT_VARIABLES),
        "cluster_name": "cqlsh-ext tests",
        "extra_classpath": [fault_handler.handler_classes()],
        "extra_jvm_args": fault_handler.jvm_args(fault_plan_file(directory)),
        # tests/encode: a keyspace's own function named encode takes precedence over the shell's.
        "extra_yaml": {"user_defined_functions_enabled": True},
    }
    # Extra classes and JVM args add to the fault handler's: without its classes the server
    # would refuse to start with the handler's -D flag.
    for key in ("extra_classpath", "extra_jvm_args"):
        values[key] = [*values[key], *overrides.pop(key, [])]
    values.update(overrides)
    return devcassandra.Config(**values)


def fault_plan_file(directory: Path) -> Path:
    """Beside the instance directory: a clean start wipes the directory itself."""
    return directory.with_name(directory.name + "-faults.plan")


@dataclass
class CassandraServer:
    """What tests get from the `cassandra` fixture."""

    host: str
    port: int
    username: str
    password: str
    instance: devcassandra.Instance
    _cluster: Cluster | None = field(default=None, repr=False)
    _keyspaces: itertools.count = field(default_factory=lambda: itertools.count(1), repr=False)

    @property
    def cqlsh_args(self) -> list[str]:
        """Arguments for cqlsh / cqlsh-ext to reach this server."""
        return [self.host, str(self.port), "-u", self.username, "-p", self.password]

    def cluster(self) -> Cluster:
        """One shared driver Cluster (connecting costs about a second; do it once)."""
        if self._cluster is None:
            from cassandra.auth import PlainTextAuthProvider
            from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
            from cassandra.policies import DCAwareRoundRobinPolicy

            profile = ExecutionProfile(
                load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"), request_timeout=30
            )
            self._cluster = Cluster(
                [self.host], port=self.port,
                auth_provider=PlainTextAuthProvider(self.username, self.password),
                execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                protocol_version=5,  # Cassandra 5.0's; spares the negotiation and its warnings
                connect_timeout=30,
            )
        return self._cluster

    def session(self, keyspace: str | None = None) -> Session:
        """A cassandra-driver Session (new per call, on the shared Cluster)."""
        return self.cluster().connect(keyspace)

    def create_keyspace(self, prefix: str = "t") -> str:
        """A fresh SimpleStrategy RF 1 keyspace; returns its name."""
        name = f"{prefix}_{os.getpid()}_{next(self._keyspaces)}"
        session = self.session()
        replication = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        session.execute(f"CREATE KEYSPACE {name} WITH replication = {replication}")
        session.shutdown()
        return name

    @property
    def faults(self) -> fault_handler.FaultPlan:
        """The fault plan for SELECTs on keyspaces named faults_* (see tests/fault_handler.py)."""
        return fault_handler.FaultPlan(fault_plan_file(self.instance.config.directory))

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
            self._cluster = None


#: Fixtures that start a real server (Java); a test using one is marked `server`.
SERVER_FIXTURES = frozenset({"cassandra", "keyspaces_endpoint"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers the fast layer (bin/test --fast: -m "not server and not java and not docker") goes by:
    `server` from the fixtures a test uses, `docker` from its directory; modules that run Java
    without a server say `pytestmark = pytest.mark.java` themselves. A test that still reaches Java
    in the fast layer fails (devcassandra refuses under CQLSH_EXT_FAST=1) rather than being slow."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)
        if "docker" in item.path.parts:
            item.add_marker(pytest.mark.docker)


#: What every Docker test's skip reason names: how to switch them on.
DOCKER_SWITCH = "CQLSH_EXT_DOCKER_TESTS=1"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Once, even under -q (which prints no skip reasons): why the Docker tests did not run."""
    off = [report for report in terminalreporter.stats.get("skipped", [])
           if isinstance(report.longrepr, tuple) and DOCKER_SWITCH in str(report.longrepr[2])]
    if off:
        terminalreporter.write_line(
            f"{len(off)} Docker tests skipped: they run with CI=true or {DOCKER_SWITCH} "
            "(Docker needed; README, 'Two commands')")


@pytest.fixture(scope="session")
def cassandra() -> Iterator[CassandraServer]:
    cfg = server_config()
    inst = devcassandra.Instance(cfg)
    reuse = os.environ.get("CQLSH_EXT_TEST_REUSE") == "1"
    timeout = float(os.environ.get("CQLSH_EXT_TEST_START_TIMEOUT") or 120)
    started = False
    if reuse and inst.is_running():
        # The instance keeps the ports it was started with (recorded in its directory).
        inst = devcassandra.Instance(inst.running_config() or cfg)
        inst.wait_for_cql(timeout)
    else:
        if inst.is_running():
            # Ours (same directory), left by a killed run: a fresh server is what tests expect.
            warnings.warn(f"stopping a leftover test Cassandra in {cfg.directory}", stacklevel=1)
            inst.stop()
        # A reused instance must outlive this process; otherwise it dies with us, even on SIGKILL.
        inst = start_on_free_ports(server_config, PORT_VARIABLES, timeout=timeout, die_with_parent=not reuse,
                                   clean=not reuse)
        started = not reuse
    cfg = inst.config
    server = CassandraServer(cfg.host, cfg.native_port, cfg.username or "", cfg.password or "", inst)
    try:
        yield server
    finally:
        server.close()
        if started:
            inst.stop()
