"""Compressed values written by real Java code (tests/java/Producers.java).

    from java_producers import java_produce
    blobs = java_produce(b'{"id": 1}')      # {"snappy_raw": b"...", "gzip": b"...", ...}

The class is compiled once (per source and jar set) into .cache/java-producers/, and outputs
are cached there by payload hash, so a rerun needs no JVM at all. Needs JDK 17 and the
Cassandra jars (downloaded by tools/devcassandra.py on first use).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

import devcassandra  # noqa: E402

SOURCE = Path(__file__).resolve().parent / "java" / "Producers.java"
CACHE = REPO_ROOT / ".cache" / "java-producers"

# Producer name -> what wrote it (keys of java_produce's result; java_string and
# gzip_java_string are missing when the payload is not valid UTF-8).
PRODUCERS = {
    "snappy_raw": "org.xerial.snappy.Snappy.compress(byte[])",
    "snappy_xerial": "org.xerial.snappy.SnappyOutputStream",
    "snappy_framed": "org.xerial.snappy.SnappyFramedOutputStream",
    "lz4_java_block": "net.jpountz.lz4.LZ4BlockOutputStream",
    "lz4_frame": "net.jpountz.lz4.LZ4FrameOutputStream",
    "zstd": "com.github.luben.zstd.Zstd.compress(byte[])",
    "gzip": "java.util.zip.GZIPOutputStream",
    "zlib": "java.util.zip.DeflaterOutputStream",
    "java_string": "ObjectOutputStream.writeObject(String)",
    "gzip_java_string": "ObjectOutputStream(GZIPOutputStream).writeObject(String)",
    "gzip_java_object": "ObjectOutputStream(GZIPOutputStream).writeObject(ArrayList['cqlsh-ext', 42])",
}


def _java_tool(name: str) -> str:
    return str(Path(devcassandra.find_java()).with_name(name))


@functools.cache
def _classes() -> tuple[Path, Path]:
    """(compiled classes dir, Cassandra lib dir); compiles when source or jars changed."""
    lib = devcassandra.ensure_jars()
    jars = sorted(p.name for p in lib.glob("*.jar"))
    key = hashlib.sha256(SOURCE.read_bytes() + "\n".join(jars).encode()).hexdigest()[:16]
    home = CACHE / key
    classes = home / "classes"
    if not (classes / "Producers.class").is_file():
        home.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=home, prefix="classes."))
        proc = subprocess.run(
            [_java_tool("javac"), "-nowarn", "-d", str(tmp), "-cp", f"{lib}/*", str(SOURCE)],
            capture_output=True, text=True,
        )
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"javac {SOURCE} failed:\n{proc.stdout}{proc.stderr}")
        try:
            tmp.rename(classes)  # atomic: a concurrent run may have won, which is fine
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return classes, lib


def _read_outputs(out_dir: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted(out_dir.glob("*.bin"))}


def java_produce_many(payloads: Sequence[bytes]) -> list[dict[str, bytes]]:
    """java_produce for several payloads with at most one JVM start."""
    classes, lib = _classes()
    out_root = classes.parent / "out"
    dirs = [out_root / hashlib.sha256(p).hexdigest()[:32] for p in payloads]
    todo = {d: p for d, p in zip(dirs, payloads, strict=True) if not (d / ".done").is_file()}
    if todo:
        out_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out_root, prefix="run.") as run:
            args: list[str] = []
            for n, payload in enumerate(todo.values()):
                (Path(run) / f"{n}.payload").write_bytes(payload)
                args += [f"{run}/{n}.payload", f"{run}/{n}"]
            proc = subprocess.run(
                # Short-lived: C1 only and the serial GC start fastest.
                [_java_tool("java"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                 "-cp", f"{classes}{os.pathsep}{lib}/*", "Producers", *args],
                capture_output=True, text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"Producers failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
            for n, final in enumerate(todo):
                (Path(run) / str(n) / ".done").touch()
                shutil.rmtree(final, ignore_errors=True)
                os.replace(Path(run) / str(n), final)
    return [_read_outputs(d) for d in dirs]


def java_produce(payload: bytes) -> dict[str, bytes]:
    """{producer name: bytes the Java producer wrote for payload}; see PRODUCERS for the names."""
    return dict(_produce_cached(payload))  # a copy: callers may mutate theirs


@functools.lru_cache(maxsize=64)
def _produce_cached(payload: bytes) -> dict[str, bytes]:
    return java_produce_many([payload])[0]


OBJECTS_SOURCE = Path(__file__).resolve().parent / "java" / "SerializedObjects.java"


@functools.cache
def java_serialized_objects() -> dict[str, bytes]:
    """{name: ObjectOutputStream bytes} for the JDK object graphs of tests/java/SerializedObjects.java
    (`gzip_<name>` through GZIPOutputStream). Compiled and run once per source, cached in .cache."""
    home = CACHE / ("objects-" + hashlib.sha256(OBJECTS_SOURCE.read_bytes()).hexdigest()[:16])
    out = home / "out"
    if not (out / ".done").is_file():
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=home, prefix="run.") as run:
            for cmd in ([_java_tool("javac"), "-nowarn", "-d", run, str(OBJECTS_SOURCE)],
                        [_java_tool("java"), "-cp", run, "SerializedObjects", f"{run}/out"]):
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
            (Path(run) / "out" / ".done").touch()
            shutil.rmtree(out, ignore_errors=True)
            os.replace(Path(run) / "out", out)
    return {p.stem: p.read_bytes() for p in sorted(out.glob("*.ser"))}


RECORDS_SOURCE = Path(__file__).resolve().parent / "java" / "RecordProducers.java"
RECORDS_POM = Path(__file__).resolve().parent / "java" / "record-formats-pom.xml"


@functools.cache
def java_record_formats() -> dict[str, bytes]:
    """{name: bytes} written by tests/java/RecordProducers.java with msgpack-java, Jackson's CBOR
    and Smile, Avro and protobuf-java (jars from record-formats-pom.xml, fetched once by Maven);
    also `order.avsc` and `orders.desc`, the schema and descriptor set it wrote them with."""
    lib = devcassandra.ensure_jars(REPO_ROOT / ".cache" / "record-format-jars", RECORDS_POM, "avro-*.jar")
    key = hashlib.sha256(RECORDS_SOURCE.read_bytes() + RECORDS_POM.read_bytes()).hexdigest()[:16]
    home = CACHE / f"records-{key}"
    out = home / "out"
    if not (out / ".done").is_file():
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=home, prefix="run.") as run:
            classpath = f"{run}{os.pathsep}{lib}/*"
            for cmd in ([_java_tool("javac"), "-nowarn", "-d", run, "-cp", f"{lib}/*", str(RECORDS_SOURCE)],
                        [_java_tool("java"), "-cp", classpath, "RecordProducers", f"{run}/out"]):
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
            (Path(run) / "out" / ".done").touch()
            shutil.rmtree(out, ignore_errors=True)
            os.replace(Path(run) / "out", out)
    return {p.name if p.suffix != ".bin" else p.stem: p.read_bytes() for p in sorted(out.iterdir())
            if p.name != ".done"}
