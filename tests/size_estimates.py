"""The test server's size estimates recorded now: nodetool flush and refreshsizeestimates, through
the node's JMX (the test server's jars ship no nodetool), so that system.size_estimates and
system.table_estimates hold a keyspace's tables' figures (tests/mcp_server/test_safety.py,
tests/spark/test_datasource.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import devcassandra

_ESTIMATES_JAVA = """
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class Estimates {
    public static void main(String[] args) throws Exception {
        String address = "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + args[0] + "/jmxrmi";
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            MBeanServerConnection node = connector.getMBeanServerConnection();
            ObjectName storage = new ObjectName("org.apache.cassandra.db:type=StorageService");
            node.invoke(storage, "forceKeyspaceFlush", new Object[] {args[1], new String[0]},
                        new String[] {"java.lang.String", "[Ljava.lang.String;"});
            node.invoke(storage, "refreshSizeEstimates", null, null);
        }
    }
}
"""


def record_estimates(cassandra: Any, keyspace: str, tmp_path: Path) -> None:
    """Flush `keyspace` on the `cassandra` fixture's server and have it record its size estimates."""
    source = tmp_path / "Estimates.java"
    source.write_text(_ESTIMATES_JAVA)
    jmx = str(cassandra.instance.config.jmx_port)
    run = subprocess.run([devcassandra.find_java(), str(source), jmx, keyspace], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
