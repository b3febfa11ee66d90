"""What each entry point loads: start-up stays small because heavy parts load on first use. The
registry's declarations load without their services (issue 99); a one-row SELECT imports the modules
it uses and no more (issue 100, item 1), held to a list: a module that joins it is a choice made
here, with its cost measured (bench/startup.py)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shell_runner import isolated_env


def _imported(code: str, *args: str) -> set[str]:
    """Top-level packages imported by running `code` (python -X importtime)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args],
                          capture_output=True, text=True, check=True)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_offline_inspect_loads_neither_cqlsh_nor_the_driver(tmp_path: Path):
    value = tmp_path / "value.gz"
    value.write_bytes(gzip.compress(b'{"id": 1, "name": "offline"}' * 4))
    code = "import sys; from cqlsh_ext.cli import main; sys.exit(main(['inspect', sys.argv[1]]))"
    loaded = _imported(code, str(value))
    assert "cqlsh_ext" in loaded and "zlib" in loaded  # the run did decode
    assert not loaded & {"cqlshlib", "cassandra", "prompt_toolkit", "boto3", "botocore"}


def test_command_declarations_load_no_handler_dependencies():
    # The shell reads every declaration at start-up (each package's declared.py) to learn its grammar:
    # they must stay light.
    loaded = _imported("from cqlsh_ext.features import commands\n"
                       "assert commands.command('undo').handler and commands.claims_for('copy')")
    assert "cqlsh_ext" in loaded
    assert not loaded & {"cassandra", "prompt_toolkit", "boto3", "zstandard", "lz4", "cramjam", "snappy",
                          "hdrh"}


#: What the declarations may import besides the kernel (cqlsh_ext.features), the feature packages'
#: own declared.py and their packages: the light constants the declarations say (codec and format
#: names, a trial's defaults), the settings (the session's commands' grammar names its modes), and
#: what those import. A declaration that imports its service (or anything heavy) fails here.
DECLARATIONS_IMPORT = {
    "cqlsh_ext.codecs", "cqlsh_ext.codecs.base", "cqlsh_ext.codecs.dictionaries", "cqlsh_ext.common",
    "cqlsh_ext.common.declarations", "cqlsh_ext.common.file_formats", "cqlsh_ext.common.net",
    "cqlsh_ext.common.text", "cqlsh_ext.cql",
    "cqlsh_ext.insight.clauses", "cqlsh_ext.insight.trial", "cqlsh_ext.payload", "cqlsh_ext.payload.names",
    "cqlsh_ext.settings", "cqlsh_ext.settings.output_formats", "cqlsh_ext.settings.values",
}


def test_the_registry_loads_its_declarations_without_their_services():
    # Every feature, command and intercept declared (the entry points of cqlsh_ext.features read),
    # and nothing imported of what they name: their services, handlers, HELP texts and completers
    # load when first called or shown.
    code = ("import json, sys\n"
            "from cqlsh_ext.features import commands, declared\n"
            "features = declared(plugins=False)\n"
            "assert features and commands.commands() and commands.claims()\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('cqlsh_ext.'))))\n")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                           check=True).stdout))
    packages = {name.rsplit(".", 1)[0] for name in loaded if name.endswith(".declared")}
    beyond = {name for name in loaded if not name.startswith("cqlsh_ext.features")
              and not name.endswith(".declared") and name not in packages}
    assert len(packages) >= 8 and "cqlsh_ext.insight" in packages
    assert beyond <= DECLARATIONS_IMPORT, sorted(beyond - DECLARATIONS_IMPORT)


