#!/usr/bin/env python3
"""Run a throwaway Apache Cassandra 5.0 from Maven Central jars, without Docker.

Stdlib only, so `bin/dev-cassandra` works with any python3 and the test suite can import it
before anything else is installed. One `Instance` is one directory (config, data, log, pid
file) plus its ports; several can run side by side (a developer's on 9042, the tests' on free ports).

    inst = Instance(Config(directory=Path(".cache/x"), native_port=19042, storage_port=17000,
                           jmx_port=17199))
    inst.start()          # downloads the jars on first use, returns once CQL logs in
    ...
    inst.stop()

Hooks for special servers: `Config.extra_classpath` (jars/dirs holding e.g. a custom
authenticator), `Config.authenticator`, `Config.client_tls` (client_encryption_options + an
optional separate TLS port, see `make_keystore`), `Config.extra_yaml` and `Config.extra_jvm_args`.
Linux (and probably macOS) with JDK 17 and Maven; not Windows.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from say import say  # tools/say.py: the scripts' one rule for messages on a terminal

REPO_ROOT = Path(__file__).resolve().parents[1]
POM = REPO_ROOT / "tools" / "cassandra" / "pom.xml"
# Shared by bin/dev-cassandra, the test fixture and the Java producers.
DEFAULT_LIB_DIR = Path(os.environ.get("CQLSH_EXT_CASSANDRA_LIB") or REPO_ROOT / ".cache/cassandra/lib")
DEFAULT_DEV_DIR = REPO_ROOT / ".cache" / "dev-cassandra"
LIB_MARKER = ".complete"  # written last: a lib dir without it is a broken download
#: How every step this tool says starts, as bin/setup's and bin/demo's do: the command a user ran.
SAYS = "bin/dev-cassandra:"
DAEMON_CLASS = "org.apache.cassandra.service.CassandraDaemon"

# The module flags of Cassandra 5.0's conf/jvm17-server.options (the jars need them on JDK 17).
JDK17_MODULE_FLAGS = [
    *(
        f"--add-exports={m}=ALL-UNNAMED"
        for m in (
            "java.base/jdk.internal.misc",
            "java.base/jdk.internal.ref",
            "java.base/sun.nio.ch",
            "java.management.rmi/com.sun.jmx.remote.internal.rmi",
            "java.rmi/sun.rmi.registry",
            "java.rmi/sun.rmi.server",
            "java.sql/java.sql",
        )
    ),
    *(
        f"--add-opens={m}=ALL-UNNAMED"
        for m in (
            "java.base/java.lang.module",
            "java.base/jdk.internal.loader",
            "java.base/jdk.internal.ref",
            "java.base/jdk.internal.reflect",
            "java.base/jdk.internal.math",
            "java.base/jdk.internal.module",
            "java.base/jdk.internal.util.jar",
            "jdk.management/com.sun.management.internal",
            "java.base/sun.nio.ch",
            "java.base/java.io",
            "java.base/java.nio",
            "java.base/java.util.concurrent",
            "java.base/java.util",
            "java.base/java.util.concurrent.atomic",
            "java.base/java.lang",
            "java.base/java.math",
            "java.base/java.lang.reflect",
            "java.base/java.net",
        )
    ),
]

LOGBACK_XML = """<configuration scan="false">
  <!-- stdout is redirected to cassandra.log in the instance directory -->
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


class DevCassandraError(RuntimeError):
    """Anything that keeps an instance from being fetched, started or stopped."""


@dataclass
class ClientTLS:
    """TLS for CQL clients (Cassandra's client_encryption_options).

    port=None: TLS on native_port itself (plain connections too when optional=True).
    port=N: native_port stays plain and N (native_transport_port_ssl) speaks TLS only,
    like Amazon Keyspaces' 9142.
    """

    keystore: Path
    keystore_password: str
    port: int | None = None
    optional: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # merged into client_encryption_options


