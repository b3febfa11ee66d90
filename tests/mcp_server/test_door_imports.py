"""`cqlsh-ext mcp`'s doors import no DataFrame library (issue 97, item 5): its first answer (a
`query` of blob values) and a Parquet export, in a server on this environment that has pandas,
numpy and polars installed, leave the server having imported none of them (pyarrow for the export's
file only). The modules are read from the server process itself at its exit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .harness import McpServer

#: The server, as `cqlsh-ext mcp ARGS` runs it, writing its modules to argv[1] when it exits.
DUMPING = ("import atexit, json, sys\n"
           "dump = sys.argv.pop(1)\n"
           "atexit.register(lambda: open(dump, 'w').write(json.dumps(sorted(sys.modules))))\n"
           "sys.argv[0] = 'cqlsh-ext'\n"
           "from cqlsh_ext.cli import run\n"
           "run()\n")


def _served(demo, home: Path, dump: Path, *args: str,  # type: ignore[no-untyped-def]
            calls: list[tuple[str, dict[str, str]]]) -> set[str]:
    """The top-level modules the server had imported when it exited, after `calls`."""
    command = [sys.executable, "-c", DUMPING, str(dump), "mcp"]
    with McpServer([*demo.conn, *args], home, command=command) as server:
        for tool, arguments in calls:
            answer = server.call(tool, **arguments)
            assert not answer.is_error, (tool, answer.text)
    return {name.split(".")[0] for name in json.loads(dump.read_text())}


@pytest.mark.server
def test_the_first_answer_and_an_export_import_no_dataframe_library(  # type: ignore[no-untyped-def]
        demo, assistant_home: Path, tmp_path: Path) -> None:
    import importlib.util

    assert all(importlib.util.find_spec(name) for name in ("pandas", "numpy", "polars"))  # else nothing held
    table = f"{demo.keyspace}.blob_formats"
    first = _served(demo, assistant_home, tmp_path / "first.json",
                    calls=[("query", {"statement": f"SELECT * FROM {table} LIMIT 5"})])
    assert not first & {"pandas", "numpy", "polars", "pyarrow", "duckdb"}
    exports = tmp_path / "exports"
    exports.mkdir(mode=0o700)
    exported = _served(demo, assistant_home, tmp_path / "export.json", "--export-dir", str(exports),
                       calls=[("export", {"statement": f"SELECT * FROM {table}", "format": "parquet"})])
    assert "pyarrow" in exported and not exported & {"pandas", "numpy", "polars", "duckdb"}
    assert [path.suffix for path in exports.iterdir()] == [".parquet"]
