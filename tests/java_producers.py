"""Values written by real Java code, for the tests to read back.

    from java_producers import java_produce
    blobs = java_produce(b'{"id": 1}')      # {"snappy_raw": b"...", "gzip": b"...", ...}

- java_produce: compressed values from tests/java/Producers.java (snappy-java, lz4-java, zstd-jni,
  the JDK's streams), per payload;
- java_serialized_objects: JDK object graphs through ObjectOutputStream (SerializedObjects.java);
- java_record_formats: one record from msgpack-java, Jackson, Avro and protobuf-java
  (RecordProducers.java; jars from tests/java/record-formats-pom.xml).

Classes are compiled once per source and jar set into .cache/java-producers/ and outputs are
cached there, so a rerun needs no JVM at all. Needs JDK 17, Maven on first use, and for
java_produce the Cassandra jars (downloaded by tools/devcassandra.py on first use).
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



def _run_once(source: Path, lib: Path | None, key_extra: bytes = b"") -> Path:
    """Compile `source` (against the jars in `lib`, if any) and run its main class with an output
    directory, once per source and jar set; returns that directory (cached in .cache)."""
    key = hashlib.sha256(source.read_bytes() + key_extra).hexdigest()[:16]
    home = CACHE / f"{source.stem}-{key}"
    out = home / "out"
    if not (out / ".done").is_file():
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=home, prefix="run.") as run:
            jars = ["-cp", f"{lib}/*"] if lib else []
            classpath = f"{run}{os.pathsep}{lib}/*" if lib else run
            for cmd in ([_java_tool("javac"), "-nowarn", "-d", run, *jars, str(source)],
                        [_java_tool("java"), "-cp", classpath, source.stem, f"{run}/out"]):
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
            (Path(run) / "out" / ".done").touch()
            if (out / ".done").is_file():  # another worker of the run was first: its output stays
                return out
            shutil.rmtree(out, ignore_errors=True)
            try:
                os.replace(Path(run) / "out", out)
            except OSError:  # another worker put its output there meanwhile
                if not (out / ".done").is_file():
                    raise
    return out


OBJECTS_SOURCE = Path(__file__).resolve().parent / "java" / "SerializedObjects.java"
RECORDS_SOURCE = Path(__file__).resolve().parent / "java" / "RecordProducers.java"
RECORDS_POM = Path(__file__).resolve().parent / "java" / "record-formats-pom.xml"


@functools.cache
def java_serialized_objects() -> dict[str, bytes]:
    """{name: ObjectOutputStream bytes} for the JDK object graphs of tests/java/SerializedObjects.java
    (`gzip_<name>` through GZIPOutputStream)."""
    out = _run_once(OBJECTS_SOURCE, None)
    return {p.stem: p.read_bytes() for p in sorted(out.glob("*.ser"))}


@functools.cache
def java_record_formats() -> dict[str, bytes]:
    """{name: bytes} written by tests/java/RecordProducers.java with msgpack-java, Jackson's CBOR
    and Smile, Avro and protobuf-java (jars from record-formats-pom.xml, fetched once by Maven);
    also `order.avsc` and `orders.desc`, the schema and descriptor set it wrote them with."""
    lib = devcassandra.ensure_jars(REPO_ROOT / ".cache" / "record-format-jars", RECORDS_POM, "avro-*.jar")
    out = _run_once(RECORDS_SOURCE, lib, RECORDS_POM.read_bytes())
    return {p.stem if p.suffix == ".bin" else p.name: p.read_bytes() for p in sorted(out.iterdir())
            if p.name != ".done"}
