"""Values read back by Java's own libraries (tests/java/Readers.java: snappy-java, lz4-java,
zstd-jni and the JDK), compiled against Cassandra's jars like tests/java/Producers.java."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import devcassandra
from java_producers import CACHE, _java_tool

SOURCE = Path(__file__).resolve().parents[1] / "java" / "Readers.java"


def java_read(values: dict[str, tuple[str, bytes]]) -> dict[str, bytes]:
    """{name: what Java's `reader` reads from the bytes} for {name: (reader, bytes)}, in one JVM."""
    lib = devcassandra.ensure_jars()
    with tempfile.TemporaryDirectory(dir=_cache()) as run:
        subprocess.run([_java_tool("javac"), "-nowarn", "-d", run, "-cp", f"{lib}/*", str(SOURCE)],
                       check=True, capture_output=True, text=True)
        args: list[str] = []
        for n, (reader, data) in enumerate(values.values()):
            (Path(run) / f"{n}.in").write_bytes(data)
            args += [reader, f"{run}/{n}.in", f"{run}/{n}.out"]
        proc = subprocess.run([_java_tool("java"), "-cp", f"{run}{os.pathsep}{lib}/*", "Readers", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return {name: (Path(run) / f"{n}.out").read_bytes() for n, name in enumerate(values)}


def _cache() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    return CACHE
