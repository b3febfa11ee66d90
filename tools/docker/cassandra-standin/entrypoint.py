"""Start Cassandra in the foreground as the official image does, configured from its variables."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

sys.path.insert(0, "/opt/cassandra")
import devcassandra  # noqa: E402  (stdlib only; next to this file in the image)

address = socket.gethostbyname(socket.gethostname())  # what other services reach by name
heap = os.environ.get("MAX_HEAP_SIZE", "1G")
new = os.environ.get("HEAP_NEWSIZE")
cfg = devcassandra.Config(
    directory=Path("/var/lib/cassandra"),
    host=address,
    cluster_name=os.environ.get("CASSANDRA_CLUSTER_NAME", "Test Cluster"),
    heap=heap,
    heap_min=heap,
    lib_dir=Path("/opt/cassandra/lib"),
    authenticator="AllowAllAuthenticator",
    username=None,
    password=None,
    extra_yaml={
        "rpc_address": "0.0.0.0",
        "broadcast_rpc_address": address,
        "num_tokens": int(os.environ.get("CASSANDRA_NUM_TOKENS", "16")),
    },
    extra_jvm_args=[f"-Xmn{new}"] if new else [],
)
devcassandra.Instance(cfg).write_config()
java = shutil.which("java") or "/usr/bin/java"
command = devcassandra.jvm_command(cfg, java)
print(f"cassandra stand-in: {cfg.cluster_name} on {address}:9042, heap {heap}", flush=True)
os.execv(command[0], command)