@dataclass
class Config:
    directory: Path
    native_port: int = 9042
    storage_port: int = 7000
    jmx_port: int = 7199
    host: str = "127.0.0.1"
    cluster_name: str = "cqlsh-ext dev"
    heap: str = "1G"  # -Xmx
    # -Xms: as root Cassandra's mlockall() pins every committed page at start; 1G there cost
    # 3.5 s of startup and 0.8 GB of resident memory for nothing.
    heap_min: str = "256M"
    lib_dir: Path = DEFAULT_LIB_DIR
    # A short name Cassandra knows or a class name on extra_classpath (or a dict with
    # class_name/parameters, the 5.0 form).
    authenticator: str | dict[str, Any] = "PasswordAuthenticator"
    # Credentials the readiness probe logs in with (SASL PLAIN). Set username=None for an
    # authenticator that does not speak PLAIN: the probe then stops at the AUTHENTICATE answer.
    username: str | None = "cassandra"
    password: str | None = "cassandra"
    extra_classpath: list[Path] = field(default_factory=list)
    client_tls: ClientTLS | None = None
    extra_yaml: dict[str, Any] = field(default_factory=dict)  # top-level keys, override ours
    extra_jvm_args: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.directory = Path(self.directory).absolute()
        self.lib_dir = Path(self.lib_dir).absolute()

    @property
    def ports(self) -> dict[str, int]:
        ports = {"native": self.native_port, "storage": self.storage_port, "jmx": self.jmx_port}
        if self.client_tls and self.client_tls.port:
            ports["native_ssl"] = self.client_tls.port
        return ports


# ----------------------------------------------------------------------------- jars


@functools.cache
def find_java() -> str:
    """A JDK 17 `java`: $CQLSH_EXT_JAVA_HOME, $JAVA_HOME, PATH, then /usr/lib/jvm/*17*.

    Cassandra 5.0 runs on 11 and 17 only, and our module flags are 17's; a newer default JDK
    (this machine also has a 25) must not be picked silently.
    """
    _refuse_in_fast_layer("a JDK")
    candidates = [
        str(Path(home) / "bin" / "java")
        for home in (os.environ.get("CQLSH_EXT_JAVA_HOME"), os.environ.get("JAVA_HOME"))
        if home
    ]
    if found := shutil.which("java"):
        candidates.append(found)
    candidates += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*17*/bin/java"))
    seen: list[str] = []
    for java in candidates:
        if java in seen or not os.access(java, os.X_OK):
            continue
        seen.append(java)
        if java_major(java) == 17:
            return java
    raise DevCassandraError(f"no JDK 17 found (tried {seen or 'nothing'}); set CQLSH_EXT_JAVA_HOME")


