"""Shared fixtures. `cassandra`: a real Cassandra 5.0 for the whole test session.

The server is this suite's own (ports picked free at start, directory .cache/test-cassandra), so
it runs beside a developer's `bin/dev-cassandra` on 9042, another test run or any other server.
It starts on first use (about 6 s, plus a one-time jar download) and stops at the end of the
session.

With several workers (pytest-xdist's -n, which bin/test passes), each worker process has a server
of its own, in the directory named after it (.cache/test-cassandra-gw0, -gw1, ...): a worker's tests
see only their own server, its fault plan included (CONTRIBUTING.md, "Tests in parallel").

Environment:
    CQLSH_EXT_TEST_PORT / _STORAGE_PORT / _JMX_PORT   fixed ports instead of free ones (one worker only)
    CQLSH_EXT_TEST_DIR                                 another instance directory (-gwN added per worker)
    CQLSH_EXT_TEST_REUSE=1    use the instance already running there, or start one and leave it
                              running for the next run (stop it: bin/dev-cassandra stop --dir ...);
                              the keyspaces earlier runs left there are dropped first
    CQLSH_EXT_TEST_START_TIMEOUT                       seconds to wait for CQL (default 120)

Tests using `cassandra` get the `server` marker: `pytest -m "not server"` skips them.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

#: Where bin/setup --test installs the tests' plugin formats (tests/plugins), seen by the tests alone:
#: on this process's path and, through PYTHONPATH, on that of every program a test starts (a shell,
#: an MCP server; their plugin worker takes the path's absolute entries too). Never in .venv, whose
#: shell is the user's.
TEST_SITE = REPO_ROOT / ".cache" / "test-site"
if TEST_SITE.is_dir() and str(TEST_SITE) not in sys.path:
    import site

    site.addsitedir(str(TEST_SITE))
    _before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(TEST_SITE), *([_before] if _before else [])])

import devcassandra  # noqa: E402
import engine_use  # noqa: E402
import fault_handler  # noqa: E402
from server_ports import PORT_VARIABLES, ports_from, start_on_free_ports  # noqa: E402

if TYPE_CHECKING:
    from cassandra.cluster import Cluster, Session


#: The pytest-xdist worker this process is ("gw0", "gw1", ...), "" when the suite runs in one process
#: (set by pytest_configure: a pytest started by a test inherits the worker's environment, not its role).
WORKER = ""


def _controller(config: pytest.Config) -> bool:
    """This process hands the tests to workers and runs none (pytest-xdist's -n N, N > 0)."""
    return not WORKER and bool(getattr(config.option, "numprocesses", None))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """First pass of bin/test: the modules that reached the value engine (tests/engine_use.py)."""
    directory = os.environ.get(engine_use.RECORD)
    if directory and not _controller(session.config):
        engine_use.write_record(directory, WORKER)


#: The file where the workers tell the controller which tests share a worker (run_rank), named by the
#: controller before it starts them: pytest-xdist 3.8 cannot carry an xdist_group in a test's id on
#: pytest 9.
GROUPS_FILE = "CQLSH_EXT_TEST_GROUPS"


def pytest_configure(config: pytest.Config) -> None:
    global WORKER
    # A suite started as a background job (`bin/test &` from a script: the shell ignores SIGINT for
    # it) would hand that on to every shell it starts, which then never sees a Ctrl-C: the Ctrl-C
    # tests would fail for how the suite was started. Ctrl-C is the tests' to send, so it is taken back.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    WORKER = getattr(config, "workerinput", {}).get("workerid", "")
    if os.environ.get(engine_use.RECORD) and not _controller(config):
        engine_use.start_recording()
        config.pluginmanager.register(engine_use, "engine_use")
    if _controller(config):
        directory = tempfile.mkdtemp(prefix="cqlsh-ext-groups-")
        os.environ[GROUPS_FILE] = str(Path(directory) / "groups.json")
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))


def per_worker(directory: Path) -> Path:
    """`directory`, or with several workers this worker's own (DIR-gw0, DIR-gw1, ...): each has its
    own servers, so no worker stops, cleans or plans faults on another's."""
    return directory.with_name(f"{directory.name}-{WORKER}") if WORKER else directory


