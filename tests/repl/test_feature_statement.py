"""A read feature a package declares (the toy of tests/mcp_server/test_declarations.py, registered
through its entry point) at the interactive prompt: Tab completes its statement's words and its
arguments' names, and the statement typed runs and prints its report on the screen, at a wide and
a narrow terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.mcp_server.test_declarations import _toy_plugin


@pytest.mark.parametrize("cols", [160, 60])
def test_tab_completes_a_package_feature_and_it_runs(term, cassandra, tmp_path: Path, cols: int) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    s = cassandra.session()
    counted = s.execute("SELECT count(*) FROM system_schema.keyspaces").one().count
    s.shutdown()
    t = term(env=_toy_plugin(plugin), cols=cols)
    t.prompt()
    t.type("TO\t")
    t.expect("TOY")  # the space after it is a cursor move on the stream: the screen shows it below
    t.type("R\t")
    t.expect("ROWS")
    t.type("\t")  # its one argument, named
    t.expect("table =")
    t.type("system_schema.keyspaces;")
    t.enter()
    t.expect(rf"\n{counted} rows\n")
    screen = "\n".join(t.display())
    assert re.search(r"cqlsh> TOY ROWS table = system_schema\.keyspaces;\n" + rf"{counted} rows\n", screen), \
        screen
    assert t.exit() == 0