def java_major(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _refuse_in_fast_layer(what: str) -> None:
    if os.environ.get("CQLSH_EXT_FAST") == "1":
        raise DevCassandraError(f"the fast test layer (bin/test --fast) runs without Java, but this test "
                                f"needs {what}: mark it (server or java)")


def jars_ready(lib_dir: Path = DEFAULT_LIB_DIR, pom: Path = POM) -> bool:
    """Whether lib_dir holds the pom's jars, downloaded whole (ensure_jars downloads nothing)."""
    marker = Path(lib_dir).absolute() / LIB_MARKER
    return marker.is_file() and marker.read_text().strip() == hashlib.sha256(pom.read_bytes()).hexdigest()


def ensure_jars(lib_dir: Path = DEFAULT_LIB_DIR, pom: Path = POM,
                expect: str = "cassandra-all-*.jar") -> Path:
    """Return lib_dir, downloading Cassandra's jars into it first if needed (or another pom's
    dependencies: `expect` is a jar that must be among them).

    The marker file records the pom's hash, so a version bump refetches. A file lock keeps a
    test run and bin/dev-cassandra from downloading into the same place at once, and the jars
    land in a temporary sibling first so an interrupted download never looks complete.
    """
    _refuse_in_fast_layer("Cassandra's jars")
    lib_dir = Path(lib_dir).absolute()
    want = hashlib.sha256(pom.read_bytes()).hexdigest()
    marker = lib_dir / LIB_MARKER
    if jars_ready(lib_dir, pom):
        return lib_dir
    lib_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(lib_dir.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and marker.read_text().strip() == want:
            return lib_dir
        mvn = shutil.which("mvn")
        if not mvn:
            raise DevCassandraError(f"Maven (mvn) is needed once to download Cassandra into {lib_dir}")
        tmp = lib_dir.with_name(lib_dir.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        what = "Cassandra 5.0" if pom == POM else f"the Java libraries listed in {pom.name}"
        say(f"{SAYS} downloading {what} from Maven Central into {_shown(lib_dir)} (Maven; once, a minute or "
            "more) ...")
        cmd = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
               f"-DoutputDirectory={tmp}", "-DincludeScope=runtime"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise DevCassandraError(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        if not list(tmp.glob(expect)):
            raise DevCassandraError(f"Maven finished but no {expect} is in {tmp}")
        (tmp / LIB_MARKER).write_text(want + "\n")
        shutil.rmtree(lib_dir, ignore_errors=True)
        tmp.rename(lib_dir)
    return lib_dir


def make_keystore(path: Path, password: str = "cassandra", cn: str = "localhost") -> Path:
    """A self-signed PKCS12 keystore for ClientTLS (keytool ships with the JDK)."""
    path = Path(path).absolute()
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    keytool = str(Path(find_java()).with_name("keytool"))
    subprocess.run(
        [keytool, "-genkeypair", "-noprompt", "-alias", "cassandra", "-keyalg", "RSA",
         "-keysize", "2048", "-validity", "3650", "-dname", f"CN={cn}",
         "-ext", f"SAN=dns:{cn},ip:127.0.0.1", "-storetype", "PKCS12",
         "-keystore", str(path), "-storepass", password, "-keypass", password],
        check=True, capture_output=True,
    )
    return path


# ----------------------------------------------------------------------------- config


def cassandra_yaml(cfg: Config) -> dict[str, Any]:
    """The settings of one instance: a single light node for a 2-core machine."""
    storage = cfg.directory / "data"
    yaml: dict[str, Any] = {
        "cluster_name": cfg.cluster_name,
        "num_tokens": 1,
        "partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
        "data_file_directories": [str(storage / "data")],
        "commitlog_directory": str(storage / "commitlog"),
        "saved_caches_directory": str(storage / "saved_caches"),
        "hints_directory": str(storage / "hints"),
        "cdc_raw_directory": str(storage / "cdc_raw"),
        "commitlog_sync": "periodic",
        "commitlog_sync_period": "10000ms",
        "seed_provider": [{
            "class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
            "parameters": [{"seeds": f"{cfg.host}:{cfg.storage_port}"}],
        }],
        "listen_address": cfg.host,
        "rpc_address": cfg.host,
        "storage_port": cfg.storage_port,
        "native_transport_port": cfg.native_port,
        "start_native_transport": True,
        "endpoint_snitch": "SimpleSnitch",
        "authenticator": cfg.authenticator,
        "authorizer": "AllowAllAuthorizer",
        "role_manager": "CassandraRoleManager",
        # Light on 2 cores / 1 GB heap, and nothing a throwaway node needs kept around.
        "concurrent_reads": 4,
        "concurrent_writes": 4,
        "concurrent_counter_writes": 2,
        "concurrent_materialized_view_writes": 2,
        "concurrent_compactors": 1,
        "memtable_flush_writers": 1,
        "native_transport_max_threads": 16,
        "auto_snapshot": False,
        "snapshot_before_compaction": False,
        "hinted_handoff_enabled": False,
        "dynamic_snitch": False,
        "key_cache_size": "16MiB",
        "counter_cache_size": "0MiB",
        "column_index_cache_size": "1MiB",
    }
    if cfg.client_tls:
        tls = cfg.client_tls
        yaml["client_encryption_options"] = {
            "enabled": True,
            "optional": tls.optional,
            "keystore": str(Path(tls.keystore).absolute()),
            "keystore_password": tls.keystore_password,
            "require_client_auth": False,
            **tls.extra,
        }
        if tls.port:
            yaml["native_transport_port_ssl"] = tls.port
    yaml.update(cfg.extra_yaml)
    return yaml


def dump_yaml(values: dict[str, Any]) -> str:
    # JSON is valid YAML flow style, so `key: <json>` lines need no YAML library.
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in values.items())


def jvm_command(cfg: Config, java: str) -> list[str]:
    conf = cfg.directory / "conf"
    classpath = [str(conf), *(str(Path(p).absolute()) for p in cfg.extra_classpath), f"{cfg.lib_dir}/*"]
    args = [
        java,
        f"-Xms{cfg.heap_min}",
        f"-Xmx{cfg.heap}",
        "-Xss256k",
        "-XX:+UseG1GC",
        f"-XX:ErrorFile={cfg.directory}/hs_err_pid%p.log",
        "-Djava.net.preferIPv4Stack=true",
        *JDK17_MODULE_FLAGS,
        f"-Dcassandra.config=file://{conf}/cassandra.yaml",
        f"-Dlogback.configurationFile={conf}/logback.xml",
        f"-Dcassandra.logdir={cfg.directory}",
        f"-Dcassandra.storagedir={cfg.directory}/data",
        "-Dcassandra-foreground=yes",
        f"-Dcassandra.jmx.local.port={cfg.jmx_port}",
        # A single seed node: do not wait for gossip to settle, and create the default
        # `cassandra` superuser at once instead of 10 s after start.
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        "-Dcassandra.superuser_setup_delay_ms=0",
        # Nobody to tell on shutdown: skip the 2 s gossip announce and the messaging drain.
        "-Dcassandra.shutdown_announce_in_ms=0",
        "-Dcassandra.test.messagingService.nonGracefulShutdown=true",
        "-XX:+ExitOnOutOfMemoryError",  # a wedged JVM would hang the tests instead of failing them
        "-Dchronicle.announcer.disable=true",
    ]
    jamm = list(cfg.lib_dir.glob("jamm-*.jar"))
    if jamm:  # Cassandra measures memtable sizes with the jamm agent, as bin/cassandra does
        args.append(f"-javaagent:{jamm[0]}")
    return [*args, *cfg.extra_jvm_args, "-cp", ":".join(classpath), DAEMON_CLASS]


# ----------------------------------------------------------------------------- CQL probe


class ProbeError(Exception):
    pass


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ProbeError("connection closed")
        buf += chunk
    return buf


def _cql_string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def cql_probe(host: str, port: int, username: str | None = None, password: str | None = None,
              use_tls: bool = False, timeout: float = 5.0) -> str:
    """One native-protocol v4 handshake (STARTUP, then SASL PLAIN login if credentials given).

    Stdlib only, so readiness does not depend on the Python driver. Returns "ready",
    "authenticate" (the server asks for a login we were not given) or raises ProbeError.
    """

    def request(sock: socket.socket, opcode: int, body: bytes) -> tuple[int, bytes]:
        sock.sendall(struct.pack(">BBhBI", 0x04, 0, 0, opcode, len(body)) + body)
        _version, _flags, _stream, op, length = struct.unpack(">BBhBI", _recv_exact(sock, 9))
        return op, _recv_exact(sock, length)

    def error(body: bytes) -> ProbeError:
        code, n = struct.unpack(">iH", body[:6])
        return ProbeError(f"CQL error 0x{code:04x}: {body[6:6 + n].decode(errors='replace')}")

    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            sock: socket.socket = raw
            if use_tls:
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE  # a self-signed test keystore
                sock = ctx.wrap_socket(raw, server_hostname=host)
            op, body = request(sock, 0x01, struct.pack(">H", 1) + _cql_string("CQL_VERSION")
                               + _cql_string("3.0.0"))
            if op == 0x02:  # READY: no authentication
                return "ready"
            if op != 0x03:  # AUTHENTICATE
                raise error(body) if op == 0x00 else ProbeError(f"unexpected opcode 0x{op:02x}")
            if username is None:
                return "authenticate"
            token = b"\0" + username.encode() + b"\0" + (password or "").encode()
            op, body = request(sock, 0x0F, struct.pack(">i", len(token)) + token)
            if op == 0x10:  # AUTH_SUCCESS
                return "ready"
            raise error(body) if op == 0x00 else ProbeError(f"unexpected opcode 0x{op:02x}")
    except (OSError, struct.error) as e:
        raise ProbeError(f"{type(e).__name__}: {e}") from e


# ----------------------------------------------------------------------------- processes


def _proc_is(pid: int, needle: str) -> bool:
    """pid is a live (not zombie) process whose command line contains needle.

    Guards against a stale pid file whose pid now belongs to something else.
    """
    proc = Path(f"/proc/{pid}")
    if proc.is_dir():
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
        return state not in ("Z", "X") and needle in cmdline
    return _exists(pid)


def _exists(pid: int) -> bool:
    """Without /proc (macOS): whether pid names a process at all."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive(pid: int) -> bool:
    """pid is a process that has not ended: it may still hold its sockets. A process that is ending
    has no command line any more (the kernel lets its memory go before its files), so _proc_is
    cannot tell it: only its state can."""
    if not Path("/proc").is_dir():
        return _exists(pid)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def port_holders(port: int) -> list[str]:
    """Who holds the TCP `port` (any address), each as 'pid 1234 (java -Xmx1G ...)', or 'a process
    of another user' where /proc does not show its sockets; [] when nothing is seen holding it
    (not Linux, or it was let go meanwhile)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # local address 0100007F:1C1F, state 0A (LISTEN), 01 (ESTABLISHED) ...: any but
            # TIME_WAIT (06), which holds no process and does not keep a server from binding.
            if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] != "06":
                inodes.add(fields[9])
    inodes.discard("0")
    if not inodes:
        return []
    held: list[str] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:  # gone, or another user's
            continue
        if any(f"socket:[{inode}]" in links for inode in inodes):
            held.append(f"pid {entry.name} ({_command_line(int(entry.name))})")
    return held or ["a process of another user"]


def _command_line(pid: int, most: int = 60) -> str:
    """The program's name and its arguments, cut to `most`: the program's directory left out, so a
    long one (a clone's .venv/bin/python, a JDK's bin/java) does not push what it runs off the line."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").rstrip("\0").split("\0")
    except OSError:
        return "?"
    text = " ".join([os.path.basename(argv[0]), *argv[1:]]).strip()
    return text if len(text) <= most else text[:most - 3] + "..."


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct ports nothing listens on now (the kernel's pick, as for port 0).

    Another process may still take one before the server binds it: start() then fails with
    PortsInUse and the caller picks again.
    """
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class PortsInUse(DevCassandraError):
    """start(): a port of the Config is taken; str() names them."""


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # SO_REUSEADDR: TIME_WAIT leftovers of a just-stopped server are not "in use".
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    # preexec_fn: have the kernel SIGTERM the JVM if the process that started it dies, so a
    # killed test run cannot leave a 1 GB server behind. PR_SET_PDEATHSIG = 1.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"


class Instance:
    """One Cassandra process described by a Config, tracked through files in its directory."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def directory(self) -> Path:
        return self.config.directory

    @property
    def log_path(self) -> Path:
        return self.directory / "cassandra.log"

    @property
    def pid_path(self) -> Path:
        return self.directory / "cassandra.pid"

    @property
    def yaml_path(self) -> Path:
        return self.directory / "conf" / "cassandra.yaml"

    def pid(self) -> int | None:
        """The pid of this instance's live server, or None."""
        if self._proc is not None:
            # Our own child: alive or not. Its command line is Python's until it has exec'd java,
            # which on a loaded machine comes well after Popen returns: not a server that exited.
            return self._proc.pid if self._proc.poll() is None else None
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _proc_is(pid, str(self.yaml_path)) else None

    def is_running(self) -> bool:
        return self.pid() is not None

    def running_config(self) -> Config | None:
        """This Config with the host and ports the running instance was started with."""
        try:
            info = json.loads((self.directory / "instance.json").read_text())
            return replace(self.config, host=info["host"], native_port=info["native_port"],
                                       storage_port=info["storage_port"], jmx_port=info["jmx_port"])
        except (OSError, ValueError, KeyError):
            return None

    def write_config(self) -> None:
        conf = self.directory / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        self.yaml_path.write_text(dump_yaml(cassandra_yaml(self.config)))
        (conf / "logback.xml").write_text(LOGBACK_XML)
        info = {"pid_file": str(self.pid_path), "log": str(self.log_path), "host": self.config.host,
                **{f"{k}_port": v for k, v in self.config.ports.items()}}
        (self.directory / "instance.json").write_text(json.dumps(info, indent=2) + "\n")

    def start(self, timeout: float = 120.0, die_with_parent: bool = False, clean: bool = False,
              move_internal_ports: bool = False) -> None:
        """Start the server and return once CQL answers (and the probe login works).

        clean: wipe the data directory first. die_with_parent: the server is SIGTERMed when
        the calling process dies (for test fixtures; Linux only). move_internal_ports: a storage
        or JMX port taken meanwhile (another process got it while a killed server was down) is
        picked again; clients only know the native port, which must still be free.
        """
        if pid := self.pid():
            raise DevCassandraError(f"already running (pid {pid}) in {self.directory}")
        if move_internal_ports:
            taken = [name for name in ("storage", "jmx")
                     if not _port_free(self.config.host, self.config.ports[name])]
            if taken:
                fresh = dict(zip(taken, free_ports(len(taken), self.config.host), strict=True))
                self.config = replace(self.config, **{f"{name}_port": port for name, port in fresh.items()})
        self.check_ports_free()
        java = find_java()
        ensure_jars(self.config.lib_dir)
        if clean:
            shutil.rmtree(self.directory / "data", ignore_errors=True)
        self.write_config()
        cmd = jvm_command(self.config, java)
        with open(self.log_path, "wb") as log:
            log.write(f"# {' '.join(cmd)}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(
                cmd, cwd=self.directory, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the launching terminal must not kill it
                preexec_fn=_die_with_parent if die_with_parent and sys.platform == "linux" else None,
            )
        self.pid_path.write_text(f"{self._proc.pid}\n")
        try:
            self.wait_for_cql(timeout)
        except BaseException:
            self.stop()
            raise

    def busy_ports(self) -> dict[str, int]:
        """The ports of the Config something holds now, by name."""
        host = self.config.host
        return {name: port for name, port in self.config.ports.items() if not _port_free(host, port)}

    def check_ports_free(self) -> None:
        """Raises PortsInUse naming each port taken and which process holds it."""
        busy = self.busy_ports()
        if busy:
            raise self._in_use({name: (port, port_holders(port)) for name, port in busy.items()})

    def wait_ports_free(self, stopped: int | None, timeout: float = 30.0) -> None:
        """Wait until this instance's ports are free: the server that just stopped (pid `stopped`)
        lets them go a moment after it ends. Raises PortsInUse naming who holds them: at once when
        that is another process, or after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while busy := self.busy_ports():
            holders = {name: port_holders(port) for name, port in busy.items()}
            others = any(found and all(h.startswith("pid ") and not h.startswith(f"pid {stopped} ")
                                       for h in found) for found in holders.values())
            if others or time.monotonic() > deadline:  # another process's port is not let go
                raise self._in_use({name: (busy[name], found) for name, found in holders.items()})
            time.sleep(0.2)

    def _in_use(self, busy: dict[str, tuple[int, list[str]]]) -> PortsInUse:
        said = [f"{name} {port}" + (f" (held by {', '.join(holders)})" if holders else "")
                for name, (port, holders) in busy.items()]
        return PortsInUse(f"port(s) in use on {self.config.host}: {'; '.join(said)}")

    def probe(self) -> str:
        """One readiness check of this instance's CQL port; raises ProbeError."""
        tls = self.config.client_tls
        on_main_port = tls is not None and not tls.port and not tls.optional
        return cql_probe(self.config.host, self.config.native_port, self.config.username,
                         self.config.password, use_tls=on_main_port)

    def wait_for_cql(self, timeout: float = 120.0) -> float:
        """Poll until the probe succeeds; returns the seconds waited. Fails fast if the JVM dies."""
        t0 = time.monotonic()
        last = "no attempt"
        while time.monotonic() - t0 < timeout:
            if not self.is_running():
                raise DevCassandraError(f"Cassandra exited during startup; last log lines of "
                                        f"{self.log_path}:\n{tail(self.log_path)}")
            try:
                self.probe()
                return time.monotonic() - t0
            except ProbeError as e:
                last = str(e)
            time.sleep(0.5)
        raise DevCassandraError(f"CQL did not answer on {self.config.host}:{self.config.native_port} "
                                f"within {timeout:.0f} s (last: {last}); last log lines of "
                                f"{self.log_path}:\n{tail(self.log_path)}")

    def stop(self, timeout: float = 60.0) -> bool:
        """SIGTERM (Cassandra drains and flushes), then SIGKILL after timeout. False if not running."""
        pid = self.pid()
        if pid is None:
            self.pid_path.unlink(missing_ok=True)
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not self._wait_gone(pid, timeout):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self._wait_gone(pid, 10)
        self.pid_path.unlink(missing_ok=True)
        return True

    def _wait_gone(self, pid: int, timeout: float) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            try:
                self._proc.wait(timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(pid):  # ended (its command line empties before its sockets close)
                return True
            time.sleep(0.2)
        return False

    @contextlib.contextmanager
    def running(self, timeout: float = 120.0) -> Iterator[Instance]:
        """`with inst.running(): ...` starts (dying with us) and always stops."""
        self.start(timeout, die_with_parent=True)
        try:
            yield self
        finally:
            self.stop()


# ----------------------------------------------------------------------------- CLI


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def _shown(path: Path) -> str:
    """A path as a message shows it: from the current directory when it is below it."""
    with contextlib.suppress(ValueError):
        return str(Path(path).absolute().relative_to(Path.cwd()))
    return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bin/dev-cassandra",
                                description="A local Cassandra 5.0 for development.")
    p.add_argument("command", choices=["start", "stop", "status", "restart", "log"])
    p.add_argument("--dir", type=Path, default=Path(os.environ.get("DEV_CASSANDRA_DIR", DEFAULT_DEV_DIR)),
                   help="instance directory (env DEV_CASSANDRA_DIR; default .cache/dev-cassandra)")
    p.add_argument("--port", type=int, default=_env_int("DEV_CASSANDRA_PORT", 9042),
                   help="CQL port (env DEV_CASSANDRA_PORT)")
    p.add_argument("--storage-port", type=int, default=_env_int("DEV_CASSANDRA_STORAGE_PORT", 7000),
                   help="env DEV_CASSANDRA_STORAGE_PORT")
    p.add_argument("--jmx-port", type=int, default=_env_int("DEV_CASSANDRA_JMX_PORT", 7199),
                   help="env DEV_CASSANDRA_JMX_PORT")
    p.add_argument("--heap", default=os.environ.get("DEV_CASSANDRA_HEAP", "1G"))
    p.add_argument("--lib", type=Path, default=DEFAULT_LIB_DIR,
                   help="where the jars are, downloaded on first use (env CQLSH_EXT_CASSANDRA_LIB)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for CQL")
    p.add_argument("--clean", action="store_true", help="start: wipe the data first")
    args = p.parse_args(argv)
    if args.dir.exists() and not args.dir.is_dir():
        p.error(f"--dir {args.dir}: not a directory (an instance's directory, as `start` made it)")

    cfg = Config(directory=args.dir, native_port=args.port, storage_port=args.storage_port,
                 jmx_port=args.jmx_port, heap=args.heap, lib_dir=args.lib)
    if args.command == "status":
        # Probe the port the running instance was started with, not today's defaults.
        with contextlib.suppress(OSError, ValueError, KeyError):
            info = json.loads((cfg.directory / "instance.json").read_text())
            cfg.host, cfg.native_port = info["host"], info["native_port"]
    inst = Instance(cfg)
    try:
        if args.command in ("stop", "restart"):
            pid = inst.pid()
            say(f"{SAYS} stopping Cassandra (pid {pid}) ..." if pid
                else f"{SAYS} Cassandra is not running in {_shown(inst.directory)}", sys.stdout)
            running = inst.running_config()
            if inst.stop() and args.command == "restart":
                # Its ports, as it was started with them, free before it starts again on them.
                Instance(running or cfg).wait_ports_free(pid)
        if args.command in ("start", "restart"):
            if pid := inst.pid():
                running = inst.running_config() or cfg
                say(f"{SAYS} Cassandra 5.0 is already running in {_shown(inst.directory)} (pid {pid}, CQL on "
                    f"{running.host}:{running.native_port}): using it as it is; bin/dev-cassandra stop "
                    f"stops it. Log: {_shown(inst.log_path)}", sys.stdout)
                return 0
            # The jars first (a download the first time, said and timed on its own), then the
            # server, which takes seconds: each said before it is waited for.
            fetched = None
            if not jars_ready(cfg.lib_dir):
                t0 = time.monotonic()
                ensure_jars(cfg.lib_dir)
                fetched = time.monotonic() - t0
            say(f"{SAYS} starting Cassandra 5.0 in {_shown(inst.directory)} (CQL on {cfg.host}:"
                f"{cfg.native_port}) ...", sys.stdout)
            t0 = time.monotonic()
            inst.start(args.timeout, clean=args.clean)
            first = "" if fetched is None else f", after {fetched:.1f} s downloading its jars"
            say(f"{SAYS} Cassandra listening for CQL on {cfg.host}:{cfg.native_port} "
                f"(user {cfg.username}/{cfg.password}), pid {inst.pid()}, "
                f"up in {time.monotonic() - t0:.1f} s{first}\nlog: {_shown(inst.log_path)}", sys.stdout)
        elif args.command == "status":
            pid = inst.pid()
            if pid is None:
                say(f"Cassandra is not running in {_shown(inst.directory)}", sys.stdout)
                return 3  # the LSB "not running" status code
            try:
                state = inst.probe()
            except ProbeError as e:
                state = f"not answering ({e})"
            say(f"running, pid {pid}, CQL {cfg.host}:{cfg.native_port}: {state}\n"
                f"log: {_shown(inst.log_path)}", sys.stdout)
        elif args.command == "log":
            print(tail(inst.log_path, 100))
    except PortsInUse as e:
        say(f"{SAYS} {e}: another Cassandra? (bin/dev-cassandra status). Pick other ports "
            "with --port/--storage-port/--jmx-port or DEV_CASSANDRA_PORT, DEV_CASSANDRA_STORAGE_PORT, "
            "DEV_CASSANDRA_JMX_PORT")
        return 1
    except DevCassandraError as e:
        say(f"{SAYS} {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