def server_config(**overrides: Any) -> devcassandra.Config:
    """The test instance's Config (env overrides applied); keyword args override further. It loads
    the fault-injection query handler (tests/fault_handler.py) for keyspaces named faults_*."""
    default = Path(os.environ.get("CQLSH_EXT_TEST_DIR") or REPO_ROOT / ".cache" / "test-cassandra")
    directory = Path(overrides.get("directory") or per_worker(default))
    values: dict[str, Any] = {
        "directory": directory,
        **ports_from(PORT_VARIABLES),
        "cluster_name": "cqlsh-ext tests",
        "extra_classpath": [fault_handler.handler_classes()],
        "extra_jvm_args": fault_handler.jvm_args(fault_plan_file(directory)),
        # tests/encode: a keyspace's own function named encode takes precedence over the shell's.
        "extra_yaml": {"user_defined_functions_enabled": True, "materialized_views_enabled": True},
    }
    # Extra classes and JVM args add to the fault handler's: without its classes the server
    # would refuse to start with the handler's -D flag.
    for key in ("extra_classpath", "extra_jvm_args"):
        values[key] = [*values[key], *overrides.pop(key, [])]
    values.update(overrides)
    return devcassandra.Config(**values)


@contextmanager
def own_server(directory: Path, cluster_name: str, timeout: float) -> Iterator[devcassandra.Instance]:
    """A Cassandra of a test module's own in `directory` (server_config's, the fault handler loaded,
    on free ports), started, and stopped at the end: one a test may kill, stop or restart without
    disturbing the shared one."""
    native, storage, jmx = devcassandra.free_ports(3)
    config = server_config(directory=directory, cluster_name=cluster_name, heap="512M",
                           native_port=native, storage_port=storage, jmx_port=jmx)
    instance = devcassandra.Instance(config)
    instance.start(timeout=timeout, die_with_parent=True)
    try:
        yield instance
    finally:
        instance.stop()


T = TypeVar("T")


