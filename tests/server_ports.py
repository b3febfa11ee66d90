"""Test servers take free ports: they run beside a developer's Cassandra, another test run or
any other server. An environment variable fixes a port instead; a fixed port that is taken fails
at once, naming the variable."""

from __future__ import annotations

import os
from typing import Any

import devcassandra

#: The port variables of the test server and the Config field each sets.
PORT_VARIABLES = {"native_port": "CQLSH_EXT_TEST_PORT", "storage_port": "CQLSH_EXT_TEST_STORAGE_PORT",
                  "jmx_port": "CQLSH_EXT_TEST_JMX_PORT"}


def ports_from(variables: dict[str, str]) -> dict[str, int]:
    """Config port fields: each from its environment variable when set, else a free port."""
    free = iter(devcassandra.free_ports(len(variables)))
    return {field: int(os.environ.get(var) or next(free)) for field, var in variables.items()}


def start_on_free_ports(make_config: Any, variables: dict[str, str], **start: Any) -> devcassandra.Instance:
    """Start a test server; when a picked port was taken meanwhile, pick again (3 tries). A port
    fixed by an environment variable that is taken fails at once, naming the variable."""
    for attempt in range(3):
        inst = devcassandra.Instance(make_config())
        try:
            inst.start(**start)
            return inst
        except devcassandra.PortsInUse as err:
            fixed = [var for var in variables.values() if os.environ.get(var)]
            if fixed or attempt == 2:
                hint = f"unset or change {', '.join(fixed)}" if fixed else "free some ports"
                raise devcassandra.PortsInUse(f"{err}: {hint} (the test servers pick free ports "
                                              f"unless {', '.join(variables.values())} are set)") from None
    raise AssertionError("unreachable")
