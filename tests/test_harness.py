"""The test infrastructure itself: the real server fixture and the Java producers.

Each producer's bytes are decoded here with the plain Python libraries (not cqlsh_ext), so a
later failure in cqlsh_ext's own tests cannot be blamed on bad test data.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cramjam
import devcassandra
import lz4.block
import lz4.frame
import pytest
import zstandard
from conftest import REPO_ROOT, CassandraServer, server_config
from devcassandra import Instance
from java_producers import PRODUCERS, java_produce, java_produce_many

#: Runs Java (javac and the JVM) without a server: not part of the fast layer.
pytestmark = pytest.mark.java

SMALL = json.dumps({"id": 7, "name": "Zoë", "price": "12 €", "tags": ["a", "b"]}, ensure_ascii=False).encode()
# Over 64 KiB: several SnappyOutputStream (32 KiB) and LZ4BlockOutputStream (64 KiB) blocks, and a
# TC_LONGSTRING in Java serialization.
LARGE = json.dumps(
    [{"id": i, "text": f"row {i} café " * 8, "n": i * i} for i in range(1500)], ensure_ascii=False
).encode()


# -------------------------------------------------------------- reference decoders


def xerial_snappy(data: bytes) -> bytes:
    # 16-byte header (magic, int32 BE version, int32 BE compat), then [int32 BE length][raw block]...
    assert data[:8] == b"\x82SNAPPY\x00"
    out, pos = bytearray(), 16
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        out += bytes(cramjam.snappy.decompress_raw(data[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    return bytes(out)


def lz4_java_block(data: bytes) -> bytes:
    # Blocks of "LZ4Block" + token + int32 LE compressed + int32 LE decompressed + checksum,
    # ended by an empty block.
    out, pos = bytearray(), 0
    while True:
        assert data[pos : pos + 8] == b"LZ4Block"
        method = data[pos + 8] & 0xF0
        clen, dlen, _checksum = struct.unpack_from("<iii", data, pos + 9)
        block = data[pos + 21 : pos + 21 + clen]
        pos += 21 + clen
        if dlen == 0:
            assert pos == len(data)
            return bytes(out)
        out += block if method == 0x10 else lz4.block.decompress(block, uncompressed_size=dlen)


def java_serialized_string(data: bytes) -> str:
    # TC_STRING (u16 length) or TC_LONGSTRING (u64 length); modified UTF-8 equals UTF-8 for
    # these payloads (no NUL, no characters outside the BMP).
    assert data[:4] == b"\xac\xed\x00\x05"
    if data[4] == 0x74:
        (n,), start = struct.unpack_from(">H", data, 5), 7
    else:
        assert data[4] == 0x7C
        (n,), start = struct.unpack_from(">Q", data, 5), 13
    assert len(data) == start + n
    return data[start:].decode("utf-8")


DECODERS = {
    "snappy_raw": lambda b: bytes(cramjam.snappy.decompress_raw(b)),
    "snappy_xerial": xerial_snappy,
    "snappy_framed": lambda b: bytes(cramjam.snappy.decompress(b)),
    "lz4_java_block": lz4_java_block,
    "lz4_frame": lz4.frame.decompress,
    "zstd": lambda b: zstandard.ZstdDecompressor().decompress(b),
    "gzip": gzip.decompress,
    "zlib": zlib.decompress,
    "java_string": lambda b: java_serialized_string(b).encode(),
    "gzip_java_string": lambda b: java_serialized_string(gzip.decompress(b)).encode(),
}


# -------------------------------------------------------------- Java producers


@pytest.mark.parametrize("payload", [SMALL, LARGE], ids=["small", "large"])
def test_java_producers_decode_with_python_libraries(payload: bytes) -> None:
    java_produce_many([SMALL, LARGE])  # both payloads in one JVM start
    produced = java_produce(payload)
    assert set(produced) == set(PRODUCERS)
    for name, decode in DECODERS.items():
        assert decode(produced[name]) == payload, name


def test_java_producers_signatures() -> None:
    produced = java_produce(SMALL)
    assert produced["snappy_framed"][:10] == b"\xff\x06\x00\x00sNaPpY"
    assert produced["lz4_frame"][:4] == b"\x04\x22\x4d\x18"
    assert produced["zstd"][:4] == b"\x28\xb5\x2f\xfd"
    assert zstandard.frame_content_size(produced["zstd"]) == len(SMALL)  # Zstd.compress records it
    assert produced["gzip"][:3] == b"\x1f\x8b\x08"
    assert produced["zlib"][0] == 0x78
    assert produced["java_string"][4] == 0x74  # TC_STRING
    assert java_produce(LARGE)["java_string"][4] == 0x7C  # TC_LONGSTRING


def test_java_object_is_an_arraylist() -> None:
    data = gzip.decompress(java_produce(SMALL)["gzip_java_object"])
    # TC_OBJECT, TC_CLASSDESC, u16 length, class name
    assert data[:6] == b"\xac\xed\x00\x05\x73\x72"
    (n,) = struct.unpack_from(">H", data, 6)
    assert data[8 : 8 + n] == b"java.util.ArrayList"


def test_java_string_producers_skip_non_utf8() -> None:
    produced = java_produce(b"\xff\xfe\x00binary")
    assert "java_string" not in produced and "gzip_java_string" not in produced
    assert bytes(cramjam.snappy.decompress_raw(produced["snappy_raw"])) == b"\xff\xfe\x00binary"


# -------------------------------------------------------------- the server


def test_cql_query(cassandra: CassandraServer) -> None:
    row = cassandra.session().execute("SELECT release_version, cluster_name FROM system.local").one()
    assert row.release_version.startswith("5.0")
    assert row.cluster_name == "cqlsh-ext tests"


def test_blobs_round_trip(cassandra: CassandraServer) -> None:
    ks = cassandra.create_keyspace()
    session = cassandra.session(ks)
    session.execute("CREATE TABLE blobs (name text PRIMARY KEY, v blob)")
    produced = java_produce(LARGE)
    insert = session.prepare("INSERT INTO blobs (name, v) VALUES (?, ?)")
    for name, value in produced.items():
        session.execute(insert, (name, value))
    assert {r.name: r.v for r in session.execute("SELECT name, v FROM blobs")} == produced


def test_password_authenticator_is_enforced(cassandra: CassandraServer) -> None:
    with pytest.raises(devcassandra.ProbeError, match="[Pp]assword"):
        devcassandra.cql_probe(cassandra.host, cassandra.port, "cassandra", "wrong")
    assert devcassandra.cql_probe(cassandra.host, cassandra.port) == "authenticate"


def test_cqlsh_reaches_the_server(cassandra: CassandraServer) -> None:
    cqlsh = Path(sys.executable).with_name("cqlsh")
    out = subprocess.run(
        [str(cqlsh), *cassandra.cqlsh_args, "-e", "SELECT release_version FROM system.local"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "5.0." in out.stdout


@pytest.mark.server
def test_hooks_custom_authenticator_tls_and_extra_yaml(tmp_path: Path) -> None:
    """An instance of its own using the hooks a custom (e.g. SigV4) authenticator test needs.

    Its ports are the session server's + 100, so both can run at once.
    """
    lib = devcassandra.ensure_jars()
    src = tmp_path / "src" / "cqlshext" / "test" / "CustomAuthenticator.java"
    src.parent.mkdir(parents=True)
    src.write_text(
        "package cqlshext.test;\n"
        "public class CustomAuthenticator extends org.apache.cassandra.auth.PasswordAuthenticator {}\n"
    )
    classes = tmp_path / "classes"
    javac = Path(devcassandra.find_java()).with_name("javac")
    subprocess.run([str(javac), "-nowarn", "-d", str(classes), "-cp", f"{lib}/*", str(src)], check=True)

    base = server_config()
    tls_port = base.native_port + 101
    cfg = server_config(
        directory=tmp_path / "node",
        native_port=base.native_port + 100,
        storage_port=base.storage_port + 100,
        jmx_port=base.jmx_port + 100,
        extra_classpath=[classes],
        authenticator="cqlshext.test.CustomAuthenticator",
        client_tls=devcassandra.ClientTLS(devcassandra.make_keystore(tmp_path / "ks.p12", "secret"), "secret",
                                          port=tls_port),
        extra_yaml={"cluster_name": "hooks"},
    )
    with Instance(cfg).running():
        assert devcassandra.cql_probe(cfg.host, tls_port, "cassandra", "cassandra", use_tls=True) == "ready"
        with pytest.raises(devcassandra.ProbeError):  # the TLS port speaks TLS only
            devcassandra.cql_probe(cfg.host, tls_port, "cassandra", "cassandra")
        hooked = CassandraServer(cfg.host, cfg.native_port, "cassandra", "cassandra", Instance(cfg))
        try:
            session = hooked.session()
            assert session.execute("SELECT cluster_name FROM system.local").one().cluster_name == "hooks"
            rows = session.execute("SELECT name, value FROM system_views.settings")
            settings = {r.name: r.value for r in rows if "authenticator" in r.name}
            assert "cqlshext.test.CustomAuthenticator" in settings.values()
        finally:
            hooked.close()


@pytest.mark.server
def test_dev_cassandra_restart_brings_the_server_back_on_its_ports(tmp_path: Path) -> None:
    """bin/dev-cassandra restart as a developer runs it: the server stopped, its ports let go (a JVM
    lets its JMX port go a moment after its process is gone: restart once failed there with
    "port(s) in use: jmx" and left the server down), and started again on them."""
    native, storage, jmx = devcassandra.free_ports(3)
    command = [str(REPO_ROOT / "bin" / "dev-cassandra"), "--dir", str(tmp_path / "dev"),
               "--port", str(native), "--storage-port", str(storage), "--jmx-port", str(jmx),
               "--heap", "512M", "--lib", str(tmp_path / "lib")]
    # Its first start downloads the jars (Maven: here a stand-in that links the suite's own):
    # the time said is the server's, the download's beside it (issue 96, 8: 'up in 69.2 s' for a
    # server that took 41).
    maven = tmp_path / "maven"
    maven.mkdir()
    (maven / "mvn").write_text(
        '#!/bin/sh\nfor a; do case "$a" in -DoutputDirectory=*) out="${a#*=}" ;; esac; done\n'
        f'mkdir -p "$out" && ln -s "{devcassandra.DEFAULT_LIB_DIR}"/*.jar "$out"/\n')
    (maven / "mvn").chmod(0o755)
    env = {**os.environ, "PATH": f"{maven}:{os.environ['PATH']}"}
    try:
        started = subprocess.run([*command[:1], "start", *command[1:]], capture_output=True, text=True,
                                 timeout=600, env=env)
        assert started.returncode == 0, started.stdout + started.stderr
        assert started.stderr.startswith("bin/dev-cassandra: downloading Cassandra 5.0 from Maven Central"), \
            started.stderr
        said = started.stdout.splitlines()
        assert said[0].startswith("bin/dev-cassandra: starting Cassandra 5.0 in "), said
        assert re.fullmatch(rf"bin/dev-cassandra: Cassandra listening for CQL on 127\.0\.0\.1:{native} .*, "
                            r"up in \d+\.\d s, after \d+\.\d s downloading its jars", said[-2]), said
        first = int((tmp_path / "dev" / "cassandra.pid").read_text())
        restarted = subprocess.run([*command[:1], "restart", *command[1:]], capture_output=True, text=True,
                                   timeout=600)
        assert restarted.returncode == 0, restarted.stdout + restarted.stderr
        lines = restarted.stdout.splitlines()
        assert lines[0] == f"bin/dev-cassandra: stopping Cassandra (pid {first}) ...", lines
        listening = f"bin/dev-cassandra: Cassandra listening for CQL on 127.0.0.1:{native}"
        assert lines[-2].startswith(listening), lines
        assert re.search(r"up in \d+\.\d s$", lines[-2]), lines  # no download the second time
        assert devcassandra.cql_probe("127.0.0.1", native, "cassandra", "cassandra") == "ready"
    finally:
        subprocess.run([*command[:1], "stop", *command[1:]], capture_output=True, timeout=120)


def test_an_instance_s_own_child_runs_before_it_has_exec_d_java(tmp_path: Path) -> None:
    # bin/demo on a loaded machine: the child's command line is still Python's when the first check
    # comes (java not exec'd yet), and start() took the server for one that exited at once.
    inst = Instance(server_config(directory=tmp_path / "instance"))
    inst.directory.mkdir(parents=True)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        inst._proc = child
        inst.pid_path.write_text(f"{child.pid}\n")
        assert inst.is_running() and inst.pid() == child.pid
    finally:
        child.kill()
        child.wait()
    assert not inst.is_running()