def keyspace_filled(instance: devcassandra.Instance, ks: str, fill: Callable[[Any, str], T]) -> T:
    """Keyspace `ks` made on `instance` (one replica) and filled by `fill(session, ks)`: what it gives."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    config = instance.config
    cluster = Cluster([config.host], port=config.native_port, protocol_version=5, connect_timeout=30,
                      control_connection_timeout=30,
                      auth_provider=PlainTextAuthProvider(config.username or "", config.password or ""))
    try:
        session = cluster.connect()
        session.execute(f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', "
                        "'replication_factor': 1}")
        return fill(session, ks)
    finally:
        cluster.shutdown()


def fault_plan_file(directory: Path) -> Path:
    """Beside the instance directory: a clean start wipes the directory itself."""
    return directory.with_name(directory.name + "-faults.plan")


#: A test keyspace's name ends with the process that made it: ..._<pid> or ..._<pid>_<n>.
_MADE_BY = re.compile(r"_(\d+)(?:_\d+)?$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        return True
    return True


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
        """One shared driver Cluster (connecting costs about a second; do it once), made again when
        the driver shut it down (a connection that failed: the next test must not inherit that)."""
        if self._cluster is None or self._cluster.is_shutdown:
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

    def drop_leftovers(self) -> list[str]:
        """Drop the keyspaces earlier runs made on this reused server (named ..._<pid>[_<n>], as
        create_keyspace and the fixtures name theirs) whose process is gone, and return their names:
        a server reused run after run held hundreds of them, and its heap ran out mid-run."""
        session = self.session()
        try:
            listed = session.execute("SELECT keyspace_name FROM system_schema.keyspaces")
            names = [row.keyspace_name for row in listed]
            gone = [name for name in names if not name.startswith("system")
                    and (made := _MADE_BY.search(name)) is not None and not _alive(int(made.group(1)))]
            for name in gone:
                session.execute(f'DROP KEYSPACE IF EXISTS "{name}"', timeout=120)
            return gone
        finally:
            session.shutdown()

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.shutdown()
            self._cluster = None


def refuse_fixed_ports_in_workers(variables: dict[str, str]) -> None:
    """Each worker starts servers of its own: ports fixed by the environment cannot serve two."""
    fixed = [var for var in variables.values() if os.environ.get(var)]
    if WORKER and fixed:
        pytest.fail(f"{', '.join(fixed)} fix a test server's ports, and each worker starts its own server: "
                    "run in one process (-n 0) or unset them", pytrace=False)


#: Fixtures that start a real server (Java); a test using one is marked `server`.
SERVER_FIXTURES = frozenset({"cassandra", "keyspaces_endpoint"})

#: Work a worker does once for all the tests that share it (a session fixture that starts a server
#: or Spark, or loads a large table; the Docker image): with several workers (bin/test), those tests
#: go to one worker, together, and first, so that the longest work starts early. Looked up in this
#: order; an item's own xdist_group mark puts it in that group instead.
SHARED_WORK = (
    ("docker", lambda item: "docker" in item.path.parts),
    ("keyspaces-endpoint", lambda item: "keyspaces_endpoint" in getattr(item, "fixturenames", ())),
    ("spark", lambda item: item.get_closest_marker("spark") is not None),
    ("insight-tables", lambda item: "insight" in getattr(item, "fixturenames", ())),
)


def run_rank(item: pytest.Item) -> tuple[int, str | None]:
    """Where an item comes in the run with several workers, and the group of tests it shares a
    worker with (None: its module's): SHARED_WORK's groups first, then the server tests, then the
    rest."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return 0, str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    for rank, (group, uses) in enumerate(SHARED_WORK):
        if uses(item):
            return rank, group
    return len(SHARED_WORK) + (item.get_closest_marker("server") is None), None


def long_setup(item: pytest.Item) -> float | None:
    """Seconds a test may take when its setup builds or starts what takes long (the Docker image and
    the compose file's, Spark's runs, bin/wheels): what their own subprocess timeouts add up to,
    instead of the suite's per-test timeout (pyproject.toml)."""
    if "docker" in item.path.parts or item.path.name == "test_wheels.py":
        return 3600
    if item.get_closest_marker("spark") is not None:
        return 1800
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers the fast layer (bin/test --fast: -m "not server and not java and not docker") goes by:
    `server` from the fixtures a test uses, `docker` from its directory; modules that run Java
    without a server say `pytestmark = pytest.mark.java` themselves. A test that still reaches Java
    in the fast layer fails (devcassandra refuses under CQLSH_EXT_FAST=1) rather than being slow.
    In bin/test's second pass, only the tests that reach the value engine are kept
    (tests/engine_use.py). In a worker of several, the items are put in run_rank's order and their
    groups written to the controller's GROUPS_FILE."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)
        if "docker" in item.path.parts:
            item.add_marker(pytest.mark.docker)
        seconds = long_setup(item)
        if seconds is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(seconds))
    if os.environ.get(engine_use.SELECT):  # bin/test's second pass: what reaches the engine
        kept, dropped = engine_use.selected(items, os.environ[engine_use.SELECT])
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    if not WORKER:
        return
    ranks = {item.nodeid: run_rank(item) for item in items}
    items.sort(key=lambda item: ranks[item.nodeid][0])  # stable: a module's own order is kept
    groups = os.environ.get(GROUPS_FILE)
    if groups:  # each worker collects the same tests: the last to write writes the same
        written = Path(f"{groups}.{WORKER}")
        written.write_text(json.dumps({node: group for node, (_, group) in ranks.items() if group}))
        os.replace(written, groups)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """bin/test's --dist loadgroup: the tests of a group (run_rank's, read from GROUPS_FILE) go to one
    worker, and every other test with its module (pytest-xdist's loadscope: a module's fixtures are
    set up on one worker only), in the collection's order (run_rank's), not by the modules' sizes."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupOrModule(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # first asked once every worker has collected: the file is there
                path = Path(os.environ.get(GROUPS_FILE) or "/nonexistent")
                self.groups = json.loads(path.read_text()) if path.is_file() else {}
            return self.groups.get(nodeid) or nodeid.split("::", 1)[0]

    config.option.loadscopereorder = False
    return GroupOrModule(config, log)


#: What every Docker test's skip reason names: how to switch them on.
DOCKER_SWITCH = "CQLSH_EXT_DOCKER_TESTS=1"


def pytest_testnodedown(node: Any, error: Any) -> None:
    """A worker's end (pytest-xdist, in the controller): its counts of the native core against the
    Python engine join the run's."""
    from native.conftest import add_totals

    add_totals(node.workeroutput.get("native_totals", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The native core's counts against the Python engine, when tests/native ran (tests/native/conftest.py);
    then once, even under -q (which prints no skip reasons): why the Docker tests did not run."""
    from native.conftest import write_totals

    write_totals(terminalreporter)
    off = [report for report in terminalreporter.stats.get("skipped", [])
           if isinstance(report.longrepr, tuple) and DOCKER_SWITCH in str(report.longrepr[2])]
    if off:
        terminalreporter.write_line(
            f"{len(off)} Docker tests skipped: they run with CI=true or {DOCKER_SWITCH} "
            "(Docker needed; README, 'Two commands')")


@pytest.fixture(scope="session")
def cassandra() -> Iterator[CassandraServer]:
    refuse_fixed_ports_in_workers(PORT_VARIABLES)
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
    if reuse and not started:
        server.drop_leftovers()
    try:
        yield server
    finally:
        server.close()
        if started:
            inst.stop()