#: The modules of cqlsh-ext a one-row SELECT of a plain table imports (-e, the test server): the
#: entry and its settings, the seams to cqlsh and the driver, the shell and its door, the registry's
#: declarations, the printing of a page without blobs. A change to this list is a start-up change:
#: measure it (bench/startup.py, against stock cqlsh).
ONE_ROW_SELECT = [
    "cqlsh_ext", "cqlsh_ext.agent", "cqlsh_ext.agent.door", "cqlsh_ext.agent.kept_connection",
    "cqlsh_ext.cli", "cqlsh_ext.codecs",
    "cqlsh_ext.codecs.base", "cqlsh_ext.codecs.dictionaries", "cqlsh_ext.common",
    "cqlsh_ext.common.declarations", "cqlsh_ext.common.exits", "cqlsh_ext.common.file_formats",
    "cqlsh_ext.common.gc_pause",
    "cqlsh_ext.common.interrupt", "cqlsh_ext.common.net", "cqlsh_ext.common.private_process",
    "cqlsh_ext.common.text", "cqlsh_ext.cql", "cqlsh_ext.cql.errors", "cqlsh_ext.cql.grammar_bounds",
    "cqlsh_ext.cql.lexer", "cqlsh_ext.cql.types", "cqlsh_ext.describe", "cqlsh_ext.describe.declared",
    "cqlsh_ext.edit", "cqlsh_ext.edit.declared", "cqlsh_ext.encode", "cqlsh_ext.encode.declared",
    "cqlsh_ext.export", "cqlsh_ext.export.declared", "cqlsh_ext.features", "cqlsh_ext.features.arguments",
    "cqlsh_ext.features.commands", "cqlsh_ext.features.feature",
    "cqlsh_ext.features.forms", "cqlsh_ext.features.help", "cqlsh_ext.features.output_schemas",
    "cqlsh_ext.features.statements", "cqlsh_ext.insight", "cqlsh_ext.insight.clauses",
    "cqlsh_ext.insight.declared", "cqlsh_ext.insight.trial", "cqlsh_ext.keyspaces",
    "cqlsh_ext.keyspaces.errors", "cqlsh_ext.keyspaces.options",
    "cqlsh_ext.keyspaces.wiring", "cqlsh_ext.load", "cqlsh_ext.load.declared", "cqlsh_ext.output",
    "cqlsh_ext.output.cells", "cqlsh_ext.output.layout", "cqlsh_ext.output.named_rows",
    "cqlsh_ext.output.paging", "cqlsh_ext.output.pipeline", "cqlsh_ext.output.row_limit",
    "cqlsh_ext.payload",
    "cqlsh_ext.payload.names", "cqlsh_ext.payload_select", "cqlsh_ext.payload_select.command",
    "cqlsh_ext.payload_select.declared", "cqlsh_ext.query", "cqlsh_ext.query.recognize", "cqlsh_ext.repl",
    "cqlsh_ext.repl.passwords", "cqlsh_ext.repl.shellhooks", "cqlsh_ext.rewrite",
    "cqlsh_ext.rewrite.declared", "cqlsh_ext.settings", "cqlsh_ext.settings.output_formats",
    "cqlsh_ext.settings.values", "cqlsh_ext.shell", "cqlsh_ext.shell.completion", "cqlsh_ext.shell.declared",
    "cqlsh_ext.shell.dispatcher", "cqlsh_ext.shell.ext_shell",
    "cqlsh_ext.shell.help", "cqlsh_ext.shell.results",
    "cqlsh_ext.shell.script", "cqlsh_ext.shell.statement_bounds", "cqlsh_ext.upstream",
    "cqlsh_ext.upstream.methods",
    "cqlsh_ext.upstream.seams", "cqlsh_ext.upstream.segments", "cqlsh_ext.upstream.time_values",
]
#: What none of the shell's doors that answer no DataFrame imports: pandas, numpy, polars (the
#: driver's and pyarrow's optional imports of them kept out), nor the interactive shell's and
#: Amazon Keyspaces' libraries in a script on Cassandra.
NEVER = {"pandas", "numpy", "polars", "pyarrow", "duckdb", "prompt_toolkit", "boto3", "botocore"}


