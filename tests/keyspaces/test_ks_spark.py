"""`cqlsh-ext spark --keyspaces` against the local Keyspaces-like endpoint: SigV4 through the
Keyspaces plugin for the Java driver in the connector, TLS verified with the test CA (--certfile)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from keyspaces.ksharness import ALL_SECRETS, GOOD, REGION, REPO_ROOT, KeyspacesEndpoint

pytestmark = pytest.mark.spark


def test_compression_stats_on_spark_with_sigv4(keyspaces_endpoint: KeyspacesEndpoint, tmp_path: Path) -> None:
    ep = keyspaces_endpoint
    env = ep.env(tmp_path, AWS_ACCESS_KEY_ID=GOOD.access_key, AWS_SECRET_ACCESS_KEY=GOOD.secret)
    env["CQLSH_EXT_SPARK_CACHE"] = str(REPO_ROOT / ".cache" / "spark")  # bin/setup --spark's jars
    proc = ep.run(["spark", "--master", "local[1]", "--keyspaces", ep.host, str(ep.tls_port),
                   "--certfile", str(ep.ca_file), "--region", REGION,
                   "-e", "COMPRESSION STATS JSON ks_test.docs"], tmp_path, env=env, timeout=600)
    for secret in ALL_SECRETS:
        assert secret not in proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr
    (doc,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert doc["scan"].startswith("Spark local-")
    (col,) = doc["columns"]
    # The fixture's three gzip documents (tests/keyspaces/conftest.py).
    stored = [gzip.compress(json.dumps({"id": i, "text": "cqlsh-ext " * 20}).encode()) for i in range(3)]
    assert (doc["rows"], col["values"], col["by_codec"]) == (3, 3, {"gzip": 3})
    assert col["decompressed_bytes"] == sum(len(gzip.decompress(s)) for s in stored)
