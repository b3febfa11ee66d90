"""A built-in report is its service and its declaration (issue 99): WIDEST VALUES (`WIDEST VALUES
ks.t [ROWS n]`: one argument and a bounded option) added to a copy of the tree in four files, its
service (insight/reports/widest.py), one more `register` in insight/declared.py, its own test and its
service's line in its package's README.md, passes lint-imports, the declarations' tests, the
maintainers' docs tests and the fast tests a new feature touches there (ruff on what it adds); it is
then a statement of the shell (HELP lists it, HELP <its words> prints its document, Tab completes it,
it runs and refuses an option out of its bounds in one line), an MCP tool (tools/list, as
test_server.py expects it, and called), a method of the Python API and a section of
docs/features.md, with no other file touched. Its answer is held to the table's own values read
with the driver."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.repl.terminal import Term
from tests.shell_runner import api, ext

from .harness import write_credentials
from .tree_copy import (
    FAST,
    MAINTAINER_DOCS,
    add_readme_line,
    assert_checks_pass,
    changed,
    copied,
    copy_env,
    in_copy,
)

ROOT = Path(__file__).resolve().parents[2]

#: The report's files but its README line, as a person adding a report writes them.
SERVICE = ("cqlsh_ext/insight/reports/widest.py", '''"""WIDEST VALUES: a table's widest stored values of its
blob columns, widest first, each with its row's key: where the table's bytes are."""

from __future__ import annotations

import heapq
from typing import Any


def widest_values(ctx: Any, call: Any) -> Any:
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.reading.typed import ReportAnswer

    keyspace, table = call.table
    keyspace = keyspace or ctx.keyspace
    meta = ctx.cluster.metadata.keyspaces[keyspace].tables[table]
    keys = [column.name for column in meta.primary_key]
    blobs = [name for name, column in meta.columns.items() if column.cql_type == "blob"]
    wanted = call.arguments.get("rows", 5)
    names = ", ".join(spell(name) for name in [*keys, *blobs])
    rows = ctx.session.execute(f"SELECT {names} FROM {spell(keyspace)}.{spell(table)}")
    found = []
    for row in rows:
        values = list(row.values()) if isinstance(row, dict) else list(row)  # the shell's row factory
        key = dict(zip(keys, values[:len(keys)], strict=True))
        found += [(len(value), column, key)
                  for column, value in zip(blobs, values[len(keys):], strict=True) if value]
    widest = heapq.nlargest(wanted, found, key=lambda item: item[0])
    data = {"table": f"{keyspace}.{table}",
            "values": [{"bytes": size, "column": column, "key": {k: str(v) for k, v in key.items()}}
                       for size, column, key in widest]}
    lines = [f"{size} bytes  {column}  {key}" for size, column, key in widest]
    return ReportAnswer("WIDEST VALUES", lambda: data, lambda width, blocks: lines)
''')
DECLARATION = '''
register(Feature(
    "widest_values", "Widest values", "A table's widest stored blob values, widest first, with their keys.",
    (Argument("table", "string", "keyspace.table", required=True),
     Argument("rows", "integer", "values listed (default 5)", keywords={"minimum": 1, "maximum": 100},
              keyword="ROWS")),
    Reads("table", "table"), REPORT,
    {"type": "object", "properties": {"table": {"type": "string"}, "values": {"type": "array"}},
     "required": ["table", "values"]},
    Service("cqlsh_ext.insight.reports.widest", "widest_values"),
    statement=Statement(("WIDEST", "VALUES"), "WIDEST VALUES ks.t ROWS 3;"), method=Method("widest_values")))
'''
TEST = ("tests/insight/test_widest.py", '''import pytest

from cqlsh_ext.cql.lexer import Lexed
from cqlsh_ext.features import declared
from cqlsh_ext.features.arguments import Invalid
from cqlsh_ext.features.calling import read_statement


def test_widest_values_reads_its_table_and_its_bounded_rows():
    widest = declared(plugins=False)["widest_values"]
    call, as_json = read_statement(widest, Lexed("WIDEST VALUES JSON t ROWS 3;"), 2, "ks")
    assert (call.table, call.arguments["rows"], as_json) == (("ks", "t"), 3, True)
    with pytest.raises(Invalid, match="rows is at most 100"):
        read_statement(widest, Lexed("WIDEST VALUES t ROWS 1000"), 2, "ks")
''')
#: The fourth: the service's line in its package's README.md (tests/test_maintainer_docs.py).
README = "cqlsh_ext/insight/reports/README.md"


def _add_the_report(copy: Path) -> None:
    """The report's four files: its service, its declaration (appended to its package's
    declarations), its test, its service's line in its package's README."""
    for name, text in (SERVICE, TEST):
        (copy / name).write_text(text)
    declarations = copy / "cqlsh_ext/insight/declared.py"
    declarations.write_text(declarations.read_text() + DECLARATION)
    assert add_readme_line(copy, SERVICE[0], "WIDEST VALUES: a table's widest stored blob values.") == README


@pytest.fixture(scope="module")
def widest_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("widest-tree")
    before = copied(copy)
    _add_the_report(copy)
    assert changed(copy, before) == sorted([SERVICE[0], "cqlsh_ext/insight/declared.py", TEST[0], README])
    return copy


def test_the_report_passes_the_lints_and_the_declarations_tests_in_its_four_files(
        widest_tree: Path, tmp_path: Path) -> None:
    assert_checks_pass(widest_tree, tmp_path, [SERVICE[0], TEST[0], "cqlsh_ext/insight/declared.py"],
                       [TEST[0], *FAST, MAINTAINER_DOCS])
    guide = in_copy(widest_tree, tmp_path, sys.executable, "-m", "cqlsh_ext", "docs", "features")
    assert guide.returncode == 0, guide.stderr
    assert "widest_values" in guide.stdout
    assert "WIDEST VALUES [JSON] [ROWS n] [keyspace.]table" in guide.stdout


def _widest(session, table: str, rows: int) -> list[int]:  # type: ignore[no-untyped-def]
    """The table's widest blob values' sizes, widest first, read with the driver: the oracle."""
    keyspace, name = table.split(".")
    columns = session.execute("SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s "
                              "AND table_name = %s", (keyspace, name))
    blobs = [row.column_name for row in columns if row.type == "blob"]
    sizes = [len(value) for row in session.execute(f"SELECT {', '.join(blobs)} FROM {table}")
             for value in row if value]
    return sorted(sizes, reverse=True)[:rows]


@pytest.mark.server
def test_the_report_in_the_shell_mcp_and_the_api(  # type: ignore[no-untyped-def]
        widest_tree: Path, cassandra, demo, serve, tmp_path: Path) -> None:
    env = copy_env(widest_tree)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"
    session = cassandra.session()
    try:
        expected = _widest(session, table, 3)
    finally:
        session.shutdown()
    assert len(expected) == 3 and expected[0] > 0

    # The shell: HELP lists it, HELP WIDEST VALUES is its document, it runs; a bad ROWS is one line.
    listed = ext(cassandra, home, "-e", "HELP", env=env).checked_stdout()
    assert ("  WIDEST VALUES [JSON] [ROWS n] [keyspace.]table  -- Widest values: A table's widest "
            "stored blob values, widest first, with their keys.") in listed
    document = ext(cassandra, home, "-e", "HELP WIDEST VALUES", env=env).checked_stdout()
    assert document.startswith("WIDEST VALUES [JSON] [ROWS n] [keyspace.]table;")
    assert "rows (integer): values listed (default 5)" in document
    printed = ext(cassandra, home, "-e", f"WIDEST VALUES {table} ROWS 3", env=env).checked_stdout()
    assert [int(line.split()[0]) for line in printed.splitlines()] == expected
    as_json = json.loads(ext(cassandra, home, "-e", f"WIDEST VALUES JSON {table} ROWS 3", env=env)
                         .checked_stdout())
    assert as_json["table"] == table and [value["bytes"] for value in as_json["values"]] == expected
    refused = ext(cassandra, home, "-e", f"WIDEST VALUES {table} ROWS 0", env=env)
    assert refused.returncode == 2 and not refused.stdout
    assert refused.stderr.strip().splitlines()[-1] == "WIDEST VALUES: rows is at least 1, not 0"

    # Tab at the prompt: its words, then its option.
    write_credentials(home, cassandra.username, cassandra.password)
    term = Term([cassandra.host, str(cassandra.port)], home, env=env)
    try:
        term.prompt()
        term.type("WID\t")
        term.expect("WIDEST")
        term.type("V\t")
        term.expect("VALUES")
        term.type(f"{table} ROWS 1;")
        term.enter()
        term.expect(rf"\n{expected[0]} bytes ")
        assert term.exit() == 0
    finally:
        term.close()

    # MCP: a tool of its declaration, called; the API: db.widest_values, made from it.
    server = serve(env=env)
    # tools/list as test_server.py expects it, from the copy's registry: the report among them, no
    # list of names to edit.
    registry = in_copy(widest_tree, tmp_path, sys.executable, "-c",
                       "from cqlsh_ext.features import read_features\n"
                       "from cqlsh_ext.mcp_server.tools import TOOLS\n"
                       "print(' '.join(name for name in read_features() if not TOOLS[name].files))")
    assert registry.returncode == 0, registry.stderr
    assert [tool.name for tool in server.tools()] == registry.stdout.split()
    assert "widest_values" in registry.stdout.split()
    tool = {tool.name: tool for tool in server.tools()}["widest_values"]
    assert (tool.title, tool.input_schema["required"]) == ("Widest values", ["table"])
    assert tool.input_schema["properties"]["rows"]["maximum"] == 100
    called = server.call("widest_values", table=table, rows=3).data
    assert [value["bytes"] for value in called["values"]] == expected
    proc = api(cassandra, home, "import inspect, json\n"
               "print(list(inspect.signature(db.widest_values).parameters))\n"
               "print(json.dumps(db.widest_values(argv[0], rows=3).to_dict()))\n"
               "try:\n"
               "    db.widest_values(argv[0], rows=101)\n"
               "except cqlsh_ext.Error as err:\n"
               "    print(err)\n", table, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    parameters, answered, refused_line = proc.stdout.splitlines()
    assert parameters == "['table', 'rows', 'progress']"
    assert [value["bytes"] for value in json.loads(answered)["values"]] == expected
    assert refused_line == "widest_values: rows is at most 100, not 101"