def modules_of_a_run(cassandra, home: Path, *args: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Every module the shell (`cqlsh-ext HOST PORT -u -p ARGS`, as cqlsh_ext.cli.run runs it) had
    imported when it exited."""
    dump = home / "modules.json"
    code = ("import atexit, json, sys\n"
            "dump = sys.argv.pop(1)\n"
            "atexit.register(lambda: open(dump, 'w').write(json.dumps(sorted(sys.modules))))\n"
            "sys.argv[0] = 'cqlsh-ext'\n"
            "from cqlsh_ext.cli import run\n"
            "run()\n")
    proc = subprocess.run([sys.executable, "-c", code, str(dump), *cassandra.cqlsh_args, *args], cwd=home,
                          env=isolated_env(home), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(dump.read_text()))


@pytest.mark.server
def test_a_one_row_select_imports_what_it_uses(cassandra, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loaded = modules_of_a_run(cassandra, tmp_path, "-e", "SELECT release_version FROM system.local")
    ours = sorted(name for name in loaded if name == "cqlsh_ext" or name.startswith("cqlsh_ext."))
    assert ours == ONE_ROW_SELECT, (f"imported now, not listed: {sorted(set(ours) - set(ONE_ROW_SELECT))}; "
                                    f"listed, not imported: {sorted(set(ONE_ROW_SELECT) - set(ours))}")
    assert not {name.split(".")[0] for name in loaded} & NEVER


def test_the_shell_and_a_script_load_no_arrow_until_an_export_asks():
    # COPY (SELECT ...) TO is wired in at start-up (cqlsh_ext.export.command): pyarrow, about 130 MB,
    # loads only when a Parquet file is written.
    loaded = _imported("from cqlsh_ext.shell import ext_shell; from cqlsh_ext.export import command, parse")
    assert "cqlsh_ext" in loaded
    assert not loaded & {"pyarrow", "duckdb"}


def _documents(cassandra) -> str:  # type: ignore[no-untyped-def]
    """A table of zlib-compressed JSON documents (the shell reads them as zlib>json), its name."""
    import zlib

    keyspace = cassandra.create_keyspace("imports")
    session = cassandra.session()
    try:
        session.execute(f"CREATE TABLE {keyspace}.docs (id int PRIMARY KEY, data blob)")
        insert = session.prepare(f"INSERT INTO {keyspace}.docs (id, data) VALUES (?, ?)")
        for i in range(50):
            document = {"id": i, "status": ["PAID", "SENT"][i % 2], "items": [{"sku": f"s{i}", "n": i}]}
            session.execute(insert, (i, zlib.compress(json.dumps(document).encode())))
    finally:
        session.shutdown()
    return f"{keyspace}.docs"


@pytest.mark.server
def test_the_shells_exports_import_no_dataframe_library(  # type: ignore[no-untyped-def]
        cassandra, tmp_path: Path) -> None:
    # Issue 97, item 5: a door that hands back no DataFrame imports neither pandas nor numpy nor
    # polars. pyarrow imports numpy where it is installed and pandas at its first conversion of
    # Python values: a Parquet export keeps them out (common.kept_out), as this environment has both.
    import importlib.util

    assert importlib.util.find_spec("pandas") and importlib.util.find_spec("numpy")  # else nothing is held
    table = _documents(cassandra)
    for suffix in ("parquet", "jsonl", "csv"):
        path = tmp_path / f"out.{suffix}"
        loaded = modules_of_a_run(cassandra, tmp_path, "-e",
                                  f"COPY (SELECT id, data.status, data FROM {table}) TO '{path}'")
        assert path.stat().st_size > 0, suffix
        tops = {name.split(".")[0] for name in loaded}
        assert not tops & {"pandas", "numpy", "polars", "duckdb"}, (suffix, sorted(tops & NEVER))
        assert ("pyarrow" in tops) == (suffix == "parquet"), suffix
    import pyarrow.parquet as pq  # the file is whole: every row, its payload paths read

    rows = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert sorted(row["id"] for row in rows) == list(range(50))
    assert {row["data.status"] for row in rows} == {"PAID", "SENT"}
